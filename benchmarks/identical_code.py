"""Collect how far identical code strayed from 1.00x on one hardware, per problem, for the leaderboard.

    python benchmarks/identical_code.py --hardware H200 --out results/identical_code/H200.json SELF.json [...]

Each SELF.json is benchmarks/self_speedup.py's output (`--out`): every reference evaluated as its own
candidate (`class ModelNew(Model): pass`) against a baseline of the same code, so any speedup in it is
the harness's and the host's noise, not the kernel's. The file written keeps every such speedup per
problem, the files it came from and the digest of each problem file; the leaderboard
(leaderboard.identical_code) lists a correct sample whose speedup is no larger than its problem's
identical code reached: that is not a measured speedup.
"""

import argparse
import collections
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from kernelbench_verified.problems.load import get_problem  # noqa: E402
from kernelbench_verified.results import read_json, write_json_atomic  # noqa: E402


def level_and_pid(key: str) -> tuple[int, int]:
    """(3, 9) of "L3/9", self_speedup's problem key."""
    level, pid = key.removeprefix("L").split("/")
    return int(level), int(pid)


def collect(paths: list[Path]) -> dict:
    """{"L3/9": [speedup, ...]} over the given self_speedup outputs, in their order."""
    speedups: dict[str, list[float]] = {}
    for path in paths:
        found = read_json(path, "self_speedup output").get("speedups")
        if not isinstance(found, dict):
            raise SystemExit(f"{path}: no 'speedups' in it; give benchmarks/self_speedup.py's --out files")
        for problem, value in found.items():
            speedups.setdefault(problem, []).append(round(float(value), 5))
    return speedups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--hardware", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    speedups = collect(args.files)
    # The files measured: the leaderboard applies a problem's figures only to a baseline of the same file.
    digests = {key: get_problem(*level_and_pid(key)).source_sha256 for key in speedups}
    document = {"hardware": args.hardware,
                "what": "speedups of each reference evaluated as its own candidate; 1.00 is the truth",
                "sources": [os.path.relpath(p.resolve(), ROOT) for p in args.files],
                "speedups": dict(sorted(speedups.items(), key=lambda item: level_and_pid(item[0]))),
                "problem_sha256": digests}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.out, document)
    levels = collections.Counter(key.split("/")[0] for key in speedups)
    print(f"{args.out}: {len(speedups)} problems ({', '.join(f'{k}: {v}' for k, v in sorted(levels.items()))}) "
          f"from {len(args.files)} files")


if __name__ == "__main__":
    main()
