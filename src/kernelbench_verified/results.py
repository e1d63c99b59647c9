"""Result files: atomic JSON writes, reading with clear errors, and the per-sample record format.

eval_results.json (eval_results_hidden.json with hidden tests) is one object keyed "{pid}_{sid}";
each value keeps the reference KernelBench fields (sample_id, compiled, correctness, metadata,
runtime, runtime_stats, peak_memory, memory_stats) and adds ours beside them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
import zlib
from pathlib import Path

from .errors import UserError
from .verdicts import UNTRUSTED_TIMING_FLAGS, Status, flag_codes


# The resolved config generate_samples.py writes into each run folder, under our name and upstream's;
# the leaderboard reads the model and level of a run whose folder name does not say them from it.
RUN_CONFIG_NAMES = ("generate_config.yaml", "generation_config.yaml")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over the target."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: str | Path, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=2))


def read_json(path: str | Path, what: str = "JSON file"):
    """A JSON file, or a gzipped one (`.gz`: records kept compressed)."""
    path = Path(path)
    try:
        return json.loads(gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_text())
    except FileNotFoundError:
        raise UserError(f"{what} {path} not found") from None
    except (ValueError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise UserError(f"{what} {path} is not valid JSON ({exc}); fix or move it, nothing was changed") from None


def untrusted_timing(integrity_flags: list) -> list[str]:
    """The flags (names only) that make a sample's measured time untrustworthy (verdicts.UNTRUSTED_TIMING_FLAGS):
    the verdict stands, the time is withheld. What the kernel's process reports about itself
    (sandbox_reports) is never evidence either way."""
    return sorted(set(flag_codes(integrity_flags)) & set(UNTRUSTED_TIMING_FLAGS))


def new_record(level: int, pid: int, sid: int, problem_file: str, judged: dict, context: dict) -> dict:
    """The stored record of one sample, from the judge's raw record and the run's context. A correct
    sample whose timing cannot be trusted keeps its verdict but gets runtime -1; the withheld figures
    stay in metadata.untrusted_runtime_stats, the reason in metadata.runtime_withheld."""
    status = Status(judged.get("eval_status") or Status.HARNESS_ERROR)
    stats = judged.get("runtime_stats") or {}
    memory = judged.get("memory_stats") or {}
    metadata = {k: v for k, v in judged.items() if k not in ("runtime_stats", "memory_stats", "eval_status")}
    metadata.update(context)
    untrusted = untrusted_timing(judged.get("integrity")) if status == "correct" else []
    if untrusted and stats:
        metadata["untrusted_runtime_stats"], stats = stats, {}
        metadata["runtime_withheld"] = "integrity flags: " + ", ".join(untrusted)
    return {
        "sample_id": sid,
        "problem_id": pid,
        "level": level,
        "problem": problem_file,
        "compiled": bool(judged.get("compiled", False)),
        "correctness": status == "correct",
        "eval_status": status,
        "metadata": metadata,
        "runtime": float(stats["mean"]) if status == "correct" and "mean" in stats else -1.0,
        "runtime_stats": stats if status == "correct" else {},
        "peak_memory": _byte_count(memory.get("call_peak")) if status == "correct" else -1,
        "memory_stats": memory if status == "correct" else {},
    }


def _byte_count(value) -> int:
    """A byte count the kernel's process reported (measure.timing.peak_memory's call_peak), -1 if it is none."""
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else -1


def kernel_digest(source: str) -> str:
    """The sha256 of a kernel's source as it was read and judged (metadata.kernel_sha256): two records
    of one sample are of the same kernel only if their digests agree."""
    return hashlib.sha256(source.encode("utf-8", errors="surrogateescape")).hexdigest()


# An entry of eval_results.json that a hidden evaluation wrote for upstream's readers (see fill_standard_file)
# names its source file here; it holds no standard evaluation and our readers skip it.
DERIVED_FROM = "derived_from"
_DERIVED_METADATA = ("problem_sha256", "kernel_sha256", "runtime_withheld", "use_hidden_tests", "failed_case",
                     "error", "device", "precision", "input_salt")


def is_derived(record) -> bool:
    metadata = record.get("metadata") if isinstance(record, dict) else None
    return isinstance(metadata, dict) and bool(metadata.get(DERIVED_FROM))


def derived_record(record: dict, source_name: str) -> dict:
    """A hidden evaluation's record as an entry of eval_results.json: its verdict and the time measured in
    that same evaluation, with a small metadata that says where it comes from."""
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    derived = {key: record[key] for key in ("sample_id", "problem_id", "level", "problem", "compiled", "correctness",
                                            "eval_status", "runtime", "runtime_stats", "peak_memory", "memory_stats")
               if key in record}
    derived["metadata"] = {DERIVED_FROM: source_name, **{k: metadata[k] for k in _DERIVED_METADATA if k in metadata}}
    return derived


def fill_standard_file(standard_path: str | Path, hidden_records: dict, source_name: str) -> int:
    """Give every sample of `hidden_records` an entry in the standard result file where it has no standard
    record (or only an earlier derived one): upstream's hidden analysis and leaderboard take each sample's
    verdict from eval_results_hidden.json and its time from eval_results.json, and stop without that file.
    A record of a standard evaluation is never touched. Returns the number of entries written."""
    path = Path(standard_path)
    current = read_json(path, "result file") if path.exists() else {}
    if not isinstance(current, dict):
        raise UserError(f"result file {path} does not hold a JSON object; move it away to start over")
    written = 0
    for key, record in hidden_records.items():
        existing = current.get(key)
        if existing is not None and not is_derived(existing):
            continue
        entry = derived_record(record, source_name)
        if entry != existing:
            current[key], written = entry, written + 1
    if written:
        write_json_atomic(path, dict(sorted(current.items(), key=lambda kv: sample_order(kv[0]))))
    return written


class ResultStore:
    """The run's result file: loaded once, rewritten atomically after every new record."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records: dict = read_json(self.path, "result file") if self.path.exists() else {}
        if not isinstance(self.records, dict):
            raise UserError(f"result file {self.path} does not hold a JSON object; move it away to start over")

    def has(self, key: str, problem_sha256: str | None = None) -> bool:
        """Whether `key` is recorded (a missing kernel is not: it may have been written since; nor is an
        entry a hidden evaluation derived for upstream's readers, fill_standard_file). With
        `problem_sha256`, a record of another version of the problem file does not count either."""
        record = self.records.get(key)
        if record is None or record.get("eval_status") == "missing_kernel" or is_derived(record):
            return False
        recorded = record.get("metadata", {}).get("problem_sha256")
        return problem_sha256 is None or recorded is None or recorded == problem_sha256

    def put(self, key: str, record: dict) -> None:
        self.records[key] = record
        write_json_atomic(self.path, dict(sorted(self.records.items(), key=lambda kv: sample_order(kv[0]))))


def sample_order(key: str):
    """Result-file order: by problem id, then sample id, other keys last."""
    pid, _, sid = key.partition("_")
    return (int(pid), int(sid)) if pid.isdigit() and sid.isdigit() else (1 << 30, key)
