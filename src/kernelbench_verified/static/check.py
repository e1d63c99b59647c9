"""Static reward-hack checker: reads a kernel file (and the C++/CUDA it embeds) without running it.

`check_source(text)` returns findings, each with a code from the rule registry (`static_rules.RULES`),
a line of the kernel file, a severity and a message. It never raises on any input: a file that does not
parse gives one "syntax" finding; a rule that fails gives a "checker_error" finding instead of a crash.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

from .context import KernelFile
from .rules import RULES, SEVERITIES, triton_kernels


@dataclass(frozen=True)
class Finding:
    code: str
    line: int
    severity: str
    message: str

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Finding":
        return cls(str(data["code"]), int(data["line"]), str(data["severity"]), str(data["message"]))


def parse(source: str) -> ast.Module | Finding:
    """The syntax tree, or the one "syntax" finding that explains why there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in kernel strings are not our business
            return ast.parse(source)
    except SyntaxError as exc:
        return Finding("syntax", exc.lineno or 1, "error", f"does not parse: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        return Finding("syntax", 1, "error", f"does not parse: {type(exc).__name__}: {exc}"[:300])


def check_source(source: str, precision: str = "fp32", backend: str = "cuda") -> list[Finding]:
    """Findings of every registered rule on one kernel file, sorted by line. `precision` is the run's
    (fp32, fp16, bf16): lower-precision arithmetic is only a finding on fp32 work. `backend` is the
    kinds of kernel the run asked for (cuda: CUDA C++ or Triton; triton: Triton)."""
    tree = parse(source)
    if isinstance(tree, Finding):
        return [tree]
    kernel = KernelFile(source, tree, precision, backend)
    findings = set()
    for rule in RULES:
        try:
            for line, message in rule.check(kernel):
                findings.add(Finding(rule.code, line, rule.severity, message))
        except (RecursionError, MemoryError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
            findings.add(Finding("checker_error", 1, "warn", f"rule {rule.code} failed: {type(exc).__name__}: {exc}"))
    return _first_of_each(findings)


def _first_of_each(findings: set[Finding]) -> list[Finding]:
    """One finding per (code, message), at its first line, sorted by line: the same API named ten times is
    one thing to read on the leaderboard."""
    first: dict[tuple[str, str], Finding] = {}
    for finding in sorted(findings, key=lambda f: (f.line, f.code, f.message)):
        first.setdefault((finding.code, finding.message), finding)
    return sorted(first.values(), key=lambda f: (f.line, f.code, f.message))


def check_file(path: str | Path, precision: str = "fp32", backend: str = "cuda") -> list[Finding]:
    return check_source(Path(path).read_text(encoding="utf-8", errors="replace"), precision, backend)


def defines_triton_kernels(source: str) -> bool:
    """Whether the file defines a @triton.jit kernel (False for a file that does not parse)."""
    tree = parse(source)
    return not isinstance(tree, Finding) and bool(triton_kernels(KernelFile(source, tree)))


def rule_table() -> list[tuple[str, str, str]]:
    """(code, severity, description) of every rule, for documentation and the leaderboard."""
    return [(rule.code, rule.severity, rule.description) for rule in RULES]


__all__ = ["Finding", "SEVERITIES", "check_file", "check_source", "defines_triton_kernels", "parse", "rule_table"]
