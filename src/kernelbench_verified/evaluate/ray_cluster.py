"""eval_mode=ray: the same judges and jails, one judge per GPU of a Ray cluster.

Each judge is a Ray actor holding one GPU (a fake GPU resource and device=cpu in tests); it runs the
judge of local mode, with its sandboxes and jail, on the node Ray placed it. Jobs go to idle judges;
records stream back to the driver, which alone writes the run's result file (atomically, resumable, as
in local mode). A judge whose worker or node dies mid-sample costs that sample only: it is retried once
on another judge, then recorded `crashed`. Builds go to kernel_eval_build_dir, which must be a path
every node sees.

Ray is an optional extra (`pip install -e ".[ray]"`), imported only in this mode (kernelbench_verified.cluster).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from .. import cluster


class RayJudge:
    """A Ray actor: one judge bound to the GPU Ray gave it (CUDA_VISIBLE_DEVICES is Ray's)."""

    def __init__(self, settings: dict, device: str, build_root: str):
        from .launch import child_environment
        from .worker import start_spares

        local = "cpu" if device == "cpu" else "cuda:0"
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "") if device != "cpu" else ""
        self.env = child_environment(settings, Path(build_root), visible)
        os.environ.update(self.env)
        spares = start_spares(self.env, settings, local)
        from ..measure.environment import fingerprint_for
        from .judge import Judge

        self.judge = Judge(settings, local, self.env, spares)
        self.where = f"ray:{os.uname().nodename}:{visible or 'cpu'}:{os.getpid()}"
        self.fingerprint = fingerprint_for(self.judge.device, settings["tf32_mode"], settings["precision"], settings)

    def describe(self) -> tuple[str, dict]:
        return self.where, self.fingerprint

    def evaluate(self, job: dict) -> dict:
        return self.judge.evaluate(job)

    def close(self) -> None:
        self.judge.close()


def dispatch_on_ray(jobs: list, settings: dict, device: str, build_root: Path, recorder, progress,
                    address: str | None) -> None:
    """Evaluate `jobs` [(problem, sid, job)] on the cluster at `address` (None: a local Ray)."""
    ray = cluster.connect(address)
    try:
        judges = cluster.start_actors(ray, RayJudge, settings, device, str(build_root))
        places = {}
        for judge in judges:
            places[judge], fingerprint = ray.get(judge.describe.remote())
            recorder.save_fingerprint(places[judge], fingerprint)

        def save(judge, item, judged: dict, attempt: int) -> None:
            problem, sid, job = item
            judged.setdefault("build_dir", job["build_dir"])
            judged["ray_attempt"] = attempt
            progress.update(job["key"], recorder.save(problem, sid, judged, device=places.get(judge, "ray")))

        def failed(item, error: str, lost: bool) -> None:
            status = "crashed" if lost else "harness_error"  # its judge died, or the judge itself raised
            save(None, item, {"eval_status": status, "error": error}, cluster.ATTEMPTS if lost else 1)

        cluster.drive(ray, judges, deque(jobs), lambda judge, item: judge.evaluate.remote(item[2]), save, failed)
        cluster.close_actors(ray, [judge.close.remote() for judge in judges])
    finally:
        ray.shutdown()
