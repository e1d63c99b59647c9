"""A judge process's entry point, torch-free at import, and what both dispatchers share of the build stage.

It starts its first sandboxes before it imports torch itself (through judge.py), so the two imports
(seconds each) overlap instead of queueing before the first kernel.
"""

from __future__ import annotations

import os
import signal
import sys
from multiprocessing import parent_process

from .launch import start_sandbox
from .placement import confine_to
from ..lifetime import end_with_parent
from ..verdicts import Status


def judge_worker(worker_id: int, settings: dict, device: str, child_env: dict, jobs, results,
                 placement: tuple[set[int], int | None]) -> None:
    """Judge process entry: take jobs until a None arrives, reporting each (messages.JobStarted, JobDone).
    Sandboxes are started before the torch import below. `placement` (placement.cpu_placement): the CPUs
    of this process and its spares, and the one CPU a sandbox serving a job moves to (or None)."""
    end_with_parent(parent_process().pid)  # a killed evaluator's judge must not judge on unread
    os.environ.update(child_env)
    own_cpus, timed_cpu = placement
    confine_to(own_cpus)  # before the spares start: they inherit it
    # Terminated by the evaluator (interrupted run): unwind, so the judge kills its spare sandboxes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    spares = start_spares(child_env, settings, device)
    from .judge import run_judge  # imports torch, while the sandboxes import theirs

    run_judge(worker_id, settings, device, child_env, jobs, results, spares, timed_cpu)


def start_spares(child_env: dict, settings: dict, device: str) -> tuple:
    """The sandboxes a judge keeps started ahead of its jobs (settings' spare_sandboxes). On the CPU a
    starting sandbox competes with the kernel being timed for the same cores: one spare at most."""
    count = settings["spare_sandboxes"] if device.startswith("cuda") else min(settings["spare_sandboxes"], 1)
    return tuple(start_sandbox(child_env, settings.get("jail")) for _ in range(count))


def by_build(jobs: list) -> list[list]:
    """The (problem, sid, job) items grouped by build key: one build serves each group."""
    groups: dict = {}
    for problem, sid, job in jobs:
        groups.setdefault(job.build_key, []).append((problem, sid, job))
    return list(groups.values())


def failed_to_build(problem, sid: int, job, built: dict, recorder, progress) -> bool:
    """Count a kernel whose build ended; one that did not compile is recorded now (True) and never
    goes to a judge."""
    progress.built()
    if built.get("eval_status") != Status.COMPILE_ERROR:
        return False
    progress.update(job.key, recorder.save(problem, sid, built))
    return True
