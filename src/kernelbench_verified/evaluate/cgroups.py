"""One memory cgroup per jailed sandbox: the host memory of the sandbox and of everything it starts is
capped by the kernel (the CUDA driver's pinned and mapped pages included, which RLIMIT_DATA cannot
separate from the driver's reservations), and afterwards the judge reads from the cgroup itself whether
the cap was hit and how much was used.

cgroup v2 where it offers the memory controller (the H200), else v1's memory hierarchy (the CPU
machines). The evaluator, as root, creates the cgroup; the jail's pid 1 joins it before anything of the
sandbox runs (jail.prepare), so every process the kernel starts is in it. Standard library only.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

V2_ROOT = Path("/sys/fs/cgroup")
V1_MEMORY_ROOT = Path("/sys/fs/cgroup/memory")
PARENT_NAME = "kbv_sandboxes"
# Each cgroup's name starts with its evaluator's tag (eval{pid}), so that an evaluator removes what its
# judges left, and the next one what a killed evaluator left.
OWNER_ENV = "KBV_CGROUP_OWNER"
OWNER_NAME = re.compile(r"eval(\d+)_sandbox_\d+$")


@dataclass(frozen=True)
class Hierarchy:
    version: int
    parent: Path  # the folder that holds one cgroup per sandbox

    def describe(self, limit_gb: float) -> str:
        knob = "memory.max" if self.version == 2 else "memory.limit_in_bytes"
        return f"cgroup v{self.version} {knob} {limit_gb:g} GiB per sandbox, no swap"


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per hierarchy ('' is v2's), from /proc/self/cgroup."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(","):
            paths[name] = path
    return paths


def _v2_parent() -> Path:
    """kbv_sandboxes under the v2 hierarchy's root, with the memory controller handed down to it. The
    root cgroup is the one place where processes and controlled children may coexist."""
    if "memory" not in (V2_ROOT / "cgroup.controllers").read_text().split():
        raise OSError("cgroup v2 is mounted without the memory controller")
    (V2_ROOT / "cgroup.subtree_control").write_text("+memory")
    parent = V2_ROOT / PARENT_NAME
    parent.mkdir(exist_ok=True)
    (parent / "cgroup.subtree_control").write_text("+memory")
    return parent


def _v1_parent() -> Path:
    parent = V1_MEMORY_ROOT / _own_cgroups()["memory"].lstrip("/") / PARENT_NAME
    parent.mkdir(exist_ok=True)
    return parent


@functools.cache
def locate() -> tuple[Hierarchy | None, str]:
    """The hierarchy sandboxes' cgroups go in, or None and why there is none (one line)."""
    if os.geteuid() != 0:
        return None, "creating cgroups needs root"
    reasons = []
    if (V2_ROOT / "cgroup.controllers").is_file():
        try:
            return Hierarchy(2, _v2_parent()), ""
        except OSError as exc:
            reasons.append(f"v2: {exc}")
    if (V1_MEMORY_ROOT / "cgroup.procs").is_file():
        try:
            return Hierarchy(1, _v1_parent()), ""
        except (OSError, KeyError) as exc:
            reasons.append(f"v1: {exc!r}")
    return None, "; ".join(reasons) or "no cgroup memory controller is mounted"


def _is_zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True  # gone already


def owner_tag() -> str:
    """This evaluator's tag: inherited by its judges through OWNER_ENV, else made from this pid."""
    return os.environ.get(OWNER_ENV) or f"eval{os.getpid()}"


def _live_processes(path: Path) -> list[int]:
    try:
        listed = (path / "cgroup.procs").read_text().split()
    except OSError:
        return []
    return [int(pid) for pid in listed if not _is_zombie(pid)]


def _kill_all(path: Path) -> list[int]:
    """Kill whatever is still in the cgroup; returns those pids."""
    left = _live_processes(path)
    deadline = time.monotonic() + 5
    while (alive := _live_processes(path)) and time.monotonic() < deadline:
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.02)
    return left


def _remove(path: Path) -> None:
    _kill_all(path)
    deadline = time.monotonic() + 5
    while path.exists():
        try:
            path.rmdir()
        except FileNotFoundError:
            return
        except OSError:  # busy until the last killed task has exited
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)


def remove_left_behind(owner: str) -> int:
    """Remove the cgroups of `owner` (an evaluator at its end) and of every evaluator no longer alive;
    returns how many went."""
    hierarchy, _ = locate()
    if hierarchy is None:
        return 0
    removed = 0
    for path in hierarchy.parent.glob("eval*_sandbox_*"):
        match = OWNER_NAME.match(path.name)
        if match and (path.name.startswith(owner + "_") or not _alive(int(match[1]))):
            _remove(path)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(str(pid))


class SandboxCgroup:
    """The cgroup of one sandbox: created with its cap before the sandbox starts, removed after it."""

    def __init__(self, hierarchy: Hierarchy, uid: int, limit_bytes: int, owner: str | None = None):
        self.version, self.path = hierarchy.version, hierarchy.parent / f"{owner or owner_tag()}_sandbox_{uid}"
        self.limit_bytes = limit_bytes
        if self.path.exists():  # left by an evaluator that was killed, under a uid now reused
            _remove(self.path)
        self.path.mkdir()
        if self.version == 2:
            self._write("memory.max", limit_bytes)
            self._write("memory.swap.max", 0, optional=True)
            self._write("memory.oom.group", 1, optional=True)  # the whole sandbox goes, not one thread's host
        else:
            self._write("memory.limit_in_bytes", limit_bytes)
            self._write("memory.memsw.limit_in_bytes", limit_bytes, optional=True)  # no escape into swap

    def _write(self, knob: str, value: int, optional: bool = False) -> None:
        try:
            (self.path / knob).write_text(str(value))
        except OSError:
            if not optional:
                raise

    def _read(self, knob: str) -> str:
        try:
            return (self.path / knob).read_text()
        except OSError:
            return ""

    @property
    def procs_file(self) -> str:
        """What the jail's pid 1 writes "0" into to join."""
        return str(self.path / "cgroup.procs")

    def hit_limit(self) -> bool:
        """Whether the kernel's OOM killer acted in this cgroup (the cap was reached and nothing was
        left to reclaim)."""
        fields = self._events()
        return int(fields.get("oom_kill", 0)) > 0 or int(fields.get("oom_group_kill", 0)) > 0

    def reached_cap(self) -> bool:
        """Whether the processes' memory ever reached the cap. Without swap, the OS then reclaims the
        processes' own file pages (torch's libraries) over and over, which can burn the CPU-time limit
        before the OOM killer acts."""
        hits = self._events().get("max", 0) if self.version == 2 else self._read("memory.failcnt").strip() or 0
        # Some kernels leave the counter at 0 (seen on a v1 hierarchy): a peak near the cap says it too.
        # Reclaim holds the usage a little below the cap (97.6 % in CI's case), hence 90 %.
        return int(hits) > 0 or (self.peak_bytes() or 0) >= 0.9 * self.limit_bytes

    def _events(self) -> dict[str, str]:
        knob = "memory.events" if self.version == 2 else "memory.oom_control"
        return dict(line.split() for line in self._read(knob).splitlines() if len(line.split()) == 2)

    def peak_bytes(self) -> int | None:
        """The most host memory the sandbox's processes held at once (v2 needs Linux 5.19+)."""
        text = self._read("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes").strip()
        return int(text) if text.isdigit() else None

    def processes(self) -> list[int]:
        """Live processes in the cgroup (v1 still lists a zombie until its parent reaps it)."""
        return _live_processes(self.path)

    def kill_all(self) -> list[int]:
        """Kill whatever is still in the cgroup; returns those pids (none, after a sandbox whose PID
        namespace ended)."""
        return _kill_all(self.path)

    def remove(self) -> None:
        _remove(self.path)
