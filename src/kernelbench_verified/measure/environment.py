"""The environment fingerprint of timings (GPU model, driver, CUDA, torch, precision flags, timing
settings, date), collected the same way for kernels and baselines so the two can be compared."""

from __future__ import annotations

import platform
import subprocess
from datetime import datetime, timezone

import torch

from .timing import precision_flags, set_tf32_mode


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
