"""num_turns=K with the replay provider, so no key and no GPU: each turn is evaluated by the real
evaluator (standard checks only), the next turn's prompt is what the judge found, every turn's files are
kept, and the sample keeps the last turn's kernel that passed, else the last one's."""

import json
import shutil

import pytest

from conftest import KERNELS, TINY
from kernelbench_verified.config import load_config
from kernelbench_verified.errors import UserError
from kernelbench_verified.generate.refine import conversation, feedback
from kernelbench_verified.generate.run import Sample, generate_run
from kernelbench_verified.generate.providers import Request

# (pid, sid) -> the kernel the "model" answers at each turn (None: no answer for that turn)
ANSWERS = {(1, 0): ["relu_compile_error", "relu_identity_shortcut"],
           (1, 1): ["relu_raises", "relu_correct"],
           (2, 0): ["matmul_correct", None]}


def refine_config(runs_dir, replay_dir, **extra):
    values = {"run_name": "refined", "runs_dir": str(runs_dir), "level": 1, "num_samples": 2, "subset": "[1,2]",
              "server_type": "replay", "replay_dir": str(replay_dir), "problems_dir": str(TINY / "KernelBench"),
              "num_turns": 2, "turn_eval_overrides": '["device=cpu","num_perf_trials=3","num_warmup=1"]', **extra}
    return load_config("generate", [f"{k}={v}" for k, v in values.items()])


@pytest.fixture(scope="module")
def refined(tmp_path_factory):
    root = tmp_path_factory.mktemp("refine")
    replay = root / "answers"
    replay.mkdir()
    for (pid, sid), kernels in ANSWERS.items():
        for turn, name in enumerate(kernels):
            if name:
                shutil.copy(KERNELS / f"{name}.py", replay / f"level_1_problem_{pid}_sample_{sid}_turn_{turn}_kernel.py")
    code = generate_run(refine_config(root / "runs", replay))
    return root / "runs" / "refined", replay, code


def turn_file(run_dir, pid, sid, turn, suffix):
    return run_dir / f"level_1_problem_{pid}_sample_{sid}_turn_{turn}_{suffix}"


def test_the_second_prompt_is_what_the_judge_found(refined):
    run_dir, _, _ = refined
    assert "did not compile" in turn_file(run_dir, 1, 0, 1, "prompt.txt").read_text()
    assert "failed (runtime_error)" in turn_file(run_dir, 1, 1, 1, "prompt.txt").read_text()
    assert "Your kernel is correct. It took" in turn_file(run_dir, 2, 0, 0, "feedback.txt").read_text()
    prompt, history = conversation(Sample(_problem(run_dir, 1), 1, run_dir, 1))
    assert [role for role, _ in history] == ["user", "assistant"]
    assert history[0][1] == turn_file(run_dir, 1, 1, 0, "prompt.txt").read_text()
    assert "ModelNew" in history[1][1] and prompt == turn_file(run_dir, 1, 1, 0, "feedback.txt").read_text()


def test_every_turn_is_kept_and_judged_without_hidden_tests(refined):
    run_dir, _, _ = refined
    for (pid, sid), kernels in ANSWERS.items():
        for turn, name in enumerate(kernels):
            suffixes = ("prompt.txt", "raw_response.txt", "kernel.py", "feedback.txt") if name else ()
            assert all(turn_file(run_dir, pid, sid, turn, s).is_file() for s in suffixes), (pid, sid, turn)
    records = json.loads((run_dir / "turns" / "turn_0" / "eval_results.json").read_text())
    assert {k: records[k]["eval_status"] for k in ("1_0", "1_1", "2_0")} == \
        {"1_0": "compile_error", "1_1": "runtime_error", "2_0": "correct"}
    assert not records["2_0"]["metadata"]["use_hidden_tests"]
    assert not (run_dir / "turns" / "turn_0" / "eval_results_hidden.json").exists()


def test_the_sample_keeps_the_last_turn_that_passed_else_the_last(refined):
    run_dir, _, code = refined
    assert code == 1  # the replay had no answer for one turn: that request failed, and the run says so
    final = {key: (run_dir / f"level_1_problem_{key[0]}_sample_{key[1]}_kernel.py").read_text() for key in ANSWERS}
    assert final[(1, 0)] == (KERNELS / "relu_identity_shortcut.py").read_text()  # passes the standard checks
    assert final[(1, 1)] == (KERNELS / "relu_correct.py").read_text()
    assert final[(2, 0)] == (KERNELS / "matmul_correct.py").read_text()  # its turn 1 never came


def test_a_rerun_resumes_without_asking_again(refined, capsys):
    """The three samples with a final kernel are done; only the one never answered (2, 1) is asked again."""
    run_dir, replay, _ = refined
    kept = {p.name: p.stat().st_mtime_ns for p in run_dir.glob("*_turn_*") if "_problem_2_sample_1_" not in p.name}
    generate_run(refine_config(run_dir.parent, replay))
    assert "1 sample(s) to generate, 3 already have a kernel" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in run_dir.glob("*_turn_*") if p.name in kept} == kept


def test_turn_evaluations_cannot_use_the_hidden_tests(tmp_path):
    with pytest.raises(UserError, match="use_hidden_tests"):
        generate_run(refine_config(tmp_path, tmp_path, turn_eval_overrides='["use_hidden_tests=True"]'))


def test_feedback_is_bounded_and_names_the_failing_case():
    record = {"eval_status": "incorrect", "metadata": {"failed_case": "trial_2", "cases": [
        {"case": "trial_2", "passed": False, "reason": "3 of 16 values outside atol", "max_abs_diff": 0.5,
         "output_shapes": [[4, 4]]}]}}
    text = feedback(record)
    assert "trial_2" in text and "[[4, 4]]" in text and "0.5" in text
    long = feedback({"eval_status": "compile_error", "metadata": {"compiler_output": "error: x\n" * 5000}})
    assert len(long) < 2200 and long.count("error: x") == 30


def test_requests_carry_the_conversation():
    request = Request("fix it", 1, 1, 0, turn=1, history=(("user", "write it"), ("assistant", "```python\n```")))
    assert [m["role"] for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[-1] == {"role": "user", "content": "fix it"}


def _problem(run_dir, pid):
    from kernelbench_verified.problems.load import list_problems

    return next(p for p in list_problems(1, TINY / "KernelBench") if p.pid == pid)
