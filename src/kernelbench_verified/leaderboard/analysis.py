"""One run's leaderboard metrics as a terminal table (scripts/benchmark_eval_analysis.py)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf

from ..config import existing_run_folder, require_int
from ..errors import UserError
from ..results import write_json_atomic
from .metrics import FAST_P_THRESHOLDS, bootstrap_intervals, per_sample, summarize
from ..problems.load import LEVELS
from .discovery import (DEFAULT_DEGENERATE_FILE, DEFAULT_TIMING_DIR, Baselines, Run, evaluated_hardware,
                        excluded_of_run, load_excluded, load_run_results, timed_on_cpu)
from .claims import STEPS, claims_audit
from .scoring import Setting, score_run, turn_summaries


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%" if math.isfinite(value) else "-"


def _times(value: float) -> str:
    return f"{value:.3f}x" if math.isfinite(value) else "-"


def _interval(bounds: list, show) -> str:
    return f"  [{show(bounds[0])}, {show(bounds[1])}]" if math.isfinite(bounds[0]) else ""


def metric_lines(summary: dict, ci: dict, spread: dict, memory_refused: int = 0) -> list[tuple[str, str]]:
    """(label, value) rows of the table, in the order of the leaderboard's columns; `memory_refused`
    correct samples had peaks measured by another method than the baseline's, and are said to be left out."""
    fast = summary["fast_p"]
    left_out = f" ({memory_refused} correct sample(s) left out: peaks measured differently)" if memory_refused else ""
    rows = [("problems (degenerate excluded)", str(summary["num_problems"])),
            ("samples per problem", str(summary["num_samples"])),
            ("correct (best of N)", _pct(summary["correct"])),
            ("compiled (best of N)", _pct(summary["compiled"]))]
    rows += [(f"pass@{k}", _pct(value)) for k, value in summary["pass_at_k"].items()]
    rows += [(f"Fast@{p:g}", _pct(fast[f"{p:g}"]) + (_interval(ci["fast_1"], _pct) if p == 1.0 else ""))
             for p in FAST_P_THRESHOLDS]
    rows.append(("Fast@1 beyond identical code's spread", _pct(summary["fast_1_beyond_noise"])))
    rows += [("correct speedup (geomean)", _times(summary["correct_speedup"]) + _interval(ci["correct_speedup"], _times)),
             ("KernelBench avg speedup", _times(summary["kernelbench_speedup"])),
             ("memory efficiency (geomean)", _times(summary["memory_efficiency"])
              + _interval(ci["memory_efficiency"], _times) + left_out),
             ("uses less memory", _pct(summary["less_memory"]) + left_out)]
    for name, show in (("correct", _pct), ("compiled", _pct), ("fast_1", _pct), ("correct_speedup", _times)):
        stats = spread[name]
        value = f"{show(stats['mean'])} ± {show(stats['std'])}" if math.isfinite(stats["mean"]) else "-"
        rows.append((f"per sample: {name.replace('_', ' ')}", value))
    return rows


def analyze_run(cfg: DictConfig) -> int:
    level = require_int(cfg, "level", minimum=1)
    if level not in LEVELS:
        raise UserError(f"unknown level {level}: choose one of {', '.join(map(str, LEVELS))}")
    if cfg.tolerance is not None and (isinstance(cfg.tolerance, bool) or not isinstance(cfg.tolerance, (int, float))):
        raise UserError(f"tolerance={cfg.tolerance!r} must be a number (or null)")
    ks = pass_at_k_values(cfg.pass_at_k_values)
    run_dir = existing_run_folder(cfg)
    run = Run(str(cfg.run_name), str(cfg.run_name), level, "fp32", run_dir)
    warnings: list[str] = []
    results = load_run_results(run, warnings)
    if results is None:
        raise UserError(f"run {run_dir} has no eval_results.json or eval_results_hidden.json: evaluate it first")
    OmegaConf.update(cfg, "hardware", str(cfg.hardware or evaluated_hardware([results])))
    baselines = Baselines(cfg.timing_dir or DEFAULT_TIMING_DIR, cfg.hardware)
    baseline = baselines.get(run, str(cfg.baseline))  # an imported run's own folder, else the shared one
    if baseline is None:
        how = f"run_name={run.name}" if run.folders.own_problems else f"level={level}"
        raise UserError(f"baseline file {baselines.path(run, str(cfg.baseline))} not found (time it with "
                        f"generate_baseline_time.py {how}, or check hardware= and baseline=)")
    if level not in baseline.levels:
        raise UserError(f"baseline {baseline.path} has no level{level} entries")
    excluded_list = load_excluded(cfg.excluded, cfg.degenerate_file or DEFAULT_DEGENERATE_FILE)
    excluded = excluded_of_run(run, excluded_list)
    scored = score_run(results, baseline, excluded, Setting(bool(cfg.use_hidden_eval), cfg.tolerance), warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    table = scored.table
    for k in ks:
        if k > table.num_samples:
            print(f"warning: pass@{k} needs at least {k} samples per problem, the run has {table.num_samples}: "
                  "not reported", file=sys.stderr)
    summary, ci = summarize(table, ks), bootstrap_intervals(table, int(cfg.bootstrap_resamples))
    rows = metric_lines(summary, ci, per_sample(table), sum(scored.memory_refused.values()))
    print(f"run {cfg.run_name} · level {level} · {cfg.hardware} · baseline {baseline.name} (sha256 {baseline.digest})"
          f" · {'hidden' if cfg.use_hidden_eval else 'standard'} correctness"
          + (f" · {scored.tolerance.describe()}" if cfg.tolerance is not None else "")
          + (" · CPU timings, no GPU speedup claim" if timed_on_cpu(baseline) else "")
          + f" · excluded list {excluded_list.describe()}; "
          + (f"of level {level}: #{', #'.join(map(str, sorted(excluded)))}" if excluded else f"none of level {level}"))
    rows += turn_lines(run_dir, level, baseline, excluded, cfg.tolerance, warnings)
    rows += audit_lines(results, cfg, excluded_list)
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    if cfg.output_file:
        write_output(cfg.output_file, cfg, level, baseline, sorted(excluded), summary, ci)
    return 0


def write_output(path: str, cfg: DictConfig, level: int, baseline, excluded: list, summary: dict, ci: dict) -> None:
    """output_file: what the table shows, as JSON, with the setting it was measured in."""
    write_json_atomic(path, _json_safe({
        "run_name": str(cfg.run_name), "level": level, "hardware": str(cfg.hardware), "baseline": str(baseline.path),
        "baseline_sha256": baseline.digest, "use_hidden_eval": bool(cfg.use_hidden_eval), "tolerance": cfg.tolerance,
        "excluded": excluded, "metrics": summary, "ci95": ci}))
    print(f"wrote {path}")


def _json_safe(value):
    """NaN and infinite figures (nothing to measure) as null: strict JSON has no NaN."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def pass_at_k_values(value) -> tuple[int, ...]:
    """The k of a pass_at_k_values key: positive integers, as a list (or one number)."""
    ks = OmegaConf.to_container(value) if isinstance(value, ListConfig) else value
    ks = [ks] if isinstance(ks, int) else ks
    if not isinstance(ks, list) or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in ks):
        raise UserError(f"pass_at_k_values={value!r} must be a list of positive integers, e.g. [1,5,10]")
    return tuple(sorted(set(ks)))


def audit_lines(results, cfg: DictConfig, excluded_list) -> list[tuple[str, str]]:
    """The claims audit of a run with claims (claims.json): per step the share surviving and the geomean,
    then the largest claims that did not survive, with why."""
    audit = claims_audit([results], Baselines(cfg.timing_dir or DEFAULT_TIMING_DIR, str(cfg.hardware)),
                         excluded_list, cfg, [])
    if audit is None:
        return []
    summary = audit["summaries"][-1]
    rows = [(f"claims audit: {label}", f"{_pct(summary['steps'][key]['survive'])} survive, geomean "
             f"{_times(summary['steps'][key]['geomean'])} ({summary['claims']} claims)") for key, label in STEPS]
    rows += [(f"  lost: L{r['level']} #{r['pid']} s{r['sid']} claimed {r['claimed']:.3g}x", f"at {r['lost_at']}: {r['reason']}")
             for r in audit["largest_failed"]]
    return rows + not_compared_lines(audit["not_compared"])


def not_compared_lines(rows: list[dict]) -> list[tuple[str, str]]:
    """The claims not compared, one line per baseline kind and reason (the page lists each)."""
    grouped: dict[tuple, list] = {}
    for r in rows:
        grouped.setdefault((r["kind"], r["reason"]), []).append(r)
    return [(f"  not compared: {len(claims)} claim(s) vs {kind}", f"{reason}: "
             + ", ".join(f"L{r['level']} #{r['pid']} s{r['sid']} {r['claimed']:.3g}x" for r in claims[:6])
             + (", ..." if len(claims) > 6 else "")) for (kind, reason), claims in grouped.items()]


def turn_lines(run_dir: Path, level: int, baseline, excluded: set, tolerance, warnings: list) -> list[tuple[str, str]]:
    """Correct and Fast@1 after each turn of a refinement, judged by the standard checks only."""
    run = Run(run_dir.name, run_dir.name, level, "fp32", run_dir)
    return [(f"turn {t['turn']}: correct / Fast@1 (standard checks)", f"{_pct(t['correct'])} / {_pct(t['fast_1'])}")
            for t in turn_summaries(run, baseline, excluded, tolerance, warnings)]
