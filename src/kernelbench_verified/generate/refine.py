"""num_turns=K: each sample is answered, evaluated and shown a bounded feedback message, K times.

Turn t of a sample keeps its prompt, answer, kernel and feedback beside the run's other files as
level_{L}_problem_{pid}_sample_{sid}_turn_{t}_{prompt.txt, raw_response.txt, kernel.py, feedback.txt}.
Each turn's kernels are evaluated together, with the standard checks only (never the hidden tests), in
runs/{run}/turns/turn_{t}/ by the evaluator itself (the same jail). The model then sees, in the same
conversation, what the judge found: the compiler's error lines, the failing case with its largest
difference, or its time. The sample's kernel (the plain ..._kernel.py that eval_from_generations.py
reads) is the last turn's that compiled and passed, else the last turn's. A sample whose request failed
stops there. Everything is read back from those files, so an interrupted refinement resumes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ..config import load_config
from ..errors import UserError
from ..evaluate.run import evaluate_run

TURN_DIR = "turns"
FEEDBACK_CHARS = 2000  # what the model is shown of one evaluation
COMPILER_LINES = 30


def check_turn_keys(cfg: DictConfig) -> None:
    overrides = [str(o) for o in cfg.turn_eval_overrides or []]
    if any(o.split("=", 1)[0].strip().lstrip("+") in ("use_hidden_tests", "run_name", "runs_dir") for o in overrides):
        raise UserError("turn_eval_overrides may not set use_hidden_tests, run_name or runs_dir: turns are "
                        "judged by the standard checks only, in runs/{run}/turns/")


def turn_eval_config(cfg: DictConfig, run_dir: Path, turn: int) -> DictConfig:
    """The eval config that judges turn `turn`: the generation's problems, standard checks only."""
    subset = OmegaConf.to_container(cfg.subset) if cfg.subset is not None else [None, None]
    overrides = [f"run_name=turn_{turn}", f"runs_dir={run_dir / TURN_DIR}", f"level={cfg.level}",
                 f"num_samples={cfg.num_samples}", f"subset={json.dumps(subset)}", f"dataset_src={cfg.dataset_src}",
                 f"dataset_name={cfg.dataset_name}", f"precision={cfg.precision}", "use_hidden_tests=False",
                 *([f"problems_dir={cfg.problems_dir}"] if cfg.problems_dir else []),
                 *[str(o) for o in cfg.turn_eval_overrides or []]]
    return load_config("eval", overrides)


def refine_run(cfg: DictConfig, run_dir: Path, samples: list, first_prompts: dict, generate_turn) -> dict:
    """Run the turns of `samples` (generate.run.Sample, turn None). `generate_turn(turn_samples, ask)`
    asks the provider for each (ask(sample) -> (prompt, history)), saving the turn's files, and returns
    the first fatal failure. Returns {"fatal": ..., "final_turns": {(pid, sid): turn or None}}."""
    def ask(sample) -> tuple[str, tuple]:
        return (first_prompts[sample.problem.pid], ()) if sample.turn == 0 else conversation(sample)

    active = list(samples)
    for turn in range(cfg.num_turns):
        at_turn = [s.at_turn(turn) for s in active]
        fatal = generate_turn([s for s in at_turn if not s.path("raw_response.txt").is_file()], ask)
        if fatal:
            return {"fatal": fatal, "final_turns": {}}
        answered = [s for s in at_turn if s.path("raw_response.txt").is_file()]
        records = evaluate_turn(cfg, run_dir, turn, answered)
        for sample in answered:
            sample.path("feedback.txt").write_text(feedback(records.get(f"{sample.problem.pid}_{sample.sid}")))
        active = [s for s, t in zip(active, at_turn) if t in answered]
    return {"fatal": None, "final_turns": {(s.problem.pid, s.sid): keep_final(s, cfg.num_turns, run_dir)
                                           for s in samples}}


def conversation(sample) -> tuple[str, tuple]:
    """Turn t's prompt and the turns before it, read from the turn files: the first prompt, then for each
    earlier turn the model's answer and the judge's feedback."""
    history, prompt = [], sample.at_turn(0).path("prompt.txt").read_text()
    for earlier in range(sample.turn):
        turn = sample.at_turn(earlier)
        history += [("user", prompt), ("assistant", turn.path("raw_response.txt").read_text())]
        prompt = turn.path("feedback.txt").read_text()
    return prompt, tuple(history)


def evaluate_turn(cfg: DictConfig, run_dir: Path, turn: int, answered: list) -> dict:
    """Judge the turn's kernels (a copy of each in runs/{run}/turns/turn_{t}/); returns the records."""
    folder = run_dir / TURN_DIR / f"turn_{turn}"
    folder.mkdir(parents=True, exist_ok=True)
    for sample in answered:
        if sample.kernel.is_file():
            shutil.copyfile(sample.kernel, folder / sample.kernel.name.replace(f"_turn_{turn}_", "_"))
    evaluate_run(turn_eval_config(cfg, run_dir, turn))
    results = folder / "eval_results.json"
    return json.loads(results.read_text()) if results.is_file() else {}


def feedback(record: dict | None) -> str:
    """What the model is told about one evaluation of its kernel, at most FEEDBACK_CHARS."""
    if record is None or record.get("eval_status") == "missing_kernel":
        text = "Your answer held no complete Python code block defining ModelNew, so nothing was evaluated."
    else:
        text = _feedback_for(record["eval_status"], record.get("metadata", {}), record)
    return text[:FEEDBACK_CHARS] + "\nRevise the kernel and answer with the whole new file in one code block."


def _feedback_for(status: str, metadata: dict, record: dict) -> str:
    if status == "compile_error":
        lines = str(metadata.get("compiler_output") or metadata.get("error", "")).strip().splitlines()
        return "Your kernel did not compile. The compiler said:\n" + "\n".join(lines[-COMPILER_LINES:])
    if status == "incorrect":
        failed = next((c for c in metadata.get("cases", []) if not c.get("passed")), {})
        detail = failed.get("reason") or ""
        if "max_abs_diff" in failed:
            detail += f"; largest absolute difference {failed['max_abs_diff']:.4g}"
        shapes = failed.get("output_shapes")
        return (f"Your kernel ran but gave wrong results on test case {metadata.get('failed_case')}"
                + (f" (expected output shapes {shapes})" if shapes else "") + f": {detail}.")
    if status == "correct":
        if record.get("runtime", -1) > 0:
            reference = metadata.get("reference_ms")
            against = f" against {reference:.4g} ms for the PyTorch reference" if reference else ""
            return f"Your kernel is correct. It took {record['runtime']:.4g} ms per call{against}. Make it faster."
        return f"Your kernel is correct, but its time was not accepted: {metadata.get('runtime_withheld', 'not timed')}."
    error = str(metadata.get("error", "")).strip().splitlines()
    return f"Your kernel failed ({status}): " + "\n".join(error[-COMPILER_LINES:])


def keep_final(sample, turns: int, run_dir: Path) -> int | None:
    """Copy the sample's final turn (the last that compiled and passed, else the last with a kernel) to
    its plain kernel and raw-response files; returns that turn."""
    passed, last = None, None
    for turn in range(turns):
        at = sample.at_turn(turn)
        if not at.kernel.is_file():
            continue
        last = turn
        results = run_dir / TURN_DIR / f"turn_{turn}" / "eval_results.json"
        record = json.loads(results.read_text()).get(f"{sample.problem.pid}_{sample.sid}", {}) if results.is_file() else {}
        if record.get("eval_status") == "correct":
            passed = turn
    final = passed if passed is not None else last
    if final is not None:
        chosen = sample.at_turn(final)
        shutil.copyfile(chosen.path("raw_response.txt"), sample.path("raw_response.txt"))
        shutil.copyfile(chosen.kernel, sample.kernel)  # last: a kernel file marks the sample done
    return final
