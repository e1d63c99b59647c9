"""Baseline timings of the reference models: the modes, timing one problem, and the fingerprint of a
mode's file.

A baseline file `results/timing/{HW}/{mode}.json` is `{"level1": {"19_ReLU.py": {stats}, ...}, ...}`
(the KernelBench format) plus two keys that readers iterating levels never look at: "fingerprint"
(where and how it was measured) and "failures" (problems whose reference raised, per level). Keeping
failures out of the level maps means every level entry has a "mean".

Each problem is timed exactly as the evaluator times a kernel: the model built under `seed`, the
inputs of the first correctness trial (seed*1000, scale 1.0), one untimed call (the evaluator's
correctness trial), the call's peak memory (timing.peak_memory, as the kernel's process measures it),
then `time_function` under no_grad.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from types import ModuleType

import torch

from ..config import perf_trials
from ..problems.inputs import PRECISIONS, Case, build_model, case_inputs
from ..problems.load import load_module
from ..measure.environment import fingerprint_for
from ..measure.memory import CALL_ABOVE_RESIDENT
from ..measure.timing import peak_memory, set_tf32_mode, time_function


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
    entry["peak_memory"], entry["peak_memory_method"] = int(memory["call_peak"]), memory["method"]
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


def timing_path_of(mode_name: str, settings: dict) -> str:
    """How a mode is timed: `timing_path` for the eager modes; a compile mode always in a plain process,
    since torch.compile is no setting of a kernel's evaluation (docs/baselines.md)."""
    return "process" if MODES[mode_name].compile else settings.get("timing_path", "process")


def mode_fingerprint(mode_name: str, device: torch.device, settings: dict) -> dict:
    """The fingerprint of a baseline mode's file."""
    mode = MODES[mode_name]
    return dict(fingerprint_for(device, mode.tf32, mode.precision, settings, mode_name), compile=mode.compile,
                timing_path=timing_path_of(mode_name, settings), peak_memory=CALL_ABOVE_RESIDENT)


def time_job(job: dict, settings: dict, device, place=lambda mode: None):
    """(mode, entry) for each of the job's modes, as each is timed on `device` (a torch.device);
    `place(mode)` is called before each (baseline.run pins eager modes to one CPU there)."""
    try:
        module = load_module(job["path"])
    except Exception as exc:
        module, error = None, f"problem file failed to import: {type(exc).__name__}: {exc}"[:1000]
    level_settings = dict(settings, num_perf_trials=perf_trials(settings, job["level"]))
    for mode in job["modes"]:
        place(mode)
        yield mode, measure_safely(module, mode, level_settings, device) if module else {"error": error, "seconds": 0.0}


def finish_entry(entry: dict, job: dict, device: str, fingerprint: dict) -> dict:
    """The stored entry: the measurement, where it ran, and the digest of the file it timed."""
    hardware = fingerprint["gpu_name"] or f"cpu ({fingerprint['host_cpu']})"
    return dict(entry, hardware=hardware, device=device, problem_sha256=job["problem_sha256"])
