"""GPU checks (run on a CUDA machine with `pytest -m gpu`): the CUDA IPC hand-over and device inputs."""

import json

import pytest
import torch

from conftest import load_config, make_run, tiny_overrides
from kernelbench_verified.evaluate import evaluate_run

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def needs_gpu():
    if not torch.cuda.is_available():
        pytest.fail("this test needs a CUDA GPU; run it on the GPU machine")


def test_gpu_verdicts_through_cuda_ipc(tmp_path):
    run_dir = make_run(tmp_path, "gpu", {(1, 0): "relu_correct", (1, 1): "relu_identity_shortcut",
                                         (1, 2): "relu_patch_tensor_ops", (4, 0): "cross_entropy_correct",
                                         (3, 0): "linear_gelu_correct"})
    cfg = load_config("eval", tiny_overrides(tmp_path, "gpu", num_samples=3, use_hidden_tests=True, device="cuda"))
    evaluate_run(cfg)
    results = json.loads((run_dir / "eval_results_hidden.json").read_text())
    assert results["1_0"]["eval_status"] == "correct", results["1_0"]["metadata"]
    assert results["1_0"]["peak_memory"] > 0
    assert results["1_0"]["runtime_stats"]["l2_flush"] is True
    assert results["1_1"]["metadata"]["failed_case"] == "D4"
    assert results["1_2"]["eval_status"] == "incorrect"
    assert results["4_0"]["eval_status"] == "correct", results["4_0"]["metadata"]
    assert results["3_0"]["eval_status"] == "correct", results["3_0"]["metadata"]
    assert "H200" in results["1_0"]["metadata"]["hardware"] or results["1_0"]["metadata"]["hardware"]
