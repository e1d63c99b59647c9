"""How the judge's clock overhead moves, from one problem's samples evaluated one after another.

    python benchmarks/clock_drift.py RESULTS.json [RESULTS.json ...] [--cpu-log cpu_stat.log]

Each RESULTS.json holds N samples of one problem's self-candidate, judged in a row, each in a fresh
sandbox with its own calibration (benchmarks/results/session12_call.sh `repeat:L:P:N`). The overhead of
a call is the judge's window minus the reported time; the judge checks the gap between the timed
calls' median overhead (T) and its own calibration's (C). Prints per file:

- the gap T - C as the judge takes it, and what it would be against the next sample's calibration
  (another process, seconds later) or against the mean of both: whether a calibration taken elsewhere
  would track the drift;
- how far apart the phase medians lie (5th to 95th percentile over both phases of every sample), and
  per sample the share of each phase's calls above the middle of that range: the overhead sits at a
  low or a high level for runs of many calls, so a calibration all low and timed calls all high is
  the honest gap's worst case, about that far apart;
- how closely the calls' own reported time follows that level (the same code in every phase, so a
  level that moves it too is a state of the whole timed path, not of the judge's window alone);
- with `--cpu-log` (session12_call.sh's cpu_stat.log: a Unix time, then every CPU's cumulative busy,
  idle and stolen jiffies, per line), what the timed CPU (metadata.timed_cpu) and the whole machine
  were doing during each phase (metadata.trial_phases_at): the share of the timed CPU's time the
  hypervisor took (steal) and the share of all CPUs busy, and how closely the overhead follows each.
"""

import argparse
import bisect
import gzip
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from kernelbench_verified.results import read_json  # noqa: E402


def phases(records: dict, what: str = "overhead") -> list[tuple[list, list]]:
    """(calibration, timed calls) of each correct sample, in sample order: each call's overhead, or
    (`what="reported"`) its reported milliseconds."""
    found = []
    for record in correct_records(records):
        raw = record["metadata"]["judge_trials_ms"]
        if what == "reported":
            found.append((raw["calibration_reported"], raw["reported"]))
        else:
            found.append((raw["calibration_overhead"], [w - t for t, w in zip(raw["reported"], raw["waited"])]))
    return found


def correct_records(records: dict) -> list[dict]:
    """Correct samples with the judge's raw figures, in sample order."""
    return [r for r in sorted(records.values(), key=lambda r: r["sample_id"])
            if r.get("eval_status") == "correct" and r.get("metadata", {}).get("judge_trials_ms")]


def read_cpu_log(path: Path) -> list[tuple[float, list[tuple[int, int, int]]]]:
    """(Unix time, each CPU's cumulative (busy, idle, steal) jiffies) per line of a cpu_stat.log (or
    its .gz, as committed); lines that do not parse are skipped."""
    rows = []
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    for line in text.splitlines():
        try:
            stamp, *cpus = line.split()
            rows.append((float(stamp), [tuple(int(n) for n in cpu.split(",")) for cpu in cpus]))
        except ValueError:
            continue
    return rows


def cpu_deltas(log: list, start: float, end: float) -> list[list[int]] | None:
    """Each CPU's (busy, idle, steal) jiffies between the last log line at or before `start` and the
    first at or after `end`; None where the log does not span it."""
    first = bisect.bisect_right(log, start, key=lambda row: row[0]) - 1  # the log is in time order
    last = bisect.bisect_left(log, end, key=lambda row: row[0])
    if first < 0 or last == len(log):
        return None
    return [[b - a for a, b in zip(x, y)] for x, y in zip(log[first][1], log[last][1])]


def cpu_busy(log: list, start: float, end: float) -> list[float] | None:
    """Each CPU's busy share of its time between `start` and `end` (None where the log does not say)."""
    delta = cpu_deltas(log, start, end)
    return None if delta is None else [d[0] / max(1, d[0] + d[1]) for d in delta]


def cpu_shares(log: list, cpu: int, start: float, end: float) -> tuple[float, float] | None:
    """Between `start` and `end`: the share of CPU `cpu`'s time stolen, and the share of all CPUs' time
    busy; None where the log does not span it."""
    delta = cpu_deltas(log, start, end)
    if delta is None or cpu >= len(delta):
        return None
    total = sum(map(sum, delta))
    if not sum(delta[cpu]) or not total:
        return None
    return delta[cpu][2] / sum(delta[cpu]), sum(d[0] for d in delta) / total


def phase_cpu(records: list[dict], log: list) -> list[tuple[float, float] | None]:
    """cpu_shares of each sample's timed CPU during its calibration, then its timed calls, flattened like
    the phases; None where the record or the log does not say."""
    shares = []
    for record in records:
        metadata = record["metadata"]
        cpu, spans = metadata.get("timed_cpu"), metadata.get("trial_phases_at") or {}
        for phase in ("calibration", "timed"):
            start, end = spans.get(phase, (None, None))
            known = isinstance(cpu, int) and start is not None and end is not None
            shares.append(cpu_shares(log, cpu, start, end) if known else None)
    return shares


def gaps(samples: list[tuple[list, list]]) -> dict[str, list]:
    """The timed phase's median overhead less a calibration's, per sample: its own, the next
    sample's, and the mean of both (the last sample has no next)."""
    median = statistics.median
    cal, timed = [median(c) for c, _ in samples], [median(t) for _, t in samples]
    return {"gap against its own calibration": [t - c for t, c in zip(timed, cal)],
            "against the next sample's": [t - c for t, c in zip(timed, cal[1:])],
            "against the mean of both": [t - (a + b) / 2 for t, a, b in zip(timed, cal, cal[1:])]}


def report(path: Path, cpu_log: list | None = None) -> None:
    records = read_json(path, "results file")
    samples = phases(records)
    if len(samples) < 3:
        sys.exit(f"{path}: {len(samples)} correct samples with the judge's raw figures; need 3 or more")
    print(f"{path.name}: {len(samples)} samples")
    for name, values in gaps(samples).items():
        print(f"  {name:32s} mean {statistics.fmean(values):+.4f}  sd {statistics.pstdev(values):.4f}  "
              f"max {max(values):+.4f}  min {min(values):+.4f} ms")
    medians = [statistics.median(phase) for sample in samples for phase in sample]
    cuts = statistics.quantiles(medians, n=20, method="inclusive")
    low, high = cuts[0], cuts[-1]
    middle = (low + high) / 2
    print(f"  phase medians from {low:.3f} to {high:.3f} ms (5-95 %), {high - low:.3f} ms apart; "
          "per sample, the share of calls above the middle, calibration / timed:")
    shares = [f"{sum(v > middle for v in c) / len(c):.0%}/{sum(v > middle for v in t) / len(t):.0%}"
              for c, t in samples]
    print("  " + " ".join(shares))
    reported = [statistics.median(phase) for sample in phases(records, "reported") for phase in sample]
    above = [r for r, m in zip(reported, medians) if m > middle]
    below = [r for r, m in zip(reported, medians) if m <= middle]
    print(f"  the calls' own reported time follows the level: correlation {statistics.correlation(medians, reported):.2f}"
          f" over the phases; median {statistics.median(below):.4f} ms in phases below the middle, "
          f"{statistics.median(above):.4f} above")
    print_own_time(phases(records, "reported"))
    if cpu_log is not None:
        print_cpu_shares(medians, phase_cpu(correct_records(records), cpu_log))


def print_own_time(samples: list[tuple[list, list]]) -> None:
    """The calls' own reported time: the median over samples of each phase's median, and how far the
    timed phases' medians spread over the samples (an A/B of settings compares these between files)."""
    cal, timed = ([statistics.median(s[i]) for s in samples] for i in (0, 1))
    mid_cal, mid_timed = statistics.median(cal), statistics.median(timed)
    print(f"  the calls' own time: calibration {mid_cal:.4f} ms, timed {mid_timed:.4f} ms "
          f"({mid_timed / mid_cal - 1:+.1%}); timed medians {min(timed):.4f}-{max(timed):.4f} ms over the samples")


def print_cpu_shares(medians: list, shares: list) -> None:
    """The timed CPU's stolen share and the machine's busy share per phase, and how closely the phases'
    overhead follows each."""
    known = [(m, s) for m, s in zip(medians, shares) if s is not None]
    if len(known) < 3:
        print(f"  what the CPUs did: known for {len(known)} phases (the log or trial_phases_at is missing)")
        return
    overhead = [m for m, _ in known]
    for index, name in ((0, "the timed CPU's time stolen"), (1, "all CPUs' time busy")):
        values = [s[index] for _, s in known]
        follows = (f"the overhead follows it with correlation {statistics.correlation(overhead, values):+.2f}"
                   if len(set(values)) > 1 else "the same in every phase")
        print(f"  {name}: {min(values):.1%}-{max(values):.1%} over {len(known)} phases; {follows}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--cpu-log", type=Path, help="session12_call.sh's cpu_stat.log of the same run")
    args = parser.parse_args()
    cpu_log = read_cpu_log(args.cpu_log) if args.cpu_log else None
    for path in args.results:
        report(path, cpu_log)


if __name__ == "__main__":
    main()
