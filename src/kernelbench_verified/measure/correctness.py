"""Comparing a kernel's outputs with the reference's: runs only in the judge."""

from __future__ import annotations

import torch

DEFAULT_TOLERANCE = {"fp32": 1e-3, "fp16": 1e-2, "bf16": 1e-2}


class ReferenceError(Exception):
    """The reference itself failed or produced non-finite values: a harness problem, not a verdict."""


def check_reference(outputs: list) -> None:
    for i, ref in enumerate(outputs):
        if isinstance(ref, torch.Tensor) and ref.is_floating_point() and not bool(torch.isfinite(ref).all()):
            raise ReferenceError(f"reference output {i} contains NaN or Inf")


def compare_tensor(ref: torch.Tensor, out: torch.Tensor, atol: float, rtol: float) -> dict:
    """Verdict for one tensor: shape, finiteness, then |out - ref| <= atol + rtol * |ref|."""
    if tuple(out.shape) != tuple(ref.shape):
        return {"passed": False, "reason": f"shape mismatch: got {list(out.shape)}, expected {list(ref.shape)}"}
    if out.device != ref.device:
        out = out.to(ref.device)
    if not ref.is_floating_point():
        mismatches = int((out.to(ref.dtype) != ref).sum())
        return {"passed": mismatches == 0, "mismatches": mismatches,
                "reason": None if mismatches == 0 else f"{mismatches} of {ref.numel()} values differ"}
    out = out.to(ref.dtype) if out.dtype != ref.dtype else out
    if ref.numel() == 0:
        return {"passed": True, "max_abs_diff": 0.0, "mean_abs_diff": 0.0}
    finite = torch.isfinite(out)
    nonfinite = int(finite.numel() - finite.sum())
    diff = (out.float() - ref.float()).abs_()
    bad = diff > (atol + rtol * ref.float().abs())
    bad |= ~finite
    diff.nan_to_num_(nan=float("inf"))
    result = {
        "max_abs_diff": float(diff.max()),
        "mean_abs_diff": float(diff.mean()),
        "mismatches": int(bad.sum()),
        "nonfinite": nonfinite,
    }
    result["passed"] = result["mismatches"] == 0
    if not result["passed"]:
        result["reason"] = (f"{result['mismatches']} of {ref.numel()} values outside atol={atol} rtol={rtol}"
                            + (f" ({nonfinite} NaN/Inf)" if nonfinite else ""))
    return result


def compare_outputs(refs: list, outs: list, atol: float, rtol: float) -> dict:
    """Element-by-element comparison of (possibly tuple) outputs; summary of the worst element."""
    if len(outs) != len(refs):
        return {"passed": False, "reason": f"got {len(outs)} outputs, expected {len(refs)}"}
    results = []
    for i, (ref, out) in enumerate(zip(refs, outs)):
        if not isinstance(ref, torch.Tensor):
            same = out == ref
            results.append({"passed": same, "reason": None if same else f"output {i}: got {out!r}, expected {ref!r}"})
        elif not isinstance(out, torch.Tensor):
            results.append({"passed": False, "reason": f"output {i} is not a tensor"})
        else:
            results.append(compare_tensor(ref, out, atol, rtol))
    failed = [r for r in results if not r["passed"]]
    summary = dict(failed[0] if failed else max(results, key=lambda r: r.get("max_abs_diff", 0.0)))
    summary["passed"] = not failed
    return summary
