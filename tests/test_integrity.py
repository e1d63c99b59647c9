"""Runtime integrity flags: recorded per sample, without changing a correct verdict; a time the kernel's
process could have faked is withheld."""

import json

import pytest

from conftest import load_config, make_run, tiny_overrides
from kernelbench_verified.evaluate.run import evaluate_run
from kernelbench_verified.evaluate.judge import timing_flags

BATCH = {(1, 0): "relu_correct", (1, 1): "relu_patches_timer", (1, 2): "relu_in_place",
         (1, 3): "relu_background_thread", (1, 4): "relu_tensor_subclass", (1, 5): "relu_zeroes_input",
         (1, 6): "relu_output_replay", (1, 7): "relu_thread_handoff"}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    run_dir = make_run(runs, "integrity", BATCH)
    evaluate_run(load_config("eval", tiny_overrides(runs, "integrity", num_samples=8, subset="[1,1]",
                                                    num_perf_trials=20)))
    return json.loads((run_dir / "eval_results.json").read_text())


def flags(results, key):
    return " ".join(results[key]["metadata"].get("integrity", []))


def test_honest_kernel_has_no_flags(results):
    assert results["1_0"]["eval_status"] == "correct"
    assert results["1_0"]["metadata"]["integrity"] == []
    assert results["1_0"]["runtime"] > 0 and "runtime_withheld" not in results["1_0"]["metadata"]


@pytest.mark.parametrize("key, flag", [("1_1", "harness_patched"), ("1_3", "thread_outlived_call"),
                                       ("1_4", "output_subclass")])
def test_time_is_withheld_when_the_kernel_could_have_faked_it(results, key, flag):
    record = results[key]
    assert record["eval_status"] == "correct" and record["correctness"]
    assert record["runtime"] == -1.0 and record["runtime_stats"] == {}
    assert flag in record["metadata"]["runtime_withheld"]
    assert record["metadata"]["untrusted_runtime_stats"]["num_trials"] == 20


def test_a_thread_that_ends_within_the_call_is_still_seen(results):
    # Whether the handed-off ReLU finished before the comparison is a race; the flag is not.
    assert "thread_started_in_call: handoff" in flags(results, "1_7")
    assert results["1_7"]["runtime"] == -1.0


def test_only_a_correct_sample_has_its_time_withheld():
    from kernelbench_verified.results import new_record

    judged = {"runtime_stats": {"mean": 1.0, "num_trials": 5}, "integrity": ["harness_patched: time.perf_counter"]}
    correct = new_record(1, 1, 0, "1_ReLU.py", dict(judged, eval_status="correct"), {})
    assert correct["runtime"] == -1.0 and correct["metadata"]["runtime_withheld"] == "integrity flags: harness_patched"
    incorrect = new_record(1, 1, 0, "1_ReLU.py", dict(judged, eval_status="incorrect"), {})
    assert "runtime_withheld" not in incorrect["metadata"]  # nothing to withhold, no "time withheld" note


def test_input_mutation_alone_keeps_the_time(results):
    assert results["1_5"]["runtime"] > 0  # the timed calls read fresh copies of the inputs


def test_patched_timer_is_caught_by_the_judges_clock(results):
    record = results["1_1"]
    assert "harness_patched: time.perf_counter" in flags(results, "1_1")
    assert "timing_far_below_wall_clock" in flags(results, "1_1")
    assert record["metadata"]["timing_wall_seconds"] > 20 * 0.02


def test_input_aliasing_and_mutation_are_flagged_without_changing_the_verdict(results):
    assert results["1_2"]["eval_status"] == "correct"  # the judge compared against pristine inputs
    assert "output_aliases_input" in flags(results, "1_2")
    assert results["1_5"]["eval_status"] == "correct"
    assert "input_mutated" in flags(results, "1_5")


def test_thread_and_subclass_are_flagged(results):
    assert "thread_outlived_call: hidden-worker" in flags(results, "1_3")
    assert "thread_started_in_call: hidden-worker" in flags(results, "1_3")
    assert "output_subclass: output 0 is a LazyTensor" in flags(results, "1_4")


def test_timing_cross_check_rules():
    stats = {"mean": 10.0, "num_trials": 100, "num_warmup": 0}  # 1 s reported
    assert timing_flags(stats, 1.2) == []
    assert "timing_exceeds_wall_clock" in timing_flags(stats, 0.5)[0]
    assert "timing_far_below_wall_clock" in timing_flags(stats, 5.0)[0]
    fast = {"mean": 0.01, "num_trials": 100, "num_warmup": 3}  # 10 us kernels: overhead dominates
    assert timing_flags(fast, 0.15) == []
    refused = dict(stats, persisting_l2_resets=99)  # the driver refused one reset
    assert timing_flags(refused, 1.2) == ["persisting_l2_not_reset: 99 of 100 trials"]
    assert timing_flags(dict(stats, persisting_l2_resets=100), 1.2) == []


def test_honest_timed_calls_pass_their_checks(results):
    checks = results["1_0"]["metadata"]["timed_checks"]
    assert len(checks) == 2 and all(c["passed"] for c in checks)
    assert {c["case"] for c in checks} == {"trial_0", "trial_1"}


def test_output_replay_is_caught_by_a_checked_timed_call(results):
    record = results["1_6"]
    assert record["eval_status"] == "incorrect" and record["runtime"] == -1.0
    assert record["metadata"]["failed_case"].startswith("timed_call_")
    assert all(c["passed"] for c in record["metadata"]["cases"])  # it passed every correctness case


def test_run_fingerprint_is_written_and_checked_against_a_baseline(tmp_path, capsys):
    run_dir = make_run(tmp_path, "fp", {(1, 0): "relu_correct"})
    baseline = tmp_path / "baseline_time_torch_tf32.json"
    baseline.write_text(json.dumps({"level1": {}, "fingerprint": {
        "device": "cuda", "gpu_model_id": "NVIDIA H200 sm90", "torch": "2.11.0", "cuda": "13.0",
        "precision": "fp32", "timing": {"num_trials": 100}}}))
    evaluate_run(load_config("eval", tiny_overrides(tmp_path, "fp", subset="[1,1]", baseline_file=str(baseline))))
    fingerprint = json.loads((run_dir / "eval_fingerprint.json").read_text())["cpu"]
    assert fingerprint["device"] == "cpu" and fingerprint["timing"]["num_trials"] == 5
    warnings = capsys.readouterr().err
    assert "WARNING: kernels (cpu) and baseline baseline_time_torch_tf32.json are not comparable: GPU" in warnings
