"""eval_mode=local: one judge process per device, fed from one queue, with builds pipelined ahead.

With build_cache, a `Precompiler` builds each distinct kernel on CPU threads (builder.BuildWorker, each
build in its own jailed sandbox) and hands every kernel to the judges' queue as soon as its build ends,
so the judges evaluate while the compilers still build the rest. The judges report through a
reports.ReportQueue in typed messages (messages.JobStarted, JobDone, JudgeFingerprint); the dispatcher
alone records.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from tqdm import tqdm

from .builder import BuildWorker
from .launch import child_environment
from .placement import build_cpus, cpu_placement, lower_build_priority
from .messages import JobDone, JobStarted, JudgeFingerprint
from .record import failure
from .worker import by_build, failed_to_build, judge_worker
from ..config import child_visible_devices
from ..errors import UserError
from ..reports import ReportQueue
from ..verdicts import Status


class Progress:
    """One tqdm bar over the kernels to evaluate, with built (when builds are pipelined) / correct /
    failed counts and an ETA."""

    def __init__(self, total: int, verbose: bool, building: bool = False):
        self.bar = tqdm(total=total, desc="eval", unit="kernel", dynamic_ncols=True)
        self.counts = {"built": 0} if building else {}
        self.counts.update(correct=0, failed=0)
        self.verbose = verbose

    def built(self) -> None:
        self.counts["built"] += 1
        self.bar.set_postfix(self.counts)

    def update(self, key: str, record: dict) -> None:
        self.counts["correct" if record["correctness"] else "failed"] += 1
        self.bar.set_postfix(self.counts)
        self.bar.update(1)
        if self.verbose:
            detail = record["metadata"].get("failed_case") or record["metadata"].get("error", "")
            self.bar.write(f"{key}: {record['eval_status']} {str(detail)[:120]}")

    def close(self) -> None:
        self.bar.close()


class Precompiler:
    """Builds the pending kernels on CPU threads, each build in its own (jailed) sandbox, once per build
    key (identical sources share one build), and hands each kernel on as soon as its build is done:
    the judges evaluate while nvcc still builds the rest."""

    def __init__(self, jobs: list, settings: dict, build_root: Path, workers: int, num_judges: int):
        self.worker = BuildWorker(settings, child_environment(settings, build_root, visible_devices=""))
        self.pool = ThreadPoolExecutor(max_workers=workers, initializer=lower_build_priority,
                                       initargs=(build_cpus(num_judges),))
        self.waiting: dict = {}  # build future -> the jobs it builds for
        for group in by_build(jobs):
            self.waiting[self.pool.submit(self.worker.build, group[0][2])] = group

    def finished(self, timeout: float | None = 0) -> list:
        """(problem, sid, job, build record) of every kernel whose build ended (waiting up to `timeout`
        seconds for one, None: until one does)."""
        done, _ = wait(list(self.waiting), timeout=timeout, return_when=FIRST_COMPLETED)
        return [(problem, sid, job, future.result()) for future in done for problem, sid, job in self.waiting.pop(future)]

    @property
    def building(self) -> bool:
        return bool(self.waiting)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def dispatch(jobs: list, settings: dict, devices: list[str], build_root: Path, recorder,
             verbose: bool, builder: Precompiler | None = None) -> None:
    """One judge process per device, pulling from one queue. With a `builder`, each kernel joins the
    queue when its build is done, and a kernel whose build failed is recorded without a judge."""
    ctx = mp.get_context("spawn")
    job_queue, result_queue = ctx.Queue(), ReportQueue(ctx)
    by_key = {job.key: (problem, sid, job) for problem, sid, job in jobs}
    if builder is None:
        _queue_jobs(job_queue, [job for _, _, job in jobs], len(devices))

    def start(worker_id: int):
        device = devices[worker_id]
        env = child_environment(settings, build_root, child_visible_devices(device))
        local_device = "cpu" if device == "cpu" else "cuda:0"
        placement = cpu_placement(worker_id, len(devices)) if device != "cpu" else (set(os.sched_getaffinity(0)), None)
        process = ctx.Process(target=judge_worker, args=(worker_id, settings, local_device, env, job_queue,
                                                         result_queue, placement), daemon=True)
        process.start()
        return process

    workers = [start(worker_id) for worker_id in range(len(devices))]
    progress = Progress(len(jobs), verbose, building=builder is not None)
    in_flight: dict[int, str] = {}
    try:
        while by_key:
            if builder is not None and builder.building:
                _hand_on_builds(builder, job_queue, by_key, recorder, progress, len(devices))
            try:
                message = result_queue.get(timeout=0.2 if builder is not None and builder.building else 5)
            except queue.Empty:
                _check_workers(workers, start, in_flight, by_key, recorder, progress)
                if not any(w.is_alive() for w in workers) and by_key:
                    raise UserError("every judge process died; see the records marked harness_error")
                continue
            if isinstance(message, JobStarted):
                in_flight[message.worker_id] = message.key
            elif isinstance(message, JudgeFingerprint):
                recorder.save_fingerprint(devices[message.worker_id], message.fingerprint)
            elif isinstance(message, JobDone):
                in_flight.pop(message.worker_id, None)
                problem, sid, job = by_key.pop(message.key)
                message.record.setdefault("build_dir", job.build_dir)
                progress.update(message.key, recorder.save(problem, sid, message.record,
                                                           device=devices[message.worker_id]))
            else:
                raise TypeError(f"a judge process reported {type(message).__name__}, no report of evaluate.messages")
    finally:
        progress.close()
        if builder is not None:
            builder.close()
        for process in workers:  # each judge got its stop signal: let it discard its spare sandboxes
            process.join(timeout=15 if not by_key else 0)
            if process.is_alive():
                process.terminate()  # the judge's SIGTERM handler still discards them (judge_worker)
                process.join(timeout=10)


def _queue_jobs(job_queue, jobs: list, judges: int, last: bool = True) -> None:
    for job in jobs:
        job_queue.put(job)
    if last:
        for _ in range(judges):  # one stop signal per judge, after the last job
            job_queue.put(None)


def _hand_on_builds(builder: Precompiler, job_queue, by_key: dict, recorder, progress, judges: int) -> None:
    """Queue the kernels whose builds just ended; record those that did not compile."""
    ready = []
    for problem, sid, job, built in builder.finished():
        if failed_to_build(problem, sid, job, built, recorder, progress):
            by_key.pop(job.key)
        else:
            ready.append(job)
    _queue_jobs(job_queue, ready, judges, last=not builder.building)


def _check_workers(workers, start, in_flight, by_key, recorder, progress) -> None:
    """A judge that died mid-job (its reference killed it, the OOM killer): record that job as a harness
    error and start a fresh judge on its device, which takes the dead one's place in the queue. A judge
    that dies with no job in flight is not replaced, so one that cannot start ends the run."""
    for worker_id, process in enumerate(workers):
        if not process.is_alive() and worker_id in in_flight:
            key = in_flight.pop(worker_id)
            problem, sid, _ = by_key.pop(key)
            judged = failure(Status.HARNESS_ERROR, f"judge process died (exit {process.exitcode})")
            progress.update(key, recorder.save(problem, sid, judged))
            if by_key:
                workers[worker_id] = start(worker_id)
