"""Prompts are a pure function of (problem, config), pinned by snapshots.

After an intended change of the prompt text, rewrite the snapshots with
UPDATE_SNAPSHOTS=1 pytest tests/test_prompts.py and review the diff.
"""

import os
from pathlib import Path

import pytest

from conftest import ROOT, TINY
from kernelbench_verified.problems.load import get_problem
from kernelbench_verified.generate.prompts import PromptOptions, build_prompt

SNAPSHOTS = Path(__file__).parent / "snapshots"

CASES = {
    "level1_relu_fp32": (1, 1, TINY / "KernelBench", PromptOptions()),
    "level2_bf16_h200": (2, 1, ROOT / "KernelBench", PromptOptions(precision="bf16", hardware_note="H200")),
    "level1_cumprod_input_blind": (1, 90, ROOT / "KernelBench", PromptOptions()),
}


def prompt_for(level, pid, problems_dir, options):
    problem = get_problem(level, pid, problems_dir)
    return build_prompt(problem.path.read_text(), problem.input_blind, options)


@pytest.mark.parametrize("name", CASES)
def test_prompt_matches_its_snapshot(name):
    prompt = prompt_for(*CASES[name])
    snapshot = SNAPSHOTS / f"prompt_{name}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        snapshot.write_text(prompt)
    assert snapshot.is_file(), f"missing {snapshot.name}: run with UPDATE_SNAPSHOTS=1 once"
    assert prompt == snapshot.read_text()


def test_input_blind_prompt_hides_the_inputs_but_keeps_the_model():
    prompt = prompt_for(*CASES["level1_cumprod_input_blind"])
    problem = prompt.split("the inputs it is tested with are not shown")[1]
    assert "class Model(nn.Module)" in problem and "negative values and" in problem  # docstrings kept
    for hidden in ("def get_inputs", "def get_init_inputs", "batch_size = 32768", "torch.randn(batch_size"):
        assert hidden not in problem
    shown = prompt_for(1, 89, ROOT / "KernelBench", PromptOptions())
    assert "def get_inputs" in shown.split("The reference to optimise:")[1]


def test_precision_and_hardware_notes():
    fp32 = prompt_for(1, 1, TINY / "KernelBench", PromptOptions())
    fp16 = prompt_for(1, 1, TINY / "KernelBench", PromptOptions(precision="fp16"))
    assert "Precision:" not in fp32 and "Hardware:" not in fp32
    assert "cast to float16" in fp16
    named = prompt_for(1, 1, TINY / "KernelBench", PromptOptions(hardware_note="h100"))
    assert "NVIDIA H100 (Hopper, compute capability 9.0" in named
    assert "| memory | 80 GB HBM3, 3.35 TB/s |" in named and "| SMs | 132 |" in named  # the spec table
    verbatim = prompt_for(1, 1, TINY / "KernelBench", PromptOptions(hardware_note="RTX 4090 (Ada, sm_89)"))
    assert "run on RTX 4090 (Ada, sm_89)" in verbatim


def test_worked_example_uses_load_inline_and_the_answer_format_is_stated():
    prompt = prompt_for(*CASES["level1_relu_fp32"])
    assert "from torch.utils.cpp_extension import load_inline" in prompt
    assert "class ModelNew(nn.Module)" in prompt and prompt.rstrip().endswith("get_init_inputs to it.")
    assert prompt.index("Applies ReLU elementwise") > prompt.index("add_extension.add(a, b)")


def test_prompt_options_choose_the_examples_and_the_reasoning():
    one_shot = prompt_for(1, 1, TINY / "KernelBench", PromptOptions())
    few_shot = prompt_for(1, 1, TINY / "KernelBench", PromptOptions(prompt_option="few_shot"))
    cot = prompt_for(1, 1, TINY / "KernelBench", PromptOptions(prompt_option="cot"))
    zero_shot = prompt_for(1, 1, TINY / "KernelBench", PromptOptions(prompt_option="zero_shot"))
    assert "Here is an example." in one_shot and "Here is an example." not in zero_shot
    assert zero_shot == one_shot.split("Here is an example.")[0] + "The reference to optimise:" \
        + one_shot.split("The reference to optimise:")[1]
    assert "softmax_rows" not in one_shot and "reason step by step" not in one_shot
    assert "softmax_rows" in few_shot and "reason step by step" not in few_shot
    assert "reason step by step" in cot and "softmax_rows" not in cot
    for prompt in (few_shot, cot):  # the same task, problem and answer format around them
        assert prompt.startswith(one_shot.split("Here is an example.")[0])
        assert prompt.endswith(one_shot.split("The reference to optimise:")[1])
