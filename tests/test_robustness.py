"""Cases beyond the hidden distributions: D5 (perturbed parameters) and the shape variants S1/S2, as
pure functions and end to end on the CPU through the judge and a sandbox."""

import json
import shutil

import pytest
import torch
import torch.nn as nn

from conftest import ROOT, load_config
from kernelbench_verified.evaluate.run import evaluate_run
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


def test_a_constant_the_reference_model_reads_itself_is_never_varied(tmp_path):
    """Level 3's VanillaRNN sizes its stored hidden state from the module's batch_size in __init__: a
    kernel file with the same __init__ reads its own batch_size, so halving the problem's would fail
    identical code. Only the constant the model reads is left alone; a local of the same name is not one."""
    problem = tmp_path / "1_StatefulCell.py"
    problem.write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def __init__(self, features):\n        super().__init__()\n"
        "        self.state = torch.zeros(batch_size, features)\n\n"
        "    def forward(self, x):\n        features = x.shape[1]\n        return x + self.state[:, :features]\n\n\n"
        "batch_size = 8\nfeatures = 64\n\n\n"
        "def get_inputs():\n    return [torch.rand(batch_size, features)]\n\n\n"
        "def get_init_inputs():\n    return [features]\n")
    kept, dropped = derive_variants(problem)
    assert [(v.name, v.overrides) for v in kept] == [("S2", {"features": 48})]
    assert dropped == [{"name": "S1", "overrides": {"batch_size": 4},
                        "reason": "the reference's model reads batch_size itself"}]


def test_a_problem_without_shape_constants_gets_no_variant(tmp_path):
    problem = tmp_path / "1_Literal.py"
    problem.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                       "    def forward(self, x):\n        return x * 2\n\n\n"
                       "def get_inputs():\n    return [torch.rand(16, 32)]\n\n\ndef get_init_inputs():\n    return []\n")
    assert derive_variants(problem) == ([], [])


# Each fixture as a sample of the fixture problem it is written for, with the hidden tests (so D5 and the
# shape variants run by default).
SAMPLES = {(19, 0): "layernorm_affine_dropped", (19, 1): "layernorm_packed_affine_lazy",
           (19, 2): "layernorm_fixed_shape", (19, 3): "layernorm_affine_folded_at_init",
           (19, 4): "layernorm_cpp_built_per_dtype", (23, 0): "gemm_relu_weight_t_at_init"}


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    run_dir = runs / "robust"
    run_dir.mkdir()
    for (pid, sid), stem in SAMPLES.items():
        shutil.copy(FIXTURES / "robustness" / f"{stem}.py", run_dir / f"level_1_problem_{pid}_sample_{sid}_kernel.py")
    overrides = {"run_name": "robust", "runs_dir": runs, "level": 1, "subset": "[19,23]", "num_samples": 5,
                 "problems_dir": PROBLEMS, "hidden_tests_dir": PROBLEMS / "hidden_tests", "use_hidden_tests": True,
                 "num_perf_trials": 3, "num_warmup": 1, "kernel_eval_build_dir": runs / "builds", "device": "cpu",
                 "timeout": 300}
    assert evaluate_run(load_config("eval", [f"{k}={v}" for k, v in overrides.items()])) == 0
    return json.loads((run_dir / "eval_results_hidden.json").read_text())


def variants(record) -> dict:
    return {v["case"]: v["status"] for v in record["metadata"]["shape_variants"]}


def test_dropping_the_affine_step_passes_every_hidden_distribution_and_fails_d5(records):
    record = records["19_0"]
    assert record["eval_status"] == "correct", record["metadata"].get("error")
    d5 = record["metadata"]["perturbed_parameters"]
    assert d5["status"] == "failed" and d5["perturbed"] == ["ln.bias", "ln.weight"] and not d5["passed"]
    assert record["metadata"]["unmatched_parameters"] == []
    assert variants(record) == {"S1": "passed", "S2": "passed"}  # it reads its shapes from the input


def test_an_honest_kernel_passes_d5_and_both_shape_variants(records):
    record = records["19_1"]
    assert record["eval_status"] == "correct"
    assert record["metadata"]["perturbed_parameters"]["status"] == "passed"
    assert record["metadata"]["perturbed_parameters"]["max_abs_diff"] < 1e-4
    assert variants(record) == {"S1": "passed", "S2": "passed"}


def test_a_kernel_with_fixed_shapes_passes_its_shape_and_d5_and_fails_the_variants(records):
    record = records["19_2"]
    assert record["eval_status"] == "correct" and record["runtime"] > 0
    assert record["metadata"]["perturbed_parameters"]["status"] == "passed"
    failed = {v["case"]: v for v in record["metadata"]["shape_variants"]}
    assert {name: v["status"] for name, v in failed.items()} == {"S1": "failed", "S2": "failed"}
    assert failed["S1"]["overrides"] == {"batch_size": 16} and failed["S1"]["eval_status"] == "runtime_error"


def test_a_constant_folded_at_construction_is_judged_on_the_values_it_folded(records):
    record = records["19_3"]
    assert record["eval_status"] == "correct"
    assert record["metadata"]["perturbed_parameters"]["status"] == "failed"


def test_a_weight_restructured_at_construction_follows_the_construction_seed(records):
    record = records["23_0"]
    assert record["eval_status"] == "correct"
    d5 = record["metadata"]["perturbed_parameters"]
    assert d5["status"] == "passed" and d5["perturbed"] == [] and d5["unmatched_parameters"] == []
    assert variants(record) == {"S1": "passed", "S2": "passed"}


def test_the_robustness_sandbox_finds_what_the_judged_sandbox_built(records):
    """An extension the judged sandbox built lazily (the probe could not reach it) is in the build folder
    the sample's robustness sandbox starts from (judge.Judge.kept_build): it is loaded there, not built
    again while the GPU waits."""
    record = records["19_4"]
    assert record["eval_status"] == "correct", record["metadata"].get("error")
    assert record["metadata"]["perturbed_parameters"]["status"] == "passed"
    assert variants(record) == {"S1": "passed", "S2": "passed"}
    (judged,) = record["metadata"]["extension_builds"]
    assert judged[0].startswith("layer_norm_rows_float32") and judged[2] and judged[1] > 1, judged
    robust = record["metadata"]["robustness_builds"]
    assert robust and all(b[0] == judged[0] and b[2] and b[1] < judged[1] / 3 for b in robust), (judged, robust)


def test_the_leaderboard_gates_on_d5_and_shapes_only_when_asked():
    from kernelbench_verified.leaderboard.scoring import Setting, generalises, robustness_gate

    def record(d5, shapes):
        return {"metadata": {"perturbed_parameters": {"status": d5},
                             "shape_variants": [{"case": f"S{i}", "status": s} for i, s in enumerate(shapes, 1)]}}

    plain, gated = Setting(True), Setting(True, d5_gate=True, shape_gate=True)
    assert robustness_gate(record("failed", ["failed"]), plain) is None  # D1-D4 stay upstream's definition
    assert robustness_gate(record("unchecked", []), gated) == "D5 unchecked (perturbed parameters)"
    assert robustness_gate(record("not_applicable", ["passed", "not_applicable"]), gated) is None
    assert robustness_gate(record("passed", ["passed", "failed"]), gated) == "a shape variant failed"
    assert generalises(record("passed", ["not_applicable"])) is None


def test_the_page_counts_correct_samples_passing_d5_and_other_shapes_and_flags_each():
    """The headline stays D1-D4; beside it, of the correct samples where they ran, how many pass D5 and
    how many pass every shape variant, and each correct sample's status names what it failed."""
    from kernelbench_verified.leaderboard.scoring import Setting, _verdict, robustness_counts, ToleranceReport

    def record(d5, shapes):
        metadata = {"shape_variants": [{"case": f"S{i}", "status": s} for i, s in enumerate(shapes, 1)]}
        if d5:
            metadata["perturbed_parameters"] = {"status": d5}
        return {"compiled": True, "correctness": True, "eval_status": "correct", "runtime": 1.0, "metadata": metadata}

    records = [record("passed", ["passed", "passed"]), record("failed", ["passed", "failed"]),
               record("unchecked", ["not_applicable"]), record(None, [])]
    verdicts = [_verdict(None, r, Setting(True), ToleranceReport(None)) for r in records]
    assert all(v.correct for v in verdicts)
    assert robustness_counts([verdicts]) == {"correct": 4, "d5_checked": 3, "d5_passed": 1,
                                             "shapes_checked": 2, "shapes_passed": 1}
    assert "D5 failed" in verdicts[1].status and "fails other shapes (S2)" in verdicts[1].status
    assert "D5 unchecked" in verdicts[2].status and "other shapes" not in verdicts[2].status
    assert "D5" not in verdicts[0].status and "D5" not in verdicts[3].status
