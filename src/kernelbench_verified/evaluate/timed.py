"""The timed phase: the reference's calibration trials, the kernel's timed calls, and their figures.

Both phases run the same way, through the same requests, buffers and transport, so what the judge's
clock adds to an honest call (the calibration, before the kernel loads) is what it adds to the kernel's.
Each call gets fresh inputs the judge writes just before it (cases.timing_case); some calls' outputs are
copied for the audits chosen afterwards (cases.audit). The clock's rules are in clock.py. Each step
takes the sample's conversation (judge.Conversation).
"""

from __future__ import annotations

import secrets
import statistics
import time
from dataclasses import dataclass, field

import torch

from .cases import audit, timing_case
from .channel import ProtocolViolation
from .clock import CALIBRATION_SECONDS, CALIBRATION_TRIALS, catches_from, clock_gaps, clock_name, timing_flags
from .exchange import SampleFailed
from .messages import Event, Op
from .timeline import TimelineClock, output_specs
from .transport import export_values, payload_bound
from ..measure.timing import summarize
from ..problems.inputs import Case, call_seed
from ..verdicts import Status

# Timed outputs kept for the audits chosen after the timed phase: all of them within AUDIT_BUDGET_BYTES,
# else at least MIN_KEPT, whatever their size (how many are audited: cases.NUM_AUDITS).
AUDIT_BUDGET_BYTES, MIN_KEPT = 4 << 30, 3


@dataclass
class Trials:
    """What run_trials saw, per call: the reported milliseconds, the judge's milliseconds until the reply
    arrived and its clock's window (timeline_trial or host_trial); the copies kept, and how many calls
    reset the persisting L2."""
    reported: list = field(default_factory=list)
    replied: list = field(default_factory=list)
    waited: list = field(default_factory=list)
    kept: dict = field(default_factory=dict)
    l2_resets: int = 0

    def overhead(self) -> list[float]:
        return [w - t for t, w in zip(self.reported, self.waited)]


@dataclass
class Calibration:
    """What the reference's trials taught the judge before the kernel loaded: its clock and that clock's
    overhead (judge minus reported ms), and the calls of no work timed in the same process."""
    trials: Trials = field(default_factory=Trials)
    clock: str | None = None
    empty_calls: list = field(default_factory=list)


def calibrate(conv, like: Case) -> Calibration:
    """Learn what the judge's clock adds to an event time for this problem from the reference's own
    trials, run in the sandbox before the kernel is loaded; then "load", and the empty calls."""
    try:
        phase = TrialPhase(conv, like)
        warmup, fewest, most = CALIBRATION_TRIALS["cuda" if conv.device.type == "cuda" else "cpu"]
        trials = phase.run("calibration", warmup, most, set(), stop_after=(fewest, CALIBRATION_SECONDS))
    except SampleFailed as failed:  # no kernel code has run yet: the harness failed, not the kernel
        raise SampleFailed(Status.HARNESS_ERROR, error=f"clock calibration on the reference: "
                                                       f"{failed.details.get('error', failed.status)}") from None
    conv.talk.post({"op": Op.LOAD})
    empty_calls = expect_empty_calls(conv)
    # the reference's own time here (refinement feedback)
    conv.record["reference_ms"] = statistics.median(trials.reported)
    calibration = Calibration(trials, clock_name(phase.clock), empty_calls)
    conv.clock_fit.learn(calibration.clock, trials.overhead())
    return calibration


def expect_empty_calls(conv) -> list[float]:
    """The times of calls of no work the sandbox took after "load" and before it loads the kernel
    (sandbox.empty_call_times), so still its own: the floor under any honest call's time. The same
    message gives the GPU memory the reference's calibration took there (conv.reference_peak)."""
    message = conv.talk.expect(Event.EMPTY_CALLS)
    times, peak = message.get("ms"), message.get("reference_peak_bytes")
    if (not isinstance(times, list) or not 0 < len(times) <= 100
            or not all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t < 1e4 for t in times)):
        raise SampleFailed(Status.HARNESS_ERROR, error=f"empty calls timed as {str(times)[:80]!r}")
    if not isinstance(peak, int) or isinstance(peak, bool) or not 0 <= peak < 1 << 50:
        raise SampleFailed(Status.HARNESS_ERROR, error=f"the reference's memory measured as {str(peak)[:40]!r}")
    conv.reference_peak = conv.record["reference_peak_bytes"] = peak
    return [float(t) for t in times]


def time_trials(conv, like: Case, calibration: Calibration) -> None:
    """Warm-ups and timed calls; then the statistics, the clock's flags and the audits."""
    job, record = conv.job, conv.record
    phase = TrialPhase(conv, like)
    if clock_name(phase.clock) != calibration.clock:  # the same output specs went to both
        raise SampleFailed(Status.HARNESS_ERROR, error="the timed calls and the calibration got different clocks")
    trials, warmup = job.num_perf_trials, job.num_warmup
    keep = trials_to_keep(conv.references.outline(like), trials)
    timed = phase.run("timed", warmup, trials, keep)
    times, walls = timed.reported, timed.waited
    conv.lap("timing")
    record["runtime_stats"] = dict(summarize(times), num_warmup=warmup, l2_flush=bool(job.flush_l2),
                                   device=str(conv.device))
    if conv.device.type == "cuda":
        record["runtime_stats"]["persisting_l2_resets"] = timed.l2_resets
    record["judge_wall_stats"] = summarize(walls)
    overhead = calibration.trials.overhead()
    record["judge_clock_overhead_ms"] = summarize(overhead)
    # The judge's raw figures, to microseconds: anyone can re-run the clock's check on them (and tune
    # it on honest kernels) without trusting its summary. "replied": the host's milliseconds from the
    # "trial" message to the reply (on the host clock that splits its window: before, the call, the
    # messages and the sandbox's export; after, the judge's mapping and copy).
    record["judge_clock"] = calibration.clock
    record["judge_trials_ms"] = {"reported": _rounded(times), "waited": _rounded(walls),
                                 "replied": _rounded(timed.replied),
                                 "calibration_overhead": _rounded(overhead),
                                 "calibration_reported": _rounded(calibration.trials.reported),
                                 "calibration_replied": _rounded(calibration.trials.replied),
                                 "empty_calls": [round(t, 4) for t in calibration.empty_calls]}
    if overhead:
        median_gap, mean_gap = clock_gaps(times, walls, overhead)
        record.update(judge_clock_gap_ms=median_gap, judge_clock_mean_gap_ms=mean_gap)
    slack = conv.clock_fit.slack(calibration.clock) if conv.device.type == "cuda" else None
    if slack:
        record["judge_clock_catches_from"] = catches_from(slack, times)
        record["judge_clock_slack"] = slack.recorded(len(conv.clock_fit.calibration_drifts))
    record["integrity"] = timing_flags(record["runtime_stats"], times, walls, overhead, slack, calibration.empty_calls)
    audit(conv, timed.kept)


def trials_to_keep(expected: list, trials: int) -> set:
    """The timed calls whose outputs the judge copies, for audits chosen after the phase: all of them
    within AUDIT_BUDGET_BYTES, else a secret random subset (at least MIN_KEPT). The kernel cannot tell
    a kept call from another until after it has answered it."""
    size = max(1, sum(o.nbytes for o in expected if isinstance(o, torch.Tensor)))
    count = max(MIN_KEPT, min(trials, AUDIT_BUDGET_BYTES // size))
    return set(secrets.SystemRandom().sample(range(trials), min(trials, count)))


class LoopSeconds:
    """Where a phase's host seconds went, summed over its calls (warm-ups included): the inputs made,
    the "arm" request, the trial itself (queued, answered, copied), and the rest of the loop. The
    record keeps them so a harness's seconds beyond the timed work can be followed to their step."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.started = self.mark = time.perf_counter()

    def lap(self, step: str | None) -> None:
        now = time.perf_counter()
        if step is not None:
            self.seconds[step] = self.seconds.get(step, 0.0) + now - self.mark
        self.mark = now

    def recorded(self) -> dict[str, float]:
        """The steps' seconds and the rest of the phase's, since this was made."""
        total = time.perf_counter() - self.started
        return {**{step: round(s, 4) for step, s in self.seconds.items()},
                "rest": round(total - sum(self.seconds.values()), 4)}


class TrialPhase:
    """One phase of trials in the sandbox, after its "timing" request: the sandbox keeps buffers for the
    inputs the judge writes before each call and, on CUDA when every output is a tensor, output slots
    and two words for the judge's GPU clock (timeline.py), which it must hand back. `clock` is that
    clock, or None: the host's."""

    def __init__(self, conv, like: Case):
        self.conv, self.talk, self.like = conv, conv.talk, like
        self.outline = conv.references.outline(like)
        specs = output_specs(self.outline) if conv.device.type == "cuda" else None
        self.buffers = self.talk.request(Op.TIMING, conv.references.inputs(like),
                                         **({"outputs": specs} if specs else {}))
        ready = self.talk.expect(Event.READY)
        self.clock: TimelineClock | None = None
        if specs is not None:
            slots, words = self.talk.receive_outputs(ready, "slots"), self.talk.receive_outputs(ready, "words")
            if len(slots) != len(specs) or not all(map(_matches, slots, specs)):
                raise ProtocolViolation("output slots unlike the reference's outputs")
            if len(words) != 1 or not _matches(words[0], {"shape": [2], "dtype": "int32"}):
                raise ProtocolViolation("the timing words are not two int32")
            self.clock = TimelineClock(conv.device, slots, words[0])
        self.host_mapped: list = []

    def run(self, phase: str, warmup: int, trials: int, keep: set,
            stop_after: tuple[int, float] | None = None) -> Trials:
        """Warm-ups, then timed calls, each in two requests. "arm": the sandbox finishes the last call's
        work and gives back any persisting L2. "trial": the call, on inputs the judge writes just before
        it into the shared buffers (L2 flushed after them, from the judge's own process), timed by the
        judge's clock, and copied by the judge into memory it allocated before the first call. The
        clock is the GPU's (timeline_trial: from the judge's `go` to the kernel's `done`) or the host's
        (host_trial: from the "trial" message until the judge's copy is done); either way nothing of the
        call can fall outside its window: work before the inputs exist is not work on them, and outputs
        not yet written when the judge copies them fail the audit of any call it picks afterwards. What
        the window holds beyond the call, the reference's calibration trials measure the same way. Keeps
        the copies of the calls in `keep`. `stop_after` (count, seconds): stop once that many calls took
        that long."""
        conv, refs = self.conv, self.conv.references
        conv.judge.spares.settle()  # no spare sets up CUDA beside a timed call
        seen, started, loop = Trials(), time.time(), LoopSeconds()
        # Each call's copy lands in memory allocated now, outside the clock: a kept copy allocated in
        # the window costs a cudaMalloc per call once the cache is used up (+0.2 ms per call for L2/74's
        # 32 MiB output, from its sixth timed call on), which the calibration, keeping nothing, never pays.
        slots = {index: _empty_like(self.outline) for index in keep}
        scratch = _empty_like(self.outline)
        self.host_mapped, bound = [], payload_bound(self.buffers) + payload_bound(self.outline)
        for mark, index in enumerate(range(-warmup, trials), start=1):
            loop.lap(None)
            case = timing_case(conv.job, index, phase)
            fresh = refs.inputs(case)
            loop.lap("inputs")
            self.talk.post({"op": Op.ARM, "rng_seed": call_seed(conv.job.input_salt, case.name)})
            l2_reset = self.talk.expect(Event.ARMED).get("l2_reset") is True
            loop.lap("arm")
            target = slots.pop(index, scratch)
            if self.clock is not None:
                window_ms, replied_ms, copies, reply = self.timeline_trial(fresh, target, mark)
            else:
                window_ms, replied_ms, copies, reply = self.host_trial(fresh, target, bound)
            loop.lap("trial")
            del fresh  # else the next trial's inputs are made while these still live (twice the memory)
            ms = reply.get("ms")
            if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not 0 <= ms < 1e7:
                raise ProtocolViolation(f"a trial time of {str(ms)[:40]!r}")
            if index < 0:
                continue
            seen.reported.append(float(ms))
            seen.replied.append(replied_ms)
            seen.waited.append(window_ms)
            seen.l2_resets += l2_reset
            if index in keep:
                seen.kept[index] = copies
            del copies
            if stop_after and len(seen.reported) >= stop_after[0] and sum(seen.waited) / 1e3 >= stop_after[1]:
                break
        self.host_mapped = []  # before the next request, which lets the sandbox free that memory
        # When the phase ran (Unix seconds), to line its figures up with logs of the host taken beside the
        # run: the CPUs' clocks, the GPU's.
        conv.record.setdefault("trial_phases_at", {})[phase] = [round(started, 3), round(time.time(), 3)]
        conv.record.setdefault("trial_loop_seconds", {})[phase] = loop.recorded()
        return seen

    def timeline_trial(self, fresh: list, target: list, mark: int) -> tuple:
        """One trial on the GPU's clock (timeline.py): (window ms, host ms until the reply, copies, reply)."""
        clock = self.clock
        try:
            copies = clock.queue(mark, lambda: self.write_inputs(fresh), lambda outputs: _copy_into(target, outputs))
            started = time.perf_counter()
            self.talk.post({"op": Op.TRIAL, "mark": mark})
            # Waits asleep: this clock's window is on the GPU, so the judge's wake-up lies outside it,
            # while a judge spinning through every timed call keeps a core busy, at times one numbered
            # beside the timed CPU. On an H100, launch-bound level-3 calls timed with a CPU beside the timed
            # one busy ran a median 11 % slower than in a quieter run of the same problems, 5 % without.
            reply = self.talk.expect(Event.TRIAL, 0)
            replied_ms = (time.perf_counter() - started) * 1e3
            return clock.window_ms(self.talk.deadline), replied_ms, copies, reply
        except BaseException:
            clock.release()  # the judge's stream would wait for `done` for ever
            raise

    def write_inputs(self, fresh: list) -> None:
        """Queue a trial's fresh inputs into the sandbox's buffers, then the L2 flush."""
        for buffer, value in zip(self.buffers, fresh):
            if isinstance(buffer, torch.Tensor):
                buffer.copy_(value)
        self.conv.flush_l2()

    def host_trial(self, fresh: list, target: list, bound: int) -> tuple:
        """One trial on the host's clock: from the "trial" message until the judge's copy of the outputs
        in the reply is done, so two messages and the outputs' mapping sit in the window (CPU devices,
        and outputs that are not all tensors). Returns (window ms, ms until the reply, copies, reply)."""
        cuda = self.conv.device.type == "cuda"
        message, payload = {"op": Op.TRIAL}, b""
        if cuda:
            self.write_inputs(fresh)
            torch.cuda.synchronize(self.conv.device)
        else:
            message["inputs"], payload = export_values(fresh)
        started = time.perf_counter()
        self.talk.post(message, payload)
        reply = self.talk.expect(Event.TRIAL, bound, spin=cuda)
        replied_ms = (time.perf_counter() - started) * 1e3
        # Every call's outputs are copied alike, kept or not, so no call's window differs from another's.
        # The last call's mapping stays open until this one's is made: the sandbox's allocator hands
        # out the same memory again, and the judge's CUDA then reuses that mapping instead of opening
        # the handle anew (a costly driver call, and its cost would sit in the clock's window).
        self.host_mapped, previous = self.talk.receive_outputs(reply), self.host_mapped
        copies = _copy_into(target, self.host_mapped)
        if cuda:
            torch.cuda.synchronize(self.conv.device)
        window_ms = (time.perf_counter() - started) * 1e3
        del previous
        return window_ms, replied_ms, copies, reply


def _empty_like(values: list) -> list:
    return [torch.empty_like(v) if isinstance(v, torch.Tensor) else None for v in values]


def _copy_into(targets: list, values: list) -> list:
    """`values` copied, each tensor into its target of the same shape and dtype when there is one (no
    allocation), else cloned; anything else as it is."""
    copies = []
    for index, value in enumerate(values):
        target = targets[index] if index < len(targets) else None
        if not isinstance(value, torch.Tensor):
            copies.append(value)
        elif isinstance(target, torch.Tensor) and (target.shape, target.dtype) == (value.shape, value.dtype):
            copies.append(target.copy_(value))
        else:
            copies.append(value.clone())
    return copies


def _matches(value, spec: dict) -> bool:
    """Whether `value` is a tensor of the spec's shape and dtype (timeline.output_specs)."""
    return (isinstance(value, torch.Tensor) and list(value.shape) == spec["shape"]
            and str(value.dtype) == f"torch.{spec['dtype']}")


def _rounded(values: list) -> list:
    return [round(v, 3) for v in values]
