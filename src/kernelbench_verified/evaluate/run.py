"""Evaluating a run folder of kernels: plan, build, dispatch to judges, record.

This is what scripts/eval_from_generations.py calls. Each kernel file is read once, checked statically
and made a job (job.Job); the jobs go to the build stage and the judges of local mode (local.py) or of
a Ray cluster (ray_cluster.py); every finished record is written atomically at once (Recorder), and a
re-run skips samples that already have one.
"""

from __future__ import annotations

import ast
import os
import sys
import threading
from pathlib import Path

from omegaconf import DictConfig

from . import cgroups, jail, pch
from .build import outcome_marker
from .job import Job
from .placement import build_cpus, lower_build_priority
from .local import Precompiler, Progress, dispatch
from .record import failure
from .settings import run_backend, settings_from_config
from ..config import existing_run_folder, parse_problem_ids, parse_subset, resolve_devices
from ..errors import UserError, first_line
from ..problems.hidden_tests import DEFAULT_HIDDEN_DIR, hidden_path
from ..problems.inputs import correctness_cases
from ..problems.load import Problem, list_problems, load_module
from ..run_problems import fill_problem_dirs
from ..results import ResultStore, fill_standard_file, kernel_digest, new_record, read_json, write_json_atomic
from ..static.check import check_source, defines_triton_kernels
from ..static.policy import apply_policy, rejecting_codes
from ..verdicts import Status


FINGERPRINT_FILE = "eval_fingerprint.json"


def kernel_path(run_dir: Path, level: int, pid: int, sid: int) -> Path:
    return run_dir / f"level_{level}_problem_{pid}_sample_{sid}_kernel.py"


def result_filename(use_hidden_tests: bool) -> str:
    return "eval_results_hidden.json" if use_hidden_tests else "eval_results.json"


def problems_for(cfg: DictConfig) -> list[Problem]:
    """The problems a config names: its problem_ids (upstream's key, which wins over subset), else its subset."""
    subset, ids = parse_subset(cfg.subset), parse_problem_ids(cfg.get("problem_ids"))
    if ids is not None and subset != (None, None):
        print(f"problem_ids={ids} chooses the problems; subset={list(subset)} is not used", file=sys.stderr)
    if cfg.dataset_src == "huggingface":
        from ..problems.hf_dataset import materialize_level

        return list_problems(cfg.level, materialize_level(cfg.dataset_name, cfg.level), subset, ids)
    return list_problems(cfg.level, cfg.problems_dir, subset, ids)


def job_for(problem: Problem, sid: int, source: str, settings: dict, hidden: Path | None, cases: list,
            build_root: Path, device: str) -> Job:
    """One sample's job: the kernel travels as the source text that was read and checked once."""
    return Job.for_sample(f"{problem.pid}_{sid}", source, problem.path, problem.level, hidden, cases, settings,
                          build_root, device, settings.get("backend") == "triton" or defines_triton_kernels(source))


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


def evaluate_run(cfg: DictConfig) -> int:
    settings = settings_from_config(cfg)
    run_dir = existing_run_folder(cfg)
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
                recorder.save(problem, sid, failure(Status.MISSING_KERNEL, f"{path.name} not found"))
            else:
                try:
                    source = read_kernel(path, run_dir)
                except KernelRefused as exc:
                    recorder.save(problem, sid, failure(Status.REFUSED_KERNEL, str(exc)))
                    continue
                recorder.kernel_digests[key] = kernel_digest(source)
                if not holds_code(source):
                    recorder.save(problem, sid, failure(Status.MISSING_KERNEL,
                                                         f"{path.name} holds no code: {source.strip()[:80]!r}"))
                    continue
                if not _screen(recorder, problem, sid, source, settings):
                    cases = cases or case_list(settings, hidden[problem.pid])
                    jobs.append((problem, sid, job_for(problem, sid, source, settings, hidden[problem.pid], cases,
                                                       build_root, devices[0])))
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
    root = Path(cfg.torch_pch_dir) if cfg.torch_pch_dir else build_root / "pch"
    # The compiler as the builds will find it: the jail passes them no CXX.
    try:
        toolchain = pch.Toolchain(root, jail.allowed_environment(os.environ) if settings["jail"] else None)
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
    if toolchain is None or not pch.worth_making(job.kernel_source for _, _, job in jobs
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
    recorder.save(problem, sid, failure(Status.NOT_RUN, "rejected by the static checks, not run"))
    return True


def summarize(store: ResultStore, problems: list[Problem], num_samples: int) -> int:
    keys = [f"{p.pid}_{s}" for p in problems for s in range(num_samples)]
    records = [store.records[k] for k in keys if k in store.records]
    statuses: dict[str, int] = {}
    for record in records:
        statuses[record["eval_status"]] = statuses.get(record["eval_status"], 0) + 1
    correct = statuses.get("correct", 0)
    print(f"done: {correct}/{len(keys)} correct; " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    return 0
