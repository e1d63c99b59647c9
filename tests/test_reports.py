"""Workers' reports reach the dispatcher even when the worker is killed right after reporting."""

import multiprocessing as mp
import os
import queue
import signal

import pytest

from kernelbench_verified.reports import ReportQueue


def _report_then_die(reports) -> None:
    reports.put(("result", "2_Raises.py"))
    os.kill(os.getpid(), signal.SIGKILL)  # as a problem file that kills its own process does next


def test_a_report_survives_its_worker_being_killed_right_after():
    context = mp.get_context("fork")
    for _ in range(10):
        reports = ReportQueue(context)
        worker = context.Process(target=_report_then_die, args=(reports,))
        worker.start()
        worker.join()
        assert worker.exitcode == -signal.SIGKILL
        assert reports.get(timeout=5) == ("result", "2_Raises.py")


def test_get_times_out_with_queue_empty():
    with pytest.raises(queue.Empty):
        ReportQueue(mp.get_context("fork")).get(timeout=0.05)
