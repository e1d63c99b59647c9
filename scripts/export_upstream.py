"""Export one evaluated run in the files upstream's analysis and leaderboard scripts read.

    python scripts/export_upstream.py run_name=test level=1 [use_hidden_eval=True] [layout=kernelbench]

writes runs/test_upstream/eval_results.json (and eval_results_hidden.json for a hidden export) in
kernel_bench_verified's layout, or KernelBench's with layout=kernelbench, for upstream's
`python3 scripts/benchmark_eval_analysis.py run_name=test_upstream level=1 hardware=... baseline=...`.
Keys and defaults: configs/export_upstream.yaml. What the export changes: docs/leaderboard.md.
"""

from pathlib import Path

from kernelbench_verified.cli import Sweeps, run_script
from kernelbench_verified.leaderboard.upstream_export import export_run


def export_folder(cfg) -> list:
    """What one job writes: the export's folder, out_run_name or {run_name}_upstream."""
    return [Path(cfg.runs_dir) / str(cfg.out_run_name or f"{cfg.run_name}_upstream")]


SWEEPS = Sweeps(export_folder, "give each job its own out_run_name, e.g. -m use_hidden_eval=false,true "
                               "'out_run_name=${run_name}_upstream_hidden${use_hidden_eval}'")

if __name__ == "__main__":
    run_script("export_upstream", export_run, __doc__, SWEEPS)
