"""D5, perturbed parameters: the reference and the kernel's model built afresh under a secret seed, then
their constant-initialised floating-point parameters and buffers spread around their constants.

The hidden distributions scale the inputs and leave the model as the seed built it, so a kernel can rely
on what stays fixed: LayerNorm's ones and zeros, BatchNorm's running statistics, any weights it computed
ahead from the public seed. D5 changes both:
- every randomly initialised tensor takes new values because both models are constructed under a seed
  derived from the run's salt (construction_seed); whatever a kernel derives from them at construction,
  eagerly or lazily, under any name or layout, is derived from the new values;
- a tensor the seed cannot move (constant at construction: ones, zeros, running statistics, a scalar
  set by the problem) is set after construction and before the model's first call, in the reference and
  in the kernel's model alike, to values drawn from the salt around its constant (constant_draw). This
  needs the kernel's counterpart: the floating-point parameter or buffer of the same name and shape. A
  constant of the reference without one cannot be moved in the kernel's model, is left as it is in both
  and named (`unmatched`): the case then says it could not check it.

Buffers that are not constant (attention masks, position tables) or hold one value (masking values
such as -1e9) are the problem's fixed data and are not moved; running statistics are.
Runs in the judge (trusted) for the reference and the drawing, and in the sandbox (apply_values) for the
kernel's model, which gets only names and values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .inputs import derived_seed

CASE_NAME = "D5"
# How far a constant's draws spread around it: within CONSTANT_SPREAD of its magnitude, so a positive
# constant (a weight of ones, a running variance) stays positive, and within +-CONSTANT_SPREAD around 0.
CONSTANT_SPREAD = 0.5
# What the sandbox may report of its model: this many tensors, names of this length at most.
MAX_REPORTED_TENSORS, MAX_NAME_LENGTH = 4096, 300


def construction_seed(salt: str) -> int:
    """The seed both models of D5 are built under: new values for every randomly initialised tensor."""
    return derived_seed(salt, CASE_NAME, "construction")


def floating_tensors(model) -> dict[str, torch.Tensor]:
    """A model's floating-point parameters and buffers by name (as state_dict names them)."""
    if not isinstance(model, torch.nn.Module):
        return {}
    named = [*model.named_parameters(), *model.named_buffers()]
    return {name: tensor for name, tensor in named if tensor.is_floating_point()}


def describe(model) -> list[list]:
    """[name, shape] of each floating-point tensor of `model`: what the sandbox tells the judge."""
    return [[name, list(tensor.shape)] for name, tensor in floating_tensors(model).items()]


def reported_shapes(reported) -> dict[str, tuple]:
    """The kernel's [name, shape] report, checked (it comes from the kernel's process): name -> shape."""
    if not isinstance(reported, list) or len(reported) > MAX_REPORTED_TENSORS:
        raise ValueError("the model's tensors reported as something other than a bounded list")
    shapes = {}
    for entry in reported:
        if (not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], str)
                or len(entry[0]) > MAX_NAME_LENGTH or not isinstance(entry[1], list)
                or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in entry[1])):
            raise ValueError(f"a model tensor reported as {str(entry)[:80]!r}")
        shapes[entry[0]] = tuple(entry[1])
    return shapes


def constant_of(tensor: torch.Tensor) -> float | None:
    """The value every element of `tensor` holds, or None (not constant, empty, or not finite)."""
    if tensor.numel() == 0:
        return None
    low, high = torch.aminmax(tensor.detach().float().reshape(-1))
    low, high = float(low), float(high)
    return low if low == high and abs(low) != float("inf") and low == low else None


@dataclass
class Plan:
    """What D5 moves: constants matched in the kernel's model (name -> constant), and the reference's
    constants it could not match."""
    matched: dict[str, float] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)


def plan_for(reference, kernel_shapes: dict[str, tuple]) -> Plan:
    """The constants of `reference` (freshly built) and their counterparts among `kernel_shapes`. A
    non-constant parameter moved with the construction seed; a non-constant buffer (a mask, a position
    table) and a one-element buffer (a masking value such as -1e9, an eps) are the problem's fixed data."""
    plan = Plan()
    parameters = {name for name, _ in reference.named_parameters()}
    for name, tensor in floating_tensors(reference).items():
        constant = constant_of(tensor)
        if constant is None or (name not in parameters and tensor.numel() == 1):
            continue
        if kernel_shapes.get(name) == tuple(tensor.shape):
            plan.matched[name] = constant
        else:
            plan.unmatched.append(name)
    return plan


def constant_draw(constant: float, shape, salt: str, name: str, device) -> torch.Tensor:
    """Values for a tensor initialised to `constant`, drawn from the salt: uniform within
    CONSTANT_SPREAD of the constant's magnitude around it (around 0: within +-CONSTANT_SPREAD)."""
    spread = CONSTANT_SPREAD * (abs(constant) if constant else 1.0)
    generator = torch.Generator(device=device).manual_seed(derived_seed(salt, CASE_NAME, name))
    draw = torch.rand(tuple(shape), generator=generator, device=device, dtype=torch.float32)
    return (constant - spread) + 2 * spread * draw


def drawn_values(reference, plan: Plan, salt: str) -> dict[str, torch.Tensor]:
    """The values of every matched constant, on the reference's device."""
    tensors = floating_tensors(reference)
    return {name: constant_draw(constant, tensors[name].shape, salt, name, tensors[name].device)
            for name, constant in plan.matched.items()}


def apply_values(model, values: dict[str, torch.Tensor]) -> None:
    """Set each named tensor of `model` to its value in place (its layout, dtype and identity kept, as
    load_state_dict does); a name the model lacks, or a shape it does not have, raises KeyError."""
    tensors = floating_tensors(model)
    with torch.no_grad():
        for name, value in values.items():
            if name not in tensors or tuple(tensors[name].shape) != tuple(value.shape):
                raise KeyError(f"the model has no floating-point tensor {name!r} of shape {list(value.shape)}")
            tensors[name].copy_(value)
