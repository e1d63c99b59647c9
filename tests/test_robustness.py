"""Cases beyond the hidden distributions: D5 (perturbed parameters) and the shape variants S1/S2, as
pure functions and end to end on the CPU through the judge and a sandbox."""

import pytest
import torch
import torch.nn as nn

from conftest import ROOT
from kernelbench_verified.problems import perturbation
from kernelbench_verified.problems.shape_variants import derive_variants, shape_constants, variant_module

FIXTURES = ROOT / "tests" / "fixtures"
PROBLEMS = FIXTURES / "problems"
LAYERNORM = PROBLEMS / "level1" / "19_LayerNorm.py"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 4)
        self.norm = nn.BatchNorm1d(4)
        self.register_buffer("mask", torch.tril(torch.ones(4, 4)))
        self.register_buffer("fill", torch.tensor(-1e9))


def test_the_plan_moves_constants_matched_by_name_and_shape_and_names_the_rest():
    reference = Block()
    kernel = {"norm.weight": (4,), "norm.bias": (4,), "norm.running_mean": (4,), "norm.running_var": (2, 2)}
    plan = perturbation.plan_for(reference, kernel)
    assert plan.matched == {"norm.weight": 1.0, "norm.bias": 0.0, "norm.running_mean": 0.0}
    # The random Linear moves with the construction seed; the mask and the masking value are fixed data.
    assert plan.unmatched == ["norm.running_var"]


def test_constant_draws_come_from_the_salt_and_keep_the_constant_s_sign():
    ones = perturbation.constant_draw(1.0, (1000,), "salt", "w", "cpu")
    assert torch.equal(ones, perturbation.constant_draw(1.0, (1000,), "salt", "w", "cpu"))
    assert not torch.equal(ones, perturbation.constant_draw(1.0, (1000,), "other", "w", "cpu"))
    assert not torch.equal(ones, perturbation.constant_draw(1.0, (1000,), "salt", "b", "cpu"))
    assert 0.5 <= float(ones.min()) and float(ones.max()) <= 1.5 and float(ones.std()) > 0.2
    zeros = perturbation.constant_draw(0.0, (1000,), "salt", "b", "cpu")
    assert -0.5 <= float(zeros.min()) < 0 < float(zeros.max()) <= 0.5
    negative = perturbation.constant_draw(-2.0, (100,), "salt", "c", "cpu")
    assert float(negative.max()) <= -1.0


def test_values_are_set_in_place_keeping_layout_and_identity():
    conv = nn.Conv2d(3, 8, 3).to(memory_format=torch.channels_last)
    weight = conv.weight
    value = torch.full(tuple(weight.shape), 0.25)
    perturbation.apply_values(conv, {"weight": value})
    assert conv.weight is weight and weight.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(weight.detach(), value)
    with pytest.raises(KeyError, match="no floating-point tensor 'weight'"):
        perturbation.apply_values(conv, {"weight": torch.zeros(8)})
    with pytest.raises(KeyError):
        perturbation.apply_values(conv, {"missing": torch.zeros(1)})


@pytest.mark.parametrize("report", [{"a": 1}, [["a"]], [["a", [-1]]], [[1, [2]]], [["a", [True]]],
                                    [["x" * 400, [1]]]])
def test_a_malformed_tensor_report_from_the_sandbox_is_refused(report):
    with pytest.raises(ValueError):
        perturbation.reported_shapes(report)


def test_layernorm_gets_the_batch_halved_and_the_width_at_three_quarters():
    assert shape_constants(LAYERNORM) == {"batch_size": 32, "dim": 1024}
    kept, dropped = derive_variants(LAYERNORM)
    assert [(v.name, v.overrides) for v in kept] == [("S1", {"batch_size": 16}), ("S2", {"dim": 768})]
    assert dropped == []
    module = variant_module(LAYERNORM, {"dim": 768})
    assert module.get_init_inputs() == [(768,)] and module.dim == 768


def test_a_variant_the_reference_rejects_is_dropped_and_the_next_dimension_tried(tmp_path):
    problem = tmp_path / "1_Fixed.py"
    problem.write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(64, 8)\n\n"
        "    def forward(self, x, y):\n        return self.fc(x) + y.sum()\n\n\n"
        "batch_size = 6\nfeatures = 64\nextra = 12\n\n\n"
        "def get_inputs():\n    return [torch.rand(batch_size, features), torch.rand(features, extra)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    kept, dropped = derive_variants(problem)
    assert [(v.name, v.overrides) for v in kept] == [("S1", {"batch_size": 3}), ("S2", {"extra": 9})]
    assert dropped == []
    problem.write_text(problem.read_text().replace("extra = 12", "extra = 3"))  # too small to shrink
    kept, dropped = derive_variants(problem)
    assert [v.name for v in kept] == ["S1"]
    assert [(d["name"], d["overrides"]) for d in dropped] == [("S2", {"features": 48})]
    assert "the reference raises" in dropped[0]["reason"]


def test_a_problem_without_shape_constants_gets_no_variant(tmp_path):
    problem = tmp_path / "1_Literal.py"
    problem.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                       "    def forward(self, x):\n        return x * 2\n\n\n"
                       "def get_inputs():\n    return [torch.rand(16, 32)]\n\n\ndef get_init_inputs():\n    return []\n")
    assert derive_variants(problem) == ([], [])
