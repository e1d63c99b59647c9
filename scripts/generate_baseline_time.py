"""Time every reference Model, as the evaluator times kernels, in each baseline mode.

    python scripts/generate_baseline_time.py level=[1,2,3] num_gpu_devices=4

Keys and defaults: configs/baseline.yaml. Results: results/timing/{HW}/{mode}.json, each with an
environment fingerprint; a re-run resumes.
"""

from pathlib import Path

from kernelbench_verified.cli import Sweeps, run_script


def generate(cfg):
    from kernelbench_verified.baseline.run import generate_baselines  # imports torch: not for --help

    return generate_baselines(cfg)


def baseline_files(cfg) -> list:
    """What one job writes: a file per mode, {out_dir}/{hardware}/{mode}.json, holding every level, and
    for timing_path=sandbox a run folder per eager mode and level."""
    from kernelbench_verified.run_problems import run_folders

    if cfg.run_name:  # an imported run's own problems: its level and folder (baseline.run.with_run_folders)
        folders = run_folders(Path(cfg.runs_dir) / str(cfg.run_name))
        cfg.level, cfg.out_dir = folders.level or cfg.level, str(folders.timing_dir or cfg.out_dir)
    hardware = cfg.hardware or ("cpu" if cfg.device == "cpu" else "(this GPU)")
    folder = Path(cfg.out_dir) / str(hardware)
    eager = [str(m) for m in cfg.modes or []]
    modes = eager + [f"baseline_time_torch_compile_{name}" for name in cfg.compile_modes or []]
    places = [folder / f"{mode}.json" for mode in modes]
    if cfg.timing_path == "sandbox":
        levels = [cfg.level] if isinstance(cfg.level, int) else list(cfg.level or [])
        sandbox_runs = Path(cfg.sandbox_runs_dir) if cfg.sandbox_runs_dir else folder / "sandbox_runs"
        places += [sandbox_runs / f"{mode}_level{level}" for mode in eager for level in levels]
    return places


SWEEPS = Sweeps(baseline_files, "time several levels or modes in one job (level=[1,2,3], modes=[...]), "
                                "or give each job its own out_dir or hardware")

if __name__ == "__main__":
    run_script("baseline", generate, __doc__, SWEEPS)
