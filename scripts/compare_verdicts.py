"""Compare two evaluations of the same samples verdict by verdict: statuses, failed cases, audits, flags.

Evaluate one run folder twice with the same input_salt (the evaluator before and after a change, on
the same machine, back to back), then:

    python scripts/compare_verdicts.py RUN_A RUN_B [--out comparison.json]

Prints the statuses counted on each side and every sample whose verdict differs; exits 0 when every
sample's verdict is the same, 1 when one differs or a sample is in one run only. Times, error texts and
which timed calls were audited are not compared (kernelbench_verified.validate.same_verdicts).
"""

import argparse
import json
import sys

from kernelbench_verified.errors import UserError


def main() -> int:
    summary, _, details = __doc__.partition("\n")
    parser = argparse.ArgumentParser(description=summary, epilog=details.strip("\n"),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_a", help="a run folder (or its eval_results[_hidden].json): the evaluation before")
    parser.add_argument("run_b", help="the same run evaluated again: the evaluation after")
    parser.add_argument("--out", default=None, help="also write the comparison here as JSON (default: none)")
    args = parser.parse_args()
    from kernelbench_verified.results import write_json_atomic
    from kernelbench_verified.validate.same_verdicts import compare_runs

    try:
        comparison = compare_runs(args.run_a, args.run_b)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = comparison.summary()
    if args.out:
        write_json_atomic(args.out, summary)
    print(json.dumps({k: v for k, v in summary.items() if k != "differing"}, indent=1))
    for key, what, a, b in comparison.differences:
        print(f"{key}: {what} {a!r} -> {b!r}")
    return 0 if comparison.same else 1


if __name__ == "__main__":
    sys.exit(main())
