"""How much a launch-bound reference's time moves between processes, and what a busy CPU beside it does.

    python benchmarks/launch_bound.py [--problems 3/9 3/10 3/19 3/1] [--rounds 3] [--core 5] [--out f.json]

Each round is a fresh process that times every problem once, the way a baseline is timed
(baseline.timing.measure, baseline_time_torch). Rounds cycle through placements:
- `free`: not pinned, nothing else running;
- `pinned`: pinned to `--core`;
- `sibling_busy`: pinned to `--core` while another process spins on its SMT sibling (skipped
  without SMT);
- `other_busy`: pinned to `--core` while one spins on a CPU of another physical core;
- `same_busy`: pinned to `--core` while one spins on that same CPU (the scheduler shares it: about 2x,
  a check that the spinner bites).
The spinner polls a pipe with select() and no timeout, as the judge does while it waits for a timed
call's reply (Channel.receive with spin). Prints the CPU topology, then per problem and placement the
median of each round's medians and the spread (max/min - 1) across rounds. If `sibling_busy` is slower
than `other_busy`, the judge's spin on a launch-bound kernel's SMT sibling costs that kernel time.
"""

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"seed": 42, "num_perf_trials": 100, "num_warmup": 3, "flush_l2": True}
PLACEMENTS = ("free", "pinned", "sibling_busy", "other_busy", "same_busy")


def siblings(cpu: int) -> list[int]:
    """CPUs sharing `cpu`'s physical core, itself included (Linux sysfs)."""
    text = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip()
    found = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        found += range(int(low), int(high or low) + 1)
    return found


def spinner_cpu(placement: str, core: int) -> int | None:
    """The CPU the spinner takes for `placement`, or None for no spinner."""
    if placement == "same_busy":
        return core
    if placement == "sibling_busy":
        others = [c for c in siblings(core) if c != core]
        return others[0] if others else None
    if placement == "other_busy":
        shared = set(siblings(core))
        return next(c for c in sorted(os.sched_getaffinity(0)) if c not in shared)
    return None


def spin(cpu: int) -> None:
    os.sched_setaffinity(0, {cpu})
    read_end, _ = os.pipe()
    while True:
        select.select([read_end], [], [], 0)


def one_round(problems: list[str], core: int | None) -> dict:
    """Median and mean (ms) of each problem in this process."""
    if core is not None:
        os.sched_setaffinity(0, {core})
    sys.path.insert(0, str(ROOT / "src"))
    import torch
    from kernelbench_verified.baseline.timing import measure
    from kernelbench_verified.problems.load import get_problem, load_module
    device = torch.device("cuda")
    figures = {}
    for name in problems:
        level, pid = map(int, name.split("/"))
        stats = measure(load_module(get_problem(level, pid).path), "baseline_time_torch", SETTINGS, device)
        figures[name] = {"median": stats["median"], "mean": stats["mean"]}
    return figures


def run_round(placement: str, spinner_on: int | None, args) -> dict:
    spinner = None
    if spinner_on is not None:
        spinner = subprocess.Popen([sys.executable, __file__, "--spin", str(spinner_on)])
    try:
        out = subprocess.run([sys.executable, __file__, "--round", placement, "--core", str(args.core),
                              "--problems", *args.problems], check=True, capture_output=True, text=True)
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()
    return json.loads(out.stdout.strip().splitlines()[-1])


def spread(values: list[float]) -> float:
    return max(values) / min(values) - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["3/9", "3/10", "3/19", "3/1"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", type=int, default=5)
    parser.add_argument("--round", choices=PLACEMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--spin", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.spin is not None:
        spin(args.spin)
    if args.round:
        print(json.dumps(one_round(args.problems, None if args.round == "free" else args.core)))
        return
    spinners = {p: spinner_cpu(p, args.core) for p in PLACEMENTS}
    placements = [p for p in PLACEMENTS if p in ("free", "pinned") or spinners[p] is not None]
    print(f"cpu {args.core}: siblings {siblings(args.core)}; spinner on "
          + ", ".join(f"{p} {spinners[p]}" for p in placements if spinners[p] is not None))
    rounds = {p: [] for p in placements}
    for _ in range(args.rounds):
        for placement in placements:
            rounds[placement].append(run_round(placement, spinners[placement], args))
    report = {}
    for name in args.problems:
        for placement, results in rounds.items():
            medians = [r[name]["median"] for r in results]
            report.setdefault(name, {})[placement] = {
                "medians_ms": [round(v, 3) for v in medians], "means_ms": [round(r[name]["mean"], 3) for r in results],
                "median_ms": round(statistics.median(medians), 3), "spread": round(spread(medians), 4)}
            print(f"L{name} {placement:>12}: median {statistics.median(medians):8.3f} ms, "
                  f"spread {100 * spread(medians):5.1f} %  ({', '.join(f'{v:.2f}' for v in medians)})")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
