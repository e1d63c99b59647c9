"""Running every reference model under the hidden distributions: timing, memory, finiteness, degenerate
(constant) outputs and outputs that rounding alone moves. Used by scripts/validate_problems.py and by the
hidden-test generator."""

from __future__ import annotations

import time
from pathlib import Path

import torch

from .hidden_tests import HIDDEN_DISTRIBUTIONS, hidden_seed
from .inputs import build_model, seeded_inputs
from .load import Problem, load_module
from ..config import hardware_label as label_of
from ..measure.correctness import DEFAULT_TOLERANCE, compare_outputs, reference_outputs
from ..measure.timing import peak_memory, time_function

# A reference is degenerate when one constant lies within this absolute distance of every output
# value under every distribution: returning that constant would pass the fp32 check (atol 1e-3).
CONSTANT_TOLERANCE = 1e-3
# A reference is ill-conditioned when its floating-point inputs, each changed by a relative ROUNDING_NOISE
# (a few fp32 roundings), move more than ILL_CONDITIONED_SHARE of its output values beyond the fp32
# tolerance: only a kernel repeating the reference's arithmetic bit for bit passes, and an honest one
# that sums in another order fails. Level 3's EfficientNetB2 (training-mode BatchNorm over two values
# per channel) moves 1983 of its 2000 outputs on the CPU (validate_problems.py --level 3 --pid 24
# --device cpu). The share keeps out the few values such noise flips at a threshold or a near-tie of
# an argmax, which a kernel computing the same comparison on the same inputs does not flip.
ROUNDING_NOISE = 2.0 ** -20
ILL_CONDITIONED_SHARE = 0.01


def _summary(output) -> dict:
    outputs = list(output) if isinstance(output, (tuple, list)) else [output]
    tensors = [o for o in outputs if isinstance(o, torch.Tensor)]
    floats = [t.float() for t in tensors if t.is_floating_point() or t.dtype == torch.int64]
    finite = all(bool(torch.isfinite(t).all()) for t in floats)
    if not floats or not finite:
        return {"finite": finite}
    lo = min(float(t.min()) for t in floats)
    hi = max(float(t.max()) for t in floats)
    return {"finite": True, "min": lo, "max": hi, "all_zero": lo == 0.0 == hi,
            "shape": [list(t.shape) for t in tensors], "dtype": [str(t.dtype) for t in tensors]}


def probe_problem(problem: Problem, device: torch.device, distributions=HIDDEN_DISTRIBUTIONS,
                  timing_trials: int = 3, rounding: bool = True) -> dict:
    """The reference under each distribution, in training mode as the judge runs it; with `rounding`,
    how far rounding-sized changes of its inputs move its outputs (rounding_check)."""
    module = load_module(problem.path)
    started = time.monotonic()
    model = build_model(module.Model, module, 42, device, torch.float32)
    report = {"problem": problem.filename, "init_seconds": time.monotonic() - started, "distributions": {}}
    seed = hidden_seed(problem.level, problem.pid)
    for i, (name, scale) in enumerate(distributions):
        entry: dict = {"scale": scale}
        try:
            with torch.no_grad():
                inputs = seeded_inputs(module, seed + i, scale, device)
                entry.update(_summary(model(*inputs)))
                if timing_trials:
                    entry["memory"] = peak_memory(lambda: model(*inputs), device)
                    entry["forward_ms"] = time_function(lambda: model(*inputs), device, timing_trials, 1,
                                                        flush_l2=False)["median"]
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        inputs = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
        report["distributions"][name] = entry
    if rounding:
        report["rounding"] = rounding_check(module, device, seed)
    report["degenerate"] = degenerate_reason(report["distributions"], report.get("rounding"))
    return report


def rounding_check(module, device: torch.device, seed: int) -> dict:
    """The judge's comparison of two models built alike, one called on seeded inputs (D1's) and the other
    on those inputs each times (1 + ROUNDING_NOISE x a standard normal draw), drawing the same random
    numbers: `moved` is the share of output values outside the fp32 tolerance, `passed` False above
    ILL_CONDITIONED_SHARE. `checked` False when the reference
    takes no floating-point tensor or fails (the distributions then say why)."""
    try:
        inputs = seeded_inputs(module, seed, 1.0, device)
        floating = [isinstance(x, torch.Tensor) and x.is_floating_point() for x in inputs]
        if not any(floating):
            return {"checked": False, "reason": "no floating-point input"}
        generator = torch.Generator(device).manual_seed(seed)
        nudged = [x * (1 + ROUNDING_NOISE * torch.randn(x.shape, generator=generator, device=x.device,
                                                         dtype=x.dtype)) if is_float else x
                  for x, is_float in zip(inputs, floating)]
        outputs = [reference_outputs(build_model(module.Model, module, 42, device, torch.float32), given, seed)
                   for given in (inputs, nudged)]
    except Exception as exc:  # the distributions' entries say what fails
        return {"checked": False, "reason": f"{type(exc).__name__}: {str(exc)[:300]}"}
    tolerance = DEFAULT_TOLERANCE["fp32"]
    values = sum(o.numel() for o in outputs[0] if isinstance(o, torch.Tensor)) or 1
    mismatches = sum(compare_outputs([a], [b], tolerance, tolerance).get("mismatches", 0)
                     for a, b in zip(outputs[0], outputs[1]))
    return {"checked": True, "passed": mismatches <= ILL_CONDITIONED_SHARE * values, "mismatches": mismatches,
            "values": values, "moved": round(mismatches / values, 6)}


def degenerate_reason(distributions: dict, rounding: dict | None = None) -> str | None:
    """Why a problem's reference cannot tell kernels apart, or None."""
    bad = [n for n, e in distributions.items() if "error" in e or not e.get("finite", False)]
    if bad:
        return f"non-finite or failing reference under {', '.join(bad)}"
    lo = min(e["min"] for e in distributions.values())
    hi = max(e["max"] for e in distributions.values())
    if (hi - lo) / 2 <= CONSTANT_TOLERANCE:
        return (f"a constant passes: every output under every distribution lies in [{lo:.3g}, {hi:.3g}], "
                f"within atol={CONSTANT_TOLERANCE} of {(lo + hi) / 2:.3g}")
    if rounding and rounding.get("checked") and not rounding["passed"]:
        return (f"ill-conditioned: inputs changed by a relative {ROUNDING_NOISE:.1g} move "
                f"{rounding['mismatches']} of {rounding['values']} output values beyond atol=rtol="
                f"{DEFAULT_TOLERANCE['fp32']}: only the reference's exact arithmetic passes")
    return None


def dropped_distributions(report: dict) -> dict:
    """{name: reason} of the distributions a hidden-test file must leave out."""
    dropped = {}
    for name, entry in report["distributions"].items():
        if "error" in entry:
            dropped[name] = f"reference raised {entry['error']}"
        elif not entry.get("finite", False):
            dropped[name] = "reference output contains NaN or Inf"
    return dropped


def hardware_label(device: torch.device) -> str:
    return label_of(torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu")


def report_path(root: Path, hardware: str, level: int) -> Path:
    return root / f"{hardware}_level{level}.json"
