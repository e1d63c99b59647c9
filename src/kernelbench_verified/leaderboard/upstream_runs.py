"""Reading records upstream's evaluator wrote (facebookresearch/kernel_bench_verified), with upstream's meaning.

Its records carry no eval_status and no per-case figures: a failure is told by metadata fields
(compilation_error, runtime_error, max_difference of the standard trials, hidden_failed_configs, ...), and
its leaderboard's tolerance flag lifts a hidden failure whose only fault is a standard-trial difference
under the tolerance. Its documented hidden evaluation runs with measure_performance=False, and its readers
take every time from eval_results.json: `HiddenTimes` does the same for a correct hidden record without a
time, but only when both records are of the same kernel source, and counts what it did for the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..results import kernel_digest
from .discovery import HIDDEN_RESULTS, STANDARD_RESULTS, Run

# A hidden record's failure that upstream's tolerance rule never lifts.
_NOT_A_DIFFERENCE = ("hidden_failed_configs", "hidden_runtime_error", "runtime_error")


def _metadata(record: dict) -> dict:
    metadata = record.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def without_case_data(record: dict) -> bool:
    """A record with no per-case figures (upstream-written): our records always hold metadata.cases."""
    return not isinstance(_metadata(record).get("cases"), list)


def upstream_lifts(record: dict, tolerance: float) -> bool:
    """Upstream's leaderboard rule: an incorrect hidden record that failed on standard trials only (none of
    hidden_failed_configs, hidden_runtime_error, runtime_error) is correct when the largest of its recorded
    metadata.max_difference values is below `tolerance`."""
    metadata = _metadata(record)
    if record.get("correctness") is True or any(metadata.get(key) for key in _NOT_A_DIFFERENCE):
        return False
    differences = metadata.get("max_difference")
    if not isinstance(differences, list):
        return False
    try:
        values = [float(d) for d in differences if d]
    except (TypeError, ValueError):
        return False
    return bool(values) and all(math.isfinite(v) for v in values) and max(values) < tolerance


def upstream_failure(record: dict) -> str:
    """What an upstream-written record without eval_status failed on, from its metadata fields."""
    metadata = _metadata(record)
    if isinstance(metadata.get("eval_status"), str):  # its batch runner's timeout and eval_exception
        return metadata["eval_status"]
    if metadata.get("compilation_error") is not None or not record.get("compiled"):
        return "compile_error"
    if metadata.get("hidden_failed_configs"):
        return "incorrect on hidden " + ", ".join(map(str, metadata["hidden_failed_configs"]))
    for key in ("hidden_runtime_error", "hidden_check_error"):
        if metadata.get(key):
            return "runtime_error on a hidden input"
    if any(metadata.get(key) for key in ("runtime_error", "cuda_error", "other_error")):
        return "runtime_error"
    if metadata.get("max_difference"):
        return "incorrect on a standard trial"
    return "incorrect"


def usable_time(record: dict | None) -> float | None:
    runtime = record.get("runtime") if isinstance(record, dict) else None
    if isinstance(runtime, bool) or not isinstance(runtime, (int, float)) or not math.isfinite(runtime) or runtime <= 0:
        return None
    return float(runtime)


@dataclass
class HiddenTimes:
    """Times for correct hidden records that have none (measure_performance=False, or a verdict lifted
    by a tolerance), taken from the standard record of the same sample when both are of the same kernel
    source. A record's source is its metadata.kernel_sha256; without one (upstream's records, ours before
    it was recorded), the kernel file in the run folder if it has not changed since that result file was
    last written; otherwise unknown, and an unknown source is never taken as the same."""
    run: Run
    borrowed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    untimed: list[str] = field(default_factory=list)   # no standard record with a time to take
    _files: dict = field(default_factory=dict)

    def take(self, pid: int, sid: int, hidden: dict, standard: dict | None) -> dict | None:
        """The standard record whose time and memory stand for `hidden`'s, or None (and why, counted)."""
        if _metadata(hidden).get("runtime_withheld"):
            return None  # withheld by the judge on purpose: no other evaluation's time replaces it
        if usable_time(standard) is None:
            self.untimed.append(f"{pid}_{sid}")
            return None
        mine, theirs = self._source(hidden, HIDDEN_RESULTS, pid, sid), self._source(standard, STANDARD_RESULTS, pid, sid)
        if mine is not None and mine == theirs:
            self.borrowed.append(f"{pid}_{sid}")
            return standard
        self.refused.append(f"{pid}_{sid} ({'another kernel source' if mine and theirs else 'kernel source unknown'})")
        return None

    def _source(self, record: dict, results_file: str, pid: int, sid: int) -> str | None:
        digest = _metadata(record).get("kernel_sha256")
        if isinstance(digest, str) and digest:
            return digest
        written = _mtime(self.run.path / results_file)
        if (pid, sid) not in self._files:
            text, _ = self.run.kernel_text(pid, sid)
            self._files[(pid, sid)] = None if text is None else (kernel_digest(text), _mtime(self.run.kernel_path(pid, sid)))
        known = self._files[(pid, sid)]
        return known[0] if known and written is not None and known[1] is not None and known[1] <= written else None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None
