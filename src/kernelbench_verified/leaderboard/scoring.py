"""Judging each sample of a run under one setting, into a metrics.SampleTable.

A setting says which evaluation decides correctness (standard eval_results.json, or the hidden
eval_results_hidden.json) and, optionally, a tolerance (atol = rtol) re-applied, stricter or looser, to
the per-case figures the records hold (tolerance_needed; max_abs_diff in older records). Speed and
memory come from the same record as the verdict (a kernel could behave differently in two evaluations),
with upstream's one exception, said wherever it applies: a correct hidden record that was not timed takes
the time of the standard record of the same kernel source (upstream_runs.HiddenTimes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .metrics import SampleTable, summarize
from .identical_code import noise_bound
from .roofline import floor_ms
from .discovery import Baseline, Run, RunResults, load_run_results
from .upstream_runs import HiddenTimes, upstream_failure, upstream_lifts, without_case_data
from ..errors import UserError
from ..measure.memory import CALL_ABOVE_RESIDENT, TOTAL_IN_EVALUATOR, describe, record_method

SHOWN_NAMES = 20   # sample keys a warning lists before "and N more"
# A sample's time is noted as loosely checked when the judge's clock would let a fake of more than this
# share of it through (metadata.judge_clock_catches_from): a 10 % fake is the largest a cited time may hide.
CLOCK_CHECK_BAR = 0.10


@dataclass(frozen=True)
class Setting:
    use_hidden: bool
    tolerance: float | None = None
    review_speedup: float | None = 10.0  # correct samples faster than this are listed for review
    hardware: str | None = None  # for the memory roofline floor (roofline.PEAK_BANDWIDTH)
    d5_gate: bool = False      # D5 (perturbed parameters) must pass too: not by default, so D1-D4 stay upstream's
    shape_gate: bool = False   # no shape variant may fail


@dataclass(frozen=True)
class Verdict:
    compiled: bool
    correct: bool
    runtime_ms: float      # NaN when not timed
    peak_memory: int       # bytes, -1 when not measured
    status: str            # "correct", or why not (eval_status and the failing case)
    memory_method: str = TOTAL_IN_EVALUATOR  # how peak_memory was measured (measure.memory)
    d5: bool | None = None  # D5 passed (robustness.py); None where it did not run
    shapes: bool | None = None  # every shape variant that applied passed; None where none ran


@dataclass
class ToleranceReport:
    """What re-judging at a tolerance did: counts over samples correct at the evaluation tolerance."""
    tolerance: float | None
    checked: int = 0
    rejected: int = 0
    without_data: int = 0
    loosened: int = 0   # incorrect at the evaluation tolerance, correct at this one
    evaluation_atols: set = field(default_factory=set)
    # Incorrect hidden records without per-case figures (upstream-written), judged by upstream's rule
    # (upstream_runs.upstream_lifts), and how many of them it turned correct.
    upstream_checked: int = 0
    upstream_lifted: int = 0

    def describe(self) -> str:
        """One line on which rule applied to how many records (the analysis prints it)."""
        if self.tolerance is None:
            return "each record's own verdict"
        parts = [f"ours on {self.checked} correct record(s) with per-case figures ({self.rejected} rejected) and "
                 f"{self.loosened} incorrect one(s) turned correct"]
        if self.without_data:
            parts.append(f"{self.without_data} correct record(s) without per-case figures keep their verdict")
        if self.upstream_checked:
            parts.append(f"upstream's rule on {self.upstream_checked} incorrect hidden record(s) without per-case "
                         f"figures ({self.upstream_lifted} turned correct)")
        return f"tolerance {self.tolerance:g}: " + "; ".join(parts)


@dataclass
class ScoredRun:
    results: RunResults
    setting: Setting
    pids: list[int]
    names: list[str]
    baseline_ms: list[float]
    table: SampleTable
    verdicts: list[list[Verdict]]
    tolerance: ToleranceReport
    hidden_times: HiddenTimes | None = None   # correct hidden records timed from eval_results.json
    baseline: Baseline | None = None          # the file the speedups are against
    # Correct samples with peaks on both sides measured by different methods (no memory ratio), by
    # (the record's method, the baseline's).
    memory_refused: dict = field(default_factory=dict)


def score_run(results: RunResults, baseline: Baseline, excluded: set[int], setting: Setting,
              warnings: list[str]) -> ScoredRun:
    """Every sample of the run on the baseline's problems of its level, degenerate ones left out."""
    run = results.run
    entries = baseline.levels[run.level]
    pids = sorted(pid for pid in entries if pid not in excluded)
    _refuse_other_problem_files(results, entries, baseline)
    verdict_records = _verdict_records(results, setting, warnings)
    report = ToleranceReport(setting.tolerance)
    times = HiddenTimes(run) if setting.use_hidden and results.hidden is not None else None
    missing_hidden = []
    verdicts = []
    for pid in pids:
        row = []
        for sid in range(results.num_samples):
            standard = (results.standard or {}).get((pid, sid))
            judged = verdict_records.get((pid, sid))
            if setting.use_hidden and judged is None and standard is not None and standard.get("compiled"):
                missing_hidden.append(f"{pid}_{sid}")
            verdict = _verdict(standard, judged, setting, report)
            if times is not None and verdict.correct and not verdict.runtime_ms > 0:
                verdict = _timed_from_standard(verdict, times.take(pid, sid, judged, standard))
            row.append(verdict)
        verdicts.append(row)
    _warn_unknown_problems(results, entries, excluded, baseline.name, warnings)
    if missing_hidden and results.hidden is not None:
        warnings.append(f"run {run.name}: {len(missing_hidden)} compiled sample(s) missing from {run.name}/"
                        f"eval_results_hidden.json count as incorrect: {_listed(missing_hidden)}")
    _warn_hidden_times(run.name, times, warnings)
    bounds = [noise_bound(run.level, pid, setting.hardware, entries[pid].problem_sha256) for pid in pids]
    table = _table(verdicts, [entries[pid] for pid in pids], bounds)
    _warn_implausible(run.name, pids, table.speedup, setting.review_speedup, warnings)
    # The floor comes from the shipped catalog's footprints: a run of other problem files has none.
    own_problems = run.folders.own_problems
    floors = [floor_ms(run.level, pid, setting.hardware) if setting.hardware and not own_problems else None
              for pid in pids]
    _warn_below_floor(run.name, pids, table.speedup, [entries[pid].mean_ms for pid in pids], floors, warnings)
    _warn_within_noise(run.name, pids, table.speedup, bounds, setting.hardware, warnings)
    _warn_unchecked(run.name, pids, table.speedup, verdict_records, warnings)
    refused = memory_refused(verdicts, [entries[pid] for pid in pids])
    _warn_memory_refused(run.name, baseline, refused, warnings)
    return ScoredRun(results, setting, pids, [entries[pid].problem.removesuffix(".py") for pid in pids],
                     [entries[pid].mean_ms for pid in pids], table, verdicts, report, times, baseline, refused)


UNTIMED_NOTE = " (not timed: the evaluation stopped at its failure)"


def _timed_from_standard(verdict: Verdict, standard: dict | None) -> Verdict:
    """A correct hidden verdict without a time, with the time and memory of the standard record of the
    same kernel source (HiddenTimes.take), said in its status; unchanged when there is none to take."""
    if standard is None:
        return verdict
    own = verdict.peak_memory > 0
    memory = verdict.peak_memory if own else _number(standard.get("peak_memory"))
    return Verdict(verdict.compiled, True, _runtime(standard), int(memory),
                   verdict.status.replace(UNTIMED_NOTE, "") + " · time from eval_results.json (the hidden "
                   "evaluation did not time it; same kernel source)",
                   verdict.memory_method if own else record_method(standard))


def _warn_hidden_times(run: str, times: HiddenTimes | None, warnings: list[str]) -> None:
    if times is None:
        return
    if times.borrowed:
        warnings.append(f"run {run}: {len(times.borrowed)} correct sample(s) the hidden evaluation did not time "
                        f"take their time from eval_results.json, the standard evaluation of the same kernel "
                        f"source, as upstream's readers take every time; that evaluation checked the visible "
                        f"inputs only, so a kernel that behaves otherwise on hidden inputs may have been timed "
                        f"on a shortcut (evaluate with measure_performance=True for times judged with the hidden "
                        f"tests): {_listed(times.borrowed)}")
    if times.untimed:
        warnings.append(f"run {run}: {len(times.untimed)} correct sample(s) the hidden evaluation did not time have no "
                        f"time in eval_results.json either (not evaluated there, or not correct there): solved "
                        f"without a speedup: {_listed(times.untimed)}")
    if times.refused:
        warnings.append(f"run {run}: {len(times.refused)} correct sample(s) the hidden evaluation did not time "
                        f"have no speedup: eval_results.json timed another kernel source, or one that cannot "
                        f"be told (no kernel_sha256 recorded and the kernel file missing or changed since): "
                        f"{_listed(times.refused)}")


def _refuse_other_problem_files(results: RunResults, entries: dict, baseline: Baseline) -> None:
    """A speedup compares two timings of one problem file: refuse a run whose records name a
    different file digest than the baseline's (the demo's toy problems share ids with level 1's).
    Files written before digests were recorded are not checked."""
    differing = set()
    for records in (results.standard or {}, results.hidden or {}):
        for (pid, _), record in records.items():
            ran = (record.get("metadata") or {}).get("problem_sha256")
            timed = entries[pid].problem_sha256 if pid in entries else None
            if ran and timed and ran != timed:
                differing.add(pid)
    if differing:
        level = results.run.level
        raise UserError(f"run {results.run.name} evaluated problems {_listed(f'L{level}/{p}' for p in sorted(differing))} "
                        f"from files other than the ones baseline {baseline.path} timed (their sha256 differ); "
                        f"time a baseline of the run's own problem files (generate_baseline_time.py problems_dir=...)")


def _verdict_records(results: RunResults, setting: Setting, warnings: list[str]) -> dict:
    if setting.use_hidden:
        if results.hidden is None:
            warnings.append(f"run {results.run.name} has no eval_results_hidden.json: with --use_hidden_eval "
                            f"none of its samples counts as correct")
        return results.hidden or {}
    if results.standard is None:
        warnings.append(f"run {results.run.name} has no standard evaluation in eval_results.json (no file, or only "
                        f"entries derived from its hidden evaluation): its standard correctness is "
                        f"taken from eval_results_hidden.json (stricter)")
        return results.hidden or {}
    return results.standard


def _verdict(standard: dict | None, judged: dict | None, setting: Setting, report: ToleranceReport) -> Verdict:
    if judged is None:
        compiled = bool(standard and standard.get("compiled"))
        return Verdict(compiled, False, float("nan"), -1,
                       "missing from the hidden evaluation" if compiled else "not evaluated")
    compiled = bool(judged.get("compiled")) or bool(judged.get("correctness"))
    correct = judged.get("correctness") is True
    status = "correct" if correct else _failure(judged)
    if correct and setting.tolerance is not None:
        correct, status = _rejudge(judged, setting.tolerance, report)
    elif setting.tolerance is not None and _passes_when_loosened(judged, setting.tolerance):
        correct, status = True, "correct at the given tolerance" + UNTIMED_NOTE
        report.loosened += 1
    elif setting.tolerance is not None and setting.use_hidden and without_case_data(judged):
        report.upstream_checked += 1
        if upstream_lifts(judged, setting.tolerance):
            correct, status = True, (f"correct by upstream's tolerance rule: failed standard trials only, each "
                                     f"by less than {setting.tolerance:g}")
            report.upstream_lifted += 1
    if correct and (why := robustness_gate(judged, setting)):
        correct, status = False, why
    d5 = d5_passes(judged) if (judged.get("metadata") or {}).get("perturbed_parameters") else None
    shapes = generalises(judged)
    if correct:
        status += _robustness_notes(judged, d5, shapes)
    status += _review_notes(judged)
    runtime = _runtime(judged)
    memory = judged.get("peak_memory", -1)
    return Verdict(compiled, correct, runtime if runtime > 0 else float("nan"),
                   int(memory) if isinstance(memory, (int, float)) else -1, status, record_method(judged), d5, shapes)


def d5_passes(record: dict) -> bool:
    """D5 passed, or had nothing to perturb; unchecked (reference parameters without a counterpart),
    failed or not run do not pass."""
    return (record.get("metadata", {}).get("perturbed_parameters") or {}).get("status") in ("passed", "not_applicable")


def generalises(record: dict) -> bool | None:
    """Whether every shape variant that applied passed; None where none applied (or none ran)."""
    statuses = [v.get("status") for v in record.get("metadata", {}).get("shape_variants") or []]
    ran = [s for s in statuses if s in ("passed", "failed", "not_run")]
    return all(s == "passed" for s in ran) if ran else None


def _robustness_notes(record: dict, d5: bool | None, shapes: bool | None) -> str:
    """A correct sample's flags beyond D1-D4, for the page's per-sample view."""
    notes = []
    if d5 is False:
        notes.append(f"D5 {record['metadata']['perturbed_parameters'].get('status', 'not passed')}")
    if shapes is False:
        failed = [v.get("case") for v in record["metadata"]["shape_variants"] if v.get("status") != "passed"
                  and v.get("status") != "not_applicable"]
        notes.append(f"fails other shapes ({', '.join(map(str, failed))})")
    return "".join(f" · {note}" for note in notes)


def robustness_counts(verdicts: list[list[Verdict]]) -> dict:
    """Among correct samples: how many D5 checked and passed, how many shape variants checked and all
    passed (the page shows them beside the D1-D4 headline)."""
    correct = [v for row in verdicts for v in row if v.correct]
    return {"correct": len(correct),
            "d5_checked": sum(v.d5 is not None for v in correct), "d5_passed": sum(v.d5 is True for v in correct),
            "shapes_checked": sum(v.shapes is not None for v in correct),
            "shapes_passed": sum(v.shapes is True for v in correct)}


def robustness_gate(record: dict, setting: Setting) -> str | None:
    """Why a correct record fails the gates the setting adds (d5_gate, shape_gate), or None."""
    if setting.d5_gate and not d5_passes(record):
        status = (record.get("metadata", {}).get("perturbed_parameters") or {}).get("status", "not run")
        return f"D5 {status} (perturbed parameters)"
    if setting.shape_gate and generalises(record) is False:
        return "a shape variant failed"
    return None


def _runtime(record: dict | None) -> float:
    return _number(record.get("runtime") if isinstance(record, dict) else None)


def _number(value) -> float:
    """A recorded figure as a float, -1 when it is missing or not a number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0


def _failure(record: dict) -> str:
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    status = str(record.get("eval_status") or upstream_failure(record))
    case = metadata.get("failed_case") or metadata.get("case")
    return f"{status} on {case}" if case else status


def _review_notes(record: dict) -> str:
    """Static-check findings and runtime integrity flags, shown beside the verdict for review."""
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    static = sorted({f"{f.get('code')} ({f.get('severity')})" for f in metadata.get("static_findings") or []
                     if isinstance(f, dict) and f.get("severity") in ("warn", "error")})
    flags = sorted({str(flag).split(":")[0] for flag in metadata.get("integrity") or []})
    if metadata.get("sandbox") == "none":
        flags.append("unjailed (sandbox=none)")
    notes = ([f"static: {', '.join(static)}"] if static else []) + ([f"flags: {', '.join(flags)}"] if flags else [])
    if isinstance(metadata.get("clock_retry"), dict):  # the judge's second evaluation (Judge.judged_again)
        notes.append("evaluated twice: the judge's clock doubted the first attempt's time")
    if metadata.get("runtime_withheld"):
        notes.append("time withheld, not counted in speedups")
    elif _number(metadata.get("judge_clock_catches_from")) > CLOCK_CHECK_BAR:
        share = metadata["judge_clock_catches_from"]
        notes.append("time unchecked: the judge's clock catches no fake at this speed" if share >= 1 else
                     f"time checked loosely: the judge's clock catches fakes over {share:.0%} of it")
    return "".join(f" · {note}" for note in notes)


def _case_tolerance(case: dict) -> float | None:
    """The smallest tolerance t at which a case passes with atol = rtol = t: its recorded
    tolerance_needed, or (records before it) its max |out - ref|, which passes at any t at least that
    large; exact outputs (integer tensors, 0 mismatches) need 0; None if unknown."""
    for key in ("tolerance_needed", "max_abs_diff"):
        if isinstance(case.get(key), (int, float)) and not isinstance(case.get(key), bool):
            return float(case[key])
    if case.get("passed") and case.get("mismatches") == 0:
        return 0.0
    return None


def _passes_when_loosened(record: dict, tolerance: float) -> bool:
    """An incorrect record that passes at `tolerance`: every case was compared and recorded, it failed on
    a difference only (no policy such as input_mutated, no timed-call audit, no crash, no shape or integer
    mismatch), and every case passes at atol = rtol = `tolerance` (_case_tolerance)."""
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    failed_case = str(metadata.get("failed_case") or "")
    if (record.get("eval_status") != "incorrect" or metadata.get("all_cases_recorded") is not True
            or failed_case.startswith(("timed_call_", "input_mutated", "output_aliases_input"))):
        return False
    cases = [c for c in metadata.get("cases") or [] if isinstance(c, dict)]
    needed = [_case_tolerance(c) for c in cases]
    return bool(cases) and all(t is not None and t <= tolerance for t in needed)


def _rejudge(record: dict, tolerance: float, report: ToleranceReport) -> tuple[bool, str]:
    """A correct record passes only if every case passes at atol = rtol = tolerance (_case_tolerance);
    without the data it keeps its evaluation verdict (counted, and stated on the page)."""
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    if isinstance(metadata.get("atol"), (int, float)):
        report.evaluation_atols.add(float(metadata["atol"]))
    cases = [c for c in metadata.get("cases") or [] if isinstance(c, dict)]
    needed = [_case_tolerance(c) for c in cases]
    if not cases or any(t is None for t in needed):
        report.without_data += 1
        return True, "correct"
    report.checked += 1
    worst = max(range(len(cases)), key=lambda i: needed[i])
    if needed[worst] <= tolerance:
        return True, "correct"
    report.rejected += 1
    return False, f"needs tolerance {needed[worst]:.3g} > {tolerance:g} on {cases[worst].get('case')}"


def _table(verdicts: list[list[Verdict]], entries: list, noise_bounds: list) -> SampleTable:
    shape = (len(verdicts), len(verdicts[0]) if verdicts else 0)
    correct = np.array([[v.correct for v in row] for row in verdicts], dtype=bool).reshape(shape)
    compiled = np.array([[v.compiled for v in row] for row in verdicts], dtype=bool).reshape(shape)
    runtime = np.array([[v.runtime_ms for v in row] for row in verdicts], dtype=float).reshape(shape)
    kernel_memory = np.array([[v.peak_memory for v in row] for row in verdicts], dtype=float).reshape(shape)
    baseline_ms = np.array([e.mean_ms for e in entries], dtype=float)[:, None]
    baseline_memory = np.array([e.peak_memory for e in entries], dtype=float)[:, None]
    same_method = np.array([[v.memory_method == e.memory_method for v in row] for row, e in zip(verdicts, entries)],
                           dtype=bool).reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        speedup = np.where(correct & (runtime > 0), baseline_ms / runtime, np.nan)
        memory = np.where((kernel_memory > 0) & (baseline_memory > 0) & same_method,
                          baseline_memory / kernel_memory, np.nan)
    known = any(b is not None for b in noise_bounds)
    bounds = np.array([np.nan if b is None else b for b in noise_bounds], dtype=float) if known else None
    return SampleTable(correct, compiled | correct, speedup, memory, bounds)


def memory_refused(verdicts: list[list[Verdict]], entries: list) -> dict:
    """{(record's method, baseline's method): count} of correct samples whose peak and the baseline's
    were both measured, by different methods (measure.memory): dividing them compares unlike figures."""
    refused: dict = {}
    for row, entry in zip(verdicts, entries):
        for v in row:
            if v.correct and v.peak_memory > 0 and entry.peak_memory > 0 and v.memory_method != entry.memory_method:
                key = (v.memory_method, entry.memory_method)
                refused[key] = refused.get(key, 0) + 1
    return refused


def _warn_memory_refused(run: str, baseline: Baseline, refused: dict, warnings: list) -> None:
    for (kernel, timed), count in sorted(refused.items()):
        how = (f"re-time the baseline with generate_baseline_time.py force=true" if kernel == CALL_ABOVE_RESIDENT
               else f"evaluate the run again, or compare with a baseline measured as {kernel}")
        warnings.append(f"run {run}: no memory efficiency for {count} correct sample(s): their peaks were measured "
                        f"as {describe(kernel)}, baseline {baseline.name}'s as {describe(timed)}; {how}")


def _warn_implausible(run: str, pids: list, speedup: np.ndarray, bound: float | None, warnings: list) -> None:
    """Correct samples faster than `bound` times the baseline: kernels that good are rare, hacks are not."""
    if not bound:
        return
    rows, cols = np.nonzero(np.nan_to_num(speedup, nan=0.0) > bound)
    if len(rows):
        found = [f"{pids[r]}_{c} ({speedup[r, c]:.1f}x)" for r, c in zip(rows, cols)]
        warnings.append(f"run {run}: {len(found)} correct sample(s) more than {bound:g}x faster than the baseline, "
                        f"review them: {_listed(found)}")


def _warn_below_floor(run: str, pids: list, speedup: np.ndarray, baseline_ms: list, floors: list,
                      warnings: list) -> None:
    """Correct samples timed faster than moving their inputs and outputs once at peak bandwidth."""
    found = []
    for row, (pid, base, floor) in enumerate(zip(pids, baseline_ms, floors)):
        for sid, s in enumerate(speedup[row]):
            if floor is not None and np.isfinite(s) and base / s < floor:
                found.append(f"{pid}_{sid} ({base / s:.3g} ms < {floor:.3g} ms)")
    if found:
        warnings.append(f"run {run}: {len(found)} correct sample(s) faster than the memory roofline floor "
                        f"(inputs + outputs at peak bandwidth), review them: {_listed(found)}")


def _warn_unchecked(run: str, pids: list, speedup: np.ndarray, records: dict, warnings: list) -> None:
    """Samples with a speedup whose time the judge's clock could not check at all: a fake of the whole
    of it would have kept its time (metadata.judge_clock_catches_from of 1 or more, calls under ~0.1 ms on
    the H200), so the speedup rests on the kernel's own report."""
    found = []
    for row, pid in enumerate(pids):
        for sid, s in enumerate(speedup[row]):
            metadata = (records.get((pid, sid)) or {}).get("metadata") or {}
            if np.isfinite(s) and _number(metadata.get("judge_clock_catches_from")) >= 1:
                found.append(f"{pid}_{sid} ({s:.1f}x)")
    if found:
        warnings.append(f"run {run}: {len(found)} correct sample(s) timed too short for the judge's clock to "
                        f"catch any faked time, so their speedups rest on the kernel's own report: {_listed(found)}")


def _warn_within_noise(run: str, pids: list, speedup: np.ndarray, bounds: list, hardware: str | None,
                       warnings: list) -> None:
    """Correct samples faster than the baseline by no more than the same code as its own candidate was
    (leaderboard.identical_code): the harness and the host move that problem's time that far."""
    found = []
    for row, (pid, bound) in enumerate(zip(pids, bounds)):
        for sid, s in enumerate(speedup[row]):
            if bound is not None and np.isfinite(s) and 1.0 < s <= bound:
                found.append(f"{pid}_{sid} ({s:.3f}x, identical code up to {bound:.3f}x)")
    if found:
        warnings.append(f"run {run}: {len(found)} correct sample(s) faster than the baseline by no more than the "
                        f"reference evaluated as its own candidate was on {hardware} "
                        f"(results/identical_code/{hardware}.json), so no measured speedup: {_listed(found)}")


def _warn_unknown_problems(results: RunResults, entries: dict, excluded: set[int], baseline: str,
                           warnings: list[str]) -> None:
    seen = {pid for records in (results.standard or {}, results.hidden or {}) for (pid, _) in records}
    unknown = sorted(seen - set(entries) - excluded)
    if unknown:
        warnings.append(f"run {results.run.name}: problems {_listed(map(str, unknown))} are not in baseline "
                        f"{baseline} level {results.run.level}; left out")
    absent = sorted(set(entries) - excluded - seen)
    if absent:
        warnings.append(f"run {results.run.name}: no records for {len(absent)} problem(s) of the level "
                        f"({_listed(map(str, absent))}); they count as failed")


def _listed(names) -> str:
    names = list(names)
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else "")


def turn_summaries(run: Run, baseline: Baseline, excluded: set[int], tolerance, warnings: list[str]) -> list[dict]:
    """Correct and Fast@1 after each turn of a refinement (num_turns > 1: runs/{run}/turns/turn_{t}/),
    judged as the turns were, by the standard checks only; [] for a run of one turn."""
    summaries, turn = [], 0
    while (folder := Path(run.path) / "turns" / f"turn_{turn}").is_dir():
        results = load_run_results(Run(folder.name, run.model, run.level, run.precision, folder), warnings)
        if results is not None:
            metrics = summarize(score_run(results, baseline, excluded, Setting(False, tolerance), warnings).table)
            summaries.append({"turn": turn, "correct": metrics["correct"], "fast_1": metrics["fast_p"]["1"]})
        turn += 1
    return summaries
