"""Print the leaderboard metrics of one evaluated run as a terminal table.

    python scripts/benchmark_eval_analysis.py run_name=test level=1 hardware=H200 \\
      baseline=baseline_time_torch_tf32 [use_hidden_eval=True]

Keys and defaults: configs/analysis.yaml. Metric definitions: docs/leaderboard.md.
"""

from kernelbench_verified.cli import Sweeps, run_script
from kernelbench_verified.leaderboard.analysis import analyze_run

SWEEPS = Sweeps(lambda cfg: [])  # it only reads and prints: any sweep, e.g. -m baseline=a,b, runs

if __name__ == "__main__":
    run_script("analysis", analyze_run, __doc__, SWEEPS)
