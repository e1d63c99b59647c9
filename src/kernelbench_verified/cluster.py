"""What evaluation and baselines share on a Ray cluster (eval_mode=ray): connecting, one actor per GPU,
and a loop that keeps every actor busy, hands each result to the driver and retries the work of an
actor that died once elsewhere.

Ray is an optional extra (`pip install -e ".[ray]"`), imported only here, only in ray mode.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from .errors import UserError

ATTEMPTS = 2  # work whose actor died is tried once more elsewhere


def import_ray():
    try:
        import ray
    except ImportError:
        raise UserError('eval_mode=ray needs Ray: pip install -e ".[ray]"') from None
    return ray


def connect(address: str | None):
    """Ray, connected to the cluster at `address` (None: a Ray started on this machine)."""
    ray = import_ray()
    ray.init(address=address, include_dashboard=False, log_to_driver=False)
    return ray


def start_actors(ray, cls: type, *args) -> list:
    """One actor of `cls(*args)` per GPU of the cluster, each holding that GPU and no CPU: a judge
    mostly waits on its GPU, and one that held a CPU would keep a build task off it (on a 2-core node
    builds then ran one at a time, 1.6x slower than local mode, where judges and builds share cores)."""
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if gpus < 1:
        raise UserError("the Ray cluster offers no GPU resource: start its nodes with --num-gpus "
                        "(a fake count with device=cpu)")
    actor = ray.remote(num_gpus=1, num_cpus=0, max_restarts=0)(cls)
    return [actor.remote(*args) for _ in range(gpus)]


def drive(ray, actors: list, pending: deque, submit: Callable, done: Callable, failed: Callable,
          incoming=None) -> None:
    """Until no work is left: `submit(actor, item)` (an ObjectRef) to each idle actor, then
    `done(actor, item, result, attempt)` for each result as it arrives. An item whose actor raised is
    `failed(item, error, False)`; one whose actor or node died is retried once on another actor, then
    `failed(item, error, True)`. `incoming` (optional) brings more work while this runs: its `refs` are
    ObjectRefs waited on beside the actors' (the builds), and `arrived(ref)` gives the items one of them
    made ready."""
    idle, running, attempts = list(actors), {}, {}
    while pending or running or (incoming is not None and incoming.refs):
        while idle and pending:
            actor, item = idle.pop(), pending.popleft()
            attempts[id(item)] = attempts.get(id(item), 0) + 1
            running[submit(actor, item)] = (actor, item)
        if pending and not running and not idle:
            raise UserError("every Ray actor died; the work not yet recorded is left for a re-run")
        more = incoming.refs if incoming is not None else []
        (ref,), _ = ray.wait(list(running) + more, num_returns=1)
        if ref not in running:
            pending.extend(incoming.arrived(ref))
            continue
        actor, item = running.pop(ref)
        try:
            result = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the actor's own code raised; the actor lives on
            idle.append(actor)
            failed(item, str(exc)[-2000:], False)
            continue
        except ray.exceptions.RayError as exc:  # its worker process or node died
            if attempts[id(item)] < ATTEMPTS:
                pending.appendleft(item)
            else:
                failed(item, f"the Ray worker running it died {ATTEMPTS} times ({type(exc).__name__})", True)
            continue
        idle.append(actor)
        done(actor, item, result, attempts[id(item)])


def close_actors(ray, refs: list) -> None:
    """Wait for the actors' close calls; one on a node that has gone has nothing left to close."""
    for ref in refs:
        try:
            ray.get(ref, timeout=60)
        except Exception:
            pass
