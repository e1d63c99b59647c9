"""Writing a level's hidden-test files (scripts/generate_hidden_inputs.py), optionally dropping the
distributions on which a reference is degenerate (probed by validation.py)."""

from __future__ import annotations

from .hidden_tests import HIDDEN_DISTRIBUTIONS, filtered_path, has_floating_input, hidden_path, render_hidden_file
from .validation import dropped_distributions, probe_problem


def generate_hidden_tests(level: int, pids, validate: bool, dry_run: bool, problems_dir=None,
                          out_dir=None, device: str = "auto") -> None:
    """Write (or, with dry_run, list) the hidden-test files of a level; see the script's docstring."""
    import torch
    from tqdm import tqdm

    from ..errors import UserError
    from .load import list_problems
    from ..results import read_json, write_json_atomic

    problems = list_problems(level, problems_dir)
    if pids:
        unknown = sorted(set(pids) - {p.pid for p in problems})
        if unknown:
            raise UserError(f"level {level} has no problem id(s) {unknown}")
        problems = [p for p in problems if p.pid in set(pids)]
    log_path = filtered_path(out_dir)
    log = read_json(log_path, "filtered-configs log") if log_path.exists() else {}
    level_log = log.setdefault(f"level{level}", {})
    run_on = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                          ("cpu" if device == "auto" else device))
    bar = tqdm(problems, desc=f"hidden level {level}", unit="problem", disable=dry_run)
    for problem in bar:
        if validate:
            dropped = dropped_distributions(probe_problem(problem, run_on, timing_trials=0, rounding=False))
            level_log.pop(str(problem.pid), None)
            if dropped:
                level_log[str(problem.pid)] = dropped
        dropped = level_log.get(str(problem.pid), {})
        kept = [d for d in HIDDEN_DISTRIBUTIONS if d[0] not in dropped]
        target = hidden_path(level, problem.pid, out_dir)
        if dry_run:
            print(f"{target}: {', '.join(n for n, _ in kept)}" + (f" (left out: {dropped})" if dropped else ""))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_hidden_file(problem, kept, dropped, not has_floating_input(problem)))
    if not dry_run:
        write_json_atomic(log_path, {k: log[k] for k in sorted(log)})
