"""server_type=replay: answers read from a folder, no network (tests, demos, re-extraction).

`replay_dir` holds files named like a run's outputs: level_{L}_problem_{pid}_sample_{sid}_raw_response.txt
(returned as is) or ..._kernel.py (returned inside a python fence, as a model would answer). In a
refinement, turn t's answer is ..._sample_{sid}_turn_{t}_raw_response.txt or ..._turn_{t}_kernel.py
(turn 0 may also use the plain names).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UserError
from . import Completion, ProviderError, ProviderSettings, Request


def create(settings: ProviderSettings) -> "ReplayProvider":
    if not settings.replay_dir:
        raise UserError("server_type=replay needs replay_dir=<folder of raw responses or kernels>")
    folder = Path(settings.replay_dir)
    if not folder.is_dir():
        raise UserError(f"replay_dir {folder} is not a directory")
    return ReplayProvider(folder)


class ReplayProvider:
    def __init__(self, folder: Path):
        self.folder = folder

    def complete(self, request: Request) -> Completion:
        stem = f"level_{request.level}_problem_{request.pid}_sample_{request.sid}"
        for turn_stem in ([f"{stem}_turn_{request.turn}"] + ([stem] if request.turn == 0 else [])):
            found = self._answer(turn_stem)
            if found is not None:
                return found
        raise ProviderError(f"no {stem}{'' if request.turn == 0 else f'_turn_{request.turn}'}_raw_response.txt "
                            f"or ..._kernel.py in {self.folder}")

    def _answer(self, stem: str) -> Completion | None:
        raw = self.folder / f"{stem}_raw_response.txt"
        if raw.is_file():
            return Completion(raw.read_text(), finish_reason="replay")
        kernel = self.folder / f"{stem}_kernel.py"
        if kernel.is_file():
            return Completion(f"```python\n{kernel.read_text().rstrip()}\n```\n", finish_reason="replay")
        return None
