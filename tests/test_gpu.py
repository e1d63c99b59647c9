"""GPU checks (run on a CUDA machine with `pytest -m gpu`): the CUDA IPC hand-over and device inputs."""

import json
import os

import pytest
import torch

from conftest import load_config, make_run, tiny_overrides
from kernelbench_verified.evaluate.run import evaluate_run

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def needs_gpu():
    if not torch.cuda.is_available():
        pytest.fail("this test needs a CUDA GPU; run it on the GPU machine")


@pytest.mark.parametrize("sandbox", ["jail", "none"])
def test_gpu_verdicts_through_cuda_ipc(tmp_path, sandbox):
    if sandbox == "jail" and os.geteuid() != 0:
        pytest.fail("the jail needs root; run the GPU tests as root on the GPU machine")
    run_dir = make_run(tmp_path, "gpu", {(1, 0): "relu_correct", (1, 1): "relu_identity_shortcut",
                                         (1, 2): "relu_patch_tensor_ops", (4, 0): "cross_entropy_correct",
                                         (3, 0): "linear_gelu_correct", (1, 3): "relu_compiled_graphs",
                                         (1, 4): "relu_transposed_output", (2, 0): "matmul_channels_last_view"})
    cfg = load_config("eval", tiny_overrides(tmp_path, "gpu", num_samples=5, use_hidden_tests=True, device="cuda",
                                             sandbox=sandbox))
    evaluate_run(cfg)
    results = json.loads((run_dir / "eval_results_hidden.json").read_text())
    for key, record in sorted(results.items()):  # the whole story on the GPU machine's log
        print(key, record["eval_status"], json.dumps(record["metadata"])[:3000])
    assert results["1_0"]["eval_status"] == "correct", results["1_0"]["metadata"]
    assert results["1_0"]["peak_memory"] > 0
    assert results["1_0"]["runtime_stats"]["l2_flush"] is True
    assert results["1_0"]["metadata"]["gpu_pci_address"] != "?"
    assert results["1_1"]["metadata"]["failed_case"] == "D4"
    assert results["1_2"]["eval_status"] == "incorrect"
    assert results["4_0"]["eval_status"] == "correct", results["4_0"]["metadata"]
    assert results["3_0"]["eval_status"] == "correct", results["3_0"]["metadata"]
    assert results["1_3"]["eval_status"] == "correct", results["1_3"]["metadata"]  # outputs from a graph pool
    # Outputs in another layout (a transposed view) are judged on their values and keep their time.
    for key in ("1_4", "2_0"):
        assert results[key]["eval_status"] == "correct", results[key]["metadata"]
        assert results[key]["runtime"] > 0, results[key]["metadata"].get("runtime_withheld")
    assert "H200" in results["1_0"]["metadata"]["hardware"] or results["1_0"]["metadata"]["hardware"]
    stats = results["1_0"]["runtime_stats"]
    assert stats["persisting_l2_resets"] == stats["num_trials"]


def test_persisting_l2_reset_gives_back_the_carve_out():
    import ctypes

    from kernelbench_verified.measure.timing import CU_LIMIT_PERSISTING_L2_CACHE_SIZE, reset_persisting_l2

    torch.zeros(1, device="cuda")  # make the primary context current on this thread
    driver = ctypes.CDLL("libcuda.so.1")
    limit, wanted = ctypes.c_size_t(), 4 << 20
    assert driver.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(wanted)) == 0
    driver.cuCtxGetLimit(ctypes.byref(limit), CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
    assert limit.value > 0  # the driver granted a set-aside (rounded to its granularity)
    assert reset_persisting_l2()
    driver.cuCtxGetLimit(ctypes.byref(limit), CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
    assert limit.value == 0


def test_host_memory_of_a_cuda_sandbox_is_capped_by_its_cgroup(tmp_path):
    """On CUDA, RLIMIT_DATA cannot cap host memory (the driver's reservations count); the sandbox's
    cgroup does: the 8 GiB hog is killed at 6 GiB, the honest kernel next to it is correct."""
    import shutil
    from pathlib import Path

    from kernelbench_verified.evaluate import cgroups

    if os.geteuid() != 0 or cgroups.locate()[0] is None:
        pytest.fail(f"this test needs root and a memory cgroup: {cgroups.locate()[1]}")
    run_dir = make_run(tmp_path, "hog", {(1, 0): "relu_correct"})
    hog = Path(__file__).parent / "fixtures" / "jail" / "jail_memory_hog.py"
    shutil.copy(hog, run_dir / "level_1_problem_1_sample_1_kernel.py")
    cfg = load_config("eval", tiny_overrides(tmp_path, "hog", num_samples=2, subset="[1,1]", device="cuda",
                                             static_check="off", **{"jail_limits.host_memory_gb": 6}))
    evaluate_run(cfg)
    results = json.loads((run_dir / "eval_results.json").read_text())
    for key, record in sorted(results.items()):
        print(key, record["eval_status"], json.dumps(record["metadata"])[:2000])
    honest, hogged = results["1_0"], results["1_1"]
    assert honest["eval_status"] == "correct" and honest["metadata"]["host_memory_limit"].startswith("cgroup v")
    assert 0 < honest["metadata"]["host_memory_peak_bytes"] < 6 << 30
    assert hogged["eval_status"] == "resource_limit" and hogged["metadata"]["error"].startswith("host_memory:")
    assert not list(cgroups.locate()[0].parent.glob(f"eval{os.getpid()}_sandbox_*"))  # the evaluator's own
