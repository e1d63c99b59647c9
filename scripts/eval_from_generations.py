"""Evaluate a run's kernels: compile, check against the reference (and hidden tests), time, measure.

    python scripts/eval_from_generations.py run_name=test level=1 num_samples=5 \\
      eval_mode=local gpu_arch="['Hopper']" precision=fp32 use_hidden_tests=True

Keys and defaults: configs/eval.yaml. Results: runs/{run_name}/eval_results[_hidden].json.
"""

from kernelbench_verified.config import run_script

if __name__ == "__main__":
    # Imported here, not above: judge processes re-import this file and must not import torch
    # before they have started their first sandboxes.
    from kernelbench_verified.evaluate.run import evaluate_run

    run_script("eval", evaluate_run)
