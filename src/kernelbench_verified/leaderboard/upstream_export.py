"""One evaluated run in the layout upstream KernelBench's scripts/benchmark_eval_analysis.py reads
(scripts/export_upstream.py).

Upstream reads runs/{run}/eval_results.json keyed by problem id ("1", "2", ...), each value a list of
sample dicts, and scores the sample with sample_id 0. Older versions pair those entries with the
baseline file's entries by position, so every problem of the level is written, in ascending id order.

Upstream takes the geometric mean of baseline/runtime over correct samples: one correct sample with
runtime -1.0 (our withheld time) would make it NaN. Such a sample is exported as not correct, with
kbv_status "correct_time_withheld" saying why; our own files keep DESIGN's "{pid}_{sid}" layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from ..config import require_int, safe_run_name
from ..errors import UserError
from ..problems.load import LEVELS, list_problems
from ..results import RUN_CONFIG_NAMES, read_json, write_json_atomic
from .discovery import HIDDEN_RESULTS, KERNEL_FILE, RECORD_KEY, STANDARD_RESULTS, load_records

UPSTREAM_RESULTS = "eval_results.json"
WITHHELD_STATUS = "correct_time_withheld"
ERROR_CHARS = 300  # enough to say what failed, short enough to keep the export small


def time_withheld(record: dict) -> bool:
    """A correct sample without a usable time: upstream would put its -1.0 into a geomean."""
    runtime = record.get("runtime")
    usable = isinstance(runtime, (int, float)) and not isinstance(runtime, bool) and math.isfinite(runtime)
    return bool(record.get("correctness")) and not (usable and runtime > 0)


def _small_metadata(record: dict) -> dict:
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    small = {"kbv_status": str(record.get("eval_status") or "unknown")}
    if metadata.get("error"):
        small["kbv_error"] = str(metadata["error"])[:ERROR_CHARS]
    if metadata.get("runtime_withheld"):
        small["kbv_runtime_withheld"] = str(metadata["runtime_withheld"])
    return small


def upstream_sample(record: dict) -> dict:
    """One of our records as upstream's sample dict; a withheld time turns the sample not correct."""
    metadata = _small_metadata(record)
    if time_withheld(record):
        metadata["kbv_status"] = WITHHELD_STATUS
        metadata.setdefault("kbv_runtime_withheld", "not timed (runtime -1.0)")
        return {"sample_id": int(record["sample_id"]), "compiled": True, "correctness": False,
                "metadata": metadata, "runtime": -1.0, "runtime_stats": {}}
    correct = bool(record.get("correctness"))
    return {"sample_id": int(record["sample_id"]), "compiled": bool(record.get("compiled")),
            "correctness": correct, "metadata": metadata,
            "runtime": float(record["runtime"]) if correct else -1.0,
            "runtime_stats": (record.get("runtime_stats") or {}) if correct else {}}


def missing_sample() -> dict:
    """Sample 0 of a problem without its record: what upstream itself would fill in, but in place (older
    upstream appends its fillers at the end, out of step with the baseline's order)."""
    return {"sample_id": 0, "compiled": False, "correctness": False, "metadata": {"kbv_status": "missing"},
            "runtime": -1.0, "runtime_stats": {}}


def upstream_results(records: dict, problem_ids: list[int]) -> dict:
    """Upstream's eval_results.json from our records {(pid, sid): record} (as load_records returns them):
    every problem of `problem_ids` in ascending order, its samples sorted by sample_id, sample 0 always
    present (upstream scores only that one)."""
    unknown = sorted({pid for pid, _ in records} - set(problem_ids))
    if unknown:
        raise UserError(f"records of problems {unknown} are not in the level's problems "
                        f"(wrong level= or problems_dir=?)")
    exported = {}
    for pid in sorted(problem_ids):
        samples = [upstream_sample({**records[key], "sample_id": key[1]})
                   for key in sorted(k for k in records if k[0] == pid)]
        exported[str(pid)] = samples if (pid, 0) in records else [missing_sample(), *samples]
    return exported


@dataclass
class ExportSummary:
    path: Path
    problems: int
    samples: int     # exported from our records
    missing: int     # problems without a record of sample 0, filled in as not compiled
    correct: int     # exported as correct
    withheld: int    # correct with a withheld time, exported as not correct


def summarize_export(exported: dict, path: Path) -> ExportSummary:
    statuses = [s["metadata"]["kbv_status"] for listed in exported.values() for s in listed]
    correct = sum(s["correctness"] for listed in exported.values() for s in listed)
    missing = statuses.count("missing")
    return ExportSummary(path, len(exported), len(statuses) - missing, missing, correct,
                         statuses.count(WITHHELD_STATUS))


def write_export(records: dict, problem_ids: list[int], out_dir: Path) -> ExportSummary:
    """Write upstream's eval_results.json into out_dir (atomically) and say what it holds."""
    if _holds_our_run(out_dir):
        raise UserError(f"{out_dir} holds a run of ours (kernels or \"{{pid}}_{{sid}}\" results): "
                        f"choose another out_run_name=")
    exported = upstream_results(records, problem_ids)
    path = out_dir / UPSTREAM_RESULTS
    write_json_atomic(path, exported)
    return summarize_export(exported, path)


def _holds_our_run(folder: Path) -> bool:
    """Generated kernels, a generate config or our result files: an export must never overwrite them."""
    if not folder.is_dir():
        return False
    if any((folder / name).exists() for name in (*RUN_CONFIG_NAMES, HIDDEN_RESULTS)):
        return True
    if any(KERNEL_FILE.match(p.name) for p in folder.glob("level_*_kernel.py")):
        return True
    results = folder / UPSTREAM_RESULTS
    stored = read_json(results, "result file") if results.is_file() else {}
    return isinstance(stored, dict) and any(RECORD_KEY.match(str(key)) for key in stored)


def export_run(cfg: DictConfig) -> int:
    """scripts/export_upstream.py: read one run's results, write the export, print one line."""
    level = require_int(cfg, "level", minimum=1)
    if level not in LEVELS:
        raise UserError(f"unknown level {level}: choose one of {', '.join(map(str, LEVELS))}")
    run_name = safe_run_name(cfg.run_name)
    out_name = safe_run_name(cfg.out_run_name or f"{run_name}_upstream")
    run_dir, out_dir = Path(cfg.runs_dir) / run_name, Path(cfg.runs_dir) / out_name
    if not run_dir.is_dir():
        raise UserError(f"run folder {run_dir} not found (check run_name= and runs_dir=)")
    if out_dir.resolve() == run_dir.resolve():
        raise UserError(f"out_run_name={out_name!r} is the run itself: the export never writes into {run_dir}")
    source = run_dir / (HIDDEN_RESULTS if cfg.use_hidden_eval else STANDARD_RESULTS)
    records = load_records(source)
    if records is None:
        other = "use_hidden_eval=False" if cfg.use_hidden_eval else "use_hidden_eval=True"
        raise UserError(f"result file {source} not found: evaluate the run first (or pass {other})")
    _check_level(records, level, source)
    problems = list_problems(level, cfg.problems_dir)
    _check_problem_files(records, {p.pid: p.filename for p in problems}, source)
    summary = write_export(records, [p.pid for p in problems], out_dir)
    print(summary_line(summary, out_name, level, source.name))
    return 0


def _check_level(records: dict, level: int, source: Path) -> None:
    others = sorted({r.get("level") for r in records.values() if r.get("level") not in (None, level)}, key=str)
    if others:
        raise UserError(f"{source} holds records of level {', '.join(map(str, others))}, not level={level}")


def _check_problem_files(records: dict, files: dict, source: Path) -> None:
    """Upstream matches our samples to its problems and baselines by id: they must be the same problems."""
    for (pid, _), record in sorted(records.items()):
        ran = record.get("problem")
        if pid in files and ran and ran != files[pid]:
            raise UserError(f"{source}: problem {pid} ran {ran}, but the level's problem {pid} is {files[pid]} "
                            f"(pass problems_dir= of the run's problems)")


def summary_line(summary: ExportSummary, out_name: str, level: int, source_name: str) -> str:
    return (f"exported {source_name}: {summary.problems} problems ({summary.missing} without a record of sample 0, "
            f"filled in as not compiled), {summary.samples} samples, {summary.correct} correct, "
            f"{summary.withheld} correct with a withheld time exported as not correct -> {summary.path}; "
            f"next, in upstream's checkout with this folder under runs/: python3 scripts/benchmark_eval_analysis.py "
            f"run_name={out_name} level={level} hardware=<HW> baseline=<baseline>")
