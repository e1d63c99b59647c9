"""Is the judge's clock level a state of the machine or of one process? Two kernel processes, timed in turn.

    python benchmarks/twin_clock.py [--twins 2] [--call matmul|launches] [--n 2560] [--calls 1000]
        [--jitter-ms 0] [--out F]

On the H200 a call's overhead on the judge's GPU clock (its window minus the time it reports,
evaluate/timeline.py) sits at one of two levels ~0.06 ms apart for runs of 40-100 calls, and a
calibration in another process seconds later does not track it (benchmarks/clock_drift.py). That is
why a 10 % fake at 0.5 ms goes unseen there. If the level belongs to the machine (its host CPU, the
GPU's scheduling), a trusted twin process that runs the reference, timed in turn with the kernel's
calls, sees the same level, and the judge could compare the kernel's calls with its twin's instead of
with a calibration taken before. If each process has its own level, the twins are unrelated.

This process plays the judge (TimelineClock, as the judge queues a trial) and each twin a sandbox
(TimelineSlots and timed_call, as the sandbox times a call), all with the same call; trials go A, B, A,
B. Prints each twin's overhead spread (sd; its 50-call medians' 5-95 % range; the mean run of calls on
one side of its median, about 2 for independent calls) and the same for A's overhead minus its two B
neighbours' mean: a much narrower spread there means a twin tracks the level. `--jitter-ms J` sleeps
a random 0-J ms before each trial: if the levels are a beat between the trials' cadence and something
periodic on the machine, they break up into independent calls, whose median holds still.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from clock_sensitivity import quantile  # noqa: E402
from gpu_clock import make_call  # noqa: E402
from kernelbench_verified.evaluate.timeline import TimelineClock, TimelineSlots  # noqa: E402
from kernelbench_verified.measure.timing import TrialTools, l2_flusher  # noqa: E402

BLOCK = 50  # calls per block: the judge compares medians of phases about this long
WARMUP = 10


def twin(conn, kind: str, n: int) -> None:
    """A sandbox's side: the slots the judge maps, then one timed call per mark until None."""
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda", 0)
    x, y, call = make_call(kind, n, device)
    x.normal_()
    slots = TimelineSlots(device, [{"dtype": "float32", "shape": list(y.shape)}], {"float32": torch.float32})
    tools = TrialTools(device, flush_l2=False)  # the judge flushes L2 from its own process, as it does
    conn.send(slots.held())
    while (mark := conn.recv()) is not None:
        if mark == "arm":
            tools.prepare()
            conn.send("armed")
        else:
            conn.send(slots.call(lambda: (call(), y)[1], mark, tools))


def trial(conn, clock: TimelineClock, mark: int, flush) -> tuple[float, float]:
    """(window ms, reported ms) of one call as the judge runs one: "arm", then its part queued (the L2
    flush in place of fresh inputs), then the twin told to go."""
    conn.send("arm")
    conn.recv()
    clock.queue(mark, flush, lambda slots: [s.clone() for s in slots])
    conn.send(mark)
    reported = conn.recv()
    return clock.window_ms(time.monotonic() + 10), reported


def start_twins(count: int, kind: str, n: int, device) -> list:
    """[(connection, clock, process)] for each twin, its slots mapped into this process."""
    context, twins = mp.get_context("spawn"), []
    for _ in range(count):
        here, there = context.Pipe()
        process = context.Process(target=twin, args=(there, kind, n))
        process.start()
        held = here.recv()
        twins.append((here, TimelineClock(device, held[:-1], held[-1]), process))
    return twins


def run(count: int, kind: str, n: int, calls: int, jitter_ms: float = 0.0) -> list[list[dict]]:
    """Each twin's rows {window, reported, overhead, at}, trials alternating between the twins."""
    device = torch.device("cuda", 0)
    twins = start_twins(count, kind, n, device)
    flush, rows = l2_flusher(device), [[] for _ in twins]
    for number in range(1, WARMUP + calls + 1):
        for index, (conn, clock, _) in enumerate(twins):
            time.sleep(random.uniform(0, jitter_ms) / 1e3)
            window, reported = trial(conn, clock, number, flush)
            if number > WARMUP:
                rows[index].append({"window": window, "reported": reported, "overhead": window - reported,
                                    "at": time.time()})
    for conn, _, process in twins:
        conn.send(None)
        process.join()
    return rows


def block_medians(values: list[float]) -> list[float]:
    return [statistics.median(values[i:i + BLOCK]) for i in range(0, len(values) - BLOCK + 1, BLOCK)]


def spread(values: list[float]) -> dict:
    """sd of the values and the 5-95 % range of their BLOCK-call medians, in us; the mean length of
    runs of values on one side of their median."""
    medians, middle = block_medians(values), statistics.median(values)
    runs = [len(list(run)) for _, run in itertools.groupby(v > middle for v in values)]
    return {"sd_us": statistics.pstdev(values) * 1e3,
            "block_medians_5_95_us": (quantile(medians, 0.95) - quantile(medians, 0.05)) * 1e3,
            "blocks": len(medians), "mean_run": statistics.fmean(runs)}


def against_neighbours(a: list[float], b: list[float]) -> list[float]:
    """A's i-th overhead minus the mean of B's calls just before (i-1) and just after (i) it."""
    return [a[i] - (b[i - 1] + b[i]) / 2 for i in range(1, min(len(a), len(b)))]


def report(rows: list[list[dict]]) -> dict:
    overheads = [[r["overhead"] for r in twin_rows] for twin_rows in rows]
    figures = {f"twin_{'AB'[i]}": {"median_reported_ms": statistics.median(r["reported"] for r in twin_rows),
                                   "overhead": spread(overheads[i])} for i, twin_rows in enumerate(rows)}
    if len(rows) == 2:
        figures["A_minus_B_neighbours"] = spread(against_neighbours(*overheads))
        figures["block_median_correlation"] = statistics.correlation(*map(block_medians, overheads))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--twins", type=int, choices=(1, 2), default=2)
    parser.add_argument("--call", choices=("matmul", "launches"), default="matmul")
    parser.add_argument("--n", type=int, default=2560, help="--call matmul: n x n float32 (2560: about 0.7 ms)")
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per twin")
    parser.add_argument("--jitter-ms", type=float, default=0.0, help="sleep a random 0-J ms before each trial")
    parser.add_argument("--out", type=Path, help="write every row and the figures here (JSON)")
    args = parser.parse_args()
    rows = run(args.twins, args.call, args.n, args.calls, args.jitter_ms)
    figures = report(rows)
    print(json.dumps({"call": args.call, "n": args.n, "twins": args.twins, "jitter_ms": args.jitter_ms, **figures},
                     indent=1))
    if args.out:
        args.out.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "figures": figures,
                                        "rows": rows}))


if __name__ == "__main__":
    main()
