"""The OS jail around a kernel's process: namespaces, a private root, its own uid, seccomp, rlimits.

The evaluator starts every sandbox as `unshare --pid --mount --net --ipc --fork --kill-child python -m
kernelbench_verified.evaluate.jail SPEC -- python -m ...sandbox`, as root. This module, pid 1 of the new namespaces, builds the jail and
execs the sandbox inside it, which installs the seccomp filter before it imports torch:

- a new root file system (tmpfs) that holds, read-only, only the Python runtime, the system and CUDA
  libraries, /etc, /sys and a /dev with nothing but null, zero, random and the GPU's nodes; writable only /job (its own size-capped tmpfs), /tmp
  (likewise) and /build, the sandbox's own build directory (the evaluator copies a kernel's cached
  build in and a fresh build out: the shared cache is never writable from a jail). runs/, results, problems, hidden tests, the user's
  home, other build directories and the rest of the checkout do not exist in it;
- a fresh /proc of its own PID namespace: the judge, the evaluator and other sandboxes are invisible,
  and when the sandbox (pid 1 there) ends, the kernel ends everything it started;
- no network (an empty network namespace) and its own System V IPC;
- an unprivileged uid of its own, no_new_privs, and a seccomp filter (seccomp.py) that refuses ptrace,
  process_vm_*, mounts, namespace changes, kernel modules, kexec, bpf, perf events and keyrings;
- rlimits on processes, file size, CPU time and open files; host memory is capped by a memory cgroup of
  its own (cgroups.py), or where there is none, on CPU runs, by RLIMIT_DATA.

This module uses only the standard library: it runs before and inside the sandbox.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import sys
from pathlib import Path

from .seccomp import ARCH, SeccompError, install_seccomp

# Uids handed to sandboxes: one per sandbox, far above any login account.
JAIL_UID_BASE = 2_000_000
JAIL_UID_SPAN = 1_000_000
JOB_DIR = "/job"
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 38, 4
# Environment variables a kernel's process may see; everything else (API keys, tokens) is dropped.
ENV_ALLOWED = ("PATH", "LANG", "LC_ALL", "TERM", "CUDA_VISIBLE_DEVICES", "TORCH_CUDA_ARCH_LIST", "CUDA_HOME",
               "CUDA_PATH", "LD_LIBRARY_PATH", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE",
               "OPENBLAS_L2_SIZE", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS",
               "CUDA_MODULE_LOADING", "PYTHONPATH", "PYTHONHASHSEED", "TRITON_PTXAS_PATH")
# What becomes of a sandbox killed by a signal that a limit sends (unshare itself exits 1 when its
# child dies of a signal, so the judge also watches CPU time itself: launch.LimitWatch).
LIMIT_SIGNALS = {"SIGXCPU": "cpu_time", "SIGXFSZ": "file_size"}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


class JailError(Exception):
    """The jail could not be set up: the sample must not run."""


def unshare_command() -> list[str]:
    """The wrapper that puts the sandbox into its own PID, mount, network and IPC namespaces (run as
    root). The sandbox is pid 1 there, so when it ends the kernel ends every other process of the
    namespace."""
    return [shutil.which("unshare") or "unshare", "--pid", "--mount", "--net", "--ipc", "--fork", "--kill-child"]


def available() -> str | None:
    """None when jailed sandboxes can start here, else why not (one line)."""
    if not sys.platform.startswith("linux"):
        return "the jail needs Linux namespaces"
    if shutil.which("unshare") is None:
        return "the `unshare` command (util-linux) is not installed"
    if os.geteuid() != 0:
        # The user-namespace path (unshare --user --map-root-user) would give no uid of its own, and the
        # judge's checks by uid would then name its own processes: not offered until it is built and tested.
        return "the jail needs root (each kernel gets a uid of its own)"
    import subprocess

    probe = subprocess.run([*unshare_command(), sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0 or probe.stdout.strip() != "1":
        detail = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        return f"cannot create namespaces ({detail})"
    return None


# Runtime configuration a kernel's process keeps by prefix: CUDA IPC between the judge and a jailed
# sandbox fails on the H200 without these; names that look like credentials are dropped even under
# these prefixes.
ENV_PREFIXES = ("CUDA_", "NVIDIA_", "PYTORCH_", "TORCH_", "NCCL_", "TRITON_", "CUBLAS_", "CUDNN_")
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")


def allowed_environment(env: dict) -> dict:
    """The kernel's environment: an allow-list of names and runtime-configuration prefixes, never a
    name that looks like a credential."""
    return {k: v for k, v in env.items()
            if (k in ENV_ALLOWED or k.startswith(ENV_PREFIXES)) and not any(w in k.upper() for w in SECRET_WORDS)}


def jail_uid(slot: int) -> int:
    return JAIL_UID_BASE + slot % JAIL_UID_SPAN


# ---------------------------------------------------------------- the private root

def _mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda v: v.encode() if isinstance(v, str) else v  # noqa: E731
    if _libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        code = ctypes.get_errno()
        raise JailError(f"mount {source or ''} on {target}: {os.strerror(code)}")


def _bind(root: Path, path: str, writable: bool = False) -> None:
    """Make `path` appear at the same place under `root` (read-only unless `writable`)."""
    source = Path(path)
    if not source.exists():
        return
    target = root / source.relative_to("/")
    if source.is_dir():
        target.mkdir(parents=True, exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.touch(exist_ok=True)
    _mount(str(source), str(target), None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (0 if writable else MS_RDONLY)
    try:
        _mount(None, str(target), None, flags)
    except JailError:
        if writable:
            raise
        # A bind whose source carries locked flags (nodev, noexec) refuses a bare remount: keep them.
        _mount(None, str(target), None, flags | MS_NODEV | MS_NOEXEC)


def runtime_paths() -> tuple[list[str], dict[str, str]]:
    """What the kernel's process needs to read: the interpreter and its packages, system and CUDA
    libraries and tools. Returns the folders to bind (none inside another) and the symbolic links to
    recreate (/bin -> usr/bin on a merged-/usr system: the ELF loader is found through them)."""
    wanted = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt/nvidia", "/usr/local"]
    wanted += [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    # sys.path entries only inside the interpreter's prefixes, plus this package's own folder: a
    # PYTHONPATH pointing at a checkout would otherwise expose its runs/, problems and hidden tests.
    prefixes = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    package_parent = os.path.realpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    wanted += [p for p in sys.path if p and os.path.isdir(p) and (
        os.path.realpath(p) == package_parent or
        any(os.path.realpath(p).startswith(prefix + "/") for prefix in prefixes))]
    wanted += [os.environ[v] for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    links, folders = {}, set()
    for path in wanted:
        if not os.path.exists(path):
            continue
        if os.path.islink(path) and os.path.dirname(os.path.abspath(path)) == "/":
            links[os.path.abspath(path)] = os.readlink(path)
        folders.add(os.path.realpath(path))
    unique: list[str] = []
    for path in sorted(folders, key=len):
        if not any(path == u or path.startswith(u.rstrip("/") + "/") for u in unique):
            unique.append(path)
    return unique, links


def _build_root(root: Path, spec: dict) -> None:
    _mount("tmpfs", str(root), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    uid = spec["uid"]
    # The private tmpfs first: runtime folders that live under /tmp (a checkout there) are bound inside them.
    for name, size in (("tmp", spec["tmp_mb"]), (JOB_DIR.strip("/"), spec["job_mb"])):
        (root / name).mkdir(exist_ok=True)
        _mount("tmpfs", str(root / name), "tmpfs", MS_NOSUID | MS_NODEV, f"size={size}m,mode=700,uid={uid},gid={uid}")
    folders, links = runtime_paths()
    for path in folders:
        _bind(root, path)
    for link, target in links.items():
        os.symlink(target, root / link.lstrip("/"))
    for path in spec.get("readonly_paths", ()):  # the precompiled torch header (pch.py)
        _bind(root, path)
    _name_the_uid(root, uid)
    _build_dev(root / "dev", spec["tmp_mb"])
    _bind(root, "/sys")
    (root / "proc").mkdir()
    _mount("proc", str(root / "proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    build = Path(spec["build_dir"])
    build.mkdir(parents=True, exist_ok=True)
    _chown_tree(build, uid)
    (root / JAIL_BUILD_DIR.strip("/")).mkdir()
    _mount(str(build), str(root / JAIL_BUILD_DIR.strip("/")), None, MS_BIND)
    _mount(None, str(root / JAIL_BUILD_DIR.strip("/")), None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV)


def _name_the_uid(root: Path, uid: int) -> None:
    """/etc/passwd and /etc/group that know the jail's uid (and no host user): torch.compile and
    getpass look the current user up and raise on a uid they cannot name."""
    entries = {"passwd": f"root:x:0:0:root:/root:/usr/sbin/nologin\nkernel:x:{uid}:{uid}:kernel:{JOB_DIR}:/usr/sbin/nologin\n",
               "group": f"root:x:0:\nkernel:x:{uid}:\n"}
    for name, text in entries.items():
        target = root / "etc" / name
        if not target.is_file():
            continue
        source = root / f".{name}"
        source.write_text(text)
        _mount(str(source), str(target), None, MS_BIND)
        _mount(None, str(target), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


# Device nodes a kernel may open: the usual character devices and the GPU's; nothing else of /dev.
DEVICE_NODES = ("null", "zero", "full", "random", "urandom", "tty")


def _build_dev(dev: Path, shm_mb: int) -> None:
    dev.mkdir()
    _mount("tmpfs", str(dev), "tmpfs", MS_NOSUID | MS_NOEXEC, "size=1m,mode=755")
    names = list(DEVICE_NODES) + sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))
    for name in names:
        source = Path("/dev") / name
        if source.is_char_device():
            (dev / name).touch()
            _mount(str(source), str(dev / name), None, MS_BIND)
    if Path("/dev/nvidia-caps").is_dir():
        (dev / "nvidia-caps").mkdir()
        _mount("/dev/nvidia-caps", str(dev / "nvidia-caps"), None, MS_BIND | MS_REC)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, dev / name)
    (dev / "shm").mkdir()
    _mount("tmpfs", str(dev / "shm"), "tmpfs", MS_NOSUID | MS_NODEV, f"size={shm_mb}m,mode=1777")


def _chown_tree(path: Path, uid: int) -> None:
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, d) for d in dirs), *(os.path.join(folder, f) for f in files)]:
            os.lchown(name, uid, uid)


def _pivot(root: Path) -> None:
    old = root / ".old_root"
    old.mkdir()
    if _libc.syscall(155 if ARCH == "x86_64" else 41, str(root).encode(), str(old).encode()) != 0:
        raise JailError(f"pivot_root: {os.strerror(ctypes.get_errno())}")
    os.chdir("/")
    if _libc.umount2(b"/.old_root", MNT_DETACH) != 0:
        raise JailError(f"detaching the old root: {os.strerror(ctypes.get_errno())}")
    os.rmdir("/.old_root")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID)


# ---------------------------------------------------------------- privileges and limits

def _drop_privileges(uid: int) -> None:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise JailError("prctl(no_new_privs) failed")
    # Changing uid made the process non-dumpable, which hides its own /proc/self files from it (torch
    # and subprocess read them); ptrace stays refused by seccomp either way.
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


def _set_limits(spec: dict) -> None:
    gib = 1 << 30
    limits = {resource.RLIMIT_NPROC: spec["max_processes"], resource.RLIMIT_FSIZE: spec["max_file_mb"] << 20,
              resource.RLIMIT_CPU: spec["max_cpu_seconds"], resource.RLIMIT_NOFILE: 4096, resource.RLIMIT_CORE: 0,
              resource.RLIMIT_NICE: 0}  # never below the nice it started with (builds start at BUILD_NICE)
    if spec.get("max_host_memory_gb"):
        # Only without a cgroup and without CUDA: the CUDA driver maps large private regions that would count.
        limits[resource.RLIMIT_DATA] = int(spec["max_host_memory_gb"] * gib)
    for which, value in limits.items():
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        # CPU time: the soft limit sends SIGXCPU (reported as cpu_time), the hard one SIGKILL later.
        ceiling = value + 5 if which == resource.RLIMIT_CPU else value
        resource.setrlimit(which, (value, ceiling if hard == resource.RLIM_INFINITY else min(ceiling, hard)))


# ---------------------------------------------------------------- entry

JAIL_BUILD_DIR = "/build"
JAIL_FAILED = 70  # the exit status of a jail that could not be set up (the sandbox never started)


def prepare(spec: dict) -> None:
    """As pid 1 of fresh namespaces and still root there: build the private root, set the limits and
    become the jail's uid with no_new_privs. Runs before the sandbox's interpreter starts (see main), so
    no code of the sandbox ever runs as root."""
    if os.getpid() != 1:
        raise JailError("the sandbox is not pid 1 of its own PID namespace")
    if spec.get("cgroup_procs"):  # its memory cgroup (cgroups.py), before any process of it can start
        try:
            Path(spec["cgroup_procs"]).write_text("0")
        except OSError as exc:
            raise JailError(f"could not join the sandbox's cgroup: {exc}") from None
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = Path(spec["staging_dir"])
    root.mkdir(parents=True, exist_ok=True)
    _build_root(root, spec)
    _pivot(root)
    os.chdir(JOB_DIR)
    _set_limits(spec)
    _drop_privileges(spec["uid"])
    os.environ["HOME"] = JOB_DIR
    os.environ["TMPDIR"] = "/tmp"


def confine() -> None:
    """The last step, in the sandbox itself before it imports torch: the seccomp filter."""
    try:
        install_seccomp()
    except SeccompError as exc:
        raise JailError(str(exc)) from None


def enter(spec: dict) -> None:
    """prepare and confine in one process (probes and tests; the evaluator uses main)."""
    prepare(spec)
    confine()


def command(spec: dict, argv: list[str]) -> list[str]:
    """The command that starts `argv` (a Python command) inside the jail described by `spec`."""
    return unshare_command() + [sys.executable, "-m", "kernelbench_verified.evaluate.jail", json.dumps(spec), "--",
                                *argv]


def main() -> None:
    """`python -m kernelbench_verified.evaluate.jail SPEC -- COMMAND...`: prepare, then exec COMMAND."""
    spec = json.loads(sys.argv[1])
    argv = sys.argv[sys.argv.index("--") + 1:]
    try:
        prepare(spec)
    except JailError as exc:
        print(f"jail: {exc}", file=sys.stderr, flush=True)
        os._exit(JAIL_FAILED)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
