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
    from kernelbench_verified.leaderboard.discovery import Baseline, BaselineEntry
    from kernelbench_verified.leaderboard.scoring import Setting, score_run

    warnings = []
    baseline = Baseline("b", tmp_path, {1: {1: BaselineEntry("1_ReLU.py", 1.0, -1)}}, None, "x")
    assert score_run(results, baseline, set(), Setting(False), warnings).table.correct.all()
    assert any("has no standard evaluation in eval_results.json" in w for w in warnings)


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


# Upstream-written runs, built from the fields its evaluator writes. Level 1 with four problems and five
# samples each (its leaderboard skips a run with fewer than 90 % of five samples per problem); per sample:
# (standard runtime or None when the standard evaluation failed, the hidden outcome).
UPSTREAM_BASELINE = {"level1": {"1_A.py": {"mean": 1.0}, "2_B.py": {"mean": 2.0}, "3_C.py": {"mean": 1.0},
                                "4_D.py": {"mean": 0.5}}}
UPSTREAM_SAMPLES = {
    1: [(0.5, "ok"), (0.8, "config_2"), (2.0, "ok"), (2.0, "ok"), (2.0, "ok")],
    2: [(4.0, "ok"), (1.6, "trials"), (None, "trials_far"), (None, "compile"), (None, "crash")],
    3: [(None, "compile"), (0.9, "config_1"), (0.9, "config_1"), (0.9, "config_1"), (0.9, "config_1")],
    4: [(0.25, "config_3"), (1.0, "ok"), (2.0, "ok"), (2.0, "ok"), (2.0, "ok")],
}


def upstream_entry(correct, runtime=-1.0, compiled=True, **metadata):
    timed = runtime > 0
    return {"sample_id": 0, "compiled": compiled, "correctness": correct,
            "metadata": {"hardware": "NVIDIA H200", "device": "cuda:0", **metadata},
            "runtime": runtime, "runtime_stats": {"mean": runtime, "std": 0.01} if timed else {},
            "peak_memory": 1000.0 if timed else -1.0, "memory_stats": {"peak_bytes": 1000} if timed else {}}


def upstream_records(pid, sid, standard_ms, outcome, hidden_timed):
    trials_ok = {"correctness_trials": "(5 / 5)"}
    if outcome == "compile":
        failed = upstream_entry(False, compiled=False, compilation_error="nvcc: error")
        return failed, failed
    if outcome == "crash":
        failed = upstream_entry(False, runtime_error="CUDA error: an illegal memory access")
        return failed, failed
    if outcome == "trials_far":
        failed = upstream_entry(False, max_difference=["0.500000"], avg_difference=["0.1"],
                                correctness_issue="Output mismatch", correctness_trials="(3 / 5)")
        return failed, failed
    standard = upstream_entry(True, standard_ms, **trials_ok)
    hidden_ms = standard_ms * 1.1 if hidden_timed else -1.0   # its own timing run, on the visible inputs
    if outcome == "ok":
        hidden = upstream_entry(True, hidden_ms, **trials_ok,
                                hidden_correctness_trials="(4/4 hidden configs passed)")
    elif outcome == "trials":   # the hidden run's standard trials failed, barely: only the tolerance rule lifts it
        hidden = upstream_entry(False, max_difference=["0.000500", "0.000100"], correctness_trials="(3 / 5)",
                                correctness_issue="Output mismatch")
    else:
        hidden = upstream_entry(False, **trials_ok, hidden_failed_configs=[outcome],
                                hidden_max_difference=[f"{outcome}: 0.731000"])
    return standard, hidden


def write_upstream_run(runs_dir, name="gpt-x_level1_test", hidden=True, hidden_timed=False):
    """An upstream-written run: kernels first (older), then eval_results.json and, with `hidden`,
    eval_results_hidden.json, as its generate then eval scripts leave them."""
    import os

    run_dir = runs_dir / name
    run_dir.mkdir(parents=True)
    standard, hidden_records = {}, {}
    for pid, samples in UPSTREAM_SAMPLES.items():
        for sid, (ms, outcome) in enumerate(samples):
            kernel = run_dir / f"level_1_problem_{pid}_sample_{sid}_kernel.py"
            kernel.write_text(f"# kernel {pid}_{sid}\nclass ModelNew: pass\n")
            os.utime(kernel, (1_700_000_000, 1_700_000_000))
            std, hid = upstream_records(pid, sid, ms, outcome, hidden_timed)
            standard[f"{pid}_{sid}"] = dict(std, sample_id=sid)
            hidden_records[f"{pid}_{sid}"] = dict(hid, sample_id=sid)
    (run_dir / "eval_results.json").write_text(json.dumps(standard))
    if hidden:
        (run_dir / "eval_results_hidden.json").write_text(json.dumps(hidden_records))
    (run_dir / "generation_config.yaml").write_text(f"run_name: {name}\nlevel: 1\nmodel_name: gpt-x\n"
                                                    "dataset_src: local\nserver_type: openai\n")
    return run_dir


def our_report(tmp_path, **options):
    from kernelbench_verified.leaderboard.report import Options, build_report

    timing = tmp_path / "timing" / "H200"
    timing.mkdir(parents=True, exist_ok=True)
    (timing / "baseline_time_torch_tf32.json").write_text(json.dumps(UPSTREAM_BASELINE))
    # upstream's records do not name their GPU, so the page is told which baseline folder to read
    data, sources, warnings = build_report(Options(runs_dir=str(tmp_path / "runs"), timing_dir=str(tmp_path / "timing"),
                                                   hardware="H200", excluded="none", bootstrap_resamples=20, **options))
    section = data["sections"][0]
    metrics = next(r for r in section["rows"] if r["level"] == "1")["metrics"]
    return metrics, section, warnings


def same_figures(ours_metrics, upstream_best):
    assert ours_metrics["correct"] == upstream_best["correctness_rate"]
    assert ours_metrics["correct_speedup"] == pytest.approx(upstream_best["gmsr"])
    assert ours_metrics["kernelbench_speedup"] == pytest.approx(upstream_best["avg_speedup"])
    for p in ("0", "0.5", "0.8", "1", "1.5", "2"):
        assert ours_metrics["fast_p"][p] == upstream_best[f"fast_p_{float(p)}"], p


def test_an_upstream_standard_run_reads_as_upstream_reads_it(tmp_path):
    from upstream_readers import verified_leaderboard

    run_dir = write_upstream_run(tmp_path / "runs", hidden=False)
    metrics, _, _ = our_report(tmp_path)
    same_figures(metrics, verified_analysis(run_dir, UPSTREAM_BASELINE, 1, 4)["best"])
    same_figures(metrics, verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4))
    assert metrics["correct"] == 1.0 and metrics["correct_speedup"] == pytest.approx((2 * 1.25 * 1 / 0.9 * 2) ** 0.25)


def test_an_untimed_upstream_hidden_run_takes_its_times_from_the_standard_file_and_says_so(tmp_path):
    """Upstream's documented hidden flow (measure_performance=False): before, this read as 75 % correct
    with no speedup at all and no warning; now the same kernel's standard time is used, as upstream does."""
    from upstream_readers import verified_leaderboard

    run_dir = write_upstream_run(tmp_path / "runs")
    metrics, section, warnings = our_report(tmp_path, use_hidden_eval=True)
    same_figures(metrics, verified_analysis(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True)["best"])
    same_figures(metrics, verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True))
    assert metrics["correct"] == 0.75 and metrics["correct_speedup"] == pytest.approx((2 * 0.5 * 0.5) ** (1 / 3))
    assert section["hidden_times"] == {"borrowed": 9, "refused": 0, "untimed": 0}
    assert any("9 correct sample(s) the hidden evaluation did not time take their time from eval_results.json"
               in w for w in warnings)
    heatmap = section["heatmaps"][0]
    status = heatmap["statuses"][heatmap["cells"][0][0][3]]
    assert status == "correct · time from eval_results.json (the hidden evaluation did not time it; same kernel source)"


def test_a_timed_upstream_hidden_run_keeps_the_hidden_records_times(tmp_path):
    write_upstream_run(tmp_path / "runs", hidden_timed=True)
    metrics, section, _ = our_report(tmp_path, use_hidden_eval=True)
    assert section["hidden_times"] == {"borrowed": 0, "refused": 0, "untimed": 0}
    assert metrics["correct_speedup"] == pytest.approx((2 * 0.5 * 0.5) ** (1 / 3) / 1.1)  # its own, 10 % slower


def test_upstreams_tolerance_rule_applies_to_records_without_per_case_figures(tmp_path):
    """--fp32_tolerance 1e-3 on upstream's files: its rule lifts a hidden failure of the standard trials
    under the tolerance (P2 sample 1), never a hidden-config failure or one far above it, and the page says
    which rule applied."""
    from upstream_readers import verified_leaderboard

    run_dir = write_upstream_run(tmp_path / "runs")
    metrics, section, _ = our_report(tmp_path, use_hidden_eval=True, fp32_tolerance=1e-3)
    same_figures(metrics, verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True, tolerance=1e-3))
    assert metrics["correct_speedup"] == pytest.approx((2 * 1.25 * 0.5) ** (1 / 3))
    tolerance = section["tolerance"]
    assert (tolerance["upstream_lifted"], tolerance["upstream_checked"]) == (1, 11)
    assert tolerance["without_data"] == 9   # correct records keep their verdict, as upstream keeps them
    stricter, section, _ = our_report(tmp_path, use_hidden_eval=True, fp32_tolerance=1e-4)
    same_figures(stricter, verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True, tolerance=1e-4))
    assert section["tolerance"]["upstream_lifted"] == 0


def test_a_time_is_never_taken_across_different_kernel_sources(tmp_path):
    import os

    run_dir = write_upstream_run(tmp_path / "runs")
    rewritten = run_dir / "level_1_problem_1_sample_0_kernel.py"   # regenerated after the standard evaluation
    rewritten.write_text("# another kernel\n")
    os.utime(rewritten, (2_000_000_000, 2_000_000_000))
    hidden = json.loads((run_dir / "eval_results_hidden.json").read_text())
    standard = json.loads((run_dir / "eval_results.json").read_text())
    hidden["4_1"]["metadata"]["kernel_sha256"] = "a" * 64      # ours-style digests that disagree
    standard["4_1"]["metadata"]["kernel_sha256"] = "b" * 64
    hidden["4_2"]["metadata"]["kernel_sha256"] = standard["4_2"]["metadata"]["kernel_sha256"] = "c" * 64
    standard["4_3"] = dict(standard["4_3"], correctness=False, runtime=-1.0)   # no standard time to take
    (run_dir / "eval_results_hidden.json").write_text(json.dumps(hidden))
    (run_dir / "eval_results.json").write_text(json.dumps(standard))
    metrics, section, warnings = our_report(tmp_path, use_hidden_eval=True)
    assert section["hidden_times"] == {"borrowed": 6, "refused": 2, "untimed": 1}
    refused = next(w for w in warnings if "have no speedup" in w)
    assert "1_0 (kernel source unknown)" in refused and "4_1 (another kernel source)" in refused
    assert any("1 correct sample(s) the hidden evaluation did not time have no time in eval_results.json either"
               in w and w.endswith(": 4_3") for w in warnings)
    # P1's best is now sample 2 (0.5x), P4's sample 2 (0.25x; same digests): still solved, slower
    assert metrics["correct"] == 0.75 and metrics["correct_speedup"] == pytest.approx((0.5 * 0.5 * 0.25) ** (1 / 3))


def test_the_analysis_script_reads_an_upstream_hidden_run_and_names_the_rule_and_the_times(tmp_path):
    from upstream_readers import verified_leaderboard

    run_dir = write_upstream_run(tmp_path / "runs")
    our_report(tmp_path)  # writes the baseline file
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "benchmark_eval_analysis.py"),
                           "run_name=gpt-x_level1_test", "level=1", "hardware=H200", "baseline=baseline_time_torch_tf32",
                           f"runs_dir={tmp_path / 'runs'}", f"timing_dir={tmp_path / 'timing'}", "excluded=none",
                           "use_hidden_eval=True", "tolerance=1e-3", "bootstrap_resamples=20"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header, *rows = done.stdout.splitlines()
    assert "upstream's rule on 11 incorrect hidden record(s) without per-case figures (1 turned correct)" in header
    assert "10 correct sample(s) the hidden evaluation did not time take their time" in done.stderr  # 2_1 lifted
    lines = dict(r.strip().split("  ", 1) for r in rows)
    upstream = verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True, tolerance=1e-3)
    assert lines["correct speedup (geomean)"].strip().startswith(f"{upstream['gmsr']:.3f}x")
    assert lines["KernelBench avg speedup"].strip() == f"{upstream['avg_speedup']:.3f}x"


# Upstream's command lines, option names and environment variables.

from kernelbench_verified.config import load_config  # noqa: E402
from kernelbench_verified.errors import UserError  # noqa: E402

# Every upstream option name and its meaning: test_upstream_options.py.


def script(name, *args, env=None):
    import os

    return subprocess.run([sys.executable, str(ROOT / "scripts" / name), *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def shown(name, *args) -> dict:
    from omegaconf import OmegaConf

    done = script(name, *args)
    assert done.returncode == 0, done.stderr
    return OmegaConf.to_container(OmegaConf.create(done.stdout))


def test_pydras_show_method_list_and_in_mean_what_they_mean_upstream():
    assert shown("generate_samples.py", "run_name=r", "level=1", "temperature=0.7", ".greedy", "--show")["temperature"] == 0.0
    assert shown("generate_samples.py", "run_name=r", "level=1", ".greedy", "temperature=0.7", "--show")["temperature"] == 0.7
    cfg = shown("eval_from_generations.py", "--show", "run_name=r", "level=1", "--list", "gpu_arch", "Hopper", "Ada",
                "list--", "--in", "jail_limits", "processes=64", "tmp_mb=128", "in--", "subset=(None,None)")
    assert cfg["gpu_arch"] == ["Hopper", "Ada"] and cfg["subset"] == [None, None]
    assert (cfg["jail_limits"]["processes"], cfg["jail_limits"]["tmp_mb"]) == (64, 128)
    assert shown("generate_samples.py", "run_name=r", "level=1", "model_name=None", "--show")["model_name"] is None
    for args, message in (((".sample",), "unknown method '.sample': this script's config takes .greedy"),
                          (("--in", "jail_limits", "processes=1"), "--in jail_limits is not closed"),
                          (("--list", "gpu_arch", "Hopper"), "--list is not closed"),
                          (("store_type=database",), "store_type='database' is not one of local")):
        done = script("generate_samples.py", "run_name=r", "level=1", "server_type=replay", "replay_dir=x", *args)
        assert done.returncode == 2 and message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    eval_method = script("eval_from_generations.py", "run_name=r", "level=1", ".greedy")
    assert eval_method.returncode == 2 and "unknown method '.greedy': this script's config takes none" in eval_method.stderr
    help_text = script("generate_samples.py", "--help").stdout
    assert "--show" in help_text and ".greedy" in help_text and "temperature=0.0" in help_text


def test_upstreams_environment_variable_names_are_read(monkeypatch):
    from kernelbench_verified.generate.providers.compatible_provider import CompatibleProvider
    from kernelbench_verified.generate.providers import Request
    from kernelbench_verified.generate.run import provider_settings

    def settings(server_type, **env):
        for name in ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "VLLM_API_KEY",
                     "VLLM_SERVER_ADDRESS", "VLLM_SERVER_PORT", "VLLM_ENABLE_THINKING", "VLLM_STOP_TOKEN_IDS"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return provider_settings(load_config("generate", ["run_name=r", "level=1", f"server_type={server_type}",
                                                          "model_name=m"]))

    assert settings("fireworks", FIREWORKS_API_KEY="upstream").api_key == "upstream"
    assert settings("fireworks", FIREWORKS_AI_API_KEY="ours").api_key == "ours"
    with pytest.raises(UserError, match=r"set FIREWORKS_API_KEY \(or FIREWORKS_AI_API_KEY\)"):
        settings("fireworks")
    assert settings("google", GOOGLE_API_KEY="g").api_key == "g"
    vllm = settings("vllm", VLLM_API_KEY="v", VLLM_SERVER_ADDRESS="gpu-node", VLLM_SERVER_PORT="8123",
                    VLLM_ENABLE_THINKING="0", VLLM_STOP_TOKEN_IDS="151645, 151643")
    assert (vllm.api_key, vllm.base_url) == ("v", "http://gpu-node:8123/v1")
    arguments = CompatibleProvider.__new__(CompatibleProvider)
    arguments.settings = vllm
    body = arguments.chat_arguments(Request("p", 1, 1, 0))["extra_body"]
    assert body == {"chat_template_kwargs": {"enable_thinking": False}, "stop_token_ids": [151645, 151643]}
    plain = settings("vllm")
    assert (plain.base_url, plain.extra) == ("http://localhost:8000/v1", {})
    with pytest.raises(UserError, match="VLLM_STOP_TOKEN_IDS='x' must be token ids"):
        settings("vllm", VLLM_STOP_TOKEN_IDS="x")


def test_upstreams_leaderboard_reads_our_hidden_run_folder_as_we_do(tmp_path):
    """Our hidden run as the evaluator leaves it (eval_results_hidden.json, and eval_results.json filled
    from it), five samples per problem as upstream's leaderboard requires: its best-of-N figures are ours."""
    from upstream_readers import verified_leaderboard

    run_dir = tmp_path / "runs" / "gpt-x_level1_test"
    run_dir.mkdir(parents=True)
    outcome = {1: [0.5, None, 2.0, 1.0, None], 2: [None] * 5, 3: [4.0, 0.9, None, None, 1.2], 4: [None, 0.25, 2.0, 2.0, 2.0]}
    hidden = {f"{pid}_{sid}": dict(ours(pid, sid, ms is not None, ms or -1.0), problem=name)
              for pid, name in zip(range(1, 5), UPSTREAM_BASELINE["level1"]) for sid, ms in enumerate(outcome[pid])}
    (run_dir / "eval_results_hidden.json").write_text(json.dumps(hidden))
    assert verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True) is None  # skipped unfilled
    fill_standard_file(run_dir / "eval_results.json", hidden, "eval_results_hidden.json")
    metrics, section, _ = our_report(tmp_path, use_hidden_eval=True)
    upstream = verified_leaderboard(run_dir, UPSTREAM_BASELINE, 1, 4, use_hidden_eval=True)
    same_figures(metrics, upstream)
    assert upstream["correctness_rate"] == 0.75 and section["hidden_times"]["borrowed"] == 0
