"""The judge: a trusted process bound to one device that evaluates kernels one at a time.

For each kernel it hands a jailed sandbox the checked source, then drives it through a fixed sequence
of requests and decides everything itself: it generates every input (from the run's secret salt), runs
the reference, compares each output, checks that the inputs came back untouched, times every trial
by its own clock beside the raw event times the sandbox reports, and picks the timed outputs it audits
only after the timed phase. A sample is correct only if the judge compared every case and every audit
it scheduled; any message out of place is a protocol violation. Nothing the kernel does in its own
process reaches the reference, the comparison or the record.
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import secrets
import signal
import statistics
import subprocess
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .build import outcome_marker
from .channel import Channel, ChannelClosed, ChannelTimeout, ProtocolViolation
from .launch import Sandbox, kill_group, processes_of_uid, start_sandbox
from .timeline import TimelineClock, output_specs
from .transport import export_values, import_values, payload_bound
from ..measure.correctness import ReferenceError, check_reference, compare_outputs
from ..measure.timing import l2_flusher, set_tf32_mode, summarize
from ..problems.inputs import (PRECISIONS, Case, build_model, call_seed, case_inputs, derived_seed,
                               init_arguments)
from ..problems.load import load_module
from ..results import read_json, write_json_atomic

# A sample counts as compiled once its file built and ModelNew can be constructed from it.
NOT_COMPILED = ("compile_error", "load_error")
# The failing statuses a sandbox may report about itself (it can only make itself fail); any other
# status in a message is a protocol violation. "correct" comes only from the judge's own comparisons.
REPORTABLE_FAILURES = ("compile_error", "load_error", "runtime_error", "cuda_error", "out_of_memory")
# Timed outputs kept for the audits chosen after the timed phase (at least MIN_KEPT, whatever their
# size), and how many of those are audited. A kernel that fakes the median time must fake more than half
# of its calls, and a faked call leaves stale outputs in the judge's copy (timeline.py): 8 audits find
# one of them but with probability 0.5 ** 8 = 0.4 %, 3 audits with 12.5 %.
AUDIT_BUDGET_BYTES, MIN_KEPT, NUM_AUDITS = 4 << 30, 3, 8
# Reference trials that calibrate the judge's clock (at least the fewest, at most the most, within a
# time budget): (warm-ups, fewest, most) by device. The CUDA check compares medians and means, so a
# short kernel's calibration takes as many calls as its timed phase; the CPU's coarse check needs only
# a rough overhead.
CALIBRATION_TRIALS, CALIBRATION_SECONDS = {"cuda": (3, 5, 100), "cpu": (1, 5, 20)}, 1.0


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
# sample with these alone is evaluated again (Judge._judged_again), and the first attempt's figures are
# kept in its record.
RETRIED_CLOCK_FLAGS = ("timing_below_judge_clock", "timing_mean_below_judge_clock", "timing_far_below_wall_clock")
RETRY_KEPT = ("judge_clock_gap_ms", "judge_clock_mean_gap_ms", "judge_trials_ms", "trial_phases_at")
# A median call reported under this share of the fastest call of no work (timed in the same process
# before the kernel loaded) is impossible: its time is withheld. Under 0.1 ms a call the clock's slack
# is larger than the call, and this floor is then what catches a timer patched to report almost nothing.
# On the H200 an empty call takes 0.017 ms at the median (0.011-0.053 over 319 processes), the honest
# call closest to it (a one-launch ReLU) 1.07 times the fastest, and empty calls ran 3 times slower in
# a state of the whole timed path that lasted seconds: a quarter leaves room for that. Each record keeps
# its empty calls (`metadata.judge_trials_ms.empty_calls`); the honest ones: validation summary, `references`.
EMPTY_CALL_FLOOR = 0.25


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


# The most of the GPU's memory a judge's reference cache may hold, whatever reference_cache_gb says. On an
# 80 GB H100 a 16 GiB cache of 8 GiB outputs, beside the timed phase's kept copies and the kernel's
# process, left L1/63 and L1/87 short of memory in their audits and L1/76 in its correctness cases
# (harness_error); the cache only saves recomputing references for a problem's next sample. With a
# tenth every reference is correct as its own candidate on an 80 GB H100 (validation summary, `references`).
REFERENCE_CACHE_SHARE = 0.1


def reference_cache_bytes(gb: float, gpu_bytes: int | None) -> int:
    """The reference cache's budget: `gb` GiB, at most REFERENCE_CACHE_SHARE of the GPU's memory."""
    budget = int(gb * (1 << 30))
    return budget if gpu_bytes is None else min(budget, int(REFERENCE_CACHE_SHARE * gpu_bytes))


class References:
    """Reference outputs of the current problem, computed in case order from one fresh model and
    kept (up to a byte budget) for the next sample of the same problem."""

    def __init__(self, budget_bytes: int):
        self.budget = budget_bytes
        self.key = None

    def reset(self, key, problem, hidden, job: dict, device: torch.device) -> None:
        if key == self.key:
            return
        self.key, self.problem, self.hidden, self.job, self.device = key, problem, hidden, job, device
        self.dtype = PRECISIONS[job["precision"]]
        self.model, self.stored, self.stored_bytes, self.outlines = None, {}, 0, {}

    def inputs(self, case: Case) -> list:
        return case_inputs(case, self.problem, self.hidden, self.device, self.dtype)

    def run(self, case: Case, inputs: list) -> list:
        """The reference's (checked) outputs on `inputs`, which are `case`'s, drawing `case`'s random numbers."""
        if self.model is None:
            self.model = build_model(self.problem.Model, self.problem, self.job["seed"], self.device, self.dtype)
        try:
            torch.manual_seed(call_seed(self.job["input_salt"], case.name))
            with torch.no_grad():
                output = self.model(*inputs)
        except Exception as exc:
            raise ReferenceError(f"reference raised {type(exc).__name__}: {exc}") from exc
        outputs = list(output) if isinstance(output, (tuple, list)) else [output]
        check_reference(outputs)
        return outputs

    def get(self, case: Case, inputs: list | None = None) -> list:
        """The reference's outputs for `case` (on `inputs`, which are that case's inputs), kept
        for the next sample of the problem while the budget allows."""
        if case.name in self.stored:
            return self.stored[case.name]
        outputs = self.run(case, inputs if inputs is not None else self.inputs(case))
        size = sum(o.nbytes for o in outputs if isinstance(o, torch.Tensor))
        if self.stored_bytes + size <= self.budget:
            self.stored[case.name] = outputs
            self.stored_bytes += size
        return outputs

    def outline(self, case: Case) -> list:
        """Stand-ins for `case`'s reference outputs (shape, dtype, device and size, no memory): what the
        timed phase needs of them. Holding the outputs there took a whole output's memory beside the
        kept copies; L1/38's 8 GiB one left no room on an 80 GB H100 for the kernel's process."""
        if case.name not in self.outlines:
            self.outlines[case.name] = [_outline(o) for o in self.get(case)]
        return self.outlines[case.name]


# Where a job's seconds go, for benchmarks.
class PhaseClock:
    """Adds the seconds since the previous lap to phases[name]."""

    def __init__(self, phases: dict):
        self.phases, self.last = phases, time.monotonic()

    def __call__(self, name: str) -> None:
        now = time.monotonic()
        self.phases[name] = round(self.phases.get(name, 0.0) + now - self.last, 4)
        self.last = now


class SampleFailed(Exception):
    """Ends a conversation with a status (from the judge's fixed set) and details for the record."""

    def __init__(self, status: str, **details):
        super().__init__(status)
        self.status, self.details = status, details


class Judge:
    def __init__(self, settings: dict, device: str, child_env: dict, spares: tuple[Sandbox, ...] = (),
                 timed_cpu: int | None = None):
        """`spares`: sandboxes the caller started ahead; the judge keeps that many started ahead of
        its jobs (settings' spare_sandboxes), or none. `timed_cpu`: the CPU a sandbox moves to for its
        job, calibration and timed calls included (launch.cpu_placement), or None."""
        self.settings = settings
        self.timed_cpu = timed_cpu
        self.device = torch.device(device)
        self.child_env = child_env
        set_tf32_mode(settings["tf32_mode"])
        total = torch.cuda.get_device_properties(self.device).total_memory if self.device.type == "cuda" else None
        self.references = References(reference_cache_bytes(settings["reference_cache_gb"], total))
        self._l2_flusher = None
        self.num_spares = len(spares)
        self._spare: deque[Sandbox] = deque(spares)
        self.calibration_drifts: deque[float] = deque(maxlen=FITTED_OVER)  # of the GPU clock (fitted_slack)

    def evaluate(self, job: dict) -> dict:
        """Evaluate one kernel; returns the per-sample record (see results.new_record)."""
        started = time.monotonic()
        warmed = self._warm_triton_cache(job) if job["mode"] == "eval" and job.get("warm_triton") else None
        record = self._in_sandbox(job)
        if clock_doubts(record):
            record = self._judged_again(job, record)
        if record["eval_status"] == "correct" and (job.get("perturb_parameters") or job.get("shape_variants")):
            from . import robustness  # D5 and the shape variants, in sandboxes of their own (it imports this module)

            record.update(robustness.evaluate(self, job))
        if warmed is not None:
            record["triton_cache"] = warmed
        record["eval_seconds"] = time.monotonic() - started
        record["hardware"] = hardware_name(self.device)
        if self.timed_cpu is not None:
            record["timed_cpu"] = self.timed_cpu
        if self.device.type == "cuda":  # which physical GPU judged it (CUDA_VISIBLE_DEVICES renumbers)
            record["gpu_pci_address"] = pci_address(self.device)
        return record

    def memory_held(self) -> tuple[int, int]:
        """(GPU bytes this judge's allocator holds, the GPU's total): what the judge knows of the GPU's
        memory without asking the kernel's process."""
        if self.device.type != "cuda":
            return 0, 1 << 62
        return torch.cuda.memory_reserved(self.device), torch.cuda.get_device_properties(self.device).total_memory

    def clock_slack(self, name: str) -> ClockSlack:
        """The slack of clock `name` on this machine: fitted to its calibrations where it can be."""
        return fitted_slack(SLACKS[name], self.calibration_drifts) if name in FITTED_CLOCKS else SLACKS[name]

    def _judged_again(self, job: dict, first: dict) -> dict:
        """A correct sample the clock doubted (clock_doubts), evaluated once more from the start in a fresh
        sandbox (its own calibration): the second record stands, and its time is withheld only if the
        clock doubts it too. On the H200 the timed path's overhead has risen 0.15 ms between an honest
        sample's calibration and its timed calls and stayed there for the next two samples, past any
        slack that still catches a 10 % fake at 2 ms. A kernel faking its time gains a second draw of
        the clock's noise, no more: what it fakes beyond the noise is caught twice."""
        record = self._in_sandbox(job)
        record["clock_retry"] = {"first_integrity": first.get("integrity", []),
                                 **{key: first[key] for key in RETRY_KEPT if key in first}}
        return record

    def _in_sandbox(self, job: dict, steps=None) -> dict:
        """One conversation in a fresh sandbox (a spare when one is alive), through Conversation.run
        unless other `steps` (a function of the conversation) are given; the sandbox is gone after."""
        sandbox = self._live_spare() or start_sandbox(self.child_env, self.settings.get("jail"))
        while len(self._spare) < self.num_spares:
            self._spare.append(start_sandbox(self.child_env, self.settings.get("jail")))
        record = {"eval_status": None, "cases": []}
        try:
            self._run_sandbox(job, sandbox, record, steps or Conversation.run)
        finally:
            sandbox.close()
            give_back_memory(self.device)
        return record

    def _warm_triton_cache(self, job: dict) -> dict:
        """Before a Triton kernel's first judged run: one call on the first case's inputs in a sandbox of
        its own, so Triton compiles into the kernel's build directory, which is then kept with the build
        (build_dir/triton). Every evaluation of this source (standard, hidden, re-runs) starts from that
        same cache, and none of them adds to it, so no run can leave a note for a later one. Triton
        compiles for the arguments and the device of a launch, so this needs the judge's GPU; it runs
        between two samples, never beside a timed one."""
        marker = outcome_marker(job, ".triton")
        if marker.is_file():
            return dict(read_json(marker, "Triton warm-up marker"), reused=True)
        started = time.monotonic()
        record = self._in_sandbox(dict(job, mode="warm"))
        outcome = {"warmed": record["eval_status"] == "warmed", "seconds": round(time.monotonic() - started, 3)}
        if not outcome["warmed"]:  # the judged run then compiles for itself, in its private copy
            outcome["error"] = f"{record['eval_status']}: {str(record.get('error'))[:300]}"
        write_json_atomic(marker, outcome)
        return outcome

    def flush_l2(self, wanted: bool) -> None:
        """Evict L2 from the judge's own process (the cache is shared by every context on the GPU), so
        the kernel's process cannot skip or shrink the flush."""
        if wanted and self.device.type == "cuda":
            if self._l2_flusher is None:
                self._l2_flusher = l2_flusher(self.device)
            self._l2_flusher()

    def close(self) -> None:
        while self._spare:
            self._spare.popleft().discard()

    def _live_spare(self) -> Sandbox | None:
        """The oldest spare still running: one that died waiting (killed for memory, say) must not
        make the next kernel look as if it crashed."""
        while self._spare:
            sandbox = self._spare.popleft()
            if sandbox.process.poll() is None:
                return sandbox
            sandbox.discard()
        return None

    def _run_sandbox(self, job: dict, sandbox: Sandbox, record: dict, steps) -> None:
        deadline = time.monotonic() + job["timeout"]
        conversation = Conversation(self, job, sandbox, deadline, record)
        try:
            steps(conversation)
        except SampleFailed as failed:
            record.update(eval_status=failed.status, **failed.details)
        except ChannelTimeout:
            record.update(eval_status="timeout", error=f"killed after the {job['timeout']} s timeout")
        except ProtocolViolation as exc:
            record.update(eval_status="protocol_violation", error=str(exc)[:2000])
        except torch.OutOfMemoryError as exc:  # the judge's own inputs or references: never the kernel's failure
            record.update(eval_status="harness_error", error="the judge's own copy of the inputs or references did "
                          f"not fit in GPU memory beside the kernel's process: {str(exc)[:1500]}",
                          judge_tensors=large_tensors(self.device))
        except (ChannelClosed, BrokenPipeError) as exc:
            code = _wait(sandbox.process, 5)
            try:  # a sandbox that reported its own failure and exited before the judge read it
                conversation.read_last_words()
                status, error = _describe_exit(code, str(exc))
                record.update(eval_status=status, error=error)
            except SampleFailed as failed:
                record.update(eval_status=failed.status, **failed.details)
        finally:
            if kill_group(sandbox.process):
                _remove_stale_locks(Path(job["build_dir"]))
            survivors = _survivors(sandbox)
            if survivors:
                record["jail_survivors"] = survivors
            if sandbox.cgroup is not None:
                record["host_memory_peak_bytes"] = sandbox.cgroup.peak_bytes()  # the OS's figure, not the kernel's
            exceeded = sandbox.limit_exceeded()
            if exceeded and record["eval_status"] not in ("correct",):
                record.update(eval_status="resource_limit", error=exceeded)
        if record["eval_status"] not in ("correct", "incorrect"):
            record["log_tail"] = _tail(sandbox.log_path)


class Conversation:
    """One sample: the judge's requests in its fixed order and what it makes of each reply."""

    def __init__(self, judge: Judge, job: dict, sandbox: Sandbox, deadline: float, record: dict):
        self.judge, self.job, self.sandbox, self.deadline, self.record = judge, job, sandbox, deadline, record
        self.channel: Channel = sandbox.channel
        self.device = judge.device
        self.lap = PhaseClock(record.setdefault("phase_seconds", {}))
        self.last_op = None  # the judge's last request: what a reported failure answers
        self.calibration = Trials()  # the reference's calibration trials (calibrate)
        self.empty_calls: list[float] = []  # calls of no work timed before the kernel loaded (calibrate)
        self.reference_peak: int | None = None  # GPU bytes the reference's calibration took in the sandbox

    # ------------------------------------------------------------ messages

    def expect(self, event: str, max_payload: int = 0, spin: bool = False) -> dict:
        """The next message, which must be `event`; a reported failure ends the sample."""
        message = self.channel.receive(self.deadline, max_payload, spin)
        got = message.get("event")
        if got == "error":
            self.fail_from(message)
        if got != event:
            raise ProtocolViolation(f"expected {event!r}, got {str(got)[:40]!r}")
        return message

    def read_last_words(self) -> None:
        """Read what a sandbox that has gone left in the pipe: an error message it sent is its status."""
        try:
            while self.channel.has_pending():
                message = self.channel.receive(time.monotonic() + 1, 1 << 20)
                if message.get("event") == "error":
                    self.fail_from(message)
        except (ChannelClosed, ChannelTimeout, ProtocolViolation, OSError):
            return

    def fail_from(self, message: dict) -> None:
        """End the sample on an error message, which may only name one of the failing statuses."""
        status = message.get("status")
        if status not in REPORTABLE_FAILURES:
            raise ProtocolViolation(f"an error message with status {str(status)[:40]!r}")
        details = {"error": str(message.get("message", ""))[:4000]}
        for key in ("phase", "compiler_output"):
            if key in message:
                details[key] = str(message[key])[:8000]
        compiled = self.record.get("compiled", False) and status not in NOT_COMPILED
        # The judge's own buffers (inputs, and the GPU clock's output slots), not a call of the kernel.
        if status == "out_of_memory" and self.last_op in ("alloc", "timing"):
            raise SampleFailed("harness_error", compiled=compiled, error="the harness's buffers for the inputs did "
                               f"not fit in GPU memory beside the kernel's process: {details['error'][:3000]}")
        if status == "out_of_memory" and (crowded := self.reference_crowded_out()):
            raise SampleFailed("harness_error", compiled=compiled, error=f"{crowded}: {details['error'][:3000]}")
        raise SampleFailed(status, compiled=compiled, **details)

    def reference_crowded_out(self) -> str | None:
        """Why a kernel that ran out of GPU memory is not to blame, or None: the reference itself, as its
        calibration in this sandbox measured it, would not have fit beside what the judge holds now. Only
        the judge's own figures count (the kernel's error text could say anything)."""
        if self.reference_peak is None:
            return None
        held, total = self.judge.memory_held()
        if held + self.reference_peak <= total:
            return None
        return (f"the reference needs {self.reference_peak / 2**30:.1f} GiB in its process and the judge holds "
                f"{held / 2**30:.1f} GiB, more than the GPU's {total / 2**30:.1f} GiB together")

    def post(self, message: dict, payload: bytes = b"") -> None:
        """Write to the sandbox, within the sample's deadline even if it stops reading."""
        self.last_op = message.get("op")
        self.channel.send(message, payload, deadline=self.deadline)

    def send(self, message: dict, values: list | None = None) -> None:
        if self.channel.has_pending():  # a failure the sandbox reported on its own (ModelNew missing, say)
            early = self.channel.receive(self.deadline, 0)
            if early.get("event") == "error":
                self.fail_from(early)
            raise ProtocolViolation(f"a message arrived before the judge's {message.get('op')!r} request")
        if values is None:
            self.post(message)
            return
        descs, payload = export_values(values)
        self.post(dict(message, inputs=descs), payload)

    # ------------------------------------------------------------ the sequence

    def run(self) -> None:
        job = self.job
        problem = load_module(job["problem_path"], "judge_problem")
        hidden = load_module(job["hidden_path"], "judge_hidden") if job.get("hidden_path") else None
        runs_model = job["mode"] in ("eval", "warm")
        init_descs, init_payload = export_values(init_arguments(problem, job["seed"], self.device))
        if init_payload and runs_model:
            raise SampleFailed("harness_error", error="get_init_inputs() returns CPU tensors, which cannot be sent")
        if init_payload:  # a build's construction probe goes without (sandbox.probe_builds)
            init_descs = None
        refs = self.judge.references
        if runs_model:
            refs.reset((job["problem_path"], job.get("hidden_path"), job["input_salt"]), problem, hidden, job,
                       self.device)
        cases = [Case(**c) for c in job["cases"]]
        self.post({"job": self.sandbox_job(init_descs)})
        if job["mode"] == "eval":
            self.calibrate(cases[0])
            give_back_memory(self.device)
        self.record["extension_builds"] = _builds(self.expect("compiled").get("builds"))
        self.record["compiled"] = True
        self.sandbox.harvest_build(Path(job["build_dir"]))
        self.lap("start_and_load")
        if job["mode"] == "compile":
            self.post({"op": "end"})
            return
        if job["mode"] == "warm":
            self.warm(cases[0])
            return
        # Every case is compared and recorded even after one fails, so the leaderboard can re-judge at
        # any tolerance; the first failing case is the one named.
        failed = [verdict for verdict in map(self.check_case, cases) if not verdict["passed"]]
        give_back_memory(self.device)
        self.record["all_cases_recorded"] = True  # the leaderboard may re-judge at another tolerance
        if failed:
            raise SampleFailed("incorrect", failed_case=failed[0].get("policy", failed[0]["case"]))
        self.measure_memory(cases[0])
        self.lap("correctness_and_memory")
        if job["measure_performance"]:
            self.time_trials(cases[0])
        self.post({"op": "end"})
        bye = self.expect("bye")
        self.record["precision_flags"] = _bounded_json(bye.get("precision_flags"))
        self.record["extension_builds"] = _builds(bye.get("builds"))
        failed = [name for name, _, built in self.record["extension_builds"] if not built]
        if failed:  # a guarded build that failed: the verdict and time are of the kernel's PyTorch path
            self.record["integrity"] = [*self.record.get("integrity", []),
                                        f"extension_build_failed: {', '.join(failed)[:200]}"]
        reports = bye.get("reports")
        self.record["sandbox_reports"] = [str(r)[:300] for r in reports][:20] if isinstance(reports, list) else []
        self.record["eval_status"] = "correct"
        self.lap("timed_checks")

    def sandbox_job(self, init_descs: list) -> dict:
        """What the sandbox is told: the checked source, the public reference (for the clock's
        calibration, before the kernel loads) and how to build the model; no hidden tests, no seeds
        of inputs."""
        job = self.job
        keys = ("kernel_source", "build_key", "device", "tf32_mode", "precision", "seed", "mode", "flush_l2")
        sent = dict({k: job[k] for k in keys}, init_args=init_descs, torch_pch=job.get("torch_pch") or {},
                    build_dir=self.sandbox.seed_build(Path(job["build_dir"])), timed_cpu=self.judge.timed_cpu)
        if job["mode"] in ("eval", "compile"):  # compile: the build's construction probe reads its shapes
            sent["reference_source"] = Path(job["problem_path"]).read_text()
        return sent

    def calibrate(self, like: Case) -> None:
        """Learn what the judge's clock adds to an event time for this problem (self.calibration's
        overhead: judge minus reported milliseconds) from the reference's own trials, run in the sandbox
        before the kernel is loaded, through the same requests, buffers and transport as the kernel's
        timed calls."""
        try:
            buffers, clock = self.start_timing(like)
            warmup, fewest, most = CALIBRATION_TRIALS["cuda" if self.device.type == "cuda" else "cpu"]
            trials = self.run_trials(buffers, clock, like, "calibration", warmup, most, set(),
                                     stop_after=(fewest, CALIBRATION_SECONDS))
        except SampleFailed as failed:  # no kernel code has run yet: the harness failed, not the kernel
            raise SampleFailed("harness_error", error=f"clock calibration on the reference: "
                                                      f"{failed.details.get('error', failed.status)}") from None
        self.post({"op": "load"})
        self.empty_calls = self.expect_empty_calls()
        self.record["reference_ms"] = statistics.median(trials.reported)  # the reference's own time here (refinement feedback)
        self.calibration, self.clock_name = trials, clock_name(clock)
        drift = calibration_drift(trials.overhead())
        if drift is not None and self.clock_name in FITTED_CLOCKS:
            self.judge.calibration_drifts.append(drift)

    def expect_empty_calls(self) -> list[float]:
        """The times of calls of no work the sandbox took after "load" and before it loads the kernel
        (sandbox.empty_call_times), so still its own: the floor under any honest call's time. The same
        message gives the GPU memory the reference's calibration took there (self.reference_peak)."""
        message = self.expect("empty_calls")
        times, peak = message.get("ms"), message.get("reference_peak_bytes")
        if (not isinstance(times, list) or not 0 < len(times) <= 100
                or not all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t < 1e4 for t in times)):
            raise SampleFailed("harness_error", error=f"empty calls timed as {str(times)[:80]!r}")
        if not isinstance(peak, int) or isinstance(peak, bool) or not 0 <= peak < 1 << 50:
            raise SampleFailed("harness_error", error=f"the reference's memory measured as {str(peak)[:40]!r}")
        self.reference_peak = self.record["reference_peak_bytes"] = peak
        return [float(t) for t in times]

    def request(self, op: str, values: list, **fields) -> list:
        """Send request `op` with `values` as its inputs; returns what the judge can read back of those
        inputs afterwards. On CUDA the sandbox first allocates buffers shaped like them, which the judge
        maps and fills (the judge never lends the kernel its own memory); on the CPU they travel as
        bytes after the message."""
        if self.device.type != "cuda":
            self.send(dict(fields, op=op), values)
            return values
        mapped = self.buffers_like(values)
        self.send(dict(fields, op=op, inputs="buffers"))
        return mapped

    def buffers_like(self, values: list) -> list:
        """Sandbox-owned CUDA buffers holding copies of `values` (non-tensors stay as they are)."""
        specs = [{"dtype": str(v.dtype).removeprefix("torch."), "shape": list(v.shape)} if isinstance(v, torch.Tensor)
                 else {"value": v} for v in values]
        self.send({"op": "alloc", "specs": specs})
        mapped = self.receive_outputs(self.expect("buffers"), "buffers")
        if len(mapped) != len(values):
            raise ProtocolViolation("buffers that do not match the inputs")
        for buffer, value in zip(mapped, values):
            if isinstance(value, torch.Tensor):
                if not isinstance(buffer, torch.Tensor) or buffer.shape != value.shape or buffer.dtype != value.dtype:
                    raise ProtocolViolation("a buffer of the wrong shape or dtype")
                buffer.copy_(value)
        torch.cuda.synchronize(self.device)
        return mapped

    def receive_outputs(self, message: dict, key: str = "outputs") -> list:
        try:
            return import_values(message.get(key), message.get("payload", b""))
        except (ValueError, RuntimeError, TypeError, KeyError) as exc:
            raise ProtocolViolation(f"unreadable tensors: {str(exc)[:300]}") from None

    def check_case(self, case: Case) -> dict:
        """Run one case; record and return the judge's verdict on it."""
        refs = self.judge.references
        give_back_memory(self.device)  # the last case's blocks, of another shape, would stay cached unused
        try:
            private = refs.inputs(case)
            expected = refs.get(case, private)
        except ReferenceError as exc:
            raise SampleFailed("harness_error", failed_case=case.name, error=str(exc)) from None
        shared = self.request("call", private, rng_seed=self.rng_seed(case))
        reply = self.expect("output", payload_bound(expected + private))
        outputs = self.receive_outputs(reply)
        verdict = compare_outputs(expected, outputs, self.judge.settings["atol"], self.judge.settings["rtol"])
        verdict = {"case": case.name, **verdict,
                   "output_shapes": [list(o.shape) for o in expected if isinstance(o, torch.Tensor)]}
        after = self.receive_outputs(reply, "inputs_after") if "inputs_after" in reply else shared
        if verdict["passed"] and not _same_values(private, after):
            verdict.update(passed=False, policy="input_mutated",
                           reason="the call changed its inputs (the reference leaves them untouched)")
        elif verdict["passed"] and (reply.get("aliases_input") is True or _aliases(outputs, shared)):
            verdict.update(passed=False, policy="output_aliases_input",
                           reason="an output shares memory with an input (the reference returns fresh storage)")
        self.record["cases"].append(verdict)
        del outputs, after, shared
        return verdict

    def warm(self, case: Case) -> None:
        """One call, unjudged (the Triton cache warm-up); then the sandbox's Triton cache is kept."""
        refs = self.judge.references
        private = refs.inputs(case)
        self.request("call", private, rng_seed=self.rng_seed(case))
        self.expect("output", payload_bound(refs.get(case, private) + private))
        self.post({"op": "end"})
        self.expect("bye")
        self.sandbox.harvest_triton_cache(Path(self.job["build_dir"]))
        self.record["eval_status"] = "warmed"

    def measure_memory(self, case: Case) -> None:
        self.request("memory", self.judge.references.inputs(case))
        reply = self.expect("memory")
        self.record["memory_stats"] = _bounded_json(reply.get("stats"))

    def rng_seed(self, case: Case) -> int:
        return call_seed(self.job["input_salt"], case.name)

    def timing_case(self, trial: int, phase: str = "timed") -> Case:
        """Inputs of timed call `trial`: fresh, from the salt, never seen in a correctness case, and
        scaled like the run's cases in turn from a secret start, so that any as many consecutive calls as
        there are scales cover them all (a kernel that is right only on the visible distribution fails
        the audit of the others; a random scale per call missed one in 0.3 % of 20-call phases)."""
        scales = sorted({c["scale"] for c in self.job["cases"] if c.get("hidden_index") is None})
        start = derived_seed(self.job["input_salt"], phase, "scales")
        return Case(f"{phase}_{trial}", derived_seed(self.job["input_salt"], phase, trial),
                    scales[(start + trial) % len(scales)])

    def time_trials(self, like: Case) -> None:
        """Warm-ups and timed calls; then the statistics, the clock's flags and the audits."""
        job, refs = self.job, self.judge.references
        buffers, clock = self.start_timing(like)
        if clock_name(clock) != self.clock_name:  # the same output specs went to both
            raise SampleFailed("harness_error", error="the timed calls and the calibration got different clocks")
        trials, warmup = job["num_perf_trials"], job["num_warmup"]
        keep = self.trials_to_keep(refs.outline(like), trials)
        timed = self.run_trials(buffers, clock, like, "timed", warmup, trials, keep)
        times, walls = timed.reported, timed.waited
        self.lap("timing")
        self.record["runtime_stats"] = dict(summarize(times), num_warmup=warmup, l2_flush=bool(job["flush_l2"]),
                                            device=str(self.device))
        if self.device.type == "cuda":
            self.record["runtime_stats"]["persisting_l2_resets"] = timed.l2_resets
        self.record["judge_wall_stats"] = summarize(walls)
        overhead = self.calibration.overhead()
        self.record["judge_clock_overhead_ms"] = summarize(overhead)
        # The judge's raw figures, to microseconds: anyone can re-run the clock's check on them (and tune
        # it on honest kernels) without trusting its summary. "replied": the host's milliseconds from the
        # "trial" message to the reply (on the host clock that splits its window: before, the call, the
        # messages and the sandbox's export; after, the judge's mapping and copy).
        self.record["judge_clock"] = self.clock_name
        self.record["judge_trials_ms"] = {"reported": _rounded(times), "waited": _rounded(walls),
                                          "replied": _rounded(timed.replied),
                                          "calibration_overhead": _rounded(overhead),
                                          "calibration_reported": _rounded(self.calibration.reported),
                                          "calibration_replied": _rounded(self.calibration.replied),
                                          "empty_calls": [round(t, 4) for t in self.empty_calls]}
        if overhead:
            median_gap, mean_gap = clock_gaps(times, walls, overhead)
            self.record.update(judge_clock_gap_ms=median_gap, judge_clock_mean_gap_ms=mean_gap)
        slack = self.judge.clock_slack(self.clock_name) if self.device.type == "cuda" else None
        if slack:
            self.record["judge_clock_catches_from"] = catches_from(slack, times)
            self.record["judge_clock_slack"] = slack.recorded(len(self.judge.calibration_drifts))
        self.record["integrity"] = timing_flags(self.record["runtime_stats"], times, walls, overhead, slack,
                                                self.empty_calls)
        self.audit(timed.kept)

    def start_timing(self, like: Case) -> tuple[list, TimelineClock | None]:
        """The "timing" request: the sandbox keeps buffers for the inputs the judge writes before each
        call and, on CUDA when every output is a tensor, output slots and two words for the judge's GPU
        clock (timeline.py), which it must hand back. Returns the judge's mappings and that clock (None:
        the host clock)."""
        refs = self.judge.references
        specs = output_specs(refs.outline(like)) if self.device.type == "cuda" else None
        buffers = self.request("timing", refs.inputs(like), **({"outputs": specs} if specs else {}))
        ready = self.expect("ready")
        if specs is None:
            return buffers, None
        slots, words = self.receive_outputs(ready, "slots"), self.receive_outputs(ready, "words")
        if len(slots) != len(specs) or not all(map(_matches, slots, specs)):
            raise ProtocolViolation("output slots unlike the reference's outputs")
        if len(words) != 1 or not _matches(words[0], {"shape": [2], "dtype": "int32"}):
            raise ProtocolViolation("the timing words are not two int32")
        return buffers, TimelineClock(self.device, slots, words[0])

    def run_trials(self, buffers: list, clock: TimelineClock | None, like: Case, phase: str, warmup: int,
                   trials: int, keep: set, stop_after: tuple[int, float] | None = None) -> Trials:
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
        refs = self.judge.references
        seen, started = Trials(), time.time()
        outline = refs.outline(like)
        # Each call's copy lands in memory allocated now, outside the clock: a kept copy allocated in
        # the window costs a cudaMalloc per call once the cache is used up (+0.2 ms per call for L2/74's
        # 32 MiB output, from its sixth timed call on), which the calibration, keeping nothing, never pays.
        slots = {index: _empty_like(outline) for index in keep}
        scratch = _empty_like(outline)
        self.host_mapped, bound = [], payload_bound(buffers) + payload_bound(outline)
        for mark, index in enumerate(range(-warmup, trials), start=1):
            case = self.timing_case(index, phase)
            fresh = refs.inputs(case)
            self.post({"op": "arm", "rng_seed": self.rng_seed(case)})
            l2_reset = self.expect("armed").get("l2_reset") is True
            target = slots.pop(index, scratch)
            if clock is not None:
                window_ms, replied_ms, copies, reply = self.timeline_trial(clock, buffers, fresh, target, mark)
            else:
                window_ms, replied_ms, copies, reply = self.host_trial(buffers, fresh, target, bound)
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
        del self.host_mapped  # before the next request, which lets the sandbox free that memory
        # When the phase ran (Unix seconds), to line its figures up with logs of the host taken beside the
        # run: the CPUs' clocks, the GPU's.
        self.record.setdefault("trial_phases_at", {})[phase] = [round(started, 3), round(time.time(), 3)]
        return seen

    def timeline_trial(self, clock: TimelineClock, buffers: list, fresh: list, target: list, mark: int) -> tuple:
        """One trial on the GPU's clock (timeline.py): (window ms, host ms until the reply, copies, reply)."""
        try:
            copies = clock.queue(mark, lambda: self.write_inputs(buffers, fresh),
                                 lambda outputs: _copy_into(target, outputs))
            started = time.perf_counter()
            self.post({"op": "trial", "mark": mark})
            # Waits asleep: this clock's window is on the GPU, so the judge's wake-up lies outside it,
            # while a judge spinning through every timed call keeps a core busy, at times one numbered
            # beside the timed CPU. On an H100, launch-bound level-3 calls timed with a CPU beside the timed
            # one busy ran a median 11 % slower than in a quieter run of the same problems, 5 % without.
            reply = self.expect("trial", 0)
            replied_ms = (time.perf_counter() - started) * 1e3
            return clock.window_ms(self.deadline), replied_ms, copies, reply
        except BaseException:
            clock.release()  # the judge's stream would wait for `done` for ever
            raise

    def write_inputs(self, buffers: list, fresh: list) -> None:
        """Queue a trial's fresh inputs into the sandbox's buffers, then the L2 flush."""
        for buffer, value in zip(buffers, fresh):
            if isinstance(buffer, torch.Tensor):
                buffer.copy_(value)
        self.judge.flush_l2(self.job["flush_l2"])

    def host_trial(self, buffers: list, fresh: list, target: list, bound: int) -> tuple:
        """One trial on the host's clock: from the "trial" message until the judge's copy of the outputs
        in the reply is done, so two messages and the outputs' mapping sit in the window (CPU devices,
        and outputs that are not all tensors). Returns (window ms, ms until the reply, copies, reply)."""
        cuda = self.device.type == "cuda"
        message, payload = {"op": "trial"}, b""
        if cuda:
            self.write_inputs(buffers, fresh)
            torch.cuda.synchronize(self.device)
        else:
            message["inputs"], payload = export_values(fresh)
        started = time.perf_counter()
        self.post(message, payload)
        reply = self.expect("trial", bound, spin=cuda)
        replied_ms = (time.perf_counter() - started) * 1e3
        # Every call's outputs are copied alike, kept or not, so no call's window differs from another's.
        # The last call's mapping stays open until this one's is made: the sandbox's allocator hands
        # out the same memory again, and the judge's CUDA then reuses that mapping instead of opening
        # the handle anew (a costly driver call, and its cost would sit in the clock's window).
        self.host_mapped, previous = self.receive_outputs(reply), self.host_mapped
        copies = _copy_into(target, self.host_mapped)
        if cuda:
            torch.cuda.synchronize(self.device)
        window_ms = (time.perf_counter() - started) * 1e3
        del previous
        return window_ms, replied_ms, copies, reply

    def trials_to_keep(self, expected: list, trials: int) -> set:
        """The timed calls whose outputs the judge copies, for audits chosen after the phase: all of
        them within AUDIT_BUDGET_BYTES, else a secret random subset (at least MIN_KEPT). The kernel
        cannot tell a kept call from another until after it has answered it."""
        size = max(1, sum(o.nbytes for o in expected if isinstance(o, torch.Tensor)))
        count = max(MIN_KEPT, min(trials, AUDIT_BUDGET_BYTES // size))
        return set(secrets.SystemRandom().sample(range(trials), min(trials, count)))

    def audit(self, kept: dict) -> None:
        """Compare timed outputs chosen now, after the timed phase, with the reference: one call of each
        input scale the timed calls used (so a shortcut right on one distribution only is caught), then
        random others up to NUM_AUDITS. Takes the copies out of `kept` as it goes."""
        rng = secrets.SystemRandom()
        by_scale: dict[float, list] = {}
        for trial in kept:
            by_scale.setdefault(self.timing_case(trial).scale, []).append(trial)
        chosen = {rng.choice(trials) for trials in by_scale.values()}
        rest = [t for t in kept if t not in chosen]
        chosen |= set(rng.sample(rest, max(0, min(len(rest), NUM_AUDITS - len(chosen)))))
        for trial in set(kept) - chosen:
            del kept[trial]
        for trial in sorted(chosen):
            self.audit_call(trial, kept.pop(trial))

    def audit_call(self, trial: int, copy: list) -> None:
        """One audit. Its reference outputs and the kernel's copy are gone before the next one runs: on an
        80 GB H100 the kept copies and the last audit's outputs, 7 GiB each for L1/34, left no room beside
        the sandbox for the next audit's."""
        refs, case = self.judge.references, self.timing_case(trial)
        try:
            expected = refs.run(case, refs.inputs(case))
        except ReferenceError as exc:
            raise SampleFailed("harness_error", failed_case=case.name, error=str(exc)) from None
        verdict = compare_outputs(expected, copy, self.judge.settings["atol"], self.judge.settings["rtol"])
        verdict.update(case=f"timed_call_{trial}", timed_trial=trial)
        self.record.setdefault("timed_checks", []).append(verdict)
        if not verdict["passed"]:
            raise SampleFailed("incorrect", failed_case=f"timed_call_{trial}")


def large_tensors(device: torch.device, min_bytes: int = 1 << 28) -> list[dict]:
    """The judge's live tensors on `device` of at least `min_bytes`, one entry per storage, largest
    first: what held its memory when it ran out (on an 80 GB H100 seven 7 GiB tensors for L1/34, of
    which the code accounts for six)."""
    def on_device(obj) -> bool:
        return (issubclass(type(obj), torch.Tensor) and obj.layout == torch.strided and obj.device.type == device.type
                and device.index in (None, obj.device.index))

    widest = {}  # storage address: (elements of its widest view, entry)
    for obj in gc.get_objects():
        if not on_device(obj) or (storage := obj.untyped_storage()).nbytes() < min_bytes:
            continue
        if obj.numel() > widest.get(storage.data_ptr(), (-1, None))[0]:  # a storage's widest view names it
            widest[storage.data_ptr()] = (obj.numel(), {"bytes": storage.nbytes(), "shape": list(obj.shape),
                                                        "dtype": str(obj.dtype).removeprefix("torch.")})
    return sorted((entry for _, entry in widest.values()), key=lambda t: -t["bytes"])[:40]


def give_back_memory(device: torch.device) -> None:
    """Return the judge's cached, unused GPU blocks to the driver: the kernel's process, a separate
    CUDA context, cannot use memory the judge's allocator keeps (a 16 GiB input problem needs it)."""
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _survivors(sandbox: Sandbox) -> list[int]:
    """Processes of the sandbox's uid or in its cgroup still alive after it was killed (the PID namespace should have
    ended them all); they are killed and named in the record, never left running."""
    if sandbox.uid is None:
        return []
    deadline = time.monotonic() + 2
    while (left := processes_of_uid(sandbox.uid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return sorted(set(left) | set(sandbox.leftover_processes()))


def _aliases(outputs: list, inputs: list) -> bool:
    """Whether an output's memory overlaps an input's, seen in the judge's own mappings (CUDA)."""
    spans = [(x.data_ptr(), x.data_ptr() + x.nbytes) for x in inputs
             if isinstance(x, torch.Tensor) and x.is_cuda and x.nbytes]
    for out in outputs:
        if isinstance(out, torch.Tensor) and out.is_cuda and out.nbytes:
            start, end = out.data_ptr(), out.data_ptr() + out.nbytes
            if any(start < e and s < end for s, e in spans):
                return True
    return False


def _outline(value):
    """A tensor's stand-in: one element seen in its shape (so its shape, dtype, device and nbytes are the
    tensor's); anything else as it is. torch.empty_like makes a contiguous tensor of it."""
    if not isinstance(value, torch.Tensor):
        return value
    return torch.empty((), dtype=value.dtype, device=value.device).expand(value.shape)


def _builds(reported) -> list:
    """The extension builds a sandbox says it ran, [name, seconds, succeeded], bounded: informational
    only (the kernel's own process reports them), to show builds that ran while a GPU waited."""
    if not isinstance(reported, list):
        return []
    return [[str(b[0])[:120], float(b[1]) if isinstance(b[1], (int, float)) else -1.0, b[2] is True]
            for b in reported[:20] if isinstance(b, list) and len(b) == 3]


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


def _same_values(before: list, after: list) -> bool:
    if len(before) != len(after):
        return False
    for a, b in zip(before, after):
        if isinstance(a, torch.Tensor):
            if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                return False
            if not torch.equal(a, b.to(a.device)):
                return False
    return True


def _bounded_json(value, limit: int = 4000):
    """A small JSON value from the sandbox, or None: the judge stores nothing large or odd."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value if len(text) <= limit else None


def _matches(value, spec: dict) -> bool:
    """Whether `value` is a tensor of the spec's shape and dtype (timeline.output_specs)."""
    return (isinstance(value, torch.Tensor) and list(value.shape) == spec["shape"]
            and str(value.dtype) == f"torch.{spec['dtype']}")


def clock_doubts(record: dict) -> bool:
    """A correct record whose time only the clock's RETRIED_CLOCK_FLAGS withheld, and nothing else."""
    flags = [str(f).split(":")[0] for f in record.get("integrity") or []]
    return record.get("eval_status") == "correct" and bool(flags) and set(flags) <= set(RETRIED_CLOCK_FLAGS)


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


def clock_name(clock: TimelineClock | None) -> str:
    """The SLACKS key of a trial clock: the GPU's, or the host's when there is none."""
    return "host" if clock is None else "gpu_timeline"


def _rounded(values: list) -> list:
    return [round(v, 3) for v in values]


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
        flags.append(f"timing_below_empty_call: the median call reported {statistics.median(times):.4f} ms, under "
                     f"{EMPTY_CALL_FLOOR:g} of the fastest call of no work ({min(empty_calls):.4f} ms)")
    resets = stats.get("persisting_l2_resets")
    if resets is not None and resets < stats["num_trials"]:
        flags.append(f"persisting_l2_not_reset: {resets} of {stats['num_trials']} trials")
    over = sum(1 for t, w in zip(times, walls) if t > w * 1.01 + 0.05)
    if over:
        flags.append(f"timing_exceeds_wall_clock: {over} of {len(times)} trials reported more than the judge waited")
    # A sum against sums, since on a busy host (builds beside the judge) the waits have long tails; less
    # the MEAN_GAP_LEFT_OUT share of the calls waited longest for, as the mean check: one stalled wake-up
    # in a short run (a CI host starting a Ray node beside it) is the host's doing, not the kernel's.
    kept = waited_least(times, walls)
    reported, waited = sum(t for _, t in kept) / 1e3, sum(w for w, _ in kept) / 1e3
    # What the event times rightly leave out (flushes, synchronisation, messages), as the reference's trials saw it.
    overhead = (statistics.fmean(clock_overhead) if clock_overhead else 2.0) * len(kept) / 1e3
    if waited > 2 * (reported + overhead) + 0.1:
        flags.append(f"timing_far_below_wall_clock: {reported:.3f} s reported, {waited:.3f} s waited")
    if slack and clock_overhead:
        median_gap, mean_gap = clock_gaps(times, walls, clock_overhead)
        allowed = slack.median[0] * statistics.median(times) + slack.median[1]
        if median_gap > allowed:
            flags.append(f"timing_below_judge_clock: the judge waited {median_gap:.4f} ms per call more than the "
                         f"reported time explains (allowed {allowed:.4f} ms)")
        allowed = slack.mean[0] * statistics.fmean(times) + slack.mean[1]
        if mean_gap > allowed:
            flags.append(f"timing_mean_below_judge_clock: the judge waited {mean_gap:.4f} ms more than the reported "
                         f"time explains, on average over the calls (allowed {allowed:.4f} ms)")
    return flags


def pci_address(device: torch.device) -> str:
    """domain:bus:device of a GPU, as nvidia-smi prints it (00000000:00:07.0 -> 0000:00:07)."""
    props = torch.cuda.get_device_properties(device)
    fields = [getattr(props, f"pci_{name}_id", None) for name in ("domain", "bus", "device")]
    if None in fields:
        return "?"
    domain, bus, slot = fields
    return f"{domain:04x}:{bus:02x}:{slot:02x}"


def hardware_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.machine()})"


def _wait(process: subprocess.Popen, seconds: float):
    try:
        return process.wait(seconds)
    except subprocess.TimeoutExpired:
        return None


def _remove_stale_locks(kernel_build_dir: Path) -> None:
    """A build killed mid-way leaves cpp_extension's lock file, which would block every later load
    of this kernel; only this kernel's own directory is touched."""
    for lock in kernel_build_dir.glob("*/lock"):
        # The kernel's process could plant a symbolic link here: touch only regular files in real folders.
        if not lock.parent.is_symlink() and lock.is_file() and not lock.is_symlink():
            lock.unlink(missing_ok=True)


def _describe_exit(code, detail: str) -> tuple[str, str]:
    """Status and message for a sandbox that stopped answering."""
    from .jail import JAIL_FAILED, LIMIT_SIGNALS

    if code == JAIL_FAILED:
        return "harness_error", "the jail could not be set up (its reason is in log_tail)"
    if code is None:
        return "crashed", f"the kernel's process stopped answering ({detail})"
    if code < 0:
        name = signal.Signals(-code).name
        if name in LIMIT_SIGNALS:
            return "resource_limit", f"{LIMIT_SIGNALS[name]}: the kernel's process was killed by {name}"
        return "crashed", f"the kernel's process was killed by signal {name}"
    return "crashed", f"the kernel's process exited with code {code} before finishing"


def _tail(path: Path, limit: int = 3000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - limit))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""


def run_judge(worker_id: int, settings: dict, device: str, child_env: dict, jobs, results, spares: tuple,
              timed_cpu: int | None = None) -> None:
    """The judge process's loop (entered from worker.judge_worker): take jobs until a None
    arrives; report ("fingerprint", ...), ("start", ...) and ("done", ...)."""
    judge = Judge(settings, device, child_env, spares, timed_cpu)
    from ..measure.environment import fingerprint_for  # the same fingerprint the baseline files carry

    try:
        results.put(("fingerprint", worker_id,
                     fingerprint_for(judge.device, settings["tf32_mode"], settings["precision"], settings)))
        while (job := jobs.get()) is not None:
            results.put(("start", worker_id, job["key"]))
            try:
                record = judge.evaluate(job)
            except Exception as exc:  # a judge bug must not lose the batch: record it as such
                record = {"eval_status": "harness_error", "error": f"{type(exc).__name__}: {exc}", "cases": []}
            results.put(("done", worker_id, job["key"], record))
    finally:  # also when the evaluator terminates this process: no spare sandbox outlives its judge
        judge.close()
