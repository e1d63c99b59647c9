"""Finding the runs of a leaderboard and loading what it is computed from.

Runs are folders named `{model}_level{L}_test` (fp32) or `{model}_level{L}_bf16_test`, or any folder whose
recorded generate_config.yaml names its model and level; each holds
eval_results.json and/or eval_results_hidden.json. Baselines are results/timing/{HW}/{name}.json;
the degenerate-problem list comes from the problem suite (results/degenerate_problems.json).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..config import hardware_label
from ..paths import CHECKOUT_ROOT
from ..measure.baseline_files import load_baseline as read_baseline_file
from ..errors import UserError
from ..measure.memory import TOTAL_IN_PLAIN_PROCESS, baseline_method
from ..results import RUN_CONFIG_NAMES, is_derived, read_json
from ..run_problems import RunFolders, run_folders

# The evaluator's file names (kept here so the leaderboard does not import torch through evaluate.py).
STANDARD_RESULTS = "eval_results.json"
HIDDEN_RESULTS = "eval_results_hidden.json"
DEFAULT_TIMING_DIR = CHECKOUT_ROOT / "results" / "timing"
DEFAULT_DEGENERATE_FILE = CHECKOUT_ROOT / "results" / "degenerate_problems.json"

RUN_NAME = re.compile(r"^(?P<model>.+)_level(?P<level>\d+)(?P<bf16>_bf16)?_test$")
RECORD_KEY = re.compile(r"^(\d+)_(\d+)$")
KERNEL_FILE = re.compile(r"^level_\d+_problem_(\d+)_sample_(\d+)_kernel\.py$")
BASELINE_LEVEL = re.compile(r"^level(\d+)$")
PROBLEM_FILE = re.compile(r"^(\d+)_")
MAX_KERNEL_BYTES = 4 << 20  # the evaluator's bound on a kernel file (evaluate.run.MAX_KERNEL_BYTES)


@dataclass(frozen=True)
class Run:
    name: str
    model: str
    level: int
    precision: str   # fp32 | bf16
    path: Path

    @property
    def folders(self) -> RunFolders:
        """The problems, hidden-test and baseline folders the run records (an imported corpus's own)."""
        return run_folders(self.path)

    def kernel_path(self, pid: int, sid: int) -> Path:
        return self.path / f"level_{self.level}_problem_{pid}_sample_{sid}_kernel.py"

    def kernel_text(self, pid: int, sid: int) -> tuple[str | None, str | None]:
        """(text, None) of a kernel file that is a regular file directly inside the run folder, else
        (None, why it is not read): the leaderboard shows no file a link points at, as the evaluator
        evaluates none (evaluate.run.read_kernel)."""
        path = self.kernel_path(pid, sid)
        if path.is_symlink():
            return None, f"{path.name} is a symbolic link"
        if not path.exists():
            return None, None
        if path.resolve().parent != self.path.resolve():
            return None, f"{path.name} lies outside the run folder"
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            return None, f"{path.name} cannot be read ({exc.strerror})"
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None, f"{path.name} is not a regular file"
            data = handle.read(MAX_KERNEL_BYTES + 1)
        if len(data) > MAX_KERNEL_BYTES:
            return None, f"{path.name} is larger than {MAX_KERNEL_BYTES} bytes"
        return data.decode("utf-8", errors="replace"), None


@dataclass
class RunResults:
    """A run's records by (pid, sid): the standard evaluation and the hidden one, when present."""
    run: Run
    standard: dict | None
    hidden: dict | None
    num_samples: int


@dataclass(frozen=True)
class BaselineEntry:
    problem: str        # file name, e.g. 19_ReLU.py
    mean_ms: float
    peak_memory: int    # bytes, -1 when not recorded
    problem_sha256: str | None = None  # digest of the problem file it timed (None in older files)
    memory_method: str = TOTAL_IN_PLAIN_PROCESS  # how peak_memory was measured (measure.memory)


@dataclass
class Baseline:
    name: str
    path: Path
    levels: dict        # {level: {pid: BaselineEntry}}
    fingerprint: dict | None
    digest: str         # first 12 hex digits of the file's sha256
    extra_keys: list = field(default_factory=list)


def timed_on_cpu(baseline: Baseline) -> bool:
    """Whether a baseline's times are CPU times (by its fingerprint, or the hardware folder of an
    older file without one)."""
    if baseline.fingerprint:
        return baseline.fingerprint.get("device") == "cpu"
    return baseline.path.parent.name.lower().startswith("cpu")


def parse_run_name(name: str, runs_dir: Path) -> Run | None:
    """The run's model, level and precision: from a `{model}_level{L}[_bf16]_test` name, else from the
    config generate_samples.py recorded in the folder (so `run_name=test` shows up too)."""
    match = RUN_NAME.match(name)
    if match:
        precision = "bf16" if match["bf16"] else "fp32"
        return Run(name, match["model"], int(match["level"]), precision, runs_dir / name)
    return run_from_config(name, runs_dir)


def run_from_config(name: str, runs_dir: Path) -> Run | None:
    from omegaconf import OmegaConf

    for config_name in RUN_CONFIG_NAMES:
        path = runs_dir / name / config_name
        if path.is_file() and not path.is_symlink():
            try:
                cfg = OmegaConf.load(path)
                model, level = str(cfg.model_name), int(cfg.level)
            except Exception:  # a config that does not say: the run is not discovered this way
                return None
            precision = "bf16" if str(cfg.get("precision", "fp32")) == "bf16" else "fp32"
            return Run(name, model, level, precision, runs_dir / name)
    return None


def find_runs(runs_dir: str | Path, names: list[str] | None = None) -> list[Run]:
    """The named runs, or every run folder under runs_dir that follows the naming pattern."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        raise UserError(f"runs directory {runs_dir} not found (set --runs_dir)")
    if names:
        runs = []
        for name in names:
            run = parse_run_name(name, runs_dir)
            if run is None:
                raise UserError(f"run {name!r} is not named {{model}}_level{{L}}_test or {{model}}_level{{L}}_bf16_test "
                                f"and holds no generate_config.yaml naming its model and level")
            if run.path.is_symlink():
                raise UserError(f"run folder {run.path} is a symbolic link; the leaderboard does not follow links")
            if not run.path.is_dir():
                raise UserError(f"run folder {run.path} not found")
            runs.append(run)
        return runs
    runs = [run for path in sorted(runs_dir.iterdir()) if path.is_dir() and not path.is_symlink()
            and (run := parse_run_name(path.name, runs_dir)) is not None]
    if not runs:
        raise UserError(f"no runs in {runs_dir}: expected folders named {{model}}_level{{L}}_test or "
                        f"{{model}}_level{{L}}_bf16_test")
    return runs


def load_records(path: Path) -> dict | None:
    """{(pid, sid): record} of one result file, or None when the file does not exist."""
    if path.is_symlink():
        raise UserError(f"result file {path} is a symbolic link; the leaderboard does not follow links")
    if not path.exists():
        return None
    raw = read_json(path, "result file")
    if not isinstance(raw, dict):
        raise UserError(f"result file {path} does not hold a JSON object keyed \"{{pid}}_{{sid}}\"")
    records = {}
    for key, record in raw.items():
        match = RECORD_KEY.match(str(key))
        if not match or not isinstance(record, dict):
            raise UserError(f"result file {path} has a malformed entry {key!r}: expected \"{{pid}}_{{sid}}\": {{...}}")
        records[(int(match[1]), int(match[2]))] = record
    return records


def standard_records(records: dict | None) -> dict | None:
    """The records of a standard evaluation in eval_results.json: without the entries a hidden evaluation
    derived for upstream's readers (results.fill_standard_file); None when nothing else is there."""
    kept = {key: record for key, record in (records or {}).items() if not is_derived(record)}
    return kept or None


def load_run_results(run: Run, warnings: list[str]) -> RunResults | None:
    standard = standard_records(load_records(run.path / STANDARD_RESULTS))
    hidden = load_records(run.path / HIDDEN_RESULTS)
    if standard is None and hidden is None:
        warnings.append(f"run {run.name} has neither {STANDARD_RESULTS} nor {HIDDEN_RESULTS}: left out")
        return None
    sample_ids = [sid for records in (standard or {}, hidden or {}) for (_, sid) in records]
    sample_ids += [int(m[2]) for p in run.path.glob("level_*_kernel.py")
                   if not p.is_symlink() and (m := KERNEL_FILE.match(p.name))]
    return RunResults(run, standard, hidden, max(sample_ids, default=-1) + 1)


def evaluated_hardware(loaded: list[RunResults]) -> str:
    """The baseline folder of the device these runs were evaluated on (their records' hardware): speedups
    compare timings of one GPU model, so runs of several need the folder named (--hardware)."""
    labels = {hardware_label(name) for results in loaded for records in (results.standard, results.hidden)
              for record in (records or {}).values()
              if isinstance(name := (record.get("metadata") or {}).get("hardware"), str)}
    if len(labels) == 1:
        return labels.pop()
    if not labels:
        raise UserError("no record of these runs names the device it was evaluated on: name the baseline folder "
                        "with --hardware (hardware= for the analysis)")
    raise UserError(f"these runs were evaluated on {', '.join(sorted(labels))}: name the one to score with "
                    f"--hardware (hardware= for the analysis), or list runs of one device with --runs")


def baseline_path(timing_dir: str | Path, hardware: str, name: str) -> Path:
    return Path(timing_dir) / hardware / f"{name}.json"


def load_baseline(timing_dir: str | Path, hardware: str, name: str) -> Baseline:
    """A baseline file, read by the same code that writes it, as per-problem entries by level."""
    path = baseline_path(timing_dir, hardware, name)
    if not path.is_file():
        raise UserError(f"baseline file {path} not found (check --baseline, --hardware and --timing_dir)")
    stored = read_baseline_file(path)
    levels = {}
    for key, value in stored.levels.items():
        match = BASELINE_LEVEL.match(key)
        if match:
            levels[int(match[1])] = _baseline_level(value, path, key, stored.fingerprint)
    if not levels:
        raise UserError(f"baseline file {path} has no \"levelN\" entries")
    extra = [key for key, present in (("failures", stored.failures), ("fingerprint", stored.fingerprint)) if present]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return Baseline(name, path, levels, stored.fingerprint, digest, extra)


def _baseline_level(entries, path: Path, level_key: str, fingerprint: dict | None) -> dict:
    if not isinstance(entries, dict):
        raise UserError(f"baseline file {path}: {level_key} must map problem files to timing objects")
    problems = {}
    for problem, entry in entries.items():
        match = PROBLEM_FILE.match(problem)
        mean = entry.get("mean") if isinstance(entry, dict) else None
        if not match or isinstance(mean, bool) or not isinstance(mean, (int, float)):
            raise UserError(f"baseline file {path}: {level_key}/{problem} needs a numeric \"mean\" (ms)")
        memory = entry.get("peak_memory", -1)
        digest = entry.get("problem_sha256")
        problems[int(match[1])] = BaselineEntry(problem, float(mean),
                                                int(memory) if isinstance(memory, (int, float)) else -1,
                                                digest if isinstance(digest, str) else None,
                                                baseline_method(entry, fingerprint))
    return problems


def load_degenerate(path: str | Path) -> dict:
    """{level: {pid: {"problem", "reason"}}} from the problem suite's degenerate-problem list."""
    path = Path(path)
    raw = read_json(path, "degenerate-problem list")
    if not isinstance(raw, dict):
        raise UserError(f"degenerate-problem list {path} does not hold a JSON object of levels")
    listed = {}
    for key, problems in raw.items():
        match = BASELINE_LEVEL.match(key)
        if not match or not isinstance(problems, dict):
            raise UserError(f"degenerate-problem list {path}: {key!r} should be \"levelN\": {{pid: {{...}}}}")
        listed[int(match[1])] = {int(pid): info if isinstance(info, dict) else {"reason": str(info)}
                                 for pid, info in problems.items() if str(pid).isdigit()}
    return listed


# The problems upstream's leaderboard (kernel_bench_verified, scripts/generate_leaderboard.py) leaves out
# of its table: three level-2 problems whose output is constant zero for any input. Its
# benchmark_eval_analysis.py leaves out none (excluded=none reproduces that script).
UPSTREAM_EXCLUDED = {2: {23: "23_Conv3d_GroupNorm_Mean.py", 80: "80_Gemm_Max_Subtract_GELU.py",
                         83: "83_Conv3d_GroupNorm_Min_Clamp_Dropout.py"}}
UPSTREAM_EXCLUDED_REASON = "excluded by upstream's leaderboard (constant-zero output for any input)"
EXCLUDED_CHOICES = ("ours", "upstream", "none")


@dataclass(frozen=True)
class Excluded:
    """The problems left out of every metric, and which list they come from (said on the page)."""
    problems: dict      # {level: {pid: {"problem", "reason"}}}
    choice: str         # ours | upstream | none | file
    source: str         # the list's file, or where upstream's list comes from

    def of_level(self, level: int) -> set[int]:
        return set(self.problems.get(level, {}))

    def describe(self) -> str:
        return {"ours": f"ours: the problem suite's degenerate problems ({self.source})",
                "upstream": f"upstream's: its leaderboard's level-2 #23, #80, #83 ({self.source})",
                "none": "none: every problem is scored",
                "file": f"the file {self.source}"}[self.choice]


def load_excluded(choice: str | None, degenerate_file: str | Path = DEFAULT_DEGENERATE_FILE) -> Excluded:
    """The excluded-problem list `choice` names: ours (the problem suite's degenerate problems, read from
    `degenerate_file`), upstream (its leaderboard's three level-2 problems), none, or the path of a list
    in our file's format."""
    choice = str(choice or "ours")
    if choice == "ours":
        return Excluded(load_degenerate(degenerate_file), "ours", str(degenerate_file))
    if choice == "upstream":
        problems = {level: {pid: {"problem": name, "reason": UPSTREAM_EXCLUDED_REASON} for pid, name in pids.items()}
                    for level, pids in UPSTREAM_EXCLUDED.items()}
        return Excluded(problems, "upstream", "kernel_bench_verified's scripts/generate_leaderboard.py")
    if choice == "none":
        return Excluded({}, "none", "")
    if not Path(choice).is_file():
        raise UserError(f"excluded={choice!r} is none of {', '.join(EXCLUDED_CHOICES)} and no file: name a list "
                        f"or the path of one in results/degenerate_problems.json's format")
    return Excluded(load_degenerate(choice), "file", choice)


def excluded_of_run(run: Run, excluded: Excluded) -> set[int]:
    """The problems left out of one run: the chosen list's for a run of the shipped problems. A run with
    its own problems (an imported corpus) takes the degenerate list beside them, written by
    validate_problems.py --problems-dir ... --degenerate-file {corpus}/degenerate_problems.json, else none:
    the shipped list names other files."""
    folders = run.folders
    if not folders.own_problems:
        return excluded.of_level(run.level)
    beside = folders.problems_dir.parent / "degenerate_problems.json"
    return set(load_degenerate(beside).get(run.level, {})) if beside.is_file() and excluded.choice != "none" else set()


class Baselines:
    """Baseline files by name, read once: the shared folder's (timing_dir/hardware), or for a run with its
    own problems its own timing folder's (generate_baseline_time.py run_name=... writes it)."""

    def __init__(self, timing_dir: str | Path, hardware: str):
        self.timing_dir, self.hardware = Path(timing_dir), hardware
        self.loaded: dict[Path, Baseline | None] = {}

    def path(self, run: Run | None, name: str) -> Path:
        own = run.folders.timing_dir if run is not None else None
        return baseline_path(own or self.timing_dir, self.hardware, name)

    def get(self, run: Run | None, name: str) -> Baseline | None:
        """The baseline `name` that scores `run` (None: the shared one), or None when it is not timed yet."""
        path = self.path(run, name)
        if path not in self.loaded:
            self.loaded[path] = load_baseline(path.parent.parent, self.hardware, name) if path.is_file() else None
        return self.loaded[path]
