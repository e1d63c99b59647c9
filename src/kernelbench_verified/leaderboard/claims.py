"""The claims audit: each speedup a corpus claimed (runs/{run}/claims.json, import_kernels.py) beside what
survives each step of an honest evaluation.

Steps, each applied on top of the one before:
  claimed    the corpus's figure;
  retimed    re-timed here against the same kind of baseline the claim used (standard correctness);
  tf32       against the TF32 baseline (baseline_time_torch_tf32);
  hidden     correct only if every hidden distribution passed (eval_results_hidden.json);
  static     samples with an error-level static finding removed.
A claim survives a step if it survived the step before and its sample is correct there and faster than
the baseline (> 1x): the hidden evaluation times the sample again, so a claim lost against the TF32
baseline could otherwise come back on the hidden run's timings. Per step
and per level (and over all levels) the audit gives the share of claims that survive and the geomean of
the speedups of the samples still correct. Claims against a baseline this harness does not time (CUDA
graphs, ...) are listed as such and never compared.
"""

from __future__ import annotations

import math

import numpy as np

from ..run_problems import load_claims
from .discovery import Baselines, Excluded, RunResults, excluded_of_run
from .metrics import geomean
from .scoring import Setting, score_run

TF32_BASELINE = "baseline_time_torch_tf32"
STEPS = (("claimed", "claimed"),
         ("retimed", "re-timed here, same kind of baseline"),
         ("tf32", "against the TF32 baseline"),
         ("hidden", "with hidden-test correctness"),
         ("static", "without error-level static findings"))
LARGEST_SHOWN = 20


def claims_audit(loaded: list[RunResults], baselines: Baselines, excluded: Excluded, options,
                 warnings: list[str]) -> dict | None:
    """The audit's data for the page and the analysis: per-claim rows, per-level and overall step summaries,
    the largest claims that did not survive, and the claims not compared; None when no run has claims."""
    audited, not_compared = [], []
    for results in loaded:
        claims = load_claims(results.run.path)
        if claims:
            scorer = _Scorer(results, baselines, excluded_of_run(results.run, excluded), options.hardware)
            for (pid, sid), items in sorted(claims.items()):
                for claim in items:
                    row = scorer.audit(pid, sid, claim)
                    (audited if row["compared"] else not_compared).append(row)
    if not audited and not not_compared:
        return None
    levels = sorted({row["level"] for row in audited})
    summaries = [summarize_steps(f"level {level}", [r for r in audited if r["level"] == level]) for level in levels]
    summaries.append(summarize_steps("all", audited))
    failed = sorted((r for r in audited if not r["survives"]["static"]), key=lambda r: -r["claimed"])
    if not_compared:
        warnings.append(f"claims audit: {len(not_compared)} claim(s) not compared (baseline kinds not timed here, "
                        f"or their baseline or problem not scored): listed on the page")
    return {"steps": [{"key": key, "label": label} for key, label in STEPS], "summaries": summaries,
            "rows": audited, "largest_failed": failed[:LARGEST_SHOWN], "not_compared": not_compared}


def summarize_steps(label: str, rows: list[dict]) -> dict:
    """Per step: claims compared, the share surviving, and the geomean over samples still correct."""
    steps = {}
    for key, _ in STEPS:
        values = [row["speedup"][key] for row in rows]
        steps[key] = {"survive": float(np.mean([row["survives"][key] for row in rows])) if rows else float("nan"),
                      "geomean": geomean([v for v in values if v is not None]),
                      "counted": sum(v is not None for v in values)}
    return {"label": label, "claims": len(rows), "steps": steps}


class _Scorer:
    """One run's samples scored once per (baseline, correctness) the audit needs."""

    def __init__(self, results: RunResults, baselines: Baselines, excluded: set[int], hardware: str | None):
        self.results, self.baselines, self.excluded, self.hardware = results, baselines, excluded, hardware
        self.scored: dict = {}

    def scored_run(self, baseline_name: str, use_hidden: bool):
        key = (baseline_name, use_hidden)
        if key not in self.scored:
            baseline = self.baselines.get(self.results.run, baseline_name)
            usable = baseline is not None and self.results.run.level in baseline.levels
            self.scored[key] = score_run(self.results, baseline, self.excluded,
                                         Setting(use_hidden, None, None, self.hardware), []) if usable else None
        return self.scored[key]

    def audit(self, pid: int, sid: int, claim: dict) -> dict:
        run = self.results.run
        row = {"run": run.name, "model": run.model, "level": run.level, "pid": pid, "sid": sid,
               "kind": str(claim.get("kind")), "baseline": claim.get("baseline"),
               "claimed": float(claim.get("claimed") or float("nan")), "compared": False, "reason": ""}
        if not claim.get("baseline"):
            row["reason"] = f"claimed against {row['kind']}, a baseline this harness does not time"
            return row
        if pid in self.excluded:
            row["reason"] = "the problem is excluded (degenerate) from the scores"
            return row
        stages = {"retimed": self.scored_run(claim["baseline"], False), "tf32": self.scored_run(TF32_BASELINE, False),
                  "hidden": self.scored_run(TF32_BASELINE, True)}
        missing = [name for name, stage in (("retimed", claim["baseline"]), ("tf32", TF32_BASELINE))
                   if stages[name] is None]
        if missing:
            row["reason"] = (f"baseline {claim['baseline'] if missing[0] == 'retimed' else TF32_BASELINE} "
                             f"not timed for level {run.level} yet")
            return row
        row["compared"] = True
        speedup, reasons = {"claimed": row["claimed"]}, {}
        for name, scored in stages.items():
            speedup[name], reasons[name] = _sample_speedup(scored, pid, sid)
            records = self.results.hidden if name == "hidden" else self.results.standard
            status, sep, notes = reasons[name].partition(" · ")
            reasons[name] = status + _difference((records or {}).get((pid, sid))) + sep + notes
        errors = _static_errors(self.results, pid, sid)
        speedup["static"] = None if errors else speedup["hidden"]
        reasons["static"] = f"error-level static findings: {', '.join(errors)}" if errors else reasons["hidden"]
        survives, alive = {}, True
        for key, _ in STEPS:
            alive = survives[key] = alive and speedup[key] is not None and speedup[key] > 1.0
        first = next((key for key, _ in STEPS if not survives[key]), None)
        if first is None:
            reason = ""
        elif speedup[first] is not None:
            reason = f"{speedup[first]:.3g}x is no speedup"
        else:
            reason = reasons[first]
        row.update(speedup=speedup, survives=survives, lost_at=first, reason=reason)
        return row


def _difference(record: dict | None) -> str:
    """The failed case's largest difference from the reference, and the tolerance, as the record holds them."""
    metadata = (record or {}).get("metadata") or {}
    failed = metadata.get("failed_case")
    tolerance = "".join(f", {key} {metadata[key]:g}" for key in ("atol", "rtol")
                        if isinstance(metadata.get(key), (int, float)))
    for case in metadata.get("cases") or []:
        if isinstance(case, dict) and failed and case.get("case") == failed \
                and isinstance(case.get("max_abs_diff"), (int, float)):
            return f" (max |out - ref| {case['max_abs_diff']:.3g}{tolerance})"
    return ""


def _sample_speedup(scored, pid: int, sid: int) -> tuple[float | None, str]:
    """(speedup or None when not correct and timed, the verdict's status)."""
    if pid not in scored.pids:
        return None, "no record of the problem"
    row = scored.pids.index(pid)
    if sid >= scored.table.num_samples:
        return None, "not evaluated"
    value = float(scored.table.speedup[row, sid])
    status = scored.verdicts[row][sid].status
    return (value if math.isfinite(value) else None), status


def _static_errors(results: RunResults, pid: int, sid: int) -> list[str]:
    """Error-level static findings the evaluation recorded for the sample (hidden record, else standard)."""
    found = set()
    for records in (results.hidden or {}, results.standard or {}):
        metadata = (records.get((pid, sid)) or {}).get("metadata") or {}
        found |= {str(f.get("code")) for f in metadata.get("static_findings") or []
                  if isinstance(f, dict) and f.get("severity") == "error"}
    return sorted(found)
