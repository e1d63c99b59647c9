"""Shape variants: a problem evaluated at other values of the module-level constants its shapes come from.

A kernel that hard-codes the problem's shapes (a `#define N 1024`, a Python constant, a branch on the
expected shape) passes every case of the fixed shapes. Where a problem's inputs take their shapes from
module-level integer constants (`batch_size = 16` read by get_inputs), the judge also evaluates the
kernel at up to two variants of them:
- S1: the leading (batch) dimension halved;
- S2: another dimension of the inputs at three quarters of its value (the last-assigned constant that
  sets one, so usually a spatial or feature size), where the reference accepts it.
A variant changes the constant in a fresh copy of the problem module, so get_inputs() and
get_init_inputs() both see it and both models are built for it. Variants are screened here on the meta
device (no memory, no compute): one on which the reference raises is dropped, with its reason. The judge
screens the kept ones again on the device (a reference that raises or gives non-finite output there makes
the variant not applicable for that run).

A constant that the reference's model reads itself (`torch.randn(batch_size, hidden)` in `__init__`) is
never varied: the kernel's file keeps its own copy of the module, so its model would be built for the
old value while the reference is built for the new one, and identical code would fail.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

import torch

from .load import load_module

_MODULE_NAMES = itertools.count()


@dataclass(frozen=True)
class ShapeVariant:
    name: str
    overrides: dict
    description: str

    def to_dict(self) -> dict:
        return asdict(self)


def shape_constants(path: str | Path) -> dict[str, int]:
    """The module-level names assigned in the problem file whose values are integers, in file order."""
    module = load_module(path, _fresh_name())
    names = []
    for node in ast.parse(Path(path).read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            names += [t.id for t in ast.walk(target) if isinstance(t, ast.Name) and t.id not in names]
    values = {name: getattr(module, name, None) for name in names}
    return {name: value for name, value in values.items() if isinstance(value, int) and not isinstance(value, bool)}


def variant_module(path: str | Path, overrides: dict) -> ModuleType:
    """A fresh copy of the problem module with `overrides` set (get_inputs reads its constants when called)."""
    module = load_module(path, _fresh_name())
    for name, value in overrides.items():
        setattr(module, name, value)
    return module


def _fresh_name() -> str:
    return f"shape_variant_{next(_MODULE_NAMES)}"


def input_shapes(module: ModuleType) -> list | None:
    """The shapes of get_inputs() (None for a non-tensor input), made on the meta device; None if it raises."""
    try:
        with torch.device("meta"):
            inputs = module.get_inputs()
    except Exception:
        return None
    return [tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs]


def dimensions_set_by(path: str | Path, constants: dict[str, int]) -> dict[str, set]:
    """For each constant, the (input, dimension) pairs whose size changes when the constant does."""
    base = input_shapes(variant_module(path, {}))
    found = {}
    for name, value in constants.items():
        moved = input_shapes(variant_module(path, {name: value + 1}))
        if base is None or moved is None or len(moved) != len(base):
            continue
        found[name] = {(i, d) for i, (a, b) in enumerate(zip(base, moved)) if a is not None and b is not None
                       for d in range(min(len(a), len(b))) if a[d] != b[d]} | \
                      {(i, -1) for i, (a, b) in enumerate(zip(base, moved)) if a is not None and b is not None
                       and len(a) != len(b)}
    return {name: dims for name, dims in found.items() if dims}


# Module-level functions that only make the inputs: a constant they read is an input shape.
INPUT_FUNCTIONS = ("get_inputs", "get_init_inputs")


def read_by_model(path: str | Path, names) -> set[str]:
    """The names among `names` that the problem's classes and helper functions read as module globals
    (not as an argument or a local of the function reading them)."""
    found = set()
    for node in ast.parse(Path(path).read_text()).body:
        if isinstance(node, ast.ClassDef) or (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                                               and node.name not in INPUT_FUNCTIONS):
            for function in ast.walk(node):
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    found |= _globals_read(function) & set(names)
    return found


def _globals_read(function) -> set[str]:
    arguments = function.args
    local = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    local |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    names = [n for n in ast.walk(function) if isinstance(n, ast.Name)]
    local |= {n.id for n in names if isinstance(n.ctx, ast.Store)}
    return {n.id for n in names if isinstance(n.ctx, ast.Load) and n.id not in local}


def meta_run_error(module: ModuleType) -> str | None:
    """Why the reference fails on the meta device with this module's constants, or None when it runs."""
    try:
        with torch.device("meta"), torch.no_grad():
            model = module.Model(*module.get_init_inputs())
            model(*module.get_inputs())
    except Exception as exc:  # noqa: BLE001 - any failure of the reference is the reason
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def _batch_constant(dims: dict[str, set]) -> str | None:
    """The constant of the leading dimension: one named like a batch, else the one that sets the first
    input's first dimension."""
    leading = [name for name, found in dims.items() if any(d == 0 for _, d in found)]
    named = [name for name in leading if "batch" in name.lower()]
    if named:
        return named[0]
    first = [name for name in leading if (0, 0) in dims[name]]
    return first[0] if first else None


def derive_variants(path: str | Path) -> tuple[list[ShapeVariant], list[dict]]:
    """(kept variants, dropped ones with their reasons) of a problem file; no variants when its input
    shapes come from no module-level constant."""
    constants = shape_constants(path)
    dims = dimensions_set_by(path, constants)
    if not dims:
        return [], []
    kept, dropped, screens = [], [], []
    model_reads = read_by_model(path, constants)

    def consider(name: str, overrides: dict, description: str) -> bool:
        fixed = sorted(model_reads & set(overrides))
        if fixed:
            dropped.append({"name": name, "overrides": overrides,
                            "reason": f"the reference's model reads {', '.join(fixed)} itself"})
            return False
        error = meta_run_error(variant_module(path, overrides))
        if error and not screens:  # a reference that fails on the meta device as it is is screened on the device only
            screens.append(meta_run_error(variant_module(path, {})) is None)
        if error and screens[0]:
            dropped.append({"name": name, "overrides": overrides, "reason": f"the reference raises: {error}"})
            return False
        kept.append(ShapeVariant(name, overrides, description))
        return True

    batch = _batch_constant(dims)
    if batch is not None and constants[batch] >= 2:
        consider("S1", {batch: constants[batch] // 2}, f"{batch} halved")
    for name in reversed([n for n in dims if n != batch]):
        value = constants[name]
        if value >= 4 and consider("S2", {name: value - value // 4}, f"{name} at three quarters"):
            break
    return kept, dropped
