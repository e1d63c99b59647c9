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
from kernelbench_verified.evaluate.launch import BUILD_NICE, build_cpus, cpu_placement, lower_build_priority
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
    """The records committed under benchmarks/results are gzipped; every script reads them through
    read_json, and a truncated one names itself instead of raising a traceback."""
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
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert build_cpus(1) == set(range(3, 16)) and build_cpus(8) == set(range(4, 16))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert build_cpus(1) == {0, 1}


def test_each_judge_times_on_a_cpu_of_its_own_or_none_does(monkeypatch):
    """Judges' sandboxes serve jobs on the second CPU kept for each judge; the judges and their spares
    run on every other CPU. Too few CPUs to keep three per judge: nothing is pinned."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert cpu_placement(0, 1) == (set(range(16)) - {1}, 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)))
    assert [cpu_placement(w, 2) for w in (0, 1)] == [(set(range(32)) - {1, 4}, 1), (set(range(32)) - {1, 4}, 4)]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    assert cpu_placement(0, 1) == (set(range(8)), None)


def test_a_sandbox_serves_its_job_with_every_thread_on_the_judges_timed_cpu(tmp_path):
    """The kernel reports, in the error it raises, the CPUs each of its process's threads may run on
    (threads of torch's import included); the judge's record names the same one CPU."""
    from conftest import KERNELS, tiny_overrides
    from kernelbench_verified.evaluate.judge import Judge
    from kernelbench_verified.evaluate.launch import child_environment
    from kernelbench_verified.evaluate.run import _job, case_list, settings_from_config

    kernel = (KERNELS / "relu_correct.py").read_text().replace("return torch.clamp_min(x, 0.0)", (
        "import os\n        cpus = {tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir('/proc/self/task')}\n"
        "        raise RuntimeError(f'threads on {sorted(cpus)}')"))
    cfg = load_config("eval", tiny_overrides(tmp_path, "pinned"))
    settings = settings_from_config(cfg)
    (relu,) = list_problems(1, cfg.problems_dir, (1, 1))
    job = _job(relu, 0, kernel, settings, None, case_list(settings, None), tmp_path / "builds", "cpu", "eval")
    timed_cpu = max(os.sched_getaffinity(0))
    judge = Judge(settings, "cpu", child_environment(settings, tmp_path / "builds", ""), timed_cpu=timed_cpu)
    try:
        record = judge.evaluate(job)
    finally:
        judge.close()
    assert f"threads on [({timed_cpu},)]" in record["error"] and record["timed_cpu"] == timed_cpu, record


def test_per_level_trial_counts():
    base = ["level=4", "run_name=x"]
    cfg = load_config("eval", base + ["num_perf_trials_by_level={4: 10}"])
    settings = {"num_perf_trials": cfg.num_perf_trials, "num_perf_trials_by_level": trials_by_level(cfg)}
    assert (perf_trials(settings, 1), perf_trials(settings, 4)) == (100, 10)
    for bad in ("{4: 0}", "{x: 3}", "[4]"):
        with pytest.raises(UserError, match="num_perf_trials_by_level"):
            trials_by_level(load_config("eval", base + [f"num_perf_trials_by_level={bad}"]))


def _relu_job(tmp_path, name: str, **overrides) -> tuple[dict, dict, dict]:
    """(settings, the judges' environment, a CPU eval job of the honest ReLU) for a judge of one's own."""
    from conftest import KERNELS, tiny_overrides
    from kernelbench_verified.evaluate.launch import child_environment
    from kernelbench_verified.evaluate.run import _job, case_list, settings_from_config

    cfg = load_config("eval", tiny_overrides(tmp_path, name, **overrides))
    settings = settings_from_config(cfg)
    (relu,) = list_problems(1, cfg.problems_dir, (1, 1))
    job = _job(relu, 0, (KERNELS / "relu_correct.py").read_text(), settings, None, case_list(settings, None),
               tmp_path / "builds", "cpu", "eval")
    return settings, child_environment(settings, tmp_path / "builds", ""), job


def test_a_spare_sandbox_that_died_is_replaced_not_blamed(tmp_path):
    from kernelbench_verified.evaluate.judge import Judge
    from kernelbench_verified.evaluate.launch import start_sandbox

    settings, env, job = _relu_job(tmp_path, "spare")
    judge = Judge(settings, "cpu", env, spares=(start_sandbox(env),))
    try:
        judge._spare[0].process.kill()  # as if killed for memory while it waited
        judge._spare[0].process.wait()
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
        assert not judge._spare  # none was started ahead for a next job
    finally:
        judge.close()


def test_busy_neighbours_splits_launch_bound_records_by_a_busy_cpu_beside_the_timed_one(tmp_path, capsys,
                                                                                      monkeypatch):
    """benchmarks/busy_neighbours.py: each unsteady problem's records relative to its fastest, split by
    whether CPU timed-1 or timed+1 was busy over half of the timed phase; steady problems left out."""
    from conftest import load_benchmark

    neighbours = load_benchmark("busy_neighbours")

    def record(median, std, start):
        return {"eval_status": "correct", "runtime_stats": {"mean": median, "median": median, "std": std},
                "metadata": {"timed_cpu": 1, "trial_phases_at": {"timed": [start, start + 1]}}}

    # CPUs 0, 1, 2: CPU 0 busy from t=0 to 1 (run A's timed phase), every CPU idle from 1 to 2 (run B's).
    log = tmp_path / "cpu_stat.log"
    log.write_text("0.0 0,0,0 0,0,0 0,0,0\n1.0 100,0,0 100,0,0 0,100,0\n2.0 100,100,0 200,0,0 0,200,0\n")
    run_a = {"1_0": record(1.2, 0.1, 0.0), "2_0": record(5.0, 0.01, 0.0)}
    run_b = {"1_0": record(1.0, 0.1, 1.0), "2_0": record(4.0, 0.01, 1.0)}
    found = neighbours.slowdowns([run_a, run_b], neighbours.read_cpu_log(log))
    assert found == {True: [pytest.approx(1.2)], False: [pytest.approx(1.0)]}  # problem 2 is steady
    paths = []
    for name, run in (("a", run_a), ("b", run_b)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(run))
    monkeypatch.setattr(sys, "argv", ["busy_neighbours.py", *map(str, paths), "--cpu-log", str(log)])
    neighbours.main()
    out = capsys.readouterr().out
    assert "a neighbour of the timed CPU busy: 1 records, median slowdown 1.200" in out
    assert "neither neighbour busy: 1 records, median slowdown 1.000" in out


def test_self_speedup_splits_each_speedup_at_the_reference_timed_in_the_sandbox(tmp_path):
    """benchmarks/self_speedup.py --records: from a run's records and its baseline file, the speedup of
    identical code and its two parts (baseline to the reference in the sandbox, that to the candidate),
    the steady problems' speedups, and every rejection; parts of one level merge."""
    from conftest import load_benchmark

    bench = load_benchmark("self_speedup")
    names = [p.filename for p in list_problems(1, TINY / "KernelBench")][:2]

    def record(pid, status, runtime, reference_ms):
        return {"problem_id": pid, "level": 1, "eval_status": status, "runtime": runtime,
                "runtime_stats": {"median": runtime, "mean": runtime, "std": 0.05 * runtime},
                "metadata": {"reference_ms": reference_ms, "failed_case": "D2"}}

    pairs = []
    for pid, name, rec in ((1, names[0], record(1, "correct", 2.0, 1.6)), (2, names[1], record(2, "incorrect", 1.0, 1.0))):
        (tmp_path / f"r{pid}.json").write_text(json.dumps({f"{pid}_0": rec}))
        (tmp_path / f"b{pid}.json").write_text(json.dumps({"level1": {name: {"mean": 1.0, "median": 1.2, "std": 0.01}}}))
        pairs.append(f"{tmp_path / f'r{pid}.json'}:{tmp_path / f'b{pid}.json'}")
    result = bench.from_records(pairs, TINY / "KernelBench")
    assert result["speedups"] == {"L1/1": 0.5}
    assert result["to_sandbox"] == {"L1/1": pytest.approx(0.75)} and result["in_sandbox"] == {"L1/1": 0.8}
    assert result["levels"][1]["n"] == 1 and result["rejected"] == ["L1/2 incorrect: D2"]
    assert result["steady"] == {}  # the candidate's calls vary by 5 %: launch-loop noise, not the GPU's time
    steady = bench.figures(1, {"1_0": dict(record(1, "correct", 2.0, 1.6), runtime_stats={"median": 2.0, "mean": 2.0, "std": 0.02})},
                           {names[0]: {"mean": 1.0, "median": 1.2, "std": 0.01}}, list_problems(1, TINY / "KernelBench")[:1])
    assert steady["steady"] == {"L1/1": 0.5}


def test_self_speedup_compares_a_timed_phase_with_itself():
    """self_speedup.phase_ratios: a phase whose calls slow down halfway (the host's state, not the code)
    differs from itself by that much between halves, and not at all between alternate calls; fewer than
    8 calls, or none recorded, give nothing."""
    from conftest import load_benchmark

    bench = load_benchmark("self_speedup")
    calls = [1.0] * 50 + [1.25] * 50
    halves, alternate = bench.phase_ratios({"metadata": {"judge_trials_ms": {"reported": calls}}})
    assert halves == pytest.approx(0.8) and alternate == pytest.approx(1.0)
    assert bench.phase_ratios({"metadata": {"judge_trials_ms": {"reported": calls[:6]}}}) is None
    assert bench.phase_ratios({"metadata": {}}) is None


def test_clock_drift_compares_each_timed_phase_with_its_own_and_the_next_calibration(tmp_path, capsys):
    """benchmarks/clock_drift.py: per sample, the timed calls' median overhead (window minus reported)
    less its own calibration's and the next sample's; only correct samples with raw figures count."""
    from conftest import load_benchmark

    drift = load_benchmark("clock_drift")

    def record(sid, calibration, timed, status="correct"):
        # The call's own time moves with the overhead's level, as on the H200.
        called, timed_call = 1.0 + (calibration - 0.35) / 3, 1.0 + (timed - 0.35) / 3
        raw = {"calibration_overhead": [calibration] * 5, "calibration_reported": [called] * 5,
               "reported": [timed_call] * 5, "waited": [timed_call + timed] * 5}
        spans = {"calibration": [10.0 * sid, 10.0 * sid + 1], "timed": [10.0 * sid + 5, 10.0 * sid + 6]}
        return {"sample_id": sid, "eval_status": status,
                "metadata": {"judge_trials_ms": raw, "timed_cpu": 1, "trial_phases_at": spans}}

    records = {"1_2": record(2, 0.35, 0.35), "1_0": record(0, 0.35, 0.41), "1_1": record(1, 0.41, 0.41),
               "1_3": record(3, 0.2, 0.9, status="incorrect")}
    samples = drift.phases(records)
    assert len(samples) == 3  # in sample order, the incorrect one left out
    gaps = drift.gaps(samples)
    assert gaps["gap against its own calibration"] == pytest.approx([0.06, 0.0, 0.0])
    assert gaps["against the next sample's"] == pytest.approx([0.0, 0.06])
    path = tmp_path / "repeat.json"
    path.write_text(json.dumps(records))
    drift.report(path)
    out = capsys.readouterr().out
    assert "3 samples" in out and "max +0.0600" in out and "100%/100%" in out
    assert "correlation 1.00" in out and "median 1.0000 ms in phases below the middle, 1.0200 above" in out
    assert "calibration 1.0000 ms, timed 1.0200 ms (+2.0%); timed medians 1.0000-1.0200 ms" in out
    # The timed CPU (column 1) has a fifth of its time stolen while the overhead is high (t 5-20), none
    # otherwise; the other CPU is idle throughout.
    lines, steal = [], 0
    for row in range(7):  # a line half a second before each phase starts, 500 jiffies per CPU apart
        lines.append(f"{5 * row - 0.5} 0,{row * 500},0 {row * 500 - steal},0,{steal}\n")
        steal += 100 if row in (1, 2, 3) else 0
    log = tmp_path / "cpu_stat.log"
    log.write_text("".join(lines) + "garbled line\n")
    shares = drift.phase_cpu(drift.correct_records(records), drift.read_cpu_log(log))
    assert [s[0] for s in shares] == pytest.approx([0, 0.2, 0.2, 0.2, 0, 0])
    assert [s[1] for s in shares] == pytest.approx([0.5, 0.4, 0.4, 0.4, 0.5, 0.5])
    drift.report(path, drift.read_cpu_log(log))
    out = capsys.readouterr().out
    assert "the timed CPU's time stolen: 0.0%-20.0% over 6 phases; the overhead follows it with correlation +1.00" in out
    assert "all CPUs' time busy: 40.0%-50.0% over 6 phases; the overhead follows it with correlation -1.00" in out


def test_slow_call_bursts_counts_slow_calls_by_what_the_machine_did(tmp_path, capsys):
    """benchmarks/slow_call_bursts.py: a call is slow when its overhead exceeds its phase's median by
    more than --over-ms; samples are grouped by the other CPUs' busy share and the timed CPU's steal
    during their timed calls, read from the run's cpu_stat.log."""
    from conftest import load_benchmark

    bursts = load_benchmark("slow_call_bursts")

    def record(sid, overhead):
        raw = {"reported": [0.1] * len(overhead), "waited": [0.1 + o for o in overhead],
               "calibration_overhead": [0.35] * len(overhead)}
        return {"sample_id": sid, "eval_status": "correct", "metadata": {
            "judge_trials_ms": raw, "timed_cpu": 0, "trial_phases_at": {"timed": [10.0 * sid + 1, 10.0 * sid + 2]}}}

    quiet, stalled = [0.35] * 20, [0.35] * 17 + [2.0, 1.2, 0.7]  # a run of three, shrinking
    records = {"1_0": record(0, stalled), "1_1": record(1, quiet), "1_2": record(2, stalled)}
    assert [bursts.slow_calls(timed, 0.3) for _, timed in bursts.phases(records)] == [3, 0, 3]
    assert bursts.slow_calls(stalled, 0.5) == 2
    # Two CPUs, 100 jiffies a line: CPU 1 idle for sample 0, busy for samples 1 and 2, where the timed
    # CPU 0 also loses a tenth of its time to steal during sample 2.
    lines, cpu0, cpu1 = [], [0, 0, 0], [0, 0, 0]
    for t in range(31):
        lines.append(f"{t} {','.join(map(str, cpu0))} {','.join(map(str, cpu1))}\n")
        stolen = 10 if t in (21, 22) else 0
        cpu0 = [cpu0[0] + 100 - stolen, cpu0[1], cpu0[2] + stolen]
        cpu1 = [cpu1[0] + (100 if t >= 10 else 0), cpu1[1] + (0 if t >= 10 else 100), cpu1[2]]
    log = tmp_path / "cpu_stat.log"
    log.write_text("".join(lines))
    read = bursts.read_cpu_log(log)
    assert bursts.machine_during_timing(records["1_0"], read) == pytest.approx((0.0, 0.0))
    assert bursts.machine_during_timing(records["1_2"], read) == pytest.approx((1.0, 0.1))
    results = tmp_path / "eval_results_hidden.json"
    results.write_text(json.dumps(records))
    bursts.report(results, log, 0.3)
    out = capsys.readouterr().out
    assert "other CPUs idle, no steal                     1 samples,   1 with slow calls (3 calls)" in out
    assert "other CPUs busy, no steal                     1 samples,   0 with slow calls (0 calls)" in out
    assert "other CPUs busy, timed CPU stolen from        1 samples,   1 with slow calls (3 calls)" in out


def test_twin_clock_tells_a_level_both_twins_share_from_one_each_twin_has_alone():
    """benchmarks/twin_clock.py: A's overhead less its two B neighbours' mean is narrow when the level
    belongs to the machine (both twins flip together), as wide as A's own when each twin flips alone."""
    from conftest import load_benchmark

    twin = load_benchmark("twin_clock")

    def rows(levels):
        return [{"window": 1.0 + level, "reported": 1.0, "overhead": level, "at": 0.0} for level in levels]

    shared = [0.06 * ((i // 70) % 2) for i in range(500)]
    alone = [0.06 * ((i // 90) % 2) for i in range(500)]
    together = twin.report([rows(shared), rows(shared)])
    assert together["twin_A"]["overhead"]["block_medians_5_95_us"] == pytest.approx(60)
    assert together["A_minus_B_neighbours"]["block_medians_5_95_us"] == pytest.approx(0)
    assert together["block_median_correlation"] == pytest.approx(1, abs=0.01)
    assert together["twin_A"]["overhead"]["mean_run"] == pytest.approx(500 / 8)  # seven runs of 70, one of 10
    apart = twin.report([rows(shared), rows(alone)])
    assert apart["A_minus_B_neighbours"]["block_medians_5_95_us"] == pytest.approx(120)
    assert twin.against_neighbours([0.0, 0.1, 0.0], [0.0, 0.2, 0.0]) == pytest.approx([0.0, -0.1])


def test_clock_sensitivity_finds_the_smallest_fake_the_judges_clock_withholds():
    """benchmarks/clock_sensitivity.py replays judge.timing_flags on a record's raw figures with its
    reported times lowered: all calls, or an evenly spread share of them (the mean check's case)."""
    from conftest import load_benchmark

    from kernelbench_verified.evaluate.judge import ClockSlack

    sensitivity = load_benchmark("clock_sensitivity")
    assert sensitivity.faked([1.0] * 4, 0.5, 0.5) == [1.0, 0.5, 1.0, 0.5]
    raw = {"reported": [1.0] * 100, "waited": [1.3] * 100, "calibration_overhead": [0.3] * 100}
    record = {"level": 1, "problem_id": 1, "sample_id": 0, "eval_status": "correct",
              "runtime_stats": {"median": 1.0, "mean": 1.0, "device": "cuda:0"},
              "metadata": {"judge_clock": "gpu_timeline", "judge_clock_gap_ms": 0.0, "judge_trials_ms": raw}}
    slack = ClockSlack(median=(0.0, 0.104), mean=(0.0, 0.104))
    # A fake of f lowers each call's report by f ms here; the gap must exceed 0.104 ms.
    assert sensitivity.smallest_fake(record, slack) == pytest.approx(0.11)
    # Faking 49 of 100 calls leaves the median call honest: only the mean check sees it, once the mean
    # over the 98 calls it keeps (the 2 slowest reports left out) moves by f / 2 > 0.104 ms.
    assert sensitivity.smallest_fake(record, slack, share=0.49) == pytest.approx(0.49 * 0.21)
    assert "flags: -" in sensitivity.each(record, slack)
    # Without --slack a record is checked with the slack the judge used, else its clock's default;
    # --fit replays the judge's fit over records in the order their calibrations ran.
    from kernelbench_verified.evaluate.judge import FITTED_FROM, NOISE_FLOOR_MS, SLACKS
    assert sensitivity.record_slack(record) == SLACKS["gpu_timeline"]
    records = [json.loads(json.dumps(record)) for _ in range(FITTED_FROM)]
    for index, copy in enumerate(reversed(records)):  # listed last to first
        copy["metadata"]["trial_phases_at"] = {"calibration": [float(index), index + 0.5]}
    sensitivity.fit_slacks(records)
    assert [r["metadata"]["judge_clock_slack"]["calibrations"] for r in records] == list(range(FITTED_FROM, 0, -1))
    assert sensitivity.record_slack(records[-1]) == SLACKS["gpu_timeline"]  # the first to run: no fit yet
    assert sensitivity.record_slack(records[0]).median[1] == NOISE_FLOOR_MS  # a steady clock: the floor
