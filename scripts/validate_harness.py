"""Validate the harness on this GPU box: attacks, honest kernels, the references, the clock, throughput.

    python scripts/validate_harness.py [levels=[1,2]] [quick=true] [steps=[exploits,clock]]

Keys and defaults: configs/validate.yaml. Writes results/validation/{GPU}.json (one summary per GPU
model), results/identical_code/{GPU}.json, and the figures in docs/validation.md and the README.
Exits 1 when a step found a defect (an attack missed, an honest sample rejected or withheld, a test
failing), so the summary is not cited as clean. Every step writes the same summary, so -m is refused:
run the levels or steps you want in one command.
"""

from kernelbench_verified.cli import run_script


def validate(cfg):
    # Imported here: --help and --cfg job need neither torch nor the evaluator.
    from kernelbench_verified.validate.run import validate_harness

    return validate_harness(cfg)


if __name__ == "__main__":
    run_script("validate", validate, __doc__)
