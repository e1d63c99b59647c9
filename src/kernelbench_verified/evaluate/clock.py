"""The judge's clock: how it calibrates, how much slack it allows, the slack's fit to this machine, the
flags it raises against the times a kernel reports, and the doubts that earn a sample a second evaluation.

A kernel reports its own event times; the judge times the same calls by its own clock (the GPU's, see
timeline.py, or the host's) and learns from the reference's trials, run in the same sandbox before the
kernel loads, what its clock adds to an honest call. A gap beyond that and the slack withholds the time.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass

from ..verdicts import Flag, Status, flag_codes

# Reference trials that calibrate the judge's clock (at least the fewest, at most the most, until the
# judge's clock has waited CALIBRATION_SECONDS): (warm-ups, fewest, most) by device. The CUDA check
# compares medians and means, so a call of up to 2.5 ms is calibrated with as many calls as its timed
# phase; a longer one with fewer, where the slack's share of the call (2 %) outweighs the noise of
# the overhead's estimate. The calibration is the reference's GPU work again, so this budget is most of
# a long call's harness seconds: at 1 s it was 1.3 s of a level-2 reference's 3.1 s on an H200.
# Replaying the clock's rule on 195 honest H100 records (41 with calls over 2.5 ms) with each
# calibration cut to its first 0.25 s changed no verdict and no call-time bucket's smallest caught fake,
# nor the calibrations' drift that fits the slack. The CPU's coarse check needs only a rough overhead.
# Today's figures: validation summary, sections `clock` and `references` (harness_seconds_by_phase).
CALIBRATION_TRIALS, CALIBRATION_SECONDS = {"cuda": (3, 5, 100), "cpu": (1, 5, 20)}, 0.25


@dataclass(frozen=True)
class ClockSlack:
    """How far a sample's gap (the judge's clock minus the reported time, less the reference trials'
    overhead) may go, as (fraction of the reported time, ms): `median` for the median call, `mean` for
    the mean over the calls (the record's runtime is their mean, so a kernel that fakes fewer than half
    of its calls moves the mean but not the median)."""
    median: tuple[float, float]
    mean: tuple[float, float]

    def recorded(self, calibrations: int) -> dict:
        """metadata.judge_clock_slack: this slack and how many calibrations its fit saw."""
        return {"median": list(self.median), "mean": list(self.mean), "calibrations": calibrations}

    @classmethod
    def from_record(cls, entry: dict) -> ClockSlack:
        return cls(tuple(entry["median"]), tuple(entry["mean"]))


# By clock: how far a sample's gap may go before its time is withheld, wide enough for honest kernels,
# narrow enough to catch a faked time. "host" (host_trial): the median gap does not grow with the
# call's time; on the H200 honest records of 0.02-20 ms per call reach +0.26 ms and their mean gap stays
# under 2 % + 0.215 ms, so 2 % + 0.3 ms withholds none. "gpu_timeline" (timeline.py): on the H200 the
# overhead sits at one of two levels ~0.055 ms apart for runs of 40-100 calls (honest median gaps
# -0.108 to +0.091 ms), and a slack covering such a flip lets a 14 % fake through at 0.5-1 ms; an H100
# has no levels (honest median gaps -0.012 to +0.025 ms). A doubted sample is evaluated again from a
# fresh calibration (RETRIED_CLOCK_FLAGS), so the slack covers one attempt's noise: at 2 % + 0.035 ms
# 6 of 568 honest H200 records trip on a first attempt, none twice in a row. Today's honest gaps and
# what each slack catches: the validation summary, `results/validation/{GPU}.json` (written by
# scripts/validate_harness.py), sections `references` and `clock`.
SLACKS = {"host": ClockSlack(median=(0.02, 0.3), mean=(0.02, 0.3)),
          "gpu_timeline": ClockSlack(median=(0.02, 0.035), mean=(0.02, 0.035))}
# The GPU clock's ms term, fitted to the machine the judge runs on: NOISE_MULTIPLE times the
# NOISE_QUANTILE of how far the two halves of a calibration lie apart (calibration_drift), over the last
# calibrations this judge ran (trusted: the reference's trials, before any kernel loads), never under
# NOISE_FLOOR_MS and never over SLACKS' (the noisiest machine's). That drift tracks the honest gap, a
# little under it (95th percentiles 0.036 against 0.049 ms on the H200, 0.0105 against 0.0126 ms on an
# H100). At 1x a stretch of calibrations that drifted little fitted 0.02 ms on the H200 and doubted 5
# honest samples where SLACKS doubts 1; at 2x the H200 stays at 0.035 ms, and an H100 fits 0.020 ms at
# its 50th calibration and doubts none of the 241 timed references of levels 1-3. Under FITTED_FROM
# calibrations SLACKS holds as is; 50, not 20: the 95th percentile of 20 is their largest, and 20
# calibrations of a quiet stretch fitted 0.021 ms and doubted an honest clean fixture; 50 does not.
# Each record says what it was judged with (`metadata.judge_clock_slack`); the fit on today's
# references: validation summary, `references`.
FITTED_CLOCKS = ("gpu_timeline",)
FITTED_FROM, FITTED_OVER = 50, 500
NOISE_QUANTILE, NOISE_MULTIPLE, NOISE_FLOOR_MS = 0.95, 2.0, 0.02
# The mean check and the wall-clock sums leave out this share of the timed calls, those the judge waited
# longest for (a host hiccup in its own window, not the kernel's doing), and the mean check the same
# share of the largest calibration overheads. A kernel can make calls slow to be left out, but a
# left-out call it reports as free moves the mean by at most this share.
MEAN_GAP_LEFT_OUT = 0.02
# The clock's flags an honest sample can trip when the timed path's overhead moves between its
# calibration and its timed calls: the calibrated clock's, and the wall clock's on a host that turned
# busy (in CI a Ray node starting beside a 3-call baseline once stalled its waits past 2x + 0.1 s). A
# sample with these alone is evaluated again (judge.Judge.judged_again), and the first attempt's figures are
# kept in its record.
RETRIED_CLOCK_FLAGS = (Flag.TIMING_BELOW_JUDGE_CLOCK, Flag.TIMING_MEAN_BELOW_JUDGE_CLOCK,
                       Flag.TIMING_FAR_BELOW_WALL_CLOCK)
RETRY_KEPT = ("judge_clock_gap_ms", "judge_clock_mean_gap_ms", "judge_trials_ms", "trial_phases_at")
# A median call reported under this share of the fastest call of no work (timed in the same process
# before the kernel loaded) is impossible: its time is withheld. Under 0.1 ms a call the clock's slack
# is larger than the call, and this floor is then what catches a timer patched to report almost nothing.
# On the H200 an empty call takes 0.017 ms at the median (0.011-0.053 over 319 processes), the honest
# call closest to it (a one-launch ReLU) 1.07 times the fastest, and empty calls ran 3 times slower in
# a state of the whole timed path that lasted seconds: a quarter leaves room for that. Each record keeps
# its empty calls (`metadata.judge_trials_ms.empty_calls`); the honest ones: validation summary, `references`.
EMPTY_CALL_FLOOR = 0.25


class ClockFit:
    """The calibration drifts this judge has seen (trusted: the reference's trials, before any kernel
    loads) and the slack of each clock they fit (see FITTED_CLOCKS)."""

    def __init__(self):
        self.calibration_drifts: deque[float] = deque(maxlen=FITTED_OVER)

    def learn(self, clock: str, overhead: list) -> None:
        """Note one calibration's drift (calibration_drift) on a clock whose slack is fitted."""
        drift = calibration_drift(overhead)
        if drift is not None and clock in FITTED_CLOCKS:
            self.calibration_drifts.append(drift)

    def slack(self, name: str) -> ClockSlack:
        """The slack of clock `name` on this machine: fitted to its calibrations where it can be."""
        return fitted_slack(SLACKS[name], self.calibration_drifts) if name in FITTED_CLOCKS else SLACKS[name]


def clock_doubts(record: dict) -> bool:
    """A correct record whose time only the clock's RETRIED_CLOCK_FLAGS withheld, and nothing else."""
    flags = flag_codes(record.get("integrity"))
    return record.get("eval_status") == Status.CORRECT and bool(flags) and set(flags) <= set(RETRIED_CLOCK_FLAGS)


def clock_gaps(times: list, walls: list, clock_overhead: list) -> tuple[float, float]:
    """(median, mean) of the judge's clock minus the reported time over the timed calls, less the same
    of the reference trials' overhead. The mean leaves out the MEAN_GAP_LEFT_OUT share of the calls the
    judge waited longest for, and of the largest overheads."""
    median = statistics.median(w - t for t, w in zip(times, walls)) - statistics.median(clock_overhead)
    overhead = sorted(clock_overhead)[:len(clock_overhead) - _left_out(len(clock_overhead))]
    return median, statistics.fmean(w - t for w, t in waited_least(times, walls)) - statistics.fmean(overhead)


def waited_least(times: list, walls: list) -> list[tuple[float, float]]:
    """(waited, reported) of the timed calls less the MEAN_GAP_LEFT_OUT share the judge waited longest for."""
    return sorted(zip(walls, times))[:len(walls) - _left_out(len(walls))] if walls else []


def _left_out(count: int) -> int:
    return min(count - 1, math.ceil(count * MEAN_GAP_LEFT_OUT))


def calibration_drift(overhead: list) -> float | None:
    """How far apart (ms) the medians of a calibration's first and second half of calls lie: how much
    the clock's overhead moved within one phase of honest calls. None under 10 calls."""
    half = len(overhead) // 2
    if half < 5:
        return None
    return abs(statistics.median(overhead[:half]) - statistics.median(overhead[half:]))


def fitted_slack(default: ClockSlack, drifts) -> ClockSlack:
    """`default` with its ms terms lowered to this machine's calibration drift (see FITTED_CLOCKS)."""
    if len(drifts) < FITTED_FROM:
        return default
    ordered = sorted(drifts)
    noise = max(NOISE_FLOOR_MS, NOISE_MULTIPLE * ordered[min(len(ordered) - 1, int(NOISE_QUANTILE * len(ordered)))])
    return ClockSlack((default.median[0], min(default.median[1], noise)), (default.mean[0], min(default.mean[1], noise)))


def catches_from(slack: ClockSlack, times: list) -> float:
    """The share of the runtime a fake must exceed before the clock withholds it, whichever calls it
    fakes: the mean check's slack at this mean time (a fake of fewer than half the calls leaves the
    median alone). Over 1: no fake is caught, as under 0.1 ms a call on the GPU's clock."""
    return round(slack.mean[0] + slack.mean[1] / max(statistics.fmean(times), 1e-6), 4)


def clock_name(clock) -> str:
    """The SLACKS key of a trial clock (a timeline.TimelineClock): the GPU's, or the host's when there is none."""
    return "host" if clock is None else "gpu_timeline"


def timing_flags(stats: dict, times: list, walls: list, clock_overhead: list, slack: ClockSlack | None,
                 empty_calls: list | None = None) -> list[str]:
    """The judge's clock against the reported event times, trial by trial: a call cannot take longer
    than the judge waited for it, and a call much shorter than that is suspicious (beyond what the
    reference's trials showed the judge's clock adds). `slack`, on CUDA where the clock is steady enough
    (SLACKS): the median and the mean gap between the judge's clock and the reported time may exceed the
    reference trials' by at most that fraction of the reported time plus those milliseconds.
    `empty_calls`: times of calls of no work in the same process before the kernel loaded; no honest
    call reports much less (the floor catches fakes of calls too short for the clock's slack)."""
    flags = []
    if empty_calls and times and statistics.median(times) < EMPTY_CALL_FLOOR * min(empty_calls):
        flags.append(Flag.TIMING_BELOW_EMPTY_CALL.saying(
            f"the median call reported {statistics.median(times):.4f} ms, under {EMPTY_CALL_FLOOR:g} "
            f"of the fastest call of no work ({min(empty_calls):.4f} ms)"))
    resets = stats.get("persisting_l2_resets")
    if resets is not None and resets < stats["num_trials"]:
        flags.append(Flag.PERSISTING_L2_NOT_RESET.saying(f"{resets} of {stats['num_trials']} trials"))
    over = sum(1 for t, w in zip(times, walls) if t > w * 1.01 + 0.05)
    if over:
        flags.append(Flag.TIMING_EXCEEDS_WALL_CLOCK.saying(
            f"{over} of {len(times)} trials reported more than the judge waited"))
    # A sum against sums, since on a busy host (builds beside the judge) the waits have long tails; less
    # the MEAN_GAP_LEFT_OUT share of the calls waited longest for, as the mean check: one stalled wake-up
    # in a short run (a CI host starting a Ray node beside it) is the host's doing, not the kernel's.
    kept = waited_least(times, walls)
    reported, waited = sum(t for _, t in kept) / 1e3, sum(w for w, _ in kept) / 1e3
    # What the event times rightly leave out (flushes, synchronisation, messages), as the reference's trials saw it.
    overhead = (statistics.fmean(clock_overhead) if clock_overhead else 2.0) * len(kept) / 1e3
    if waited > 2 * (reported + overhead) + 0.1:
        flags.append(Flag.TIMING_FAR_BELOW_WALL_CLOCK.saying(f"{reported:.3f} s reported, {waited:.3f} s waited"))
    if slack and clock_overhead:
        median_gap, mean_gap = clock_gaps(times, walls, clock_overhead)
        allowed = slack.median[0] * statistics.median(times) + slack.median[1]
        if median_gap > allowed:
            flags.append(Flag.TIMING_BELOW_JUDGE_CLOCK.saying(
                f"the judge waited {median_gap:.4f} ms per call more than the reported time explains "
                f"(allowed {allowed:.4f} ms)"))
        allowed = slack.mean[0] * statistics.fmean(times) + slack.mean[1]
        if mean_gap > allowed:
            flags.append(Flag.TIMING_MEAN_BELOW_JUDGE_CLOCK.saying(
                f"the judge waited {mean_gap:.4f} ms more than the reported time explains, on average over the "
                f"calls (allowed {allowed:.4f} ms)"))
    return flags
