"""Evaluate a run's kernels: compile, check against the reference (and hidden tests), time, measure.

    python scripts/eval_from_generations.py run_name=test level=1 num_samples=5 \\
      eval_mode=local gpu_arch="['Hopper']" precision=fp32 use_hidden_tests=True

Keys and defaults: configs/eval.yaml. Results: runs/{run_name}/eval_results[_hidden].json.
"""

from pathlib import Path

from kernelbench_verified.cli import Sweeps, run_script
from kernelbench_verified.config import existing_run_folder


def evaluate(cfg):
    existing_run_folder(cfg)  # a mistyped run_name is one line before torch loads
    # Imported here, not above: judge processes re-import this file and must not import torch
    # before they have started their first sandboxes, and --help and --cfg job never need it.
    from kernelbench_verified.evaluate.run import evaluate_run

    return evaluate_run(cfg)


def result_file(cfg) -> list:
    """What one job writes: the run's result file, keyed by problem and sample but not by level."""
    from kernelbench_verified.leaderboard.discovery import HIDDEN_RESULTS, STANDARD_RESULTS

    return [Path(cfg.runs_dir) / str(cfg.run_name) / (HIDDEN_RESULTS if cfg.use_hidden_tests else STANDARD_RESULTS)]


SWEEPS = Sweeps(result_file, "give each job its own run_name, e.g. -m level=1,2,3 'run_name=my_run_level${level}'")

if __name__ == "__main__":
    run_script("eval", evaluate, __doc__, SWEEPS)
