"""Write hidden_tests/level{L}/{pid}_hidden.py for a level's problems.

    python scripts/generate_hidden_inputs.py --level 1 [--pid 19 20] [--validate] [--dry-run]

Each file names its seed and the distributions D1 x1.0, D2 x3.0, D3 x0.01, D4 x-1.0. With --validate
the reference runs on every distribution (on the GPU when there is one) and a distribution whose output
is non-finite, or that raises, is left out and logged in hidden_tests/filtered_configs.json; without it,
the drops already logged there are kept, so regenerating is byte-identical.
"""

import argparse
import sys

from kernelbench_verified.errors import UserError


def main() -> int:
    summary, _, details = __doc__.partition("\n")
    parser = argparse.ArgumentParser(description=summary, epilog=details.strip("\n"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", type=int, required=True, help="the level whose problems get hidden tests")
    parser.add_argument("--pid", type=int, nargs="*", help="only these problem ids (default: every problem)")
    parser.add_argument("--validate", action="store_true",
                        help="run the reference on every distribution and leave out those it fails "
                             "(default: keep the drops already logged)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be written, write nothing")
    parser.add_argument("--problems-dir", default=None,
                        help="KernelBench-format directory (default: the repo's KernelBench/)")
    parser.add_argument("--out-dir", default=None, help="hidden tests directory (default: the repo's hidden_tests/)")
    parser.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"),
                        help="where --validate runs the references; auto: the GPU when there is one "
                             "(default: %(default)s)")
    args = parser.parse_args()
    from kernelbench_verified.problems.hidden_generate import generate_hidden_tests  # after --help: imports torch

    try:
        generate_hidden_tests(args.level, args.pid, args.validate, args.dry_run, args.problems_dir,
                              args.out_dir, args.device)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
