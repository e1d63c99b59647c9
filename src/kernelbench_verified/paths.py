"""Where the default folders (configs/, KernelBench/, hidden_tests/, results/, cache/) are.

They follow the checkout that the running script belongs to, not the place the package was installed:
a second checkout that uses an editable install of the first must evaluate against its own problems.
"""

from __future__ import annotations

import sys
from pathlib import Path

MARKER = Path("configs") / "eval.yaml"


def _is_checkout(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def find_checkout_root() -> Path:
    """The checkout of the running script (a file in scripts/ or benchmarks/), else the nearest checkout
    at or above the working directory, else the one the package itself sits in."""
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] not in ("", "-c", "-m") else None
    candidates = [script.parent.parent] if script else []
    cwd = Path.cwd().resolve()
    candidates += [cwd, *cwd.parents]
    for folder in candidates:
        if _is_checkout(folder):
            return folder
    return Path(__file__).resolve().parents[2]


CHECKOUT_ROOT = find_checkout_root()
