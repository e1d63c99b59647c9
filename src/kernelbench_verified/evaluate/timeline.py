"""The judge's clock on the GPU's own timeline (CUDA, outputs that are all tensors): both sides.

The host clock (a timed call from the judge's "trial" message to its copy of the outputs) holds two
messages, two wake-ups and a mapping of the outputs, and their drift between the calibration and the
timed calls spread 35-58 us per sample on the H200. Here the window is two events of the judge's own
stream, and the judge queues its whole part before it tells the kernel's process to go:

    judge:  sleep(LEAD_US) | write inputs | flush L2 | T0 | go = n | wait until done >= n | T1 | copy outputs
    kernel: its stream waits go >= n, its host spins until then | timed_call | copy outputs into the slots | done = n

`go` and `done` are two int32 words of the kernel process's memory, and the slots are output buffers it
allocated at "timing", all mapped by the judge (CUDA IPC in the direction every other buffer takes). The
judge's stream waits on `done` (cuStreamWaitValue32), so T1 passes as soon as the kernel writes it,
with no message and no host of either side in between. The kernel's host launches only once the GPU has
reached `go`, and timed_call's device-wide synchronisation is unchanged, so a call's time keeps its
meaning (launch time and side streams count). The window holds, beyond the call, the kernel's host
noticing `go` and its copy into the slots, queued before the host waits for the call's end event;
the reference's calibration trials measure the same way. The
judge's own memory traffic (input writes, flush, its copy of the outputs) lies outside it: with it
inside, its drift between calibration and timed calls spread the honest gap 35 us sd over levels 1-4
on the H200, against 6-7 us for a small matmul.

Everything the kernel's process controls here only moves T1: a `done` written early ends the window
before the outputs are in the slots, so the judge copies stale outputs, which fail the audits; one
never written leaves the judge's stream waiting, which the judge ends itself (release) and records as a
protocol violation.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

from .channel import ProtocolViolation
from ..measure.timing import sleep_cycles_per_us, stream_wait_value, stream_write_value, timed_call

# How long the GPU sleeps before T0 while the judge queues its part and the kernel's process wakes up
# for "trial": at 150 us the drift was 11.6 us sd (the kernel sometimes woke after `go`), at 400 us 6.7.
LEAD_US = 400
# After the kernel's reply, how long `done` may take to arrive (its output copy may still be queued).
DONE_GRACE_SECONDS = 10.0
# What release writes into `done`: at least any trial's number under the wait's wrapping comparison.
RELEASED = 0x7FFFFFFF


def output_specs(values: list) -> list | None:
    """dtype and shape of each expected output, or None when one is not a CUDA tensor (host clock)."""
    if not values or not all(isinstance(v, torch.Tensor) and v.is_cuda for v in values):
        return None
    return [{"dtype": str(v.dtype).removeprefix("torch."), "shape": list(v.shape)} for v in values]


class TimelineClock:
    """The judge's side: its mappings of the kernel's slots and words, and one trial's window."""

    def __init__(self, device: torch.device, slots: list, words: torch.Tensor):
        self.device, self.slots = device, slots
        self.go, self.done = words[0:1], words[1:2]
        self.lead_cycles = int(LEAD_US * sleep_cycles_per_us(device.index or 0))
        self.start, self.stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        self.copied = torch.cuda.Event()
        self.release_stream = torch.cuda.Stream(device)

    def queue(self, mark: int, write_inputs: Callable[[], None], copy_outputs: Callable[[list], list]) -> list:
        """Queue the judge's part of trial `mark` (see the module's diagram); returns the copies, which
        hold the outputs once `window_ms` has returned."""
        torch.cuda._sleep(self.lead_cycles)
        write_inputs()
        self.start.record()
        stream_write_value(self.go, mark)
        stream_wait_value(self.done, mark)
        self.stop.record()
        copies = copy_outputs(self.slots)
        self.copied.record()
        return copies

    def window_ms(self, deadline: float) -> float:
        """T0 to T1 once the judge's copy is done; a protocol violation if it is not by `deadline`."""
        deadline = min(deadline, time.monotonic() + DONE_GRACE_SECONDS)
        while not self.copied.query():
            if time.monotonic() > deadline:
                raise ProtocolViolation("the kernel's process answered a timed call but never marked it done")
            time.sleep(20e-6)
        return self.start.elapsed_time(self.stop)

    def release(self) -> None:
        """End a wait the kernel's process will not end (it failed, or lied): `done` written from another
        stream, so the judge's GPU work goes on and its later samples are unaffected."""
        with torch.cuda.stream(self.release_stream):
            stream_write_value(self.done, RELEASED)
        torch.cuda.synchronize(self.device)


def _slot(shape: list, dtype: torch.dtype, device: torch.device, layout) -> torch.Tensor:
    """An empty slot of `shape`, strided like `layout` (a meta tensor of that shape made by empty_like,
    so dense) when there is one, else contiguous."""
    if isinstance(layout, torch.Tensor) and list(layout.shape) == list(shape):
        return torch.empty_strided(shape, layout.stride(), dtype=dtype, device=device)
    return torch.empty(shape, dtype=dtype, device=device)


class TimelineSlots:
    """The kernel process's side: the slots and words the judge maps, and one timed call between them."""

    def __init__(self, device: torch.device, specs: list, dtypes: dict, layouts: list | None = None):
        """Slots of the outputs' shapes and dtypes (`specs`, the reference's), each in the layout of the
        kernel's own output of that shape (`layouts`, meta tensors of its last outputs) where that layout
        is dense, so the copy into it in the clock's window is a plain copy of the same bytes as the
        reference's calibration made, whatever the kernel's output layout."""
        if not isinstance(specs, list) or not specs:
            raise ValueError("the timing request's output specs are not a list")
        self.device = device
        layouts = layouts if isinstance(layouts, list) and len(layouts) == len(specs) else [None] * len(specs)
        self.slots = [_slot(s["shape"], dtypes[s["dtype"]], device, layout) for s, layout in zip(specs, layouts)]
        self.words = torch.zeros(2, dtype=torch.int32, device=device)
        self.go, self.done = self.words[0:1], self.words[1:2]
        self.ready = torch.cuda.Event()

    def held(self) -> list:
        return [*self.slots, self.words]

    def call(self, fn: Callable[[], object], mark, tools) -> float:
        """Wait until the judge's stream has written `go`, time the call as every call is timed, put its
        outputs in the slots, mark it done; returns the call's milliseconds."""
        if not isinstance(mark, int) or isinstance(mark, bool) or not 0 < mark < RELEASED:
            raise ValueError(f"a trial mark of {str(mark)[:40]!r}")
        stream_wait_value(self.go, mark)
        self.ready.record()
        while not self.ready.query():  # the host launches once the GPU is there, as on an idle GPU, and
            pass  # spins: a wake-up from a blocking wait lies in the window, with a busy host's spread
        _, ms = timed_call(fn, self.device, tools, then=lambda output: self.hand_over(output, mark))
        return ms

    def hand_over(self, output, mark: int) -> None:
        """Queue the copy of a call's outputs into the slots, then `done`, right after its end event:
        no wake-up of the host lies between the call and `done`."""
        outputs = list(output) if isinstance(output, (tuple, list)) else [output]
        if len(outputs) != len(self.slots):
            raise ValueError(f"a timed call returned {len(outputs)} outputs, the reference {len(self.slots)}")
        for slot, value in zip(self.slots, outputs):
            if not isinstance(value, torch.Tensor) or value.shape != slot.shape:
                raise ValueError("a timed call returned an output unlike the reference's")
            slot.copy_(value)
        stream_write_value(self.done, mark)
