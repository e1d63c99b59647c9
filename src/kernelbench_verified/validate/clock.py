"""How small a timing fake the judge's clock catches, replayed on honest records.

A kernel that fakes its time by a fraction f, by any in-process means, lowers the milliseconds its timed
calls report by f while the judge's own clock (the milliseconds it waited) stays as it was. So the judge's
rule (clock.timing_flags) is re-run on each honest, correct, CUDA-timed record with its reported times
scaled by 1 - f, for growing f, until it withholds the time. The figure per call-time bucket is the fake
caught in every record of the bucket (and in 95 % of them): a fake that large cannot keep its time.
"""

from __future__ import annotations

import math

from ..evaluate.clock import SLACKS, ClockSlack, timing_flags

FAKES = [f / 100 for f in range(0, 100)]
BUCKETS_MS = [(0, 0.1), (0.1, 0.5), (0.5, 1), (1, 2), (2, 5), (5, 10), (10, math.inf)]
CLOCK_FLAGS = ("timing_below_judge_clock", "timing_mean_below_judge_clock")


def honest_timed(records: dict) -> list[dict]:
    """Correct CUDA samples that carry the judge's raw clock figures, timed or withheld."""
    found = []
    for record in records.values():
        metadata = record.get("metadata", {})
        stats = record.get("runtime_stats") or metadata.get("untrusted_runtime_stats") or {}
        if record.get("eval_status") == "correct" and str(stats.get("device", "")).startswith("cuda") \
                and metadata.get("judge_trials_ms", {}).get("reported"):
            found.append(record)
    return found


def _stats(record: dict) -> dict:
    return record.get("runtime_stats") or record["metadata"]["untrusted_runtime_stats"]


def record_slack(record: dict) -> ClockSlack:
    """The slack the judge checked this record with (metadata.judge_clock_slack, fitted to its machine)."""
    fitted = record["metadata"].get("judge_clock_slack")
    return ClockSlack.from_record(fitted) if fitted else SLACKS[record["metadata"].get("judge_clock", "gpu_timeline")]


def faked(times: list, fake: float, share: float = 1.0) -> list:
    """The reported times had the kernel lowered `share` of its calls (spread evenly) by `fake`."""
    return [t * (1 - fake) if math.floor((i + 1) * share) > math.floor(i * share) else t
            for i, t in enumerate(times)]


def caught(record: dict, fake: float, share: float = 1.0) -> bool:
    """Whether the judge's rule withholds this record's time had its kernel reported (1 - fake) of the
    time of `share` of its calls."""
    raw = record["metadata"]["judge_trials_ms"]
    reported = faked(raw["reported"], fake, share)
    stats = dict(_stats(record), num_trials=len(reported))
    flags = timing_flags(stats, reported, raw["waited"], raw["calibration_overhead"], record_slack(record))
    return any(flag.startswith(CLOCK_FLAGS) for flag in flags)


def smallest_fake(record: dict, share: float = 1.0) -> float:
    """The smallest fake of the mean runtime (share x fake) that the clock catches in this record."""
    return next((f * share for f in FAKES if caught(record, f, share)), share)


def quantile(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def bucket_name(low: float, high: float) -> str:
    return f"{low:g}-{high:g} ms" if math.isfinite(high) else f"{low:g} ms and more"


def section(records: list[dict]) -> dict:
    """The summary's `clock` section over honest timed records: how many the rule withholds with no
    fake, the honest gap's quantiles, and per call-time bucket the fake caught in every record."""
    withheld = [r for r in records if caught(r, 0.0)]
    kept = [r for r in records if r not in withheld]
    gaps = [r["metadata"]["judge_clock_gap_ms"] for r in records if "judge_clock_gap_ms" in r["metadata"]]
    terms = sorted(record_slack(r).median[1] for r in records)
    buckets = {}
    for low, high in BUCKETS_MS:
        inside = [r for r in kept if low <= _stats(r)["median"] < high]
        if inside:
            fakes = [smallest_fake(r) for r in inside]
            buckets[bucket_name(low, high)] = {"records": len(inside), "caught_in_every": max(fakes),
                                               "caught_in_95_percent": quantile(fakes, 0.95)}
    return {"honest_records": len(records), "withheld_without_fake": len(withheld),
            "honest_gap_ms": {f"p{int(q * 100)}": round(quantile(gaps, q), 4) for q in (0, 0.05, 0.5, 0.95, 1)}
            if gaps else {},
            "slack_ms_term": {"min": terms[0], "max": terms[-1]} if terms else {},
            "fake_caught_by_call_time": buckets}
