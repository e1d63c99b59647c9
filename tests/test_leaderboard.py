"""The leaderboard end to end on fixture runs, its errors, the analysis script, and its size and speed.

Fixture (tests/fixtures/leaderboard): runs alpha (levels 1 and 2, two samples), beta (level 1, one
sample; 1_0 missing from its hidden evaluation) and alpha bf16; baselines TF32 (with a fingerprint),
fp32 (without) and bf16; level 1 problem 5 listed as degenerate.
"""

import hashlib
import json
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from kernelbench_verified.errors import UserError
from kernelbench_verified.leaderboard.discovery import UPSTREAM_EXCLUDED, UPSTREAM_EXCLUDED_REASON, load_baseline
from kernelbench_verified.leaderboard.page import render_page
from kernelbench_verified.leaderboard.report import Options, build_report
from leaderboard_synthetic import write_synthetic

FIXTURES = ROOT / "tests" / "fixtures" / "leaderboard"
PATHS = {"runs_dir": str(FIXTURES / "runs"), "timing_dir": str(FIXTURES / "timing"),
         "degenerate_file": str(FIXTURES / "degenerate.json")}


def report(**overrides):
    return build_report(Options(**{**PATHS, "bootstrap_resamples": 200, **overrides}))


def row(data, precision, model, level):
    section = next(s for s in data["sections"] if s["precision"] == precision)
    return next(r for r in section["rows"] if r["model"] == model and r["level"] == level)


def page_data(html: str) -> dict:
    return json.loads(re.search(r'id="leaderboard-data">(.*?)</script>', html, re.S)[1])


def cli(script: str, *args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def test_standard_correctness_with_the_tf32_baseline():
    data, _, _ = report()
    alpha = row(data, "fp32", "alpha", "1")["metrics"]
    # best samples: p1 s1 4.0x (mem 0.5), p2 s0 0.5x (mem 1.0), p3 unsolved, p4 s0 2.0x (mem 4.0)
    assert alpha["num_problems"] == 4 and alpha["correct"] == 0.75 and alpha["compiled"] == 1.0
    assert alpha["fast_p"] == {"0": 0.75, "0.5": 0.5, "0.8": 0.5, "1": 0.5, "1.5": 0.5, "2": 0.25}
    assert alpha["correct_speedup"] == pytest.approx(4 ** (1 / 3))
    assert alpha["kernelbench_speedup"] == pytest.approx((4 * 1 * 1 * 2) ** (1 / 4))
    assert alpha["memory_efficiency"] == pytest.approx(2 ** (1 / 3))
    assert alpha["less_memory"] == pytest.approx(1 / 3)
    assert data["degenerate"] == [{"level": 1, "pid": 5, "problem": "5_Softmax.py", "reason": "a constant passes"}]


def test_hidden_correctness_and_missing_hidden_samples():
    data, _, warnings = report(use_hidden_eval=True)
    alpha = row(data, "fp32", "alpha", "1")["metrics"]
    # Times come from the hidden records, the ones that decided correctness: p1 s1 fails D4 -> s0 at
    # 0.55 ms (1.0 ms baseline, 1.82x, mem 2.0); p4 s0 fails D2 -> s1 at 0.6 ms (0.5 ms baseline, 0.83x);
    # p2 s0 at 4.1 ms (2.0 ms baseline, 0.49x).
    assert alpha["correct"] == 0.75 and alpha["fast_p"]["1"] == 0.25
    assert alpha["correct_speedup"] == pytest.approx((1 / 0.55 * 0.5 / 0.6 * 2 / 4.1) ** (1 / 3))
    assert alpha["kernelbench_speedup"] == pytest.approx((1 / 0.55) ** (1 / 4))  # max(1, s): only p1 above 1
    assert alpha["memory_efficiency"] == pytest.approx(2 ** (1 / 3))
    beta = row(data, "fp32", "beta", "1")["metrics"]
    assert beta["correct"] == 0.25   # 1_0 compiled but has no hidden record: incorrect
    assert any("beta_level1_test" in w and "missing from" in w and w.endswith(": 1_0") for w in warnings)
    pooled = row(data, "fp32", "alpha", "all")
    assert pooled["levels"] == [1, 2] and pooled["metrics"]["num_problems"] == 6
    assert pooled["metrics"]["correct"] == pytest.approx(5 / 6)
    heatmap = data["sections"][0]["heatmaps"][0]
    assert heatmap["models"] == ["alpha", "beta"] and heatmap["problems"][0] == "1_ReLU"
    assert heatmap["cells"][0][0][:3] == [1.8182, 0, 0.55]   # alpha p1: sample 0, 0.55 ms (hidden record)
    assert heatmap["statuses"][heatmap["cells"][0][2][3]] == "incorrect on trial_0"


def test_deflation_view_has_the_four_settings():
    data, _, _ = report(use_hidden_eval=True)
    settings = {(r["baseline"], r["correctness"]): r["metrics"] for r in data["deflation"]["rows"]
                if r["model"] == "beta"}
    assert set(settings) == {("fp32", "standard"), ("fp32", "hidden"), ("TF32", "standard"), ("TF32", "hidden")}
    # beta p2 runs 1.0 ms: 4.0 ms fp32 baseline -> 4x, 2.0 ms TF32 baseline -> 2x; p1 (1.0x) only in standard
    assert settings[("fp32", "hidden")]["correct_speedup"] == pytest.approx(4.0)
    assert settings[("TF32", "hidden")]["correct_speedup"] == pytest.approx(2.0)
    assert settings[("TF32", "standard")]["correct_speedup"] == pytest.approx(2 ** 0.5)
    assert settings[("fp32", "standard")]["correct"] == 0.5 and settings[("TF32", "hidden")]["correct"] == 0.25


def test_tolerance_rejudges_from_recorded_differences():
    data, _, _ = report(fp32_tolerance=1e-4)
    section = data["sections"][0]
    # p1 s1 (4.0x) has max_abs_diff 5e-4 > 1e-4: p1 falls back to s0 (2.0x); p2 s0 (0.5x) has no cases
    # recorded and keeps its verdict; p4 s0 2.0x
    assert row(data, "fp32", "alpha", "1")["metrics"]["correct_speedup"] == pytest.approx(2 ** (1 / 3))
    assert section["tolerance"]["tolerance"] == 1e-4 and section["tolerance"]["rejected"] == 1
    assert section["tolerance"]["without_data"] >= 1 and section["tolerance"]["evaluation_atols"] == [1e-3]


def test_a_case_is_rejudged_at_the_tolerance_it_needs_relative_part_included():
    from kernelbench_verified.leaderboard.scoring import Setting, ToleranceReport, _verdict

    # |out - ref| = 1.5e-3 where |ref| = 1 passes at atol = rtol = 1e-3 (1e-3 + 1e-3 * 1), as the
    # evaluation would have judged it; only records without tolerance_needed fall back to the absolute figure.
    case = {"case": "trial_0", "passed": True, "max_abs_diff": 1.5e-3, "tolerance_needed": 7.5e-4, "mismatches": 0}
    record = {"eval_status": "correct", "correctness": True, "compiled": True, "runtime": 1.0,
              "metadata": {"cases": [case]}}
    assert _verdict(None, record, Setting(True, 1e-3), ToleranceReport(1e-3)).correct
    stricter = _verdict(None, record, Setting(True, 5e-4), ToleranceReport(5e-4))
    assert not stricter.correct and "needs tolerance 0.00075 > 0.0005" in stricter.status
    older = dict(record, metadata={"cases": [{k: v for k, v in case.items() if k != "tolerance_needed"}]})
    assert not _verdict(None, older, Setting(True, 1e-3), ToleranceReport(1e-3)).correct


def test_the_page_shows_problems_solved_against_tolerance(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "runs", runs)
    hidden = runs / "alpha_level1_test" / "eval_results_hidden.json"
    records = json.loads(hidden.read_text())
    for case in records["1_0"]["metadata"]["cases"]:  # p1's one correct sample needs 3e-5 in one case
        case["tolerance_needed"] = 3e-5 if case["case"] == "D2" else 1e-6
    hidden.write_text(json.dumps(records))
    data, _, _ = report(runs_dir=str(runs), use_hidden_eval=True)
    curve = data["sections"][0]["tolerance_curve"]
    assert curve["tolerances"] == [1e-2, 1e-3, 1e-4, 1e-5]
    alpha = next(r for r in curve["rows"] if r["model"] == "alpha" and r["level"] == 1)
    evaluated = row(data, "fp32", "alpha", "1")["metrics"]
    assert alpha["solved"][:3] == [evaluated["correct"]] * 3
    assert alpha["solved"][3] == pytest.approx(evaluated["correct"] - 1 / evaluated["num_problems"])
    for line in curve["rows"]:
        assert line["solved"] == sorted(line["solved"], reverse=True)  # never more solved at a tighter one


def test_bf16_runs_use_their_own_baseline():
    data, _, _ = report()
    bf16 = next(s for s in data["sections"] if s["precision"] == "bf16")
    assert bf16["baseline"]["name"] == "baseline_time_torch_bf16"
    # p1: 0.25 ms against a 0.5 ms bf16 baseline
    assert row(data, "bf16", "alpha", "1")["metrics"]["correct_speedup"] == pytest.approx(2.0)


def test_baselines_with_and_without_fingerprint():
    tf32 = load_baseline(FIXTURES / "timing", "H200", "baseline_time_torch_tf32")
    fp32 = load_baseline(FIXTURES / "timing", "H200", "baseline_time_torch")
    assert tf32.fingerprint["gpu"] == "NVIDIA H200" and fp32.fingerprint is None
    assert tf32.levels[1][2].mean_ms == 2.0 and fp32.levels[1][2].mean_ms == 4.0


def test_script_writes_the_page_and_names_what_it_used(tmp_path):
    out = tmp_path / "board.html"
    done = cli("generate_leaderboard.py", "--use_hidden_eval", "--baseline", "baseline_time_torch_tf32",
               "--out", out, "--runs_dir", PATHS["runs_dir"], "--timing_dir", PATHS["timing_dir"],
               "--degenerate_file", PATHS["degenerate_file"], "--runs", "alpha_level1_test", "alpha_level2_test")
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    data = page_data(html)
    assert [r["model"] for r in data["sections"][0]["rows"]] == ["alpha"] * 3   # only the listed runs
    assert data["correctness"] == "hidden" and data["hardware"] == "H200"
    baseline_file = FIXTURES / "timing" / "H200" / "baseline_time_torch_tf32.json"
    assert data["sections"][0]["baseline"]["digest"] == hashlib.sha256(baseline_file.read_bytes()).hexdigest()[:12]
    assert data["sections"][0]["baseline"]["fingerprint"]["driver"] == "570.00"
    assert "plotly.js v" in html and "<script src" not in html   # plotly embedded, nothing fetched
    assert data["cpu_timing"] is False and "timed on the CPU" not in done.stderr


def test_cpu_timings_are_labelled_as_no_speedup_claim(tmp_path):
    timing = tmp_path / "timing"
    shutil.copytree(FIXTURES / "timing", timing)
    baseline_file = timing / "H200" / "baseline_time_torch_tf32.json"
    stored = json.loads(baseline_file.read_text())
    stored["fingerprint"]["device"] = "cpu"
    baseline_file.write_text(json.dumps(stored))
    out = tmp_path / "board.html"
    done = cli("generate_leaderboard.py", "--out", out, "--runs_dir", PATHS["runs_dir"], "--timing_dir", timing,
               "--degenerate_file", PATHS["degenerate_file"], "--runs", "alpha_level1_test")
    assert done.returncode == 0, done.stderr
    assert "timed on the CPU" in done.stderr and "no GPU speedup claim" in done.stderr  # the terminal
    html = out.read_text()
    assert page_data(html)["cpu_timing"] is True and "CPU timings: " in html  # the page


def test_the_baseline_folder_is_the_gpu_the_runs_were_evaluated_on(tmp_path):
    """Without --hardware a page scores runs against the baselines of the GPU their records name: an H100
    run is never scored against an H200 baseline. Runs of two GPU models, or records that name none
    (upstream's), need the folder named."""
    from kernelbench_verified.leaderboard.discovery import Run, RunResults, evaluated_hardware

    def results(*names):
        records = {(1, sid): {"metadata": {"hardware": name} if name else {}} for sid, name in enumerate(names)}
        return RunResults(Run("r", "m", 1, "fp32", tmp_path), records, None, len(names))

    assert evaluated_hardware([results("NVIDIA H100 80GB HBM3", None)]) == "H100"
    assert evaluated_hardware([results("cpu (x86_64)")]) == "cpu"
    with pytest.raises(UserError, match="evaluated on H100, H200: name the one"):
        evaluated_hardware([results("NVIDIA H100 80GB HBM3"), results("NVIDIA H200")])
    with pytest.raises(UserError, match="no record of these runs names the device"):
        evaluated_hardware([results(None)])


@pytest.mark.parametrize("args, message", [
    (["--runs_dir", "{tmp}"], "no runs in"),
    (["--baseline", "baseline_time_torch_missing"], "baseline file"),
    (["--runs", "not-a-run"], "is not named"),
])
def test_bad_input_is_one_line(tmp_path, args, message):
    defaults = ["--runs_dir", PATHS["runs_dir"], "--timing_dir", PATHS["timing_dir"],
                "--degenerate_file", PATHS["degenerate_file"], "--out", tmp_path / "x.html"]
    done = cli("generate_leaderboard.py", *defaults, *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "x.html").exists()


def test_malformed_result_json_is_one_line(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "runs" / "beta_level1_test", runs / "beta_level1_test")
    (runs / "beta_level1_test" / "eval_results.json").write_text('{"1_0": {"compiled": tru')
    with pytest.raises(UserError, match=r"eval_results.json is not valid JSON"):
        report(runs_dir=str(runs))
    done = cli("generate_leaderboard.py", "--runs_dir", runs, "--timing_dir", PATHS["timing_dir"],
               "--out", tmp_path / "x.html")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_analysis_script_prints_the_metrics_of_one_run():
    done = cli("benchmark_eval_analysis.py", "run_name=alpha_level1_test", "level=1", "hardware=H200",
               "baseline=baseline_time_torch_tf32", f"runs_dir={PATHS['runs_dir']}",
               f"timing_dir={PATHS['timing_dir']}", f"degenerate_file={PATHS['degenerate_file']}",
               "bootstrap_resamples=200")
    assert done.returncode == 0, done.stderr
    lines = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in done.stdout.splitlines()[1:])
    assert lines["correct (best of N)"] == "75.0%" and lines["Fast@2"] == "25.0%" and "pass@1" in lines
    assert lines["correct speedup (geomean)"].startswith("1.587x  [")
    assert lines["KernelBench avg speedup"] == "1.682x" and lines["uses less memory"] == "33.3%"  # (4·2·1·1)^(1/4)
    bad = cli("benchmark_eval_analysis.py", "run_name=alpha_level1_test", "level=9", f"runs_dir={PATHS['runs_dir']}")
    assert bad.returncode == 2 and "unknown level 9" in bad.stderr


def refined_copy(tmp_path) -> Path:
    """The fixture runs, one of them refined: turns/turn_0 (every sample failed) and turns/turn_1 (the
    run's own records), as a refinement with num_turns=2 leaves them."""
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "runs", runs)
    run = runs / "alpha_level1_test"
    records = json.loads((run / "eval_results.json").read_text())
    failed = {k: dict(r, correctness=False, eval_status="incorrect", runtime=-1.0) for k, r in records.items()}
    for turn, content in ((0, failed), (1, records)):
        (run / "turns" / f"turn_{turn}").mkdir(parents=True)
        (run / "turns" / f"turn_{turn}" / "eval_results.json").write_text(json.dumps(content))
    return runs


def test_the_page_shows_correct_and_fast_by_turn_of_a_refinement(tmp_path):
    runs = refined_copy(tmp_path)
    data, _, _ = report(runs_dir=str(runs))
    section = next(s for s in data["sections"] if s["precision"] == "fp32")
    turns = [t for t in section["turns"] if t["model"] == "alpha"]
    assert [t["turn"] for t in turns] == [0, 1] and turns[0]["correct"] == 0.0
    standard = row(report(runs_dir=str(runs), use_hidden_eval=False)[0], "fp32", "alpha", "1")
    assert turns[1]["correct"] == standard["metrics"]["correct"]  # the last turn is the run, judged the same way
    assert not [t for t in section["turns"] if t["model"] != "alpha"]  # runs of one turn show none
    html = render_page(data, {})
    assert "By turn of the refinement" in html and page_data(html)["sections"][0]["turns"]


def test_analysis_shows_correct_and_fast_by_turn_of_a_refinement(tmp_path):
    """A refined run keeps each turn's standard evaluation under turns/turn_{t}/: the analysis prints
    correct and Fast@1 after each turn (here turn 0 had every sample fail, turn 1 is the run itself)."""
    runs = refined_copy(tmp_path)
    done = cli("benchmark_eval_analysis.py", "run_name=alpha_level1_test", "level=1", "hardware=H200",
               "baseline=baseline_time_torch_tf32", f"runs_dir={runs}", f"timing_dir={PATHS['timing_dir']}",
               f"degenerate_file={PATHS['degenerate_file']}", "bootstrap_resamples=200")
    assert done.returncode == 0, done.stderr
    lines = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in done.stdout.splitlines()[1:])
    assert lines["turn 0: correct / Fast@1 (standard checks)"] == "0.0% / 0.0%"
    fast_1 = lines["Fast@1"].split("  [")[0]  # without its confidence interval
    assert lines["turn 1: correct / Fast@1 (standard checks)"] == f"{lines['correct (best of N)']} / {fast_1}"


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def test_ten_models_of_250_problems_render_fast_and_small(tmp_path):
    paths = write_synthetic(tmp_path, models=10, levels={1: 100, 2: 100, 3: 50}, samples=5)
    out = tmp_path / "leaderboard.html"
    started = children_cpu_seconds()
    done = cli("generate_leaderboard.py", "--use_hidden_eval", "--out", out, "--runs_dir", paths["runs_dir"],
               "--timing_dir", paths["timing_dir"], "--degenerate_file", paths["degenerate_file"])
    used = children_cpu_seconds() - started  # the script's own CPU: the other test worker's load does not count
    assert done.returncode == 0, done.stderr
    assert used < 10, f"took {used:.1f} s of CPU"
    assert out.stat().st_size < 15e6, f"{out.stat().st_size / 1e6:.1f} MB"
    data = page_data(out.read_text())
    overall = [r for r in data["sections"][0]["rows"] if r["level"] == "all"]
    assert len(overall) == 10 and all(r["metrics"]["num_problems"] == 249 for r in overall)
    assert len(data["deflation"]["rows"]) == 40


def test_static_findings_and_integrity_flags_reach_the_verdict_text():
    from kernelbench_verified.leaderboard.scoring import _review_notes

    record = {"metadata": {"static_findings": [{"code": "side_stream", "severity": "error"},
                                               {"code": "x", "severity": "info"}],
                           "integrity": ["input_mutated: an input changed during the call"]}}
    assert _review_notes(record) == " · static: side_stream (error) · flags: input_mutated"
    assert _review_notes({"metadata": {}}) == ""
    withheld = {"metadata": {"integrity": ["harness_patched: time.perf_counter"],
                             "runtime_withheld": "integrity flags: harness_patched"}}
    assert _review_notes(withheld) == " · flags: harness_patched · time withheld, not counted in speedups"
    # How far the judge's clock vouches for a time (the bar is a 10 % fake): at 0.5 ms a call it
    # catches fakes from 22 %, at 0.03 ms none; from 2 ms (7 %) no note.
    assert _review_notes({"metadata": {"judge_clock_catches_from": 0.22}}) == \
        " · time checked loosely: the judge's clock catches fakes over 22% of it"
    assert _review_notes({"metadata": {"judge_clock_catches_from": 3.35}}) == \
        " · time unchecked: the judge's clock catches no fake at this speed"
    assert _review_notes({"metadata": {"judge_clock_catches_from": 0.07}}) == ""
    # A sample the calibrated clock doubted was evaluated again, and the second record stands: said so.
    retried = {"metadata": {"clock_retry": {"first_integrity": ["timing_below_judge_clock: ..."]}}}
    assert _review_notes(retried) == " · evaluated twice: the judge's clock doubted the first attempt's time"


def test_runs_timed_on_another_gpu_than_the_baseline_are_warned_about(tmp_path):
    from types import SimpleNamespace

    from kernelbench_verified.leaderboard.report import fingerprint_warnings

    (tmp_path / "eval_fingerprint.json").write_text(json.dumps({"cuda:0": {
        "device": "cuda", "gpu_model_id": "NVIDIA A100", "torch": "2.11.0", "cuda": "13.0", "precision": "fp32",
        "timing": {"num_trials": 100}}}))
    run = SimpleNamespace(run=SimpleNamespace(name="m_level1_test", path=tmp_path))
    baseline = SimpleNamespace(name="baseline_time_torch_tf32", fingerprint={
        "device": "cuda", "gpu_model_id": "NVIDIA H200", "torch": "2.11.0", "cuda": "13.0", "precision": "fp32",
        "timing": {"num_trials": 100}})
    (warning,) = fingerprint_warnings([run], baseline)
    assert "m_level1_test" in warning and "GPU differ" in warning and "H200" in warning
    run_without = SimpleNamespace(run=SimpleNamespace(name="old_level1_test", path=tmp_path / "none"))
    assert "no environment fingerprint" in fingerprint_warnings([run_without], baseline)[0]


def test_a_baseline_timed_in_a_plain_process_is_warned_about():
    """Eager baselines of the process path (and older files, which have no timing_path) carry a ~1 %
    bias against kernels; sandbox-timed and compile baselines do not get the warning."""
    from types import SimpleNamespace

    from kernelbench_verified.leaderboard.report import timing_path_warning

    def warned(fingerprint):
        return timing_path_warning(SimpleNamespace(name="baseline_time_torch", fingerprint=fingerprint))

    assert "timed in a plain process" in warned({"timing_path": "process", "compile": False})[0]
    assert warned({}) and warned(None)  # files from before timing_path were all timed in a process
    assert warned({"timing_path": "sandbox", "compile": False}) == []
    assert warned({"timing_path": "process", "compile": True}) == []


def test_implausible_speedups_are_listed_for_review():
    import numpy as np

    from kernelbench_verified.leaderboard.scoring import _warn_implausible

    warnings = []
    speedup = np.array([[2.0, np.nan], [25.0, 11.0]])
    _warn_implausible("m_level1_test", [19, 23], speedup, 10.0, warnings)
    assert warnings == ["run m_level1_test: 2 correct sample(s) more than 10x faster than the baseline, "
                        "review them: 23_0 (25.0x), 23_1 (11.0x)"]
    _warn_implausible("m_level1_test", [19, 23], speedup, 0, warnings)
    assert len(warnings) == 1


def test_speedups_the_judges_clock_could_not_check_are_listed_for_review():
    import numpy as np

    from kernelbench_verified.leaderboard.scoring import _warn_unchecked

    def record(share):
        return {"metadata": {"judge_clock_catches_from": share}}

    records = {(19, 0): record(3.35), (19, 1): record(0.22), (23, 0): record(1.5), (23, 1): {"metadata": {}}}
    speedup = np.array([[30.0, 2.0], [np.nan, 1.5]])  # 23_0's time was withheld: no speedup to doubt
    warnings = []
    _warn_unchecked("m_level1_test", [19, 23], speedup, records, warnings)
    assert warnings == ["run m_level1_test: 1 correct sample(s) timed too short for the judge's clock to catch any "
                        "faked time, so their speedups rest on the kernel's own report: 19_0 (30.0x)"]


def test_speedups_within_what_identical_code_scored_are_no_speedup(tmp_path):
    """A correct sample's speedup that the reference as its own candidate also reached on that problem
    and hardware is listed as no measured speedup; beyond it, or without a measurement, it is not."""
    import json

    import numpy as np

    from kernelbench_verified.leaderboard.identical_code import noise_bound
    from kernelbench_verified.leaderboard.scoring import _warn_within_noise

    (tmp_path / "H200.json").write_text(json.dumps({"speedups": {"L3/9": [1.05, 0.8], "L3/10": [1.01]},
                                                     "problem_sha256": {"L3/9": "aa", "L3/10": "bb"}}))
    assert noise_bound(3, 9, "H200", "aa", tmp_path) == pytest.approx(1.25)  # 0.8x strays as far as 1.25x
    assert noise_bound(3, 9, "H200", None, tmp_path) == pytest.approx(1.25)  # a baseline file from before digests
    assert noise_bound(3, 9, "H200", "other file", tmp_path) is None  # another problem file under that id
    assert noise_bound(3, 11, "H200", None, tmp_path) is None and noise_bound(3, 9, "B200", None, tmp_path) is None
    warnings = []
    speedup = np.array([[1.2, 1.3, 0.9], [1.02, np.nan, 1.005]])
    bounds = [noise_bound(3, pid, "H200", None, tmp_path) for pid in (9, 10)]
    _warn_within_noise("m_level3_test", [9, 10], speedup, bounds, "H200", warnings)
    assert warnings == ["run m_level3_test: 2 correct sample(s) faster than the baseline by no more than the reference "
                        "evaluated as its own candidate was on H200 (results/identical_code/H200.json), so no "
                        "measured speedup: 9_0 (1.200x, identical code up to 1.250x), 10_2 (1.005x, identical code up to 1.010x)"]


def test_the_committed_identical_code_speedups_are_of_todays_problems_and_agree_with_the_summaries():
    """results/identical_code/{GPU}.json holds, per problem, identical code's speedups with the digest of
    the problem file measured; the validation summary's per-level spread is computed from the same
    figures (each problem's latest), so the page and the leaderboard cite one measurement."""
    import json

    from conftest import ROOT
    from kernelbench_verified.problems.load import get_problem
    from kernelbench_verified.validate.references import spread

    for path in sorted((ROOT / "results" / "identical_code").glob("*.json")):
        committed = json.loads(path.read_text())
        assert committed["hardware"] == path.stem and set(committed["speedups"]) == set(committed["problem_sha256"])
        for key, digest in committed["problem_sha256"].items():
            level, pid = key.removeprefix("L").split("/")
            assert get_problem(int(level), int(pid)).source_sha256 == digest, key
        summary_path = ROOT / "results" / "validation" / path.name
        levels = json.loads(summary_path.read_text())["sections"].get("references", {}).get("levels", {}) \
            if summary_path.is_file() else {}
        for level, figures in levels.items():
            latest = {k: v[-1] for k, v in committed["speedups"].items() if k.startswith(f"L{level}/")}
            if latest and figures["identical_code"].get("problems") == len(latest):
                assert spread(latest)["geomean"] == figures["identical_code"]["geomean"], (path.name, level)
    h200 = json.loads((ROOT / "results" / "identical_code" / "H200.json").read_text())
    assert {key.split("/")[0] for key in h200["speedups"]} == {"L1", "L2", "L3", "L4"} and len(h200["speedups"]) >= 268


def test_samples_faster_than_the_memory_roofline_are_listed_for_review():
    import numpy as np

    from kernelbench_verified.leaderboard.scoring import _warn_below_floor
    from kernelbench_verified.leaderboard.roofline import floor_ms

    relu = floor_ms(1, 19, "H200")  # 4096 x 393216 fp32 in and out: 12.9 GB at 4.8 TB/s
    assert relu == pytest.approx(2 * 4096 * 393216 * 4 / 4.8e12 * 1e3)
    assert floor_ms(1, 19, "unknown-gpu") is None
    warnings = []
    speedup = np.array([[3.3 / 3.0, 3.3 / 0.5]])  # 3.0 ms (plausible) and 0.5 ms (impossible)
    _warn_below_floor("m_level1_test", [19], speedup, [3.3], [relu], warnings)
    assert len(warnings) == 1 and "19_1 (0.5 ms < 2.68 ms)" in warnings[0] and "19_0" not in warnings[0]


def test_a_looser_tolerance_turns_a_near_miss_correct_but_never_a_policy_failure():
    from kernelbench_verified.leaderboard.scoring import Setting, ToleranceReport, _verdict

    cases = [{"case": "trial_0", "passed": True, "max_abs_diff": 1e-4, "mismatches": 0},
             {"case": "D2", "passed": False, "max_abs_diff": 4e-3, "mismatches": 7}]
    near_miss = {"eval_status": "incorrect", "correctness": False, "compiled": True, "runtime": -1.0,
                 "metadata": {"failed_case": "D2", "all_cases_recorded": True, "cases": cases}}
    report = ToleranceReport(1e-2)
    loose = _verdict(None, near_miss, Setting(True, 1e-2), report)
    assert loose.correct and report.loosened == 1 and "not timed" in loose.status
    assert not _verdict(None, near_miss, Setting(True, 1e-3), ToleranceReport(1e-3)).correct
    mutated = dict(near_miss, metadata=dict(near_miss["metadata"], failed_case="input_mutated"))
    assert not _verdict(None, mutated, Setting(True, 1e-2), ToleranceReport(1e-2)).correct
    old = dict(near_miss, metadata={k: v for k, v in near_miss["metadata"].items() if k != "all_cases_recorded"})
    assert not _verdict(None, old, Setting(True, 1e-2), ToleranceReport(1e-2)).correct


def test_a_run_named_anything_is_found_through_its_recorded_config(tmp_path):
    """The README's chain: generate_samples.py run_name=test writes the run the eval command reads and
    the leaderboard shows; its model and level come from the run's generate_config.yaml."""
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "runs" / "alpha_level1_test", runs / "test")
    (runs / "test" / "generate_config.yaml").write_text("run_name: test\nmodel_name: gpt-5.5\nlevel: 1\n"
                                                        "precision: fp32\n")
    data, _, _ = build_report(Options(**{**PATHS, "runs_dir": str(runs), "bootstrap_resamples": 50}))
    assert row(data, "fp32", "gpt-5.5", "1")["metrics"]["correct"] == 0.75
    (runs / "other").mkdir()  # no name pattern, no config: not a run, and said so when named
    with pytest.raises(UserError, match="holds no generate_config.yaml"):
        build_report(Options(**{**PATHS, "runs_dir": str(runs), "runs": ["other"]}))
    generated_only = runs / "generated"  # kernels and a config, nothing evaluated yet: say what to run
    generated_only.mkdir()
    shutil.copy(runs / "test" / "generate_config.yaml", generated_only)
    with pytest.raises(UserError, match=r"has evaluation results with hidden tests: evaluate them first with "
                                        r"scripts/eval_from_generations.py .* use_hidden_tests=True"):
        build_report(Options(**{**PATHS, "runs_dir": str(runs), "runs": ["generated"], "use_hidden_eval": True}))


def test_a_run_of_other_problem_files_than_the_baseline_timed_is_refused(tmp_path):
    """The demo's toy problems share ids with level 1: scoring them against the H200 baseline of the
    real problems must stop, naming the problems, instead of printing speedups."""
    runs, timing = tmp_path / "runs", tmp_path / "timing"
    shutil.copytree(FIXTURES / "runs", runs)
    shutil.copytree(FIXTURES / "timing", timing)
    baseline_file = timing / "H200" / "baseline_time_torch_tf32.json"
    stored = json.loads(baseline_file.read_text())
    for entry in stored["level1"].values():
        entry["problem_sha256"] = "a" * 16
    baseline_file.write_text(json.dumps(stored))
    results_file = runs / "alpha_level1_test" / "eval_results.json"
    records = json.loads(results_file.read_text())
    for record in records.values():
        record["metadata"]["problem_sha256"] = "a" * 16
    results_file.write_text(json.dumps(records))
    paths = {"runs_dir": str(runs), "timing_dir": str(timing)}
    report(**paths)  # the same files: scored as before

    records["2_0"]["metadata"]["problem_sha256"] = "b" * 16
    results_file.write_text(json.dumps(records))
    with pytest.raises(UserError, match=r"alpha_level1_test evaluated problems L1/2 from files other than .*"
                                        r"baseline_time_torch_tf32.json timed"):
        report(**paths)


def test_the_page_never_embeds_the_text_a_linked_kernel_file_points_at(tmp_path):
    """The evaluator refuses a symlinked kernel (refused_kernel); the page must not show the text of the
    file such a link points at either."""
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "runs", runs)
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'not for the page'\n")
    run = runs / "alpha_level1_test"
    (run / "level_1_problem_1_sample_1_kernel.py").unlink()   # p1's best sample (4.0x)
    (run / "level_1_problem_1_sample_1_kernel.py").symlink_to(secret)
    data, sources, _ = report(runs_dir=str(runs))
    assert not any("TOKEN" in text for text in sources.values())
    heatmap = next(h for h in data["sections"][0]["heatmaps"] if h["level"] == 1)
    cell = heatmap["cells"][heatmap["models"].index("alpha")][0]
    assert cell[4] is None and "kernel file not shown: level_1_problem_1_sample_1_kernel.py is a symbolic link" \
        in heatmap["statuses"][cell[3]]
    assert heatmap["cells"][heatmap["models"].index("alpha")][1][4] is not None  # p2: a regular file, shown
    html = render_page(data, sources)
    assert "not for the page" not in html


@pytest.mark.parametrize("choice, level1, level2", [
    ("ours", 4, 2),                   # the fixture's list: level 1 #5
    ("upstream", 5, 2),               # upstream's leaderboard: level 2 #23, #80, #83 (none in the fixture)
    ("none", 5, 2),
])
def test_the_excluded_list_is_chosen_and_named(choice, level1, level2):
    data, _, _ = report(excluded=choice)
    assert row(data, "fp32", "alpha", "1")["metrics"]["num_problems"] == level1
    assert row(data, "fp32", "alpha", "2")["metrics"]["num_problems"] == level2
    assert data["excluded"]["choice"] == choice
    if choice == "upstream":
        assert "upstream's: its leaderboard's level-2 #23, #80, #83" in data["excluded"]["list"] and data["degenerate"] == [
            {"level": 2, "pid": pid, "problem": name, "reason": UPSTREAM_EXCLUDED_REASON}
            for pid, name in sorted(UPSTREAM_EXCLUDED[2].items())]
    elif choice == "none":
        assert data["degenerate"] == []


def test_an_excluded_list_given_as_a_file_and_a_bad_choice(tmp_path):
    listed = tmp_path / "mine.json"
    listed.write_text(json.dumps({"level1": {"2": {"problem": "2_Matmul.py", "reason": "mine"}}}))
    data, _, _ = report(excluded=str(listed))
    assert row(data, "fp32", "alpha", "1")["metrics"]["num_problems"] == 4
    assert data["excluded"]["choice"] == "file" and str(listed) in data["excluded"]["list"]
    with pytest.raises(UserError, match="excluded='theirs' is none of ours, upstream, none and no file"):
        report(excluded="theirs")
    out = tmp_path / "board.html"
    done = cli("generate_leaderboard.py", "--out", out, "--runs_dir", PATHS["runs_dir"], "--timing_dir",
               PATHS["timing_dir"], "--excluded", "upstream", "--runs", "alpha_level2_test")
    assert done.returncode == 0, done.stderr
    assert "Excluded problems (list: " in out.read_text() and page_data(out.read_text())["excluded"]["choice"] == "upstream"
    bad = cli("generate_leaderboard.py", "--out", out, "--runs_dir", PATHS["runs_dir"], "--timing_dir",
              PATHS["timing_dir"], "--excluded", "theirs")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "excluded='theirs'" in bad.stderr


def test_analysis_takes_the_excluded_list_and_names_it():
    base = ["run_name=alpha_level1_test", "level=1", "hardware=H200", "baseline=baseline_time_torch_tf32",
            f"runs_dir={PATHS['runs_dir']}", f"timing_dir={PATHS['timing_dir']}",
            f"degenerate_file={PATHS['degenerate_file']}", "bootstrap_resamples=50"]
    ours, none = cli("benchmark_eval_analysis.py", *base), cli("benchmark_eval_analysis.py", *base, "excluded=none")
    assert ours.returncode == 0 and none.returncode == 0, ours.stderr + none.stderr
    assert "excluded list ours: the problem suite's degenerate problems" in ours.stdout
    assert "; of level 1: #5" in ours.stdout
    assert "excluded list none: every problem is scored; none of level 1" in none.stdout
    problems = lambda out: dict(re.split(r"\s{2,}", l.strip(), maxsplit=1) for l in out.splitlines()[1:])[
        "problems (degenerate excluded)"]
    assert (problems(ours.stdout), problems(none.stdout)) == ("4", "5")


def test_memory_is_compared_only_between_peaks_measured_the_same_way(tmp_path):
    """Peaks measured by different methods (measure.memory) are never divided: an older baseline of a plain
    process, or a re-timed baseline against older records, leaves the memory columns empty and says why;
    speedups are untouched. Records and a baseline of the same method compare as before."""
    import math

    from kernelbench_verified.measure.memory import CALL_ABOVE_RESIDENT

    shutil.copytree(FIXTURES / "runs", tmp_path / "runs")
    shutil.copytree(FIXTURES / "timing", tmp_path / "timing")
    paths = dict(PATHS, runs_dir=str(tmp_path / "runs"), timing_dir=str(tmp_path / "timing"))
    baseline_path = tmp_path / "timing" / "H200" / "baseline_time_torch_tf32.json"
    baseline = json.loads(baseline_path.read_text())

    def scored(change):
        change()
        data, _, warnings = build_report(Options(**{**paths, "bootstrap_resamples": 50}))
        section = next(s for s in data["sections"] if s["precision"] == "fp32")
        return row(data, "fp32", "alpha", "1"), section["memory_methods"], [w for w in warnings if "alpha_level1_test: no memory" in w]

    def plain_process_file():  # written before the method was named, by a plain process
        del baseline["fingerprint"]["timing_path"]
        baseline_path.write_text(json.dumps(baseline))

    alpha, methods, warned = scored(plain_process_file)
    assert math.isnan(alpha["metrics"]["memory_efficiency"]) and math.isnan(alpha["metrics"]["less_memory"])
    assert alpha["memory_refused"] == 5 and methods["refused"] > 0
    assert methods == {"records": ["total_in_evaluator"], "baselines": ["total_in_plain_process"],
                       "refused": methods["refused"]}
    assert alpha["metrics"]["correct_speedup"] == pytest.approx(4 ** (1 / 3))  # time is not memory
    assert any("alpha_level1_test: no memory efficiency for 5 correct sample(s)" in w and "total_in_plain_process" in w
               and "evaluate the run again" in w for w in warned)

    def retimed_baseline():
        for level in ("level1", "level2"):
            for entry in baseline[level].values():
                entry["peak_memory_method"] = CALL_ABOVE_RESIDENT
        baseline_path.write_text(json.dumps(baseline))

    alpha, methods, warned = scored(retimed_baseline)
    assert math.isnan(alpha["metrics"]["memory_efficiency"]) and alpha["memory_refused"] == 5
    assert methods["baselines"] == [CALL_ABOVE_RESIDENT] and methods["records"] == ["total_in_evaluator"]

    def evaluated_again():
        for path in (tmp_path / "runs").glob("*/eval_results*.json"):
            records = json.loads(path.read_text())
            for record in records.values():
                record["memory_stats"] = {"method": CALL_ABOVE_RESIDENT, "call_peak": record.get("peak_memory")}
            path.write_text(json.dumps(records))

    alpha, methods, warned = scored(evaluated_again)
    assert alpha["memory_refused"] == 0 and warned == [] and methods["records"] == [CALL_ABOVE_RESIDENT]
    assert alpha["metrics"]["memory_efficiency"] == pytest.approx(2 ** (1 / 3))  # as the standard test's figures


def test_analysis_says_when_memory_is_left_out():
    from kernelbench_verified.leaderboard.analysis import metric_lines
    from kernelbench_verified.leaderboard.metrics import bootstrap_intervals, per_sample, sample_table, summarize

    table = sample_table([[True]], [[True]], [[2.0]], [[float("nan")]])
    rows = dict(metric_lines(summarize(table), bootstrap_intervals(table, num_resamples=10), per_sample(table), 1))
    assert rows["memory efficiency (geomean)"].endswith("(1 correct sample(s) left out: peaks measured differently)")
    assert "left out" not in dict(metric_lines(summarize(table), bootstrap_intervals(table, num_resamples=10),
                                               per_sample(table)))["uses less memory"]
