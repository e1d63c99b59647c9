"""What the `static_check` policy does to a sample's record: a pure function of the record and the findings.

    off     nothing is stored, the verdict is the evaluator's
    warn    findings stored in metadata["static_findings"], the verdict is the evaluator's (default)
    reject  findings stored; any "error" finding makes the sample incorrect (eval_status "rejected_static",
            the codes in metadata["static_rejected_codes"], the evaluator's own status kept beside them)
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..errors import UserError
from .check import Finding

STATIC_POLICIES = ("off", "warn", "reject")
REJECTED_STATUS = "rejected_static"


def require_policy(policy: str) -> str:
    if policy not in STATIC_POLICIES:
        raise UserError(f"static_check={policy!r} is not one of {', '.join(STATIC_POLICIES)}; "
                        "set static_check=off, warn or reject")
    return policy


def rejecting_codes(findings: Iterable[Finding], policy: str) -> list[str]:
    """The codes that make this sample incorrect under `policy` (empty unless policy is reject). The
    evaluator can ask this before running a kernel and skip one that is rejected anyway."""
    if require_policy(policy) != "reject":
        return []
    return sorted({finding.code for finding in findings if finding.severity == "error"})


def apply_policy(record: dict, findings: Sequence[Finding], policy: str) -> dict:
    """A new record with the policy applied; `record` itself is left unchanged."""
    codes = rejecting_codes(findings, policy)
    if policy == "off":
        return dict(record)
    metadata = dict(record.get("metadata") or {})
    metadata["static_findings"] = [finding.to_dict() for finding in findings]
    updated = {**record, "metadata": metadata}
    if codes:
        metadata["static_rejected_codes"] = codes
        metadata["eval_status_before_static"] = record.get("eval_status")
        updated.update(correctness=False, eval_status=REJECTED_STATUS, runtime=-1.0, runtime_stats={},
                       peak_memory=-1, memory_stats={})
    return updated
