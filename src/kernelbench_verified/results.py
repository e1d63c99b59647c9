"""Result files: atomic JSON writes, reading with clear errors, and the per-sample record format.

eval_results.json (eval_results_hidden.json with hidden tests) is one object keyed "{pid}_{sid}";
each value keeps the reference KernelBench fields (sample_id, compiled, correctness, metadata,
runtime, runtime_stats, peak_memory, memory_stats) and adds ours beside them.
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from pathlib import Path

from .errors import UserError


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


# The judge's own flags after which a sample's time cannot be trusted (reported times that disagree with
# its clock, a persisting-L2 carve-out the driver would not reset): the verdict stands, the time is
# withheld. What the kernel's process reports about itself (sandbox_reports) is never evidence either way.
UNTRUSTED_TIMING_FLAGS = ("persisting_l2_not_reset", "timing_exceeds_wall_clock", "timing_far_below_wall_clock",
                          "timing_below_judge_clock", "timing_mean_below_judge_clock", "timing_below_empty_call")


def untrusted_timing(integrity_flags: list) -> list[str]:
    """The flags (names only) that make a sample's measured time untrustworthy."""
    return sorted({str(f).split(":")[0] for f in integrity_flags or []} & set(UNTRUSTED_TIMING_FLAGS))


def new_record(level: int, pid: int, sid: int, problem_file: str, judged: dict, context: dict) -> dict:
    """The stored record of one sample, from the judge's raw record and the run's context. A correct
    sample whose timing cannot be trusted keeps its verdict but gets runtime -1; the withheld figures
    stay in metadata.untrusted_runtime_stats, the reason in metadata.runtime_withheld."""
    status = judged.get("eval_status") or "harness_error"
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
        "peak_memory": int(memory.get("peak_allocated", -1)) if status == "correct" else -1,
        "memory_stats": memory if status == "correct" else {},
    }


class ResultStore:
    """The run's result file: loaded once, rewritten atomically after every new record."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records: dict = read_json(self.path, "result file") if self.path.exists() else {}
        if not isinstance(self.records, dict):
            raise UserError(f"result file {self.path} does not hold a JSON object; move it away to start over")

    def has(self, key: str, problem_sha256: str | None = None) -> bool:
        """Whether `key` is recorded (a missing kernel is not: it may have been written since). With
        `problem_sha256`, a record of another version of the problem file does not count either."""
        record = self.records.get(key)
        if record is None or record.get("eval_status") == "missing_kernel":
            return False
        recorded = record.get("metadata", {}).get("problem_sha256")
        return problem_sha256 is None or recorded is None or recorded == problem_sha256

    def put(self, key: str, record: dict) -> None:
        self.records[key] = record
        write_json_atomic(self.path, dict(sorted(self.records.items(), key=lambda kv: _order(kv[0]))))


def _order(key: str):
    pid, _, sid = key.partition("_")
    return (int(pid), int(sid)) if pid.isdigit() and sid.isdigit() else (1 << 30, key)
