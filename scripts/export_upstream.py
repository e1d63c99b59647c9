"""Export one evaluated run in the layout upstream KernelBench's analysis script reads.

    python scripts/export_upstream.py run_name=test level=1 [use_hidden_eval=True]

writes runs/test_upstream/eval_results.json, for upstream's
`python3 scripts/benchmark_eval_analysis.py run_name=test_upstream level=1 hardware=... baseline=...`.
Keys and defaults: configs/export_upstream.yaml. What the export changes: docs/leaderboard.md.
"""

from kernelbench_verified.config import run_script
from kernelbench_verified.leaderboard.upstream_export import export_run

if __name__ == "__main__":
    run_script("export_upstream", export_run)
