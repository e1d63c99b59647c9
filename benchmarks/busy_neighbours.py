"""Launch-bound calls against what the CPUs numbered beside the timed one were doing.

    python benchmarks/busy_neighbours.py RESULTS.json RESULTS.json ... --cpu-log cpu_stat.log[.gz]

Each RESULTS.json is a run of the same problems (a baseline run's records and its candidates', say:
benchmarks/results/session12_call.sh writes both, and cpu_stat.log beside them). For every problem
judged in two or more of the runs whose timed calls vary (std/mean of self_speedup.STEADY_CV or more
in any of them: the launch-bound ones), each record's median call is taken relative to the problem's fastest
record, and split by whether a CPU numbered next to its timed CPU (metadata.timed_cpu) was busy for
more than half of its timed phase (metadata.trial_phases_at). Prints both groups' size and median and
mean slowdown: whether a busy neighbour of the timed CPU slows the calls timed on it.
"""

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from clock_drift import cpu_busy, read_cpu_log  # noqa: E402
from self_speedup import STEADY_CV  # noqa: E402

from kernelbench_verified.results import read_json  # noqa: E402

BUSY = 0.5


def neighbour_busy(record: dict, log: list) -> bool | None:
    """Whether a CPU numbered next to the record's timed CPU was busy for more than BUSY of its timed
    phase; None where the record or the log does not say."""
    metadata = record.get("metadata", {})
    cpu, (start, end) = metadata.get("timed_cpu"), (metadata.get("trial_phases_at") or {}).get("timed", (None, None))
    busy = cpu_busy(log, start, end) if isinstance(cpu, int) and start is not None else None
    if busy is None:
        return None
    return any(busy[n] > BUSY for n in (cpu - 1, cpu + 1) if 0 <= n < len(busy))


def slowdowns(runs: list[dict], log: list) -> dict[bool, list[float]]:
    """{neighbour busy: [each record's median call / its problem's fastest median]} over the unsteady
    problems judged correct in two or more runs."""
    found = {True: [], False: []}
    for key in set.intersection(*(set(run) for run in runs)):
        records = [run[key] for run in runs if run[key].get("eval_status") == "correct"]
        stats = [r.get("runtime_stats") or {} for r in records]
        if len(records) < 2 or not all(s.get("mean") for s in stats):
            continue
        if max(s["std"] / s["mean"] for s in stats) < STEADY_CV:
            continue
        fastest = min(s["median"] for s in stats)
        for record, stat in zip(records, stats):
            busy = neighbour_busy(record, log)
            if busy is not None:
                found[busy].append(stat["median"] / fastest)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--cpu-log", type=Path, required=True)
    args = parser.parse_args()
    found = slowdowns([read_json(path, "results file") for path in args.results], read_cpu_log(args.cpu_log))
    for busy, name in ((True, "a neighbour of the timed CPU busy"), (False, "neither neighbour busy")):
        values = found[busy]
        figures = (f"median slowdown {statistics.median(values):.3f}, mean {statistics.fmean(values):.3f}"
                   if values else "no records")
        print(f"{name}: {len(values)} records, {figures}")


if __name__ == "__main__":
    main()
