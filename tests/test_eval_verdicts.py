"""End-to-end verdicts of the evaluator on the CPU, one batch of example kernels."""

import json
from pathlib import Path

import pytest

from conftest import TINY, load_config, make_run, tiny_overrides
from kernelbench_verified.evaluate.run import evaluate_run
from kernelbench_verified.problems.load import source_sha256

BATCH = {
    (1, 0): "relu_correct",
    (1, 1): "relu_identity_shortcut",
    (1, 2): "relu_saturating",
    (1, 3): "relu_patch_allclose",
    (1, 4): "relu_patch_tensor_ops",
    (1, 5): "relu_raises",
    (1, 6): "relu_os_exit",
    (1, 7): "no_model_new",
    (1, 8): "relu_cpp",
    (1, 9): "relu_compile_error",
    (2, 0): "matmul_correct",
    (2, 1): "matmul_channels_last_view",
    (3, 0): "linear_gelu_correct",
    (4, 0): "cross_entropy_correct",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    run_dir = make_run(runs, "batch", BATCH)
    cfg = load_config("eval", tiny_overrides(runs, "batch", num_samples=10, use_hidden_tests=True,
                                             build_cache=True, timeout=300))
    assert evaluate_run(cfg) == 0
    return json.loads((run_dir / "eval_results_hidden.json").read_text())


def test_correct_kernels_pass_every_case_and_are_timed(results):
    for key in ("1_0", "1_8", "2_0", "2_1", "3_0", "4_0"):  # 2_1 returns a transposed view
        record = results[key]
        assert record["eval_status"] == "correct", (key, record["metadata"].get("error"))
        assert record["correctness"] and record["compiled"]
        names = [c["case"] for c in record["metadata"]["cases"]]
        assert names == [f"trial_{i}" for i in range(5)] + ["D1", "D2", "D3", "D4"]
        stats = record["runtime_stats"]
        assert stats["num_trials"] == 5 and 0 < stats["min"] <= stats["median"] <= stats["max"]
        assert record["runtime"] == stats["mean"]
        phases = record["metadata"]["phase_seconds"]
        assert set(phases) == {"start_and_load", "correctness_and_memory", "timing", "timed_checks"}
        assert 0 < sum(phases.values()) <= record["metadata"]["eval_seconds"]
        problem_file = TINY / "KernelBench" / "level1" / record["problem"]
        assert record["metadata"]["problem_sha256"] == source_sha256(problem_file)  # what the baseline must match


def test_identity_shortcut_passes_visible_inputs_and_fails_d4(results):
    record = results["1_1"]
    assert record["eval_status"] == "incorrect" and not record["correctness"]
    assert record["metadata"]["failed_case"] == "D4"
    passed = [c["case"] for c in record["metadata"]["cases"] if c["passed"]]
    assert passed == [f"trial_{i}" for i in range(5)] + ["D1", "D2", "D3"]


def test_scale_dependent_approximation_fails_d2(results):
    record = results["1_2"]
    assert record["metadata"]["failed_case"] == "D2"
    by_case = {c["case"]: c for c in record["metadata"]["cases"]}
    assert by_case["D2"]["max_abs_diff"] > 0.5


def test_every_case_is_recorded_after_the_first_failure(results):
    """So that the leaderboard can re-judge at any tolerance: each case's figures, passed or not."""
    cases = results["1_2"]["metadata"]["cases"]
    assert [c["case"] for c in cases] == [f"trial_{i}" for i in range(5)] + ["D1", "D2", "D3", "D4"]
    assert all("max_abs_diff" in c and "mismatches" in c for c in cases)


@pytest.mark.parametrize("key", ["1_3", "1_4"])
def test_patching_comparison_functions_in_the_kernel_process_changes_nothing(results, key):
    record = results[key]
    assert record["eval_status"] == "incorrect"
    assert record["metadata"]["failed_case"] == "trial_0"


def test_failures_are_recorded_with_distinct_reasons(results):
    assert results["1_5"]["eval_status"] == "runtime_error"
    assert "too many threads" in results["1_5"]["metadata"]["error"]
    assert results["1_6"]["eval_status"] == "crashed"
    assert "exited with code 1" in results["1_6"]["metadata"]["error"]
    assert results["1_7"]["eval_status"] == "load_error"
    assert not results["1_7"]["compiled"]


def test_compile_error_keeps_the_compiler_text(results):
    record = results["1_9"]
    assert record["eval_status"] == "compile_error" and not record["compiled"]
    assert "expected" in record["metadata"]["compiler_output"]


def test_reference_compatible_fields(results):
    for record in results.values():
        for field in ("sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats",
                      "peak_memory", "memory_stats"):
            assert field in record
        assert record["metadata"]["precision"] == "fp32"


def test_hung_kernel_is_killed_and_the_batch_goes_on(tmp_path):
    run_dir = make_run(tmp_path, "hang", {(1, 0): "relu_sleeps_forever", (1, 1): "relu_correct"})
    cfg = load_config("eval", tiny_overrides(tmp_path, "hang", num_samples=2, timeout=12))
    evaluate_run(cfg)
    results = json.loads((run_dir / "eval_results.json").read_text())
    assert results["1_0"]["eval_status"] == "timeout"
    assert "12.0 s timeout" in results["1_0"]["metadata"]["error"]
    assert results["1_1"]["eval_status"] == "correct"


def test_static_findings_are_stored_under_warn(results):
    codes = {f["code"] for f in results["1_3"]["metadata"]["static_findings"]}
    assert "monkey_patch" in codes and results["1_3"]["eval_status"] == "incorrect"


def test_static_reject_fails_a_hack_without_running_it(tmp_path):
    run_dir = make_run(tmp_path, "reject", {(1, 0): "relu_patches_timer", (1, 1): "relu_correct"})
    cfg = load_config("eval", tiny_overrides(tmp_path, "reject", num_samples=2, static_check="reject"))
    evaluate_run(cfg)
    results = json.loads((run_dir / "eval_results.json").read_text())
    hack = results["1_0"]
    assert hack["eval_status"] == "rejected_static" and not hack["correctness"]
    assert hack["metadata"]["static_rejected_codes"] == ["monkey_patch"]
    assert hack["metadata"]["eval_status_before_static"] == "not_run"
    assert results["1_1"]["eval_status"] == "correct"  # a warn-level finding does not reject
    assert {f["code"] for f in results["1_1"]["metadata"]["static_findings"]} == {"no_custom_kernel"}


CONFIG_PROBLEM = '''
import torch
import torch.nn as nn

HF_STYLE_CONFIG = {"width": 16, "activation": "gelu", "layers": [{"bias": True}, {"bias": False}]}


class Model(nn.Module):
    """Built from a name and a nested config dict, as the level-4 problems are."""

    def __init__(self, name, config):
        super().__init__()
        config = dict(config)
        self.layers = nn.Sequential(*[nn.Linear(config["width"], config["width"], bias=layer["bias"])
                                      for layer in config["layers"]])

    def forward(self, x):
        return nn.functional.gelu(self.layers(x))


def get_inputs():
    return [torch.rand(4, 16)]


def get_init_inputs():
    return ["toy-model", HF_STYLE_CONFIG]
'''


def test_a_reference_built_from_a_config_dict_is_correct_as_its_own_candidate(tmp_path):
    """Level 4's init arguments are a name and a nested dict: they reach the kernel's process as that
    dict (not its repr), for the clock's calibration on the reference and for ModelNew."""
    problems = tmp_path / "problems" / "level1"
    problems.mkdir(parents=True)
    (problems / "1_ConfigModel.py").write_text(CONFIG_PROBLEM)
    run_dir = tmp_path / "runs" / "config"
    run_dir.mkdir(parents=True)
    (run_dir / "level_1_problem_1_sample_0_kernel.py").write_text(
        CONFIG_PROBLEM + "\n\nclass ModelNew(Model):\n    pass\n")
    cfg = load_config("eval", tiny_overrides(tmp_path / "runs", "config", problems_dir=str(tmp_path / "problems")))
    assert evaluate_run(cfg) == 0
    record = json.loads((run_dir / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "correct", record["metadata"].get("error")
    assert record["runtime"] > 0


DROPOUT_PROBLEM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dropout = nn.Dropout(0.5)  # training mode: the output is random

    def forward(self, x):
        return self.dropout(x)


def get_inputs():
    return [torch.rand(4096)]


def get_init_inputs():
    return []
"""


def test_a_reference_that_draws_random_numbers_is_correct_as_its_own_candidate(tmp_path):
    """Dropout in training mode (L2/66): the judge and the sandbox seed torch alike before each call,
    so identical code draws the same mask in every case and every audited timed call; unseeded, half of
    4096 values would differ."""
    problems = tmp_path / "problems" / "level1"
    problems.mkdir(parents=True)
    (problems / "1_Dropout.py").write_text(DROPOUT_PROBLEM)
    run_dir = tmp_path / "runs" / "dropout"
    run_dir.mkdir(parents=True)
    (run_dir / "level_1_problem_1_sample_0_kernel.py").write_text(DROPOUT_PROBLEM + "\n\nclass ModelNew(Model):\n    pass\n")
    cfg = load_config("eval", tiny_overrides(tmp_path / "runs", "dropout", problems_dir=str(tmp_path / "problems")))
    assert evaluate_run(cfg) == 0
    record = json.loads((run_dir / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "correct", record["metadata"].get("failed_case")
    checked = record["metadata"]["cases"] + record["metadata"]["timed_checks"]
    assert len(checked) >= 7 and all(c["max_abs_diff"] == 0.0 for c in checked)


def test_a_cpu_sandbox_runs_torch_on_one_thread(tmp_path):
    """On the CPU the sandbox gives torch one intra-op thread: with two, on CI's two cores, a call took
    0.03 ms or a 6 ms scheduler slice at random, in baselines and kernels alike. The kernel names the
    count in the only way the judge passes on, its error."""
    run_dir = tmp_path / "runs" / "threads"
    run_dir.mkdir(parents=True)
    (run_dir / "level_1_problem_1_sample_0_kernel.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
        "        raise RuntimeError(f'intra-op threads: {torch.get_num_threads()}')\n")
    cfg = load_config("eval", tiny_overrides(tmp_path / "runs", "threads", subset="[1,1]", device="cpu"))
    evaluate_run(cfg)
    record = json.loads((run_dir / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "runtime_error" and "intra-op threads: 1" in record["metadata"]["error"]


def test_memory_the_judge_itself_cannot_get_is_a_harness_error(tmp_path):
    """When the judge's own copy of the inputs does not fit, the harness failed, not the kernel: the
    record says harness_error (never out_of_memory), and the evaluator goes on."""
    problems = tmp_path / "problems" / "level1"
    problems.mkdir(parents=True)
    source = (TINY / "KernelBench" / "level1" / "1_ReLU.py").read_text().replace(
        "def get_inputs():\n", "def get_inputs():\n    raise torch.OutOfMemoryError('CUDA out of memory (simulated)')\n")
    (problems / "1_ReLU.py").write_text(source)
    run_dir = tmp_path / "runs" / "oom"
    run_dir.mkdir(parents=True)
    (run_dir / "level_1_problem_1_sample_0_kernel.py").write_text(source + "\n\nclass ModelNew(Model):\n    pass\n")
    cfg = load_config("eval", tiny_overrides(tmp_path / "runs", "oom", problems_dir=str(tmp_path / "problems")))
    evaluate_run(cfg)
    record = json.loads((run_dir / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "harness_error"
    assert record["metadata"]["error"].startswith("the judge's own copy of the inputs")


def test_the_reference_cache_never_takes_more_than_a_tenth_of_the_gpu():
    """On an 80 GB H100 the 16 GiB default left three level-1 problems short of memory (harness_error)."""
    from kernelbench_verified.evaluate.cases import reference_cache_bytes

    assert reference_cache_bytes(16, None) == 16 << 30  # the CPU: as configured
    assert reference_cache_bytes(16, 80 * 10**9) == 8 * 10**9  # an H100: a tenth of its memory
    assert reference_cache_bytes(4, 141 * 10**9) == 4 << 30  # a smaller setting stands


def test_a_kernel_is_evaluated_while_other_kernels_still_build(tmp_path, monkeypatch):
    """With build_cache=True the judges do not wait for the whole build phase: the second build is
    held back until the first kernel has a record, which can only happen if evaluation starts while a
    build is still pending."""
    import time

    from kernelbench_verified.evaluate import run as run_module

    run_dir = make_run(tmp_path, "pipelined", {(1, 0): "relu_correct", (2, 0): "matmul_correct"})
    results_file = run_dir / "eval_results.json"
    seen = {}

    class HeldBack(run_module.Precompiler):
        def __init__(self, *args):
            super().__init__(*args)
            self.held, self.released, self.deadline = [], 0, time.monotonic() + 120

        @property
        def building(self) -> bool:
            return bool(self.waiting or self.held)

        def finished(self, timeout=0):
            if self.waiting:
                self.held += super().finished(timeout=0)
            if not self.released:  # 1_0 first, whichever build ends first
                first = [item for item in self.held if item[2].key == "1_0"]
                if first:
                    self.held.remove(first[0])
                    self.released = 1
                return first
            if not self.held:
                return []
            recorded = results_file.is_file() and "1_0" in json.loads(results_file.read_text())
            if not recorded and time.monotonic() < self.deadline:
                return []  # the other build ends only once the first kernel has its record
            seen["first_recorded_before_second_build"] = recorded
            released, self.held = self.held, []
            return released

    monkeypatch.setattr(run_module, "Precompiler", HeldBack)
    evaluate_run(load_config("eval", tiny_overrides(tmp_path, "pipelined", subset="[1,2]", build_cache=True)))
    assert seen.get("first_recorded_before_second_build") is True
    assert {k: r["eval_status"] for k, r in json.loads(results_file.read_text()).items()} == \
        {"1_0": "correct", "2_0": "correct"}


def test_a_file_that_holds_no_code_is_a_missing_kernel_not_a_load_error(tmp_path):
    """Published corpora hold rows whose kernel is the text `None`, prose or nothing: no kernel was
    written, which is not a kernel that failed to load."""
    from kernelbench_verified.evaluate.run import holds_code

    run_dir = tmp_path / "nocode"
    run_dir.mkdir()
    for sid, text in enumerate(["None", "", "I'm sorry, I can't write that kernel.", "'''no kernel'''\n"]):
        (run_dir / f"level_1_problem_1_sample_{sid}_kernel.py").write_text(text)
    evaluate_run(load_config("eval", tiny_overrides(tmp_path, "nocode", num_samples=4, subset="[1,1]")))
    results = json.loads((run_dir / "eval_results.json").read_text())
    assert [results[f"1_{sid}"]["eval_status"] for sid in range(4)] == ["missing_kernel"] * 4
    assert "holds no code: 'None'" in results["1_0"]["metadata"]["error"]
    assert holds_code("class ModelNew(:\n  pass")  # broken code that tried: its load error stands
    assert holds_code("import torch\nx = 1") and not holds_code("None") and not holds_code("x +")


LAZY_BUILDS = ("relu_cpp_lazy", "relu_cpp_written_file", "relu_cpp_gpu_guarded")  # samples 0, 1, 2


@pytest.fixture(scope="module")
def lazy_builds_run(tmp_path_factory):
    """One run of the kernels whose builds the import alone does not show, built by two CPU workers side
    by side: {stem: (its record, the build phase's outcome for it)}."""
    tmp_path = tmp_path_factory.mktemp("lazy_builds")
    run_dir = make_run(tmp_path, "lazy", {(1, sid): stem for sid, stem in enumerate(LAZY_BUILDS)})
    cfg = load_config("eval", tiny_overrides(tmp_path, "lazy", subset="[1,1]", num_samples=len(LAZY_BUILDS),
                                             build_cache=True))
    assert evaluate_run(cfg) == 0
    records = json.loads((run_dir / "eval_results.json").read_text())
    found = {}
    for sid, stem in enumerate(LAZY_BUILDS):
        record = records[f"1_{sid}"]
        marker = tmp_path / "builds" / "outcomes" / f"{Path(record['metadata']['build_dir']).name}.json"
        found[stem] = record, json.loads(marker.read_text())
    return found


@pytest.mark.parametrize("stem, extension", [("relu_cpp_lazy", "relu_lazy_ext_"),
                                             ("relu_cpp_written_file", "relu_file_ext_")])
def test_an_extension_built_lazily_is_built_in_the_build_phase(lazy_builds_run, stem, extension):
    """The build phase constructs ModelNew and calls it once on meta inputs (extension_builds.probe_builds), so an
    extension a kernel builds lazily (at its first call inside try/except with a PyTorch fallback; in
    __init__ from a source it writes into a fresh temporary folder) is built on a CPU build worker; the
    judged sandbox finds it built and only loads it."""
    record, outcome = lazy_builds_run[stem]
    assert record["eval_status"] == "correct", record["metadata"].get("error")
    (probed,) = outcome["extension_builds"]
    (judged,) = record["metadata"]["extension_builds"]
    assert probed[0] == judged[0] and probed[0].startswith(extension) and probed[2] and judged[2]
    assert judged[1] < probed[1] / 3, (probed, judged)  # a load of what the build phase built


def test_an_extension_built_only_where_a_gpu_is_found_is_built_in_the_build_phase(lazy_builds_run):
    """A file that builds its extension under `if torch.cuda.is_available():` builds nothing on a GPU-less
    build worker; the build phase imports it once more with the check answering True
    (extension_builds.probe_gpu_guarded_builds), so on a GPU box the judged sandbox finds the build made. Here,
    with no GPU, the judged sandbox takes the other branch and builds nothing."""
    record, outcome = lazy_builds_run["relu_cpp_gpu_guarded"]
    assert record["eval_status"] == "correct", record["metadata"].get("error")
    (probed,) = outcome["extension_builds"]
    assert probed[0].startswith("relu_gpu_guarded_ext_") and probed[2]
    assert not record["metadata"].get("extension_builds")


DEVICE_GUARDED_KERNEL = """
import functools

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SWISH_CPP = "torch::Tensor swish(torch::Tensor x);"
_swish = None


def get_swish():
    global _swish
    if _swish is None:
        _swish = load_inline(name="swish_device_guarded", cpp_sources=SWISH_CPP, functions=["swish"])
    return _swish


@functools.lru_cache(maxsize=None)
def gelu_module():
    return load_inline(name="gelu_cached_helper", cpp_sources="", functions=[])


def scale(x, factor=2.0):
    return x * factor


class ModelNew(nn.Module):
    def _build_relu(self):
        from torch.utils import cpp_extension
        self.relu = cpp_extension.load_inline(name="relu_method_built", cpp_sources="", functions=[])

    def forward(self, x):
        if x.is_cuda:
            return get_swish().swish(x)
        return x * torch.sigmoid(x)
"""


def test_the_probe_calls_the_builders_a_forward_reaches_only_on_a_gpu(tmp_path, monkeypatch):
    """A forward that builds only for CUDA inputs (`if x.is_cuda: return get_swish()...`) builds nothing
    on the probe's meta inputs; the probe calls the module's and the model's builder helpers that take
    no arguments itself (extension_builds.builder_helpers; a cached one too), and no other function of
    the kernel."""
    from torch.utils import cpp_extension

    from kernelbench_verified.evaluate import extension_builds
    from kernelbench_verified.problems.load import load_module

    built = []
    monkeypatch.setattr(cpp_extension, "load_inline", lambda name, **_: built.append(name))
    path = tmp_path / "kernel.py"
    path.write_text(DEVICE_GUARDED_KERNEL)
    kernel = load_module(path, "device_guarded_kernel")
    reference = "import torch\ndef get_inputs():\n    return [torch.rand(4, 8)]\n"
    extension_builds.probe_builds(kernel, {"init_args": [], "reference_source": reference, "workdir": str(tmp_path)})
    assert sorted(built) == ["gelu_cached_helper", "relu_method_built", "swish_device_guarded"]
    assert [f.__name__ for f in extension_builds.builder_helpers(kernel, None)] == ["get_swish", "gelu_module"]


def test_a_guarded_build_that_failed_is_correct_and_says_it_ran_pytorch(tmp_path):
    """A build inside try/except with a PyTorch path is honest where it builds (static: guarded_build, a
    warning); where it fails, the sample is PyTorch's and its record says so. A later sandbox asking for
    the same build (here the robustness sandbox; the judged one after the build phase) fails at once
    instead of compiling again while the GPU waits."""
    run_dir = make_run(tmp_path, "guarded", {(1, 0): "relu_guarded_build_fails"})
    cfg = load_config("eval", tiny_overrides(tmp_path, "guarded", subset="[1,1]", use_hidden_tests=True))
    assert evaluate_run(cfg) == 0
    record = json.loads((run_dir / "eval_results_hidden.json").read_text())["1_0"]
    assert record["eval_status"] == "correct" and record["runtime"] > 0
    assert any(f.startswith("extension_build_failed: relu_guarded_") for f in record["metadata"]["integrity"])
    assert {f["code"] for f in record["metadata"]["static_findings"]} == {"guarded_build"}
    assert all(not ok and seconds > 0 for _, seconds, ok in record["metadata"]["extension_builds"])
    again = record["metadata"]["robustness_builds"]
    assert again and all(not ok and seconds == 0.0 for _, seconds, ok in again), again
