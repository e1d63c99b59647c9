"""The problem suite (levels 1-3) against its catalog: files, shapes on the meta device, hidden tests."""

import json

import pytest
import torch

from conftest import ROOT
from kernelbench_verified.problems.hidden_tests import HIDDEN_DISTRIBUTIONS, hidden_path, hidden_seed
from kernelbench_verified.problems.inputs import build_model
from kernelbench_verified.problems.load import INPUT_BLIND, list_problems, load_module, stripped_source
from kernelbench_verified.problems.validation import degenerate_reason, rounding_check

CATALOG = [json.loads(line) for line in (ROOT / "KernelBench" / "catalog.jsonl").read_text().splitlines()]
LEVELS = (1, 2, 3)
ENTRIES = [e for e in CATALOG if e["level"] in LEVELS]


def test_every_catalog_problem_has_its_file_and_nothing_else():
    for level in LEVELS:
        files = {p.filename: p.pid for p in list_problems(level)}
        expected = {e["filename"]: e["pid"] for e in CATALOG if e["level"] == level}
        assert files == expected


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"L{e['level']}-{e['name']}")
def test_reference_maps_catalog_shapes_on_meta(entry):
    """Runs the reference on the meta device: shapes and dtypes only, no real memory. A recurrent layer
    (nn.RNNBase) runs on the CPU instead: on meta every time step is dispatched apart, a minute for the
    6-layer, 512-step LSTMs, where the CPU takes a second for their 3 MB of inputs."""
    module = load_module(ROOT / "KernelBench" / f"level{entry['level']}" / entry["filename"])
    device = torch.device("meta")
    model = build_model(module.Model, module, 42, device, torch.float32)
    if any(isinstance(layer, torch.nn.RNNBase) for layer in model.modules()):
        device = torch.device("cpu")
        model = build_model(module.Model, module, 42, device, torch.float32)
    with torch.device(device):
        torch.manual_seed(0)
        inputs = module.get_inputs()
    for spec, value in zip(entry["inputs"], inputs):
        if isinstance(value, torch.Tensor):
            assert list(value.shape) == spec["shape"] and str(value.dtype) == f"torch.{spec['dtype']}", spec["name"]
    assert len(inputs) == len(entry["inputs"])
    with torch.no_grad():
        output = model(*inputs)
    assert list(output.shape) == entry["output"]["shape"]
    assert str(output.dtype) == f"torch.{entry['output']['dtype']}"
    if isinstance(entry["footprint"].get("param_count"), int):
        assert sum(p.numel() for p in model.parameters()) == entry["footprint"]["param_count"]


def test_hidden_files_name_their_seed_and_the_four_scalings():
    filtered = json.loads((ROOT / "hidden_tests" / "filtered_configs.json").read_text())
    for entry in ENTRIES:
        module = load_module(hidden_path(entry["level"], entry["pid"]))
        dropped = filtered.get(f"level{entry['level']}", {}).get(str(entry["pid"]), {})
        expected = [d for d in HIDDEN_DISTRIBUTIONS if d[0] not in dropped]
        assert [tuple(d) for d in module.DISTRIBUTIONS] == expected
        assert module.SEED == hidden_seed(entry["level"], entry["pid"])
        assert module.PROBLEM == entry["filename"]


def test_upstream_drops_are_reproduced():
    filtered = json.loads((ROOT / "hidden_tests" / "filtered_configs.json").read_text())
    assert filtered["level1"] == {"90": {"D2": "reference output contains NaN or Inf"},
                                  "98": {"D4": "reference output contains NaN or Inf"}}


def test_hidden_inputs_are_identical_across_calls_and_scaled():
    """L3/35 is small enough to generate for real: uniform [0, 1) inputs under x1, x3, x0.01, x-1."""
    module = load_module(hidden_path(3, 35))
    first, second = module.get_hidden_inputs(), module.get_hidden_inputs()
    assert all(torch.equal(a[0], b[0]) for a, b in zip(first, second))
    ranges = {name: (float(x[0].min()), float(x[0].max())) for (name, _), x in zip(module.DISTRIBUTIONS, first)}
    assert 0 <= ranges["D1"][0] and ranges["D1"][1] < 1
    assert 1 < ranges["D2"][1] < 3
    assert 0 <= ranges["D3"][0] and ranges["D3"][1] < 0.01
    assert -1 < ranges["D4"][0] and ranges["D4"][1] <= 0


def test_integer_inputs_keep_their_dtype_in_hidden_configs():
    module = load_module(hidden_path(1, 95))
    with torch.device("meta"):
        configs = module.get_hidden_inputs()
    assert len(configs) == 4 and all(inputs[1].dtype == torch.int64 for inputs in configs)


def test_degenerate_list_is_the_script_output_and_covers_upstream_exclusions():
    listing = json.loads((ROOT / "results" / "degenerate_problems.json").read_text())
    assert {"23", "80", "83"} <= set(listing["level2"])
    for level, entries in listing.items():
        for pid, entry in entries.items():
            assert entry["problem"].startswith(f"{pid}_") and entry["reason"]


@pytest.mark.parametrize("level, pid", sorted(INPUT_BLIND))
def test_input_blind_source_keeps_model_and_drops_inputs(level, pid):
    problem = next(p for p in list_problems(level) if p.pid == pid)
    source = problem.path.read_text()
    stripped = stripped_source(source)
    assert "class Model" in stripped and '"""' in stripped
    assert "get_inputs" not in stripped and "get_init_inputs" not in stripped
    module = load_module(problem.path)
    for name, value in vars(module).items():
        if isinstance(value, int) and not name.startswith("_") and f"{name} = " in source:
            assert f"\n{name} = " not in stripped


def problem_module(tmp_path, name: str, forward: str, inputs: str):
    path = tmp_path / f"{name}.py"
    path.write_text("import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                    f"        return {forward}\n\n\ndef get_inputs():\n    return [{inputs}]\n\n\n"
                    "def get_init_inputs():\n    return []\n")
    return load_module(path)


def test_the_rounding_check_flags_references_that_rounding_alone_moves(tmp_path):
    """Only a kernel repeating such a reference's arithmetic bit for bit passes: the problem cannot tell
    honest kernels from wrong ones. Level 3's EfficientNetB2 is one (BatchNorm over two values)."""
    cpu = torch.device("cpu")
    chaotic = rounding_check(problem_module(tmp_path, "chaotic", "torch.remainder(x * 1e7, 1.0)",
                                            "torch.rand(64, 64)"), cpu, 7)
    assert chaotic["checked"] and not chaotic["passed"] and chaotic["moved"] > 0.5
    assert degenerate_reason({"D1": {"finite": True, "min": 0.0, "max": 1.0}}, chaotic).startswith("ill-conditioned")
    # A threshold on the inputs flips the few values within rounding of it: far below the share.
    threshold = rounding_check(problem_module(tmp_path, "threshold", "(x > 0.5).float()",
                                              "torch.rand(4_000_000)"), cpu, 7)
    assert threshold["checked"] and threshold["passed"] and threshold["mismatches"] < 100
    stable = rounding_check(problem_module(tmp_path, "stable", "torch.relu(x @ x)", "torch.rand(64, 64)"), cpu, 7)
    assert stable == {"checked": True, "passed": True, "mismatches": 0, "values": 4096, "moved": 0.0}
    integers = rounding_check(problem_module(tmp_path, "integers", "x * 2", "torch.randint(0, 9, (8,))"), cpu, 7)
    assert integers["checked"] is False
    efficientnet = ROOT / "KernelBench" / "level3" / "24_EfficientNetB2.py"
    found = rounding_check(load_module(efficientnet), cpu, hidden_seed(3, 24))
    assert not found["passed"] and found["moved"] > 0.9
