"""The judge: a trusted process bound to one device that evaluates kernels one at a time.

For each kernel it starts a fresh sandbox process, computes the reference outputs itself (with a
fresh reference model run through the same cases in the same order), compares what the sandbox
hands over, enforces the timeout and classifies every way the sandbox can fail. Nothing the kernel
does in its own process can reach the reference, the comparison or the record.
"""

from __future__ import annotations

import os
import platform
import secrets
import signal
import subprocess
import time
from collections import deque
from pathlib import Path

import torch

from .channel import Channel, ChannelClosed, ChannelTimeout
from ..measure.correctness import ReferenceError, check_reference, compare_outputs
from ..problems.inputs import PRECISIONS, Case, build_model, case_inputs
from ..problems.load import load_module
from .launch import Sandbox, kill_group, start_sandbox
from ..measure.timing import set_tf32_mode
from .transport import import_tensor

# Input sets the timed calls rotate through (each costs one copy of the inputs in memory).
ROTATION_SETS = 2
# A sample counts as compiled once its file built and ModelNew can be constructed from it.
NOT_COMPILED = ("compile_error", "load_error")


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
        self.model, self.next_index, self.stored, self.stored_bytes = None, 0, {}, 0

    def get(self, index: int, case: Case) -> list:
        if index in self.stored:
            return self.stored[index]
        if self.model is None or index < self.next_index:
            self.model = build_model(self.problem.Model, self.problem, self.job["seed"], self.device, self.dtype)
            self.next_index = 0
        result = None
        cases = [Case(**c) for c in self.job["cases"]]
        while self.next_index <= index:
            result = self._compute(cases[self.next_index])
            self._keep(self.next_index, result)
            self.next_index += 1
        return result

    def _compute(self, case: Case) -> list:
        try:
            with torch.no_grad():
                inputs = case_inputs(case, self.problem, self.hidden, self.device, self.dtype)
                output = self.model(*inputs)
        except Exception as exc:
            raise ReferenceError(f"reference raised {type(exc).__name__}: {exc}") from exc
        outputs = list(output) if isinstance(output, (tuple, list)) else [output]
        check_reference(outputs)
        return outputs

    def _keep(self, index: int, outputs: list) -> None:
        size = sum(o.nbytes for o in outputs if isinstance(o, torch.Tensor))
        if self.stored_bytes + size <= self.budget:
            self.stored[index] = outputs
            self.stored_bytes += size


# Where a job's seconds go, for benchmarks: each phase ends when the sandbox reports the event.
PHASE_ENDED_BY = {"compiled": "start_and_load", "memory": "correctness_and_memory", "timing": "timing",
                  "done": "timed_checks"}


class PhaseClock:
    """Adds the seconds since the previous lap to phases[name]; an event that ends no phase is ignored."""

    def __init__(self, phases: dict):
        self.phases, self.last = phases, time.monotonic()

    def __call__(self, name: str | None) -> None:
        now = time.monotonic()
        if name:
            self.phases[name] = round(now - self.last, 4)
            self.last = now


class Judge:
    def __init__(self, settings: dict, device: str, child_env: dict, spares: tuple[Sandbox, ...] = ()):
        """`spares`: sandboxes the caller started ahead; the judge keeps that many started ahead of
        its jobs (see launch.SPARE_SANDBOXES), or none."""
        self.settings = settings
        self.device = torch.device(device)
        self.child_env = child_env
        set_tf32_mode(settings["tf32_mode"])
        self.references = References(int(settings["reference_cache_gb"] * (1 << 30)))
        self.num_spares = len(spares)
        self._spare: deque[Sandbox] = deque(spares)

    def evaluate(self, job: dict) -> dict:
        """Evaluate one kernel; returns the per-sample record (see results.new_record)."""
        started = time.monotonic()
        sandbox = self._live_spare() or start_sandbox(self.child_env)
        while len(self._spare) < self.num_spares:
            self._spare.append(start_sandbox(self.child_env))
        record = {"eval_status": None, "cases": []}
        try:
            self._run_sandbox(dict(job, workdir=str(sandbox.workdir)), sandbox, record)
        finally:
            sandbox.close()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
        record["eval_seconds"] = time.monotonic() - started
        record["hardware"] = hardware_name(self.device)
        if self.device.type == "cuda":  # which physical GPU judged it (CUDA_VISIBLE_DEVICES renumbers)
            record["gpu_pci_address"] = pci_address(self.device)
        return record

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

    def _run_sandbox(self, job: dict, sandbox: Sandbox, record: dict) -> None:
        process, channel = sandbox.process, sandbox.channel
        deadline = time.monotonic() + job["timeout"]
        try:
            channel.send({"job": dict(job, **_timed_checks(job))})
            self._converse(job, channel, deadline, record)
        except ChannelTimeout:
            record.update(eval_status="timeout", error=f"killed after the {job['timeout']} s timeout")
        except (ChannelClosed, BrokenPipeError) as exc:
            code = _wait(process, 5)
            record.update(eval_status="crashed", error=_describe_exit(code, str(exc)))
        finally:
            if kill_group(process):
                _remove_stale_locks(Path(job["build_dir"]))
        if record["eval_status"] not in (None, "correct", "incorrect"):
            record["log_tail"] = _tail(sandbox.workdir / "log.txt")

    def _converse(self, job: dict, channel: Channel, deadline: float, record: dict) -> None:
        problem = hidden = None
        if job["mode"] == "eval":
            problem = load_module(job["problem_path"], "judge_problem")
            hidden = load_module(job["hidden_path"], "judge_hidden") if job.get("hidden_path") else None
            self.references.reset((job["problem_path"], job.get("hidden_path")), problem, hidden, job, self.device)
        cases = [Case(**c) for c in job["cases"]]
        timing_started = time.monotonic()
        lap = PhaseClock(record.setdefault("phase_seconds", {}))
        while True:
            message = channel.receive(deadline)
            event = message.get("event")
            lap(PHASE_ENDED_BY.get(event))
            if event == "compiled":
                record["compiled"] = True
                record["load_seconds"] = message.get("load_seconds")
            elif event == "error":
                status = str(message.get("status", "runtime_error"))
                record.update(eval_status=status, error=str(message.get("message", ""))[:4000],
                              compiled=record.get("compiled", False) and status not in NOT_COMPILED)
                for key in ("case", "phase", "compiler_output"):
                    if key in message:
                        record[key] = str(message[key])[:8000]
                return
            elif event == "output":
                index = len(record["cases"])
                verdict = self._judge_case(index, cases, message, Path(job["workdir"]))
                record["cases"].append(verdict)
                channel.send({"continue": verdict["passed"]})
                if not verdict["passed"]:
                    record["eval_status"] = "harness_error" if verdict.get("harness_error") else "incorrect"
                    record["failed_case"] = verdict["case"]
                    return
            elif event == "memory":
                record["memory_stats"] = message.get("stats")
                timing_started = time.monotonic()
            elif event == "timing":
                record["runtime_stats"] = message.get("stats")
                record["timing_wall_seconds"] = time.monotonic() - timing_started
                record["integrity"] = timing_flags(record["runtime_stats"], record["timing_wall_seconds"])
            elif event == "timed_output":
                names = [c.name for c in cases]
                name = str(message.get("case"))
                verdict = (self._judge_case(names.index(name), cases, message, Path(job["workdir"]))
                           if name in names else {"case": name, "passed": False, "reason": "unknown case"})
                verdict["timed_trial"] = message.get("trial")
                record.setdefault("timed_checks", []).append(verdict)
                channel.send({"continue": verdict["passed"]})
                if not verdict["passed"]:
                    record.update(eval_status="incorrect", failed_case=f"timed_call_{message.get('trial')}")
                    return
            elif event == "integrity":
                reported = [str(f)[:300] for f in message.get("flags", [])][:20]
                record["integrity"] = record.get("integrity", []) + reported
            elif event == "done":
                record["precision_flags"] = message.get("precision_flags")
                if job["mode"] == "eval":
                    record["eval_status"] = "correct"
                return

    def _judge_case(self, index: int, cases: list, message: dict, workdir: Path) -> dict:
        if index >= len(cases) or message.get("case") != cases[index].name:
            return {"case": str(message.get("case")), "passed": False, "reason": "unexpected case order"}
        case = cases[index]
        try:
            refs = self.references.get(index, case)
        except ReferenceError as exc:
            return {"case": case.name, "passed": False, "harness_error": True, "reason": str(exc)}
        try:
            outs = [import_tensor(d, workdir) if "value" not in d else d["value"]
                    for d in message.get("outputs", [])]
        except (ValueError, RuntimeError, TypeError, KeyError) as exc:
            return {"case": case.name, "passed": False, "reason": f"unreadable output: {exc}"}
        verdict = compare_outputs(refs, outs, self.settings["atol"], self.settings["rtol"])
        del outs
        return {"case": case.name, "seed": case.seed, "scale": case.scale, **verdict}


def _timed_checks(job: dict) -> dict:
    """Which inputs the timed calls rotate through (the first correctness trials) and which timed
    calls are handed over for checking: one per input set, drawn here where the kernel has no say."""
    names = [c["name"] for c in job["cases"] if c["name"].startswith("trial_")][:ROTATION_SETS]
    trials = job["num_perf_trials"]
    checked = [j + len(names) * secrets.randbelow(max(1, (trials - j + len(names) - 1) // len(names)))
               for j in range(min(len(names), trials))]
    return {"rotation_cases": names, "checked_trials": checked}


def timing_flags(stats: dict, wall_seconds: float) -> list[str]:
    """Cross-check the sandbox's reported times against the judge's own clock around the timed phase
    (warm-ups and timed calls): more reported time than elapsed is impossible, far less is suspicious."""
    try:
        calls = stats["num_trials"] + stats.get("num_warmup", 0)
        reported = stats["mean"] * calls / 1e3
    except (KeyError, TypeError):
        return ["timing_unreadable: the timing message lacks mean/num_trials"]
    flags = []
    resets = stats.get("persisting_l2_resets")
    if resets is not None and resets < stats["num_trials"]:
        flags.append(f"persisting_l2_not_reset: {resets} of {stats['num_trials']} trials")
    if reported > wall_seconds * 1.05 + 0.01:
        return flags + [f"timing_exceeds_wall_clock: {reported:.3f} s reported in {wall_seconds:.3f} s"]
    # Allowance for what the timer rightly leaves out: L2 flushes, synchronisation, Python per call.
    if wall_seconds > 2 * reported + 0.1 + 0.002 * calls:
        return flags + [f"timing_far_below_wall_clock: {reported:.3f} s reported, {wall_seconds:.3f} s elapsed"]
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
        lock.unlink(missing_ok=True)


def _describe_exit(code, detail: str) -> str:
    if code is None:
        return f"the kernel's process stopped answering ({detail})"
    if code < 0:
        return f"the kernel's process was killed by signal {signal.Signals(-code).name}"
    return f"the kernel's process exited with code {code} before finishing"


def _tail(path: Path, limit: int = 3000) -> str:
    try:
        return path.read_bytes()[-limit:].decode(errors="replace")
    except OSError:
        return ""


def run_judge(worker_id: int, settings: dict, device: str, child_env: dict, jobs, results, spares: tuple) -> None:
    """The judge process's loop (entered from worker.judge_worker): take jobs until a None
    arrives; report ("fingerprint", ...), ("start", ...) and ("done", ...)."""
    judge = Judge(settings, device, child_env, spares)
    from ..measure.environment import fingerprint_for  # the same fingerprint the baseline files carry

    results.put(("fingerprint", worker_id,
                 fingerprint_for(judge.device, settings["tf32_mode"], settings["precision"], settings)))
    while True:
        job = jobs.get()
        if job is None:
            judge.close()
            return
        results.put(("start", worker_id, job["key"]))
        try:
            record = judge.evaluate(job)
        except Exception as exc:  # a judge bug must not lose the batch: record it as such
            record = {"eval_status": "harness_error", "error": f"{type(exc).__name__}: {exc}", "cases": []}
        results.put(("done", worker_id, job["key"], record))
