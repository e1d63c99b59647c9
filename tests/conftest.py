import importlib.util
import os
import shutil
import threading
from pathlib import Path

import pytest
import torch

from kernelbench_verified.config import load_config

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "tiny"
KERNELS = TINY / "kernels"

# Two test workers share CI's two CPUs: torch's pool of two threads in each oversubscribes them, and a
# 512-step bidirectional GRU's forward then takes 47 s instead of 7 s on one thread. Only this process:
# the judges and sandboxes the tests start choose their own threads.
torch.set_num_threads(1)


# The files whose runs take minutes on CI's two CPUs, longest first (seconds of one worker, read off
# pytest's --durations: 420, 300, 260, 170, 170, 130). make test has pytest-xdist hand whole files to
# its workers in collection order (--no-loadscope-reorder): by default it orders them by their number of
# tests, which put these few-test files last, and one worker ran test_zero_trust.py alone for its last
# minutes. Every other file follows, in name order.
LONGEST_FILES = ("test_eval_verdicts.py", "test_zero_trust.py", "test_ray_cluster.py", "test_jail.py",
                 "test_baseline.py", "test_pch.py")


def pytest_collection_modifyitems(items):
    """The longest files first, so that the two workers finish close together (see LONGEST_FILES)."""
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


# The precompiled torch header every tiny_overrides run's C++ builds read (torch_pch_dir): made once per
# session, beside the tests, instead of once per run that builds four extensions or more. With make test's
# two workers on two CPUs, a C++ build's compiler took 36-44 s of CPU reading torch/extension.h and 10-14 s
# with the header, which took 60 s to make (process accounting of the suite); a session makes about a
# dozen such builds. Only the flag set the test kernels use (none): the -O3 one would cost another 60 s.
SHARED_PCH: dict = {}


@pytest.fixture(scope="session", autouse=True)
def shared_torch_pch(tmp_path_factory):
    """The session's header folder (the workers of one session share it; its lock has the second maker
    wait for the first)."""
    base = tmp_path_factory.getbasetemp()
    SHARED_PCH["dir"] = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "torch_pch"
    yield SHARED_PCH["dir"]
    if SHARED_PCH.get("maker"):
        SHARED_PCH["maker"].join()


def start_shared_pch() -> Path:
    """The session's header folder, its header being made in the background from the first call on. A build
    that starts before it is made reads torch's header itself. The probe of the compiler changes os.environ
    for a moment, so it runs here, in the test's own thread, never beside a test."""
    if "maker" not in SHARED_PCH:
        from kernelbench_verified.evaluate import jail, pch

        SHARED_PCH["maker"] = None
        try:
            toolchain = pch.Toolchain(SHARED_PCH["dir"], jail.allowed_environment(os.environ))
        except Exception as exc:  # no compiler or ninja here: the builds say so themselves
            print(f"no shared precompiled header: {exc}")
            return SHARED_PCH["dir"]
        SHARED_PCH["maker"] = threading.Thread(target=toolchain.ensure, args=(("default",),), daemon=True)
        SHARED_PCH["maker"].start()
    return SHARED_PCH["dir"]


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
    """An evaluation of the tiny example problems, cheap for CI's two CPUs. No spare sandbox: a run's
    last spare serves no job and costs a torch import (2.6 s of CPU); test_library covers the spares.
    C++ builds read the session's precompiled header (start_shared_pch)."""
    values = {"run_name": name, "runs_dir": str(runs_dir), "level": 1,
              "problems_dir": str(TINY / "KernelBench"), "hidden_tests_dir": str(TINY / "hidden_tests"),
              "num_perf_trials": 5, "num_warmup": 1, "num_cpu_workers": 2, "spare_sandboxes": 0,
              "kernel_eval_build_dir": str(runs_dir / "builds"), "torch_pch_dir": str(start_shared_pch()), **extra}
    return [f"{k}={v}" for k, v in values.items()]


@pytest.fixture
def tiny_config():
    def compose(runs_dir: Path, name: str, **extra):
        return load_config("eval", tiny_overrides(runs_dir, name, **extra))

    return compose
