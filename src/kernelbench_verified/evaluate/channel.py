"""JSON-lines messages between the judge and the kernel's process, over inherited pipe descriptors.

Only JSON crosses the boundary, optionally followed by raw bytes (CPU tensors): a header field
"payload" says how many, and the receiver refuses more than it allows. The judge never unpickles
anything the kernel's process produced, and any malformed or oversized message is a ProtocolViolation.
"""

from __future__ import annotations

import json
import os
import select
import time

MAX_MESSAGE_BYTES = 1 << 20


class ChannelClosed(Exception):
    pass


class ChannelTimeout(Exception):
    pass


class ProtocolViolation(Exception):
    """A message that is not well-formed JSON, too large, or not what the protocol expects here."""


class Channel:
    def __init__(self, read_fd: int, write_fd: int):
        self.read_fd, self.write_fd = read_fd, write_fd
        self._buffer = bytearray()  # grows in place: a payload of n bytes arrives in O(n), not O(n^2)

    def send(self, message: dict, payload: bytes | memoryview = b"", deadline: float | None = None) -> None:
        """Write one message; ChannelTimeout if the reader stops reading past `deadline`."""
        if payload:
            message = dict(message, payload=len(payload))
        self._write((json.dumps(message) + "\n").encode(), deadline)
        if payload:
            self._write(payload, deadline)

    def _write(self, data, deadline: float | None) -> None:
        view = memoryview(data).cast("B")
        if deadline is not None:
            os.set_blocking(self.write_fd, False)  # a reader that stops reading must not hold us
        while view:
            try:
                written = os.write(self.write_fd, view)
            except BlockingIOError:
                if not select.select([], [self.write_fd], [], max(0.0, deadline - time.monotonic()))[1]:
                    raise ChannelTimeout() from None
                continue
            view = view[written:]

    def _fill(self, deadline: float | None, spin: bool = False) -> None:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.read_fd], [], [], 0 if spin else wait)
            if ready or not spin or wait == 0:
                break
        if not ready:
            raise ChannelTimeout()
        chunk = os.read(self.read_fd, 1 << 20)
        if not chunk:
            raise ChannelClosed("end of stream")
        self._buffer += chunk

    def has_pending(self) -> bool:
        """True when bytes arrived that nobody asked for yet."""
        return bool(self._buffer) or bool(select.select([self.read_fd], [], [], 0)[0])

    def receive(self, deadline: float | None = None, max_payload: int = 0, spin: bool = False) -> dict:
        """Next message; its raw bytes, if any, under key "payload". ChannelTimeout past `deadline`
        (time.monotonic), ChannelClosed on EOF, ProtocolViolation on a malformed or oversized one.
        `spin`: poll instead of sleeping until the message starts, so waking up adds no scheduler
        latency (a timed call's reply on the host clock, whose wait is in its window); it costs a busy core."""
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                raise ProtocolViolation(f"a message longer than {MAX_MESSAGE_BYTES} bytes")
            self._fill(deadline, spin)
        end = self._buffer.index(b"\n")
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        if len(line) > MAX_MESSAGE_BYTES:
            raise ProtocolViolation(f"a message longer than {MAX_MESSAGE_BYTES} bytes")
        try:
            message = json.loads(line)
        except ValueError:
            raise ProtocolViolation("a message that is not JSON") from None
        if not isinstance(message, dict):
            raise ProtocolViolation("a message that is not a JSON object")
        size = message.get("payload", 0)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0 or size > max_payload:
            raise ProtocolViolation(f"a payload of {size!r} bytes where at most {max_payload} are allowed")
        if size:
            while len(self._buffer) < size:
                self._fill(deadline)
            message["payload"] = bytes(self._buffer[:size])
            del self._buffer[:size]
        return message
