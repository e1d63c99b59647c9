"""A judge process's entry point, torch-free at import, and the one way a kernel is built ahead.

It starts its first sandboxes before it imports torch itself (through judge.py), so the two imports
(seconds each) overlap instead of queueing before the first kernel.
"""

from __future__ import annotations

import os
import signal
import sys
from .build import outcome_marker
from .launch import confine_to, start_sandbox
from ..results import read_json, write_json_atomic


def judge_worker(worker_id: int, settings: dict, device: str, child_env: dict, jobs, results,
                 placement: tuple[set[int], int | None]) -> None:
    """Judge process entry: take jobs until a None arrives; report ("start", ...) and ("done", ...).
    Sandboxes are started before the torch import below. `placement` (launch.cpu_placement): the CPUs
    of this process and its spares, and the one CPU a sandbox serving a job moves to (or None)."""
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


def build_once(judge, job: dict) -> dict:
    """Precompile one kernel with `judge` (a judge.Judge on the CPU; locally or in a Ray task) unless
    its recorded outcome exists: the key covers source, toolchain, architectures, flags and sandbox
    mode, so a re-run compiles nothing."""
    marker = outcome_marker(job)
    if marker.is_file():
        return read_json(marker, "build marker")
    built = judge.evaluate(dict(job, mode="compile", device="cpu", timeout=job["compile_timeout"]))
    if built.get("compiled") or built.get("eval_status") == "compile_error":
        outcome = {k: built[k] for k in ("compiled", "eval_status", "error", "compiler_output", "extension_builds")
                   if k in built}
        write_json_atomic(marker, outcome)
    return built


def by_build(jobs: list) -> list[list]:
    """The (problem, sid, job) items grouped by build key: one build serves each group."""
    groups: dict = {}
    for problem, sid, job in jobs:
        groups.setdefault(job["build_key"], []).append((problem, sid, job))
    return list(groups.values())


def failed_to_build(problem, sid: int, job: dict, built: dict, recorder, progress) -> bool:
    """Count a kernel whose build ended; one that did not compile is recorded now (True) and never
    goes to a judge."""
    progress.built()
    if built.get("eval_status") != "compile_error":
        return False
    progress.update(job["key"], recorder.save(problem, sid, built))
    return True
