"""How small a timing fake the judge's clock catches, measured on honest records.

    python benchmarks/clock_sensitivity.py RESULTS.json [RESULTS.json ...] [--clock gpu_timeline]
        [--slack 0.02 0.07 0.02 0.1 | --fit] [--share 0.49] [--each]

A kernel that fakes its time by a fraction f, by any in-process means, lowers the reported milliseconds
of its timed calls by f while the judge's own clock (the waited milliseconds) stays as it was. So the
check (judge.timing_flags) is re-run on each honest, correct, CUDA-timed record with its reported times
scaled by 1 - f, for growing f, until it withholds the time. `--share S` fakes only that share of the
calls, spread evenly (below a half the median call is not faked, only the mean: the runtime); the fake
printed is then what the runtime lost, S x f. Records with the judge's raw figures
(metadata.judge_trials_ms) are re-run exactly; older ones from their recorded gap and median.

Each record is checked with the slack the judge checked it with (metadata.judge_clock_slack, fitted to
its machine; older records: that of the clock that timed it, metadata.judge_clock, "host" before the
GPU's clock), with `--slack MEDIAN_FRACTION MEDIAN_MS MEAN_FRACTION MEAN_MS` to try another
(judge.ClockSlack), or with `--fit` as one judge that ran all the records given, in the order their
calibrations ran, would have fitted it (judge.fitted_slack). Prints the honest records
withheld (f = 0), the honest gap's quantiles, per duration bucket the fake caught in every record and
in 95 % of them, and, for records that say when each reply arrived, where the gap lies: before the
reply (the sandbox's side: the call, the messages, its export) or after it (the judge mapping and
copying the outputs; on the GPU's clock "after" is the judge's wait for the GPU's T1, mostly negative).
`--each` also lists every record: its median time, median and mean gap, and the flags the rule raises
on it as it stands (to replay an exploit-suite run's records at another slack).
"""

import argparse
import collections
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelbench_verified.evaluate.judge import (FITTED_CLOCKS, FITTED_OVER, SLACKS, ClockSlack,  # noqa: E402
                                                 calibration_drift, fitted_slack, timing_flags)
from kernelbench_verified.results import read_json  # noqa: E402

FAKES = [f / 100 for f in range(0, 100)]
BUCKETS_MS = [(0, 0.1), (0.1, 0.5), (0.5, 1), (1, 2), (2, 5), (5, 10), (10, math.inf)]


def honest_timed(records: dict) -> list[dict]:
    """Correct CUDA samples with the judge's clock figures, timed or withheld."""
    found = []
    for record in records.values():
        metadata = record.get("metadata", {})
        stats = record.get("runtime_stats") or metadata.get("untrusted_runtime_stats") or {}
        if record.get("eval_status") == "correct" and stats.get("device", "").startswith("cuda") \
                and "judge_clock_gap_ms" in metadata:
            found.append(record)
    return found


def clock_of(record: dict) -> str:
    return record["metadata"].get("judge_clock", "host")


def record_slack(record: dict) -> ClockSlack:
    """The slack the judge checked this record with (metadata.judge_clock_slack, fitted to its machine),
    or, for records from before the fit, that of its clock."""
    fitted = record["metadata"].get("judge_clock_slack")
    return ClockSlack.from_record(fitted) if fitted else SLACKS[clock_of(record)]


def fit_slacks(records: list) -> None:
    """Set each record's judge_clock_slack as one judge that ran them all, in the order their
    calibrations ran, would have fitted it (judge.fitted_slack): to replay the fit on older records."""
    drifts = collections.deque(maxlen=FITTED_OVER)
    for record in sorted(records, key=lambda r: (r["metadata"].get("trial_phases_at") or {}).get("calibration", [0])[0]):
        metadata = record["metadata"]
        if clock_of(record) not in FITTED_CLOCKS:
            continue
        drift = calibration_drift(metadata["judge_trials_ms"]["calibration_overhead"])
        if drift is not None:
            drifts.append(drift)
        metadata["judge_clock_slack"] = fitted_slack(SLACKS[clock_of(record)], drifts).recorded(len(drifts))


def faked(times: list, fake: float, share: float) -> list:
    """The reported times had the kernel lowered `share` of its calls (spread evenly) by `fake`."""
    return [t * (1 - fake) if math.floor((i + 1) * share) > math.floor(i * share) else t
            for i, t in enumerate(times)]


def caught(record: dict, fake: float, slack: ClockSlack | None = None, share: float = 1.0) -> bool:
    """Whether the clock withholds this record's time had its kernel reported (1 - fake) of the time of
    `share` of its calls, with `slack` or the one the judge checked it with."""
    metadata = record["metadata"]
    slack = slack or record_slack(record)
    stats = record.get("runtime_stats") or metadata["untrusted_runtime_stats"]
    raw = metadata.get("judge_trials_ms")
    if raw:
        flags = clock_flags(record, faked(raw["reported"], fake, share), slack)
        return any(f.startswith(("timing_below_judge_clock", "timing_mean_below_judge_clock")) for f in flags)
    if share < 1:
        raise ValueError("a partial fake needs the record's raw figures (metadata.judge_trials_ms)")
    median = stats["median"]  # without the raw figures: each call's gap grows by fake x its time
    gap = metadata["judge_clock_gap_ms"] + fake * median
    return gap > slack.median[0] * median * (1 - fake) + slack.median[1]


def clock_flags(record: dict, reported: list, slack: ClockSlack) -> list[str]:
    """judge.timing_flags on the record's raw figures, with these reported times."""
    metadata = record["metadata"]
    raw = metadata["judge_trials_ms"]
    stats = dict(record.get("runtime_stats") or metadata["untrusted_runtime_stats"], num_trials=len(reported))
    return timing_flags(stats, reported, raw["waited"], raw["calibration_overhead"], slack)


def smallest_fake(record: dict, slack: ClockSlack | None, share: float = 1.0) -> float:
    """The smallest fake of the mean runtime (share x fake) that the clock catches in this record."""
    return next((f * share for f in FAKES if caught(record, f, slack, share)), share)


def name(record: dict) -> str:
    return f"L{record['level']}/{record['problem_id']}"


def quantile(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def gap_split(record: dict) -> tuple[float, float] | None:
    """The record's gap (timed median minus calibration median), before and after the reply arrived."""
    raw = record["metadata"].get("judge_trials_ms", {})
    if not raw.get("replied") or not raw.get("calibration_replied"):
        return None
    timed_before = [r - t for t, r in zip(raw["reported"], raw["replied"])]
    timed_after = [w - r for r, w in zip(raw["replied"], raw["waited"])]
    calib_waited = [t + o for t, o in zip(raw["calibration_reported"], raw["calibration_overhead"])]
    calib_before = [r - t for t, r in zip(raw["calibration_reported"], raw["calibration_replied"])]
    calib_after = [w - r for r, w in zip(raw["calibration_replied"], calib_waited)]
    median = statistics.median
    return median(timed_before) - median(calib_before), median(timed_after) - median(calib_after)


def print_split(records: list) -> None:
    splits = [s for s in map(gap_split, records) if s]
    if splits:
        for name, values in (("before the reply", [b for b, _ in splits]), ("after the reply", [a for _, a in splits])):
            print(f"gap {name:17s} (ms, {len(values)} records), quantiles 0/5/50/95/100 %: "
                  + " / ".join(f"{quantile(values, q):+.3f}" for q in (0, 0.05, 0.5, 0.95, 1))
                  + f", sd {statistics.pstdev(values):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--clock", choices=sorted(SLACKS), help="only the records this clock timed")
    parser.add_argument("--slack", type=float, nargs=4,
                        metavar=("MEDIAN_FRACTION", "MEDIAN_MS", "MEAN_FRACTION", "MEAN_MS"),
                        help="check with this slack instead of each record's clock's")
    parser.add_argument("--fit", action="store_true",
                        help="replay the judge's fitted slack on the records, in the order they ran, as one judge")
    parser.add_argument("--share", type=float, default=1.0, help="the share of the calls a kernel fakes")
    parser.add_argument("--each", action="store_true", help="list every record's gaps and flags under the rule")
    args = parser.parse_args()
    records = [r for path in args.results for r in honest_timed(read_json(path, "results file"))
               if args.clock in (None, clock_of(r))]
    if not records:
        sys.exit("no correct CUDA-timed records with the judge's clock figures in these files")
    slack = ClockSlack(tuple(args.slack[:2]), tuple(args.slack[2:])) if args.slack else None
    if args.fit:
        fit_slacks(records)
    withheld = [r for r in records if caught(r, 0.0, slack)]
    gaps = [r["metadata"]["judge_clock_gap_ms"] for r in records]
    print(f"{len(records)} honest timed records; withheld with no fake: {len(withheld)} "
          f"({', '.join(name(r) for r in withheld)})")
    print("honest gap (ms), quantiles 0/5/50/95/100 %: "
          + " / ".join(f"{quantile(gaps, q):+.3f}" for q in (0, 0.05, 0.5, 0.95, 1)))
    if not slack and any("judge_clock_slack" in r["metadata"] for r in records):  # fitted per record
        terms = sorted(r.median[1] for r in map(record_slack, records))
        print(f"rule: the judge's fitted slack, its ms term {terms[0]:.4f}-{terms[-1]:.4f} "
              f"(median {statistics.median(terms):.4f}) over the records")
    else:
        rules = {slack} if slack else {record_slack(r) for r in records}
        print("rule: withheld when " + " or ".join(
            f"the median gap exceeds {r.median[0]:.0%} of the median time + {r.median[1]} ms, or the mean gap "
            f"{r.mean[0]:.0%} of the mean time + {r.mean[1]} ms" for r in rules)
            + ("" if slack else f" (by clock: {', '.join(sorted({clock_of(r) for r in records}))})"))
    print(f"a kernel fakes {args.share:.0%} of its calls; the fake is what its runtime (the mean) lost")
    print("median time      n   fake caught in every record   in 95 % of them")
    for low, high in BUCKETS_MS:
        inside = [r for r in records if r not in withheld and
                  low <= (r.get("runtime_stats") or r["metadata"]["untrusted_runtime_stats"])["median"] < high]
        if inside:
            fakes = [smallest_fake(r, slack, args.share) for r in inside]
            print(f"{low:>5g}-{high:<6g} ms {len(inside):4d}   {max(fakes):>10.0%}   {quantile(fakes, 0.95):>22.0%}")
    print_split(records)
    if args.each:
        for record in records:
            print(each(record, slack))


def each(record: dict, slack: ClockSlack | None) -> str:
    """One record's line for --each: its median time, gaps, and the flags of the clock's check."""
    metadata = record["metadata"]
    flags = clock_flags(record, metadata["judge_trials_ms"]["reported"], slack or record_slack(record))
    median = (record.get("runtime_stats") or metadata["untrusted_runtime_stats"])["median"]
    return (f"{name(record):8s} {record['sample_id']:3d}  median {median:8.4f} ms  "
            f"gap {metadata['judge_clock_gap_ms']:+.4f}  mean gap {metadata.get('judge_clock_mean_gap_ms', math.nan):+.4f}  "
            f"flags: {[f.split(':')[0] for f in flags] or '-'}")


if __name__ == "__main__":
    main()
