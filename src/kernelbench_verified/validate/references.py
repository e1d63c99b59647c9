"""Each reference evaluated as its own candidate (`class ModelNew(Model): pass`) against a baseline of the
same code timed the same way: identical code must score 1.00x, and must never be rejected or lose its time.

Whatever speedup identical code shows is the harness's and the host's noise, not a kernel's. The spread
per problem is kept in results/identical_code/{GPU}.json, which the leaderboard reads: a sample whose
speedup is no larger than its problem's identical code reached has no measured speedup.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from ..problems.load import Problem, self_candidate
from ..results import read_json, write_json_atomic

BASELINE_MODE = "baseline_time_torch"


def write_candidates(run_dir: Path, level: int, problems: list[Problem]) -> None:
    """Each problem's reference as sample 0 of its own candidate, standing alone in its jail."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for problem in problems:
        path = run_dir / f"level_{level}_problem_{problem.pid}_sample_0_kernel.py"
        if not path.is_file():
            path.write_text(self_candidate(problem.path.read_text()))


def timed_seconds(record: dict) -> float:
    """The kernel's own timed GPU work in a record: its timed calls' reported milliseconds, in seconds."""
    calls = record["metadata"].get("judge_trials_ms", {}).get("reported") or []
    return sum(calls) / 1000


def harness_phases(record: dict) -> dict[str, float]:
    """Where one record's harness seconds (eval_seconds less its timed GPU work) went, by the judge's
    own laps: its sandbox start and the kernel's load, the reference's calibration trials (whose GPU
    work is the reference's, so about the kernel's own again), the correctness cases and memory call,
    the timed calls beyond their GPU work, the audits and goodbye, the robustness sandbox (D5, shape
    variants), and the rest (the judge's own set-up and clean-up)."""
    meta = record["metadata"]
    laps, at = meta.get("phase_seconds") or {}, meta.get("trial_phases_at") or {}
    calibration = (at["calibration"][1] - at["calibration"][0]) if len(at.get("calibration") or []) == 2 else 0.0
    phases = {"start_and_load": laps.get("start_and_load", 0.0) - calibration, "calibration": calibration,
              "cases_and_memory": laps.get("correctness_and_memory", 0.0),
              "timed_calls_beyond_gpu": laps.get("timing", 0.0) - timed_seconds(record),
              "audits_and_end": laps.get("timed_checks", 0.0), "robustness": meta.get("robustness_seconds") or 0.0}
    phases["other"] = meta["eval_seconds"] - timed_seconds(record) - sum(phases.values())
    return {name: round(seconds, 4) for name, seconds in phases.items()}


def trial_loop_steps(record: dict) -> dict[str, float] | None:
    """Where the host seconds of a record's trial loops (calibration and timed calls together) went, by
    step (timed.LoopSeconds): making each call's inputs, the "arm" request, the trial beyond the times
    the sandbox reported (warm-ups whole: their times are not kept), the rest of the loop. None for a
    record made before the judge kept them."""
    meta = record["metadata"]
    loops, calls = meta.get("trial_loop_seconds") or {}, meta.get("judge_trials_ms") or {}
    if not loops:
        return None
    total = {step: sum(loop.get(step, 0.0) for loop in loops.values()) for step in ("inputs", "arm", "trial", "rest")}
    reported = (sum(calls.get("reported") or []) + sum(calls.get("calibration_reported") or [])) / 1000
    return {"inputs": round(total["inputs"], 4), "arm": round(total["arm"], 4),
            "trial_beyond_reported": round(total["trial"] - reported, 4), "rest": round(total["rest"], 4)}


def level_figures(level: int, records: dict, baseline: dict, problems: list[Problem]) -> dict:
    """Per problem of one level: identical code's speedup, or why it has none (a rejection, a withheld
    time), whether its time was doubted once, and the harness's seconds beyond the timed work."""
    found = {"speedups": {}, "rejected": [], "withheld": [], "doubted_once": [], "harness_seconds": {},
             "harness_phases": {}, "trial_loops": {}, "d5": {}, "shape_variants": {}, "robustness_failed": []}
    for problem in problems:
        name, record = f"L{level}/{problem.pid}", records.get(f"{problem.pid}_0")
        if record is None:
            continue
        meta = record["metadata"]
        if isinstance(meta.get("clock_retry"), dict):
            found["doubted_once"].append(name)
        if meta.get("eval_seconds") is not None:
            found["harness_seconds"][name] = round(meta["eval_seconds"] - timed_seconds(record), 4)
            if record["eval_status"] == "correct" and meta.get("phase_seconds"):
                found["harness_phases"][name] = harness_phases(record)
                if (steps := trial_loop_steps(record)) is not None:
                    found["trial_loops"][name] = steps
        count_robustness(found, name, meta)
        if record["eval_status"] != "correct":
            why = meta.get("failed_case") or (meta.get("error") or "").strip().splitlines()[-1:] or [""]
            found["rejected"].append(f"{name} {record['eval_status']}: {str(why if isinstance(why, str) else why[0])[:160]}")
        elif record["runtime"] <= 0:
            found["withheld"].append(f"{name}: {str(meta.get('runtime_withheld'))[:160]}")
        elif problem.filename in baseline and baseline[problem.filename].get("mean", -1) > 0:
            found["speedups"][name] = round(baseline[problem.filename]["mean"] / record["runtime"], 5)
    return found


def count_robustness(found: dict, name: str, meta: dict) -> None:
    """Identical code's D5 and shape variants, counted by status; a failed one named (none may fail)."""
    d5 = (meta.get("perturbed_parameters") or {}).get("status")
    if d5:
        found["d5"][d5] = found["d5"].get(d5, 0) + 1
    for variant in meta.get("shape_variants") or []:
        found["shape_variants"][variant["status"]] = found["shape_variants"].get(variant["status"], 0) + 1
        if variant["status"] == "failed":
            found["robustness_failed"].append(f"{name} {variant['case']} {variant['overrides']}: "
                                              f"{str(variant.get('reason'))[:120]}")
    if d5 == "failed":
        found["robustness_failed"].append(f"{name} D5: {str((meta['perturbed_parameters']).get('reason'))[:120]}")


def spread(speedups: dict) -> dict:
    """Geometric mean of identical code's speedups and how far they stray from 1 (median, p95, max)."""
    if not speedups:
        return {"problems": 0}
    values = list(speedups.values())
    deviation = sorted(abs(s - 1) for s in values)
    worst = max(speedups, key=lambda k: abs(speedups[k] - 1))
    return {"problems": len(values), "geomean": round(math.exp(statistics.fmean(math.log(s) for s in values)), 4),
            "median_abs_dev": round(statistics.median(deviation), 4),
            "p95_abs_dev": round(deviation[min(len(deviation) - 1, math.ceil(0.95 * len(deviation)) - 1)], 4),
            "max_abs_dev": round(deviation[-1], 4), "worst": [worst, speedups[worst]]}


def section(levels: dict[int, dict]) -> dict:
    """The summary's `references` section from each level's figures (level_figures)."""
    result = {"levels": {}}
    for level, found in sorted(levels.items()):
        harness = list(found["harness_seconds"].values())
        result["levels"][str(level)] = {
            "evaluated": len(harness) or len(found["speedups"]) + len(found["rejected"]) + len(found["withheld"]),
            "rejected": found["rejected"], "withheld": found["withheld"], "doubted_once": found["doubted_once"],
            "identical_code": spread(found["speedups"]),
            "d5": found.get("d5", {}), "shape_variants": found.get("shape_variants", {}),
            "robustness_failed": found.get("robustness_failed", []),
            "harness_seconds_median": round(statistics.median(harness), 3) if harness else None,
            "harness_seconds_by_phase": phase_medians(list(found.get("harness_phases", {}).values())),
            "trial_loop_seconds_by_step": phase_medians(list(found.get("trial_loops", {}).values()))}
    return result


def phase_medians(breakdowns: list[dict]) -> dict:
    """Each phase's median over the correct samples (harness_phases); the medians need not add up to
    the median sample's seconds."""
    if not breakdowns:
        return {}
    return {name: round(statistics.median(b[name] for b in breakdowns), 3) for name in breakdowns[0]}


def write_bounds(path: Path, hardware: str, levels: dict[int, dict], problems: dict[str, Problem]) -> None:
    """results/identical_code/{hardware}.json: every problem's identical-code speedups, with the digest of
    the problem file measured (the leaderboard applies them only to a baseline of the same file). Problems
    measured again replace their entries; the others stay as they were."""
    document = read_json(path, "identical-code file") if path.is_file() else {}
    speedups, digests = dict(document.get("speedups", {})), dict(document.get("problem_sha256", {}))
    for found in levels.values():
        for name, value in found["speedups"].items():
            speedups[name], digests[name] = [value], problems[name].source_sha256

    def order(name: str) -> tuple[int, int]:
        level, pid = name.removeprefix("L").split("/")
        return int(level), int(pid)

    write_json_atomic(path, {"hardware": hardware,
                             "what": "speedups of each reference evaluated as its own candidate; 1.00 is the truth",
                             "written_by": "scripts/validate_harness.py steps=[references]",
                             "speedups": {k: speedups[k] for k in sorted(speedups, key=order)},
                             "problem_sha256": {k: digests[k] for k in sorted(digests, key=order)}})
