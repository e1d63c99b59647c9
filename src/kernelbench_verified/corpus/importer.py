"""Importing a published corpus of kernels as run folders (scripts/import_kernels.py).

Each level becomes runs/{name}_level{L}_test/ in the layout generate_samples.py writes (kernel files,
generate_config.yaml) plus claims.json. When the corpus's references differ from the shipped problems
(references=auto) or always (references=corpus), runs/{name}_corpus/ receives a KernelBench/ folder of the
corpus's references and a hidden_tests/ folder for them, which the run records. Rows without code, with
code that does not parse, duplicates and rows that cannot be placed are counted and listed in
runs/{name}_corpus/import_report.json, never fatal. Code is parsed with `ast`, never executed.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from ..config import require_choice, safe_run_name
from ..errors import UserError
from ..problems.hidden_tests import hidden_path, render_hidden_file
from ..problems.load import LEVELS, Problem, level_dir, list_problems
from ..results import RUN_CONFIG_NAMES, read_json, write_text_atomic
from ..run_problems import CLAIM_BASELINES, CLAIMS_FILE
from .references import CONSTANTS, IDENTICAL, MODEL, NO_SHIPPED, VERDICTS, compare_references, missing_names
from .sources import read_rows

# Column names that fit common layouts, tried in this order when the field map leaves a field null.
FIELD_CANDIDATES = {
    "level": ("level", "level_id", "kb_level"),
    "problem_id": ("problem_id", "task_id", "pid", "problem", "op_id"),
    "kernel": ("kernel", "kernel_code", "kernel_src", "code", "custom_code", "generated_code", "solution",
               "model_new", "cuda_code"),
    "reference": ("reference", "reference_code", "ref_code", "ref_arch_src", "pytorch_code", "torch_code",
                  "reference_src"),
    "sample_id": ("sample_id",),
    "name": ("problem_name", "name", "op_name", "task_name"),
    "claim_kind": ("baseline", "baseline_kind", "speedup_baseline", "baseline_type"),
}
REQUIRED_FIELDS = ("problem_id", "kernel")
# Speedup columns found without a `claims` map, and the kind of baseline each names (a plain `speedup`
# takes its kind from the claim_kind column when there is one, else `claim_kind`).
CLAIM_COLUMNS = {"speedup": None, "claimed_speedup": None, "speedup_eager": "eager", "speedup_vs_eager": "eager",
                 "speedup_torch": "eager", "speedup_compile": "compile", "speedup_vs_compile": "compile",
                 "speedup_torch_compile": "compile", "speedup_cuda_graphs": "cuda_graphs"}
KIND_ALIASES = {"eager": "eager", "torch": "eager", "pytorch": "eager", "torch_eager": "eager", "pytorch_eager": "eager",
                "tf32": "eager_tf32", "eager_tf32": "eager_tf32", "torch.compile": "compile", "compile": "compile",
                "torch_compile": "compile", "inductor": "compile", "cuda_graphs": "cuda_graphs",
                "cuda_graph": "cuda_graphs", "cudagraphs": "cuda_graphs"}
NO_CODE = {"", "none", "null", "nan"}
REFERENCE_CHOICES = ("auto", "corpus", "shipped")
SKIP_REASONS = ("no_code", "unparseable", "duplicate", "bad_id", "no_problem", "bad_reference", "reference_conflict")


@dataclass
class Entry:
    row: int
    level: int
    pid: int
    kernel: str
    reference: str | None
    name: str | None
    claims: list
    sid: int | None = None


@dataclass
class Report:
    rows: int = 0
    skipped: dict = field(default_factory=lambda: {reason: [] for reason in SKIP_REASONS})
    levels: dict = field(default_factory=dict)

    def skip(self, reason: str, row: int, why: str) -> None:
        self.skipped[reason].append({"row": row, "why": why})


def import_corpus(cfg: DictConfig) -> int:
    name = safe_run_name(cfg.name)
    references = require_choice(cfg, "references", REFERENCE_CHOICES)
    rows, fmt, digest = read_rows(str(cfg.source), str(cfg.split))
    if not rows:
        raise UserError(f"source {cfg.source} holds no rows")
    columns = sorted({str(key) for row in rows for key in row})
    fields = resolve_fields(cfg, columns)
    claim_columns = resolve_claims(cfg, columns)
    runs_dir = Path(cfg.runs_dir)
    corpus_dir = runs_dir / f"{name}_corpus"
    _refuse_other_source(runs_dir, name, digest, corpus_dir)
    report = Report(rows=len(rows))
    entries = parse_rows(rows, fields, claim_columns, cfg, report)
    for level in tqdm(sorted({e.level for e in entries}), desc="importing levels", unit="level"):
        level_entries = [e for e in entries if e.level == level]
        report.levels[level] = write_level(cfg, name, level, level_entries, references, corpus_dir, report,
                                           digest)
    summary = {"source": str(cfg.source), "format": fmt, "source_sha256": digest, "fields": fields,
               "claims": claim_columns, "rows": report.rows,
               "imported": sum(info["kernels"] for info in report.levels.values()),
               "skipped": {reason: len(items) for reason, items in report.skipped.items()},
               "skipped_rows": report.skipped, "levels": {str(k): v for k, v in report.levels.items()}}
    _write_if_changed(corpus_dir / "import_report.json", json.dumps(summary, indent=2))
    print_summary(summary, name, runs_dir, corpus_dir)
    return 0


def resolve_fields(cfg: DictConfig, columns: list[str]) -> dict:
    """{field: column or None}: the field map's column where given (it must exist), else the first
    candidate present; a required field with no column is an error naming the columns there are."""
    given = OmegaConf.to_container(cfg.fields) if cfg.fields is not None else {}
    unknown_fields = sorted(set(given) - set(FIELD_CANDIDATES))
    if unknown_fields:
        raise UserError(f"fields.{unknown_fields[0]} is not a field: map {', '.join(FIELD_CANDIDATES)}")
    resolved = {}
    for name, candidates in FIELD_CANDIDATES.items():
        column = given.get(name)
        if column is not None and str(column) not in columns:
            raise UserError(f"fields.{name}={column!r} is not a column of the source; its columns: {', '.join(columns)}")
        resolved[name] = str(column) if column is not None else next((c for c in candidates if c in columns), None)
    if resolved["level"] is None and cfg.level is None:
        raise UserError(f"no level column (tried {', '.join(FIELD_CANDIDATES['level'])}): set fields.level=COLUMN "
                        f"or level=N for a corpus of one level; its columns: {', '.join(columns)}")
    for name in REQUIRED_FIELDS:
        if resolved[name] is None:
            raise UserError(f"no {name} column (tried {', '.join(FIELD_CANDIDATES[name])}): set fields.{name}=COLUMN; "
                            f"its columns: {', '.join(columns)}")
    return resolved


def resolve_claims(cfg: DictConfig, columns: list[str]) -> dict:
    """{speedup column: kind or None (the row's claim_kind column, else claim_kind)}."""
    given = OmegaConf.to_container(cfg.claims) if cfg.claims is not None else {}
    if given:
        missing = sorted(str(c) for c in given if str(c) not in columns)
        if missing:
            raise UserError(f"claims.{missing[0]} is not a column of the source; its columns: {', '.join(columns)}")
        return {str(column): _kind(kind) if kind is not None else None for column, kind in given.items()}
    return {column: kind for column, kind in CLAIM_COLUMNS.items() if column in columns}


def _kind(text) -> str:
    key = re.sub(r"[\s-]+", "_", str(text).strip().lower())
    return KIND_ALIASES.get(key, key)


def parse_rows(rows: list[dict], fields: dict, claim_columns: dict, cfg: DictConfig, report: Report) -> list[Entry]:
    """The rows that hold a kernel to evaluate, with their level, problem id and claims; the others are
    counted in `report` with the reason."""
    entries, seen = [], {}
    for index, row in enumerate(rows):
        kernel = _text(row.get(fields["kernel"]))
        level = _int(row.get(fields["level"])) if fields["level"] else cfg.level
        pid = _problem_id(row.get(fields["problem_id"]))
        if kernel is None:
            report.skip("no_code", index, f"{fields['kernel']} is empty")
            continue
        if level not in LEVELS or pid is None:
            report.skip("bad_id", index, f"level {row.get(fields['level'])!r}, problem id "
                                         f"{row.get(fields['problem_id'])!r} (levels are {', '.join(map(str, LEVELS))})")
            continue
        try:
            ast.parse(kernel)
        except (SyntaxError, ValueError) as exc:
            report.skip("unparseable", index, f"level {level} problem {pid}: {type(exc).__name__}: {exc}"[:300])
            continue
        key = (level, pid, kernel.strip())
        if key in seen:
            report.skip("duplicate", index, f"level {level} problem {pid}: the same kernel as row {seen[key]}")
            continue
        seen[key] = index
        sid = _int(row.get(fields["sample_id"])) if fields["sample_id"] else None
        entries.append(Entry(index, level, pid, kernel, _text(row.get(fields["reference"])) if fields["reference"]
                             else None, _text(row.get(fields["name"])) if fields["name"] else None,
                             _row_claims(row, claim_columns, fields, cfg), sid))
    return entries


def _row_claims(row: dict, claim_columns: dict, fields: dict, cfg: DictConfig) -> list[dict]:
    claims = []
    for column, kind in claim_columns.items():
        value = _float(row.get(column))
        if value is None:
            continue
        if kind is None:
            row_kind = _text(row.get(fields["claim_kind"])) if fields["claim_kind"] else None
            kind = _kind(row_kind or cfg.claim_kind)
        claims.append({"column": column, "kind": kind, "claimed": value, "baseline": CLAIM_BASELINES.get(kind)})
    return claims


def _text(value) -> str | None:
    """A cell's text, None for an empty cell or one that says None/null/NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value)
    return None if text.strip().lower() in NO_CODE else text


def _int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = str(value).strip() if value is not None else ""
    match = re.fullmatch(r"(?:level[_ ]?)?(\d+)(?:\.0)?", text, flags=re.IGNORECASE)
    return int(match[1]) if match else None


def _problem_id(value) -> int | None:
    """An id as a number, a string of one, a problem file name ("19_ReLU.py") or "problem_19"."""
    number = _int(value)
    if number is not None or value is None:
        return number
    match = re.match(r"^(\d+)_", str(value).strip()) or re.search(r"problem[_ ]?(\d+)", str(value), re.IGNORECASE)
    return int(match[1]) if match else None


def _float(value) -> float | None:
    try:
        number = float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None
    return number if number is not None and math.isfinite(number) and number > 0 else None


def _refuse_other_source(runs_dir: Path, name: str, digest: str, corpus_dir: Path) -> None:
    """A re-run of the same source rewrites the same files; another source under the same name would mix
    two corpora's kernels in one run folder."""
    report = corpus_dir / "import_report.json"
    if report.is_file():
        recorded = read_json(report, "import report").get("source_sha256")
        if recorded != digest:
            raise UserError(f"{corpus_dir} holds an import of another source (sha256 {str(recorded)[:12]}): "
                            f"choose another name= or remove runs/{name}_* first")


def write_level(cfg: DictConfig, name: str, level: int, entries: list[Entry], references: str, corpus_dir: Path,
                report: Report, digest: str) -> dict:
    """One level's run folder, and its problems and hidden tests when it uses the corpus's references."""
    shipped = _shipped_problems(level, cfg.problems_dir)
    corpus_refs, verdicts = _corpus_references(entries, shipped, report)
    counts = {v: sum(1 for verdict in verdicts.values() if verdict == v) for v in VERDICTS}
    own = references == "corpus" or (references == "auto" and any(
        v != IDENTICAL for v in verdicts.values()))
    own = own and bool(corpus_refs)
    problem_files = _write_problems(level, corpus_refs, shipped, corpus_dir, entries) if own else \
        {pid: p.filename for pid, p in shipped.items()}
    placed = []
    for entry in entries:
        if entry.pid not in problem_files:
            report.skip("no_problem", entry.row, f"level {level} problem {entry.pid}: no shipped problem and no "
                                                 f"reference of the corpus's"
                        + ("" if own or not corpus_refs else " (references=shipped)"))
        elif own or entry.pid in shipped:
            placed.append(entry)
    run_dir = Path(cfg.runs_dir) / f"{name}_level{level}_test"
    num_samples = _write_kernels(run_dir, level, placed, report)
    claims = {f"{e.pid}_{e.sid}": e.claims for e in placed if e.claims}
    _write_if_changed(run_dir / CLAIMS_FILE, json.dumps(dict(sorted(claims.items(), key=lambda kv: _key_order(kv[0]))),
                                                        indent=2))
    _write_config(cfg, run_dir, level, num_samples, own, corpus_dir, digest)
    return {"run": run_dir.name, "kernels": len(placed), "problems": len({e.pid for e in placed}),
            "num_samples": num_samples, "claims": sum(len(c) for c in claims.values()),
            "references": "corpus" if own else "shipped", "compared": counts,
            "differing": {v: sorted(pid for pid, verdict in verdicts.items() if verdict == v)
                          for v in (CONSTANTS, MODEL, NO_SHIPPED) if counts[v]}}


def _shipped_problems(level: int, problems_dir) -> dict[int, Problem]:
    try:
        level_dir(level, problems_dir)
    except UserError:
        return {}
    return {p.pid: p for p in list_problems(level, problems_dir)}


def _corpus_references(entries: list[Entry], shipped: dict, report: Report) -> tuple[dict, dict]:
    """{pid: reference source} (the first row's of each problem) and {pid: comparison verdict}; rows whose
    reference does not parse, lacks Model/get_inputs/get_init_inputs, or differs from an earlier row's
    reference of the same problem are left out and listed."""
    references, verdicts, keep = {}, {}, []
    for entry in entries:
        if entry.reference is None:
            keep.append(entry)
            continue
        try:
            missing = missing_names(ast.parse(entry.reference))
        except (SyntaxError, ValueError) as exc:
            report.skip("bad_reference", entry.row, f"problem {entry.pid}: reference: {type(exc).__name__}: {exc}"[:300])
            continue
        if missing:
            report.skip("bad_reference", entry.row, f"problem {entry.pid}: reference defines no {', '.join(missing)}")
            continue
        known = references.setdefault(entry.pid, entry.reference)
        if ast.dump(ast.parse(known)) != ast.dump(ast.parse(entry.reference)):
            report.skip("reference_conflict", entry.row, f"problem {entry.pid}: its reference differs from an "
                                                         f"earlier row's of the same problem")
            continue
        shipped_source = shipped[entry.pid].path.read_text() if entry.pid in shipped else None
        verdicts[entry.pid] = compare_references(entry.reference, shipped_source)
        keep.append(entry)
    entries[:] = keep
    return references, verdicts


def _problem_filename(pid: int, shipped: dict, entries: list[Entry]) -> str:
    if pid in shipped:
        return shipped[pid].filename
    named = next((e.name for e in entries if e.pid == pid and e.name), None)
    stem = re.sub(r"[^0-9A-Za-z_]+", "_", re.sub(r"^\d+_|\.py$", "", named or "")).strip("_")
    return f"{pid}_{stem or 'problem'}.py"


def _write_problems(level: int, corpus_refs: dict, shipped: dict, corpus_dir: Path, entries: list[Entry]) -> dict:
    """The level's problem files from the corpus's references (a shipped file, byte for byte, for a problem
    whose rows carry none) and a hidden-test file for each; {pid: file name}."""
    folder = corpus_dir / "KernelBench" / f"level{level}"
    hidden_dir = corpus_dir / "hidden_tests"
    files = {}
    for pid in sorted({e.pid for e in entries}):
        source = corpus_refs.get(pid) or (shipped[pid].path.read_text() if pid in shipped else None)
        if source is None:
            continue
        filename = _problem_filename(pid, shipped, entries)
        _write_if_changed(folder / filename, source)
        # No reference is run here to see which inputs are integer (that would execute corpus code): every
        # distribution is written; generate_hidden_inputs.py --validate on the device drops degenerate ones.
        _write_if_changed(hidden_path(level, pid, hidden_dir), render_hidden_file(Problem(level, pid, folder / filename)))
        files[pid] = filename
    return files


def _write_kernels(run_dir: Path, level: int, entries: list[Entry], report: Report) -> int:
    """Kernel files with sample ids in row order per problem (or the corpus's own sample ids); returns
    the number of samples per problem the run needs."""
    taken: dict[int, set] = {}
    for entry in entries:
        used = taken.setdefault(entry.pid, set())
        if entry.sid is None or entry.sid in used:
            entry.sid = next(i for i in range(len(used) + 1) if i not in used)
        used.add(entry.sid)
    for entry in entries:
        _write_if_changed(run_dir / f"level_{level}_problem_{entry.pid}_sample_{entry.sid}_kernel.py", entry.kernel)
    return max((e.sid for e in entries), default=-1) + 1


def _write_config(cfg: DictConfig, run_dir: Path, level: int, num_samples: int, own: bool, corpus_dir: Path,
                  digest: str) -> None:
    relative = lambda sub: str(Path("..") / corpus_dir.name / sub)
    record = {"model_name": str(cfg.name), "level": level, "num_samples": num_samples, "precision": str(cfg.precision),
              "backend": str(cfg.backend), "dataset_src": "local", "importer": "import_kernels.py",
              "source": str(cfg.source), "source_sha256": digest, "references": "corpus" if own else "shipped",
              "run_problems_dir": relative("KernelBench") if own else None,
              "run_hidden_tests_dir": relative("hidden_tests") if own else None,
              "run_timing_dir": relative("timing") if own else None,
              "import": OmegaConf.to_container(cfg)}
    header = ("# Written by import_kernels.py: the corpus these kernels came from. run_*_dir are relative to this\n"
              "# folder; the evaluator, the baseline script and the leaderboard read the run's problems there.\n")
    for name in RUN_CONFIG_NAMES:
        _write_if_changed(run_dir / name, header + OmegaConf.to_yaml(OmegaConf.create(record)))


def _write_if_changed(path: Path, text: str) -> None:
    """Idempotent re-runs: an unchanged file keeps its bytes and modification time."""
    if not (path.is_file() and path.read_text() == text):
        write_text_atomic(path, text)


def _key_order(key: str) -> tuple:
    pid, _, sid = key.partition("_")
    return int(pid), int(sid)


def print_summary(summary: dict, name: str, runs_dir: Path, corpus_dir: Path) -> None:
    skipped = ", ".join(f"{count} {reason}" for reason, count in summary["skipped"].items() if count) or "none"
    print(f"{summary['rows']} row(s), {summary['imported']} kernel(s) imported; skipped: {skipped} "
          f"(listed in {corpus_dir / 'import_report.json'})")
    for level, info in summary["levels"].items():
        compared = ", ".join(f"{count} {verdict}" for verdict, count in info["compared"].items() if count)
        print(f"level {level}: {info['kernels']} kernel(s) of {info['problems']} problem(s), {info['claims']} claim(s) "
              f"-> {runs_dir / info['run']}; references vs shipped: {compared or 'none in the corpus'}; "
              f"judged against the {info['references']} problems")
    print("next, on a GPU box:")
    for line in next_steps(summary, corpus_dir):
        print(f"  {line}")


def next_steps(summary: dict, corpus_dir: Path) -> list[str]:
    """The commands that take the imported runs to a claims audit (docs/audit.md), in order: both
    evaluations (the audit's first steps read the standard one's times, the later ones the hidden one's
    verdicts), a baseline and screened hidden tests for a level judged against the corpus's references."""
    steps = []
    for level, info in summary["levels"].items():
        run, samples = info["run"], info["num_samples"]
        if info["references"] == "corpus":
            steps.append(f"python scripts/generate_hidden_inputs.py --level {level} --validate "
                         f"--problems-dir {corpus_dir / 'KernelBench'} --out-dir {corpus_dir / 'hidden_tests'}")
            steps.append(f"python scripts/generate_baseline_time.py run_name={run}")
        for hidden in (False, True):
            steps.append(f"python scripts/eval_from_generations.py run_name={run} level={level} "
                         f"num_samples={samples} use_hidden_tests={hidden}")
    runs = " ".join(info["run"] for info in summary["levels"].values())
    steps.append(f"python scripts/generate_leaderboard.py --use_hidden_eval --runs {runs}")
    for level, info in summary["levels"].items():
        steps.append(f"python scripts/benchmark_eval_analysis.py run_name={info['run']} level={level} "
                     f"use_hidden_eval=True")
    return steps
