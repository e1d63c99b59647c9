"""Starting and stopping sandbox processes, without importing torch (see worker.py for why).

With the jail on (the default), a sandbox starts inside its own namespaces (jail.unshare_command) with
an allow-listed environment; its output goes through a pipe that the judge drains into the job's log,
and a sandbox that writes more than the log cap is killed (resource_limit: log_size).
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import cgroups, jail
from .build import TRITON_CACHE
from .channel import Channel
from .messages import Op

PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])
_SANDBOX_COUNTER = itertools.count()


class LogPump(threading.Thread):
    """Copies a sandbox's output into its log file up to `limit` bytes; past that, kills it."""

    def __init__(self, source: int, log_path: Path, limit: int, process: subprocess.Popen):
        super().__init__(daemon=True)
        self.source, self.log_path, self.limit, self.process = source, log_path, limit, process
        self.exceeded = False

    def run(self) -> None:
        written = 0
        with open(self.log_path, "wb") as log:
            while chunk := os.read(self.source, 1 << 16):
                keep = chunk[: max(0, self.limit - written)]
                log.write(keep)
                written += len(chunk)
                if written > self.limit and not self.exceeded:
                    self.exceeded = True
                    log.write(b"\n[log cap reached: the sandbox was stopped]\n")
                    log.flush()
                    kill_group(self.process, wait=False)
        os.close(self.source)


class LimitWatch(threading.Thread):
    """Polled every quarter second while the sandbox runs: kills it when its build directory (on the
    host's disk, where each file is capped by RLIMIT_FSIZE but their number is not) grows past
    `build_limit` bytes, and notes the most processes and CPU seconds its uid had (to name a process
    or CPU limit it hit)."""

    def __init__(self, folder: Path, build_limit: int, uid: int, process: subprocess.Popen):
        super().__init__(daemon=True)
        self.folder, self.limit, self.uid, self.process = folder, build_limit, uid, process
        self.exceeded, self.most_processes, self.most_cpu_seconds = False, 0, 0.0

    def run(self) -> None:
        while self.process.poll() is None:
            tasks, cpu = usage_of_uid(self.uid)
            self.most_processes = max(self.most_processes, tasks)
            self.most_cpu_seconds = max(self.most_cpu_seconds, cpu)
            if folder_bytes(self.folder) > self.limit:
                self.exceeded = True
                kill_group(self.process, wait=False)
                return
            time.sleep(0.25)


def _says_out_of_processes(log_path: Path) -> bool:
    try:
        with open(log_path, "rb") as log:
            log.seek(0, 2)
            log.seek(max(0, log.tell() - 8192))
            tail = log.read().decode(errors="replace")
    except OSError:
        return False
    return "Resource temporarily unavailable" in tail and ("fork" in tail or "hread" in tail)


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


@dataclass
class Sandbox:
    """A started sandbox process waiting for its job, with its private directory and channel."""

    process: subprocess.Popen
    channel: Channel
    workdir: Path
    uid: int | None = None
    pump: LogPump | None = None
    limits: dict = field(default_factory=dict)
    limit_watch: LimitWatch | None = None
    cgroup: cgroups.SandboxCgroup | None = None
    idle: bool = False  # its "idle" was read: imports done, waiting for its first message
    asked: bool = False  # sent "prepare" (once at most: the sandbox reads its job next)
    preparing: bool = False  # asked to set up CUDA ("prepare"); its "prepared" not read yet
    prepared: bool = False  # its CUDA is set up
    setup_seconds: float | None = None  # what setting CUDA up took it

    def ask_to_prepare(self, device: str) -> None:
        """Have it set up CUDA now (sandbox.prepare_device); its "prepared" answers."""
        self.channel.send({"op": Op.PREPARE, "device": device})
        self.asked = self.preparing = True

    def note_prepared(self, reply: dict) -> None:
        self.preparing, self.prepared = False, reply.get("ok") is True
        seconds = reply.get("seconds")
        if self.prepared and isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
            self.setup_seconds = round(float(seconds), 3)

    @property
    def log_path(self) -> Path:
        return self.workdir / "log.txt"

    @property
    def build_dir(self) -> Path:
        """On the host: the folder the jail sees as /build."""
        return self.workdir / "build"

    def seed_build(self, cached: Path) -> str:
        """Copy a kernel's cached build (if any) into this sandbox's own build folder; returns the path
        the sandbox builds in. Unjailed, the sandbox builds in the cache itself."""
        if self.uid is None:
            return str(cached)
        if cached.is_dir():
            shutil.copytree(cached, self.build_dir, symlinks=True, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("lock"))
            for root, dirs, files in os.walk(self.build_dir):
                for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                    os.lchown(name, self.uid, self.uid)
        self.limit_watch = LimitWatch(self.build_dir, int(self.limits["build_mb"]) << 20, self.uid, self.process)
        self.limit_watch.start()
        return jail.JAIL_BUILD_DIR

    def harvest_build(self, cached: Path) -> None:
        """After a build that succeeded, keep it in the content-addressed cache (first one wins)."""
        if self.uid is not None:
            _keep_first(self.build_dir, cached)

    def keep_build(self) -> Path | None:
        """After its conversation: a copy of what the sandbox's build folder holds (its regular files:
        the builds it found, those it made itself, Triton's and Inductor's caches) in a folder of the
        judge's, for the sample's robustness sandbox to start from; None when unjailed (the sandbox
        built in the cache itself)."""
        if self.uid is None or not self.build_dir.is_dir():
            return None
        kept = Path(tempfile.mkdtemp(prefix="kbv_kept_build_")) / "build"
        try:
            _keep_first(self.build_dir, kept)
        except OSError:  # a full disk, say: the robustness sandbox starts from the shared cache instead
            shutil.rmtree(kept.parent, ignore_errors=True)
            return None
        return kept

    def harvest_triton_cache(self, cached: Path) -> None:
        """After the Triton warm-up: keep what Triton compiled beside the build (first one wins).
        Unjailed, Triton compiled into the cache itself."""
        if self.uid is not None:
            _keep_first(self.build_dir / TRITON_CACHE, cached / TRITON_CACHE)

    def limit_exceeded(self) -> str | None:
        if self.cgroup is not None and self.cgroup.hit_limit():
            return (f"host_memory: the kernel's processes reached {self.cgroup.limit_bytes / (1 << 30):g} GiB of "
                    "host memory and the OS killed them")
        if self.limit_watch is not None and (self.limit_watch.exceeded or
                                             folder_bytes(self.limit_watch.folder) > self.limit_watch.limit):
            shutil.rmtree(self.limit_watch.folder, ignore_errors=True)
            return f"build_size: the kernel's build directory grew past {self.limits['build_mb']} MiB (removed)"
        if self.limit_watch is not None and self.limit_watch.most_cpu_seconds >= self.limits["max_cpu_seconds"] - 1:
            if self.cgroup is not None and self.cgroup.reached_cap():
                return (f"host_memory: the kernel's processes reached {self.cgroup.limit_bytes / (1 << 30):g} GiB of "
                        f"host memory, and reclaiming pages at that cap used up the CPU-time limit "
                        f"({self.limit_watch.most_cpu_seconds:.0f} s)")
            return f"cpu_time: a process of the kernel used {self.limit_watch.most_cpu_seconds:.0f} CPU seconds, the limit"
        if self.limit_watch is not None and self.limit_watch.most_processes >= self.limits["max_processes"] - 2:
            return f"processes: the kernel's uid ran {self.limit_watch.most_processes} processes and threads, the limit"
        if self.pump is not None:
            self.pump.join(timeout=5)
            if self.pump.exceeded:
                return f"log_size: the kernel's process wrote more than {self.limits.get('log_mb')} MiB of output"
            if self.uid is not None and _says_out_of_processes(self.log_path):
                # Between two polls of the watch: the kernel's own output names the failed fork or thread.
                return "processes: the kernel's process could not start a process or thread (the limit)"
        return None

    def leftover_processes(self) -> list[int]:
        """After the sandbox was killed: processes still in its cgroup, killed now (none should be)."""
        return self.cgroup.kill_all() if self.cgroup is not None else []

    def close(self) -> None:
        os.close(self.channel.read_fd)
        os.close(self.channel.write_fd)
        if self.pump is not None:
            self.pump.join(timeout=5)
        if self.cgroup is not None:
            self.cgroup.remove()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def discard(self) -> None:
        """Kill an unused sandbox and remove its directory."""
        kill_group(self.process)
        self.close()


def _keep_first(folder: Path, cached: Path) -> None:
    """Copy `folder` to `cached` unless `cached` exists, atomically (a staging folder renamed). Only
    regular files and folders are copied, never links or lock files."""
    if cached.exists() or not folder.is_dir():
        return
    staging = cached.with_name(cached.name + f".tmp{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    for root, dirs, files in os.walk(folder):
        target = staging / Path(root).relative_to(folder)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            source = Path(root) / name
            if name != "lock" and source.is_file() and not source.is_symlink():
                shutil.copy2(source, target / name)
    try:
        staging.rename(cached)
    except OSError:  # another judge kept the same one first
        shutil.rmtree(staging, ignore_errors=True)


def child_environment(settings: dict, build_root: Path, visible_devices: str) -> dict:
    """The environment of a judge and its sandboxes (the jail then keeps an allow-list of it)."""
    env = dict(os.environ)
    env["TORCH_CUDA_ARCH_LIST"] = settings["arch_list"]
    # Extensions are routed into the kernel's own build directory; these catch-alls stay private.
    env["TORCH_EXTENSIONS_DIR"] = "/tmp/torch_extensions" if settings.get("jail") else str(build_root)
    env["TRITON_CACHE_DIR"] = "/tmp/triton" if settings.get("jail") else str(build_root / "triton")
    env["CUDA_VISIBLE_DEVICES"] = visible_devices
    env[cgroups.OWNER_ENV] = cgroups.owner_tag()  # the judges' sandbox cgroups carry this evaluator's tag
    return env


def start_sandbox(child_env: dict, jail_limits: dict | None = None) -> Sandbox:
    """Start `python -m kernelbench_verified.evaluate.sandbox` in a new session and a private
    directory (inside the jail's namespaces unless `jail_limits` is None); it imports torch and then
    waits on its channel for one job."""
    workdir = Path(tempfile.mkdtemp(prefix="kbv_job_"))
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    env = jail.allowed_environment(child_env) if jail_limits is not None else dict(child_env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [PACKAGE_PARENT, env.get("PYTHONPATH")]))
    # The interpreter's own bin (a venv's ninja) first: shims elsewhere on PATH are not in the jail.
    env["PATH"] = os.pathsep.join(filter(None, [os.path.dirname(sys.executable), env.get("PATH")]))
    command = [sys.executable, "-m", "kernelbench_verified.evaluate.sandbox", str(to_child_r), str(from_child_w)]
    uid, cgroup = None, None
    if jail_limits is not None:
        uid = jail.jail_uid(os.getpid() * 64 + next(_SANDBOX_COUNTER))
        spec = dict(jail_limits, uid=uid, staging_dir=str(workdir / "root"), build_dir=str(workdir / "build"))
        if jail_limits.get("cgroup_memory_gb"):
            cgroup = sandbox_cgroup(uid, jail_limits["cgroup_memory_gb"])
            spec["cgroup_procs"] = cgroup.procs_file
        command = jail.command(spec, command + ["--jailed"])
    log_r, log_w = os.pipe()
    process = subprocess.Popen(command, pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL,
                               stdout=log_w, stderr=log_w, env=env, cwd=workdir, start_new_session=True)
    for fd in (to_child_r, from_child_w, log_w):
        os.close(fd)
    limits = dict(jail_limits or {})
    pump = LogPump(log_r, workdir / "log.txt", int(limits.get("log_mb", 64)) << 20, process)
    pump.start()
    return Sandbox(process, Channel(from_child_r, to_child_w), workdir, uid, pump, limits, cgroup=cgroup)


def sandbox_cgroup(uid: int, limit_gb: float) -> cgroups.SandboxCgroup:
    hierarchy, why_not = cgroups.locate()
    if hierarchy is None:  # the evaluator checked before it asked for cgroups
        raise RuntimeError(f"no memory cgroup for the sandbox: {why_not}")
    return cgroups.SandboxCgroup(hierarchy, uid, int(limit_gb * (1 << 30)))


def kill_group(process: subprocess.Popen, wait: bool = True) -> bool:
    """Kill the sandbox and everything it started; True if it was still running. In the jail the
    namespace's pid 1 dies with it, so the kernel takes every process there along."""
    was_running = process.poll() is None
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if wait:
        process.wait()
    return was_running


def _uid_status(uid: int):
    """(pid, thread count, CPU seconds) of every process on this host whose real uid is `uid`."""
    ticks = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as status:
                text = status.read()
            # Most processes are another uid's: compare the real uid before parsing the rest (the judge
            # scans every process of the host after each sandbox, and a watch thread does every 0.25 s).
            if (_status_field(text, "Uid").split() or [""])[0] != str(uid):
                continue
            fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            if fields.get("State", "").strip().startswith(("Z", "X")):
                continue  # a zombie has ended already; only its parent's wait is missing
            with open(f"/proc/{entry}/stat") as stat:
                after_name = stat.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError, IndexError):
            continue
        yield int(entry), int(fields.get("Threads", "1")), (int(after_name[11]) + int(after_name[12])) / ticks


def _status_field(text: str, name: str) -> str:
    """The value of one "Name:\tvalue" line of a /proc status file ("" when it has none)."""
    start = text.find(f"\n{name}:")
    if start < 0:
        return ""
    start += len(name) + 2
    end = text.find("\n", start)
    return text[start:end if end >= 0 else len(text)].strip()


def processes_of_uid(uid: int) -> list[int]:
    """Pids still running as `uid` (a jailed sandbox's uid): none may outlive it."""
    return [pid for pid, _, _ in _uid_status(uid)]


def usage_of_uid(uid: int) -> tuple[int, float]:
    """Processes and threads of `uid` (as RLIMIT_NPROC counts them) and the most CPU seconds one of
    its processes has used (as RLIMIT_CPU counts them)."""
    rows = list(_uid_status(uid))
    return sum(r[1] for r in rows), max((r[2] for r in rows), default=0.0)
