"""Runtime integrity checks made inside the sandbox and reported as flags (issue: reward hacks).

They are best-effort: the kernel shares the sandbox process and could defeat them. The guarantees that
do not depend on the kernel's cooperation live in the judge (its own reference and comparison, and its
own wall clock around the timed phase, see clock.timing_flags). A flag never changes the verdict by
itself; it is stored in the result for review.
"""

from __future__ import annotations

import importlib
import sys
import threading

import torch

# Callables the harness relies on while the kernel's code is loaded; replacing any of them is a flag.
WATCHED = (
    "time.perf_counter", "time.monotonic", "os.write", "json.dumps",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.record", "torch.cuda.Event.elapsed_time",
    "torch.cuda.Event.synchronize", "torch.cuda.max_memory_allocated", "torch.cuda.reset_peak_memory_stats",
    "torch.cuda.memory_allocated",
    "torch.manual_seed", "torch.rand", "torch.randn", "torch.randint", "torch.Tensor.contiguous",
    "torch.Tensor.untyped_storage", "torch.UntypedStorage._share_cuda_",
    "kernelbench_verified.measure.timing.time_function", "kernelbench_verified.measure.timing.peak_memory",
    "kernelbench_verified.measure.timing.storage_bytes", "kernelbench_verified.measure.timing.call_peak",
    "kernelbench_verified.measure.timing.reset_persisting_l2",
    "kernelbench_verified.evaluate.transport.export_tensor", "kernelbench_verified.evaluate.channel.Channel.send",
    "kernelbench_verified.problems.inputs.case_inputs",
)


def _resolve(dotted: str):
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def snapshot() -> dict[str, int]:
    """Identity of every watched callable."""
    return {name: id(_resolve(name)) for name in WATCHED}


def replaced_since(before: dict[str, int]) -> list[str]:
    now = snapshot()
    return [name for name, ident in before.items() if now.get(name) != ident]


def output_flags(outputs: list, inputs: list) -> list[str]:
    """An output that is not a plain tensor, or that shares storage with an input."""
    flags = []
    input_storages = {x.untyped_storage().data_ptr() for x in inputs
                      if isinstance(x, torch.Tensor) and x.numel() > 0}
    for i, out in enumerate(outputs):
        if isinstance(out, torch.Tensor) and type(out) is not torch.Tensor:
            flags.append(f"output_subclass: output {i} is a {type(out).__name__}")
        if isinstance(out, torch.Tensor) and out.numel() > 0 and out.untyped_storage().data_ptr() in input_storages:
            flags.append(f"output_aliases_input: output {i} shares storage with an input")
    return flags


# Names of the Python threads that began running since watch_thread_starts(), in order.
STARTED_THREADS: list[str] = []


def _note_thread_start(frame, event, arg) -> None:
    STARTED_THREADS.append(threading.current_thread().name)
    sys.setprofile(None)  # one event per thread is enough; the thread then runs unprofiled


def watch_thread_starts() -> None:
    """Record every thread started through `threading` from now on, even one that ends before anyone
    looks: a kernel that hands its launch to a short-lived thread escapes the timer without outliving
    the call. (Threads started natively or through _thread are left to the static checker.)"""
    threading.setprofile(_note_thread_start)


def threads_started_since(count: int) -> list[str]:
    """Flags for threads started after STARTED_THREADS had `count` entries. The sandbox asks about the
    timed calls only: a one-off thread at a kernel's first call (a lazy initialisation) happened
    earlier, in the correctness cases, and does not touch the timing."""
    names = STARTED_THREADS[count:]
    return [f"thread_started_in_call: {', '.join(sorted(set(names)))[:200]}"] if names else []


class CallWatch:
    """Around one forward call: threads that outlive it. (Whether the call changed its inputs the judge
    checks itself, on its own copy; a float64 sum here took twice a 16 GiB input's memory, L1/45.)"""

    def __init__(self):
        self.threads = set(threading.enumerate())

    def flags(self) -> list[str]:
        flags = []
        alive = [t.name for t in threading.enumerate() if t not in self.threads and t.is_alive()]
        if alive:
            flags.append(f"thread_outlived_call: {', '.join(sorted(alive))[:200]}")
        return flags
