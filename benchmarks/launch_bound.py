"""How much a launch-bound reference's time moves between processes, pinned to one core or not.

    python benchmarks/launch_bound.py [--problems 3/15 3/7 3/9 3/10 3/1] [--rounds 4] [--core 5]

Each round is a fresh process that times every problem once, the way a baseline is timed
(baseline.timing.measure, baseline_time_torch). Rounds alternate between an unpinned process and one
pinned to `--core` (os.sched_setaffinity, before torch starts any thread). Prints, per problem and
placement, the mean of each round and the spread (max/min - 1) across rounds: identical code timed in
two processes can differ by that much before any harness difference.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"seed": 42, "num_perf_trials": 100, "num_warmup": 3, "flush_l2": True}


def one_round(problems: list[str], core: int | None) -> dict:
    """Means (ms) of each problem in this process."""
    if core is not None:
        os.sched_setaffinity(0, {core})
    sys.path.insert(0, str(ROOT / "src"))
    import torch
    from kernelbench_verified.baseline.timing import measure
    from kernelbench_verified.problems.load import get_problem, load_module
    device = torch.device("cuda")
    means = {}
    for name in problems:
        level, pid = map(int, name.split("/"))
        module = load_module(get_problem(level, pid).path)
        means[name] = measure(module, "baseline_time_torch", SETTINGS, device)["mean"]
    return means


def spread(values: list[float]) -> float:
    return max(values) / min(values) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["3/15", "3/7", "3/9", "3/10", "3/1"])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--core", type=int, default=5)
    parser.add_argument("--round", choices=["pinned", "unpinned"], help=argparse.SUPPRESS)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.round:
        print(json.dumps(one_round(args.problems, args.core if args.round == "pinned" else None)))
        return
    rounds = {"unpinned": [], "pinned": []}
    for _ in range(args.rounds):
        for placement in rounds:
            out = subprocess.run([sys.executable, __file__, "--round", placement, "--core", str(args.core),
                                  "--problems", *args.problems], check=True, capture_output=True, text=True)
            rounds[placement].append(json.loads(out.stdout.strip().splitlines()[-1]))
    report = {}
    for placement, means in rounds.items():
        for name in args.problems:
            values = [m[name] for m in means]
            report.setdefault(name, {})[placement] = {
                "means_ms": [round(v, 3) for v in values], "median_ms": round(statistics.median(values), 3),
                "spread": round(spread(values), 4)}
            print(f"L{name} {placement:>8}: median {statistics.median(values):8.3f} ms, "
                  f"spread {100 * spread(values):5.1f} %  ({', '.join(f'{v:.2f}' for v in values)})")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
