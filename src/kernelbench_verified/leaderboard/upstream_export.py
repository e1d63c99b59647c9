"""One evaluated run in the files upstream's scripts read (scripts/export_upstream.py).

layout=verified (the default) writes what facebookresearch/kernel_bench_verified, the project this one
re-implements, reads: flat "{pid}_{sid}" files with the fields its scripts use (compiled, correctness,
runtime, peak_memory and the metadata fields its leaderboard's tolerance rule reads). An export of a
hidden evaluation writes eval_results_hidden.json (the verdicts) and eval_results.json (the same
records, which its readers take every time from), so its scores are ours.

layout=kernelbench writes ScalingIntelligence/KernelBench's eval_results.json: keyed by problem id, each
value a list of sample dicts, every problem of the level in ascending id order (older versions pair the
entries with the baseline's by position), scored by sample 0.

Both take the geometric mean of baseline/runtime over correct samples: one correct sample with runtime
-1.0 (our withheld time) would make it NaN, so such a sample is exported as not correct, with kbv_status
"correct_time_withheld" saying why; our own files keep DESIGN's "{pid}_{sid}" layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from ..config import existing_run_folder, require_choice, require_int, safe_run_name
from ..errors import UserError
from ..problems.load import LEVELS, list_problems
from ..results import RUN_CONFIG_NAMES, read_json, write_json_atomic
from .discovery import HIDDEN_RESULTS, KERNEL_FILE, STANDARD_RESULTS, load_records, standard_records

UPSTREAM_RESULTS = "eval_results.json"
LAYOUTS = ("verified", "kernelbench")
WITHHELD_STATUS = "correct_time_withheld"
ERROR_CHARS = 300  # enough to say what failed, short enough to keep the export small
# Our statuses as the metadata field upstream's evaluator records such a failure in.
UPSTREAM_ERROR_FIELDS = {"compile_error": "compilation_error", "load_error": "runtime_error",
                         "runtime_error": "runtime_error", "cuda_error": "runtime_error",
                         "out_of_memory": "runtime_error", "crashed": "runtime_error",
                         "resource_limit": "runtime_error", "protocol_violation": "runtime_error"}


def time_withheld(record: dict) -> bool:
    """A correct sample without a usable time: upstream would put its -1.0 into a geomean."""
    runtime = record.get("runtime")
    usable = isinstance(runtime, (int, float)) and not isinstance(runtime, bool) and math.isfinite(runtime)
    return bool(record.get("correctness")) and not (usable and runtime > 0)


def _metadata(record: dict) -> dict:
    return record.get("metadata") if isinstance(record.get("metadata"), dict) else {}


def _small_metadata(record: dict) -> dict:
    metadata = _metadata(record)
    small = {"kbv_status": str(record.get("eval_status") or "unknown")}
    if metadata.get("error"):
        small["kbv_error"] = str(metadata["error"])[:ERROR_CHARS]
    if metadata.get("runtime_withheld"):
        small["kbv_runtime_withheld"] = str(metadata["runtime_withheld"])
    return small


def upstream_metadata(record: dict) -> dict:
    """Our small metadata plus the fields upstream's evaluator would have written for this outcome:
    max_difference / avg_difference of failed standard trials (only when every failure is a finite
    difference, the one kind its leaderboard's tolerance rule may lift), hidden_failed_configs of failed
    hidden cases, compilation_error or runtime_error for a failure that is no difference, and its
    batch runner's eval_status for a timeout."""
    small = _small_metadata(record)
    metadata, status = _metadata(record), record.get("eval_status")
    cases = [c for c in metadata.get("cases") or [] if isinstance(c, dict)]
    standard = [str(c.get("case", "")).startswith("trial_") for c in cases]
    trials = [c for c, is_trial in zip(cases, standard) if is_trial]
    if trials:
        small["correctness_trials"] = f"({sum(bool(c.get('passed')) for c in trials)} / {len(trials)})"
    failed_trials = [c for c in trials if not c.get("passed")]
    failed_hidden = [c for c, is_trial in zip(cases, standard) if not is_trial and not c.get("passed")]
    failed_case = str(metadata.get("failed_case") or "")
    differences_only = (status == "incorrect" and metadata.get("all_cases_recorded") is True
                        and not failed_case.startswith(("timed_call_", "input_mutated", "output_aliases_input")))
    if failed_trials:
        diffs = [c.get("max_abs_diff") for c in failed_trials]
        if differences_only and all(_finite(d) for d in diffs):
            small["max_difference"] = [f"{d:.6f}" for d in diffs]
            small["avg_difference"] = [f"{c.get('mean_abs_diff', 0.0):.6f}" for c in failed_trials]
        small["correctness_issue"] = str(failed_trials[0].get("reason") or "Output mismatch")[:ERROR_CHARS]
    if failed_hidden:
        small["hidden_failed_configs"] = [str(c.get("case")) for c in failed_hidden]
        small["hidden_correctness_issue"] = str(failed_hidden[0].get("reason") or "")[:ERROR_CHARS]
    elif status == "correct" and len(cases) > len(trials):
        small["hidden_correctness_trials"] = f"({len(cases) - len(trials)}/{len(cases) - len(trials)} hidden configs passed)"
    if status == "incorrect" and not differences_only:
        small["correctness_issue"] = f"failed {failed_case or 'a check'}"
    if status in UPSTREAM_ERROR_FIELDS:
        small[UPSTREAM_ERROR_FIELDS[status]] = str(metadata.get("error") or status)[:ERROR_CHARS]
    elif status == "timeout":
        small["eval_status"] = "timeout"
    return small


def _timed(record: dict) -> bool:
    return _finite(record.get("runtime")) and record["runtime"] > 0


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def upstream_sample(record: dict, metadata: dict | None = None) -> dict:
    """One of our records as upstream's sample dict; a withheld time turns the sample not correct."""
    metadata = dict(_small_metadata(record) if metadata is None else metadata)
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


def verified_sample(record: dict) -> dict:
    """upstream_sample with kernel_bench_verified's metadata fields and its memory fields."""
    sample = upstream_sample(record, upstream_metadata(record))
    timed = sample["correctness"]
    memory = record.get("peak_memory")
    sample["peak_memory"] = float(memory) if timed and _finite(memory) else -1.0
    sample["memory_stats"] = (record.get("memory_stats") or {}) if timed else {}
    return sample


def missing_sample() -> dict:
    """Sample 0 of a problem without its record: what upstream itself would fill in, but in place (older
    upstream appends its fillers at the end, out of step with the baseline's order)."""
    return {"sample_id": 0, "compiled": False, "correctness": False, "metadata": {"kbv_status": "missing"},
            "runtime": -1.0, "runtime_stats": {}}


def upstream_results(records: dict, problem_ids: list[int]) -> dict:
    """KernelBench's eval_results.json from our records {(pid, sid): record} (as load_records returns them):
    every problem of `problem_ids` in ascending order, its samples sorted by sample_id, sample 0 always
    present (upstream scores only that one)."""
    _refuse_unknown(records, problem_ids)
    exported = {}
    for pid in sorted(problem_ids):
        samples = [upstream_sample({**records[key], "sample_id": key[1]})
                   for key in sorted(k for k in records if k[0] == pid)]
        exported[str(pid)] = samples if (pid, 0) in records else [missing_sample(), *samples]
    return exported


def verified_results(records: dict, problem_ids: list[int]) -> dict:
    """kernel_bench_verified's flat file from our records: "{pid}_{sid}" in id order (its scripts fill in
    the problems without a record themselves)."""
    _refuse_unknown(records, problem_ids)
    return {f"{pid}_{sid}": verified_sample({**records[(pid, sid)], "sample_id": sid}) for pid, sid in sorted(records)}


def with_standard_times(exported: dict, hidden: dict, standard: dict | None) -> dict:
    """The eval_results.json of a hidden export, where upstream's readers take every time: the hidden
    records' own, except where a hidden record has no time (not timed, never withheld) and the standard
    record of the same sample has one and the same kernel_sha256; that sample then carries the standard
    time and memory, as our leaderboard takes it (its verdict stays the hidden one)."""
    times = dict(exported)
    for (pid, sid), record in hidden.items():
        other = (standard or {}).get((pid, sid))
        digest = _metadata(record).get("kernel_sha256")
        hidden_untimed = not _timed(record) and not _metadata(record).get("runtime_withheld")
        if not (hidden_untimed and other is not None and _timed(other) and digest
                and digest == _metadata(other).get("kernel_sha256")):
            continue
        key = f"{pid}_{sid}"
        memory = other.get("peak_memory")
        times[key] = dict(times[key], runtime=float(other["runtime"]), runtime_stats=other.get("runtime_stats") or {},
                          peak_memory=float(memory) if _finite(memory) else -1.0,
                          memory_stats=other.get("memory_stats") or {},
                          metadata=dict(times[key]["metadata"], kbv_time_from="eval_results.json (the standard "
                                        "evaluation of the same kernel source; the hidden evaluation did not time it)"))
    return times


def _refuse_unknown(records: dict, problem_ids: list[int]) -> None:
    unknown = sorted({pid for pid, _ in records} - set(problem_ids))
    if unknown:
        raise UserError(f"records of problems {unknown} are not in the level's problems "
                        f"(wrong level= or problems_dir=?)")


@dataclass
class ExportSummary:
    paths: list[Path]
    problems: int
    samples: int     # exported from our records
    missing: int     # problems without a record of sample 0, filled in as not compiled (kernelbench layout)
    correct: int     # exported as correct
    withheld: int    # correct with a withheld time, exported as not correct


def summarize_export(samples: list[dict], problems: int, paths: list[Path]) -> ExportSummary:
    statuses = [s["metadata"]["kbv_status"] for s in samples]
    missing = statuses.count("missing")
    return ExportSummary(paths, problems, len(statuses) - missing, missing, sum(s["correctness"] for s in samples),
                         statuses.count(WITHHELD_STATUS))


def write_export(records: dict, problem_ids: list[int], out_dir: Path, layout: str = "verified",
                 hidden: bool = False, standard: dict | None = None) -> ExportSummary:
    """Write the export into out_dir (atomically, file by file) and say what it holds; `hidden`: `records`
    are a hidden evaluation's, `standard` the run's standard records (times for untimed hidden records).
    The folder holds this export's files only: an earlier export's other file is removed."""
    if _holds_a_run(out_dir):
        raise UserError(f"{out_dir} holds a run (kernels, a generate config, or result files that are no export of "
                        f"ours): choose another out_run_name=")
    if layout == "kernelbench":
        exported = upstream_results(records, problem_ids)
        files = {UPSTREAM_RESULTS: exported}
        samples = [s for listed in exported.values() for s in listed]
    else:
        exported = verified_results(records, problem_ids)
        files = ({HIDDEN_RESULTS: exported, STANDARD_RESULTS: with_standard_times(exported, records, standard)}
                 if hidden else {STANDARD_RESULTS: exported})
        samples = list(exported.values())
    for name in (STANDARD_RESULTS, HIDDEN_RESULTS):
        if name not in files:
            (out_dir / name).unlink(missing_ok=True)  # an export of ours (_holds_a_run): stale beside this one
    for name, content in files.items():
        write_json_atomic(out_dir / name, content)
    problems = len(exported) if layout == "kernelbench" else len({pid for pid, _ in records})
    return summarize_export(samples, problems, [out_dir / name for name in files])


def _holds_a_run(folder: Path) -> bool:
    """Generated kernels, a generate config, or result files that are not an export of ours (every sample
    with a kbv_status): an export must never overwrite a run, ours or upstream's."""
    if not folder.is_dir():
        return False
    if any((folder / name).exists() for name in RUN_CONFIG_NAMES):
        return True
    if any(KERNEL_FILE.match(p.name) for p in folder.glob("level_*_kernel.py")):
        return True
    for name in (STANDARD_RESULTS, HIDDEN_RESULTS):
        path = folder / name
        if path.is_symlink() or (path.exists() and not _is_export(read_json(path, "result file"))):
            return True
    return False


def _is_export(stored) -> bool:
    if not isinstance(stored, dict):
        return False
    samples = [s for value in stored.values() for s in (value if isinstance(value, list) else [value])]
    return all(isinstance(s, dict) and isinstance(s.get("metadata"), dict) and "kbv_status" in s["metadata"]
               for s in samples)


def export_run(cfg: DictConfig) -> int:
    """scripts/export_upstream.py: read one run's results, write the export, print one line."""
    level = require_int(cfg, "level", minimum=1)
    if level not in LEVELS:
        raise UserError(f"unknown level {level}: choose one of {', '.join(map(str, LEVELS))}")
    layout = require_choice(cfg, "layout", LAYOUTS)
    run_dir = existing_run_folder(cfg)
    out_name = safe_run_name(cfg.out_run_name or f"{run_dir.name}_upstream")
    out_dir = Path(cfg.runs_dir) / out_name
    if out_dir.resolve() == run_dir.resolve():
        raise UserError(f"out_run_name={out_name!r} is the run itself: the export never writes into {run_dir}")
    source = run_dir / (HIDDEN_RESULTS if cfg.use_hidden_eval else STANDARD_RESULTS)
    records = load_records(source)
    other = "use_hidden_eval=False" if cfg.use_hidden_eval else "use_hidden_eval=True"
    if records is None:
        raise UserError(f"result file {source} not found: evaluate the run first (or pass {other})")
    if not cfg.use_hidden_eval and standard_records(records) is None:
        raise UserError(f"{source} holds only entries a hidden evaluation derived for upstream's readers, no "
                        f"standard evaluation: evaluate with use_hidden_tests=False, or pass {other}")
    records = records if cfg.use_hidden_eval else standard_records(records)
    _check_level(records, level, source)
    problems = list_problems(level, cfg.problems_dir)
    _check_problem_files(records, {p.pid: p.filename for p in problems}, source)
    standard = standard_records(load_records(run_dir / STANDARD_RESULTS)) if cfg.use_hidden_eval else None
    summary = write_export(records, [p.pid for p in problems], out_dir, layout, bool(cfg.use_hidden_eval), standard)
    print(summary_line(summary, out_name, level, source.name, layout, bool(cfg.use_hidden_eval)))
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


def summary_line(summary: ExportSummary, out_name: str, level: int, source_name: str, layout: str = "verified",
                 hidden: bool = False) -> str:
    filled = (f" ({summary.missing} without a record of sample 0, filled in as not compiled)"
              if layout == "kernelbench" else "")
    if layout == "kernelbench":
        upstream, options = "ScalingIntelligence/KernelBench's checkout", ""
    else:
        upstream, options = "kernel_bench_verified's checkout", " use_hidden_eval=True" if hidden else ""
    return (f"exported {source_name} as {layout}: {summary.problems} problems{filled}, {summary.samples} samples, "
            f"{summary.correct} correct, {summary.withheld} correct with a withheld time exported as not correct "
            f"-> {', '.join(map(str, summary.paths))}; next, in {upstream} with this folder under runs/: "
            f"python3 scripts/benchmark_eval_analysis.py run_name={out_name} level={level} hardware=<HW> "
            f"baseline=<baseline>{options}")
