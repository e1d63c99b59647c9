"""What the judge decides from its own observations: inputs a call changed fail the sample, timed
outputs it audits after the timed phase catch replays, its clock withholds a time the kernel's process
misreported. What the kernel's process says about itself (sandbox_reports) is kept for review only."""

import json

import pytest
import torch

from conftest import load_config, make_run, tiny_overrides
from kernelbench_verified.evaluate.run import evaluate_run
from kernelbench_verified.evaluate.cases import NUM_AUDITS
from kernelbench_verified.evaluate.clock import RETRIED_CLOCK_FLAGS, SLACKS, catches_from, timing_flags

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


def reports(results, key):
    return " ".join(results[key]["metadata"].get("sandbox_reports", []))


def test_honest_kernel_is_timed_with_no_flags(results):
    record = results["1_0"]
    assert record["eval_status"] == "correct" and record["metadata"]["integrity"] == []
    assert record["runtime"] > 0 and "runtime_withheld" not in record["metadata"]
    assert record["metadata"]["judge_wall_stats"]["num_trials"] == 20


def test_each_trial_phase_records_where_its_host_seconds_went(results):
    loops = results["1_0"]["metadata"]["trial_loop_seconds"]
    assert set(loops) == {"calibration", "timed"}
    for steps in loops.values():
        assert set(steps) == {"inputs", "arm", "trial", "rest"}
        assert all(seconds >= 0 for seconds in steps.values())
        assert steps["trial"] > 0 and steps["inputs"] > 0


@pytest.mark.parametrize("key", ["1_0", "1_1"])
def test_the_clock_check_can_be_rerun_from_the_recorded_raw_figures(results, key):
    """The judge keeps every timed call's reported and waited milliseconds: its verdict on the clock is
    reproducible from the record, for an honest kernel and for one with a patched timer."""
    metadata = results[key]["metadata"]
    raw = metadata["judge_trials_ms"]
    assert len(raw["reported"]) == len(raw["waited"]) == len(raw["replied"]) == 20 and raw["calibration_overhead"]
    assert len(raw["calibration_replied"]) == len(raw["calibration_reported"]) == len(raw["calibration_overhead"])
    # The reply arrives inside the window, after the call it reports on.
    assert all(t <= r * 1.01 + 0.05 and r <= w for t, r, w in zip(raw["reported"], raw["replied"], raw["waited"]))
    phases = metadata["trial_phases_at"]  # to line the figures up with logs of the host
    assert phases["calibration"][0] < phases["calibration"][1] <= phases["timed"][0] < phases["timed"][1]
    stats = results[key]["runtime_stats"] or metadata["untrusted_runtime_stats"]
    assert len(raw["empty_calls"]) == 20 and all(t >= 0 for t in raw["empty_calls"])
    assert metadata["reference_peak_bytes"] == 0  # what the reference's calibration took of a GPU: none here
    flags = timing_flags(stats, raw["reported"], raw["waited"], raw["calibration_overhead"], slack=None,
                         empty_calls=raw["empty_calls"])
    assert [f.split(":")[0] for f in flags] == [f.split(":")[0] for f in metadata["integrity"]]


def test_patched_timer_is_caught_by_the_judges_clock(results):
    record = results["1_1"]
    assert record["eval_status"] == "correct" and record["runtime"] == -1.0
    assert "timing_far_below_wall_clock" in record["metadata"]["runtime_withheld"]
    assert record["metadata"]["untrusted_runtime_stats"]["num_trials"] == 20
    assert "harness_patched: time.perf_counter" in reports(results, "1_1")  # said, not needed


@pytest.mark.parametrize("key, case", [("1_2", "output_aliases_input"), ("1_5", "input_mutated")])
def test_a_call_that_writes_into_its_inputs_fails_with_a_named_case(results, key, case):
    """Returning its input as the output (written in place), or zeroing the input after computing: the
    reference leaves its inputs untouched and returns fresh storage, so the judge fails the sample and
    reports no time or memory for it."""
    record = results[key]
    assert record["eval_status"] == "incorrect" and record["metadata"]["failed_case"] == case
    assert record["runtime"] == -1.0 and record["peak_memory"] == -1


def test_what_the_kernel_process_reports_is_kept_but_decides_nothing(results):
    assert "thread_outlived_call: hidden-worker" in reports(results, "1_3")
    assert "output_subclass: output 0 is a LazyTensor" in reports(results, "1_4")
    assert "thread_started_in_call: handoff" in reports(results, "1_7")
    for key in ("1_3", "1_4"):
        assert results[key]["eval_status"] == "correct"
        assert not any(flag.startswith(("thread", "output_subclass")) for flag in results[key]["metadata"]["integrity"])


def test_timing_cross_check_rules():
    stats = {"num_trials": 100}
    times, null = [10.0] * 100, [0.1] * 30
    assert timing_flags(stats, times, [10.2] * 100, null, slack=SLACKS["host"]) == []
    assert "timing_exceeds_wall_clock" in timing_flags(stats, times, [5.0] * 100, null, slack=None)[0]
    assert "timing_far_below_wall_clock" in timing_flags(stats, times, [50.0] * 100, null, slack=None)[0]
    # 10% faked on a 5 ms kernel: the judge waited 0.5 ms per call more than the reference trials explain,
    # beyond the slack of 2 % + 0.3 ms.
    faked = timing_flags(stats, [4.5] * 100, [5.1] * 100, null, slack=SLACKS["host"])
    assert faked and faked[0].startswith("timing_below_judge_clock")
    assert timing_flags(stats, [5.0] * 100, [5.1] * 100, null, slack=SLACKS["host"]) == []
    # An honest tiny kernel whose calls took 0.18 ms more than the calibration's (seen on the H200) keeps its time.
    assert timing_flags(stats, [0.08] * 100, [0.36] * 100, null, slack=SLACKS["host"]) == []
    # The GPU's clock (timeline.py), 2 % + 0.035 ms beyond the calibration's 0.1 ms for the median call:
    # 10 % faked on a 0.5 ms kernel is caught; an honest kernel's ordinary noise (the 95th percentile of
    # 568 honest H200 gaps, +0.034 ms, here at 0.457 ms and 65 ms a call) is not.
    gpu = SLACKS["gpu_timeline"]
    assert timing_flags(stats, [0.45] * 100, [0.6] * 100, null, gpu)[0].startswith("timing_below_judge_clock")
    assert timing_flags(stats, [0.042] * 100, [0.176] * 100, null, gpu) == []
    assert timing_flags(stats, [0.457] * 100, [0.591] * 100, null, gpu) == []
    assert timing_flags(stats, [65.0] * 100, [65.134] * 100, null, gpu) == []
    # A short call calibrated all at the overhead's low level and timed all at its high one (on the H200
    # the phase medians of one problem spread 0.058-0.063 ms) is doubted, and so
    # evaluated again (test_a_sample_the_calibrated_clock_doubts_is_judged_again...).
    flipped = timing_flags(stats, [0.03] * 100, [0.03 + 0.1 + 0.064] * 100, null, gpu)
    assert flipped and all(f.startswith(RETRIED_CLOCK_FLAGS) for f in flipped)
    refused = dict(stats, persisting_l2_resets=99)  # the driver refused one reset
    assert timing_flags(refused, times, [10.2] * 100, null, SLACKS["host"]) == ["persisting_l2_not_reset: 99 of 100 trials"]


def test_a_fake_of_fewer_than_half_the_calls_moves_the_mean_and_is_caught():
    # The runtime is the mean of the calls. 49 of 100 calls of a 2 ms kernel reported at 0.6 of their time
    # leave the median call honest, but the mean 20 % low: the mean gap exceeds 2 % + 0.035 ms.
    stats, null, gpu = {"num_trials": 100}, [0.1] * 30, SLACKS["gpu_timeline"]
    waited = [2.1] * 100
    partial = [1.2 if i % 2 and i < 98 else 2.0 for i in range(100)]
    assert sum(t < 2.0 for t in partial) == 49
    flags = timing_flags(stats, partial, waited, null, gpu)
    assert [f.split(":")[0] for f in flags] == ["timing_mean_below_judge_clock"]
    # The judge's own hiccups (2 % of the calls it waited 20 ms longer for) are left out of the mean check.
    hiccups = [2.1] * 98 + [22.1] * 2
    assert timing_flags(stats, [2.0] * 100, hiccups, null, gpu) == []
    # ...so a kernel that reports exactly those calls as free gains at most that share of the mean.
    assert timing_flags(stats, [2.0] * 98 + [0.0] * 2, hiccups, null, gpu) == []


def test_a_call_reported_under_a_quarter_of_the_fastest_call_of_no_work_is_withheld():
    # monkey_patch_timer on the H200: a ~0.03 ms ReLU reported at 0.001 ms, a fake the clock's noise can
    # hide (its gap there reaches +0.042 ms; here +0.02), but far under what an
    # empty call through timed_call takes there (a synchronisation between two events: 0.016 ms at the
    # fastest).
    stats, null, gpu = {"num_trials": 100}, [0.33] * 30, SLACKS["gpu_timeline"]
    empty = [0.016] + [0.0163] * 18 + [0.031]
    flags = timing_flags(stats, [0.001] * 100, [0.001 + 0.33 + 0.02] * 100, null, gpu, empty)
    assert [f.split(":")[0] for f in flags] == ["timing_below_empty_call"]
    # An honest one-launch call takes about an empty call's time (relu_correct: 0.024 ms against 0.0225),
    # and keeps it even where the empty calls ran three times slower than the timed calls.
    assert timing_flags(stats, [0.024] * 100, [0.024 + 0.33] * 100, null, gpu, [0.0225] * 20) == []
    assert timing_flags(stats, [0.024] * 100, [0.024 + 0.33] * 100, null, gpu, [0.07] * 20) == []
    # Without empty calls (records from before the floor) nothing changes.
    assert timing_flags(stats, [0.001] * 100, [0.001 + 0.33] * 100, null, gpu, []) == []



def test_a_sample_the_calibrated_clock_doubts_is_judged_again_and_the_second_record_stands():
    """An honest sample on the H200 once had its time withheld (+0.147 ms: the timed path's overhead rose
    between its calibration and its timed calls): such a sample is evaluated once more in a fresh sandbox,
    whose record stands; the first attempt's flags and raw figures stay in it. So is one whose waits a
    host turned busy stalled (in CI, a Ray node starting beside a 3-call baseline of L1/1's reference).
    Any other flag, or a failure, is final at once."""
    from types import SimpleNamespace

    from kernelbench_verified.evaluate.clock import clock_doubts
    from kernelbench_verified.evaluate.judge import Judge

    doubted = {"eval_status": "correct", "integrity": ["timing_below_judge_clock: ..."], "judge_clock_gap_ms": 0.147,
               "judge_trials_ms": {"reported": [1.4]}, "cases": []}
    assert clock_doubts(doubted)
    assert clock_doubts(dict(doubted, integrity=["timing_below_judge_clock: ...", "timing_far_below_wall_clock: ..."]))
    assert not clock_doubts(dict(doubted, integrity=["timing_far_below_wall_clock: ...", "timing_below_empty_call: ..."]))
    assert not clock_doubts(dict(doubted, integrity=["timing_exceeds_wall_clock: ..."]))
    assert not clock_doubts(dict(doubted, eval_status="incorrect")) and not clock_doubts(dict(doubted, integrity=[]))

    def judged(*records):
        judge = Judge.__new__(Judge)  # only evaluate()'s own logic: the sandboxes are scripted
        judge.device, judge.timed_cpu = torch.device("cpu"), None
        queue = list(records)
        judge.in_sandbox = lambda job, mode: dict(queue.pop(0))
        record = judge.evaluate(SimpleNamespace(warm_triton=False, perturb_parameters=False, shape_variants=False))
        return record, len(queue)

    clean = {"eval_status": "correct", "integrity": [], "judge_clock_gap_ms": 0.001, "cases": []}
    record, left = judged(doubted, clean)
    assert left == 0 and record["integrity"] == [] and record["judge_clock_gap_ms"] == 0.001
    assert record["clock_retry"]["first_integrity"] == doubted["integrity"]
    assert record["clock_retry"]["judge_clock_gap_ms"] == 0.147 and record["clock_retry"]["judge_trials_ms"]
    record, left = judged(doubted, doubted)  # a kernel that fakes beyond the noise is caught twice
    assert record["integrity"] == doubted["integrity"] and "clock_retry" in record
    record, left = judged(clean, clean)  # nothing doubted: one evaluation
    assert left == 1 and "clock_retry" not in record


def test_the_gpu_clocks_slack_is_fitted_to_the_calibrations_of_the_machine(monkeypatch):
    """The ms term of the GPU clock's slack follows how far the two halves of the reference's calibration
    phases lie apart on this machine (trusted: no kernel has loaded yet), between a floor and SLACKS'."""
    from collections import deque
    from types import SimpleNamespace

    from kernelbench_verified.evaluate import timed
    from kernelbench_verified.evaluate.clock import (FITTED_FROM, NOISE_FLOOR_MS, ClockFit, calibration_drift,
                                                     fitted_slack)

    assert calibration_drift([0.30] * 10 + [0.36] * 10) == pytest.approx(0.06)
    assert calibration_drift([0.30] * 9) is None  # too few calls to split
    default = SLACKS["gpu_timeline"]
    assert fitted_slack(default, [0.001] * (FITTED_FROM - 1)) == default  # too few calibrations yet
    enough = FITTED_FROM + 10
    quiet, noisy = fitted_slack(default, [0.004] * enough), fitted_slack(default, [0.03] * enough)
    assert quiet.median == (default.median[0], NOISE_FLOOR_MS) and quiet.mean == (default.mean[0], NOISE_FLOOR_MS)
    assert noisy == default  # never looser than SLACKS, whatever a noisy machine (or a neighbour) does
    assert fitted_slack(default, [0.001] * 90 + [0.0125] * 10).median[1] == pytest.approx(0.025)  # 2x the 95th percentile
    # A kernel of 0.5 ms a call that fakes 8 % (gap +0.04 ms) hides inside the default slack, not the
    # quiet machine's.
    stats, calibration = {"num_trials": 100}, [0.1] * 30
    faked = timing_flags(stats, [0.46] * 100, [0.5 + 0.1] * 100, calibration, quiet)
    assert faked and faked[0].startswith("timing_below_judge_clock")
    assert timing_flags(stats, [0.46] * 100, [0.5 + 0.1] * 100, calibration, default) == []

    # The judge collects each calibration's drift as it runs and checks with the fit (GPU clock only).
    fit = ClockFit()
    fit.calibration_drifts = deque([0.004] * (FITTED_FROM - 1), maxlen=500)
    assert fit.slack("gpu_timeline") == default and fit.slack("host") == SLACKS["host"]
    conversation = SimpleNamespace(clock_fit=fit, device=torch.device("cpu"), record={},
                                   talk=SimpleNamespace(post=lambda message: None))
    trials = timed.Trials(reported=[0.5] * 20, waited=[0.6] * 10 + [0.605] * 10)

    def phase_on(clock):  # the trial phase, scripted: its clock and the trials it saw
        return lambda conv, like: SimpleNamespace(clock=clock, run=lambda *args, **kwargs: trials)

    monkeypatch.setattr(timed, "expect_empty_calls", lambda conv: [0.016] * 20)
    monkeypatch.setattr(timed, "TrialPhase", phase_on(object()))  # a GPU clock
    timed.calibrate(conversation, None)
    assert list(fit.calibration_drifts)[-1] == pytest.approx(0.005)
    assert fit.slack("gpu_timeline") == quiet
    monkeypatch.setattr(timed, "TrialPhase", phase_on(None))  # the host clock's calibrations are not its kind
    timed.calibrate(conversation, None)
    assert len(fit.calibration_drifts) == FITTED_FROM


def test_each_sample_records_how_large_a_fake_its_clock_would_catch():
    # Whatever calls a kernel fakes, the mean check bounds it: 2 % + 0.035 ms of the mean time on the
    # GPU's clock, so 3.75 % of a 2 ms call, 9 % of a 0.5 ms one, and more than the whole of a 0.03 ms one.
    gpu = SLACKS["gpu_timeline"]
    assert catches_from(gpu, [2.0] * 10) == 0.0375 and catches_from(gpu, [0.4, 0.6]) == 0.09
    assert catches_from(gpu, [0.03] * 10) > 1 and catches_from(gpu, [0.0] * 10) > 1


def test_coarse_clock_check_holds_on_a_busy_host():
    # Builds beside the judge on the H200: a 0.03 ms kernel's calls waited 1.3 ms at the median but 8 ms
    # on average, and so did the calibration's (the reference's) calls before it.
    stats, busy = {"num_trials": 100}, [1.0] * 90 + [70.0] * 10
    assert timing_flags(stats, [0.03] * 100, [w + 0.3 for w in busy], busy, slack=None) == []
    # A 20 ms call reported as 2 ms stays caught however busy the host.
    forged = timing_flags(stats, [2.0] * 100, [w + 20.0 for w in busy], busy, slack=None)
    assert forged and forged[0].startswith("timing_far_below_wall_clock")
    # One stalled wake-up among a short run's calls is the host's: 3 calls of 0.01 ms, one waited 150 ms.
    assert timing_flags({"num_trials": 3}, [0.01] * 3, [0.6, 0.5, 150.0], [0.5] * 10, slack=None) == []
    # A kernel that stalls some calls to have them left out gains their share of the calls, no more: the
    # rest, reported at a tenth of their 20 ms, stay caught.
    stalled = timing_flags(stats, [2.0] * 100, [20.0] * 97 + [500.0] * 3, [0.5] * 10, slack=None)
    assert stalled and stalled[0].startswith("timing_far_below_wall_clock")


def test_timed_calls_cover_every_scale_of_the_run_from_a_secret_start():
    from types import SimpleNamespace
    from kernelbench_verified.evaluate.cases import timing_case

    cases = [{"scale": 1.0}, {"scale": 1.0}, {"scale": 3.0}, {"scale": 0.01}, {"scale": -1.0},
             {"scale": 5.0, "hidden_index": 0}]  # an upstream-format hidden case has no scale of its own
    starts = set()
    for salt in ("a", "b", "c", "d", "e", "f"):
        job = SimpleNamespace(cases=cases, input_salt=salt)
        timed = [timing_case(job, trial) for trial in range(20)]
        assert {c.scale for c in timed[:4]} == {-1.0, 0.01, 1.0, 3.0}  # any 4 consecutive calls cover all
        assert len({c.seed for c in timed}) == 20
        starts.add(timed[0].scale)
    assert len(starts) > 1  # which call gets which scale depends on the salt


def test_honest_timed_calls_pass_their_audits(results):
    checks = results["1_0"]["metadata"]["timed_checks"]
    assert len(checks) == NUM_AUDITS and all(c["passed"] for c in checks)
    assert all(c["case"].startswith("timed_call_") for c in checks)


def test_output_replay_is_caught_by_an_audited_timed_call(results):
    record = results["1_6"]
    assert record["eval_status"] == "incorrect" and record["runtime"] == -1.0
    assert record["metadata"]["failed_case"].startswith("timed_call_")
    assert all(c["passed"] for c in record["metadata"]["cases"])  # it passed every correctness case


def test_each_audit_frees_its_copy_and_reference_outputs_before_the_next_runs():
    """An 80 GB H100 had no room for L1/34's second audit (7 GiB outputs): at each
    reference run of an audit, only the copies still to audit may be alive, none of an earlier audit's."""
    import weakref
    from types import SimpleNamespace

    from kernelbench_verified.evaluate.cases import audit

    def output(trial):
        return [torch.full((4,), float(trial))]

    kept = {trial: output(trial) for trial in range(12)}
    copies = {trial: weakref.ref(value[0]) for trial, value in kept.items()}
    references, alive_at_runs = [], []

    def run(case, inputs):
        alive_at_runs.append(({t for t, ref in copies.items() if ref() is not None},
                              sum(ref() is not None for ref in references)))
        outputs = output(int(case.name.removeprefix("timed_")))
        references.append(weakref.ref(outputs[0]))
        return outputs

    conversation = SimpleNamespace(job=SimpleNamespace(cases=[{"scale": 1.0}, {"scale": 2.0}], input_salt="ab"),
                                   references=SimpleNamespace(run=run, inputs=lambda case: []),
                                   tolerance={"atol": 1e-3, "rtol": 1e-3}, record={})
    audit(conversation, kept)
    audited = [check["timed_trial"] for check in conversation.record["timed_checks"]]
    assert len(audited) == NUM_AUDITS and all(c["passed"] for c in conversation.record["timed_checks"])
    assert kept == {}
    for index, (alive, references_alive) in enumerate(alive_at_runs):
        assert alive == set(audited[index:]) and references_alive == 0


def test_the_timed_phase_knows_the_outputs_shapes_without_holding_an_output():
    """L1/38 on an 80 GB H100: the timed phase held a whole reference output (8 GiB) only
    for its shapes, and the kernel's process had no room left. With no budget to keep outputs, the
    reference runs once for a case's outline, which holds one element per output."""
    from types import SimpleNamespace

    from kernelbench_verified.evaluate.cases import References
    from kernelbench_verified.problems.inputs import Case

    refs, runs, case = References(budget_bytes=0), [], Case("timed_0", 7)
    refs.reset("key", None, None, SimpleNamespace(precision="fp32"), torch.device("cpu"))
    refs.inputs = lambda case: []
    refs.run = lambda case, inputs: runs.append(case.name) or [torch.ones(256, 64, dtype=torch.float64).t(), 3]
    outline = refs.outline(case)
    assert refs.outline(case) is outline and runs == ["timed_0"]
    assert outline[0].shape == (64, 256) and outline[0].dtype == torch.float64 and outline[1] == 3
    assert outline[0].nbytes == 64 * 256 * 8 and outline[0].untyped_storage().nbytes() == 8
    assert torch.empty_like(outline[0]).is_contiguous()
    refs.get(case)
    refs.outline(case)
    assert runs == ["timed_0", "timed_0"]  # nothing kept: get runs it again, the outline does not


def test_the_judge_names_the_large_tensors_it_holds_for_an_out_of_memory_record():
    """When the judge's own process runs out of GPU memory the record lists what it held (L1/34 on an
    80 GB H100 held seven tensors of 7 GiB, one of them unaccounted for): one entry per storage, named
    by its widest view, none under the threshold."""
    from kernelbench_verified.evaluate.exchange import large_tensors

    held = torch.zeros(1031, 1021, dtype=torch.float64)
    view, small = held[:3], torch.zeros(1031, dtype=torch.float64)
    found = large_tensors(torch.device("cpu"), min_bytes=1 << 23)
    assert [t for t in found if t["shape"][:1] in ([1031], [3])] == [
        {"bytes": held.nbytes, "shape": [1031, 1021], "dtype": "float64"}]
    assert all(t["bytes"] >= 1 << 23 for t in found) and view.numel() and small.numel()


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


def test_running_out_of_memory_in_the_harness_buffers_is_a_harness_error():
    """A correct kernel must never be failed as out_of_memory by the harness's own copies: an
    out-of-memory answer to the judge's alloc request (its buffers for the inputs) is the harness's;
    the same answer to a call stays the kernel's."""
    from types import SimpleNamespace

    from kernelbench_verified.evaluate.exchange import Exchange, SampleFailed

    conversation = Exchange(SimpleNamespace(channel=None), 0.0, {"compiled": True}, "cuda:0")
    message = {"event": "error", "status": "out_of_memory", "message": "CUDA out of memory. Tried to allocate 16 GiB"}
    outcomes = {}
    for op in ("alloc", "call"):
        conversation.last_op = op
        with pytest.raises(SampleFailed) as failed:
            conversation.fail_from(message)
        outcomes[op] = (failed.value.status, failed.value.details["error"])
    assert outcomes["alloc"][0] == "harness_error" and "buffers for the inputs did not fit" in outcomes["alloc"][1]
    assert outcomes["call"] == ("out_of_memory", message["message"])


@pytest.mark.parametrize("judge_gib, status", [(57, "harness_error"), (40, "out_of_memory")])
def test_a_kernel_out_of_memory_where_the_reference_would_not_fit_beside_the_judge_is_a_harness_error(
        judge_gib, status):
    """On an 80 GB H100 the honest L1/38 ran out of memory in its timed phase while the judge held 57 GiB:
    the reference, which took 25 GiB in its calibration in the same sandbox, would not have
    fit either, so the harness is to blame. With the judge holding 40 GiB it would have, and the same
    report stays the kernel's. Only the judge's own figures decide, not the error's text."""
    from types import SimpleNamespace

    from kernelbench_verified.evaluate.exchange import Exchange, SampleFailed
    from kernelbench_verified.evaluate.judge import Conversation

    gib = 1 << 30
    judge = SimpleNamespace(device="cuda:0", memory_held=lambda: (judge_gib * gib, 79 * gib))
    exchange = Exchange(SimpleNamespace(channel=None), 0.0, {"compiled": True}, "cuda:0")
    conversation = Conversation.__new__(Conversation)  # only its judgement of the reference's memory
    conversation.judge, exchange.crowded_out = judge, conversation.reference_crowded_out
    conversation.reference_peak, exchange.last_op = 25 * gib, "trial"
    text = "CUDA out of memory. GPU 0 has a total capacity of 999 GiB of which 998 GiB is free."
    with pytest.raises(SampleFailed) as failed:
        exchange.fail_from({"event": "error", "status": "out_of_memory", "message": text})
    assert failed.value.status == status
    if status == "harness_error":
        assert failed.value.details["error"].startswith("the reference needs 25.0 GiB in its process and the "
                                                        "judge holds 57.0 GiB, more than the GPU's 79.0 GiB")
    conversation.reference_peak = None  # no calibration (warm-up jobs): the kernel's report stands
    with pytest.raises(SampleFailed) as failed:
        exchange.fail_from({"event": "error", "status": "out_of_memory", "message": text})
    assert failed.value.status == "out_of_memory"
