"""Comparing two evaluations of the same samples verdict by verdict (validate.same_verdicts and
scripts/compare_verdicts.py): what the judge decides must match, what it measures may differ."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from kernelbench_verified.errors import UserError
from kernelbench_verified.validate.same_verdicts import compare_records, compare_runs


def record(status="correct", failed_case=None, cases=(), audits=(True,), integrity=(), withheld=False,
           findings=(), runtime=0.5):
    metadata = {"failed_case": failed_case, "integrity": list(integrity),
                "cases": [{"case": name, "passed": passed, **({"policy": policy} if policy else {})}
                          for name, passed, policy in cases],
                "timed_checks": [{"case": f"timed_call_{i}", "passed": passed} for i, passed in enumerate(audits)],
                "static_findings": [{"code": code, "severity": "warn"} for code in findings]}
    if withheld:
        metadata["runtime_withheld"] = "integrity flags: timing_far_below_wall_clock"
    return {"eval_status": status, "compiled": status != "compile_error", "runtime": runtime, "metadata": metadata}


def test_measurements_differ_between_honest_evaluations_verdicts_do_not():
    a = {"1_0": record(integrity=["timing_below_judge_clock: waited 0.2 ms"], withheld=True, runtime=0.51),
         "1_1": record("incorrect", failed_case="timed_call_17", audits=(True, False))}
    b = {"1_0": record(integrity=["timing_below_judge_clock: waited 0.3 ms"], withheld=True, runtime=0.49),
         "1_1": record("incorrect", failed_case="timed_call_3", audits=(False,))}
    comparison = compare_records(a, b)
    assert comparison.same and comparison.compared == 2
    assert comparison.statuses == {"correct": [1, 1], "incorrect": [1, 1]}


@pytest.mark.parametrize("changed, what", [
    (record("incorrect", failed_case="D4"), "eval_status"),
    (record(cases=[("D2", False, "input_mutated")]), "failed_cases"),
    (record(audits=(True, False)), "audits"),
    (record(integrity=["thread_outlived_call: x"]), "integrity"),
    (record(withheld=True), "runtime_withheld"),
    (record(findings=["side_stream"]), "static_findings"),
])
def test_any_change_in_what_the_judge_decided_is_a_difference(changed, what):
    comparison = compare_records({"2_0": record()}, {"2_0": changed})
    assert not comparison.same
    assert what in [d[1] for d in comparison.differences] and comparison.differences[0][0] == "2_0"


def test_a_sample_in_one_run_only_is_a_difference_and_derived_entries_are_skipped():
    derived = dict(record(), metadata={"derived_from": "eval_results_hidden.json"})
    comparison = compare_records({"1_0": record(), "1_1": record(), "3_0": derived}, {"1_0": record()})
    assert not comparison.same and comparison.only_in == {"a": ["1_1"], "b": []}


def test_samples_pair_by_problem_and_kernel_source_when_a_fixture_shifts_the_slots():
    """A fixture added to a suite moves the samples after it to other sample ids: they still pair with
    themselves, and a change in one of them is still found, named by both keys."""
    def placed(kernel, **changes):
        made = record(**changes)
        made["metadata"].update(problem_sha256="p19", kernel_sha256=kernel)
        return made

    missing = {"eval_status": "missing_kernel", "compiled": False, "metadata": {}}
    a = {"19_0": placed("honest"), "19_1": placed("attack", status="incorrect", failed_case="D2"), "19_2": missing}
    b = {"19_0": placed("new", status="compile_error"), "19_1": placed("honest"),
         "19_2": placed("attack", status="incorrect", failed_case="D2")}
    comparison = compare_records(a, b)
    assert comparison.compared == 2 and not comparison.differences
    assert comparison.only_in == {"a": [], "b": ["19_0"]}
    b["19_1"] = placed("honest", status="incorrect", failed_case="D3")
    assert ("19_0->19_1", "eval_status", "correct", "incorrect") in compare_records(a, b).differences


def test_runs_are_named_by_folder_or_file_and_a_missing_one_is_one_line(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "eval_results_hidden.json").write_text(json.dumps({"1_0": record()}))
    assert compare_runs(tmp_path / "a", tmp_path / "b" / "eval_results_hidden.json").same
    with pytest.raises(UserError, match="holds no eval_results_hidden.json or eval_results.json"):
        compare_runs(tmp_path, tmp_path / "a")
    (tmp_path / "b" / "eval_results_hidden.json").write_text(json.dumps({"1_0": record("timeout")}))
    out = tmp_path / "comparison.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_verdicts.py"), str(tmp_path / "a"),
                             str(tmp_path / "b"), "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "1_0: eval_status 'correct' -> 'timeout'" in result.stdout
    assert json.loads(out.read_text())["differing"][0][:2] == ["1_0", "eval_status"]
