"""How the judge's clock overhead moves, from one problem's samples evaluated one after another.

    python benchmarks/clock_drift.py RESULTS.json [RESULTS.json ...]

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
  level that moves it too is a state of the whole timed path, not of the judge's window alone).
"""

import argparse
import json
import statistics
import sys
from pathlib import Path


def phases(records: dict, what: str = "overhead") -> list[tuple[list, list]]:
    """(calibration, timed calls) of each correct sample, in sample order: each call's overhead, or
    (`what="reported"`) its reported milliseconds."""
    found = []
    for record in sorted(records.values(), key=lambda r: r["sample_id"]):
        raw = record.get("metadata", {}).get("judge_trials_ms")
        if record.get("eval_status") == "correct" and raw:
            if what == "reported":
                found.append((raw["calibration_reported"], raw["reported"]))
            else:
                found.append((raw["calibration_overhead"], [w - t for t, w in zip(raw["reported"], raw["waited"])]))
    return found


def gaps(samples: list[tuple[list, list]]) -> dict[str, list]:
    """The timed phase's median overhead less a calibration's, per sample: its own, the next
    sample's, and the mean of both (the last sample has no next)."""
    median = statistics.median
    cal, timed = [median(c) for c, _ in samples], [median(t) for _, t in samples]
    return {"gap against its own calibration": [t - c for t, c in zip(timed, cal)],
            "against the next sample's": [t - c for t, c in zip(timed, cal[1:])],
            "against the mean of both": [t - (a + b) / 2 for t, a, b in zip(timed, cal, cal[1:])]}


def report(path: Path) -> None:
    records = json.loads(path.read_text())
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+")
    for path in parser.parse_args().results:
        report(path)


if __name__ == "__main__":
    main()
