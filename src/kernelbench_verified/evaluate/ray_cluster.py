"""eval_mode=ray: the same judges and jails, one judge per GPU of a Ray cluster.

Each judge is a Ray actor holding one GPU (a fake GPU resource and device=cpu in tests); it runs the
judge of local mode, with its sandboxes and jail, on the node Ray placed it. Jobs go to idle judges;
records stream back to the driver, which alone writes the run's result file (atomically, resumable, as
in local mode). A judge whose worker or node dies mid-sample costs that sample only: it is retried once
on another judge, then recorded `crashed`. Builds go to kernel_eval_build_dir, which must be a path
every node sees.

Ray is an optional extra (`pip install -e ".[ray]"`), imported only here.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from ..errors import UserError

ATTEMPTS = 2  # a sample whose judge died is tried once more elsewhere


def import_ray():
    try:
        import ray
    except ImportError:
        raise UserError('eval_mode=ray needs Ray: pip install -e ".[ray]"') from None
    return ray


class RayJudge:
    """A Ray actor: one judge bound to the GPU Ray gave it (CUDA_VISIBLE_DEVICES is Ray's)."""

    def __init__(self, settings: dict, device: str, build_root: str):
        from .launch import SPARE_SANDBOXES, start_sandbox
        from .run import child_environment

        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "") if device != "cpu" else ""
        self.env = child_environment(settings, Path(build_root), visible)
        os.environ.update(self.env)
        spares = tuple(start_sandbox(self.env, settings.get("jail"))
                       for _ in range(SPARE_SANDBOXES if device != "cpu" else 1))
        from ..measure.environment import fingerprint_for
        from .judge import Judge

        self.judge = Judge(settings, "cpu" if device == "cpu" else "cuda:0", self.env, spares)
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
    ray = import_ray()
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        judges = _start_judges(ray, settings, device, build_root, recorder)
        _drive(ray, judges, deque(jobs), recorder, progress)
        for judge in judges:
            _quietly(ray, judge.close.remote())
    finally:
        ray.shutdown()


def _start_judges(ray, settings: dict, device: str, build_root: Path, recorder) -> dict:
    """One judge per GPU of the cluster, each with where it runs."""
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if gpus < 1:
        raise UserError("the Ray cluster offers no GPU resource: start its nodes with --num-gpus "
                        "(a fake count with device=cpu)")
    actor = ray.remote(num_gpus=1, num_cpus=1, max_restarts=0)(RayJudge)
    judges = [actor.remote(settings, device, str(build_root)) for _ in range(gpus)]
    places = {}
    for judge in judges:
        where, fingerprint = ray.get(judge.describe.remote())
        recorder.save_fingerprint(where, fingerprint)
        places[judge] = where
    return places


def _drive(ray, judges: dict, pending: deque, recorder, progress) -> None:
    """Keep every live judge busy; record each result as it arrives; retry a dead judge's sample once."""
    idle, running, attempts = list(judges), {}, {}
    while pending or running:
        while idle and pending:
            judge, (problem, sid, job) = idle.pop(), pending.popleft()
            attempts[job["key"]] = attempts.get(job["key"], 0) + 1
            running[judge.evaluate.remote(job)] = (judge, problem, sid, job)
        if not running:
            raise UserError("every Ray judge died; the samples not yet recorded are left for a re-run")
        (done,), _ = ray.wait(list(running), num_returns=1)
        judge, problem, sid, job = running.pop(done)
        try:
            judged = ray.get(done)
            idle.append(judge)
        except ray.exceptions.RayTaskError as exc:  # the judge itself raised: a harness bug, judge still alive
            judged = {"eval_status": "harness_error", "error": str(exc)[-2000:]}
            idle.append(judge)
        except ray.exceptions.RayError as exc:  # its worker process or node died
            if attempts[job["key"]] < ATTEMPTS:
                pending.appendleft((problem, sid, job))
                continue
            judged = {"eval_status": "crashed",
                      "error": f"the Ray judge evaluating it died {ATTEMPTS} times ({type(exc).__name__})"}
        judged.setdefault("build_dir", job["build_dir"])
        judged["ray_attempt"] = attempts[job["key"]]
        progress.update(job["key"], recorder.save(problem, sid, judged, device=judges[judge]))


def _quietly(ray, ref) -> None:
    try:
        ray.get(ref, timeout=60)
    except Exception:  # a judge on a node that has gone: nothing left to close
        pass
