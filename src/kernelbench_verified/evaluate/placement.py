"""Which CPUs the judges, their sandboxes and the builds run on, without importing torch (see
worker.py for why): each judge's sandbox times on a CPU of its own, whose core nothing else shares,
and builds keep off the CPUs kept for the judges, at a lower priority.
"""

from __future__ import annotations

import os
from pathlib import Path


# Builds run beside the judges' timed calls. A judge's clock and a kernel's launches must not wait for
# nvcc: on the H200 host, 16 build workers on 16 cores stretched a 0.03 ms ReLU's judged calls to a mean of
# 8 ms and withheld its time. So builds run niced (a jailed build cannot lower it again: jail._set_limits
# sets RLIMIT_NICE to 0) and off a few CPUs kept for the judges (placement only: a build may widen its set).
BUILD_NICE = 10
CPUS_KEPT_PER_JUDGE = 3  # the judge, its sandbox and the spare sandbox importing torch beside them


def build_cpus(num_judges: int) -> set[int]:
    """The CPUs builds may use: all but CPUS_KEPT_PER_JUDGE per judge, and never fewer than 3/4 of them
    (a 2-core machine keeps none), nor a timed CPU's core sibling."""
    cpus, kept = _kept_for_judges(num_judges)
    return set(cpus[kept:]) - _timed_cores(cpus, kept, num_judges)


def _kept_for_judges(num_judges: int) -> tuple[list[int], int]:
    """(this process's CPUs in order, how many of the first are kept off builds for the judges)."""
    cpus = sorted(os.sched_getaffinity(0))
    return cpus, min(CPUS_KEPT_PER_JUDGE * num_judges, len(cpus) // 4)


def cpu_placement(worker_id: int, num_judges: int) -> tuple[set[int], int | None]:
    """(the CPUs judge `worker_id` and its spare sandboxes run on, the one CPU its sandbox runs on while
    it serves a job). A launch-bound reference left free to migrate took 12.0 ms a call where pinned it
    took 8.5 ms, and its median moved 38 % between processes against 12 % (L3/10, H200 host):
    so the timed process keeps one CPU of those build_cpus leaves to the judges, the second of its three
    (CPU 0 takes more of the OS's interrupts). Every judge is pinned or none is, so that no two judges
    of a run time under different conditions; where too few CPUs are kept (under 16 for one judge), none is."""
    cpus, kept = _kept_for_judges(num_judges)
    if kept < CPUS_KEPT_PER_JUDGE * num_judges:
        return set(cpus), None
    return set(cpus) - _timed_cores(cpus, kept, num_judges), cpus[CPUS_KEPT_PER_JUDGE * worker_id + 1]


def _timed_cores(cpus: list[int], kept: int, num_judges: int) -> set[int]:
    """The timed CPUs (cpu_placement) and the CPUs that share a core with them: a hyperthread sibling
    shares the core's execution units, so work there slows a timed call as work on the CPU itself would."""
    if kept < CPUS_KEPT_PER_JUDGE * num_judges:
        return set()
    timed = {cpus[CPUS_KEPT_PER_JUDGE * w + 1] for w in range(num_judges)}
    return set().union(*(core_siblings(cpu) for cpu in timed)) | timed


def core_siblings(cpu: int) -> set[int]:
    """The CPUs sharing `cpu`'s core (Linux's thread_siblings_list), or {cpu} where the topology is unknown."""
    try:
        text = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip()
    except OSError:
        return {cpu}
    found = set()
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        found |= set(range(int(low), int(high or low) + 1))
    return found | {cpu}


def confine_to(cpus: set[int]) -> None:
    """Move every thread of this process onto `cpus`; threads started later inherit it from theirs."""
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:  # no /proc: the calling thread, which is the one that launches
        threads = [0]
    for tid in threads:
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:  # a thread that has ended since
            pass


def lower_build_priority(cpus: set[int]) -> None:
    """Called in a build thread. On Linux nice and affinity belong to the thread, and every process it
    starts (the sandbox, ninja, nvcc) inherits them; the evaluator's other threads keep theirs."""
    os.setpriority(os.PRIO_PROCESS, 0, max(BUILD_NICE, os.getpriority(os.PRIO_PROCESS, 0)))
    os.sched_setaffinity(0, cpus)
