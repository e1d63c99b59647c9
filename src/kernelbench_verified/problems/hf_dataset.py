"""dataset_src=huggingface: write a level of the published dataset into problem files once."""

from __future__ import annotations

import re
from pathlib import Path

from ..paths import CHECKOUT_ROOT
from ..errors import UserError

CACHE_DIR = CHECKOUT_ROOT / "cache" / "hf_problems"


def materialize_level(dataset_name: str, level: int) -> Path:
    """Problem files of `level` under cache/hf_problems/{dataset}/level{L}/; returns the root."""
    root = CACHE_DIR / re.sub(r"\W", "_", dataset_name)
    folder = root / f"level{level}"
    if folder.is_dir() and any(folder.glob("*.py")):
        return root
    try:
        import datasets
    except ImportError:
        raise UserError("dataset_src=huggingface needs the datasets package: pip install datasets") from None
    try:
        split = datasets.load_dataset(dataset_name, split=f"level_{level}")
    except Exception as exc:  # offline, unknown name, missing split: all end the same way
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise UserError(f"could not load {dataset_name} level {level} from the Hugging Face Hub ({reason}); "
                        "use dataset_src=local") from None
    folder.mkdir(parents=True, exist_ok=True)
    for row in split:
        (folder / f"{row['name']}.py").write_text(row["code"])
    return root
