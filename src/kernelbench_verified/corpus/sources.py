"""Reading a published corpus as rows: JSON, JSON Lines, CSV, Parquet files and Hugging Face datasets.

Every reader returns a list of dicts (one per kernel) and the source's sha256. pyarrow (Parquet) and
datasets (Hugging Face) are optional and imported only when such a source is read.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from pathlib import Path

from ..errors import UserError, first_line

FORMATS = ("json", "jsonl", "csv", "parquet", "hf")
SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet",
            ".pq": "parquet"}


def read_rows(source: str, split: str = "train") -> tuple[list[dict], str, str]:
    """(rows, format, sha256 of the source) of a file, a saved Hugging Face dataset folder, or a dataset name."""
    path = Path(source)
    if path.is_file():
        kind = SUFFIXES.get(path.suffix.lower())
        if kind is None:
            raise UserError(f"source {source}: unknown file type {path.suffix!r}; give a "
                            f"{', '.join(sorted(SUFFIXES))} file or a Hugging Face dataset")
        reader = {"json": _json_rows, "jsonl": _jsonl_rows, "csv": _csv_rows, "parquet": _parquet_rows}[kind]
        return reader(path), kind, hashlib.sha256(path.read_bytes()).hexdigest()
    return _hf_rows(source, split)


def _json_rows(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise UserError(f"source {path} is not valid JSON ({first_line(exc)})") from None
    if isinstance(data, dict):  # {"rows": [...]} or {"data": [...]}, or one list under a single key
        lists = [v for v in data.values() if isinstance(v, list)]
        data = data.get("rows", data.get("data", lists[0] if len(lists) == 1 else None))
    if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
        raise UserError(f"source {path} holds no list of objects (one per kernel), nor {{\"rows\": [...]}}")
    return data


def _jsonl_rows(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise UserError(f"source {path} line {number} is not valid JSON ({first_line(exc)})") from None
        if not isinstance(row, dict):
            raise UserError(f"source {path} line {number} is not a JSON object")
        rows.append(row)
    return rows


def _csv_rows(path: Path) -> list[dict]:
    csv.field_size_limit(sys.maxsize)  # kernel sources are long cells
    with path.open(newline="") as handle:
        return [dict(row) for row in csv.DictReader(handle)]


def _parquet_rows(path: Path) -> list[dict]:
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise UserError("reading Parquet needs pyarrow: pip install 'kernelbench-verified[parquet]' "
                        "(or pip install pyarrow)") from None
    try:
        return parquet.read_table(path).to_pylist()
    except Exception as exc:
        raise UserError(f"source {path} is not a readable Parquet file ({first_line(exc)})") from None


def _hf_rows(source: str, split: str) -> tuple[list[dict], str, str]:
    try:
        import datasets
    except ImportError:
        raise UserError(f"source {source!r} is not a file, and reading it as a Hugging Face dataset needs "
                        f"`datasets` (pip install 'kernelbench-verified[hf]')") from None
    try:
        if Path(source).is_dir():
            loaded = datasets.load_from_disk(source)
        else:
            loaded = datasets.load_dataset(source, split=split)
        if isinstance(loaded, datasets.DatasetDict):
            if split not in loaded:
                raise UserError(f"dataset {source} has no split {split!r}: choose one of {', '.join(loaded)} (split=...)")
            loaded = loaded[split]
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"source {source!r} is no file and could not be loaded as a Hugging Face dataset "
                        f"({first_line(exc)})") from None
    return [dict(row) for row in loaded], "hf", str(getattr(loaded, "_fingerprint", "unknown"))
