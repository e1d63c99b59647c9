"""The kernel's process: untrusted code runs here and nowhere else.

Started by the judge as `python -m kernelbench_verified.evaluate.sandbox READ_FD WRITE_FD`, before its job is
known, so that importing torch overlaps the previous kernel's evaluation; the job arrives as the first
message. It loads
the problem and the kernel file (compiling its extensions into the kernel's own build directory),
builds ModelNew, and for each correctness case produces the output and hands it to the judge, which
compares it with its own reference. Then it measures peak memory and time. It never decides a verdict.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
import traceback
from pathlib import Path

import torch

from . import integrity
from .build import trim_compiler_output
from .channel import Channel
from ..problems.inputs import PRECISIONS, Case, build_model, case_inputs
from ..problems.load import load_module
from ..measure.timing import peak_memory, precision_flags, set_tf32_mode, time_function
from .transport import export_tensor


class CompileFailure(Exception):
    pass


def _route_extension_builds(build_dir: Path, suffix: str) -> None:
    """Make every cpp_extension build of this kernel use its own directory and a unique name."""
    from torch.utils import cpp_extension

    def wrap(original):
        signature = inspect.signature(original)

        def routed(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            name = f"{bound.arguments['name']}_{suffix}"
            bound.arguments["name"] = name
            bound.arguments["build_directory"] = str(build_dir / name)
            (build_dir / name).mkdir(parents=True, exist_ok=True)
            try:
                return original(*bound.args, **bound.kwargs)
            except Exception as exc:
                raise CompileFailure(str(exc)) from exc

        return routed

    cpp_extension.load_inline = wrap(cpp_extension.load_inline)
    cpp_extension.load = wrap(cpp_extension.load)


def _status_for(exc: BaseException) -> str:
    if isinstance(exc, torch.OutOfMemoryError):
        return "out_of_memory"
    text = str(exc)
    if "CUDA error" in text or "cudaError" in text or "illegal memory access" in text:
        return "cuda_error"
    return "runtime_error"


def _error(channel: Channel, status: str, exc: BaseException, **extra) -> None:
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    channel.send({"event": "error", "status": status, "message": message[-4000:], **extra})


def _flatten(output) -> list:
    return list(output) if isinstance(output, (tuple, list)) else [output]


def _load_kernel(job: dict, channel: Channel):
    build_dir = Path(job["build_dir"])
    _route_extension_builds(build_dir, job["build_key"][:12])
    try:
        return load_module(job["kernel_path"], f"kernel_{job['build_key'][:12]}")
    except CompileFailure as exc:
        channel.send({"event": "error", "status": "compile_error",
                      "message": "extension build failed",
                      "compiler_output": trim_compiler_output(str(exc))})
    except BaseException as exc:  # a syntax error or any failure while importing the file
        _error(channel, "load_error", exc)
    return None


def run(job: dict, channel: Channel) -> None:
    set_tf32_mode(job["tf32_mode"])
    device = torch.device(job["device"])
    dtype = PRECISIONS[job["precision"]]
    problem = load_module(job["problem_path"], "problem_under_test")
    hidden = load_module(job["hidden_path"], "hidden_under_test") if job.get("hidden_path") else None
    started = time.monotonic()
    integrity.watch_thread_starts()
    watched = integrity.snapshot()
    kernel = _load_kernel(job, channel)
    if kernel is None:
        return
    channel.send({"event": "compiled", "load_seconds": time.monotonic() - started})
    flags: list[str] = []
    if job["mode"] == "compile":
        return
    model_cls = getattr(kernel, "ModelNew", None)
    if not isinstance(model_cls, type):
        channel.send({"event": "error", "status": "load_error",
                      "message": "the kernel file defines no ModelNew class"})
        return
    try:
        model = build_model(model_cls, problem, job["seed"], device, dtype)
    except BaseException as exc:
        _error(channel, _status_for(exc), exc, phase="init")
        return
    workdir = Path(job["workdir"])
    timing_inputs = None
    for raw_case in job["cases"]:
        case = Case(**raw_case)
        try:
            with torch.no_grad():
                inputs = case_inputs(case, problem, hidden, device, dtype)
                watch = integrity.CallWatch(inputs)
                outputs = _flatten(model(*inputs))
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                flags += watch.flags() + integrity.output_flags(outputs, inputs)
            descs = [export_tensor(o, workdir, f"{case.name}_{i}") if isinstance(o, torch.Tensor)
                     else {"value": o if isinstance(o, (int, float, bool)) else repr(o)}
                     for i, o in enumerate(outputs)]
        except BaseException as exc:
            _error(channel, _status_for(exc), exc, case=case.name)
            return
        channel.send({"event": "output", "case": case.name, "outputs": descs})
        reply = channel.receive()
        del outputs, descs
        if not reply.get("continue"):
            return
        timing_inputs = timing_inputs or (inputs if case.name == "trial_0" else None)
        del inputs
    threads_before_timing = len(integrity.STARTED_THREADS)
    run_benchmarks(job, channel, model, timing_inputs, problem, hidden, device, dtype)
    flags += integrity.threads_started_since(threads_before_timing)
    flags += [f"harness_patched: {name}" for name in integrity.replaced_since(watched)]
    channel.send({"event": "integrity", "flags": sorted(set(flags))})


def run_benchmarks(job, channel, model, inputs, problem, hidden, device, dtype) -> None:
    if inputs is None:
        inputs = case_inputs(Case(**job["cases"][0]), problem, hidden, device, dtype)
    try:
        with torch.no_grad():
            memory = peak_memory(lambda: model(*inputs), device)
            channel.send({"event": "memory", "stats": memory})
            if job["measure_performance"]:
                rotation = InputRotation(job, inputs, problem, hidden, device, dtype)
                stats = time_function(rotation.call(model), device, job["num_perf_trials"],
                                      job["num_warmup"], job["flush_l2"], rotation.before_trial)
                channel.send({"event": "timing", "stats": stats})
                rotation.report(channel, Path(job["workdir"]))
    except BaseException as exc:
        _error(channel, _status_for(exc), exc, phase="timing")


class InputRotation:
    """Timed calls read fixed input buffers whose contents rotate, outside the timed region, through
    the first correctness trials' inputs; the outputs of the calls the judge picked are kept and handed
    over afterwards, so an output cache keyed on input addresses (output replay) fails."""

    def __init__(self, job, inputs, problem, hidden, device, dtype):
        names = job["rotation_cases"]
        by_name = {c["name"]: Case(**c) for c in job["cases"]}
        # Regenerated from their seeds: the kernel may have changed the tensors it was given.
        self.sources = [case_inputs(by_name[n], problem, hidden, device, dtype) for n in names]
        self.names, self.buffers = names, inputs
        self.checked = {int(k): None for k in job["checked_trials"]}
        self.trial = -1

    def _freeze_checked(self) -> None:
        """Copy the last checked output before the buffers change (an output may alias an input)."""
        outputs = self.checked.get(self.trial)
        if outputs is not None:
            self.checked[self.trial] = [o.clone() if isinstance(o, torch.Tensor) else o for o in outputs]

    def before_trial(self, trial: int) -> None:
        self._freeze_checked()
        self.trial = trial
        for buffer, source in zip(self.buffers, self.sources[trial % len(self.sources)]):
            if isinstance(buffer, torch.Tensor):
                buffer.copy_(source)

    def call(self, model):
        def timed():
            output = model(*self.buffers)
            if self.trial in self.checked:
                self.checked[self.trial] = _flatten(output)
            return output

        return timed

    def report(self, channel: Channel, workdir: Path) -> None:
        self._freeze_checked()
        for trial, outputs in self.checked.items():
            if outputs is None:
                continue
            name = self.names[trial % len(self.names)]
            descs = [export_tensor(o, workdir, f"timed_{trial}_{i}") if isinstance(o, torch.Tensor)
                     else {"value": o if isinstance(o, (int, float, bool)) else repr(o)}
                     for i, o in enumerate(outputs)]
            channel.send({"event": "timed_output", "trial": trial, "case": name, "outputs": descs})
            if not channel.receive().get("continue"):
                return


def main() -> None:
    """Started ahead of time by the judge (torch already imported); waits for its one job."""
    channel = Channel(int(sys.argv[1]), int(sys.argv[2]))
    try:
        job = channel.receive()["job"]
        run(job, channel)
        channel.send({"event": "done", "precision_flags": precision_flags()})
    except BaseException as exc:  # anything unexpected is still reported, never a silent exit
        _error(channel, "runtime_error", exc, phase="harness")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: kernel-started threads must not keep the process alive


if __name__ == "__main__":
    main()
