"""The kernel's process: untrusted code runs here and nowhere else.

Started by the judge inside the jail (jail.py: its own namespaces, root, uid and limits) as `python -m
kernelbench_verified.evaluate.sandbox READ_FD WRITE_FD --jailed`, before its job is known, so that
importing torch overlaps the previous kernel's evaluation; the seccomp filter goes on before torch is
imported. The job arrives as the first message; the process writes the kernel's source, exactly the
bytes the evaluator checked, into its private /job and loads it (compiling its extensions into its own
build directory, /build) and builds ModelNew from the arguments the judge sends.

Before the kernel loads, the judge times the problem's public reference here (calibrate), so it knows
what its own clock adds to an event time, and this process times calls of no work (empty_call_times),
the floor under any honest call's time. From then on the process only answers the judge: "alloc"
(buffers the judge fills, on CUDA), "call" (run the model on these inputs, hand back the outputs),
"memory", "timing", then per timed call an "arm" (finish the last call's work, give back any persisting
L2) and a "trial" (run on inputs the judge wrote, and L2 it flushed, just before; raw event time back),
"end"; in a robustness sandbox (evaluate/robustness.py) "fresh" (a new model, from the judge's
arguments and construction seed) and "perturb" (D5's values set into it) before its "call". It never
sees a hidden test, a seed of inputs, a scale or the name of a case, and it decides
nothing: the judge compares, computes statistics and records.
Everything it says is checked by the judge, which treats this process as hostile.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

if __name__ == "__main__" and "--jailed" in sys.argv:
    from . import jail as _jail

    _jail.confine()  # the seccomp filter, before anything else is imported or any job arrives

import torch

from . import integrity
from .build import INDUCTOR_CACHE, TRITON_CACHE, trim_compiler_output
from .extension_builds import BUILDS, CompileFailure, flatten, probe_builds, probe_gpu_guarded_builds, \
    route_extension_builds
from .placement import confine_to
from .messages import Event, Op, SandboxMode
from .channel import Channel
from .timeline import TimelineSlots
from .transport import DTYPES, export_values, import_values, release_exports
from ..measure.timing import TrialTools, peak_memory, precision_flags, set_tf32_mode, timed_call
from ..problems import perturbation
from ..problems.inputs import PRECISIONS, construct_model
from ..problems.load import load_module
from ..verdicts import Status

# The largest CPU payload (inputs) the judge may send in one message.
MAX_INPUT_PAYLOAD = 1 << 36
# Calls of no work timed before the kernel loads (empty_call_times): the judge's floor for a call's time.
EMPTY_CALLS = 20


def _status_for(exc: BaseException) -> Status:
    if isinstance(exc, torch.OutOfMemoryError):
        return Status.OUT_OF_MEMORY
    text = str(exc)
    if "CUDA error" in text or "cudaError" in text or "illegal memory access" in text:
        return Status.CUDA_ERROR
    return Status.RUNTIME_ERROR


def _error(channel: Channel, status: str, exc: BaseException, **extra) -> None:
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    channel.send({"event": Event.ERROR, "status": status, "message": message[-4000:], **extra})


def _seed_rng(message: dict) -> None:
    """The judge's seed for this call (inputs.call_seed), which its reference drew from too."""
    seed = message.get("rng_seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        torch.manual_seed(seed)


def _load_kernel(job: dict, channel: Channel):
    """Import the kernel from the source the judge sent (never from its path in the run folder)."""
    build_dir = Path(job["build_dir"])
    route_extension_builds(build_dir, job["build_key"][:12], job.get("torch_pch") or {})
    path = Path(job["workdir"]) / f"kernel_{job['build_key'][:12]}.py"
    path.write_text(job["kernel_source"])
    try:
        return load_module(path, f"kernel_{job['build_key'][:12]}")
    except CompileFailure as exc:
        channel.send({"event": Event.ERROR, "status": Status.COMPILE_ERROR, "message": "extension build failed",
                      "compiler_output": trim_compiler_output(str(exc))})
    except BaseException as exc:  # a syntax error or any failure while importing the file
        _error(channel, "load_error", exc)
    return None


class Session:
    """The model and the judge's requests, one at a time."""

    def __init__(self, job: dict, channel: Channel, model):
        self.job, self.channel, self.model = job, channel, model
        self.device = torch.device(job["device"])
        self.buffers: list = []  # the timed phase's inputs
        self.buffers_given: list = []  # the last request's inputs
        self.flags: list[str] = []
        self.armed = False  # "armed" sent: the next request is a timed call's
        self.timeline: TimelineSlots | None = None  # the timed phase's slots when the judge's clock is the GPU's
        self.layouts: list | None = None  # meta tensors of the last call's outputs: the slots' layout

    def _inputs(self, message: dict) -> list:
        """The request's inputs: the buffers the judge filled (CUDA) or the bytes that came with it."""
        if message.get("inputs") == "buffers":
            return self.buffers_given
        return import_values(message.get("inputs"), message.get("payload", b""))

    def alloc(self, message: dict) -> None:
        """Buffers for the next request's inputs, which the judge maps and fills."""
        self.buffers_given = []
        release_exports(self.held())  # the previous request's buffers, which the judge no longer maps
        if self.device.type == "cuda":
            # Cases of other shapes leave freed blocks this allocator keeps; the judge, another process,
            # needs that memory for its own copy of the next inputs (a 16 GiB problem filled the H200).
            torch.cuda.empty_cache()
        self.buffers_given = [torch.empty(s["shape"], dtype=DTYPES[s["dtype"]], device=self.device)
                              if "shape" in s else s.get("value") for s in message["specs"]]
        self.channel.send({"event": Event.BUFFERS, "buffers": export_values(self.buffers_given)[0]})

    def held(self) -> list:
        """The buffers the judge still maps: the last ones it asked for and the timed phase's."""
        return self.buffers_given + self.buffers + (self.timeline.held() if self.timeline else [])

    def call(self, message: dict) -> None:
        inputs = self._inputs(message)
        _seed_rng(message)
        watch = integrity.CallWatch()
        with torch.no_grad():
            outputs = flatten(self.model(*inputs))
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        output_flags = integrity.output_flags(outputs, inputs)
        self.flags += watch.flags() + output_flags
        # The timed calls' slots take this layout (timeline.py), so copying a channels_last or transposed
        # output into them costs what the reference's contiguous copy cost in the calibration.
        self.layouts = [torch.empty_like(o, device="meta") if isinstance(o, torch.Tensor) else None for o in outputs]
        descs, payload = export_values(outputs)
        # Only a report against itself: on the CPU the judge cannot see this process's memory (on CUDA
        # it checks the addresses itself), and an honest kernel that aliases its input fails either way.
        reply = {"event": Event.OUTPUT, "outputs": descs,
                 "aliases_input": any(f.startswith("output_aliases_input") for f in output_flags)}
        if self.device.type != "cuda":  # the judge checks that the call left its inputs as they were
            reply["inputs_after"], input_bytes = export_values(inputs)
            for d in reply["inputs_after"]:
                if "offset" in d:
                    d["offset"] += len(payload)
            payload += input_bytes
        self.channel.send(reply, payload)

    def fresh(self, message: dict) -> None:
        """A new ModelNew, built from the judge's arguments under its seed, for a robustness case of its
        own (robustness.py); the previous model goes first. Answers with its floating-point tensors."""
        self.model = None
        init_args = import_values(message["init_args"])
        self.model = construct_model(self.model_cls, init_args, message["seed"], self.device,
                                     PRECISIONS[self.job["precision"]])
        self.channel.send({"event": Event.FRESH, "tensors": perturbation.describe(self.model)})

    def perturb(self, message: dict) -> None:
        """D5: the judge's values set into the fresh model's tensors of those names, before its first call."""
        perturbation.apply_values(self.model, dict(zip(message["names"], self._inputs(message))))
        self.channel.send({"event": Event.PERTURBED})

    def memory(self, message: dict) -> None:
        inputs = self._inputs(message)
        with torch.no_grad():
            stats = peak_memory(lambda: self.model(*inputs), self.device)
        self.channel.send({"event": Event.MEMORY, "stats": stats})

    def timing(self, message: dict) -> None:
        """Keep the judge's input buffers; each trial then reads what the judge wrote into them. Every
        thread of this process moves to the timed CPU first, as the calibration's did."""
        if self.job.get("timed_cpu") is not None:
            confine_to({self.job["timed_cpu"]})
        self.buffers = self._inputs(message)
        self.tools = TrialTools(self.device, flush_l2=False)  # the judge flushes L2, after writing the inputs
        self.threads_before = len(integrity.STARTED_THREADS)
        reply = {"event": Event.READY}
        if self.device.type == "cuda" and message.get("outputs") is not None:  # the judge times on the GPU (timeline.py)
            self.timeline = TimelineSlots(self.device, message["outputs"], DTYPES, self.layouts)
            reply["slots"], reply["words"] = export_values(self.timeline.slots)[0], export_values([self.timeline.words])[0]
        self.channel.send(reply)

    def arm(self, message: dict) -> None:
        """Before the judge writes a trial's inputs and starts its clock: whatever could sit in the
        clock's window but is not the call (the previous outputs' exports went in serve)."""
        _seed_rng(message)
        self.tools.prepare()
        self.channel.send({"event": Event.ARMED, "l2_reset": self.tools.last_reset})
        self.armed = self.device.type == "cuda"

    def trial(self, message: dict) -> None:
        if self.device.type != "cuda" and message.get("inputs") is not None:
            for buffer, value in zip(self.buffers, self._inputs(message)):
                if isinstance(buffer, torch.Tensor):
                    buffer.copy_(value)
        if self.timeline is not None:
            with torch.no_grad():
                ms = self.timeline.call(lambda: self.model(*self.buffers), message.get("mark"), self.tools)
            self.channel.send({"event": Event.TRIAL, "ms": ms})
            return
        with torch.no_grad():
            output, ms = timed_call(lambda: self.model(*self.buffers), self.device, self.tools)
        send_reply(self.channel, {"event": Event.TRIAL, "ms": ms}, flatten(output))

    def end(self) -> None:
        self.flags += integrity.threads_started_since(getattr(self, "threads_before", len(integrity.STARTED_THREADS)))
        self.flags += [f"harness_patched: {name}" for name in integrity.replaced_since(self.job["watched"])]
        self.channel.send({"event": Event.BYE, "precision_flags": precision_flags(), "reports": sorted(set(self.flags)),
                           "builds": BUILDS})


def calibrate(job: dict, channel: Channel, device: torch.device) -> None:
    """Reference trials before any kernel code is loaded: the judge times the problem's public
    reference here, through the very requests and transport the kernel's trials will take, and so
    learns what its clock adds to an event time for this problem while this process is still its own."""
    path = Path(job["workdir"]) / "reference.py"
    path.write_text(job["reference_source"])
    reference = load_module(path, "calibration_reference")
    model = construct_model(reference.Model, import_values(job["init_args"]), job["seed"], device,
                            PRECISIONS[job["precision"]])
    session = Session(job, channel, model)
    if serve(session, (Op.ALLOC, Op.TIMING, Op.ARM, Op.TRIAL), until=Op.LOAD) != Op.LOAD:
        raise RuntimeError("the judge's calibration did not end with load")
    # The most GPU memory the reference's calibration took in this process, still the harness's own: the
    # judge's measure of what the problem needs, when a kernel later runs out of memory beside it.
    peak = torch.cuda.max_memory_reserved(device) if device.type == "cuda" else 0
    session.buffers = session.buffers_given = []
    session.timeline = None
    if device.type == "cuda":
        release_exports([])
        torch.cuda.empty_cache()
    channel.send({"event": Event.EMPTY_CALLS, "ms": empty_call_times(device), "reference_peak_bytes": peak})


def empty_call_times(device: torch.device) -> list[float]:
    """EMPTY_CALLS timed calls of no work, through the kernel's own timed_call, after as many discarded:
    the least any honest call can report in this process (on CUDA, the synchronisation between the two
    events). Measured before the kernel loads, so the judge can believe them."""
    tools = TrialTools(device, flush_l2=False)
    times = [timed_call(lambda: None, device, tools)[1] for _ in range(2 * EMPTY_CALLS)]
    return times[EMPTY_CALLS:]


def serve(session: "Session", ops: tuple, until: Op) -> str | None:
    """Answer the judge's requests in `ops` until `until` arrives (returned) or another one does
    (None); a request that raises sends its error and returns "error"."""
    while True:
        # After "armed" the judge's clock starts with its next request: wake up for it without delay.
        message = session.channel.receive(max_payload=MAX_INPUT_PAYLOAD, spin=session.armed)
        session.armed = False
        op = message.get("op")
        # A new request: the judge has dropped the previous outputs' mappings. Not on "trial", which
        # follows "arm" (where they went) inside the judge's clock.
        if session.device.type == "cuda" and op != Op.TRIAL:
            release_exports(session.held())
        if op == until:
            return op
        if op not in ops:
            return None
        try:
            getattr(session, op)(message)
        except BaseException as exc:
            _error(session.channel, _status_for(exc), exc, phase=op)
            return "error"


def send_reply(channel: Channel, reply: dict, outputs: list) -> None:
    """Send `reply` with `outputs` (on CUDA, memory the judge maps until its next request)."""
    descs, payload = export_values(outputs)
    channel.send(dict(reply, outputs=descs), payload)


def run(job: dict, channel: Channel) -> None:
    # Triton compiles into the kernel's own build directory (warmed once, before any judged run); it
    # reads this when the kernel first imports it.
    os.environ["TRITON_CACHE_DIR"] = str(Path(job["build_dir"]) / TRITON_CACHE)
    # Inductor's caches too (not the sandbox's private /tmp), so the sample's robustness sandbox,
    # which starts from this folder (robustness.py), finds the graphs torch.compile made here.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(Path(job["build_dir"]) / INDUCTOR_CACHE)
    spread = os.sched_getaffinity(0)  # the judge's CPUs: loading (a build the probe missed) and the cases
    if job.get("timed_cpu") is not None:  # the calibration's calls on the CPU the kernel's are timed on
        confine_to({job["timed_cpu"]})
    set_tf32_mode(job["tf32_mode"])
    device = torch.device(job["device"])
    if device.type == "cpu":
        # One intra-op thread. With a second one, on a machine of few cores, each call waited a
        # scheduler slice (about 6 ms) whenever the judge or a starting spare sandbox held the other
        # core, so the same call took 0.03 ms or 6 ms. Baselines are timed here too: both sides alike.
        torch.set_num_threads(1)
    dtype = PRECISIONS[job["precision"]]
    if job["mode"] == SandboxMode.EVAL:
        calibrate(job, channel, device)
    if job.get("timed_cpu") is not None:
        confine_to(spread)  # until "timing" moves every thread back to the timed CPU
    started = time.monotonic()
    integrity.watch_thread_starts()
    job["watched"] = integrity.snapshot()
    kernel = _load_kernel(job, channel)
    if kernel is None:
        return
    if job["mode"] == SandboxMode.COMPILE:
        probe_builds(kernel, job)
        probe_gpu_guarded_builds(job)
    channel.send({"event": Event.COMPILED, "load_seconds": time.monotonic() - started, "builds": BUILDS})
    if job["mode"] == SandboxMode.COMPILE:
        return
    model_cls = getattr(kernel, "ModelNew", None)
    if not isinstance(model_cls, type):
        channel.send({"event": Event.ERROR, "status": Status.LOAD_ERROR,
                      "message": "the kernel file defines no ModelNew class"})
        return
    try:
        init_args = import_values(job["init_args"])
        model = construct_model(model_cls, init_args, job["seed"], device, dtype)
    except BaseException as exc:
        _error(channel, _status_for(exc), exc, phase="init")
        return
    session = Session(job, channel, model)
    session.model_cls = model_cls
    ops = (Op.ALLOC, Op.CALL, Op.FRESH, Op.PERTURB) if job["mode"] == SandboxMode.ROBUSTNESS else \
        (Op.ALLOC, Op.CALL, Op.MEMORY, Op.TIMING, Op.ARM, Op.TRIAL)
    if serve(session, ops, until=Op.END) != "error":
        session.end()  # after "end" or any request out of place, which the judge then sees as one


def prepare_device(name: str) -> dict:
    """A spare's CUDA set up before it has a job, at the judge's request (spares.Spares.prepare): its
    context and the cuBLAS and cuDNN handles a reference's first calls would otherwise create during the
    calibration. What they allocated goes back, so the calibration's peak memory is the reference's."""
    started = time.monotonic()
    try:
        device = torch.device(name)
        x = torch.ones(8, 8, device=device)
        torch.mm(x, x)
        if torch.backends.cudnn.is_available():
            torch.nn.functional.conv2d(x.view(1, 1, 8, 8), x[:3, :3].reshape(1, 1, 3, 3))
        torch.cuda.synchronize(device)
        del x
        torch._C._cuda_clearCublasWorkspaces()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    except Exception as exc:  # the job's calibration sets CUDA up again and reports what fails there
        return {"ok": False, "error": str(exc)[:300], "seconds": time.monotonic() - started}
    return {"ok": True, "seconds": time.monotonic() - started}


def main() -> None:
    """Started ahead of time by the judge (torch already imported); says so ("idle"), may set up CUDA
    when asked ("prepare"), and waits for its one job."""
    channel = Channel(int(sys.argv[1]), int(sys.argv[2]))
    try:
        channel.send({"event": Event.IDLE})
        message = channel.receive(max_payload=0)
        if message.get("op") == Op.PREPARE:
            channel.send({"event": Event.PREPARED, **prepare_device(message["device"])})
            message = channel.receive(max_payload=0)
        job = message["job"]
        job["workdir"] = os.getcwd()
        run(job, channel)
    except BaseException as exc:  # anything unexpected is still reported, never a silent exit
        _error(channel, Status.RUNTIME_ERROR, exc, phase="harness")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: kernel-started threads must not keep the process alive


if __name__ == "__main__":
    main()
