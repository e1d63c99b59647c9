"""The judge: a trusted process bound to one device that evaluates kernels one at a time.

For each kernel it hands a jailed sandbox the checked source, then drives it through a fixed sequence
of requests and decides everything itself. `Conversation.run` is that sequence, each step in a module
of its own:

1. job: the sandbox gets the checked source and how to build the model (`job.Job.for_sandbox`);
2. calibration: the reference's trials time the judge's clock in that sandbox (`timed.calibrate`);
3. load: the sandbox loads the kernel and says it compiled;
4. cases: every correctness case, generated from the run's secret salt and compared (`cases.check_cases`);
5. memory: one call with the GPU's memory measured;
6. timed calls: fresh inputs per call, timed by the judge's clock beside the times the sandbox reports,
   the clock's flags (`timed.time_trials`, `clock.timing_flags`);
7. audits: timed outputs chosen only after the timed phase, compared (`cases.audit`);
8. end: the sandbox's goodbye (`record.note_goodbye`), and the verdict.

A sample is correct only if the judge compared every case and every audit it scheduled; any message out
of place is a protocol violation (`exchange`). Nothing the kernel does in its own process reaches the
reference, the comparison or the record. A correct sample whose time only the clock doubted is judged
again from a fresh calibration (`clock.clock_doubts`).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import torch

from .build import outcome_marker
from .cases import References, check_cases, reference_cache_bytes
from .clock import RETRY_KEPT, ClockFit, clock_doubts
from .exchange import Exchange, SampleFailed, converse, give_back_memory
from .job import Job
from .launch import Sandbox
from .messages import Event, JobDone, JobStarted, JudgeFingerprint, Op, SandboxMode
from .spares import Spares
from .record import JudgedRecord, PhaseClock, bounded_json, note_goodbye, note_place, reported_builds
from .timed import calibrate, time_trials
from .transport import export_values, payload_bound
from ..measure.timing import l2_flusher, set_tf32_mode
from ..problems.inputs import Case, call_seed, init_arguments
from ..problems.load import load_module
from ..results import read_json, write_json_atomic
from ..verdicts import Status


def wants_robustness(job: Job) -> bool:
    """Whether a correct sample of this job goes on to D5 or the shape variants (robustness.py)."""
    return bool(job.perturb_parameters or job.shape_variants)


class Judge:
    """One device's judge: its sandboxes started ahead, its reference cache and its clock's fit."""

    # The last judged sandbox's build folder, copied for the sample's robustness sandbox (robustness.py)
    kept_build: Path | None = None

    def __init__(self, settings: dict, device: str, child_env: dict, spares: tuple[Sandbox, ...] = (),
                 timed_cpu: int | None = None):
        """`spares`: sandboxes the caller started ahead; the judge keeps that many started ahead of
        its jobs (settings' spare_sandboxes), or none. `timed_cpu`: the CPU a sandbox moves to for its
        job, calibration and timed calls included (placement.cpu_placement), or None."""
        self.settings = settings
        self.timed_cpu = timed_cpu
        self.device = torch.device(device)
        self.child_env = child_env
        set_tf32_mode(settings["tf32_mode"])
        total = torch.cuda.get_device_properties(self.device).total_memory if self.device.type == "cuda" else None
        self.references = References(reference_cache_bytes(settings["reference_cache_gb"], total))
        self.clock_fit = ClockFit()
        self._l2_flusher = None
        self.spares = Spares(spares, child_env, settings.get("jail"), self.device)
        if self.device.type == "cuda":  # this process's context, the measure of a spare's (spares.py)
            free, total = torch.cuda.mem_get_info(self.device)
            self.spares.context_bytes = max(0, total - free - torch.cuda.memory_reserved(self.device))

    def evaluate(self, job: Job) -> JudgedRecord:
        """Evaluate one kernel; returns its record (see record.FIELDS, results.new_record)."""
        started = time.monotonic()
        warmed = self._warm_triton_cache(job) if job.warm_triton else None
        try:
            record = self.in_sandbox(job, SandboxMode.EVAL)
            if clock_doubts(record):
                record = self.judged_again(job, record)
            if record["eval_status"] == Status.CORRECT and wants_robustness(job):
                from . import robustness  # D5 and the shape variants, in a sandbox of their own (it imports this module)

                record.update(robustness.evaluate(self, job))
        finally:
            self.drop_kept_build()
        if warmed is not None:
            record["triton_cache"] = warmed
        record["eval_seconds"] = time.monotonic() - started
        note_place(record, self.device, self.timed_cpu)
        return record

    def memory_held(self) -> tuple[int, int]:
        """(GPU bytes this judge's allocator and its spare sandboxes hold, the GPU's total): what the
        judge knows of the GPU's memory without asking the kernel's process."""
        if self.device.type != "cuda":
            return 0, 1 << 62
        held = torch.cuda.memory_reserved(self.device) + self.spares.held_bytes()
        return held, torch.cuda.get_device_properties(self.device).total_memory

    def judged_again(self, job: Job, first: dict) -> JudgedRecord:
        """A correct sample the clock doubted (clock_doubts), evaluated once more from the start in a fresh
        sandbox (its own calibration): the second record stands, and its time is withheld only if the
        clock doubts it too. On the H200 the timed path's overhead has risen 0.15 ms between an honest
        sample's calibration and its timed calls and stayed there for the next two samples, past any
        slack that still catches a 10 % fake at 2 ms. A kernel faking its time gains a second draw of
        the clock's noise, no more: what it fakes beyond the noise is caught twice."""
        record = self.in_sandbox(job, SandboxMode.EVAL)
        record["clock_retry"] = {"first_integrity": first.get("integrity", []),
                                 **{key: first[key] for key in RETRY_KEPT if key in first}}
        return record

    def in_sandbox(self, job: Job, mode: SandboxMode, steps=None) -> JudgedRecord:
        """One conversation in a fresh sandbox (a spare when one is alive), through Conversation.run
        unless other `steps` (a function of the conversation) are given; the sandbox is gone after."""
        sandbox = self.spares.take()
        record = JudgedRecord(eval_status=None, cases=[])
        try:
            converse(sandbox, job.timeout, Path(job.build_dir), record, self.device,
                     lambda talk: (steps or Conversation.run)(Conversation(self, job, sandbox, talk, mode)))
        finally:
            if mode == SandboxMode.EVAL and wants_robustness(job):
                self.drop_kept_build()
                if record.get("eval_status") == Status.CORRECT:  # only a correct sample meets D5 and the variants
                    self.kept_build = sandbox.keep_build()
            sandbox.close()
            give_back_memory(self.device)
        return record

    def drop_kept_build(self) -> None:
        """Remove the judged sandbox's build folder kept for the sample's robustness cases."""
        if self.kept_build is not None:
            shutil.rmtree(self.kept_build.parent, ignore_errors=True)
            self.kept_build = None

    def _warm_triton_cache(self, job: Job) -> dict:
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
        record = self.in_sandbox(job, SandboxMode.WARM)
        outcome = {"warmed": record["eval_status"] == Status.WARMED, "seconds": round(time.monotonic() - started, 3)}
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
        self.spares.close()


class Conversation:
    """One sample: the judge's requests in their fixed order (`run`), each step delegated."""

    def __init__(self, judge: Judge, job: Job, sandbox: Sandbox, talk: Exchange, mode: SandboxMode):
        self.judge, self.job, self.sandbox, self.talk, self.mode = judge, job, sandbox, talk, mode
        self.record, self.device = talk.record, judge.device
        self.references, self.clock_fit = judge.references, judge.clock_fit
        self.tolerance = {"atol": judge.settings["atol"], "rtol": judge.settings["rtol"]}
        self.lap = PhaseClock(self.record.setdefault("phase_seconds", {}))
        self.reference_peak: int | None = None  # GPU bytes the reference's calibration took in the sandbox
        talk.crowded_out = self.reference_crowded_out

    def run(self) -> None:
        job = self.job
        problem = load_module(job.problem_path, "judge_problem")
        hidden = load_module(job.hidden_path, "judge_hidden") if job.hidden_path else None
        init_descs, init_payload = export_values(init_arguments(problem, job.seed, self.device))
        if init_payload:
            raise SampleFailed(Status.HARNESS_ERROR,
                               error="get_init_inputs() returns CPU tensors, which cannot be sent")
        self.references.reset((job.problem_path, job.hidden_path, job.input_salt), problem, hidden, job, self.device)
        cases = [Case(**c) for c in job.cases]
        build_dir = self.sandbox.seed_build(Path(job.build_dir))
        self.talk.post({"job": job.for_sandbox(self.mode, build_dir, init_descs, self.judge.timed_cpu)})  # 1. job
        if self.mode == SandboxMode.WARM:
            self.load()
            return self.warm(cases[0])
        calibration = calibrate(self, cases[0])  # 2. calibration
        self.give_back_memory()
        self.load()  # 3. load
        self.lap("start_and_load")
        self.judge.spares.prepare()  # nothing is timed until the timed calls
        check_cases(self, cases)  # 4. cases
        self.measure_memory(cases[0])  # 5. memory
        self.lap("correctness_and_memory")
        if job.measure_performance:
            time_trials(self, cases[0], calibration)  # 6. timed calls and 7. audits
        self.talk.post({"op": Op.END})  # 8. end
        note_goodbye(self.record, self.talk.expect(Event.BYE))
        self.record["eval_status"] = Status.CORRECT
        self.lap("timed_checks")

    def load(self) -> None:
        """The sandbox loaded the kernel (its extensions built) and can construct ModelNew."""
        self.record["extension_builds"] = reported_builds(self.talk.expect(Event.COMPILED).get("builds"))
        self.record["compiled"] = True
        self.sandbox.harvest_build(Path(self.job.build_dir))

    def measure_memory(self, case: Case) -> None:
        self.talk.request(Op.MEMORY, self.references.inputs(case))
        reply = self.talk.expect(Event.MEMORY)
        self.record["memory_stats"] = bounded_json(reply.get("stats"))

    def warm(self, case: Case) -> None:
        """One call, unjudged (the Triton cache warm-up); then the sandbox's Triton cache is kept."""
        private = self.references.inputs(case)
        self.talk.request(Op.CALL, private, rng_seed=call_seed(self.job.input_salt, case.name))
        self.talk.expect(Event.OUTPUT, payload_bound(self.references.get(case, private) + private))
        self.talk.post({"op": Op.END})
        self.talk.expect(Event.BYE)
        self.sandbox.harvest_triton_cache(Path(self.job.build_dir))
        self.record["eval_status"] = Status.WARMED

    def give_back_memory(self) -> None:
        give_back_memory(self.device)

    def flush_l2(self) -> None:
        self.judge.flush_l2(self.job.flush_l2)

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


def run_judge(worker_id: int, settings: dict, device: str, child_env: dict, jobs, results, spares: tuple,
              timed_cpu: int | None = None) -> None:
    """The judge process's loop (entered from worker.judge_worker): take jobs until a None arrives;
    report a JudgeFingerprint, then a JobStarted and a JobDone per job (messages)."""
    judge = Judge(settings, device, child_env, spares, timed_cpu)
    from ..measure.environment import fingerprint_for  # the same fingerprint the baseline files carry

    try:
        results.put(JudgeFingerprint(worker_id, fingerprint_for(judge.device, settings["tf32_mode"],
                                                                settings["precision"], settings)))
        while (job := jobs.get()) is not None:
            results.put(JobStarted(worker_id, job.key))
            try:
                record = judge.evaluate(job)
            except Exception as exc:  # a judge bug must not lose the batch: record it as such
                record = JudgedRecord(eval_status=Status.HARNESS_ERROR, error=f"{type(exc).__name__}: {exc}", cases=[])
            results.put(JobDone(worker_id, job.key, record))
    finally:  # also when the evaluator terminates this process: no spare sandbox outlives its judge
        judge.close()
