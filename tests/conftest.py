import importlib.util
import shutil
from pathlib import Path

import pytest

from kernelbench_verified.config import load_config

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "tiny"
KERNELS = TINY / "kernels"


def load_benchmark(name: str):
    """A script of benchmarks/ imported as a module (they are scripts, not package modules)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_run(runs_dir: Path, name: str, kernels: dict) -> Path:
    """A run folder holding the given example kernels: {(pid, sid): kernel file stem}."""
    run_dir = runs_dir / name
    run_dir.mkdir(parents=True, exist_ok=True)
    for (pid, sid), stem in kernels.items():
        shutil.copy(KERNELS / f"{stem}.py", run_dir / f"level_1_problem_{pid}_sample_{sid}_kernel.py")
    return run_dir


def tiny_overrides(runs_dir: Path, name: str, **extra) -> list[str]:
    values = {"run_name": name, "runs_dir": str(runs_dir), "level": 1,
              "problems_dir": str(TINY / "KernelBench"), "hidden_tests_dir": str(TINY / "hidden_tests"),
              "num_perf_trials": 5, "num_warmup": 1, "num_cpu_workers": 2,
              "kernel_eval_build_dir": str(runs_dir / "builds"), **extra}
    return [f"{k}={v}" for k, v in values.items()]


@pytest.fixture
def tiny_config():
    def compose(runs_dir: Path, name: str, **extra):
        return load_config("eval", tiny_overrides(runs_dir, name, **extra))

    return compose
