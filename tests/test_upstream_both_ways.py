"""Upstream's files both ways: upstream's readers on our runs, ours on upstream-written runs.

The upstream readers are our re-implementations in upstream_readers.py; upstream-written files are built
here from upstream's documented record fields (sample_id, compiled, correctness, metadata, runtime,
runtime_stats, peak_memory, memory_stats; metadata max_difference, hidden_failed_configs, runtime_error).
"""

import hashlib
import json
import subprocess
import sys

import pytest

from conftest import ROOT, TINY, make_run, tiny_overrides
from kernelbench_verified.leaderboard.discovery import Run, load_run_results
from kernelbench_verified.results import (DERIVED_FROM, ResultStore, fill_standard_file, is_derived,
                                          kernel_digest)
from upstream_readers import verified_analysis

EVAL = ROOT / "scripts" / "eval_from_generations.py"


def ours(pid, sid, correct=True, runtime=1.0, **metadata):
    return {"sample_id": sid, "problem_id": pid, "level": 1, "compiled": True, "correctness": correct,
            "eval_status": "correct" if correct else "incorrect", "metadata": {"cases": [], **metadata},
            "runtime": runtime if correct else -1.0, "runtime_stats": {"mean": runtime} if correct else {},
            "peak_memory": -1, "memory_stats": {}}


def test_a_hidden_evaluation_fills_the_standard_file_and_never_touches_a_standard_record(tmp_path):
    standard = tmp_path / "eval_results.json"
    real = ours(2, 0, runtime=3.0)
    standard.write_text(json.dumps({"2_0": real}))
    hidden = {"1_0": ours(1, 0, runtime=0.5, kernel_sha256="a" * 64, cases=[{"case": "D1"}]),
              "2_0": ours(2, 0, correct=False)}
    assert fill_standard_file(standard, hidden, "eval_results_hidden.json") == 1
    stored = json.loads(standard.read_text())
    assert stored["2_0"] == real                                           # a standard record stays
    assert stored["1_0"]["metadata"] == {DERIVED_FROM: "eval_results_hidden.json", "kernel_sha256": "a" * 64}
    assert (stored["1_0"]["correctness"], stored["1_0"]["runtime"]) == (True, 0.5)  # verdict and its own time
    hidden["1_0"]["runtime"] = 0.4                                         # a re-run updates a derived entry
    assert fill_standard_file(standard, hidden, "eval_results_hidden.json") == 1
    assert json.loads(standard.read_text())["1_0"]["runtime"] == 0.4
    assert fill_standard_file(standard, hidden, "eval_results_hidden.json") == 0  # nothing new: not rewritten
    store = ResultStore(standard)
    assert not store.has("1_0") and store.has("2_0")   # a standard evaluation evaluates 1_0 itself


def test_our_readers_skip_the_derived_entries(tmp_path):
    run_dir = tmp_path / "m_level1_test"
    run_dir.mkdir()
    hidden = {"1_0": ours(1, 0)}
    (run_dir / "eval_results_hidden.json").write_text(json.dumps(hidden))
    fill_standard_file(run_dir / "eval_results.json", hidden, "eval_results_hidden.json")
    results = load_run_results(Run("m_level1_test", "m", 1, "fp32", run_dir), [])
    assert results.standard is None and results.hidden is not None   # as before the file was filled


def run_eval(tmp_path, *extra):
    return subprocess.run([sys.executable, str(EVAL), *tiny_overrides(tmp_path, "r", num_samples=2, subset="[1,2]"),
                           *extra], capture_output=True, text=True, timeout=300)


BASELINE = {"level1": {"1_ReLU.py": {"mean": 0.02}, "2_Matmul.py": {"mean": 0.05},
                       "3_Linear_GELU.py": {"mean": 1.0}, "4_CrossEntropyLoss.py": {"mean": 1.0}}}


def test_upstreams_hidden_analysis_reads_our_hidden_evaluation_as_we_do(tmp_path):
    """The evaluator end to end (jailed, on the CPU): a hidden evaluation leaves eval_results.json beside
    eval_results_hidden.json, upstream's hidden analysis runs on the folder unchanged and scores it as our
    leaderboard does, and a later standard evaluation replaces the derived entries."""
    from kernelbench_verified.leaderboard.discovery import Baseline, BaselineEntry
    from kernelbench_verified.leaderboard.metrics import summarize
    from kernelbench_verified.leaderboard.scoring import Setting, score_run

    run_dir = make_run(tmp_path, "r", {(1, 0): "relu_correct", (1, 1): "relu_saturating", (2, 0): "matmul_correct"})
    done = run_eval(tmp_path, "use_hidden_tests=True")
    assert done.returncode == 0, done.stderr[-2000:]
    hidden = json.loads((run_dir / "eval_results_hidden.json").read_text())
    standard = json.loads((run_dir / "eval_results.json").read_text())
    assert set(standard) == set(hidden) == {"1_0", "1_1", "2_0", "2_1"} and all(map(is_derived, standard.values()))
    kernel = (run_dir / "level_1_problem_1_sample_0_kernel.py").read_text()
    assert hidden["1_0"]["metadata"]["kernel_sha256"] == kernel_digest(kernel) == hashlib.sha256(kernel.encode()).hexdigest()
    assert [hidden[k]["eval_status"] for k in ("1_0", "1_1", "2_0")] == ["correct", "incorrect", "correct"]

    upstream = verified_analysis(run_dir, BASELINE, 1, 4, use_hidden_eval=True)
    entries = {1: BaselineEntry("1_ReLU.py", 0.02, -1), 2: BaselineEntry("2_Matmul.py", 0.05, -1),
               3: BaselineEntry("3_Linear_GELU.py", 1.0, -1), 4: BaselineEntry("4_CrossEntropyLoss.py", 1.0, -1)}
    results = load_run_results(Run("r", "r", 1, "fp32", run_dir), [])
    table = score_run(results, Baseline("b", tmp_path, {1: entries}, None, "x"), set(), Setting(True), []).table
    figures = summarize(table)
    best = upstream["best"]
    assert best["correctness_rate"] == figures["correct"] == 0.5
    assert best["gmsr"] == pytest.approx(figures["correct_speedup"])
    assert best["avg_speedup"] == pytest.approx(figures["kernelbench_speedup"])
    assert best["fast_p_1.0"] == figures["fast_p"]["1"]
    speedups = [0.02 / hidden["1_0"]["runtime"], 0.05 / hidden["2_0"]["runtime"]]
    assert best["gmsr"] == pytest.approx((speedups[0] * speedups[1]) ** 0.5)   # times of the hidden records

    again = run_eval(tmp_path)   # the standard evaluation: the derived entries are no standard records
    assert again.returncode == 0 and "3 kernel(s) to evaluate, 0 already done" in again.stdout, again.stdout
    standard = json.loads((run_dir / "eval_results.json").read_text())
    assert not any(map(is_derived, standard.values())) and standard["1_1"]["eval_status"] == "correct"
