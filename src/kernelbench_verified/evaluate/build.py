"""Content-addressed kernel builds: architecture names, build directories and compiler messages.

A kernel's build directory and extension-name suffix are derived from a hash of its source, the torch
and CUDA versions, the compilers, the architecture list and the flags, so identical kernels share a finished build,
different kernels never share a directory or a lock, and a re-run compiles nothing.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from ..errors import UserError

# Architecture names accepted in gpu_arch, mapped to TORCH_CUDA_ARCH_LIST entries.
ARCH_NAMES = {
    "maxwell": ["5.0", "5.2"],
    "pascal": ["6.0", "6.1"],
    "volta": ["7.0"],
    "turing": ["7.5"],
    "ampere": ["8.0", "8.6"],
    "ada": ["8.9"],
    "hopper": ["9.0"],
    "blackwell": ["10.0", "12.0"],
}
TRITON_CACHE = "triton"  # the Triton cache's folder inside a kernel's build directory
INDUCTOR_CACHE = "inductor"  # torch.compile's (Inductor's) caches, likewise
_CAPABILITY = re.compile(r"^(?:sm_)?(\d+)\.?(\d)(a?)$")


def arch_list(gpu_arch) -> str:
    """TORCH_CUDA_ARCH_LIST for a list of names ("Hopper") or capabilities ("9.0", "sm_90a")."""
    items = [gpu_arch] if isinstance(gpu_arch, str) else list(gpu_arch or [])
    out: list[str] = []
    for item in items:
        key = str(item).strip()
        if key.lower() in ARCH_NAMES:
            out += ARCH_NAMES[key.lower()]
            continue
        match = _CAPABILITY.match(key)
        if not match:
            names = ", ".join(n.capitalize() for n in ARCH_NAMES)
            raise UserError(f"unknown gpu_arch {key!r}: use {names} or a compute capability like 9.0")
        major, minor, suffix = match.groups()
        out.append(f"{major}.{minor}{suffix}")
    if not out:
        raise UserError("gpu_arch is empty: name at least one architecture, e.g. gpu_arch=\"['Hopper']\"")
    return ";".join(dict.fromkeys(out))


def toolchain_fingerprint() -> str:
    import torch

    return f"torch={torch.__version__};cuda={torch.version.cuda};{compiler_versions()}"


@functools.lru_cache(maxsize=None)
def compiler_versions() -> str:
    """Which `c++` (the jail passes no CXX, so builds call that one) and nvcc the builds run, by path and
    first `--version` line: a recorded compile error must not outlive the compiler that gave it."""
    from torch.utils.cpp_extension import CUDA_HOME

    nvcc = os.path.join(CUDA_HOME, "bin", "nvcc") if CUDA_HOME else None
    return ";".join(f"{name}={_version_line(path)}" for name, path in (("cxx", shutil.which("c++")), ("nvcc", nvcc)))


def version_output(program: str) -> str | None:
    """What `program --version` prints, or None when it does not run."""
    try:
        return subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def _version_line(path: str | None) -> str:
    if not path or not os.path.isfile(path):
        return "none"
    out = version_output(path)
    if out is None:
        return f"{os.path.realpath(path)}:unusable"
    # g++ names its version on the first line, nvcc on the one with "release"
    line = next((line for line in out.splitlines() if "release" in line), out.partition("\n")[0])
    return f"{os.path.realpath(path)}:{line.strip()}"


def build_key(source: str, arch: str, flags: str = "") -> str:
    """Hash of everything that determines a build's output."""
    text = "\n".join([toolchain_fingerprint(), f"arch={arch}", f"flags={flags}", source])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def build_dir(root: str | Path, key: str) -> Path:
    return Path(root).resolve() / key


def outcome_marker(job, what: str = "") -> Path:
    """Where the recorded outcome of a kernel's build (what="") or Triton warm-up (".triton") is kept
    (job: a job.Job): beside the build directories, never inside one, since the kernel's process writes its own."""
    return Path(job.build_dir).parent / "outcomes" / f"{job.build_key}{what}.json"


_ERROR_LINE = re.compile(r"(error|Error|ERROR|undefined reference|fatal)")


def trim_compiler_output(text: str, limit: int = 4000) -> str:
    """Keep the lines a person needs: each error line with two lines of context, capped."""
    lines = text.splitlines()
    keep: list[int] = []
    for i, line in enumerate(lines):
        if _ERROR_LINE.search(line):
            keep += range(max(0, i - 2), min(len(lines), i + 3))
    chosen = [lines[i] for i in dict.fromkeys(keep)] or lines[-40:]
    trimmed = "\n".join(chosen)
    return trimmed if len(trimmed) <= limit else trimmed[:limit] + "\n[... trimmed]"
