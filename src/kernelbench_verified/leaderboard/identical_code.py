"""How far identical code strayed from 1.00x on a hardware, per problem: the speedup a sample must beat
before the leaderboard calls it one. Torch-free.

results/identical_code/{hardware}.json holds, per problem, the speedups measured with each reference
evaluated as its own candidate (written by scripts/validate_harness.py; the validation summary's
`references` section sums them up). On the H200 a launch-bound level-3 model scored from 0.52x
(L3/22) to 1.63x (L3/7) against itself (the host's launch loop, not the code), so a 1.3x there is no
evidence of a faster kernel; a 1.3x on a level-2 problem whose identical code stayed within 1 %
(L2/90: 0.3 %) is.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from ..errors import UserError
from ..paths import CHECKOUT_ROOT

IDENTICAL_CODE_DIR = CHECKOUT_ROOT / "results" / "identical_code"


@lru_cache(maxsize=4)
def _measured(path: Path) -> tuple[dict, dict]:
    """({"L3/9": [speedup, ...]}, {"L3/9": problem file digest}) of one hardware's file."""
    try:
        document = json.loads(path.read_text())
        speedups = {key: [float(v) for v in values] for key, values in document["speedups"].items()}
        return speedups, dict(document.get("problem_sha256") or {})
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"{path} is not a file of identical-code speedups ({type(exc).__name__}: {exc}); "
                        f"rewrite it with scripts/validate_harness.py steps=[references]") from None


def noise_bound(level: int, pid: int, hardware: str | None, problem_sha256: str | None = None,
                folder: Path = IDENTICAL_CODE_DIR) -> float | None:
    """The largest speedup identical code showed on this problem, as a factor above 1 (0.8x counts as
    1.25x: either way the harness moved it that far), or None when the hardware or problem has no
    measurement, or when `problem_sha256` (the baseline's file) is not the file that was measured."""
    if not hardware or not (path := folder / f"{hardware}.json").is_file():
        return None
    speedups, digests = _measured(path)
    key = f"L{level}/{pid}"
    if problem_sha256 and digests.get(key) and digests[key] != problem_sha256:
        return None
    values = [v for v in speedups.get(key, []) if v > 0]
    return math.exp(max(abs(math.log(v)) for v in values)) if values else None
