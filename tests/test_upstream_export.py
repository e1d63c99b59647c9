"""scripts/export_upstream.py: a run in the files upstream's analysis and leaderboard scripts read.

layout=verified (default): kernel_bench_verified's flat files; layout=kernelbench: KernelBench's
{pid: [samples]}. The upstream readers run on the exports are our re-implementations (upstream_readers.py).
"""

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
    export(tmp_path, use_hidden_eval=True, layout="kernelbench")
    exported = json.loads((tmp_path / "r_upstream" / "eval_results.json").read_text())
    assert list(exported) == ["1", "2", "3", "4"]
    assert [exported[p][0]["correctness"] for p in exported] == [False, False, True, False]
    line = capsys.readouterr().out.strip()
    assert "4 problems (2 without a record of sample 0" in line and "2 samples, 1 correct" in line
    assert "run_name=r_upstream level=1" in line and len(line.splitlines()) == 1


def test_kernelbench_layout_of_the_standard_file_and_a_named_output(tmp_path, capsys):
    write_run(tmp_path, standard=[record(1, 0), record(2, 0, runtime=-1.0, runtime_withheld=WITHHELD)])
    export(tmp_path, out_run_name="for_upstream", layout="kernelbench")
    exported = json.loads((tmp_path / "for_upstream" / "eval_results.json").read_text())
    assert [exported[p][0]["correctness"] for p in ("1", "2")] == [True, False]
    assert "2 samples, 1 correct, 1 correct with a withheld time exported as not correct" in capsys.readouterr().out


def test_an_existing_run_of_ours_is_never_overwritten(tmp_path):
    write_run(tmp_path, standard=[record(1, 0)])
    write_run(tmp_path, "other", standard=[record(1, 0)])
    with pytest.raises(UserError, match="holds a run"):
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


# The default layout: kernel_bench_verified's flat files, read by re-implementations of its scripts.

BASELINE = {"level1": {"1_ReLU.py": {"mean": 1.0}, "2_Matmul.py": {"mean": 1.0}, "3_Linear_GELU.py": {"mean": 2.0},
                       "4_CrossEntropyLoss.py": {"mean": 1.0}}}


def case(name, passed=True, diff=1e-5, **extra):
    return {"case": name, "passed": passed, "max_abs_diff": diff, "mean_abs_diff": diff / 2,
            "tolerance_needed": diff, "mismatches": 0 if passed else 3, **extra}


def cases(failing: dict | None = None):
    """Five trials and D1..D4, passing except those named in `failing` ({case: max |out - ref|})."""
    failing = failing or {}
    return [case(n, n not in failing, failing.get(n, 1e-5))
            for n in [f"trial_{i}" for i in range(5)] + ["D1", "D2", "D3", "D4"]]


def judged(pid, sid, status="correct", runtime=1.0, failing=None, **metadata):
    rec = record(pid, sid, status, runtime, all_cases_recorded=True, cases=cases(failing),
                 kernel_sha256=f"kernel {pid}_{sid}", **metadata)
    rec["peak_memory"] = 4096 if status == "correct" else -1
    return rec


def flat_run(tmp_path, samples=2):
    """Hidden records of the outcomes the export translates for upstream's tolerance rule, and standard
    records of three of the same kernels. With samples=5 the other samples did not compile."""
    hidden = [judged(1, 0, runtime=0.5),                                                        # 2x
              judged(2, 0, "incorrect", failing={"trial_3": 5e-4}, failed_case="trial_3"),       # liftable at 1e-3
              judged(3, 0, "incorrect", failing={"D2": 5e-4}, failed_case="D2"),                # a hidden config
              judged(4, 0, "incorrect", failing={"trial_0": 5e-4}, failed_case="input_mutated"),  # a policy
              judged(1, 1, "compile_error", error="nvcc failed"), judged(2, 1, "timeout"),
              judged(3, 1, runtime=-1.0, runtime_withheld=WITHHELD), judged(4, 1, runtime=0.5)]
    hidden += [judged(pid, sid, "compile_error") for pid in range(1, 5) for sid in range(2, samples)]
    standard = [judged(1, 0, runtime=0.5), judged(2, 0, runtime=0.8), judged(4, 0, runtime=2.0),
                judged(3, 1, runtime=0.9)]
    write_run(tmp_path, standard=standard, hidden=hidden)


def test_the_default_export_is_kernel_bench_verifieds_flat_files_with_the_fields_it_reads(tmp_path, capsys):
    flat_run(tmp_path)
    export(tmp_path, use_hidden_eval=True)
    out = tmp_path / "r_upstream"
    hidden = json.loads((out / "eval_results_hidden.json").read_text())
    times = json.loads((out / "eval_results.json").read_text())
    assert list(hidden) == list(times) == ["1_0", "1_1", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1"]
    assert set(hidden["1_0"]) == {"sample_id", "compiled", "correctness", "metadata", "runtime", "runtime_stats",
                                  "peak_memory", "memory_stats"}
    assert (hidden["1_0"]["correctness"], hidden["1_0"]["runtime"], hidden["1_0"]["peak_memory"]) == (True, 0.5, 4096.0)
    assert times["1_0"] == hidden["1_0"]            # its own time, as the hidden evaluation measured it
    assert times["2_0"]["runtime"] == 0.8 and "kbv_time_from" in times["2_0"]["metadata"]  # untimed: the standard's
    assert times["4_0"]["runtime"] == 2.0 and times["4_0"]["correctness"] is False  # its verdict is the hidden one
    assert times["3_1"]["runtime"] == -1.0          # withheld: no other evaluation's time replaces it
    assert hidden["1_0"]["metadata"]["hidden_correctness_trials"] == "(4/4 hidden configs passed)"
    assert hidden["2_0"]["metadata"]["max_difference"] == ["0.000500"] and "hidden_failed_configs" not in hidden["2_0"]["metadata"]
    assert hidden["3_0"]["metadata"]["hidden_failed_configs"] == ["D2"] and "max_difference" not in hidden["3_0"]["metadata"]
    assert "max_difference" not in hidden["4_0"]["metadata"]   # failed a policy: no difference to lift
    assert hidden["4_0"]["metadata"]["correctness_issue"] == "failed input_mutated"
    assert hidden["1_1"]["metadata"]["compilation_error"] == "nvcc failed"
    assert hidden["2_1"]["metadata"]["eval_status"] == "timeout"
    assert hidden["3_1"]["correctness"] is False and hidden["3_1"]["metadata"]["kbv_status"] == "correct_time_withheld"
    line = capsys.readouterr().out
    assert "as verified: 4 problems, 8 samples, 2 correct, 1 correct with a withheld time" in line
    assert "kernel_bench_verified's checkout" in line and "use_hidden_eval=True" in line and len(line.splitlines()) == 1


def test_upstreams_analysis_and_leaderboard_read_the_default_export(tmp_path):
    """Its analysis stops on KernelBench's layout (the old default) and reads ours; its leaderboard's
    tolerance rule lifts only the sample whose failures are standard-trial differences under it, with the
    standard time of the same kernel."""
    from upstream_readers import kernelbench_analysis, lifted, verified_analysis, verified_leaderboard

    flat_run(tmp_path)
    export(tmp_path, use_hidden_eval=True)
    out = tmp_path / "r_upstream"
    hidden = verified_analysis(out, BASELINE, 1, 4, use_hidden_eval=True)
    assert hidden["best"]["correctness_rate"] == 0.5 and hidden["best"]["gmsr"] == pytest.approx(2.0)  # P1, P4 at 2x
    assert all(np.isfinite(m["gmsr"]) for m in hidden["per_sample"])   # the withheld time is not correct
    assert verified_leaderboard(out, BASELINE, 1, 4, use_hidden_eval=True) is None  # 8 of 20 entries: skipped

    import shutil
    shutil.rmtree(tmp_path / "r")
    flat_run(tmp_path, samples=5)   # five samples per problem, as its leaderboard expects
    export(tmp_path, use_hidden_eval=True)
    strict = verified_leaderboard(out, BASELINE, 1, 4, use_hidden_eval=True)
    loose = verified_leaderboard(out, BASELINE, 1, 4, use_hidden_eval=True, tolerance=1e-3)
    assert (strict["correctness_rate"], strict["gmsr"]) == (0.5, pytest.approx(2.0))
    assert (loose["correctness_rate"], loose["gmsr"]) == (0.75, pytest.approx((2 * 1.25 * 2) ** (1 / 3)))
    exported = json.loads((out / "eval_results_hidden.json").read_text())
    assert [k for k, e in exported.items() if not e["correctness"] and lifted(e, 1e-3)] == ["2_0"]

    export(tmp_path, use_hidden_eval=True, layout="kernelbench", out_run_name="kb")
    with pytest.raises(ValueError, match="not enough values to unpack"):
        verified_analysis(tmp_path / "kb", BASELINE, 1, 4)
    kb = kernelbench_analysis(tmp_path / "kb", BASELINE, 1, TINY_FILES)
    assert (kb["correct"], kb["gmsr"]) == (1, pytest.approx(2.0))   # sample 0 only: 1_0


def test_a_standard_export_reexports_into_its_own_folder_and_never_over_a_run(tmp_path, capsys):
    from kernelbench_verified.results import derived_record

    flat_run(tmp_path)
    export(tmp_path, use_hidden_eval=True)
    export(tmp_path)   # the same folder again, now the standard file: the hidden export's file goes
    out = tmp_path / "r_upstream"
    assert sorted(p.name for p in out.iterdir()) == ["eval_results.json"]
    assert list(json.loads((out / "eval_results.json").read_text())) == ["1_0", "2_0", "3_1", "4_0"]
    assert "exported eval_results.json as verified: 4 problems, 4 samples, 4 correct" in capsys.readouterr().out
    upstream_written = tmp_path / "theirs"   # upstream's own result file: no kbv_status
    upstream_written.mkdir()
    (upstream_written / "eval_results.json").write_text(json.dumps({"1_0": {"sample_id": 0, "compiled": True,
                                                                            "correctness": True, "metadata": {}}}))
    with pytest.raises(UserError, match="theirs holds a run"):
        export(tmp_path, out_run_name="theirs")

    hidden = json.loads((tmp_path / "r" / "eval_results_hidden.json").read_text())   # a hidden-only run of ours
    (tmp_path / "r" / "eval_results.json").write_text(json.dumps(
        {key: derived_record(rec, "eval_results_hidden.json") for key, rec in hidden.items()}))
    with pytest.raises(UserError, match="holds only entries a hidden evaluation derived"):
        export(tmp_path)
