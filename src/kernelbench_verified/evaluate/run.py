"""Evaluating a run folder of kernels: plan, build, dispatch to judges, record.

This is what scripts/eval_from_generations.py calls. One judge process per device pulls jobs from a
single queue, so a slow kernel never holds the others up; every finished record is written atomically
at once, and a re-run skips samples that already have one.
"""

from __future__ import annotations

import ast
import multiprocessing as mp
import os
import queue
import secrets
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from .build import arch_list, build_dir, build_key, outcome_marker
from ..config import (child_visible_devices, parse_problem_ids, parse_subset, perf_trials, require_choice, require_int,
                      resolve_devices, safe_run_name, trials_by_level)
from ..measure.correctness import DEFAULT_TOLERANCE
from ..errors import UserError, first_line
from ..problems.hidden_tests import DEFAULT_HIDDEN_DIR, hidden_path
from ..problems.inputs import PRECISIONS, correctness_cases
from . import cgroups, jail, pch
from .judge import Judge
from .launch import build_cpus, child_environment, cpu_placement, lower_build_priority
from ..problems.load import Problem, list_problems, load_module
from ..reports import ReportQueue
from ..run_problems import fill_problem_dirs
from ..results import (RUN_CONFIG_NAMES, ResultStore, fill_standard_file, kernel_digest, new_record, read_json,
                       write_json_atomic)
from .worker import build_once, by_build, failed_to_build, judge_worker
from ..static.check import check_source, defines_triton_kernels
from ..static.policy import apply_policy, rejecting_codes, require_policy
from ..measure.timing import TF32_MODES


FINGERPRINT_FILE = "eval_fingerprint.json"


def kernel_path(run_dir: Path, level: int, pid: int, sid: int) -> Path:
    return run_dir / f"level_{level}_problem_{pid}_sample_{sid}_kernel.py"


def result_filename(use_hidden_tests: bool) -> str:
    return "eval_results_hidden.json" if use_hidden_tests else "eval_results.json"


def settings_from_config(cfg: DictConfig) -> dict:
    """Check every eval key and return the plain settings the judges and sandboxes use."""
    precision = require_choice(cfg, "precision", tuple(PRECISIONS))
    require_choice(cfg, "eval_mode", ("local", "ray"))
    require_choice(cfg, "dataset_src", ("local", "huggingface"))
    require_choice(cfg, "device", ("auto", "cuda", "cpu"))
    require_choice(cfg, "tf32_mode", TF32_MODES)
    for key, minimum in (("level", 1), ("num_samples", 1), ("num_gpu_devices", 1), ("num_cpu_workers", 1),
                         ("num_correct_trials", 1), ("num_perf_trials", 1), ("num_warmup", 0), ("seed", 0),
                         ("spare_sandboxes", 0)):
        require_int(cfg, key, minimum)
    for key in ("timeout", "compile_timeout"):
        if isinstance(cfg[key], bool) or not isinstance(cfg[key], (int, float)) or cfg[key] <= 0:
            raise UserError(f"{key}={cfg[key]!r} must be a positive number of seconds")
    tolerance = DEFAULT_TOLERANCE[precision]
    return {
        "precision": precision,
        "tf32_mode": cfg.tf32_mode,
        "atol": float(cfg.atol if cfg.atol is not None else tolerance),
        "rtol": float(cfg.rtol if cfg.rtol is not None else tolerance),
        "timeout": float(cfg.timeout),
        "compile_timeout": float(cfg.compile_timeout),
        "seed": cfg.seed,
        "num_correct_trials": cfg.num_correct_trials,
        "num_perf_trials": cfg.num_perf_trials,
        "num_perf_trials_by_level": trials_by_level(cfg),
        "num_warmup": cfg.num_warmup,
        "measure_performance": bool(cfg.measure_performance),
        "flush_l2": bool(cfg.flush_l2),
        "spare_sandboxes": cfg.spare_sandboxes,
        "reference_cache_gb": float(cfg.reference_cache_gb),
        "arch_list": arch_list(cfg.gpu_arch),
        "static_check": require_policy(cfg.static_check),
        "sandbox": require_choice(cfg, "sandbox", ("jail", "none")),
        "jail": jail_limits(cfg),
        "input_salt": str(cfg.input_salt) if cfg.input_salt is not None else secrets.token_hex(16),
        **{key: bool(cfg.use_hidden_tests if cfg.get(key) is None else cfg[key])
           for key in ("perturb_parameters", "shape_variants")},
        "torch_pch": {},  # set by use_precompiled_header
    }


JAIL_LIMIT_KEYS = ("host_memory_gb", "processes", "file_mb", "cpu_seconds", "log_mb", "job_mb", "tmp_mb",
                   "build_mb")


def jail_limits(cfg: DictConfig) -> dict | None:
    """The jail's limits (None with sandbox=none); refuses to go on when the jail cannot start here."""
    if cfg.sandbox == "none":
        return None
    limits = dict(cfg.jail_limits)
    unknown = sorted(set(limits) - set(JAIL_LIMIT_KEYS))
    if unknown:
        raise UserError(f"unknown jail_limits key(s) {unknown}: use {', '.join(JAIL_LIMIT_KEYS)}")
    for key in JAIL_LIMIT_KEYS:
        value = limits.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise UserError(f"jail_limits.{key}={value!r} must be a positive number")
    why_not = jail.available()
    if why_not:
        raise UserError(f"the kernel jail cannot start here: {why_not}. Untrusted kernels are not run "
                        "without it; pass sandbox=none to run them unconfined (recorded in every record)")
    memory_gb, mechanism = host_memory_limit(limits["host_memory_gb"], _cpu_only(cfg))
    return {"cgroup_memory_gb": memory_gb if mechanism.startswith("cgroup") else None,
            "max_host_memory_gb": memory_gb if mechanism.startswith("RLIMIT_DATA") else None,
            "host_memory_limit": mechanism,
            "max_processes": int(limits["processes"]),
            "max_file_mb": int(limits["file_mb"]), "max_cpu_seconds": int(limits["cpu_seconds"]),
            "log_mb": int(limits["log_mb"]), "job_mb": int(limits["job_mb"]), "tmp_mb": int(limits["tmp_mb"]),
            "build_mb": int(limits["build_mb"])}


def host_memory_limit(gb: float, cpu_only: bool) -> tuple[float, str]:
    """How the sandboxes' host memory is capped here, as recorded in every record: a memory cgroup per
    sandbox where the evaluator can create one, else RLIMIT_DATA on CPU runs (on CUDA runs it would
    count the driver's reservations), else not at all."""
    hierarchy, why_not = cgroups.locate()
    if hierarchy is not None:
        return gb, hierarchy.describe(gb)
    if cpu_only:
        return gb, f"RLIMIT_DATA {gb:g} GiB per sandbox (no cgroup: {why_not})"
    return gb, f"none: no cgroup ({why_not}), and RLIMIT_DATA would count the CUDA driver's reservations"


def _cpu_only(cfg: DictConfig) -> bool:
    return resolve_devices(cfg.device, 1)[0] == "cpu"


BACKENDS = ("cuda", "triton")


def run_backend(cfg: DictConfig, run_dir: Path) -> str:
    """backend= when given, else the backend the run's generation config recorded, else cuda."""
    if cfg.get("backend") is not None:
        return require_choice(cfg, "backend", BACKENDS)
    for name in RUN_CONFIG_NAMES:
        path = run_dir / name
        if path.is_file():
            try:
                recorded = OmegaConf.load(path).get("backend", "cuda")
            except Exception as exc:
                raise UserError(f"{path} is not readable YAML ({first_line(exc)}): fix it or pass backend=cuda|triton")
            if recorded not in BACKENDS:
                raise UserError(f"{path} records backend={recorded!r}, not one of {', '.join(BACKENDS)}: "
                                "pass backend= to override it")
            return recorded
    return "cuda"


def problems_for(cfg: DictConfig) -> list[Problem]:
    """The problems a config names: its problem_ids (upstream's key, which wins over subset), else its subset."""
    subset, ids = parse_subset(cfg.subset), parse_problem_ids(cfg.get("problem_ids"))
    if ids is not None and subset != (None, None):
        print(f"problem_ids={ids} chooses the problems; subset={list(subset)} is not used", file=sys.stderr)
    if cfg.dataset_src == "huggingface":
        from ..problems.hf_dataset import materialize_level

        return list_problems(cfg.level, materialize_level(cfg.dataset_name, cfg.level), subset, ids)
    return list_problems(cfg.level, cfg.problems_dir, subset, ids)


def _job(problem: Problem, sid: int, source: str, settings: dict, hidden: Path | None, cases: list,
         build_root: Path, device: str, mode: str) -> dict:
    """One sample's job: the kernel travels as the source text that was read and checked once."""
    # A build records the folder it was made in (the jail's /build, or the cache itself unjailed), and
    # torch rebuilds one moved elsewhere: jailed and unjailed runs keep separate builds.
    # The precompiled header's folders are among the build's arguments, which torch also compares.
    key = build_key(source, settings["arch_list"], f"precision={settings['precision']};sandbox={settings['sandbox']};"
                                                   f"pch={','.join(sorted(settings['torch_pch'].values()))}")
    return dict(settings, key=f"{problem.pid}_{sid}", mode=mode, device=device,
                num_perf_trials=perf_trials(settings, problem.level),
                problem_path=str(problem.path), hidden_path=str(hidden) if hidden else None,
                kernel_source=source, build_key=key, build_dir=str(build_dir(build_root, key)), cases=cases,
                warm_triton=settings.get("backend") == "triton" or defines_triton_kernels(source))


def case_list(settings: dict, hidden: Path | None) -> list[dict]:
    module = load_module(hidden) if hidden else None
    cases = correctness_cases(settings["num_correct_trials"], settings["seed"], module, settings["input_salt"])
    return [c.to_dict() for c in cases]


def read_kernel(path: Path, run_dir: Path) -> str:
    """The kernel file's text, read once; a symlink or a file outside the run folder is refused."""
    if path.is_symlink():
        raise KernelRefused(f"{path.name} is a symbolic link; kernel files must be regular files in the run folder")
    if path.resolve().parent != run_dir.resolve() or not path.is_file():
        raise KernelRefused(f"{path.name} is not a regular file inside {run_dir}")
    data = path.read_bytes()
    if len(data) > MAX_KERNEL_BYTES:
        raise KernelRefused(f"{path.name} is {len(data)} bytes, more than the {MAX_KERNEL_BYTES} allowed")
    return data.decode("utf-8", errors="replace")


MAX_KERNEL_BYTES = 4 << 20
# Statements that make a file code rather than a stray value or prose ("None", "I cannot do that.").
CODE_STATEMENTS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
                   ast.AnnAssign, ast.AugAssign, ast.If, ast.Try, ast.With, ast.For, ast.While)


def holds_code(source: str) -> bool:
    """Whether a kernel file holds an attempt at code: it names ModelNew, or it parses and imports,
    defines or assigns something. A file of the text `None`, of prose or of nothing is no kernel
    (missing_kernel); broken code that tried is a load error of its own."""
    if "ModelNew" in source:
        return True
    try:
        return any(isinstance(node, CODE_STATEMENTS) for node in ast.parse(source).body)
    except (SyntaxError, ValueError):
        return False


class KernelRefused(Exception):
    """A kernel file that is not evaluated at all (recorded as refused_kernel)."""


class Recorder:
    """Turns a judge's raw record into the stored one: run context, static-check policy, atomic write."""

    def __init__(self, store: ResultStore, context: dict, policy: str):
        self.store, self.context, self.policy = store, context, policy
        self.findings: dict[str, list] = {}
        self.kernel_digests: dict[str, str] = {}  # sha256 of each kernel source read, by key

    def save_fingerprint(self, device: str, fingerprint: dict) -> None:
        """Where and how this run's kernels were timed, beside the results (eval_fingerprint.json)."""
        path = self.store.path.parent / FINGERPRINT_FILE
        current = read_json(path, "fingerprint file") if path.is_file() else {}
        current[device] = fingerprint
        write_json_atomic(path, current)

    def save(self, problem: Problem, sid: int, judged: dict, **context) -> dict:
        key = f"{problem.pid}_{sid}"
        digest = {"kernel_sha256": self.kernel_digests[key]} if key in self.kernel_digests else {}
        record = new_record(problem.level, problem.pid, sid, problem.filename, judged,
                            {**self.context, "problem_sha256": problem.source_sha256, **digest, **context})
        if key in self.findings:
            record = apply_policy(record, self.findings[key], self.policy)
        self.store.put(key, record)
        return record


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


def evaluate_run(cfg: DictConfig) -> int:
    settings = settings_from_config(cfg)
    run_dir = Path(cfg.runs_dir) / safe_run_name(cfg.run_name)
    if not run_dir.is_dir():
        raise UserError(f"run folder {run_dir} not found (check run_name= and runs_dir=)")
    settings["backend"] = run_backend(cfg, run_dir)
    fill_problem_dirs(cfg, run_dir)  # an imported corpus's own problems and hidden tests
    problems = problems_for(cfg)
    hidden_dir = (Path(cfg.hidden_tests_dir) if cfg.hidden_tests_dir else DEFAULT_HIDDEN_DIR).resolve()
    hidden = {p.pid: hidden_path(cfg.level, p.pid, hidden_dir) if cfg.use_hidden_tests else None for p in problems}
    missing_hidden = [pid for pid, path in hidden.items() if path is not None and not path.is_file()]
    if missing_hidden:
        raise UserError(f"no hidden tests for level {cfg.level} problem(s) {missing_hidden[:10]} in {hidden_dir} "
                        f"(run scripts/generate_hidden_inputs.py --level {cfg.level})")
    # Ray places each judge on a GPU of the cluster; the driver itself may have none.
    devices = resolve_devices(cfg.device, cfg.num_gpu_devices) if cfg.eval_mode == "local" else \
        ["cpu" if cfg.device == "cpu" else "cuda:0"]
    store = ResultStore(run_dir / result_filename(cfg.use_hidden_tests))
    build_root = Path(cfg.kernel_eval_build_dir).resolve()
    toolchain = use_precompiled_header(cfg, settings, build_root)
    context = {"device": devices[0], "precision": settings["precision"],
               "tf32_mode": settings["tf32_mode"], "atol": settings["atol"], "rtol": settings["rtol"],
               "use_hidden_tests": bool(cfg.use_hidden_tests), "seed": settings["seed"],
               "input_salt": settings["input_salt"], "sandbox": settings["sandbox"], "backend": settings["backend"],
               "host_memory_limit": (settings["jail"] or {}).get("host_memory_limit", "none: sandbox=none")}
    recorder = Recorder(store, context, settings["static_check"])

    jobs, skipped = [], 0
    for problem in problems:
        cases = None
        for sid in range(cfg.num_samples):
            key = f"{problem.pid}_{sid}"
            path = kernel_path(run_dir, cfg.level, problem.pid, sid)
            if store.has(key, problem.source_sha256):
                skipped += 1
            elif not (path.is_file() or path.is_symlink()):
                recorder.save(problem, sid, {"eval_status": "missing_kernel", "error": f"{path.name} not found"})
            else:
                try:
                    source = read_kernel(path, run_dir)
                except KernelRefused as exc:
                    recorder.save(problem, sid, {"eval_status": "refused_kernel", "error": str(exc)})
                    continue
                recorder.kernel_digests[key] = kernel_digest(source)
                if not holds_code(source):
                    recorder.save(problem, sid, {"eval_status": "missing_kernel",
                                                 "error": f"{path.name} holds no code: {source.strip()[:80]!r}"})
                    continue
                if not _screen(recorder, problem, sid, source, settings):
                    cases = cases or case_list(settings, hidden[problem.pid])
                    jobs.append((problem, sid, _job(problem, sid, source, settings, hidden[problem.pid], cases,
                                                    build_root, devices[0], "eval")))
    print(f"{len(jobs)} kernel(s) to evaluate, {skipped} already done, on {devices[0]} x{len(devices)}; "
          f"results -> {store.path}")
    if settings["jail"]:
        cgroups.remove_left_behind(cgroups.owner_tag())  # what a killed evaluator left
    making = _make_precompiled_header(toolchain, jobs, len(devices))
    try:
        _evaluate_jobs(jobs, settings, devices, build_root, recorder, cfg)
    finally:
        if making is not None:
            making.join()  # a header left half made would only be made again, but its compiler would linger
        if settings["jail"]:
            cgroups.remove_left_behind(cgroups.owner_tag())  # what a killed judge of this run left
    if cfg.use_hidden_tests and cfg.fill_standard_file:  # an interrupted run fills it when resumed
        fill_standard_file(run_dir / result_filename(False), store.records, store.path.name)
    if cfg.baseline_file:
        warn_if_incomparable(run_dir / FINGERPRINT_FILE, Path(cfg.baseline_file))
    return summarize(store, problems, cfg.num_samples)


def use_precompiled_header(cfg: DictConfig, settings: dict, build_root: Path) -> pch.Toolchain | None:
    """With torch_pch (local mode), point every C++ build at this toolchain's precompiled torch header
    (settings["torch_pch"]) and mount its folder read-only in the jail. None when there is none to use."""
    if not cfg.torch_pch or cfg.eval_mode != "local":
        return None
    # The compiler as the builds will find it: the jail passes them no CXX.
    try:
        toolchain = pch.Toolchain(build_root / "pch", jail.allowed_environment(os.environ) if settings["jail"] else None)
    except Exception as exc:  # no ninja or no compiler here: builds will say so themselves
        print(f"warning: no precompiled torch header ({first_line(exc)})", file=sys.stderr)
        return None
    if not toolchain.usable:
        return None
    toolchain.folder.mkdir(parents=True, exist_ok=True)  # a jail can only mount what exists
    settings["torch_pch"] = toolchain.include_folders()
    if settings["jail"]:
        settings["jail"] = dict(settings["jail"], readonly_paths=[str(toolchain.folder)])
    return toolchain


def _make_precompiled_header(toolchain: pch.Toolchain | None, jobs: list, num_judges: int) -> threading.Thread | None:
    """Make the header beside the builds when enough pending kernels build a C++ extension for it to pay
    for itself (about two builds' worth of CPU, once per machine). A build that starts before it is
    ready reads torch's header, as it would without it."""
    if toolchain is None or not pch.worth_making(job["kernel_source"] for _, _, job in jobs
                                                 if not outcome_marker(job).is_file()):
        return None
    def make() -> None:  # a build like the kernels' (lower_build_priority)
        lower_build_priority(build_cpus(num_judges))
        toolchain.ensure()

    thread = threading.Thread(target=make, name="torch-pch", daemon=True)
    thread.start()
    return thread


def _evaluate_jobs(jobs: list, settings: dict, devices: list, build_root: Path, recorder: Recorder,
                   cfg: DictConfig) -> None:
    if not jobs:
        return
    if cfg.eval_mode == "ray":
        from .ray_cluster import dispatch_on_ray

        progress = Progress(len(jobs), cfg.verbose, building=bool(cfg.build_cache))
        try:
            dispatch_on_ray(jobs, settings, devices[0], build_root, recorder, progress, cfg.ray_address,
                            build=bool(cfg.build_cache), ship=bool(cfg.ray_ship_builds))
        finally:
            progress.close()
    else:
        builder = Precompiler(jobs, settings, build_root, cfg.num_cpu_workers, len(devices)) if cfg.build_cache else None
        dispatch(jobs, settings, devices, build_root, recorder, cfg.verbose, builder)


def warn_if_incomparable(kernels_file: Path, baseline_file: Path) -> None:
    """Loud warnings when the kernels and the baseline were timed on different GPUs, software or
    settings (TF32 flags differ on purpose between baselines, so they are not compared)."""
    from ..measure.fingerprints import compare_fingerprints

    baseline = read_json(baseline_file, "baseline file").get("fingerprint")
    kernels = read_json(kernels_file, "fingerprint file") if kernels_file.is_file() else {None: None}
    for device, fingerprint in kernels.items():
        for problem in compare_fingerprints(fingerprint, baseline, ignore=("precision_flags",)):
            print(f"WARNING: kernels ({device}) and baseline {baseline_file.name} are not comparable: {problem}",
                  file=sys.stderr)


def _screen(recorder: Recorder, problem: Problem, sid: int, source: str, settings: dict) -> bool:
    """Static checks of the kernel's source; True when the policy rejects it without running it."""
    if settings["static_check"] == "off":
        return False
    findings = check_source(source, settings["precision"], settings["backend"])
    recorder.findings[f"{problem.pid}_{sid}"] = findings
    if not rejecting_codes(findings, settings["static_check"]):
        return False
    recorder.save(problem, sid, {"eval_status": "not_run", "error": "rejected by the static checks, not run"})
    return True


class Precompiler:
    """Builds the pending kernels on CPU threads, each build in its own (jailed) sandbox, once per build
    key (identical sources share one build), and hands each kernel on as soon as its build is done:
    the judges evaluate while nvcc still builds the rest."""

    def __init__(self, jobs: list, settings: dict, build_root: Path, workers: int, num_judges: int):
        self.judge = Judge(settings, "cpu", child_environment(settings, build_root, visible_devices=""))
        self.pool = ThreadPoolExecutor(max_workers=workers, initializer=lower_build_priority,
                                       initargs=(build_cpus(num_judges),))
        self.waiting: dict = {}  # build future -> the jobs it builds for
        for group in by_build(jobs):
            self.waiting[self.pool.submit(build_once, self.judge, group[0][2])] = group

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


def dispatch(jobs: list, settings: dict, devices: list[str], build_root: Path, recorder: Recorder,
             verbose: bool, builder: Precompiler | None = None) -> None:
    """One judge process per device, pulling from one queue. With a `builder`, each kernel joins the
    queue when its build is done, and a kernel whose build failed is recorded without a judge."""
    ctx = mp.get_context("spawn")
    job_queue, result_queue = ctx.Queue(), ReportQueue(ctx)
    by_key = {job["key"]: (problem, sid, job) for problem, sid, job in jobs}
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
            if message[0] == "start":
                in_flight[message[1]] = message[2]
                continue
            if message[0] == "fingerprint":
                recorder.save_fingerprint(devices[message[1]], message[2])
                continue
            _, worker_id, key, judged = message
            in_flight.pop(worker_id, None)
            problem, sid, job = by_key.pop(key)
            judged.setdefault("build_dir", job["build_dir"])
            record = recorder.save(problem, sid, judged, device=devices[worker_id])
            progress.update(key, record)
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


def _hand_on_builds(builder: Precompiler, job_queue, by_key: dict, recorder: Recorder, progress, judges: int) -> None:
    """Queue the kernels whose builds just ended; record those that did not compile."""
    ready = []
    for problem, sid, job, built in builder.finished():
        if failed_to_build(problem, sid, job, built, recorder, progress):
            by_key.pop(job["key"])
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
            judged = {"eval_status": "harness_error", "error": f"judge process died (exit {process.exitcode})"}
            progress.update(key, recorder.save(problem, sid, judged))
            if by_key:
                workers[worker_id] = start(worker_id)


def summarize(store: ResultStore, problems: list[Problem], num_samples: int) -> int:
    keys = [f"{p.pid}_{s}" for p in problems for s in range(num_samples)]
    records = [store.records[k] for k in keys if k in store.records]
    statuses: dict[str, int] = {}
    for record in records:
        statuses[record["eval_status"]] = statuses.get(record["eval_status"], 0) + 1
    correct = statuses.get("correct", 0)
    print(f"done: {correct}/{len(keys)} correct; " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    return 0
