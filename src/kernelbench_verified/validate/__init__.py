"""Validating the harness itself on a GPU box (`scripts/validate_harness.py`).

Each step runs the pipeline as a user would, on inputs whose right answer is known, and reduces what it
recorded to one section of a summary per GPU model (`results/validation/{GPU}.json`):

  gpu_tests   the GPU-marked tests, the jail's tests and the zero-trust attacks on CUDA (pytest)
  exploits    every attack, clean and honest fixture through the evaluator (exploits.py)
  references  each reference evaluated as its own candidate against its own baseline (references.py)
  clock       the smallest timing fake the judge's clock catches, replayed on honest records (clock.py)
  throughput  the benchmark kernels evaluated cold and warm (throughput.py)

`render.py` turns the summaries into docs/validation.md's figures and the README's headline table.
"""
