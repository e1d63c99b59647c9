"""C, C++ and CUDA text embedded in a kernel file: comment stripping and what the kernels in it do.

The static checker reads this text only; nothing here compiles or runs it. Comments are blanked (line
breaks kept) so that a commented-out `cudaStreamCreate` is not a finding and line numbers stay right.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

# One alternation so that a "//" inside a string literal is read as part of the string, not a comment.
_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)

_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^()]*\)")
GLOBAL_KERNEL = re.compile(r"__global__\b[^;{}()]*?\b(?!__launch_bounds__\b)([A-Za-z_]\w*)\s*\(")
# name<<<...>>> or name<T, 4><<<...>>> (one level of nested template arguments).
TRIPLE_CHEVRON_LAUNCH = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<(?:[^<>;]|<[^<>;]*>)*>)?\s*<<<")
API_LAUNCH = re.compile(r"\bcu(?:da)?Launch\w*\s*\(([^;]*)")
ASSIGNMENT = re.compile(r"\b([A-Za-z_]\w*)\s*=\s*([^;=][^;]*);")
MACRO_DEFINITION = re.compile(r"#\s*define\s+(\w+)\s*\([^)]*\)(?:[^\n]*\\\n)*[^\n]*")
PYBIND_DEF = re.compile(r"\.def\s*\(\s*\"([A-Za-z_]\w*)\"")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def strip_c_comments(text: str) -> str:
    """The text with // and /* */ comments replaced by spaces, line breaks kept, string literals intact."""

    def blank(match: re.Match) -> str:
        token = match.group(0)
        if token.startswith(("//", "/*")):
            return re.sub(r"[^\n]", " ", token)
        return token

    return _COMMENT_OR_STRING.sub(blank, text)


@dataclass(frozen=True)
class EmbeddedSource:
    """One string of C++/CUDA passed to a builder, comments blanked, and where it starts in the file."""

    text: str
    first_line: int

    @classmethod
    def from_literal(cls, literal: str, first_line: int) -> "EmbeddedSource":
        return cls(strip_c_comments(literal), first_line)

    def line_at(self, offset: int) -> int:
        return self.first_line + self.text.count("\n", 0, offset)

    def find(self, pattern: re.Pattern) -> Iterator[tuple[int, re.Match]]:
        for match in pattern.finditer(self.text):
            yield self.line_at(match.start()), match


def global_kernels(sources: list[EmbeddedSource]) -> list[tuple[str, int]]:
    """Every __global__ function defined in the sources, with the line of its definition."""
    found = []
    for source in sources:
        text = _LAUNCH_BOUNDS.sub(lambda m: " " * len(m.group(0)), source.text)
        for match in GLOBAL_KERNEL.finditer(text):
            found.append((match.group(1), source.line_at(match.start())))
    return found


def launched_names(sources: list[EmbeddedSource]) -> set[str]:
    """Names launched with <<<>>>, passed to a cudaLaunch*/cuLaunch* call or to a macro whose body launches,
    plus the kernels assigned to a variable that is itself launched (`auto k = vec ? a : b; k<<<...>>>`)."""
    launched: set[str] = set()
    for source in sources:
        launched.update(m.group(1) for m in TRIPLE_CHEVRON_LAUNCH.finditer(source.text))
        for match in API_LAUNCH.finditer(source.text):
            launched.update(IDENTIFIER.findall(match.group(1)))
    launch_macros = {m.group(1) for source in sources for m in MACRO_DEFINITION.finditer(source.text)
                     if "<<<" in m.group(0)}
    if launch_macros:
        macro_call = re.compile(r"\b(?:%s)\s*\(([^;()]*(?:\([^;()]*\)[^;()]*)*)\)" % "|".join(map(re.escape, launch_macros)))
        for source in sources:
            for match in macro_call.finditer(MACRO_DEFINITION.sub("", source.text)):
                launched.update(IDENTIFIER.findall(match.group(1)))
    for source in sources:
        for match in ASSIGNMENT.finditer(source.text):
            if match.group(1) in launched:
                launched.update(IDENTIFIER.findall(match.group(2)))
    return launched


def pybind_functions(sources: list[EmbeddedSource]) -> list[str]:
    """Functions a PYBIND11_MODULE block exports with m.def("name", ...)."""
    return [m.group(1) for source in sources for m in PYBIND_DEF.finditer(source.text)]
