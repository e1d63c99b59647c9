"""The loop behind scripts/validate_problems.py: resumable per-level reports and the degenerate list."""

from __future__ import annotations

from pathlib import Path

import torch
from tqdm import tqdm

from .load import list_problems
from ..results import read_json, write_json_atomic
from ..measure.timing import precision_flags
from .validation import degenerate_reason, hardware_label, probe_problem, report_path


def validate_levels(levels, pids, out_dir, degenerate_file, device="auto", problems_dir=None,
                    force=False) -> None:
    run_on = torch.device("cuda" if device == "auto" and torch.cuda.is_available() else
                          ("cpu" if device == "auto" else device))
    hardware = hardware_label(run_on)
    for level in levels:
        path = report_path(Path(out_dir), hardware, level)
        report = read_json(path, "validation report") if path.exists() else {}
        report.setdefault("environment", {"hardware": hardware, "torch": torch.__version__,
                                          "cuda": torch.version.cuda, **precision_flags()})
        problems = report.setdefault("problems", {})
        todo = [p for p in list_problems(level, problems_dir)
                if (not pids or p.pid in pids) and (force or str(p.pid) not in problems)]
        counts = {"ok": 0, "degenerate": 0}
        bar = tqdm(todo, desc=f"validate level {level}", unit="problem")
        for problem in bar:
            entry = probe_problem(problem, run_on)
            problems[str(problem.pid)] = entry
            counts["degenerate" if entry["degenerate"] else "ok"] += 1
            bar.set_postfix(counts)
            write_json_atomic(path, {"environment": report["environment"],
                                     "problems": dict(sorted(problems.items(), key=lambda kv: int(kv[0])))})
        update_degenerate_list(Path(degenerate_file), level, problems, hardware)


def update_degenerate_list(path: Path, level: int, problems: dict, hardware: str) -> None:
    listing = read_json(path, "degenerate-problem list") if path.exists() else {}
    reasons = {pid: degenerate_reason(e["distributions"], e.get("rounding")) for pid, e in problems.items()}
    listing[f"level{level}"] = {pid: {"problem": problems[pid]["problem"], "reason": why, "found_on": hardware}
                                for pid, why in reasons.items() if why}
    write_json_atomic(path, {k: listing[k] for k in sorted(listing)})
