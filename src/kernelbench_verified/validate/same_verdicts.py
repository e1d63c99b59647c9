"""Whether two evaluations of the same samples reached the same verdicts, sample by sample.

Made for a change to the evaluator that must not change what it decides: evaluate one run folder with
the code before and after, on the same machine and with the same `input_salt`, then compare. Per sample
it compares what the judge decides and nothing it measures: the status, whether it compiled, the failed
case, which correctness cases failed and why, whether the audits passed, the integrity flags' codes,
whether the time was withheld, and the static findings' codes. Times, error texts and which timed calls
were audited (chosen at random after the timed phase) may differ between two honest evaluations; a timed
call that failed an audit is compared as "timed_call".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..results import is_derived, read_json, sample_order
from ..verdicts import flag_codes

RESULT_FILES = ("eval_results_hidden.json", "eval_results.json")
_TIMED_CALL = re.compile(r"^timed_call_\d+$")


def verdict(record: dict) -> dict:
    """What the judge decided about one sample, as the comparison sees it."""
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    failed_case = metadata.get("failed_case")
    if isinstance(failed_case, str) and _TIMED_CALL.match(failed_case):
        failed_case = "timed_call"
    audits = metadata.get("timed_checks") or []
    return {
        "eval_status": record.get("eval_status"),
        "compiled": bool(record.get("compiled")),
        "failed_case": failed_case,
        "failed_cases": sorted(f"{c.get('case')}:{c.get('policy', 'compared')}" for c in metadata.get("cases") or []
                               if isinstance(c, dict) and not c.get("passed")),
        "audits": "none" if not audits else "passed" if all(a.get("passed") for a in audits) else "failed",
        "integrity": sorted(set(flag_codes(metadata.get("integrity")))),
        "runtime_withheld": bool(metadata.get("runtime_withheld")),
        "static_findings": sorted({f.get("code") for f in metadata.get("static_findings") or [] if isinstance(f, dict)}),
    }


@dataclass
class Comparison:
    """Two runs' verdicts side by side: the samples both hold, the differences, and each side's statuses."""

    compared: int = 0
    only_in: dict = field(default_factory=lambda: {"a": [], "b": []})
    differences: list = field(default_factory=list)  # (sample key, what, in a, in b)
    statuses: dict = field(default_factory=dict)  # status: (count in a, count in b)

    @property
    def same(self) -> bool:
        return not self.differences and not self.only_in["a"] and not self.only_in["b"]

    def summary(self) -> dict:
        return {"same": self.same, "compared": self.compared, "differences": len(self.differences),
                "only_in_a": self.only_in["a"], "only_in_b": self.only_in["b"],
                "statuses": {status: list(counts) for status, counts in sorted(self.statuses.items())},
                "differing": [list(d) for d in self.differences]}


def by_kernel(records: dict) -> dict | None:
    """The records that hold a kernel, keyed "{key}" by their problem's and kernel's digests, so that a
    sample moved to another slot (a fixture added before it shifts the sample ids) still pairs with itself;
    None when a record lacks the digests or two records share them (then samples pair by key)."""
    keyed: dict = {}
    for key, record in records.items():
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        if record.get("eval_status") == "missing_kernel":
            continue
        digests = (metadata.get("problem_sha256"), metadata.get("kernel_sha256"))
        if None in digests or digests in keyed:
            return None
        keyed[digests] = key
    return keyed


def _pairs(a: dict, b: dict) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(pairs of keys, keys only in a, keys only in b): by content where both runs record it, else by key."""
    left, right = by_kernel(a), by_kernel(b)
    if left is None or right is None:
        return [(k, k) for k in sorted(set(a) & set(b), key=sample_order)], sorted(set(a) - set(b)), sorted(set(b) - set(a))
    pairs = sorted(((left[d], right[d]) for d in set(left) & set(right)), key=lambda p: sample_order(p[0]))
    return (pairs, sorted((left[d] for d in set(left) - set(right)), key=sample_order),
            sorted((right[d] for d in set(right) - set(left)), key=sample_order))


def compare_records(a: dict, b: dict) -> Comparison:
    """Compare two result files' records ({key: record}); entries derived from another file are skipped.
    Samples pair by their problem and kernel source where both runs record their digests (a difference
    names a moved sample "a_key->b_key"), else by key."""
    a = {k: r for k, r in a.items() if not is_derived(r)}
    b = {k: r for k, r in b.items() if not is_derived(r)}
    pairs, only_a, only_b = _pairs(a, b)
    comparison = Comparison(only_in={"a": only_a, "b": only_b})
    for key_a, key_b in pairs:
        comparison.compared += 1
        left, right = verdict(a[key_a]), verdict(b[key_b])
        name = key_a if key_a == key_b else f"{key_a}->{key_b}"
        comparison.differences += [(name, what, left[what], right[what]) for what in left if left[what] != right[what]]
    for side, records in ((0, a), (1, b)):
        for record in records.values():
            counts = comparison.statuses.setdefault(str(record.get("eval_status")), [0, 0])
            counts[side] += 1
    return comparison


def result_file(path: str | Path) -> Path:
    """A result file, or the one result file of a run folder (eval_results_hidden.json first)."""
    path = Path(path)
    if path.is_dir():
        for name in RESULT_FILES:
            if (path / name).is_file():
                return path / name
        raise UserError(f"{path} holds no {' or '.join(RESULT_FILES)}: name a run folder that was evaluated")
    if not path.is_file():
        raise UserError(f"{path} not found: name a run folder or its result file")
    return path


def compare_runs(a: str | Path, b: str | Path) -> Comparison:
    """Compare the verdicts of two run folders (or result files)."""
    return compare_records(read_json(result_file(a), "result file"), read_json(result_file(b), "result file"))

