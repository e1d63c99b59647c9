"""A run's own problems: the folders an imported run records, and its claims file. Torch-free.

A run that scripts/import_kernels.py wrote from a corpus whose references differ from the shipped
problems records, in its generate_config.yaml and relative to the run folder, the problems folder it was
written against (`run_problems_dir`), their hidden tests (`run_hidden_tests_dir`) and where their
baselines go (`run_timing_dir`). The evaluator, the baseline script and the leaderboard read them from
there, so none of them needs problems_dir= or hidden_tests_dir= for such a run. Claims the corpus made
about its kernels live beside the records in `claims.json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from .errors import UserError, first_line
from .results import RUN_CONFIG_NAMES, read_json

CLAIMS_FILE = "claims.json"
FOLDER_KEYS = ("run_problems_dir", "run_hidden_tests_dir", "run_timing_dir")

# The kinds of baseline a corpus claims a speedup against, and the baseline file (its mode) that times
# the same kind here. A kind without a file (CUDA graphs, a vendor library, ...) is shown, not compared.
CLAIM_BASELINES = {
    "eager": "baseline_time_torch",
    "eager_tf32": "baseline_time_torch_tf32",
    "eager_fp32_ieee": "baseline_time_torch_fp32_ieee",
    "compile": "baseline_time_torch_compile_inductor_default",
    "compile_max_autotune": "baseline_time_torch_compile_inductor_max_autotune",
    "cuda_graphs": None,
}


@dataclass(frozen=True)
class RunFolders:
    """The folders a run records; None for a run evaluated against the shipped problems."""
    level: int | None
    problems_dir: Path | None
    hidden_tests_dir: Path | None
    timing_dir: Path | None

    @property
    def own_problems(self) -> bool:
        return self.problems_dir is not None


NO_FOLDERS = RunFolders(None, None, None, None)


def run_config(run_dir: Path) -> DictConfig | None:
    """The run's recorded generate_config.yaml (or upstream's name for it), None when there is none."""
    for name in RUN_CONFIG_NAMES:
        path = Path(run_dir) / name
        if path.is_file() and not path.is_symlink():
            try:
                return OmegaConf.load(path)
            except Exception as exc:
                raise UserError(f"{path} is not readable YAML ({first_line(exc)}): fix or remove it") from None
    return None


def run_folders(run_dir: str | Path) -> RunFolders:
    """The problems, hidden-test and timing folders a run records (resolved against the run folder)."""
    run_dir = Path(run_dir)
    cfg = run_config(run_dir)
    if cfg is None or cfg.get("run_problems_dir") is None:
        return NO_FOLDERS
    folders = [(run_dir / str(cfg[key])).resolve() if cfg.get(key) is not None else None for key in FOLDER_KEYS]
    if not folders[0].is_dir():
        raise UserError(f"run {run_dir} records its problems in {folders[0]}, which is not a folder: "
                        f"re-run import_kernels.py for it")
    level = cfg.get("level")
    return RunFolders(int(level) if level is not None else None, *folders)


def fill_problem_dirs(cfg: DictConfig, run_dir: Path) -> RunFolders:
    """problems_dir and hidden_tests_dir from the run's record where the command line left them null;
    a level other than the run's own is refused (its kernels were written for that level)."""
    folders = run_folders(run_dir)
    if not folders.own_problems:
        return folders
    if folders.level is not None and int(cfg.level) != folders.level:
        raise UserError(f"run {run_dir.name} holds level {folders.level} kernels, not level {cfg.level}: "
                        f"pass level={folders.level}")
    if cfg.get("problems_dir") is None:
        OmegaConf.update(cfg, "problems_dir", str(folders.problems_dir), force_add=True)
    if "hidden_tests_dir" in cfg and cfg.hidden_tests_dir is None and folders.hidden_tests_dir is not None:
        OmegaConf.update(cfg, "hidden_tests_dir", str(folders.hidden_tests_dir))
    return folders


def load_claims(run_dir: str | Path) -> dict | None:
    """{(pid, sid): [claim, ...]} of a run's claims.json, None when it has none. A claim is
    {"column", "kind", "claimed", "baseline"} (baseline: the file timing that kind here, or None)."""
    path = Path(run_dir) / CLAIMS_FILE
    if not path.is_file() or path.is_symlink():
        return None
    raw = read_json(path, "claims file")
    if not isinstance(raw, dict):
        raise UserError(f"claims file {path} does not hold a JSON object keyed \"{{pid}}_{{sid}}\"")
    claims = {}
    for key, items in raw.items():
        pid, _, sid = str(key).partition("_")
        if not (pid.isdigit() and sid.isdigit() and isinstance(items, list)):
            raise UserError(f"claims file {path} has a malformed entry {key!r}: expected \"{{pid}}_{{sid}}\": [...]")
        claims[(int(pid), int(sid))] = [c for c in items if isinstance(c, dict)]
    return claims
