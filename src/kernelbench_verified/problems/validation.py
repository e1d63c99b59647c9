"""Running every reference model under the hidden distributions: timing, memory, finiteness and
degenerate (constant) outputs. Used by scripts/validate_problems.py and by the hidden-test generator."""

from __future__ import annotations

import time
from pathlib import Path

import torch

from .hidden_tests import HIDDEN_DISTRIBUTIONS, hidden_seed
from .inputs import build_model, seeded_inputs
from .load import Problem, load_module
from ..measure.timing import peak_memory, time_function

# A reference is degenerate when one constant lies within this absolute distance of every output
# value under every distribution: returning that constant would pass the fp32 check (atol 1e-3).
CONSTANT_TOLERANCE = 1e-3


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
                  timing_trials: int = 3) -> dict:
    """The reference under each distribution, in training mode as the judge runs it."""
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
    report["degenerate"] = degenerate_reason(report["distributions"])
    return report


def degenerate_reason(distributions: dict) -> str | None:
    """Why a problem's reference cannot tell kernels apart, or None."""
    bad = [n for n, e in distributions.items() if "error" in e or not e.get("finite", False)]
    if bad:
        return f"non-finite or failing reference under {', '.join(bad)}"
    lo = min(e["min"] for e in distributions.values())
    hi = max(e["max"] for e in distributions.values())
    if (hi - lo) / 2 <= CONSTANT_TOLERANCE:
        return (f"a constant passes: every output under every distribution lies in [{lo:.3g}, {hi:.3g}], "
                f"within atol={CONSTANT_TOLERANCE} of {(lo + hi) / 2:.3g}")
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
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device)
    return name.replace("NVIDIA", "").strip().split()[0] if name else "gpu"


def report_path(root: Path, hardware: str, level: int) -> Path:
    return root / f"{hardware}_level{level}.json"
