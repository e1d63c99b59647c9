"""Problems: finding a level's files, loading them as modules, and the input-blind prompt source."""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from ..paths import CHECKOUT_ROOT
from ..errors import UserError

DEFAULT_PROBLEMS_DIR = CHECKOUT_ROOT / "KernelBench"
LEVELS = (1, 2, 3, 4)

# Problems whose visible inputs were used to game them: their prompts show only the Model class.
INPUT_BLIND = {(1, 90), (1, 100), (3, 35), (3, 47)}

_FILE_ID = re.compile(r"^(\d+)_.+\.py$")


def self_candidate(source: str) -> str:
    """The reference as its own candidate: the problem file with `class ModelNew(Model): pass`, so
    identical code must be correct, score 1.00x, and pass every check (the harness's false-rejection
    and fidelity measure)."""
    return source + "\n\nclass ModelNew(Model):  # the reference as its own candidate\n    pass\n"


def source_sha256(path: Path) -> str:
    """First 16 hex digits of the sha256 of a problem file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


@dataclass(frozen=True)
class Problem:
    level: int
    pid: int
    path: Path

    @property
    def filename(self) -> str:
        return self.path.name

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def source_sha256(self) -> str:
        """The problem file's digest, recorded in results and baselines: a speedup is only claimed
        against a baseline of the very same file."""
        return source_sha256(self.path)

    @property
    def input_blind(self) -> bool:
        return (self.level, self.pid) in INPUT_BLIND


def level_dir(level: int, problems_dir: str | Path | None = None) -> Path:
    if level not in LEVELS:
        raise UserError(f"unknown level {level!r}: choose one of {', '.join(map(str, LEVELS))}")
    root = Path(problems_dir) if problems_dir else DEFAULT_PROBLEMS_DIR
    path = root / f"level{level}"
    if not path.is_dir():
        raise UserError(f"level {level} not found: {path} is not a directory (set problems_dir=...)")
    return path


def list_problems(level: int, problems_dir: str | Path | None = None,
                  subset: tuple[int | None, int | None] = (None, None), ids: list[int] | None = None) -> list[Problem]:
    """The level's problems sorted by id, restricted to the inclusive id range `subset`, or to `ids`."""
    folder = level_dir(level, problems_dir).resolve()
    by_id: dict[int, Path] = {}
    for path in sorted(folder.glob("*.py")):
        match = _FILE_ID.match(path.name)
        if not match:
            continue
        pid = int(match.group(1))
        if pid in by_id:
            raise UserError(f"duplicate problem id {pid} in {folder}: {by_id[pid].name} and {path.name}")
        by_id[pid] = path
    if ids is not None:
        missing = sorted(set(ids) - set(by_id))
        if missing:
            raise UserError(f"problem_ids: no problem {', '.join(map(str, missing))} in {folder}")
        return [Problem(level, pid, by_id[pid]) for pid in sorted(set(ids))]
    first, last = subset
    chosen = [Problem(level, pid, p) for pid, p in sorted(by_id.items())
              if (first is None or pid >= first) and (last is None or pid <= last)]
    if not chosen:
        raise UserError(f"no problems in {folder} for subset {list(subset)}")
    return chosen


def get_problem(level: int, pid: int, problems_dir: str | Path | None = None) -> Problem:
    for problem in list_problems(level, problems_dir):
        if problem.pid == pid:
            return problem
    raise UserError(f"problem {pid} not found in level {level} ({level_dir(level, problems_dir)})")


def load_module(path: str | Path, name: str | None = None) -> ModuleType:
    """Import a Python file as a fresh module (registered in sys.modules, as dataclasses need)."""
    path = Path(path)
    if name is None:
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
        name = f"kbv_{re.sub(r'[^0-9a-zA-Z_]', '_', path.stem)}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def stripped_source(source: str) -> str:
    """The Model class (with its docstrings) and the imports, without get_inputs, get_init_inputs
    or module constants: what an input-blind prompt shows."""
    tree = ast.parse(source)
    kept = [node for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef))]
    lines = source.splitlines()
    chunks = []
    for node in kept:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        chunks.append("\n".join(lines[start - 1:node.end_lineno]))
    imports = "\n".join(c for c, n in zip(chunks, kept) if not isinstance(n, ast.ClassDef))
    classes = "\n\n\n".join(c for c, n in zip(chunks, kept) if isinstance(n, ast.ClassDef))
    return f"{imports}\n\n\n{classes}\n"
