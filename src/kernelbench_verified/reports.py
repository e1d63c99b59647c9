"""Reports from worker processes to the process that started them, written before `put` returns.

multiprocessing.Queue hands each message to a feeder thread, so a worker killed right after it
reported (a problem file that SIGKILLs its own process, the OOM killer) can lose its last reports, and
the dispatcher then blames the wrong problem. A SimpleQueue writes to its pipe in `put` itself.
"""

from __future__ import annotations

import queue
import time


class ReportQueue:
    """Many writers (the workers), one reader (the dispatcher), and `get` with a timeout."""

    def __init__(self, context):
        self._queue = context.SimpleQueue()

    def put(self, message) -> None:
        self._queue.put(message)

    def get(self, timeout: float):
        """The next report; queue.Empty when none arrives within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while self._queue.empty():
            if time.monotonic() >= deadline:
                raise queue.Empty
            time.sleep(0.01)
        return self._queue.get()
