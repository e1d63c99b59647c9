"""Seeded input generation shared by the judge and the kernel's process, so both see the same inputs.

Every input set is produced by calling the problem's own get_inputs() after seeding, under
`with torch.device(device)`, so tensors are created directly on the device under test. Only
floating-point tensors are scaled or cast: integer and bool tensors (token ids, class targets, masks)
and non-tensor values keep their type.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

import torch

PRECISIONS = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


@dataclass(frozen=True)
class Case:
    """One correctness check: inputs from get_inputs() under `seed`, floats scaled by `scale`.

    `hidden_index` is set for hidden-test files of the upstream format, whose inputs come from their
    own get_hidden_inputs() rather than from a seed."""

    name: str
    seed: int
    scale: float = 1.0
    hidden_index: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def scale_inputs(inputs: list, scale: float) -> list:
    """Multiply floating-point tensors by `scale`; leave everything else as it is."""
    if scale == 1.0:
        return list(inputs)
    return [x * scale if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def cast_inputs(inputs: list, dtype: torch.dtype, device: torch.device) -> list:
    """Move tensors to `device` and cast floating-point ones to the run precision."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor):
            x = x.to(device=device, dtype=dtype if x.is_floating_point() else x.dtype)
        out.append(x)
    return out


def seeded_inputs(problem: ModuleType, seed: int, scale: float, device: torch.device) -> list:
    torch.manual_seed(seed)
    with torch.device(device):
        return scale_inputs(problem.get_inputs(), scale)


def case_inputs(case: Case, problem: ModuleType, hidden: ModuleType | None,
                device: torch.device, dtype: torch.dtype) -> list:
    """The inputs of one case, on `device`, floating-point tensors in `dtype`."""
    if case.hidden_index is not None:
        torch.manual_seed(case.seed)
        with torch.device(device):
            raw = hidden.get_hidden_inputs()[case.hidden_index]
    else:
        raw = seeded_inputs(problem, case.seed, case.scale, device)
    return cast_inputs(raw, dtype, device)


def init_arguments(problem: ModuleType, seed: int, device: torch.device) -> list:
    """get_init_inputs() the way the benchmark calls it: seeded, tensors created on `device`."""
    torch.manual_seed(seed)
    with torch.device(device):
        return list(problem.get_init_inputs())


def construct_model(cls: type, init_args: list, seed: int, device: torch.device, dtype: torch.dtype) -> Any:
    """Construct `cls(*init_args)` under `seed`, so layers created in the same order as the reference's
    get the same weights; then move it to the device and run precision."""
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(*init_args)
    if isinstance(model, torch.nn.Module):
        model = model.to(device=device, dtype=dtype)
    return model


def build_model(cls: type, problem: ModuleType, seed: int, device: torch.device,
                dtype: torch.dtype) -> Any:
    """Construct `cls` the way the benchmark does: seed, get_init_inputs(), seed, construct."""
    return construct_model(cls, init_arguments(problem, seed, device), seed, device, dtype)


def derived_seed(salt: str, *parts) -> int:
    """A 62-bit seed from a run's secret salt and a name: unpredictable without the salt."""
    digest = hashlib.sha256("/".join([salt, *map(str, parts)]).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 2


def call_seed(salt: str, case_name: str) -> int:
    """The torch seed the judge and the sandbox both set just before the call of `case_name`: a model
    that draws random numbers (dropout in training mode, L2/66) then draws the same ones as its reference."""
    return derived_seed(salt, "rng", case_name)


def correctness_cases(num_trials: int, seed: int, hidden: ModuleType | None, salt: str | None = None) -> list[Case]:
    """Seeded trials on get_inputs(), then the hidden distributions when a hidden module is given.
    With a `salt` (the evaluator's), every seed is derived from it instead of from `seed` and the
    hidden file's published SEED, so a kernel cannot compute its inputs ahead."""
    def trial_seed(i: int) -> int:
        return derived_seed(salt, f"trial_{i}") if salt else seed * 1000 + i

    cases = [Case(f"trial_{i}", trial_seed(i)) for i in range(num_trials)]
    if hidden is None:
        return cases
    if hasattr(hidden, "DISTRIBUTIONS") and hasattr(hidden, "SEED"):
        return cases + [Case(name, derived_seed(salt, name) if salt else hidden.SEED + i, scale)
                        for i, (name, scale) in enumerate(hidden.DISTRIBUTIONS)]
    # Upstream format: only get_hidden_inputs(), which seeds itself; its configs are named by position.
    count = len(hidden.get_hidden_inputs())
    return cases + [Case(f"D{i + 1}", seed, 1.0, hidden_index=i) for i in range(count)]
