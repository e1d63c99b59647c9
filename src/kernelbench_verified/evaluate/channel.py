"""JSON-lines messages between the judge and the kernel's process, over inherited pipe descriptors.

Only JSON crosses the boundary: the judge never unpickles anything the kernel's process produced.
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


class Channel:
    def __init__(self, read_fd: int, write_fd: int):
        self.read_fd, self.write_fd = read_fd, write_fd
        self._buffer = b""

    def send(self, message: dict) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            written = os.write(self.write_fd, data)
            data = data[written:]

    def receive(self, deadline: float | None = None) -> dict:
        """Next message; ChannelTimeout past `deadline` (time.monotonic), ChannelClosed on EOF."""
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                raise ChannelClosed("message too large")
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.read_fd], [], [], wait)
            if not ready:
                raise ChannelTimeout()
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                raise ChannelClosed("end of stream")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError:
            raise ChannelClosed("malformed message") from None
        if not isinstance(message, dict):
            raise ChannelClosed("malformed message")
        return message
