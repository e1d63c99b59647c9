"""The memory roofline floor of a problem: no kernel can finish before it has read its inputs and
written its outputs once. A measured time under that floor means the timing missed work (or the
kernel skipped it), so the leaderboard lists such samples for review. Torch-free."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..paths import CHECKOUT_ROOT

CATALOG = CHECKOUT_ROOT / "KernelBench" / "catalog.jsonl"

# Peak device-memory bandwidth in bytes/s by hardware name (vendors' datasheets: an upper bound, so the
# floor is conservative; the H200 copy measured here reached about 4.3 TB/s).
PEAK_BANDWIDTH = {"H200": 4.8e12, "H100": 3.35e12, "A100": 2.04e12, "B200": 8.0e12}


@lru_cache(maxsize=4)
def _footprints(catalog: Path) -> dict:
    footprints = {}
    for line in catalog.read_text().splitlines():
        entry = json.loads(line)
        sizes = entry.get("footprint") or {}
        if all(isinstance(sizes.get(k), int) for k in ("input_bytes", "output_bytes")):
            footprints[(entry["level"], entry["pid"])] = sizes["input_bytes"] + sizes["output_bytes"]
    return footprints


def floor_ms(level: int, pid: int, hardware: str, catalog: Path = CATALOG) -> float | None:
    """Milliseconds to move the problem's inputs and outputs once at peak bandwidth, or None when the
    hardware or the problem's footprint is unknown."""
    bandwidth = PEAK_BANDWIDTH.get(hardware)
    if bandwidth is None or not catalog.is_file():
        return None
    moved = _footprints(catalog).get((level, pid))
    return None if moved is None else moved / bandwidth * 1e3
