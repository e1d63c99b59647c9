"""Baseline timings of the reference models: the modes, timing one problem, the environment
fingerprint, and reading baseline files.

A baseline file `results/timing/{HW}/{mode}.json` is `{"level1": {"19_ReLU.py": {stats}, ...}, ...}`
(the KernelBench format) plus two keys that readers iterating levels never look at: "fingerprint"
(where and how it was measured) and "failures" (problems whose reference raised, per level). Keeping
failures out of the level maps means every level entry has a "mean".

Each problem is timed exactly as the evaluator times a kernel: the model built under `seed`, the
inputs of the first correctness trial (seed*1000, scale 1.0), one untimed call (the evaluator's
correctness trial), peak memory over one call, then `time_function` under no_grad.
"""

from __future__ import annotations

import gc
import platform
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from types import ModuleType

import torch

from .inputs import PRECISIONS, Case, build_model, case_inputs
from .timing import peak_memory, precision_flags, set_tf32_mode, time_function


@dataclass(frozen=True)
class Mode:
    """How one baseline is measured: TF32 setting (timing.set_tf32_mode), dtype, torch.compile mode."""

    tf32: str
    precision: str = "fp32"
    compile: str | None = None


MODES = {
    "baseline_time_torch": Mode("default"),  # PyTorch's defaults, what KernelBench measured
    "baseline_time_torch_tf32": Mode("high"),
    "baseline_time_torch_fp32_ieee": Mode("ieee"),
    "baseline_time_torch_bf16": Mode("default", "bf16"),
    "baseline_time_torch_compile_inductor_default": Mode("default", compile="default"),
    "baseline_time_torch_compile_inductor_max_autotune": Mode("default", compile="max-autotune"),
    "baseline_time_torch_compile_inductor_default_tf32": Mode("high", compile="default"),
    "baseline_time_torch_compile_inductor_max_autotune_tf32": Mode("high", compile="max-autotune"),
}
DEFAULT_MODES = ("baseline_time_torch", "baseline_time_torch_tf32", "baseline_time_torch_fp32_ieee",
                 "baseline_time_torch_bf16")
COMPILE_PREFIX = "baseline_time_torch_compile_"
STAT_KEYS = ("mean", "std", "min", "max", "median", "num_trials")


# ---------------------------------------------------------------- timing one problem

def measure(module: ModuleType, mode_name: str, settings: dict, device: torch.device) -> dict:
    """Stats (ms), peak_memory (bytes, -1 off CUDA) and seconds of one reference under one mode."""
    mode = MODES[mode_name]
    started = time.monotonic()
    set_tf32_mode(mode.tf32)
    dtype = PRECISIONS[mode.precision]
    model = build_model(module.Model, module, settings["seed"], device, dtype)
    if mode.compile:
        model = torch.compile(model, mode=mode.compile)
    inputs = case_inputs(Case("trial_0", settings["seed"] * 1000), module, None, device, dtype)
    with torch.no_grad():
        model(*inputs)  # the evaluator's first correctness trial, on the same inputs
        memory = peak_memory(lambda: model(*inputs), device)
        stats = time_function(lambda: model(*inputs), device, settings["num_perf_trials"],
                              settings["num_warmup"], settings["flush_l2"])
    entry = {key: stats[key] for key in STAT_KEYS}
    entry["peak_memory"] = int(memory["peak_allocated"])
    entry["seconds"] = time.monotonic() - started
    return entry


def measure_safely(module: ModuleType, mode_name: str, settings: dict, device: torch.device) -> dict:
    """measure(), with any exception (out-of-memory included) turned into {"error": ...}."""
    started = time.monotonic()
    try:
        return measure(module, mode_name, settings, device)
    except Exception as exc:
        error = f"{type(exc).__name__}: {str(exc).strip()[:1000]}"
    finally:
        release(device, MODES[mode_name])
    return {"error": error, "seconds": time.monotonic() - started}


def release(device: torch.device, mode: Mode) -> None:
    """Free the problem's tensors (and compiled graphs) before the next one."""
    if mode.compile:
        torch._dynamo.reset()
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- fingerprint

def gpu_model_id(device: torch.device) -> str:
    """Identifies the GPU model and configuration, never the individual card (no UUID)."""
    props = torch.cuda.get_device_properties(device)
    return f"{props.name} / sm_{props.major}{props.minor} / {props.total_memory} B / {props.multi_processor_count} SMs"


def driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader", "-i", "0"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def timing_settings(settings: dict) -> dict:
    return {"num_trials": settings["num_perf_trials"],
            "num_trials_by_level": settings.get("num_perf_trials_by_level", {}),
            "num_warmup": settings["num_warmup"], "flush_l2": bool(settings["flush_l2"]),
            "synchronisation": "device-wide"}


def collect_fingerprint(device: torch.device, timing: dict, mode: str | None = None,
                        precision: str = "fp32") -> dict:
    """Where and how timings are taken: GPU model, driver, CUDA, torch, the precision flags in force
    now, timing settings, date. Call it after set_tf32_mode (the evaluator can call it too)."""
    cuda = device.type == "cuda"
    return {
        "gpu_name": torch.cuda.get_device_name(device) if cuda else None,
        "gpu_model_id": gpu_model_id(device) if cuda else None,
        "driver": driver_version() if cuda else None,
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "mode": mode,
        "precision": precision,
        "precision_flags": precision_flags(),
        "timing": dict(timing),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "device": "cuda" if cuda else "cpu",
        "host_cpu": platform.machine() if not cuda else None,
    }


def fingerprint_for(device: torch.device, tf32_mode: str, precision: str, settings: dict,
                    mode: str | None = None) -> dict:
    """The fingerprint of timings taken under `tf32_mode` with `settings` (num_perf_trials, num_warmup,
    flush_l2: the evaluator's settings dict works as it is). The flags are set, read back from torch,
    then restored, so calling this changes nothing in the caller's process."""
    previous = precision_flags()
    set_tf32_mode(tf32_mode)
    try:
        return collect_fingerprint(device, timing_settings(settings), mode, precision)
    finally:
        torch.set_float32_matmul_precision(previous["float32_matmul_precision"])
        torch.backends.cuda.matmul.allow_tf32 = previous["cuda_matmul_allow_tf32"]
        torch.backends.cudnn.allow_tf32 = previous["cudnn_allow_tf32"]


def mode_fingerprint(mode_name: str, device: torch.device, settings: dict) -> dict:
    """The fingerprint of a baseline mode's file."""
    mode = MODES[mode_name]
    return dict(fingerprint_for(device, mode.tf32, mode.precision, settings, mode_name), compile=mode.compile)
