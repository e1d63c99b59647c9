"""The loop behind scripts/generate_baseline_time.py: plan, one worker process per GPU, resumable files.

Workers pull problems from one queue and time every pending mode of a problem in turn (so the ratios
between modes come from one GPU); the parent alone writes the files, atomically after every result.
A worker that dies (a segfault, an illegal memory access) costs only the problem in flight: it is
recorded as a failure and a fresh worker takes the GPU over.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from ..measure.environment import gpu_model_id
from .timing import COMPILE_PREFIX, MODES, finish_entry, mode_fingerprint, time_job, timing_path_of
from ..measure.baseline_files import Baseline, load_baseline
from ..config import (child_visible_devices, parse_subset, require_choice, require_int, resolve_devices, safe_run_name,
                     trials_by_level)
from ..errors import UserError
from ..evaluate.placement import confine_to, cpu_placement
from ..measure.fingerprints import compare_fingerprints
from ..measure.memory import baseline_method
from ..problems.load import Problem, list_problems
from ..reports import ReportQueue
from ..results import write_json_atomic
from ..run_problems import run_folders
from ..problems.validation import hardware_label


def settings_from_config(cfg: DictConfig) -> dict:
    require_choice(cfg, "device", ("auto", "cuda", "cpu"))
    require_choice(cfg, "eval_mode", ("local", "ray"))
    for key, minimum in (("num_gpu_devices", 1), ("num_perf_trials", 1), ("num_warmup", 0), ("seed", 0)):
        require_int(cfg, key, minimum)
    modes = list(cfg.modes or []) + [COMPILE_PREFIX + str(name) for name in (cfg.compile_modes or [])]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise UserError(f"unknown baseline mode(s) {', '.join(map(str, unknown))}: choose from "
                        f"{', '.join(MODES)} (compile_modes take the part after {COMPILE_PREFIX})")
    if not modes:
        raise UserError("no modes to time: set modes=[...] or compile_modes=[...]")
    require_choice(cfg, "timing_path", ("process", "sandbox"))
    return {"modes": list(dict.fromkeys(modes)), "timing_path": cfg.timing_path, "levels": _levels(cfg.level),
            "subset": parse_subset(cfg.subset),
            "seed": cfg.seed, "num_perf_trials": cfg.num_perf_trials, "num_warmup": cfg.num_warmup,
            "num_perf_trials_by_level": trials_by_level(cfg),
            "flush_l2": bool(cfg.flush_l2), "eval_mode": cfg.eval_mode}


def _levels(value) -> list[int]:
    levels = [value] if isinstance(value, int) else OmegaConf.to_container(value) if value is not None else None
    if not levels or not all(isinstance(v, int) and not isinstance(v, bool) for v in levels):
        raise UserError(f"level={value!r} must be a level number or a list of them, e.g. level=[1,2,3]")
    return levels


class BaselineFiles:
    """The open baseline files of one run, one per mode, rewritten atomically after every result."""

    def __init__(self, folder: Path, modes: list[str], fingerprints: dict, force: bool):
        self.paths = {mode: folder / f"{mode}.json" for mode in modes}
        self.files: dict[str, Baseline] = {}
        for mode, path in self.paths.items():
            existing = load_baseline(path) if path.exists() else Baseline({})
            if (existing.levels or existing.failures) and not _same_environment(path, existing, fingerprints[mode],
                                                                                  force):
                existing = Baseline({})
            existing.fingerprint = fingerprints[mode]
            self.files[mode] = existing

    def done(self, mode: str, level: int, filename: str, retry_failed: bool) -> bool:
        baseline, key = self.files[mode], f"level{level}"
        return (filename in baseline.levels.get(key, {})
                or (not retry_failed and filename in baseline.failures.get(key, {})))

    def put(self, mode: str, level: int, filename: str, entry: dict) -> None:
        baseline, key = self.files[mode], f"level{level}"
        timed = "error" not in entry
        (baseline.levels if timed else baseline.failures).setdefault(key, {})[filename] = entry
        (baseline.failures if timed else baseline.levels).get(key, {}).pop(filename, None)
        write_json_atomic(self.paths[mode], baseline.to_json())


def with_run_folders(cfg: DictConfig) -> DictConfig:
    """run_name=: the level, problems and baseline folder an imported run records (run_problems), so its
    references are timed into the folder the leaderboard reads for it."""
    if cfg.get("run_name") is None:
        return cfg
    run_dir = Path(cfg.runs_dir) / safe_run_name(cfg.run_name)
    folders = run_folders(run_dir)
    if not folders.own_problems:
        raise UserError(f"run {run_dir} records no problems of its own (it uses the shipped ones, or is not an "
                        f"imported run): time the shipped problems without run_name=")
    OmegaConf.update(cfg, "level", folders.level)
    OmegaConf.update(cfg, "problems_dir", str(folders.problems_dir))
    OmegaConf.update(cfg, "out_dir", str(folders.timing_dir))
    return cfg


def _same_environment(path: Path, existing: Baseline, fingerprint: dict, force: bool) -> bool:
    """Timings taken on another GPU, software or settings never share a file: without force that is
    an error; with force the old timings are dropped (the file is rewritten from scratch)."""
    differences = compare_fingerprints(existing.fingerprint, fingerprint, names=("the existing file", "this run"))
    paths = [(fp or {}).get("timing_path", "process") for fp in (existing.fingerprint, fingerprint)]
    if paths[0] != paths[1]:
        differences.append(f"timing paths differ: the existing file {paths[0]} vs this run {paths[1]}")
    memory = [(fp or {}).get("peak_memory") or baseline_method({}, fp) for fp in (existing.fingerprint, fingerprint)]
    if memory[0] != memory[1]:
        differences.append(f"peak memory measured differently: the existing file {memory[0]} vs this run {memory[1]}")
    if not differences:
        return True
    if not force:
        raise UserError(f"{path} was measured differently ({'; '.join(differences)}): re-time it with "
                        f"force=true (drops its old timings), or write elsewhere with out_dir=... or hardware=...")
    print(f"warning: {path} was measured differently ({'; '.join(differences)}); force=true: starting it afresh")
    return False


def generate_baselines(cfg: DictConfig) -> int:
    with_run_folders(cfg)
    settings = settings_from_config(cfg)
    problems = [p for level in settings["levels"] for p in list_problems(level, cfg.problems_dir, settings["subset"])]
    if settings["eval_mode"] == "ray":
        from .ray_timing import RayTimers

        timers = RayTimers(settings, cfg.device, cfg.ray_address)
        devices, fingerprints, label = timers.devices, timers.fingerprints, timers.hardware
    else:
        devices = resolve_devices(cfg.device, cfg.num_gpu_devices)
        if devices[0] == "cpu":
            devices = devices[:1]  # parallel CPU workers would skew each other's timings
        fingerprints, label = _fingerprints(settings, devices), hardware_label(_torch_device(devices[0]))
    hardware = str(cfg.hardware) if cfg.hardware else label
    files = BaselineFiles(Path(cfg.out_dir) / hardware, settings["modes"], fingerprints, bool(cfg.force))
    jobs = []
    for problem in problems:
        pending = [m for m in settings["modes"] if cfg.force
                   or not files.done(m, problem.level, problem.filename, bool(cfg.retry_failed))]
        if pending:
            jobs.append({"key": f"{problem.level}/{problem.filename}", "level": problem.level, "pid": problem.pid,
                         "filename": problem.filename, "path": str(problem.path), "modes": pending,
                         "problem_sha256": problem.source_sha256})
    total = sum(len(job["modes"]) for job in jobs)
    done = len(problems) * len(settings["modes"]) - total
    print(f"{total} timing(s) to take ({len(jobs)} problem(s) x modes), {done} already recorded; "
          f"on {devices[0]} x{len(devices)}; files -> {Path(cfg.out_dir) / hardware}/")
    in_process, in_sandbox = (_jobs_timed(jobs, settings, path) for path in ("process", "sandbox"))
    if settings["eval_mode"] == "ray":
        timers.run(in_process, files, Progress(sum(len(job["modes"]) for job in in_process), bool(cfg.verbose)))
    elif in_process:
        dispatch(in_process, settings, devices, files, fingerprints, bool(cfg.verbose))
    if in_sandbox:
        from .sandboxed import time_in_sandbox  # the evaluator, imported only for this path

        time_in_sandbox(cfg, settings, in_sandbox, files, fingerprints, devices[0])
    return report(files, problems, settings["modes"])


def _jobs_timed(jobs: list[dict], settings: dict, path: str) -> list[dict]:
    """The jobs with only their modes timed on `path` (timing_path_of); jobs left with none dropped."""
    kept = [dict(job, modes=[m for m in job["modes"] if timing_path_of(m, settings) == path]) for job in jobs]
    return [job for job in kept if job["modes"]]


def _torch_device(name: str):
    import torch

    return torch.device(name)


def _fingerprints(settings: dict, devices: list[str]) -> dict:
    """One fingerprint per mode; every GPU used must be the same model, or the files would mix them."""
    ids = {device: gpu_model_id(_torch_device(device)) for device in devices if device != "cpu"}
    if len(set(ids.values())) > 1:
        raise UserError(f"the GPUs differ ({ids}): time each model separately with num_gpu_devices=...")
    return {mode: mode_fingerprint(mode, _torch_device(devices[0]), settings) for mode in settings["modes"]}


def dispatch(jobs: list, settings: dict, devices: list[str], files: BaselineFiles, fingerprints: dict,
             verbose: bool) -> None:
    ctx = mp.get_context("spawn")
    job_queue, results = ctx.Queue(), ReportQueue(ctx)
    for job in jobs:
        job_queue.put(job)
    for _ in devices:
        job_queue.put(None)  # one stop signal per worker

    def start(worker_id: int):
        timed_cpu = cpu_placement(worker_id, len(devices))[1] if devices[worker_id] != "cpu" else None
        process = ctx.Process(target=baseline_worker, args=(worker_id, devices[worker_id], settings, job_queue,
                                                            results, timed_cpu), daemon=True)
        process.start()
        return process

    workers = [start(i) for i in range(len(devices))]
    by_key = {job["key"]: dict(job, remaining=list(job["modes"])) for job in jobs}
    in_flight: dict[int, str] = {}
    progress = Progress(sum(len(job["modes"]) for job in jobs), verbose)
    try:
        while by_key:
            try:
                message = results.get(timeout=1)
            except queue.Empty:
                _replace_dead_workers(workers, start, in_flight, by_key, files, devices, fingerprints, progress)
                continue
            kind, worker_id, key = message[:3]
            if kind == "start":
                in_flight[worker_id] = key
            elif kind == "result":
                mode, entry = message[3], message[4]
                job = by_key[key]
                job["remaining"].remove(mode)
                entry = finish_entry(entry, job, devices[worker_id], fingerprints[mode])
                files.put(mode, job["level"], job["filename"], entry)
                progress.update(job, mode, entry)
                if not job["remaining"]:
                    del by_key[key]
                    in_flight.pop(worker_id, None)
    finally:
        progress.close()
        for process in workers:
            process.terminate() if process.is_alive() else None
            process.join(timeout=10)


def _replace_dead_workers(workers, start, in_flight, by_key, files, devices, fingerprints, progress) -> None:
    """A worker that died mid-problem: that problem's remaining modes become failures and a fresh
    worker takes its GPU over. If every worker has finished yet problems are unaccounted for (a worker
    died before it could report taking one), those are recorded as failures too."""
    for worker_id, process in enumerate(workers):
        if process.is_alive() or process.exitcode == 0:
            continue
        key = in_flight.pop(worker_id, None)
        if key in by_key:
            _record_failure(by_key.pop(key), f"worker process died (exit {process.exitcode}) while timing it",
                            devices[worker_id], files, fingerprints, progress)
        workers[worker_id] = start(worker_id)
    if by_key and not any(p.is_alive() for p in workers):
        for key in list(by_key):
            _record_failure(by_key.pop(key), "not timed: its worker process was lost", devices[0], files,
                            fingerprints, progress)


def _record_failure(job, error, device, files, fingerprints, progress) -> None:
    for mode in job["remaining"]:
        entry = finish_entry({"error": error}, job, device, fingerprints[mode])
        files.put(mode, job["level"], job["filename"], entry)
        progress.update(job, mode, entry)


def baseline_worker(worker_id: int, device: str, settings: dict, jobs, results, timed_cpu: int | None) -> None:
    """Process entry: bind to one GPU before CUDA starts, then time jobs until a None arrives. Eager
    modes are timed on `timed_cpu` (where a judge's sandbox times a kernel: placement.cpu_placement);
    compile modes on all CPUs, since Inductor compiles with as many workers as it is given CPUs."""
    from multiprocessing import parent_process

    from ..lifetime import end_with_parent

    end_with_parent(parent_process().pid)  # a killed baseline run's worker must not time on unread
    import torch

    all_cpus = os.sched_getaffinity(0)

    def place(mode: str) -> None:
        confine_to(all_cpus if timed_cpu is None or MODES[mode].compile else {timed_cpu})

    os.environ["CUDA_VISIBLE_DEVICES"] = child_visible_devices(device)
    local = torch.device("cpu" if device == "cpu" else "cuda:0")
    while True:
        job = jobs.get()
        if job is None:
            return
        results.put(("start", worker_id, job["key"]))
        for mode, entry in time_job(job, settings, local, place):
            results.put(("result", worker_id, job["key"], mode, entry))


class Progress:
    """tqdm bar over (problem, mode) timings with ok / failed counts."""

    def __init__(self, total: int, verbose: bool):
        self.bar = tqdm(total=total, desc="baseline", unit="timing", dynamic_ncols=True)
        self.counts = {"ok": 0, "failed": 0}
        self.verbose = verbose

    def update(self, job: dict, mode: str, entry: dict) -> None:
        failed = "error" in entry
        self.counts["failed" if failed else "ok"] += 1
        self.bar.set_postfix(self.counts)
        self.bar.update(1)
        if self.verbose or failed:
            what = entry["error"][:160] if failed else f"mean {entry['mean']:.4g} ms"
            self.bar.write(f"level {job['level']} {job['filename']} {mode}: {what}")

    def close(self) -> None:
        self.bar.close()


def report(files: BaselineFiles, problems: list[Problem], modes: list[str]) -> int:
    for mode in modes:
        baseline = files.files[mode]
        timed = sum(p.filename in baseline.levels.get(f"level{p.level}", {}) for p in problems)
        failed = sum(p.filename in baseline.failures.get(f"level{p.level}", {}) for p in problems)
        print(f"{mode}: {timed}/{len(problems)} timed, {failed} failed -> {files.paths[mode]}")
    return 0
