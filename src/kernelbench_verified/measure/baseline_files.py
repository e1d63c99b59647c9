"""Baseline timing files, results/timing/{HW}/{name}.json: {"level1": {problem file: stats}, ...}
plus, in files written since fingerprints exist, "fingerprint" and "failures" beside the levels.
Torch-free, so the leaderboard reads them with the same code that writes them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..results import read_json


@dataclass
class Baseline:
    """A baseline file: {"level1": {problem file: stats}}, its fingerprint (None in files written
    before fingerprints existed) and recorded failures ({"level1": {problem file: {"error"}}})."""

    levels: dict
    fingerprint: dict | None = None
    failures: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        ordered = {level: _sorted_entries(self.levels[level]) for level in _sorted_levels(self.levels)}
        ordered["fingerprint"] = self.fingerprint
        ordered["failures"] = {level: _sorted_entries(self.failures[level])
                               for level in _sorted_levels(self.failures) if self.failures[level]}
        return ordered


def load_baseline(path: str | Path) -> Baseline:
    """Read a baseline file, old format (levels only) or new; raise UserError if it is malformed."""
    data = read_json(path, "baseline file")
    if not isinstance(data, dict):
        raise UserError(f"baseline file {path} does not hold a JSON object of levels")
    levels = {k: v for k, v in data.items() if k.startswith("level")}
    for level, entries in levels.items():
        if not isinstance(entries, dict) or not all(isinstance(e, dict) and "mean" in e for e in entries.values()):
            raise UserError(f"baseline file {path}: {level} must map problem files to stats with a 'mean'")
    fingerprint = data.get("fingerprint")
    if fingerprint is not None and not isinstance(fingerprint, dict):
        raise UserError(f"baseline file {path}: 'fingerprint' must be an object")
    return Baseline(levels, fingerprint, data.get("failures") or {})


def _level_number(key: str) -> int:
    digits = key.removeprefix("level")
    return int(digits) if digits.isdigit() else 1 << 30


def _sorted_levels(levels: dict) -> list[str]:
    return sorted(levels, key=lambda k: (_level_number(k), k))


def _sorted_entries(entries: dict) -> dict:
    def problem_id(name: str):
        head = name.split("_", 1)[0]
        return (int(head), name) if head.isdigit() else (1 << 30, name)

    return dict(sorted(entries.items(), key=lambda kv: problem_id(kv[0])))
