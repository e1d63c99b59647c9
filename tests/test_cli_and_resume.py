"""The script's behaviour on bad input, and resuming a run that was killed."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, TINY, load_config, make_run, tiny_overrides
from kernelbench_verified.errors import UserError
from kernelbench_verified.problems.load import source_sha256

SCRIPT = ROOT / "scripts" / "eval_from_generations.py"


def run_script(*args, timeout=120):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("overrides, message", [
    (["level=7"], "unknown level 7"),
    (["precision=fp64"], "precision='fp64' is not one of"),
    (["num_samples=0"], "num_samples=0 must be an integer >= 1"),
    (["no_such_key=1"], "unknown config key 'no_such_key'"),
    (["use_hidden_tests=maybe"], "use_hidden_tests='maybe' is not a boolean"),
    (["gpu_arch=[Kepler2]"], "unknown gpu_arch 'Kepler2'"),
    (["subset=[1,2,3]"], "subset="),
    (["static_check=strict"], "static_check='strict' is not one of"),
    (["spare_sandboxes=-1"], "spare_sandboxes=-1 must be an integer >= 0"),
])
def test_bad_config_values_give_one_line_errors(tmp_path, overrides, message):
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    base = [o for o in tiny_overrides(tmp_path, "r") if o.split("=")[0] not in {x.split("=")[0] for x in overrides}]
    result = run_script(*base, *overrides)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_missing_run_folder_and_required_keys(tmp_path):
    result = run_script(*tiny_overrides(tmp_path, "nothing_here"))
    assert result.returncode == 2 and "run folder" in result.stderr and "not found" in result.stderr
    result = run_script("level=1")
    assert result.returncode == 2 and "missing required config key(s): run_name" in result.stderr


def test_malformed_result_file_is_reported_and_left_untouched(tmp_path):
    run_dir = make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    broken = run_dir / "eval_results.json"
    broken.write_text("{ not json")
    result = run_script(*tiny_overrides(tmp_path, "r"))
    assert result.returncode == 2 and "is not valid JSON" in result.stderr
    assert broken.read_text() == "{ not json"


def test_missing_hidden_tests_are_named(tmp_path):
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    result = run_script(*tiny_overrides(tmp_path, "r", hidden_tests_dir=str(tmp_path / "none"),
                                        use_hidden_tests=True))
    assert result.returncode == 2 and "no hidden tests for level 1" in result.stderr


def test_killed_run_resumes_without_reevaluating_finished_samples(tmp_path):
    run_dir = make_run(tmp_path, "r", {(1, 0): "relu_correct", (1, 1): "relu_sleeps_forever",
                                        (1, 2): "relu_correct"})
    results = run_dir / "eval_results.json"
    process = subprocess.Popen([sys.executable, str(SCRIPT), *tiny_overrides(tmp_path, "r", num_samples=3, subset="[1,1]")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and "1_0" in json.loads(results.read_text())):
        time.sleep(0.5)
    os.killpg(process.pid, signal.SIGKILL)  # the whole run, judge and sandbox included
    process.wait()
    first = json.loads(results.read_text())
    assert list(first) == ["1_0"] and first["1_0"]["eval_status"] == "correct"

    (run_dir / "level_1_problem_1_sample_1_kernel.py").write_text(
        (ROOT / "examples/tiny/kernels/relu_correct.py").read_text())
    result = run_script(*tiny_overrides(tmp_path, "r", num_samples=3, subset="[1,1]"))
    assert result.returncode == 0, result.stderr
    assert "2 kernel(s) to evaluate, 1 already done" in result.stdout
    final = json.loads(results.read_text())
    assert final["1_0"] == first["1_0"]
    assert [final[k]["eval_status"] for k in ("1_0", "1_1", "1_2")] == ["correct"] * 3


def test_a_record_of_another_version_of_the_problem_file_is_evaluated_again(tmp_path):
    """A re-run resumes a sample only if its record was judged against the same problem file: after the
    reference changes (or problems_dir= points elsewhere) the old verdict is no evidence."""
    problems = tmp_path / "KernelBench"
    shutil.copytree(TINY / "KernelBench", problems)
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    overrides = tiny_overrides(tmp_path, "r", subset="[1,1]", problems_dir=str(problems))
    assert run_script(*overrides).returncode == 0
    again = run_script(*overrides)
    assert "0 kernel(s) to evaluate, 1 already done" in again.stdout
    reference = next((problems / "level1").glob("1_*.py"))
    reference.write_text(reference.read_text() + "\n# the reference, edited\n")
    edited = run_script(*overrides)
    assert edited.returncode == 0 and "1 kernel(s) to evaluate, 0 already done" in edited.stdout
    record = json.loads((tmp_path / "r" / "eval_results.json").read_text())["1_0"]
    assert record["eval_status"] == "correct" and record["metadata"]["problem_sha256"] == source_sha256(reference)


def test_huggingface_source_without_datasets_or_network_is_one_clear_line(tmp_path):
    """datasets is not a test dependency: the script must say how to get it (offline it says it could
    not load the dataset); either way one line, exit 2."""
    make_run(tmp_path, "r", {(1, 0): "relu_correct"})
    overrides = [o for o in tiny_overrides(tmp_path, "r") if not o.startswith("problems_dir=")]
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(tmp_path / "hf"))
    result = subprocess.run([sys.executable, str(SCRIPT), *overrides, "dataset_src=huggingface"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert ("pip install datasets" in result.stderr) or ("use dataset_src=local" in result.stderr)


def test_judge_processes_start_sandboxes_before_importing_torch():
    """A judge process re-imports the eval script (multiprocessing's spawn) and then runs
    evaluate.worker.judge_worker: neither may import torch, or the first kernel of every run waits
    for two torch imports in a row instead of overlapping them."""
    code = ("import runpy, sys; runpy.run_path(sys.argv[1], run_name='__mp_main__'); "
            "import kernelbench_verified.evaluate.worker; print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "False"


def test_local_mode_never_imports_ray_and_ray_mode_without_it_says_how_to_install(tmp_path):
    """Ray is an optional extra: the eval path imports it only in eval_mode=ray, and without it that mode
    stops with one line naming the extra."""
    code = ("import sys; import kernelbench_verified.evaluate.run as run; print('ray' in sys.modules); "
            "sys.modules['ray'] = None; from kernelbench_verified import cluster\n"
            "try:\n    cluster.import_ray()\nexcept Exception as e:\n    print(e)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines() == ["False", 'eval_mode=ray needs Ray: pip install -e ".[ray]"']


@pytest.mark.parametrize("word, value", [("F", False), ("T", True), ("false", False), ("True", True), ("0", False),
                                         ("yes", True)])
def test_upstream_booleans_mean_what_they_say(word, value):
    """pydra's T/F and the usual spellings: `use_hidden_tests=F` must never read as true."""
    cfg = load_config("eval", ["run_name=x", "level=1", f"use_hidden_tests={word}", f"verbose={word}"])
    assert cfg.use_hidden_tests is value and cfg.verbose is value


def test_a_value_that_is_not_a_boolean_names_its_key():
    with pytest.raises(UserError, match=r"measure_performance='sometimes' is not a boolean"):
        load_config("eval", ["run_name=x", "level=1", "measure_performance=sometimes"])


def test_upstream_tuple_subset_parses():
    assert tuple(load_config("eval", ["run_name=x", "level=1", "subset=(1,10)"]).subset) == (1, 10)


def test_an_unknown_key_names_the_close_ones():
    with pytest.raises(UserError, match=r"unknown config key 'use_hiden_tests' \(did you mean use_hidden_tests"):
        load_config("eval", ["run_name=x", "level=1", "use_hiden_tests=True"])
