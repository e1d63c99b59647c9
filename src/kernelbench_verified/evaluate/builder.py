"""The build stage: a kernel built once, ahead of its judging, in a jailed sandbox on a CPU worker.

`BuildWorker.build(job)` starts a sandbox that loads the kernel (so its extensions build into the
kernel's content-addressed directory, build.py), constructs ModelNew and calls it once on the meta
device (extension_builds.probe_builds, for builds made lazily in `__init__` or the first forward), and keeps
the build. Its outcome is recorded beside the build directories, so a re-run builds nothing. Local
mode's Precompiler (run.py) and Ray's build tasks (ray_cluster.py) use it alike; the judge then finds
the kernel built.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from .build import outcome_marker
from .exchange import Exchange, converse
from .job import Job
from .launch import start_sandbox
from .messages import Event, Op, SandboxMode
from .record import JudgedRecord, note_place, reported_builds
from ..results import read_json, write_json_atomic
from ..verdicts import Status

# What a build's outcome marker keeps of its record.
KEPT = ("compiled", "eval_status", "error", "compiler_output", "extension_builds")


class BuildWorker:
    """Builds kernels in sandboxes of its own, on the CPU (no GPU is visible to them)."""

    def __init__(self, settings: dict, child_env: dict):
        self.settings, self.child_env = settings, child_env

    def build(self, job: Job) -> dict:
        """The kernel's build outcome: recorded once (compiled, or a compile error), then read back."""
        marker = outcome_marker(job)
        if marker.is_file():
            return read_json(marker, "build marker")
        built = self.run(replace(job, device="cpu", timeout=job.compile_timeout))
        if built.get("compiled") or built.get("eval_status") == Status.COMPILE_ERROR:
            write_json_atomic(marker, {k: built[k] for k in KEPT if k in built})
        return built

    def run(self, job: Job) -> JudgedRecord:
        """One build in a fresh sandbox, within the job's timeout; the sandbox is gone after."""
        import torch

        started = time.monotonic()
        sandbox = start_sandbox(self.child_env, self.settings.get("jail"))
        record = JudgedRecord(eval_status=None, cases=[])

        def talk(exchange: Exchange) -> None:
            init_args = probe_arguments(job)
            build_dir = sandbox.seed_build(Path(job.build_dir))
            exchange.post({"job": job.for_sandbox(SandboxMode.COMPILE, build_dir, init_args, None)})
            record["extension_builds"] = reported_builds(exchange.expect(Event.COMPILED).get("builds"))
            record["compiled"] = True
            sandbox.harvest_build(Path(job.build_dir))
            exchange.post({"op": Op.END})

        try:
            converse(sandbox, job.timeout, Path(job.build_dir), record, torch.device("cpu"), talk)
        finally:
            sandbox.close()
        record["eval_seconds"] = time.monotonic() - started
        note_place(record, torch.device("cpu"), None)
        return record


def probe_arguments(job: Job) -> list | None:
    """ModelNew's constructor arguments for the build's probe, or None when they hold tensors (which
    travel as bytes, and the probe goes without them)."""
    import torch

    from .transport import export_values
    from ..problems.inputs import init_arguments
    from ..problems.load import load_module

    problem = load_module(job.problem_path, "judge_problem")
    descs, payload = export_values(init_arguments(problem, job.seed, torch.device("cpu")))
    return None if payload else descs
