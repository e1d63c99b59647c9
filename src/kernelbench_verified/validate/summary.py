"""The validation summary of one GPU model, results/validation/{GPU}.json: what users cite.

{"gpu": "H100", "device_name": ..., "fingerprint": {...}, "sections": {step: {...section,
 "measured": {"date", "harness_version", "git_commit", "settings"}}}}

Each step replaces its own section when it finishes, so a validation cut short keeps the steps it
finished, and a step run again alone (steps=[clock]) updates only its section. Every section says when
and by which version of the harness it was measured.
"""

from __future__ import annotations

import re
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from ..paths import CHECKOUT_ROOT
from ..results import read_json, write_json_atomic

STEPS = ("gpu_tests", "exploits", "references", "clock", "throughput")


def harness_version() -> str:
    """The package's version: installed metadata, else the checkout's pyproject.toml (a run from src/)."""
    try:
        return metadata.version("kernelbench-verified")
    except metadata.PackageNotFoundError:
        found = re.search(r'^version = "([^"]+)"', (CHECKOUT_ROOT / "pyproject.toml").read_text(), flags=re.M)
        return found.group(1) if found else "unknown"


def git_commit(outputs: tuple[Path, ...] = (), root: Path = CHECKOUT_ROOT) -> str | None:
    """The checkout's commit, with "+changes" when its tracked files differ from it. The validation's own
    outputs (`outputs`: the summary, the bounds, the pages it rewrites) do not count, so that a level run
    after another keeps the commit both ran."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    excluded = [f":(exclude){Path(path).resolve()}" for path in outputs]
    if commit and git("status", "--porcelain", "--untracked-files=no", "--", str(root), *excluded):
        commit += "+changes"
    return commit


def measured(settings: dict, commit: str | None) -> dict:
    """When and with what a section was measured. `commit` is the checkout's as the validation started:
    by the time a step ends, its own outputs (the bounds file, the baselines) differ from the commit."""
    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "harness_version": harness_version(),
            "git_commit": commit, "settings": settings}


def summary_path(out_dir: Path, gpu: str) -> Path:
    return Path(out_dir) / f"{gpu}.json"


def load(path: Path) -> dict:
    return read_json(path, "validation summary") if path.is_file() else {}


def record_section(path: Path, header: dict, step: str, section: dict, settings: dict, commit: str | None) -> dict:
    """Write `section` as the summary's `step`, with when and how it was measured; returns the summary."""
    if step not in STEPS:
        raise ValueError(f"unknown validation step {step!r}")
    document = load(path)
    document.update(header)
    stamp = measured(settings, commit)
    if step == "references":
        section = with_other_levels(document.get("sections", {}).get(step), section, stamp)
    document.setdefault("sections", {})[step] = {**section, "measured": stamp}
    document["sections"] = {name: document["sections"][name] for name in STEPS if name in document["sections"]}
    write_json_atomic(path, document)
    return document


def with_other_levels(previous: dict | None, section: dict, stamp: dict) -> dict:
    """The references section of a run of some levels: those levels replace their figures, each stamped
    with this run's `measured`; the levels it did not run keep theirs and when they were measured, as
    the identical-code bounds keep the problems not measured again (references.write_bounds)."""
    levels = {}
    for level, figures in (previous or {}).get("levels", {}).items():
        levels[level] = {**figures, "measured": figures.get("measured", previous.get("measured", {}))}
    levels.update({level: {**figures, "measured": stamp} for level, figures in section["levels"].items()})
    return {**section, "levels": {level: levels[level] for level in sorted(levels, key=int)}}


def summaries(folder: Path) -> dict[str, dict]:
    """Every GPU's summary in `folder`, by GPU model."""
    found = {}
    for path in sorted(Path(folder).glob("*.json")):
        document = read_json(path, "validation summary")
        if isinstance(document, dict) and "sections" in document:
            found[document.get("gpu", path.stem)] = document
    return found
