"""Upstream's option and environment variable names that ours spell differently or have no use for.

Every key of upstream's pydra configs (facebookresearch/kernel_bench_verified and
ScalingIntelligence/KernelBench) is taken on our command lines. Most are keys of configs/*.yaml with
the same name and meaning; those below are not. Each stands for our overrides (an alias, a value
translated, or none), and using one prints one line saying what it does here: none is ignored
silently. Its overrides take its place on the command line, so a later key=value still wins.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable

from .errors import UserError

# Upstream's pydra config methods, called on its command line as `.name`, as the overrides they stand
# for here, by config name. Upstream's generate config has `greedy` (greedy decoding: temperature 0).
PYDRA_METHODS = {"generate": {"greedy": ["temperature=0.0"]}}


@dataclass(frozen=True)
class UpstreamName:
    """One upstream key: `meaning` says in one line what it does here; `overrides(value, given)` turns
    its value (with `given`, the command line's other key=value pairs) into our overrides."""

    meaning: str
    overrides: Callable[[str, dict], list[str]] = lambda value, given: []


_TRUE = {"true", "t", "yes", "1"}
_FALSE = {"false", "f", "no", "0"}
_NULL = {"none", "null", "~", ""}


def _boolean(key: str, value: str) -> bool:
    word = value.strip().strip("'\"").lower()
    if word not in _TRUE | _FALSE:
        raise UserError(f"{key}={value!r} is not a boolean: use true or false (T/F, yes/no and 1/0 work too)")
    return word in _TRUE


def _is_null(value: str) -> bool:
    return value.strip().strip("'\"").lower() in _NULL


def _rename(ours: str) -> Callable[[str, dict], list[str]]:
    return lambda value, given: [f"{ours}={value}"]


def _reasoning_model(value: str, given: dict) -> list[str]:
    if not _boolean("is_reasoning_model", value):
        return ["reasoning_effort=null", "thinking_budget=null"]
    return [] if "reasoning_effort" in given else ["reasoning_effort=low"]


def _budget_tokens(value: str, given: dict) -> list[str]:
    thinking = given.get("is_reasoning_model") is not None and _boolean("is_reasoning_model", given["is_reasoning_model"])
    if not thinking or _is_null(value) or value.strip() == "0":
        return ["thinking_budget=null"]
    return [f"thinking_budget={value}"]


def _hardware_info(value: str, given: dict) -> list[str]:
    if not _boolean("include_hardware_info", value):
        return ["hardware_note=null"]
    if _is_null(given.get("hardware_gpu_name", "")):
        raise UserError("include_hardware_info=True needs hardware_gpu_name=... (e.g. H100), as upstream's does")
    return []


def _hardware_gpu_name(value: str, given: dict) -> list[str]:
    shown = "include_hardware_info" in given and _boolean("include_hardware_info", given["include_hardware_info"])
    return [f"hardware_note={value}"] if shown and not _is_null(value) else []


def _custom_prompt(value: str, given: dict) -> list[str]:
    if not _is_null(value):
        raise UserError(f"custom_prompt_key={value!r}: upstream's custom prompts (its prompts.toml) do not exist "
                        "here; the prompt is set by prompt_option, backend and hardware_note (docs/generation.md)")
    return []


TIMING_METHODS = ("cuda_event", "do_bench", "do_bench_impl", "host_time")  # upstream's timing_method values


def _timing_method(value: str, given: dict) -> list[str]:
    method = value.strip().strip("'\"")
    if method not in TIMING_METHODS:
        raise UserError(f"timing_method={method!r} is not one of upstream's {', '.join(TIMING_METHODS)}")
    return []


def _baseline_file(value: str, given: dict) -> list[str]:
    path = PurePath(value.strip().strip("'\""))
    if path.suffix != ".json" or len(path.parts) < 2:
        raise UserError(f"baseline_file={value!r} must be a baseline's .json file inside its hardware folder, "
                        "e.g. results/timing/H100/baseline_time_torch.json")
    return [f"timing_dir={_quoted(str(path.parent.parent))}", f"hardware={_quoted(path.parent.name)}",
            f"baseline={_quoted(path.stem)}"]


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


UPSTREAM_NAMES: dict[str, dict[str, UpstreamName]] = {
    "generate": {
        "is_reasoning_model": UpstreamName(
            "True: a reasoning model (no temperature), with upstream's default reasoning_effort=low unless "
            "reasoning_effort= is given; False: neither reasoning_effort nor thinking_budget is sent",
            _reasoning_model),
        "budget_tokens": UpstreamName(
            "thinking_budget here (Anthropic extended thinking); 0, or without is_reasoning_model=True as "
            "upstream, no thinking", _budget_tokens),
        "include_hardware_info": UpstreamName(
            "with hardware_gpu_name, hardware_note here: the prompt names the GPU (our text, with a spec table "
            "for H200, H100, A100 and L40S)", _hardware_info),
        "hardware_gpu_name": UpstreamName(
            "hardware_note here, when include_hardware_info=True (as upstream, the name alone adds nothing)",
            _hardware_gpu_name),
        "custom_prompt_key": UpstreamName("None only: upstream's prompts.toml custom prompts do not exist here",
                                          _custom_prompt),
        "check_kernel": UpstreamName(
            "nothing at generation: the static checks run when the kernels are evaluated, eval's "
            "static_check=warn|reject (reject fails a flagged sample, as upstream's check refuses it)"),
        "greedy_sample": UpstreamName("the attribute upstream's .greedy sets: True is temperature=0.0 here",
                                      lambda value, given: ["temperature=0.0"] if _boolean("greedy_sample", value)
                                      else []),
    },
    "eval": {
        "num_samples_per_problem": UpstreamName("num_samples here: sample ids 0..n-1 of each problem",
                                                _rename("num_samples")),
        "gpu": UpstreamName(
            "nothing: upstream's Modal GPU type; kernels run on this machine's GPUs (eval_mode=local) or a Ray "
            "cluster's (eval_mode=ray)"),
        "timing_method": UpstreamName(
            "nothing: every kernel and baseline is timed by one function here, CUDA events around a device-wide "
            "synchronisation (upstream's cuda_event); the others are not available", _timing_method),
        "pass_at_k_values": UpstreamName(
            "nothing at evaluation: pass@k is computed by benchmark_eval_analysis.py (its pass_at_k_values=) and "
            "the leaderboard"),
    },
    "analysis": {
        "eval_results_dir": UpstreamName("runs_dir here: the folder holding the run folders", _rename("runs_dir")),
        "baseline_file": UpstreamName("timing_dir, hardware and baseline here, read from the file's path",
                                      _baseline_file),
    },
}

# Upstream's environment variables that set config keys, by config name: (variable, meaning, overrides).
# kernel_bench_verified's KB_FP32_TOL is the fp32 correctness tolerance (atol = rtol) of its evaluator.


def _fp32_tolerance(value: str, given: dict) -> list[str]:
    try:
        tolerance = float(value)
    except ValueError:
        raise UserError(f"KB_FP32_TOL={value!r} is not a number (unset it or give e.g. 1e-4)") from None
    if not tolerance > 0:
        raise UserError(f"KB_FP32_TOL={value!r} must be a positive number")
    if given.get("precision", "fp32").strip("'\"") != "fp32":
        return []
    return [f"atol={value}", f"rtol={value}"]


UPSTREAM_ENVIRONMENT: dict[str, dict[str, UpstreamName]] = {
    "eval": {"KB_FP32_TOL": UpstreamName("atol and rtol of fp32 runs (key=value on the command line wins)",
                                         _fp32_tolerance)},
}

_printed: set[str] = set()


def translate(config_name: str, overrides: list[str]) -> list[str]:
    """`overrides` with upstream's names (and environment variables) as ours, each used name printed once
    per process on stderr with what it does here."""
    names = UPSTREAM_NAMES.get(config_name, {})
    given = {key.strip(): value.strip() for key, sep, value in (o.partition("=") for o in overrides) if sep}
    translated = []
    for variable, name in UPSTREAM_ENVIRONMENT.get(config_name, {}).items():
        value = os.environ.get(variable, "").strip()
        if value:
            ours = name.overrides(value, given)
            _note(f"{variable}={value} (environment)", name.meaning, ours)
            translated += ours  # first, so the command line's own keys win
    for override in overrides:
        key, sep, value = override.partition("=")
        name = names.get(key.strip()) if sep else None
        if name is None:
            translated.append(override)
            continue
        ours = name.overrides(value.strip(), given)
        _note(f"{key.strip()}={value.strip()}", name.meaning, ours)
        translated += ours
    return translated


def _note(used: str, meaning: str, ours: list[str]) -> None:
    line = f"upstream's {used}: {meaning}" + (f" [{' '.join(ours)}]" if ours else "")
    if line not in _printed:
        _printed.add(line)
        print(line, file=sys.stderr)
