"""Write the leaderboard: every run in runs/ scored against a baseline, as one offline HTML page.

    python scripts/generate_leaderboard.py --use_hidden_eval \\
      --baseline baseline_time_torch_tf32 --out leaderboard.html

Runs are folders named {model}_level{L}_test (fp32) and {model}_level{L}_bf16_test; baselines are
{timing_dir}/{hardware}/{baseline}.json. Metrics and page: docs/leaderboard.md.
"""

import argparse
import sys
import time

from kernelbench_verified.errors import UserError
from kernelbench_verified.leaderboard.discovery import DEFAULT_DEGENERATE_FILE, DEFAULT_TIMING_DIR
from kernelbench_verified.leaderboard.page import generate_leaderboard
from kernelbench_verified.leaderboard.report import Options


def parse_args(argv: list[str]) -> argparse.Namespace:
    summary, _, details = __doc__.partition("\n")
    parser = argparse.ArgumentParser(description=summary, epilog=details.strip("\n"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hardware", default=None,
                        help="baseline folder under --timing_dir, e.g. H100 (default: the GPU the runs were "
                             "evaluated on, from their records)")
    parser.add_argument("--baseline", default="baseline_time_torch_tf32",
                        help="baseline of the fp32 runs, a file name without .json (default: %(default)s)")
    parser.add_argument("--bf16_baseline", default="baseline_time_torch_bf16",
                        help="baseline of the bf16 runs (default: %(default)s)")
    parser.add_argument("--out", default="leaderboard.html", help="HTML file to write (default: %(default)s)")
    parser.add_argument("--use_hidden_eval", action="store_true",
                        help="a sample is correct only if its hidden evaluation (eval_results_hidden.json) is "
                             "(default: the standard evaluation, eval_results.json)")
    parser.add_argument("--fp32_tolerance", type=float, default=None,
                        help="re-judge fp32 runs at atol = rtol = this, stricter or looser, from their recorded "
                             "cases (default: none, each sample's verdict as evaluated)")
    parser.add_argument("--bf16_tolerance", type=float, default=None,
                        help="the same for bf16 runs (default: none)")
    parser.add_argument("--runs_dir", default="runs", help="folder holding the run folders (default: %(default)s)")
    parser.add_argument("--runs", nargs="+", default=None, metavar="RUN",
                        help="only these run folders (default: every {model}_level{L}[_bf16]_test folder)")
    parser.add_argument("--timing_dir", default=str(DEFAULT_TIMING_DIR),
                        help="baseline files: TIMING_DIR/HW/NAME.json (default: %(default)s)")
    parser.add_argument("--excluded", default="ours", metavar="{ours,upstream,none,FILE}",
                        help="problems left out of every metric: ours (the problem suite's degenerate problems, "
                             "--degenerate_file), upstream (its leaderboard's level-2 #23, #80, #83), none, or the "
                             "path of a list in --degenerate_file's format; the page names the list "
                             "(default: %(default)s)")
    parser.add_argument("--degenerate_file", default=str(DEFAULT_DEGENERATE_FILE),
                        help="the list --excluded ours reads (default: %(default)s)")
    parser.add_argument("--review_speedup", type=float, default=10.0,
                        help="list correct samples faster than this many times the baseline for review; 0: off "
                             "(default: %(default)s)")
    parser.add_argument("--d5_gate", action="store_true",
                        help="a correct sample must also pass D5, perturbed parameters (default: D1-D4 only, upstream's "
                             "definition; the page shows how many correct samples pass D5 beside it)")
    parser.add_argument("--shape_gate", choices=("true", "false"), default="false",
                        help="true: no shape variant of a correct sample may fail (default: %(default)s)")
    args = parser.parse_args(argv)
    args.shape_gate = args.shape_gate == "true"
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    options = Options(**{k: v for k, v in vars(args).items() if k != "out"})
    started = time.perf_counter()
    try:
        path, warnings = generate_leaderboard(options, args.out)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    size_mb = path.stat().st_size / 1e6
    print(f"wrote {path} ({size_mb:.1f} MB) in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
