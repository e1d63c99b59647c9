"""Unit behaviour of the library pieces the evaluator is built from."""

import json
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

from conftest import TINY
from kernelbench_verified.evaluate import build
from kernelbench_verified.evaluate.build import arch_list, build_key, compiler_versions, trim_compiler_output
from kernelbench_verified.evaluate import placement
from kernelbench_verified.evaluate.placement import BUILD_NICE, build_cpus, cpu_placement, lower_build_priority
from kernelbench_verified.config import child_visible_devices, load_config, perf_trials, trials_by_level
from kernelbench_verified.measure.correctness import ReferenceError, check_reference, compare_outputs
from kernelbench_verified.errors import UserError
from kernelbench_verified.problems.hidden_generate import generate_hidden_tests
from kernelbench_verified.problems.inputs import case_inputs, correctness_cases, scale_inputs
from kernelbench_verified.problems.load import list_problems, load_module
from kernelbench_verified.results import read_json, write_json_atomic


def test_arch_names_and_capabilities():
    assert arch_list(["Hopper"]) == "9.0"
    assert arch_list(["Ampere", "Hopper", "9.0"]) == "8.0;8.6;9.0"
    assert arch_list(["sm_90a"]) == "9.0a"
    with pytest.raises(UserError, match="unknown gpu_arch"):
        arch_list(["Fermi"])


def test_build_key_depends_on_source_arch_flags_and_compilers(monkeypatch):
    keys = {build_key("a", "9.0"), build_key("b", "9.0"), build_key("a", "8.0"), build_key("a", "9.0", "x")}
    assert len(keys) == 4 and build_key("a", "9.0") == build_key("a", "9.0")
    assert "cxx=" in compiler_versions() and "nvcc=" in compiler_versions()
    # A compile error recorded under one compiler is not reused under another.
    monkeypatch.setattr(build, "compiler_versions", lambda: "cxx=/usr/bin/g++-13:g++ 13.1;nvcc=none")
    assert build_key("a", "9.0") not in keys


def test_compiler_output_is_trimmed_to_errors():
    text = "\n".join([f"noise line {i}" for i in range(200)] + ["x.cu(3): error: expected a ';'"])
    trimmed = trim_compiler_output(text)
    assert "expected a ';'" in trimmed and "noise line 5\n" not in trimmed


def test_scaling_touches_floating_point_tensors_only():
    ints, flags, floats = torch.tensor([1, 2]), torch.tensor([True, False]), torch.tensor([1.0, -2.0])
    out = scale_inputs([floats, ints, flags, 3.5], -1.0)
    assert torch.equal(out[0], -floats) and torch.equal(out[1], ints) and torch.equal(out[2], flags)
    assert out[3] == 3.5


def test_comparison_rules():
    ref = torch.tensor([1.0, 2.0, 3.0])
    assert compare_outputs([ref], [ref + 5e-4], 1e-3, 1e-3)["passed"]
    assert not compare_outputs([ref], [ref + 1e-2], 1e-3, 1e-3)["passed"]
    nan = compare_outputs([ref], [torch.tensor([1.0, math.nan, 3.0])], 1e-3, 1e-3)
    assert not nan["passed"] and nan["nonfinite"] == 1
    assert "shape mismatch" in compare_outputs([ref], [ref[:2]], 1e-3, 1e-3)["reason"]
    pair = compare_outputs([ref, ref], [ref, ref * 2], 1e-3, 1e-3)
    assert not pair["passed"]
    assert compare_outputs([torch.tensor([3, 1])], [torch.tensor([3, 1])], 0, 0)["passed"]
    assert not compare_outputs([torch.tensor([3, 1])], [torch.tensor([3, 2])], 0, 0)["passed"]


def test_comparison_figures_rejudge_any_tolerance_and_do_not_depend_on_chunking(monkeypatch):
    import kernelbench_verified.measure.correctness as correctness

    ref = torch.tensor([0.0, 1.0, -2.0, 4.0])
    out = ref + torch.tensor([1e-4, -3e-3, 0.0, 2e-3])
    figures = compare_outputs([ref], [out], 1e-3, 1e-3)
    assert not figures["passed"] and figures["mismatches"] == 1  # 3e-3 > 1e-3 + 1e-3 * 1
    close = lambda value: pytest.approx(value, rel=1e-4)
    assert figures["max_abs_diff"] == close(3e-3) and figures["mean_abs_diff"] == close(5.1e-3 / 4)
    assert figures["max_rel_diff"] == close(3e-3) and figures["mean_rel_diff"] == close(3.5e-3 / 3)
    # The smallest atol = rtol that passes every element: 3e-3 / (1 + 1).
    needed = figures["tolerance_needed"]
    assert needed == close(1.5e-3)
    assert compare_outputs([ref], [out], needed * 1.001, needed * 1.001)["passed"]
    assert not compare_outputs([ref], [out], needed * 0.999, needed * 0.999)["passed"]
    monkeypatch.setattr(correctness, "CHUNK_ELEMENTS", 3)  # the same figures over two chunks
    chunked = compare_outputs([ref], [out], 1e-3, 1e-3)
    assert {k: chunked[k] for k in figures if k != "reason"} == {k: close(v) for k, v in figures.items() if k != "reason"}
    nan = compare_outputs([ref], [torch.tensor([0.0, 1.0, math.nan, 4.0])], 1e-3, 1e-3)
    assert nan["tolerance_needed"] == math.inf and nan["nonfinite"] == 1
    # Over several outputs the case needs the largest tolerance any of them needs.
    assert compare_outputs([ref, ref], [ref, out], 1e-2, 1e-2)["tolerance_needed"] == close(needed)
    # A reference's NaN or Inf is found in any chunk, the last one too.
    check_reference([ref, torch.tensor([1.0, 2.0])])
    for bad in (math.nan, math.inf):
        with pytest.raises(ReferenceError, match="output 1 contains NaN or Inf"):
            check_reference([ref, torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, bad])])


def test_problem_listing_errors(tmp_path):
    with pytest.raises(UserError, match="unknown level"):
        list_problems(9)
    with pytest.raises(UserError, match="level 2 not found"):
        list_problems(2, tmp_path)
    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / "3_A.py").write_text("")
    (tmp_path / "level1" / "3_B.py").write_text("")
    with pytest.raises(UserError, match="duplicate problem id 3"):
        list_problems(1, tmp_path)
    assert [p.pid for p in list_problems(1, TINY / "KernelBench", (2, 3))] == [2, 3]


def test_hidden_files_are_byte_identical_and_inputs_repeatable(tmp_path):
    out = tmp_path / "hidden_tests"
    generate_hidden_tests(1, None, False, False, TINY / "KernelBench", out)
    first = {p.name: p.read_bytes() for p in (out / "level1").iterdir()}
    generate_hidden_tests(1, None, False, False, TINY / "KernelBench", out)
    assert first == {p.name: p.read_bytes() for p in (out / "level1").iterdir()}
    assert first == {p.name: p.read_bytes() for p in (TINY / "hidden_tests" / "level1").iterdir()}

    hidden = load_module(TINY / "hidden_tests" / "level1" / "4_hidden.py")
    one, two = hidden.get_hidden_inputs(), hidden.get_hidden_inputs()
    assert [name for name, _ in hidden.DISTRIBUTIONS] == ["D1", "D2", "D3", "D4"]
    for a, b in zip(one, two):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    for (name, scale), inputs in zip(hidden.DISTRIBUTIONS, one):
        assert inputs[1].dtype == torch.int64  # class targets are never scaled or cast
        if scale < 0:
            assert (inputs[0] <= 0).all()


def test_upstream_format_hidden_module_is_accepted(tmp_path):
    upstream = tmp_path / "1_hidden.py"
    upstream.write_text("import torch\n\ndef get_hidden_inputs():\n"
                        "    return [[torch.rand(16, 1024) * s] for s in (1.0, 3.0, -1.0)]\n")
    module = load_module(upstream)
    cases = correctness_cases(2, 42, module)
    assert [c.name for c in cases] == ["trial_0", "trial_1", "D1", "D2", "D3"]
    problem = load_module(TINY / "KernelBench" / "level1" / "1_ReLU.py")
    inputs = case_inputs(cases[-1], problem, module, torch.device("cpu"), torch.float32)
    assert inputs[0].shape == (16, 1024) and (inputs[0] <= 0).all()


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = tmp_path / "r.json"
    write_json_atomic(path, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"a": object()})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_gzipped_records_read_as_they_are_and_a_broken_one_is_a_clear_error(tmp_path):
    """Records kept gzipped (a user's archived runs) read as they are through read_json, and a truncated
    one names itself instead of raising a traceback."""
    import gzip

    records = {"1_0": {"eval_status": "correct", "runtime": 0.5}}
    packed = gzip.compress(json.dumps(records).encode())
    (tmp_path / "r.json.gz").write_bytes(packed)
    assert read_json(tmp_path / "r.json.gz") == records
    (tmp_path / "cut.json.gz").write_bytes(packed[:-9])
    (tmp_path / "garbled.json.gz").write_bytes(packed[:20] + b"\xff" * 10 + packed[30:])
    (tmp_path / "plain.json.gz").write_text(json.dumps(records))
    for name in ("cut.json.gz", "garbled.json.gz", "plain.json.gz"):
        with pytest.raises(UserError, match=re.escape(f"records {tmp_path / name} is not valid JSON")):
            read_json(tmp_path / name, "records")


def test_judges_bind_to_the_gpus_the_user_made_visible(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert [child_visible_devices(d) for d in ("cuda:0", "cuda:1", "cpu")] == ["2", "3", ""]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert child_visible_devices("cuda:1") == "1"


def test_builds_start_niced_and_off_the_judges_cpus(monkeypatch):
    """What every build process inherits from its build thread: a lower priority and the CPUs not kept
    for the judges. The evaluator's own thread keeps its priority."""
    probe = [sys.executable, "-c", "import os; print(os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)))"]
    own_nice, last_cpu = os.getpriority(os.PRIO_PROCESS, 0), {max(os.sched_getaffinity(0))}
    with ThreadPoolExecutor(1, initializer=lower_build_priority, initargs=(last_cpu,)) as pool:
        nice, cpus = pool.submit(subprocess.run, probe, capture_output=True, text=True, check=True).result().stdout.split(" ", 1)
    assert int(nice) == max(BUILD_NICE, own_nice) and cpus.strip() == str(sorted(last_cpu))
    assert os.getpriority(os.PRIO_PROCESS, 0) == own_nice
    monkeypatch.setattr(placement, "core_siblings", lambda cpu: {cpu})
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert build_cpus(1) == set(range(3, 16)) and build_cpus(8) == set(range(4, 16))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert build_cpus(1) == {0, 1}


def test_each_judge_times_on_a_cpu_of_its_own_or_none_does(monkeypatch):
    """Judges' sandboxes serve jobs on the second CPU kept for each judge; the judges and their spares
    run on every other CPU. Too few CPUs to keep three per judge: nothing is pinned."""
    monkeypatch.setattr(placement, "core_siblings", lambda cpu: {cpu})
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert cpu_placement(0, 1) == (set(range(16)) - {1}, 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)))
    assert [cpu_placement(w, 2) for w in (0, 1)] == [(set(range(32)) - {1, 4}, 1), (set(range(32)) - {1, 4}, 4)]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    assert cpu_placement(0, 1) == (set(range(8)), None)


def test_a_timed_cpu_s_hyperthread_sibling_is_left_idle(monkeypatch):
    """On a host whose CPU n and n + 8 share a core, the judge, its spares and the builds keep off the
    timed CPU's sibling as well as the timed CPU; the topology is read from sysfs (core_siblings)."""
    monkeypatch.setattr(placement, "core_siblings", lambda cpu: {cpu % 8, cpu % 8 + 8})
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert cpu_placement(0, 1) == (set(range(16)) - {1, 9}, 1)
    assert build_cpus(1) == set(range(3, 16)) - {9}
    assert placement.core_siblings(0) == {0, 8}


def test_core_siblings_reads_linux_cpu_lists(tmp_path, monkeypatch):
    topology = tmp_path / "cpu3" / "topology"
    topology.mkdir(parents=True)
    (topology / "thread_siblings_list").write_text("2-3,10\n")
    real_path = placement.Path
    monkeypatch.setattr(placement, "Path", lambda text: real_path(text.replace("/sys/devices/system/cpu", str(tmp_path))))
    assert placement.core_siblings(3) == {2, 3, 10}
    assert placement.core_siblings(5) == {5}  # no topology: the CPU alone


def test_a_sandbox_checks_on_the_judges_cpus_and_times_on_its_timed_cpu(tmp_path):
    """The kernel notes, at every call, the CPUs each of its process's threads may run on (threads of
    torch's import included), and raises at the first call confined to one CPU, naming the call and
    what the first call had: its correctness cases ran on the judge's CPUs (a lazy build may use them
    all), its timed calls on the judge's timed CPU, which the record names."""
    from conftest import KERNELS, tiny_overrides
    from kernelbench_verified.evaluate.judge import Judge
    from kernelbench_verified.evaluate.launch import child_environment
    from kernelbench_verified.evaluate.run import case_list, job_for, settings_from_config

    kernel = (KERNELS / "relu_correct.py").read_text().replace("return torch.clamp_min(x, 0.0)", (
        "import os\n        cpus = sorted({tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir('/proc/self/task')})\n"
        "        SEEN.append(cpus)\n"
        "        if len(SEEN) > 1 and cpus == [cpus[0][:1]]:\n"
        "            raise RuntimeError(f'call {len(SEEN)} on {cpus}, call 1 on {SEEN[0]}')\n"
        "        return torch.clamp_min(x, 0.0)")) + "\n\nSEEN = []\n"
    cfg = load_config("eval", tiny_overrides(tmp_path, "pinned"))
    settings = settings_from_config(cfg)
    (relu,) = list_problems(1, cfg.problems_dir, (1, 1))
    job = job_for(relu, 0, kernel, settings, None, case_list(settings, None), tmp_path / "builds", "cpu")
    judge_cpus = sorted(os.sched_getaffinity(0))
    if len(judge_cpus) < 2:
        pytest.skip("one CPU: nothing to spread over")
    timed_cpu = judge_cpus[-1]
    judge = Judge(settings, "cpu", child_environment(settings, tmp_path / "builds", ""), timed_cpu=timed_cpu)
    try:
        record = judge.evaluate(job)
    finally:
        judge.close()
    # The 5 correctness trials come first, on the judge's CPUs; the timing phase's warm-up is the first
    # call on the timed CPU.
    found = re.search(r"call (\d+) on \[\((\d+),\)\], call 1 on \[(.*)\]", record["error"])
    assert found and int(found.group(1)) > 5, record
    assert int(found.group(2)) == timed_cpu and found.group(3) == str(tuple(judge_cpus))
    assert record["timed_cpu"] == timed_cpu


def test_per_level_trial_counts():
    base = ["level=4", "run_name=x"]
    cfg = load_config("eval", base + ["num_perf_trials_by_level={4: 10}"])
    settings = {"num_perf_trials": cfg.num_perf_trials, "num_perf_trials_by_level": trials_by_level(cfg)}
    assert (perf_trials(settings, 1), perf_trials(settings, 4)) == (100, 10)
    for bad in ("{4: 0}", "{x: 3}", "[4]"):
        with pytest.raises(UserError, match="num_perf_trials_by_level"):
            trials_by_level(load_config("eval", base + [f"num_perf_trials_by_level={bad}"]))


def _relu_job(tmp_path, name: str, **overrides) -> tuple:
    """(settings, the judges' environment, a CPU eval job of the honest ReLU) for a judge of one's own."""
    from conftest import KERNELS, tiny_overrides
    from kernelbench_verified.evaluate.launch import child_environment
    from kernelbench_verified.evaluate.run import case_list, job_for, settings_from_config

    cfg = load_config("eval", tiny_overrides(tmp_path, name, **overrides))
    settings = settings_from_config(cfg)
    (relu,) = list_problems(1, cfg.problems_dir, (1, 1))
    job = job_for(relu, 0, (KERNELS / "relu_correct.py").read_text(), settings, None, case_list(settings, None),
                  tmp_path / "builds", "cpu")
    return settings, child_environment(settings, tmp_path / "builds", ""), job


def test_a_spare_sandbox_that_died_is_replaced_not_blamed(tmp_path):
    from kernelbench_verified.evaluate.judge import Judge
    from kernelbench_verified.evaluate.launch import start_sandbox

    settings, env, job = _relu_job(tmp_path, "spare")
    judge = Judge(settings, "cpu", env, spares=(start_sandbox(env),))
    try:
        judge.spares.sandboxes[0].process.kill()  # as if killed for memory while it waited
        judge.spares.sandboxes[0].process.wait()
        record = judge.evaluate(job)
    finally:
        judge.close()
    assert record["eval_status"] == "correct", record.get("error")


def test_spare_sandboxes_0_starts_none_ahead_and_each_job_starts_its_own(tmp_path):
    from kernelbench_verified.evaluate.judge import Judge
    from kernelbench_verified.evaluate.worker import start_spares

    settings, env, job = _relu_job(tmp_path, "nospare", spare_sandboxes=0)
    assert settings["spare_sandboxes"] == 0 and start_spares(env, settings, "cuda:0") == ()
    judge = Judge(settings, "cpu", env, spares=())
    try:
        assert judge.evaluate(job)["eval_status"] == "correct"
        assert not judge.spares.sandboxes  # none was started ahead for a next job
    finally:
        judge.close()


def test_a_spare_asked_to_set_up_cuda_is_waited_for_before_timing_and_then_serves(tmp_path):
    """A spare whose imports are done is asked to set up CUDA (here there is none, so it answers that
    it could not); `settle` reads that answer, so nothing is left pending before a timed phase, and
    the sandbox then serves a job as any other."""
    import time

    import torch
    from kernelbench_verified.evaluate.judge import Judge
    from kernelbench_verified.evaluate.launch import start_sandbox
    from kernelbench_verified.evaluate.spares import Spares

    settings, env, job = _relu_job(tmp_path, "prepare")
    spares = Spares((start_sandbox(env),), env, None, torch.device("cuda:0"))
    sandbox = spares.sandboxes[0]
    try:
        deadline = time.monotonic() + 120
        while not sandbox.preparing and time.monotonic() < deadline:  # asked once its imports are done
            spares.prepare()
            time.sleep(0.2)
        assert sandbox.idle and sandbox.preparing
        spares.settle()
        assert not sandbox.preparing and not sandbox.prepared and spares.held_bytes() == 0
        spares.prepare()  # asked once only: the sandbox now reads its job, not a second "prepare"
        assert not sandbox.preparing
    except BaseException:
        spares.close()
        raise
    judge = Judge(settings, "cpu", env, spares=(spares.sandboxes.popleft(),))
    try:
        assert judge.evaluate(job)["eval_status"] == "correct"
    finally:
        judge.close()
