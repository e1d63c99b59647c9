"""eval_mode=ray: the same judges and jails, one judge per GPU of a Ray cluster.

Each judge is a Ray actor holding one GPU (a fake GPU resource and device=cpu in tests); it runs the
judge of local mode, with its sandboxes and jail, on the node Ray placed it. With build_cache, each
distinct build is a one-CPU Ray task (in the jail, on whichever node Ray picks), and its kernels go to the
judges as soon as it ends, so the GPUs work while the builds go on. Jobs go to idle judges; records stream
back to the driver, which alone writes the run's result file (atomically, resumable, as in local mode). A
judge whose worker or node dies mid-sample costs that sample only: it is retried once on another judge,
then recorded `crashed`; a build task is retried once too.

Builds go to kernel_eval_build_dir. When that is not one folder every node sees (ray_ship_builds=true),
each build task also packs its finished build into Ray's object store, and a judge unpacks it into a
folder of its own before the kernel's evaluation. A jailed kernel finds its build at /build on every
node, so torch reuses it as built; unjailed, torch rebuilds a build that moved.

Ray is an optional extra (`pip install -e ".[ray]"`), imported only in this mode (kernelbench_verified.cluster).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import cluster
from ..verdicts import Status
from .launch import child_environment
from .placement import lower_build_priority
from .record import failure
from .worker import by_build, failed_to_build, start_spares


MTIMES = ".kbv_mtimes.json"  # the packed files' modification times, in nanoseconds


def pack_build(folder: Path) -> bytes:
    """A finished build folder as a gzipped tar of its regular files (never links or lock files), with
    their exact modification times: ninja rebuilds when an output looks older than its log says, and a
    tar keeps whole seconds."""
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink() and p.name != "lock"]
    mtimes = {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in files}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in files:
            archive.add(path, arcname=str(path.relative_to(folder)), recursive=False)
        manifest = json.dumps(mtimes).encode()
        info = tarfile.TarInfo(MTIMES)
        info.size = len(manifest)
        archive.addfile(info, io.BytesIO(manifest))
    return buffer.getvalue()


def unpack_build(payload: bytes, folder: Path) -> None:
    """Unpack a packed build into `folder` (unless it is there): regular files only, none outside it,
    with their modification times, through a staging folder renamed at the end. The kernel's build
    process wrote these files, so they go into its build folder and nowhere else."""
    if folder.exists():
        return
    staging = Path(tempfile.mkdtemp(prefix=folder.name + ".", dir=folder.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(payload), mode="r:gz") as archive:
            members = [m for m in archive.getmembers() if m.isfile() and m.name != MTIMES]
            archive.extractall(staging, members=members, filter="data")
            mtimes = json.loads(archive.extractfile(MTIMES).read())
        for name, mtime in mtimes.items():
            target = staging / name
            if target.is_file() and target.resolve().is_relative_to(staging.resolve()):
                os.utime(target, ns=(mtime, mtime))
        staging.rename(folder)
    except tarfile.TarError as exc:  # our packer writes no such archive
        shutil.rmtree(staging, ignore_errors=True)
        raise ValueError(f"a shipped build that cannot be unpacked as it is: {exc}") from None
    except OSError:  # another sample of the same build unpacked it first
        shutil.rmtree(staging, ignore_errors=True)


def build_task(settings: dict, build_root: str, job, ship: bool) -> tuple[dict, bytes | None]:
    """A Ray task: build one kernel (a job.Job) in the jail on this node with the build worker local
    mode uses; with `ship`, also the finished build, packed."""
    from .builder import BuildWorker

    worker = BuildWorker(settings, child_environment(settings, Path(build_root), visible_devices=""))
    # In a thread of its own, niced as local builds are: the node's GPU judges may be timing beside it,
    # and this Ray worker may run other tasks after it. Which CPUs they use is Ray's to say, not ours.
    with ThreadPoolExecutor(1, initializer=lower_build_priority, initargs=(os.sched_getaffinity(0),)) as thread:
        built = thread.submit(worker.build, job).result()
    folder = Path(job.build_dir)
    return built, pack_build(folder) if ship and built.get("compiled") and folder.is_dir() else None


class RayBuilds:
    """Every distinct build of the run as a Ray task; a kernel is ready to evaluate when its build ends
    (one that did not compile is recorded at once, without a judge)."""

    def __init__(self, ray, jobs: list, settings: dict, build_root: Path, ship: bool, recorder, progress):
        self.ray, self.recorder, self.progress = ray, recorder, progress
        task = ray.remote(num_cpus=1, num_returns=2, max_retries=1)(build_task)
        self.waiting = {}
        for group in by_build(jobs):
            record_ref, payload_ref = task.remote(settings, str(build_root), group[0][2], ship)
            self.waiting[record_ref] = (group, payload_ref if ship else None)

    @property
    def refs(self) -> list:
        return list(self.waiting)

    def arrived(self, ref) -> list:
        group, payload = self.waiting.pop(ref)
        try:
            built = self.ray.get(ref)
        except self.ray.exceptions.RayError:  # the task failed twice: each judge builds for itself
            built, payload = {}, None
        return [(problem, sid, job, payload if built.get("compiled") else None) for problem, sid, job in group
                if not failed_to_build(problem, sid, job, built, self.recorder, self.progress)]


class RayJudge:
    """A Ray actor: one judge bound to the GPU Ray gave it (CUDA_VISIBLE_DEVICES is Ray's)."""

    def __init__(self, settings: dict, device: str, build_root: str, ship: bool = False):
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
        # Shipped builds land in a folder of this judge's own, never in one a build task writes.
        if ship:
            Path(build_root).mkdir(parents=True, exist_ok=True)
        self.own_builds = Path(tempfile.mkdtemp(prefix="kbv_shipped_builds_", dir=build_root)) if ship else None

    def describe(self) -> tuple[str, dict]:
        return self.where, self.fingerprint

    def evaluate(self, job, payload: bytes | None = None) -> dict:
        if self.own_builds is not None:
            job = job.moved_to(str(self.own_builds / Path(job.build_dir).name))
            if payload is not None:
                unpack_build(payload, Path(job.build_dir))
        record = self.judge.evaluate(job)
        if self.own_builds is not None:
            record.update(build_dir=job.build_dir, build_shipped_bytes=len(payload) if payload is not None else 0)
        return record

    def close(self) -> None:
        self.judge.close()
        if self.own_builds is not None:
            shutil.rmtree(self.own_builds, ignore_errors=True)


def dispatch_on_ray(jobs: list, settings: dict, device: str, build_root: Path, recorder, progress,
                    address: str | None, build: bool = False, ship: bool = False) -> None:
    """Evaluate `jobs` [(problem, sid, job)] on the cluster at `address` (None: a local Ray); with
    `build`, each distinct build first runs as a Ray task and its kernels follow it."""
    ray = cluster.connect(address)
    try:
        judges = cluster.start_actors(ray, RayJudge, settings, device, str(build_root), ship)
        places = {}
        for judge in judges:
            places[judge], fingerprint = ray.get(judge.describe.remote())
            recorder.save_fingerprint(places[judge], fingerprint)

        def save(judge, item, judged: dict, attempt: int) -> None:
            problem, sid, job = item[:3]
            judged.setdefault("build_dir", job.build_dir)
            judged["ray_attempt"] = attempt
            progress.update(job.key, recorder.save(problem, sid, judged, device=places.get(judge, "ray")))

        def failed(item, error: str, lost: bool) -> None:
            status = Status.CRASHED if lost else Status.HARNESS_ERROR  # its judge died, or the judge itself raised
            save(None, item, failure(status, error), cluster.ATTEMPTS if lost else 1)

        builds = RayBuilds(ray, jobs, settings, build_root, ship, recorder, progress) if build else None
        pending = deque() if build else deque((problem, sid, job, None) for problem, sid, job in jobs)
        cluster.drive(ray, judges, pending, lambda judge, item: judge.evaluate.remote(item[2], item[3]),
                      save, failed, incoming=builds)
        cluster.close_actors(ray, [judge.close.remote() for judge in judges])
    finally:
        ray.shutdown()
