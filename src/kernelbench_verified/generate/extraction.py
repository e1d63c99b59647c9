"""Finding the kernel in a model's answer.

Answers mix prose, drafts and several fenced blocks (often a ```cpp or ```cuda block shown beside the
```python file that embeds it). The kernel is the Python block that defines `ModelNew`; when several
do, the last one (models revise before they finish). Python blocks are fences labelled python, py or
python3, or unlabelled. Reasoning wrapped in <think>...</think> is ignored, and an answer that is
bare Python (no fence) defining ModelNew is taken whole. With backend "triton" the last block that
defines ModelNew *and* a @triton.jit kernel wins over later blocks without one (a plain-PyTorch
"reference version" shown after the answer); when no block has a Triton kernel the usual rule applies
and the static checks say so (backend_mismatch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..static.check import defines_triton_kernels

PYTHON_LABELS = {"", "python", "py", "python3"}

# An opening fence (3+ backticks, optional label), the body, and the same fence closing it or the
# end of the text (an answer cut off by max_tokens keeps what it has).
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,})[ \t]*(?P<label>[\w+#.-]*)[^\n]*\n(?P<body>.*?)(?:^[ \t]*(?P=fence)[ \t]*$|\Z)",
                    re.MULTILINE | re.DOTALL)
_THINKING = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_DEFINES_MODEL_NEW = re.compile(r"^class\s+ModelNew\b", re.MULTILINE)


@dataclass(frozen=True)
class Extraction:
    code: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is not None


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(label, body) of every fenced block, in order; labels lower-cased."""
    return [(m.group("label").lower(), m.group("body")) for m in _FENCE.finditer(text)]


def extract_kernel(text: str, backend: str = "cuda") -> Extraction:
    answer = _THINKING.sub("", text or "")
    blocks = code_blocks(answer)
    python = [body for label, body in blocks if label in PYTHON_LABELS]
    with_model = [body for body in python if _DEFINES_MODEL_NEW.search(body)]
    if backend == "triton":
        with_model = [body for body in with_model if defines_triton_kernels(body)] or with_model
    if with_model:
        return Extraction(with_model[-1].strip("\n") + "\n")
    if not blocks and _DEFINES_MODEL_NEW.search(answer):
        return Extraction(answer.strip("\n") + "\n")
    if python:
        return Extraction(None, f"{len(python)} python code block(s) but none defines class ModelNew")
    if blocks:
        labels = sorted({label or "unlabelled" for label, _ in blocks})
        return Extraction(None, f"no python code block (found only: {', '.join(labels)})")
    return Extraction(None, "no code block in the response")
