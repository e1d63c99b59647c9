"""The validation command (scripts/validate_harness.py, kernelbench_verified.validate): each step's
figures from known records, the summary kept section by section, the pages rendered from the committed
summaries, and a CPU run of the references step end to end."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT, TINY
from kernelbench_verified.errors import UserError
from kernelbench_verified.problems.load import list_problems
from kernelbench_verified.validate import clock, gpu_tests, references, render, summary
from kernelbench_verified.validate.run import defects_of


def timed_record(reported, waited, calibration, median, slack=None):
    metadata = {"judge_clock": "gpu_timeline", "judge_clock_gap_ms": 0.0,
                "judge_trials_ms": {"reported": reported, "waited": waited, "calibration_overhead": calibration}}
    if slack:
        metadata["judge_clock_slack"] = slack
    return {"level": 1, "problem_id": 1, "sample_id": 0, "eval_status": "correct", "runtime": median,
            "runtime_stats": {"median": median, "mean": median, "device": "cuda:0"}, "metadata": metadata}


def test_the_clock_step_finds_the_smallest_fake_the_judges_rule_withholds():
    assert clock.faked([1.0] * 4, 0.5, 0.5) == [1.0, 0.5, 1.0, 0.5]
    slack = {"median": [0.0, 0.104], "mean": [0.0, 0.104], "calibrations": 60}
    record = timed_record([1.0] * 100, [1.3] * 100, [0.3] * 100, 1.0, slack)
    # A fake of f lowers each call's report by f ms here; the gap must exceed 0.104 ms.
    assert clock.smallest_fake(record) == pytest.approx(0.11)
    # Faking 49 of 100 calls leaves the median call honest: only the mean check sees it, once the mean
    # over the 98 calls it keeps (the 2 slowest left out) moves by f / 2 > 0.104 ms.
    assert clock.smallest_fake(record, share=0.49) == pytest.approx(0.49 * 0.21)
    noisy = timed_record([1.0] * 100, [1.5] * 100, [0.3] * 100, 1.0, slack)  # an honest gap of 0.2 ms
    section = clock.section([record, noisy, timed_record([5.0] * 100, [5.3] * 100, [0.3] * 100, 5.0, slack)])
    assert section["honest_records"] == 3 and section["withheld_without_fake"] == 1
    assert section["fake_caught_by_call_time"] == {
        "1-2 ms": {"records": 1, "caught_in_every": 0.11, "caught_in_95_percent": 0.11},
        "5-10 ms": {"records": 1, "caught_in_every": 0.03, "caught_in_95_percent": 0.03}}
    assert section["slack_ms_term"] == {"min": 0.104, "max": 0.104}
    # Only correct CUDA records with the judge's raw figures are honest timed records.
    cpu = dict(record, runtime_stats={"median": 1.0, "mean": 1.0, "device": "cpu"})
    assert clock.honest_timed({"a": record, "b": cpu, "c": dict(record, eval_status="incorrect")}) == [record]


def test_pytest_counts_are_read_from_its_closing_line():
    assert gpu_tests.counts("x\n26 passed, 1 xfailed, 1 xpassed in 135.36s (0:02:15)\n") == {
        "passed": 26, "failed": 0, "errors": 0, "skipped": 0, "xfailed": 1, "xpassed": 1}
    assert gpu_tests.counts("==== 2 failed, 3 passed, 1 error in 4.0s ====")["errors"] == 1
    assert gpu_tests.counts("no tests ran")["passed"] == 0


def test_references_figures_count_d5_and_shape_variants_and_name_failures():
    problems = list_problems(1, TINY / "KernelBench")[:2]
    variant = {"case": "S1", "overrides": {"batch_size": 8}}
    records = {f"{problems[0].pid}_0": {"eval_status": "correct", "runtime": 1.0, "metadata": {
        "perturbed_parameters": {"status": "passed"},
        "shape_variants": [dict(variant, status="passed"), dict(variant, case="S2", status="not_applicable")]}},
               f"{problems[1].pid}_0": {"eval_status": "correct", "runtime": 1.0, "metadata": {
        "perturbed_parameters": {"status": "failed", "reason": "3 of 9 values outside"},
        "shape_variants": [dict(variant, status="failed", reason="shape mismatch")]}}}
    level = references.section({1: references.level_figures(1, records, {}, problems)})["levels"]["1"]
    assert level["d5"] == {"passed": 1, "failed": 1}
    assert level["shape_variants"] == {"passed": 1, "not_applicable": 1, "failed": 1}
    assert level["robustness_failed"] == [f"L1/{problems[1].pid} S1 {{'batch_size': 8}}: shape mismatch",
                                          f"L1/{problems[1].pid} D5: 3 of 9 values outside"]


def test_references_figures_count_rejections_withheld_times_and_identical_codes_spread(tmp_path):
    problems = list_problems(1, TINY / "KernelBench")[:3]
    first, second, third = problems
    ok = {"eval_status": "correct", "runtime": 2.0,
          "metadata": {"eval_seconds": 3.0, "judge_trials_ms": {"reported": [2.0] * 100}, "clock_retry": {},
                       "phase_seconds": {"start_and_load": 0.9, "correctness_and_memory": 0.2, "timing": 0.5,
                                         "timed_checks": 0.1},
                       "trial_phases_at": {"calibration": [100.0, 100.6]}, "robustness_seconds": 0.7}}
    records = {f"{first.pid}_0": ok,
               f"{second.pid}_0": {"eval_status": "correct", "runtime": -1.0,
                                   "metadata": {"runtime_withheld": "integrity flags: timing_below_judge_clock"}},
               f"{third.pid}_0": {"eval_status": "incorrect", "runtime": -1.0, "metadata": {"failed_case": "D2"}}}
    baseline = {first.filename: {"mean": 2.2}}
    found = references.level_figures(1, records, baseline, problems)
    assert found["speedups"] == {f"L1/{first.pid}": 1.1}
    assert found["withheld"] == [f"L1/{second.pid}: integrity flags: timing_below_judge_clock"]
    assert found["rejected"] == [f"L1/{third.pid} incorrect: D2"]
    assert found["doubted_once"] == [f"L1/{first.pid}"]
    assert found["harness_seconds"] == {f"L1/{first.pid}": pytest.approx(2.8)}  # 3 s less 100 calls of 2 ms
    # 2.8 harness seconds: 0.3 start and load, 0.6 calibration, 0.2 cases, 0.3 of the timed phase beyond
    # its 0.2 s of GPU work, 0.1 audits, 0.7 robustness, and 0.6 the judge's own beyond its laps.
    assert found["harness_phases"][f"L1/{first.pid}"] == pytest.approx(
        {"start_and_load": 0.3, "calibration": 0.6, "cases_and_memory": 0.2, "timed_calls_beyond_gpu": 0.3,
         "audits_and_end": 0.1, "robustness": 0.7, "other": 0.6})
    assert found["trial_loops"] == {}  # a record from before the judge kept its trial loops' steps
    level = references.section({1: found})["levels"]["1"]
    assert level["harness_seconds_by_phase"]["calibration"] == pytest.approx(0.6)
    assert level["trial_loop_seconds_by_step"] == {}
    assert level["evaluated"] == 1 and level["identical_code"]["geomean"] == 1.1
    assert level["d5"] == {} and level["robustness_failed"] == []

    # The bounds file: measured problems replace their entries, others stay; digests of today's files.
    bounds = tmp_path / "X.json"
    bounds.write_text(json.dumps({"speedups": {"L1/99": [0.9, 1.05], f"L1/{first.pid}": [3.0]},
                                  "problem_sha256": {"L1/99": "old", f"L1/{first.pid}": "old"}}))
    references.write_bounds(bounds, "X", {1: found}, {f"L1/{first.pid}": first})
    written = json.loads(bounds.read_text())
    assert written["speedups"] == {f"L1/{first.pid}": [1.1], "L1/99": [0.9, 1.05]}
    assert written["problem_sha256"][f"L1/{first.pid}"] == first.source_sha256


def test_trial_loop_steps_split_the_loops_host_seconds_beyond_the_reported_calls():
    # 20 calibration calls and 100 timed ones of 2 ms: 0.24 s reported; the loops' trial steps took
    # 0.5 s, so 0.26 s of them lay beyond the calls' own times (warm-ups whole, replies, copies).
    record = {"metadata": {"judge_trials_ms": {"reported": [2.0] * 100, "calibration_reported": [2.0] * 20},
                           "trial_loop_seconds": {"calibration": {"inputs": 0.01, "arm": 0.02, "trial": 0.1, "rest": 0.0},
                                                  "timed": {"inputs": 0.05, "arm": 0.1, "trial": 0.4, "rest": 0.01}}}}
    assert references.trial_loop_steps(record) == pytest.approx(
        {"inputs": 0.06, "arm": 0.12, "trial_beyond_reported": 0.26, "rest": 0.01})
    section = {"levels": {"2": {"trial_loop_seconds_by_step": references.phase_medians([references.trial_loop_steps(record)])}}}
    table = render.median_table(section, "trial_loop_seconds_by_step", "Steps")
    assert table[-1] == "| 2 | 0.06 | 0.12 | 0.26 | 0.01 |"
    assert render.median_table({"levels": {"2": {}}}, "trial_loop_seconds_by_step", "Steps") == []


def test_each_step_replaces_its_own_section_and_defects_are_named(tmp_path):
    path = tmp_path / "X.json"
    header = {"gpu": "X", "device_name": "a GPU", "fingerprint": {}}
    summary.record_section(path, header, "clock", {"honest_records": 1}, {"levels": [1]}, "abc123")
    summary.record_section(path, header, "exploits", {"attacks_missed": ["side_stream_x"],
                                                      "honest": {"rejected": ["conv"], "withheld": []}}, {}, "abc123")
    document = summary.record_section(path, header, "clock", {"honest_records": 2}, {}, "abc123")
    assert list(document["sections"]) == ["exploits", "clock"]  # in step order
    assert document["sections"]["clock"]["honest_records"] == 2
    assert document["sections"]["clock"]["measured"]["harness_version"]
    assert document["sections"]["clock"]["measured"]["git_commit"] == "abc123"  # as the validation started
    assert summary.summaries(tmp_path)["X"] == document
    assert defects_of(document) == ["attack missed: side_stream_x", "honest fixture rejected: conv"]
    with pytest.raises(ValueError):
        summary.record_section(path, header, "bogus", {}, {}, "abc123")


def test_a_references_run_of_some_levels_keeps_the_other_levels_with_their_dates(tmp_path):
    path = tmp_path / "X.json"
    header = {"gpu": "X", "device_name": "a GPU", "fingerprint": {}}

    def level(evaluated: int) -> dict:
        return {"evaluated": evaluated, "rejected": [], "withheld": [], "doubted_once": [],
                "identical_code": {"problems": 0}, "harness_seconds_median": 1.0}

    summary.record_section(path, header, "references", {"levels": {"1": level(100), "2": level(100)}},
                           {"levels": [1, 2]}, "abc123")
    first = json.loads(path.read_text())["sections"]["references"]["levels"]["1"]["measured"]
    document = summary.record_section(path, header, "references", {"levels": {"2": level(99)}}, {"levels": [2]},
                                      "abc123")
    levels = document["sections"]["references"]["levels"]
    assert list(levels) == ["1", "2"] and levels["1"]["measured"] == first and levels["2"]["evaluated"] == 99
    assert levels["2"]["measured"]["settings"] == {"levels": [2]}
    line = render._measured(document["sections"]["references"])
    assert line.startswith("Level 1: _Measured") and "Level 2: _Measured" in line


def test_the_committed_pages_show_exactly_the_committed_summaries():
    """docs/validation.md's figures and the README's headline table are generated, never typed."""
    folder = ROOT / "results" / "validation"
    assert summary.summaries(folder), "no validation summary is committed"
    for page, part in ((ROOT / "docs" / "validation.md", "figures"), (ROOT / "README.md", "headline")):
        assert render.rendered(folder, page, part) == page.read_text(), \
            f"{page.name} is out of date: run scripts/validate_harness.py steps=[] to render it again"


def test_the_headline_table_names_each_gpu_and_keeps_to_eight_rows():
    found = summary.summaries(ROOT / "results" / "validation")
    table = render.headline_markdown(found).splitlines()
    assert table[0].startswith("| figure |") and all(gpu in table[0] for gpu in found if gpu != "cpu")
    assert 3 <= len(table) - 2 <= 8


def test_a_cpu_run_of_the_references_step_writes_a_summary_section(tmp_path):
    out = tmp_path / "validation"
    command = [sys.executable, str(ROOT / "scripts" / "validate_harness.py"), "steps=[references]", "levels=[1]",
               "device=cpu", f"problems_dir={TINY / 'KernelBench'}", f"hidden_tests_dir={TINY / 'hidden_tests'}",
               f"work_dir={tmp_path / 'work'}", f"out_dir={out}", f"identical_code_dir={tmp_path / 'ic'}",
               "docs=null", "readme=null", "timeout=120"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    document = json.loads((out / "cpu.json").read_text())
    level = document["sections"]["references"]["levels"]["1"]
    assert level["evaluated"] == 4 and level["rejected"] == [] and level["withheld"] == []
    assert level["identical_code"]["problems"] == 4
    assert not (tmp_path / "ic").exists()  # CPU speedups are no GPU's identical-code bounds
    # The clock step needs CUDA-timed records, which a CPU run has none of: one line says so.
    again = subprocess.run(command[:2] + ["steps=[clock]"] + command[4:], capture_output=True, text=True,
                           timeout=300, cwd=tmp_path)
    assert again.returncode == 2 and again.stderr.strip().startswith("error: steps=[clock] needs honest")


def test_unknown_steps_and_levels_are_one_line_errors(tmp_path):
    from kernelbench_verified.config import load_config
    from kernelbench_verified.validate.run import Validation

    for override, message in (("steps=[gpu_tests,bogus]", "unknown step(s) bogus"), ("levels=[5]", "levels 1 to 4")):
        with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
            Validation(load_config("validate", [override, "device=cpu", f"work_dir={tmp_path}"]))


def test_the_references_table_shows_where_the_harness_seconds_go():
    level = {"evaluated": 2, "rejected": [], "withheld": [], "doubted_once": [],
             "identical_code": {"problems": 0}, "harness_seconds_median": 3.4,
             "harness_seconds_by_phase": {"start_and_load": 0.25, "calibration": 1.3, "robustness": 0.74}}
    lines = render.reference_lines({"levels": {"2": level}})
    assert "| level | start and load | calibration | robustness |" in lines
    assert "| 2 | 0.25 | 1.30 | 0.74 |" in lines
    assert not any("start and load" in line for line in render.reference_lines(
        {"levels": {"2": dict(level, harness_seconds_by_phase={})}}))


def test_the_references_table_shows_d5_and_the_shape_variants_by_status_and_names_failures():
    level = {"evaluated": 2, "rejected": [], "withheld": [], "doubted_once": [],
             "identical_code": {"problems": 0}, "harness_seconds_median": 3.4,
             "d5": {"passed": 2}, "shape_variants": {"passed": 3, "failed": 1},
             "robustness_failed": ["L2/7 S2 {'N': 96}: outputs differ"]}
    lines = render.reference_lines({"levels": {"2": level, "3": dict(level, d5={}, shape_variants={})}})
    assert "| 2 | 2 passed | 1 failed, 3 passed |" in lines
    assert not any(line.startswith("| 3 | ") and "passed" in line for line in lines)  # level 3: not measured
    assert "- L2/7 S2 {'N': 96}: outputs differ" in lines


def test_an_honest_kernel_failing_d5_or_a_shape_variant_is_a_defect():
    document = {"sections": {
        "exploits": {"clean": {"rejected": [], "withheld": [], "d5_failed": ["add_bias"]}},
        "references": {"levels": {"2": {"rejected": [], "withheld": [], "robustness_failed": ["L2/7 D5: differs"]},
                                  "3": {"rejected": [], "withheld": []}}}}}
    assert defects_of(document) == ["clean fixture failed D5: add_bias", "reference failed: L2/7 D5: differs"]


def test_the_commit_ignores_the_validations_own_outputs_but_not_other_changes(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "results").mkdir()
    for name in ("results/H100.json", "README.md", "judge.py"):
        (tmp_path / name).write_text("before\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "start")
    outputs = (tmp_path / "results" / "H100.json", tmp_path / "README.md")
    (tmp_path / "results" / "H100.json").write_text("level 1 written\n")
    (tmp_path / "README.md").write_text("table rewritten\n")
    clean = summary.git_commit(outputs, root=tmp_path)
    assert clean and not clean.endswith("+changes")
    (tmp_path / "judge.py").write_text("edited\n")
    assert summary.git_commit(outputs, root=tmp_path) == clean + "+changes"
