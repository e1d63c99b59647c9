"""The sandboxes a judge keeps started ahead of its jobs, and when they may set up CUDA.

A sandbox imports torch as it starts (seconds), so a judge keeps some started ahead and takes the
oldest live one for each conversation. On a GPU a spare also sets up CUDA ahead (its context and the
cuBLAS and cuDNN handles: sandbox.prepare_device), but only while nothing is timed on the judge's GPU:
the judge asks in its untimed windows (`prepare`: a sample's correctness cases, a robustness sandbox)
and, before any timed phase, waits until no spare is still at it (`settle`), so a spare's setup never
runs beside a call the judge's clock times.
"""

from __future__ import annotations

import time
from collections import deque

import torch

from .channel import ChannelClosed, ChannelTimeout, ProtocolViolation
from .launch import Sandbox, start_sandbox
from .messages import Event

# How long `settle` waits for a spare still setting up CUDA before a timed phase; one that takes longer
# is discarded (a fresh one replaces it); what setting up takes is each record's sandbox_setup_seconds.
SETUP_SECONDS = 30.0


class Spares:
    """Sandboxes started ahead (`started`), kept at that count, for one judge on `device`."""

    def __init__(self, started: tuple[Sandbox, ...], child_env: dict, jail: dict | None, device: torch.device):
        self.count, self.child_env, self.jail, self.device = len(started), child_env, jail, device
        self.sandboxes: deque[Sandbox] = deque(started)
        # What one CUDA context of this process's torch holds on the GPU, measured on the judge's own
        # (judge.Judge sets it): a spare's share of the GPU's memory once it has set CUDA up.
        self.context_bytes = 0

    def take(self) -> Sandbox:
        """The oldest spare still running (one that died waiting, killed for memory say, must not make
        the next kernel look as if it crashed), else a new sandbox; then the count is made up again."""
        taken = None
        while self.sandboxes and taken is None:
            sandbox = self.sandboxes.popleft()
            if sandbox.process.poll() is None:
                taken = sandbox
            else:
                sandbox.discard()
        taken = taken or start_sandbox(self.child_env, self.jail)
        while len(self.sandboxes) < self.count:
            self.sandboxes.append(start_sandbox(self.child_env, self.jail))
        return taken

    def prepare(self) -> None:
        """In an untimed window: each spare whose imports are done (its "idle" arrived) sets up CUDA."""
        if self.device.type != "cuda":
            return
        for sandbox in list(self.sandboxes):
            try:
                if not sandbox.idle and sandbox.channel.has_pending():
                    _expect(sandbox, Event.IDLE, 5.0)
                    sandbox.idle = True
                if sandbox.idle and not sandbox.asked:
                    sandbox.ask_to_prepare(str(self.device))
            except (ChannelClosed, ChannelTimeout, ProtocolViolation, OSError):
                self._drop(sandbox)

    def settle(self) -> None:
        """Before a timed phase: wait for every spare still setting up CUDA."""
        for sandbox in list(self.sandboxes):
            if not sandbox.preparing:
                continue
            try:
                reply = _expect(sandbox, Event.PREPARED, SETUP_SECONDS)
            except (ChannelClosed, ChannelTimeout, ProtocolViolation, OSError):
                self._drop(sandbox)
                continue
            sandbox.note_prepared(reply)

    def held_bytes(self) -> int:
        """GPU memory the spares hold: a context each, once asked to set CUDA up."""
        return self.context_bytes * sum(s.preparing or s.prepared for s in self.sandboxes)

    def close(self) -> None:
        while self.sandboxes:
            self.sandboxes.popleft().discard()

    def _drop(self, sandbox: Sandbox) -> None:
        self.sandboxes.remove(sandbox)
        sandbox.discard()


def _expect(sandbox: Sandbox, event: Event, seconds: float) -> dict:
    """A spare's next message, which must be `event` (a spare has run no kernel code: anything else
    means it is broken, and it is dropped)."""
    message = sandbox.channel.receive(time.monotonic() + seconds)
    if message.get("event") != event:
        raise ProtocolViolation(f"a spare sandbox said {str(message.get('event'))[:40]!r}, not {event.value!r}")
    return message
