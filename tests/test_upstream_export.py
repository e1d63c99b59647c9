"""scripts/export_upstream.py: a run in the layout upstream's benchmark_eval_analysis.py reads."""

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, TINY, load_config
from kernelbench_verified.errors import UserError
from kernelbench_verified.leaderboard.upstream_export import export_run, upstream_results

SCRIPT = ROOT / "scripts" / "export_upstream.py"
TINY_FILES = {1: "1_ReLU.py", 2: "2_Matmul.py", 3: "3_Linear_GELU.py", 4: "4_CrossEntropyLoss.py"}
WITHHELD = "integrity flags: timing_below_judge_clock"


def record(pid, sid, status="correct", runtime=1.0, **metadata):
    """One sample in our result-file format."""
    correct = status == "correct"
    return {"sample_id": sid, "problem_id": pid, "level": 1, "problem": TINY_FILES.get(pid), "compiled": True,
            "correctness": correct, "eval_status": status, "metadata": metadata,
            "runtime": runtime if correct else -1.0, "runtime_stats": {"mean": runtime} if correct and runtime > 0 else {},
            "peak_memory": -1, "memory_stats": {}}


def upstream_scores(exported: dict, baseline_ms: list[float]) -> tuple[float, float]:
    """Upstream's reading rule: sample 0 of each problem, paired with the baseline by position; the
    geomean of baseline/runtime over correct samples, and fast_1 over all problems."""
    chosen = []
    for samples in exported.values():
        zero = [s for s in samples if s["sample_id"] == 0]
        assert len(zero) <= 1
        chosen += zero
    correct = np.array([s["correctness"] for s in chosen])
    speedup = np.array(baseline_ms) / np.array([s["runtime"] for s in chosen])
    with np.errstate(invalid="ignore"):
        geomean = np.prod(speedup[correct]) ** (1 / correct.sum())
    return float(geomean), float(np.sum(correct & (speedup > 1.0)) / len(chosen))


def as_upstream_reads_raw(records: dict) -> dict:
    """Our records taken as they are, grouped by problem: what upstream would score without the export."""
    grouped = {}
    for (pid, _), rec in sorted(records.items()):
        grouped.setdefault(str(pid), []).append(rec)
    return grouped


def test_every_problem_of_the_level_in_ascending_numeric_order():
    records = {(10, 0): record(10, 0), (2, 0): record(2, 0, "incorrect")}
    exported = upstream_results(records, [10, 2, 1, 11, 3, 4, 5, 6, 7, 8, 9, 12])
    assert list(exported) == [str(pid) for pid in range(1, 13)]
    assert exported["1"] == [{"sample_id": 0, "compiled": False, "correctness": False,
                              "metadata": {"kbv_status": "missing"}, "runtime": -1.0, "runtime_stats": {}}]
    assert exported["2"][0]["correctness"] is False and exported["2"][0]["metadata"] == {"kbv_status": "incorrect"}
    assert exported["10"][0]["correctness"] is True and exported["10"][0]["runtime"] == 1.0


def test_samples_are_listed_by_sample_id_and_sample_0_is_always_there():
    records = {(1, 2): record(1, 2), (1, 0): record(1, 0), (1, 1): record(1, 1), (2, 1): record(2, 1)}
    exported = upstream_results(records, [1, 2])
    assert [s["sample_id"] for s in exported["1"]] == [0, 1, 2]
    assert [s["sample_id"] for s in exported["2"]] == [0, 1]
    assert exported["2"][0]["metadata"] == {"kbv_status": "missing"}


def test_a_correct_sample_with_a_withheld_time_is_exported_as_not_correct():
    records = {(1, 0): record(1, 0, runtime=-1.0, runtime_withheld=WITHHELD),
               (2, 0): record(2, 0, "runtime_error", error="x" * 1000)}
    exported = upstream_results(records, [1, 2])
    assert exported["1"] == [{"sample_id": 0, "compiled": True, "correctness": False,
                              "metadata": {"kbv_status": "correct_time_withheld", "kbv_runtime_withheld": WITHHELD},
                              "runtime": -1.0, "runtime_stats": {}}]
    assert exported["2"][0]["metadata"] == {"kbv_status": "runtime_error", "kbv_error": "x" * 300}


def test_upstream_geomean_is_finite_on_the_export_where_raw_records_give_nan():
    records = {(1, 0): record(1, 0, runtime=0.5), (2, 0): record(2, 0, runtime=-1.0, runtime_withheld=WITHHELD),
               (3, 0): record(3, 0, runtime=4.0), (4, 0): record(4, 0, "incorrect")}
    baseline_ms = [1.0, 1.0, 2.0, 1.0]
    raw_geomean, _ = upstream_scores(as_upstream_reads_raw(records), baseline_ms)
    geomean, fast_1 = upstream_scores(upstream_results(records, [1, 2, 3, 4]), baseline_ms)
    assert np.isnan(raw_geomean)
    assert geomean == pytest.approx((2.0 * 0.5) ** 0.5) and fast_1 == 0.25  # the withheld sample counts in neither


def write_run(runs_dir, name="r", standard=None, hidden=None):
    run_dir = runs_dir / name
    run_dir.mkdir(parents=True)
    for file, records in (("eval_results.json", standard), ("eval_results_hidden.json", hidden)):
        if records is not None:
            (run_dir / file).write_text(json.dumps({f"{r['problem_id']}_{r['sample_id']}": r for r in records}))
    return run_dir


def export(runs_dir, **overrides):
    values = {"run_name": "r", "runs_dir": runs_dir, "level": 1, "problems_dir": TINY / "KernelBench", **overrides}
    return export_run(load_config("export_upstream", [f"{k}={v}" for k, v in values.items()]))


def test_use_hidden_eval_exports_the_hidden_file(tmp_path, capsys):
    write_run(tmp_path, standard=[record(1, 0), record(3, 0)], hidden=[record(1, 0, "incorrect"), record(3, 0)])
    export(tmp_path, use_hidden_eval=True)
    exported = json.loads((tmp_path / "r_upstream" / "eval_results.json").read_text())
    assert list(exported) == ["1", "2", "3", "4"]
    assert [exported[p][0]["correctness"] for p in exported] == [False, False, True, False]
    line = capsys.readouterr().out.strip()
    assert "4 problems (2 without a record of sample 0" in line and "2 samples, 1 correct" in line
    assert "run_name=r_upstream level=1" in line and len(line.splitlines()) == 1


def test_standard_file_by_default_and_a_named_output(tmp_path, capsys):
    write_run(tmp_path, standard=[record(1, 0), record(2, 0, runtime=-1.0, runtime_withheld=WITHHELD)])
    export(tmp_path, out_run_name="for_upstream")
    exported = json.loads((tmp_path / "for_upstream" / "eval_results.json").read_text())
    assert [exported[p][0]["correctness"] for p in ("1", "2")] == [True, False]
    assert "2 samples, 1 correct, 1 correct with a withheld time exported as not correct" in capsys.readouterr().out


def test_an_existing_run_of_ours_is_never_overwritten(tmp_path):
    write_run(tmp_path, standard=[record(1, 0)])
    write_run(tmp_path, "other", standard=[record(1, 0)])
    with pytest.raises(UserError, match="holds a run of ours"):
        export(tmp_path, out_run_name="other")


def run_script(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("setup, overrides, message", [
    ("none", [], "run folder"),
    ("standard", ["use_hidden_eval=True"], "eval_results_hidden.json not found"),
    ("malformed", [], "is not valid JSON"),
    ("standard", ["level=7"], "unknown level 7"),
    ("standard", ["out_run_name=r"], "is the run itself"),
    ("standard", [f"problems_dir={ROOT / 'KernelBench'}"], "problem 1 ran 1_ReLU.py"),
])
def test_bad_input_gives_one_line_and_exit_2(tmp_path, setup, overrides, message):
    if setup == "standard":
        write_run(tmp_path, standard=[record(1, 0)])
    elif setup == "malformed":
        write_run(tmp_path)
        (tmp_path / "r" / "eval_results.json").write_text("{not json")
    base = {"run_name": "r", "runs_dir": tmp_path, "level": 1, "problems_dir": TINY / "KernelBench"}
    keys = {o.split("=")[0] for o in overrides}
    result = run_script(*[f"{k}={v}" for k, v in base.items() if k not in keys], *overrides)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "r_upstream").exists()
