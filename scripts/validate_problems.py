"""Check every reference model at full size under the four hidden distributions: time, memory, outputs.

Records each problem's forward time, peak memory, finiteness and degenerate (constant) outputs.

    python scripts/validate_problems.py --level 1 2 [--pid 19] [--out results/problems]

Writes results/problems/{HW}_level{L}.json (resumable: problems already there are skipped unless
--force) and results/degenerate_problems.json, the list the leaderboard excludes.
"""

import argparse
import sys

from kernelbench_verified.errors import UserError


def main() -> int:
    summary, _, details = __doc__.partition("\n")
    parser = argparse.ArgumentParser(description=summary, epilog=details.strip("\n"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", type=int, nargs="+", required=True, help="the levels to check")
    parser.add_argument("--pid", type=int, nargs="*", help="only these problem ids (default: every problem)")
    parser.add_argument("--out", default="results/problems",
                        help="folder of the reports, {HW}_level{L}.json (default: %(default)s)")
    parser.add_argument("--degenerate-file", default="results/degenerate_problems.json",
                        help="the list of degenerate problems to update (default: %(default)s)")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"),
                        help="where the references run; auto: the GPU when there is one (default: %(default)s)")
    parser.add_argument("--problems-dir", default=None,
                        help="KernelBench-format directory (default: the repo's KernelBench/)")
    parser.add_argument("--force", action="store_true", help="re-run problems already in the report")
    args = parser.parse_args()
    from kernelbench_verified.problems.validation_run import validate_levels  # after --help: imports torch

    try:
        validate_levels(args.level, args.pid, args.out, args.degenerate_file, args.device, args.problems_dir,
                        args.force)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
