"""scripts/generate_baseline_time.py on the CPU, the baseline file reader, fingerprint comparison and
the figures script."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, TINY
from kernelbench_verified.baseline.timing import DEFAULT_MODES
from kernelbench_verified.measure.baseline_files import load_baseline
from kernelbench_verified.measure.fingerprints import compare_fingerprints
from kernelbench_verified.measure.memory import CALL_ABOVE_RESIDENT
from kernelbench_verified.errors import UserError
from kernelbench_verified.problems.load import source_sha256

SCRIPT = ROOT / "scripts" / "generate_baseline_time.py"
FIGURES = ROOT / "benchmarks" / "baseline_figures.py"
FLAGS = {  # what each mode's fingerprint must say was in force
    "baseline_time_torch": ("highest", False, True),
    "baseline_time_torch_tf32": ("high", True, True),
    "baseline_time_torch_fp32_ieee": ("highest", False, False),
    "baseline_time_torch_bf16": ("highest", False, True),
}


def generate(out_dir, *overrides, problems_dir=TINY / "KernelBench", cwd=None):
    args = [f"problems_dir={problems_dir}", "level=1", "subset=[1,2]", "num_perf_trials=3", "num_warmup=1",
            "num_perf_trials_by_level={1: 2}", f"out_dir={out_dir}", "device=cpu", *overrides]
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=180,
                          cwd=cwd)


def read(path):
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("timing")
    result = generate(out)
    assert result.returncode == 0, result.stderr
    return out, result


def test_writes_one_file_per_mode_with_fingerprint_and_stats(first_run):
    out, result = first_run
    for mode in DEFAULT_MODES:
        data = read(out / "cpu" / f"{mode}.json")
        fingerprint = data["fingerprint"]
        assert fingerprint["mode"] == mode and fingerprint["device"] == "cpu"
        assert fingerprint["gpu_name"] is None and fingerprint["gpu_model_id"] is None
        assert fingerprint["precision"] == ("bf16" if mode.endswith("bf16") else "fp32")
        flags = fingerprint["precision_flags"]
        assert (flags["float32_matmul_precision"], flags["cuda_matmul_allow_tf32"],
                flags["cudnn_allow_tf32"]) == FLAGS[mode]
        assert fingerprint["timing"] == {"num_trials": 3, "num_trials_by_level": {"1": 2, "4": 10},
                                         "num_warmup": 1, "flush_l2": True, "synchronisation": "device-wide"}
        assert fingerprint["torch"] and fingerprint["date"]
        assert fingerprint["peak_memory"] == CALL_ABOVE_RESIDENT
        assert sorted(data["level1"]) == ["1_ReLU.py", "2_Matmul.py"]
        for entry in data["level1"].values():
            # num_trials: level 1's own count from num_perf_trials_by_level
            assert entry["num_trials"] == 2 and entry["peak_memory"] == -1 and entry["device"] == "cpu"
            assert entry["peak_memory_method"] == CALL_ABOVE_RESIDENT
            assert 0 < entry["min"] <= entry["median"] <= entry["max"] and entry["min"] <= entry["mean"]
            assert entry["seconds"] > 0 and entry["hardware"].startswith("cpu")
        for name, entry in data["level1"].items():  # the digest of the file it timed, as results carry it
            assert entry["problem_sha256"] == source_sha256(TINY / "KernelBench" / "level1" / name)
        assert data["failures"] == {}
        assert load_baseline(out / "cpu" / f"{mode}.json").fingerprint == fingerprint


def test_rerun_resumes_without_retiming(first_run, tmp_path):
    out, _ = first_run
    copy = tmp_path / "timing"
    shutil.copytree(out, copy)
    before = {mode: read(copy / "cpu" / f"{mode}.json") for mode in DEFAULT_MODES}
    again = generate(copy)
    assert again.returncode == 0, again.stderr
    assert "0 timing(s) to take" in again.stdout
    assert {mode: read(copy / "cpu" / f"{mode}.json") for mode in DEFAULT_MODES} == before

    wider = generate(copy, "subset=[1,3]", "modes=[baseline_time_torch_tf32]")
    assert wider.returncode == 0, wider.stderr
    assert "1 timing(s) to take" in wider.stdout
    after = read(copy / "cpu" / "baseline_time_torch_tf32.json")["level1"]
    old = before["baseline_time_torch_tf32"]["level1"]
    assert {k: after[k] for k in old} == old  # the earlier timings are kept as they were
    assert after["3_Linear_GELU.py"]["num_trials"] == 2


@pytest.mark.parametrize("path, death", [("sandbox", "judge process died (exit -9)"),
                                         ("process", "worker process died (exit -9)")])
def test_failing_problems_are_recorded_and_the_rest_timed(tmp_path, path, death):
    """A reference that raises, and one that kills the process it runs in (on the sandbox path, the
    judge's): each is recorded as a failure, and a fresh process times the problems after it."""
    problems = tmp_path / "problems" / "level1"
    problems.mkdir(parents=True)
    relu = (TINY / "KernelBench" / "level1" / "1_ReLU.py").read_text()
    (problems / "1_ReLU.py").write_text(relu)
    (problems / "2_Raises.py").write_text(relu.replace("return torch.relu(x)", "raise RuntimeError('reference broke')"))
    (problems / "3_KillsItsProcess.py").write_text(
        relu.replace("return torch.relu(x)", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"))
    (problems / "4_ReLU.py").write_text(relu)
    result = generate(tmp_path / "out", "modes=[baseline_time_torch]", "subset=[null,null]", f"timing_path={path}",
                      problems_dir=tmp_path / "problems")
    assert result.returncode == 0, result.stderr
    baseline = load_baseline(tmp_path / "out" / "cpu" / "baseline_time_torch.json")
    assert list(baseline.levels["level1"]) == ["1_ReLU.py", "4_ReLU.py"]  # 4 timed by a fresh worker
    failures = baseline.failures["level1"]
    assert "RuntimeError: reference broke" in failures["2_Raises.py"]["error"]
    assert death in failures["3_KillsItsProcess.py"]["error"]
    assert "2/4 timed, 2 failed" in result.stdout


def test_settings_differing_from_an_existing_file_stop_with_one_line(first_run, tmp_path):
    out, _ = first_run
    copy = tmp_path / "timing"
    shutil.copytree(out, copy)
    result = generate(copy, "num_perf_trials=5")
    assert result.returncode == 2
    assert "timing settings differ" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_file_whose_peaks_were_measured_the_old_way_is_retimed_only_with_force(first_run, tmp_path):
    out, _ = first_run
    copy = tmp_path / "timing"
    shutil.copytree(out, copy)
    for mode in DEFAULT_MODES:  # as files (timing_path=sandbox) written before the method was named
        path = copy / "cpu" / f"{mode}.json"
        data = read(path)
        del data["fingerprint"]["peak_memory"]
        for entry in data["level1"].values():
            del entry["peak_memory_method"]
        path.write_text(json.dumps(data))
    result = generate(copy)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "peak memory measured differently: the existing file total_in_evaluator vs this run " \
           "call_above_resident" in result.stderr and "force=true" in result.stderr
    forced = generate(copy, "force=true", "modes=[baseline_time_torch]")
    assert forced.returncode == 0, forced.stderr
    data = read(copy / "cpu" / "baseline_time_torch.json")
    assert data["fingerprint"]["peak_memory"] == CALL_ABOVE_RESIDENT
    assert all(e["peak_memory_method"] == CALL_ABOVE_RESIDENT for e in data["level1"].values())


def test_unknown_mode_is_a_one_line_error(tmp_path):
    result = generate(tmp_path, "modes=[baseline_time_torch_fp64]")
    assert result.returncode == 2 and "unknown baseline mode(s) baseline_time_torch_fp64" in result.stderr
    assert "Traceback" not in result.stderr


def test_old_format_files_load_without_fingerprint(tmp_path):
    path = tmp_path / "baseline_time_torch.json"
    path.write_text(json.dumps({"level1": {"19_ReLU.py": {"mean": 0.02, "std": 0.001, "min": 0.019, "max": 0.03,
                                                          "num_trials": 100, "hardware": "L40S",
                                                          "device": "cuda:0"}}}))
    baseline = load_baseline(path)
    assert baseline.fingerprint is None and baseline.failures == {}
    assert baseline.levels["level1"]["19_ReLU.py"]["mean"] == 0.02
    assert "no environment fingerprint" in compare_fingerprints({"device": "cpu"}, baseline.fingerprint)[0]
    path.write_text(json.dumps({"level1": {"19_ReLU.py": {"std": 1}}}))
    with pytest.raises(UserError, match="'mean'"):
        load_baseline(path)


def test_compare_fingerprints_names_gpu_and_tf32_differences(first_run):
    out, _ = first_run
    tf32 = read(out / "cpu" / "baseline_time_torch_tf32.json")["fingerprint"]
    default = read(out / "cpu" / "baseline_time_torch.json")["fingerprint"]
    assert compare_fingerprints(tf32, dict(tf32, date="2030-01-01")) == []
    h200 = dict(tf32, device="cuda", gpu_name="NVIDIA H200",
                gpu_model_id="NVIDIA H200 / sm_90 / 150754820096 B / 132 SMs")
    h100 = dict(h200, gpu_name="NVIDIA H100 80GB HBM3", gpu_model_id="NVIDIA H100 80GB HBM3 / sm_90 / 85045379072 B / 132 SMs")
    (gpu,) = compare_fingerprints(h100, h200)
    assert gpu.startswith("GPU differ") and "H100" in gpu and "H200" in gpu
    (flags,) = compare_fingerprints(default, tf32)
    assert flags.startswith("TF32") and "cuda_matmul_allow_tf32=False" in flags and "=True" in flags
    assert compare_fingerprints(default, tf32, ignore=("precision_flags",)) == []


def test_figures_from_cpu_files_and_known_ratios(first_run, tmp_path):
    out, _ = first_run
    result = subprocess.run([sys.executable, str(FIGURES), "--hardware", "cpu", "--dir", str(out), "--repeat",
                             str(out / "cpu" / "baseline_time_torch.json"),
                             str(out / "cpu" / "baseline_time_torch_fp32_ieee.json")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "level1 (2 problems): geomean fp32_ieee/tf32" in result.stdout
    assert "baseline_time_torch level1: 2 problems" in result.stdout

    def write(folder, mode, means):
        folder.mkdir(parents=True, exist_ok=True)
        levels = {"level1": {name: {"mean": m, "seconds": 1.0} for name, m in means.items()}}
        (folder / f"{mode}.json").write_text(json.dumps(levels))

    known = tmp_path / "known" / "X"
    write(known, "baseline_time_torch_tf32", {"1_a.py": 1.0, "2_b.py": 2.0})
    write(known, "baseline_time_torch_fp32_ieee", {"1_a.py": 4.0, "2_b.py": 2.0})  # ratios 4 and 1
    write(known, "baseline_time_torch", {"1_a.py": 1.0, "2_b.py": 2.0})
    write(tmp_path / "again", "baseline_time_torch_tf32", {"1_a.py": 3.0, "2_b.py": 2.0})  # |d|/mean 1.0, 0
    figures_path = tmp_path / "figures.json"
    result = subprocess.run([sys.executable, str(FIGURES), "--hardware", "X", "--dir", str(tmp_path / "known"),
                             "--repeat", str(known / "baseline_time_torch_tf32.json"),
                             str(tmp_path / "again" / "baseline_time_torch_tf32.json"), "--out", str(figures_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    figures = read(figures_path)
    level = figures["tf32"]["level1"]
    assert level["geomean fp32_ieee/tf32"] == pytest.approx(2.0)
    assert level["geomean torch_default/tf32"] == pytest.approx(1.0)
    assert list(level["tf32 helps most (fp32_ieee/tf32)"]) == ["1_a.py", "2_b.py"]
    assert figures["reproducibility"]["level1"] == {"problems": 2, "median": pytest.approx(0.5),
                                                    "max": pytest.approx(1.0), "worst": "1_a.py"}
    assert figures["seconds"]["baseline_time_torch"]["level1"]["total"] == 2.0


@pytest.mark.gpu
def test_gpu_run_records_the_gpu_and_peak_memory(tmp_path):
    result = generate(tmp_path, "device=cuda", "modes=[baseline_time_torch,baseline_time_torch_tf32]")
    assert result.returncode == 0, result.stderr
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    for mode in ("baseline_time_torch", "baseline_time_torch_tf32"):
        data = read(folder / f"{mode}.json")
        fingerprint = data["fingerprint"]
        assert fingerprint["device"] == "cuda" and fingerprint["gpu_name"] and fingerprint["cuda"]
        assert fingerprint["gpu_model_id"].startswith(fingerprint["gpu_name"]) and " SMs" in fingerprint["gpu_model_id"]
        assert fingerprint["precision_flags"]["cuda_matmul_allow_tf32"] == (mode == "baseline_time_torch_tf32")
        for entry in data["level1"].values():
            assert entry["device"] == "cuda:0" and entry["peak_memory"] > 0 and entry["mean"] > 0


def test_sandbox_path_times_each_reference_as_its_own_candidate_and_resumes(tmp_path):
    """timing_path=sandbox: each reference is timed by the judge in the jail, as a kernel is, with the
    mode's precision; its entry is the judge's statistics, a reference that fails is a failure named by
    the status the judge gave it, a re-run takes nothing, and a file of the other path is never mixed in."""
    problems = tmp_path / "problems" / "level1"
    problems.mkdir(parents=True)
    relu = (TINY / "KernelBench" / "level1" / "1_ReLU.py").read_text()
    (problems / "1_ReLU.py").write_text(relu)
    (problems / "2_Raises.py").write_text(relu.replace("return torch.relu(x)", "raise RuntimeError('reference broke')"))
    args = ("modes=[baseline_time_torch,baseline_time_torch_bf16]", "subset=[null,null]")  # the default path
    elsewhere = tmp_path / "working_directory"
    elsewhere.mkdir()
    result = generate(tmp_path / "out", *args, problems_dir=tmp_path / "problems", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    # The evaluator's runs sit beside the baseline files, not here (its content-addressed build cache,
    # cache/ by default, is shared by every run on purpose).
    assert [p.name for p in elsewhere.iterdir()] in ([], ["cache"])
    for mode, precision in (("baseline_time_torch", "fp32"), ("baseline_time_torch_bf16", "bf16")):
        baseline = load_baseline(tmp_path / "out" / "cpu" / f"{mode}.json")
        assert baseline.fingerprint["timing_path"] == "sandbox" and baseline.fingerprint["precision"] == precision
        entry = baseline.levels["level1"]["1_ReLU.py"]
        record = read(tmp_path / "out" / "cpu" / "sandbox_runs" / f"{mode}_level1" / "eval_results.json")["1_0"]
        assert record["metadata"]["precision"] == precision and record["metadata"]["sandbox"] == "jail"
        assert entry["num_trials"] == 2 and entry["mean"] == record["runtime_stats"]["mean"] == record["runtime"]
        # The judge's figure, measured by the kernel's process as the plain path measures it (-1 on the CPU).
        assert entry["peak_memory"] == record["peak_memory"] and entry["peak_memory_method"] == CALL_ABOVE_RESIDENT
        assert record["memory_stats"]["method"] == CALL_ABOVE_RESIDENT
        failure = baseline.failures["level1"]["2_Raises.py"]["error"]
        assert failure.startswith("harness_error as its own candidate") and "reference broke" in failure
    again = generate(tmp_path / "out", *args, problems_dir=tmp_path / "problems")
    assert again.returncode == 0 and "0 timing(s) to take" in again.stdout
    (problems / "2_Raises.py").write_text(relu)  # mended: retry_failed times it afresh, not from its old record
    retried = generate(tmp_path / "out", *args, "retry_failed=true", problems_dir=tmp_path / "problems")
    assert retried.returncode == 0, retried.stderr
    assert "2_Raises.py" in load_baseline(tmp_path / "out" / "cpu" / "baseline_time_torch.json").levels["level1"]
    other_path = generate(tmp_path / "out", *args, "timing_path=process", problems_dir=tmp_path / "problems")
    assert other_path.returncode == 2 and "timing paths differ" in other_path.stderr


def test_compile_modes_are_timed_in_a_plain_process_whatever_the_path():
    from kernelbench_verified.baseline.timing import timing_path_of

    settings = {"timing_path": "sandbox"}
    assert timing_path_of("baseline_time_torch_bf16", settings) == "sandbox"
    assert timing_path_of("baseline_time_torch_compile_inductor_default", settings) == "process"
    assert timing_path_of("baseline_time_torch", {"timing_path": "process"}) == "process"
