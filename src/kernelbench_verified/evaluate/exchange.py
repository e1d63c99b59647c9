"""One sandbox, from the judge's side: its messages in order, and what its end says.

`Exchange` is the judge's half of the channel for one sample: a request goes out only when no reply is
pending, a reply must be the one expected, and a failure the sandbox reports may only name one of the
statuses a kernel can give itself. `converse` runs one exchange in a sandbox and turns however it ends
(a verdict, a timeout, a protocol violation, a crash, a jail limit) into the record's status; the judge
and the build worker both use it.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Callable

import torch

from .channel import ChannelClosed, ChannelTimeout, ProtocolViolation
from .launch import Sandbox, kill_group, processes_of_uid
from .messages import Event, Op
from .record import JudgedRecord
from .transport import export_values, import_values
from ..verdicts import NOT_COMPILED, REPORTABLE_FAILURES, Status


class SampleFailed(Exception):
    """Ends a conversation with a status (from the judge's fixed set) and details for the record."""

    def __init__(self, status: Status, **details):
        super().__init__(status)
        self.status, self.details = Status(status), details


class Exchange:
    """The judge's requests to one sandbox and its replies, within the sample's deadline."""

    def __init__(self, sandbox: Sandbox, deadline: float, record: JudgedRecord, device: torch.device):
        self.sandbox, self.channel = sandbox, sandbox.channel
        self.deadline, self.record, self.device = deadline, record, device
        self.last_op = None  # the judge's last request: what a reported failure answers
        # Why a kernel that ran out of GPU memory is not to blame, or None (judge.Conversation sets it)
        self.crowded_out: Callable[[], str | None] = lambda: None

    def expect(self, event: Event, max_payload: int = 0, spin: bool = False) -> dict:
        """The next message, which must be `event`; a reported failure ends the sample."""
        message = self.channel.receive(self.deadline, max_payload, spin)
        got = message.get("event")
        if got == Event.ERROR:
            self.fail_from(message)
        if got != event:
            raise ProtocolViolation(f"expected {event.value!r}, got {str(got)[:40]!r}")
        return message

    def greeted(self) -> None:
        """A new sandbox's messages before its job (read before the job goes out): "idle", its imports
        are done, and, when the judge asked it to set up CUDA ahead (spares.Spares.prepare), "prepared"."""
        if not self.sandbox.idle:
            self.expect(Event.IDLE)
            self.sandbox.idle = True
        if self.sandbox.preparing:
            self.sandbox.note_prepared(self.expect(Event.PREPARED))
        if self.sandbox.setup_seconds is not None:
            self.record["sandbox_setup_seconds"] = self.sandbox.setup_seconds

    def read_last_words(self) -> None:
        """Read what a sandbox that has gone left in the pipe: an error message it sent is its status."""
        try:
            while self.channel.has_pending():
                message = self.channel.receive(time.monotonic() + 1, 1 << 20)
                if message.get("event") == Event.ERROR:
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
        if status == Status.OUT_OF_MEMORY and self.last_op in (Op.ALLOC, Op.TIMING):
            raise SampleFailed(Status.HARNESS_ERROR, compiled=compiled, error="the harness's buffers for the inputs "
                               f"did not fit in GPU memory beside the kernel's process: {details['error'][:3000]}")
        if status == Status.OUT_OF_MEMORY and (crowded := self.crowded_out()):
            raise SampleFailed(Status.HARNESS_ERROR, compiled=compiled, error=f"{crowded}: {details['error'][:3000]}")
        raise SampleFailed(status, compiled=compiled, **details)

    def post(self, message: dict, payload: bytes = b"") -> None:
        """Write to the sandbox, within the sample's deadline even if it stops reading."""
        if "job" in message:
            self.greeted()
        self.last_op = message.get("op")
        self.channel.send(message, payload, deadline=self.deadline)

    def send(self, message: dict, values: list | None = None) -> None:
        """A request, with `values` as bytes after it; refused while a message the judge did not ask for waits."""
        if self.channel.has_pending():  # a failure the sandbox reported on its own (ModelNew missing, say)
            early = self.channel.receive(self.deadline, 0)
            if early.get("event") == Event.ERROR:
                self.fail_from(early)
            op = message.get("op")
            raise ProtocolViolation(f"a message arrived before the judge's {str(op) if op else op!r} request")
        if values is None:
            self.post(message)
            return
        descs, payload = export_values(values)
        self.post(dict(message, inputs=descs), payload)

    def request(self, op: Op, values: list, **fields) -> list:
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
        self.send({"op": Op.ALLOC, "specs": specs})
        mapped = self.receive_outputs(self.expect(Event.BUFFERS), "buffers")
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


def converse(sandbox: Sandbox, timeout: float, build_dir: Path, record: JudgedRecord, device: torch.device,
             talk: Callable[[Exchange], None]) -> None:
    """Run `talk` on an exchange with `sandbox` within `timeout` seconds; however it ends, its status and
    what the sandbox left behind go into `record`, and the sandbox's processes are gone after."""
    exchange = Exchange(sandbox, time.monotonic() + timeout, record, device)
    try:
        talk(exchange)
    except SampleFailed as failed:
        record.update(eval_status=failed.status, **failed.details)
    except ChannelTimeout:
        record.update(eval_status=Status.TIMEOUT, error=f"killed after the {timeout} s timeout")
    except ProtocolViolation as exc:
        record.update(eval_status=Status.PROTOCOL_VIOLATION, error=str(exc)[:2000])
    except torch.OutOfMemoryError as exc:  # the judge's own inputs or references: never the kernel's failure
        record.update(eval_status=Status.HARNESS_ERROR, error="the judge's own copy of the inputs or references did "
                      f"not fit in GPU memory beside the kernel's process: {str(exc)[:1500]}",
                      judge_tensors=large_tensors(device))
    except (ChannelClosed, BrokenPipeError) as exc:
        code = _wait(sandbox.process, 5)
        try:  # a sandbox that reported its own failure and exited before the judge read it
            exchange.read_last_words()
            status, error = describe_exit(code, str(exc))
            record.update(eval_status=status, error=error)
        except SampleFailed as failed:
            record.update(eval_status=failed.status, **failed.details)
    finally:
        if kill_group(sandbox.process):
            _remove_stale_locks(build_dir)
        survivors = _survivors(sandbox)
        if survivors:
            record["jail_survivors"] = survivors
        if sandbox.cgroup is not None:
            record["host_memory_peak_bytes"] = sandbox.cgroup.peak_bytes()  # the OS's figure, not the kernel's
        exceeded = sandbox.limit_exceeded()
        if exceeded and record["eval_status"] not in (Status.CORRECT,):
            record.update(eval_status=Status.RESOURCE_LIMIT, error=exceeded)
    if record["eval_status"] not in (Status.CORRECT, Status.INCORRECT):
        record["log_tail"] = _tail(sandbox.log_path)


def describe_exit(code, detail: str) -> tuple[Status, str]:
    """Status and message for a sandbox that stopped answering."""
    from .jail import JAIL_FAILED, LIMIT_SIGNALS

    if code == JAIL_FAILED:
        return Status.HARNESS_ERROR, "the jail could not be set up (its reason is in log_tail)"
    if code is None:
        return Status.CRASHED, f"the kernel's process stopped answering ({detail})"
    if code < 0:
        name = signal.Signals(-code).name
        if name in LIMIT_SIGNALS:
            return Status.RESOURCE_LIMIT, f"{LIMIT_SIGNALS[name]}: the kernel's process was killed by {name}"
        return Status.CRASHED, f"the kernel's process was killed by signal {name}"
    return Status.CRASHED, f"the kernel's process exited with code {code} before finishing"


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


def _tail(path: Path, limit: int = 3000) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(0, handle.tell() - limit))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""

