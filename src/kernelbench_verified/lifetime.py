"""Child processes that end with the process that started them, however it ends.

A judge or a baseline worker is a daemonic multiprocessing child: Python ends it when its evaluator exits
normally, not when the evaluator is killed. A killed evaluator's judge went on taking queued jobs,
starting sandboxes and holding its device with nobody reading its reports. Linux's PR_SET_PDEATHSIG has
the kernel send the child SIGTERM when its parent dies; elsewhere nothing is set.
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _prctl():
    """libc's prctl, or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


def end_with_parent_hook():
    """A subprocess.Popen preexec_fn that has the child end with its parent; None off Linux. prctl is
    looked up here, before the fork."""
    prctl = _prctl()
    return (lambda: prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))) if prctl else None


def end_with_parent(parent_pid: int) -> None:
    """Called first in a child: SIGTERM it when its parent dies, and now if `parent_pid`, the parent it
    was started by, already has (the signal is only sent for deaths after the call)."""
    prctl = _prctl()
    if prctl is None:
        return
    prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGTERM)
