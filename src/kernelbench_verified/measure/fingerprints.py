"""Comparing environment fingerprints of timings (kernels vs baseline) without importing torch, so the
leaderboard can use it too."""

from __future__ import annotations

from typing import Iterable

# What compare_fingerprints checks: group name -> (fields, how a person calls it).
FINGERPRINT_GROUPS = {
    "gpu": (("device", "gpu_model_id"), "GPU"),
    "torch": (("torch",), "torch version"),
    "cuda": (("cuda",), "CUDA version"),
    "precision": (("precision",), "precision (dtype)"),
    "precision_flags": (("precision_flags",), "TF32 / matmul-precision flags"),
    "timing": (("timing",), "timing settings"),
}


def compare_fingerprints(a: dict | None, b: dict | None, ignore: Iterable[str] = (),
                         names: tuple[str, str] = ("kernels", "baseline")) -> list[str]:
    """Human-readable differences between two fingerprints that make their timings incomparable.

    `ignore` names groups of FINGERPRINT_GROUPS to skip (e.g. "precision_flags" when a TF32
    baseline is compared with kernels on purpose). A missing fingerprint is itself reported."""
    missing = [name for name, fp in zip(names, (a, b)) if not fp]
    if missing:
        return [f"no environment fingerprint for the {' and '.join(missing)} (measured by an older version): "
                f"cannot check they were measured on the same GPU and precision settings"]
    problems = []
    for group, (fields, label) in FINGERPRINT_GROUPS.items():
        if group in ignore:
            continue
        left = {f: a.get(f) for f in fields}
        right = {f: b.get(f) for f in fields}
        if left != right:
            problems.append(f"{label} differ: {names[0]} {_describe(left)} vs {names[1]} {_describe(right)}")
    return problems


def _describe(values: dict) -> str:
    if len(values) == 1:
        (value,) = values.values()
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"
        return str(value)
    return ", ".join(f"{k}={v}" for k, v in values.items() if v is not None)
