"""timing_path=sandbox: every reference timed exactly as a kernel is, as its own candidate.

Each pending reference becomes the kernel file `class ModelNew(Model): pass` of a run under
`sandbox_runs_dir`; evaluate_run then times it through the judge, the jail and the per-call requests
that every kernel's timed calls take, with the mode's TF32 setting and precision, on this machine or
(eval_mode=ray) on the cluster's judges. The record's judge statistics become the baseline entry.
On the H200, identical code scored 0.989 (level 2) and 0.990 (level 1) against plain-process
baselines, and 1.002 and 1.001 against baselines timed this way; how far identical code strays today
is the validation summary's `references` section (scripts/validate_harness.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ..config import load_config
from ..evaluate.run import evaluate_run, result_filename
from ..measure.memory import record_method
from ..problems.load import self_candidate
from ..results import read_json, write_json_atomic
from .timing import MODES, STAT_KEYS, finish_entry


def entry_from_record(record: dict | None) -> dict:
    """A baseline entry from a self-candidate's record; anything but a correct, timed record is a failure."""
    if not record:
        return {"error": "not evaluated: the run has no record of it"}
    meta = record.get("metadata", {})
    if record.get("eval_status") != "correct" or record.get("runtime", -1) <= 0:
        why = meta.get("error") or meta.get("failed_case") or meta.get("runtime_withheld") or ""
        return {"error": f"{record.get('eval_status')} as its own candidate: {str(why)[:300]}"}
    stats = record["runtime_stats"]
    return dict({key: stats[key] for key in STAT_KEYS}, peak_memory=int(record.get("peak_memory", -1)),
                peak_memory_method=record_method(record), seconds=float(meta.get("eval_seconds") or 0.0))


def eval_config(cfg: DictConfig, settings: dict, mode_name: str, level: int, runs_dir: Path, run_name: str,
                pids: list[int]):
    """The evaluator's config for one mode and level: the baseline's timing settings, nothing judged
    beyond one correctness trial (the reference against itself), no static checks, and only the
    problems `pids` spans (the others would be recorded as missing kernels)."""
    mode = MODES[mode_name]
    overrides = [f"run_name={run_name}", f"runs_dir={runs_dir}", f"level={level}", f"device={cfg.device}",
                 f"subset=[{min(pids)},{max(pids)}]",
                 f"num_gpu_devices={cfg.num_gpu_devices}", f"precision={mode.precision}",
                 f"tf32_mode={mode.tf32}", f"num_perf_trials={settings['num_perf_trials']}",
                 f"num_warmup={settings['num_warmup']}", f"flush_l2={settings['flush_l2']}",
                 f"seed={settings['seed']}", "num_correct_trials=1", "use_hidden_tests=False",
                 "measure_performance=True", "static_check=off", f"eval_mode={cfg.eval_mode}"]
    if cfg.eval_mode == "ray" and cfg.ray_address:
        overrides.append(f"ray_address={cfg.ray_address}")
    if cfg.problems_dir:
        overrides.append(f"problems_dir={cfg.problems_dir}")
    eval_cfg = load_config("eval", overrides)
    OmegaConf.update(eval_cfg, "num_perf_trials_by_level", dict(settings["num_perf_trials_by_level"]), merge=False)
    return eval_cfg


def time_in_sandbox(cfg: DictConfig, settings: dict, jobs: list[dict], files, fingerprints: dict,
                    device: str) -> None:
    """Time every pending (problem, mode) of `jobs` through the evaluator; each level and mode is one
    run, resumed by the evaluator if it was cut short, then written to the baseline files."""
    # Beside the baseline files by default, so a run folder never serves two baseline folders.
    beside_files = next(iter(files.paths.values())).parent / "sandbox_runs"
    runs_dir = Path(cfg.sandbox_runs_dir) if cfg.sandbox_runs_dir else beside_files
    for mode in settings["modes"]:
        for level in sorted({job["level"] for job in jobs if mode in job["modes"]}):
            pending = [job for job in jobs if job["level"] == level and mode in job["modes"]]
            run_name = f"{mode}_level{level}"
            run_dir = runs_dir / run_name
            if cfg.force:
                shutil.rmtree(run_dir, ignore_errors=True)
            run_dir.mkdir(parents=True, exist_ok=True)
            _forget_failures(run_dir, [job for job in pending if job["filename"] in files.files[mode].failures.get(
                f"level{level}", {})])
            for job in pending:
                (run_dir / f"level_{level}_problem_{job['pid']}_sample_0_kernel.py").write_text(
                    self_candidate(Path(job["path"]).read_text()))
            print(f"{mode}, level {level}: {len(pending)} reference(s) timed as their own candidates "
                  f"-> {run_dir}")
            evaluate_run(eval_config(cfg, settings, mode, level, runs_dir, run_name,
                                     [job["pid"] for job in pending]))
            records = read_json(run_dir / result_filename(False), "results file")
            for job in pending:
                record = records.get(f"{job['pid']}_0") or {}
                where = record.get("metadata", {}).get("device") or device  # a Ray judge names its node and GPU
                files.put(mode, level, job["filename"],
                          finish_entry(entry_from_record(record), job, where, fingerprints[mode]))


def _forget_failures(run_dir: Path, jobs: list[dict]) -> None:
    """Drop the run's records of references the baseline file holds as failures (retry_failed=true), so
    the evaluator times them again instead of resuming their old record. Records of references the file
    does not hold yet stay: they are a run cut short, resumed."""
    path = run_dir / result_filename(False)
    if not jobs or not path.is_file():
        return
    records = read_json(path, "results file")
    write_json_atomic(path, {k: v for k, v in records.items() if k not in {f"{job['pid']}_0" for job in jobs}})
