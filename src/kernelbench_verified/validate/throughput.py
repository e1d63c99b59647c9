"""The benchmark kernels (benchmarks/kernels/level{L}/{pid}_{sid}_{label}.py) evaluated as a user would,
with hidden tests and the build cache: a cold pass (empty build cache: every extension built) and a warm
pass (builds found), each timed end to end. They include a compile error, an illegal memory access and a
hang, so the figures hold the cost of failures too.
"""

from __future__ import annotations

import collections
import shutil
import statistics
from pathlib import Path

from ..paths import CHECKOUT_ROOT

KERNELS = CHECKOUT_ROOT / "benchmarks" / "kernels"
PASSES = ("cold", "warm")


def level_kernels(level: int) -> list[tuple[Path, int, int, str]]:
    """(file, problem id, sample id, label) of every benchmark kernel of a level."""
    found = []
    for path in sorted((KERNELS / f"level{level}").glob("*.py")):
        pid, sid, label = path.stem.split("_", 2)
        found.append((path, int(pid), int(sid), label))
    return found


def levels() -> list[int]:
    return sorted(int(p.name.removeprefix("level")) for p in KERNELS.glob("level*") if p.is_dir())


def prepare_run(run_dir: Path, level: int) -> list[str]:
    """A fresh run folder with the level's kernels; returns the eval script's overrides for it."""
    files = level_kernels(level)
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir(parents=True)
    for path, pid, sid, _ in files:
        shutil.copy(path, run_dir / f"level_{level}_problem_{pid}_sample_{sid}_kernel.py")
    pids = sorted({pid for _, pid, _, _ in files})
    return [f"run_name={run_dir.name}", f"runs_dir={run_dir.parent}", f"level={level}",
            f"num_samples={max(sid for _, _, sid, _ in files) + 1}", f"subset=[{pids[0]},{pids[-1]}]",
            "use_hidden_tests=True", "build_cache=True"]


def pass_figures(name: str, wall_seconds: float, records: list[dict]) -> dict:
    """One pass: its wall time, the kernels' verdicts, and the judge's seconds per kernel."""
    seconds = [r["metadata"]["eval_seconds"] for r in records if r["metadata"].get("eval_seconds") is not None]
    return {"pass": name, "wall_seconds": round(wall_seconds, 1), "kernels": len(records),
            "statuses": dict(sorted(collections.Counter(r["eval_status"] for r in records).items())),
            "eval_seconds_median": round(statistics.median(seconds), 2) if seconds else None,
            "eval_seconds_max": round(max(seconds), 2) if seconds else None}


def section(passes: list[dict]) -> dict:
    return {"passes": passes}
