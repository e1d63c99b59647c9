"""generate_baseline_time.py eval_mode=ray: one timing worker per GPU of a Ray cluster, each timing
whole problems with the same function as local mode; the driver alone writes the baseline files. A
problem whose worker or node died is timed once more elsewhere, then recorded as a failure."""

from __future__ import annotations

import os
from collections import deque

from .. import cluster


class RayTimer:
    """A Ray actor: times problems on the GPU Ray gave it (or the CPU, with device=cpu)."""

    def __init__(self, settings: dict, device: str):
        import torch

        self.settings = settings
        self.device = torch.device("cpu" if device == "cpu" else "cuda:0")

    def describe(self) -> dict:
        from ..measure.environment import gpu_model_id
        from ..problems.validation import hardware_label
        from .timing import mode_fingerprint

        return {"where": f"ray:{os.uname().nodename}:{os.environ.get('CUDA_VISIBLE_DEVICES') or 'cpu'}",
                "gpu": gpu_model_id(self.device) if self.device.type == "cuda" else "cpu",
                "hardware": hardware_label(self.device),
                "fingerprints": {m: mode_fingerprint(m, self.device, self.settings) for m in self.settings["modes"]}}

    def time(self, job: dict) -> list:
        from .timing import time_job

        return list(time_job(job, self.settings, self.device))


class RayTimers:
    """The cluster's timers, started at once so the driver learns the hardware and fingerprints first."""

    def __init__(self, settings: dict, device: str, address: str | None):
        from ..errors import UserError

        self.ray = cluster.connect(address)
        self.actors = cluster.start_actors(self.ray, RayTimer, settings, "cpu" if device == "cpu" else "cuda")
        described = self.ray.get([actor.describe.remote() for actor in self.actors])
        if len({d["gpu"] for d in described}) > 1:
            self.ray.shutdown()
            raise UserError(f"the cluster's GPUs differ ({sorted({d['gpu'] for d in described})}): "
                            "time each model on its own cluster")
        self.where = {actor: d["where"] for actor, d in zip(self.actors, described)}
        self.devices = [d["where"] for d in described]
        self.fingerprints, self.hardware = described[0]["fingerprints"], described[0]["hardware"]

    def run(self, jobs: list, files, progress) -> None:
        from .timing import finish_entry

        def put(job: dict, mode: str, entry: dict, where: str) -> None:
            entry = finish_entry(entry, job, where, self.fingerprints[mode])
            files.put(mode, job["level"], job["filename"], entry)
            progress.update(job, mode, entry)

        def done(actor, job: dict, timed: list, attempt: int) -> None:
            for mode, entry in timed:
                put(job, mode, entry, self.where[actor])

        def failed(job: dict, error: str, lost: bool) -> None:
            for mode in job["modes"]:
                put(job, mode, {"error": error}, "ray")

        try:
            cluster.drive(self.ray, self.actors, deque(jobs), lambda actor, job: actor.time.remote(job), done, failed)
        finally:
            progress.close()
            self.ray.shutdown()
