"""Zero-trust attacks on the judge/sandbox protocol (tests/fixtures/zero_trust/), judged from the written
record only.

Every fixture is a ReLU kernel (problem 1 of tests/fixtures/problems) that reaches the sandbox's Channel
or the harness's timers from its own code and tries to earn a record it does not deserve: forged
replies, faked timing, replayed or precomputed answers, garbage in unaudited timed calls, replies sent
before they were asked for, oversized messages, a switch on a guessed evaluation mode. All of them are
samples of ONE run (hidden tests on, CPU unless KBV_ZERO_TRUST_DEVICE says otherwise, 20 timed
trials), with an honest kernel last, which must still be judged correct and timed after them. A second run
with the first run's input salt must reproduce every verdict the salt decides.

What each attack must end as is in OUTCOMES: either a failing status (and, where it is deterministic,
the case or the error that ended it), or "correct" with the time withheld (runtime -1 and
metadata.runtime_withheld naming the judge's flag).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import KERNELS, ROOT, load_config, tiny_overrides
from kernelbench_verified.evaluate.run import evaluate_run

FIXTURES = ROOT / "tests" / "fixtures" / "zero_trust"
PROBLEMS = ROOT / "tests" / "fixtures" / "problems"
HONEST = KERNELS / "relu_correct.py"
SCRIPT = ROOT / "scripts" / "eval_from_generations.py"
DEVICE = os.environ.get("KBV_ZERO_TRUST_DEVICE", "cpu")  # "cuda" on the GPU machine: the calibrated clock too


@dataclass(frozen=True)
class Fails:
    """The attack ends with one of `statuses`; `failed_case` (a prefix) or `error` (a substring) when
    the way it fails is deterministic."""

    statuses: tuple
    failed_case: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class Withheld:
    """The attack computes the right answers, so it is correct, but its time is withheld for one of
    `flags`."""

    flags: tuple


# The judge's clock checks that may withhold a faked time: on CUDA the calibrated one may fire first.
JUDGE_CLOCK = ("timing_far_below_wall_clock",) + (("timing_below_judge_clock",) if DEVICE != "cpu" else ())
OUTCOMES = {
    # A forged "error" with status "correct" arrives where "compiled" is expected: out of place.
    "zt_forge_done.py": Fails(("protocol_violation",), error="an error message with status 'correct'"),
    # Correct answers, time reported at 1/10: the judge's own clock sees 10x more waiting than reported.
    "zt_forge_timing.py": Withheld(JUDGE_CLOCK),
    # Undoing the patches before "bye" changes nothing: the judge timed every trial itself.
    "zt_restore_patch.py": Withheld(JUDGE_CLOCK),
    # Fresh inputs for every timed call: nothing to replay, so the audited timed outputs are zeros.
    "zt_replay_by_value.py": Fails(("incorrect",), failed_case="timed_call_"),
    # Every input comes from the run's secret salt: no look-up matches, trial_0 is already zeros.
    "zt_precomputed_hidden.py": Fails(("incorrect",), failed_case="trial_0"),
    # 2 of 20 timed outputs are right and 3 are audited: at least one audited output is zeros.
    "zt_garbage_unaudited.py": Fails(("incorrect",), failed_case="timed_call_"),
    # Trial replies arrive where "ready" (which carries no bytes) is expected: the first one's payload
    # is already refused.
    # (On CUDA the outputs travel as handles, not bytes: the first one is refused for being out of place.)
    "zt_pre_sent_trials.py": Fails(("protocol_violation",), error="where at most 0 are allowed" if DEVICE == "cpu"
                                   else "expected 'ready', got 'trial'"),
    # A line longer than the channel's 1 MiB limit.
    "zt_oversized_message.py": Fails(("protocol_violation",), error="longer than"),
    # The sandbox cannot tell a hidden evaluation (nothing in its job, environment or frames says so): it
    # takes the identity shortcut, returning its input, which fails the first case as aliasing (the
    # reference returns fresh storage; without that rule the negative distribution D4 would catch it).
    "zt_mode_switch.py": Fails(("incorrect",), failed_case="output_aliases_input"),
    # Extra: replies forged before the judge asked ("ready" and 110 "armed" and trial pairs, from a thread)
    # are read as replies to the later requests, but they hold outputs for inputs not yet written.
    # (On CUDA the forged "ready" lacks the output slots of the judge's GPU clock: refused as unreadable.)
    "zt_pre_sent_trials_ready.py": Fails(("incorrect",), failed_case="timed_call_") if DEVICE == "cpu"
    else Fails(("protocol_violation",), error="unreadable tensors"),
    # Extra: an "output" header claiming 2**40 payload bytes, far above what the outputs can hold.
    "zt_payload_count_lie.py": Fails(("protocol_violation",), error="a payload of 1099511627776 bytes"),
    # Extra: time reported at 0.55 of real, inside the judge's allowance of 2x the reported time.
    "zt_forge_timing_half.py": Withheld(JUDGE_CLOCK),
    # Extra: about 0.6 ms a call reported at 0.9 of real, the smallest fake the judge's clock must catch.
    "zt_forge_timing_tenth.py": Withheld(("timing_below_judge_clock",)),
    # Extra: 20 % at 0.6 ms and 5 % at 2 ms (0.1 ms a call, beyond the GPU clock's 0.075 ms slack there).
    "zt_forge_timing_fifth.py": Withheld(("timing_below_judge_clock",)),
    "zt_forge_timing_twentieth.py": Withheld(("timing_below_judge_clock",)),
    # Extra: 2 of every 5 calls of about 2 ms reported at 0.6: the median call is honest, the mean is not.
    "zt_forge_timing_partial.py": Withheld(("timing_mean_below_judge_clock",)),
    # Extra: a fast call reported as taking no time: under half of a call of no work, timed in the same
    # process before the kernel loaded.
    "zt_forge_timing_floor.py": Withheld(("timing_below_empty_call",)),
    # Extra: 16 of 20 timed calls marked done before they run (CUDA) or replayed (CPU): the judge's copies
    # of them hold the previous call's outputs, and 8 audits of 20 calls find one.
    "zt_early_done.py": Fails(("incorrect",), failed_case="timed_call_"),
    # Extra: never marks a call done (CUDA), or replies with no time (CPU).
    "zt_never_done.py": Fails(("protocol_violation",), error="never marked it done" if DEVICE != "cpu"
                              else "a trial time of 'None'"),
    # Extra: exits inside its 10th timed call; the honest kernel after it must still be judged.
    "zt_exit_in_trial.py": Fails(("crashed",)),
    # Extra: ReLU in every correctness case, the identity once the "timing" request has arrived. The timed
    # calls' inputs are scaled like the run's cases in turn, so some audited calls see the negative
    # distribution, where the identity is not ReLU.
    "zt_timed_phase_shortcut.py": Fails(("incorrect",), failed_case="timed_call_"),
}
# Found to get through (see each reason): the expectation above is the property the harness should
# have; the test is an expected failure until it does.
# Timing-dependent, so not strict: under heavy CPU contention the judge's allowance may still flag them.
CPU_ONLY_CHECK = ("on the CPU only the coarse wall-clock check applies (the judge waited more than twice the "
                  "reported time plus the reference trials' overhead); the calibrated check that catches this "
                  "runs on CUDA only (KBV_ZERO_TRUST_DEVICE=cuda runs this file there)")
GPU_CLOCK_SPREAD = ("the GPU clock's overhead switches between two levels ~0.055 ms apart for runs of calls on the "
                    "H200, so a sample's honest gap reaches -0.108 ms; its slack is 2 % + at most 0.035 ms (fitted "
                    "to the machine, 0.02 ms on a quiet one) and a doubted sample is judged twice, so a fake of 10 % "
                    "of 0.6 ms or 5 % of 2 ms is caught only when neither attempt's noise hides it (all calls "
                    "faked, caught in every one of 568 honest H200 records at 2 % + 0.035 ms: 9 % at 0.5-2 ms, "
                    "25 % at 0.44 ms; both were caught on an H100)")
KNOWN_GAPS = ({name: CPU_ONLY_CHECK for name in ("zt_forge_timing_half.py", "zt_forge_timing_tenth.py",
                                                  "zt_forge_timing_fifth.py", "zt_forge_timing_twentieth.py",
                                                  "zt_forge_timing_partial.py")}
              if DEVICE == "cpu" else
              {name: GPU_CLOCK_SPREAD for name in ("zt_forge_timing_tenth.py", "zt_forge_timing_twentieth.py")})
ATTACKS = sorted(OUTCOMES)
NUM_SAMPLES = len(ATTACKS) + 1  # the honest kernel is the last sample
HONEST_SID = len(ATTACKS)
# The attacks whose verdict a case or an audit decides, from inputs the run's salt draws; the others end
# on the protocol or the clock, which no salt reaches, so the salt's second run leaves them out.
DRAWN_FROM_SALT = [name for name in ATTACKS if isinstance(OUTCOMES[name], Fails) and "incorrect" in OUTCOMES[name].statuses]


def place_samples(runs: Path, name: str, attacks: list[str] = ATTACKS) -> Path:
    """The attacks at their sample ids (ATTACKS' order), the honest kernel last."""
    run_dir = runs / name
    run_dir.mkdir(parents=True, exist_ok=True)
    for fixture in attacks:
        shutil.copy(FIXTURES / fixture, run_dir / f"level_1_problem_1_sample_{ATTACKS.index(fixture)}_kernel.py")
    shutil.copy(HONEST, run_dir / f"level_1_problem_1_sample_{HONEST_SID}_kernel.py")
    return run_dir


def overrides(runs: Path, name: str, **extra) -> list[str]:
    return tiny_overrides(runs, name, problems_dir=str(PROBLEMS), hidden_tests_dir=str(PROBLEMS / "hidden_tests"),
                          use_hidden_tests=True, device=DEVICE, num_perf_trials=20, num_warmup=1,
                          static_check="off", subset="[1,1]", num_samples=NUM_SAMPLES, timeout=120, **extra)


def evaluate(runs: Path, name: str, attacks: list[str] = ATTACKS, **extra) -> dict:
    run_dir = place_samples(runs, name, attacks)
    evaluate_run(load_config("eval", overrides(runs, name, **extra)))
    return json.loads((run_dir / "eval_results_hidden.json").read_text())


@pytest.fixture(scope="module", autouse=True)
def one_cpu_thread():
    """One intra-op thread in the judges and sandboxes (the environment they inherit): on a small CPU
    host a spare sandbox importing torch beside the timed kernel otherwise stalls torch's thread pool, and
    an honest kernel's reported time jitters by 100x (enough for the judge's wall-clock flag)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OMP_NUM_THREADS", "1")
        yield


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return tmp_path_factory.mktemp("zero_trust_runs")


@pytest.fixture(scope="module")
def first(runs):
    return evaluate(runs, "first")


@pytest.fixture(scope="module")
def second(runs, first):
    salt = first[f"1_{HONEST_SID}"]["metadata"]["input_salt"]
    # Only verdicts and correctness cases are compared: no D5 or shape-variant sandboxes (the first run has them).
    return evaluate(runs, "second", DRAWN_FROM_SALT, input_salt=f"'{salt}'", perturb_parameters=False,
                    shape_variants=False)


def record_of(results: dict, fixture: str) -> dict:
    return results[f"1_{ATTACKS.index(fixture)}"]


def describe(record: dict) -> str:
    meta = record["metadata"]
    return (f"status={record['eval_status']} runtime={record['runtime']} failed_case={meta.get('failed_case')} "
            f"withheld={meta.get('runtime_withheld')} integrity={meta.get('integrity')} "
            f"error={str(meta.get('error'))[:200]}")


def test_every_fixture_has_an_expected_outcome():
    on_disk = {p.name for p in FIXTURES.glob("zt_*.py")} - {"zt_stall_judge_write.py"}
    assert on_disk == set(OUTCOMES)
    for path in FIXTURES.glob("zt_*.py"):
        assert path.read_text().startswith("# "), f"{path.name} must start with a one-line comment naming the attack"


def _gap(fixture: str):
    reason = KNOWN_GAPS.get(fixture)
    return pytest.param(fixture, marks=pytest.mark.xfail(strict=False, reason=reason)) if reason else fixture


@pytest.mark.parametrize("fixture", [_gap(f) for f in ATTACKS])
def test_attack_earns_nothing(first, fixture):
    record = record_of(first, fixture)
    meta = record["metadata"]
    expected = OUTCOMES[fixture]
    if isinstance(expected, Withheld):
        # Correct answers stay correct, and their time must not count. A failure instead would mean the
        # attack broke on the harness's protocol (as these fixtures did on CUDA when timed_call took a
        # new keyword), so the clock was never tested.
        assert record["eval_status"] == "correct", describe(record)
        assert record["runtime"] == -1, describe(record)
        assert record["runtime_stats"] == {}, describe(record)
        assert any(flag in meta.get("runtime_withheld", "") for flag in expected.flags), describe(record)
        assert any(str(f).startswith(expected.flags) for f in meta.get("integrity", [])), describe(record)
        return
    assert record["eval_status"] in expected.statuses, describe(record)
    assert not record["correctness"] and record["runtime"] == -1, describe(record)
    if expected.failed_case:
        assert str(meta.get("failed_case", "")).startswith(expected.failed_case), describe(record)
    if expected.error:
        assert expected.error in str(meta.get("error", "")), describe(record)


def test_no_attack_is_correct_with_a_time(first):
    """The one property behind every OUTCOMES entry, over the whole run."""
    timed = [f for f in ATTACKS if f not in KNOWN_GAPS and record_of(first, f)["eval_status"] == "correct"
             and record_of(first, f)["runtime"] != -1]
    assert timed == [], {f: describe(record_of(first, f)) for f in timed}


def test_honest_kernel_after_the_attacks_is_correct_and_timed(first):
    """Load-sensitive on a small CPU host: each CPU trial moves about 2 MiB through the pipes (a few ms),
    close to the judge's allowance of 0.1 s + 2 ms per trial, so heavy load elsewhere on the machine can
    make the judge withhold even this time (the failure message shows the integrity flag if it does)."""
    record = first[f"1_{HONEST_SID}"]
    meta = record["metadata"]
    assert record["eval_status"] == "correct" and record["correctness"], describe(record)
    assert record["runtime"] > 0 and record["runtime"] == record["runtime_stats"]["mean"]
    assert record["runtime_stats"]["num_trials"] == 20
    assert "runtime_withheld" not in meta and not meta.get("integrity"), describe(record)
    assert [c["case"] for c in meta["cases"]] == [f"trial_{i}" for i in range(5)] + ["D1", "D2", "D3", "D4"]
    assert len(meta["timed_checks"]) >= 3 and all(c["passed"] for c in meta["timed_checks"])


def test_every_record_names_the_run_salt(first):
    salts = {record["metadata"].get("input_salt") for record in first.values()}
    assert len(salts) == 1 and isinstance(next(iter(salts)), str) and next(iter(salts))


def test_the_same_salt_reproduces_every_verdict_it_decides(first, second):
    keys = {f"1_{ATTACKS.index(name)}" for name in DRAWN_FROM_SALT} | {f"1_{HONEST_SID}"}
    assert len(DRAWN_FROM_SALT) >= 5 and keys <= set(second)
    salt = first[f"1_{HONEST_SID}"]["metadata"]["input_salt"]
    for key in keys:
        a, b = first[key], second[key]
        assert b["metadata"]["input_salt"] == salt
        assert a["eval_status"] == b["eval_status"], (key, describe(a), describe(b))
        # The correctness cases come from the salt alone (the audited timed calls are drawn afresh).
        assert [(c["case"], c["passed"]) for c in a["metadata"]["cases"]] == \
               [(c["case"], c["passed"]) for c in b["metadata"]["cases"]], key


def test_mode_switch_fails_in_the_standard_run_too(tmp_path, first):
    """zt_mode_switch takes its identity shortcut whenever it sees no hint of hidden tests, which is
    always. Returning its input fails the standard run as well (output_aliases_input), so there is no
    standard time to pair with anything; that the leaderboard takes a sample's time from the record that
    judged it is tested in test_leaderboard.py (test_hidden_correctness_and_missing_hidden_samples), and
    that it takes a standard time only for an untimed hidden record of the same kernel source, saying so,
    in test_upstream_both_ways.py."""
    run_dir = tmp_path / "standard"
    run_dir.mkdir()
    shutil.copy(FIXTURES / "zt_mode_switch.py", run_dir / "level_1_problem_1_sample_0_kernel.py")
    cfg = load_config("eval", tiny_overrides(tmp_path, "standard", problems_dir=str(PROBLEMS), device="cpu",
                                             num_perf_trials=20, num_warmup=1, static_check="off",
                                             subset="[1,1]", num_samples=1))
    evaluate_run(cfg)
    standard = json.loads((run_dir / "eval_results.json").read_text())["1_0"]
    assert standard["eval_status"] == "incorrect", describe(standard)
    assert standard["metadata"]["failed_case"] == "output_aliases_input" and standard["runtime"] == -1
    hidden = record_of(first, "zt_mode_switch.py")
    assert hidden["eval_status"] == "incorrect", describe(hidden)


def descendants(root: int) -> list[int]:
    """Pids of every process below `root` (by parent pid), found before any of them is killed."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def test_a_sandbox_that_stops_reading_cannot_stall_the_judge(tmp_path):
    """zt_stall_judge_write answers one call and then never reads again: the judge's next request is
    larger than a pipe holds. The sample must still end (timeout) within its time limit and the run must
    go on to the honest kernel. Run through the eval script with a hard wall limit, so a stalled judge
    fails this test instead of hanging the suite."""
    run_dir = tmp_path / "stall"
    run_dir.mkdir()
    shutil.copy(FIXTURES / "zt_stall_judge_write.py", run_dir / "level_1_problem_1_sample_0_kernel.py")
    shutil.copy(HONEST, run_dir / "level_1_problem_1_sample_1_kernel.py")
    args = tiny_overrides(tmp_path, "stall", problems_dir=str(PROBLEMS), device="cpu", num_perf_trials=5,
                          num_warmup=1, static_check="off", subset="[1,1]", num_samples=2, timeout=10)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, str(SCRIPT), *args], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        for pid in [process.pid, *descendants(process.pid)]:  # the eval script, its judge, their sandboxes
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        process.communicate()
        pytest.fail(f"the evaluation was still running {time.monotonic() - started:.0f} s after it started "
                    "(per-sample timeout 10 s): the judge is stuck writing to a sandbox that stopped reading")
    results = json.loads((run_dir / "eval_results.json").read_text())
    assert results["1_0"]["eval_status"] == "timeout", (describe(results["1_0"]), output[-2000:])
    assert results["1_1"]["eval_status"] == "correct", describe(results["1_1"])
