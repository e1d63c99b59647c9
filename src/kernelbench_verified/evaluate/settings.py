"""An evaluation's settings: every eval key checked once, and the plain settings judges and sandboxes use.

`settings_from_config` is the one place the eval config's keys are read for the evaluator; what it
returns travels to every judge and build worker (a process queue, Ray) as it is.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from . import cgroups, jail
from .build import arch_list
from ..config import require_choice, require_int, resolve_devices, trials_by_level
from ..errors import UserError, first_line
from ..measure.correctness import DEFAULT_TOLERANCE
from ..measure.timing import TF32_MODES
from ..problems.inputs import PRECISIONS
from ..results import RUN_CONFIG_NAMES
from ..static.policy import require_policy


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
