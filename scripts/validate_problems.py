"""Run every reference model at full size under the four hidden distributions and record forward time,
peak memory, finiteness and degenerate (constant) outputs.

    python scripts/validate_problems.py --level 1 2 [--pid 19] [--out results/validation]

Writes results/validation/{HW}_level{L}.json (resumable: problems already there are skipped unless
--force) and results/degenerate_problems.json, the list the leaderboard excludes.
"""

import argparse
import sys

from kernelbench_verified.errors import UserError
from kernelbench_verified.problems.validation_run import validate_levels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", type=int, nargs="+", required=True)
    parser.add_argument("--pid", type=int, nargs="*")
    parser.add_argument("--out", default="results/validation")
    parser.add_argument("--degenerate-file", default="results/degenerate_problems.json")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    parser.add_argument("--problems-dir", default=None)
    parser.add_argument("--force", action="store_true", help="re-run problems already in the report")
    args = parser.parse_args()
    try:
        validate_levels(args.level, args.pid, args.out, args.degenerate_file, args.device, args.problems_dir,
                        args.force)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
