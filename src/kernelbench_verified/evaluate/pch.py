"""A precompiled torch/extension.h for the kernels' C++ builds: made once per toolchain, read-only in the jail.

Every cpp_extension build compiles a main.cpp that includes torch/extension.h: about 20 s of one core
for that header alone. GCC takes `torch/extension.h.gch` from an include folder searched before torch's
own when the .gch was made with the same code-generation flags, and otherwise silently reads the header,
so a mismatch costs time, never correctness. The object file is the same byte for byte either way.

The harness makes one .gch per flag set in FLAG_SETS, outside the jail, with the compiler and flags torch
itself writes into an extension's ninja file (one probe per toolchain). The jail mounts the folder
read-only: a kernel that could write it could put code into every later kernel's build.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from .build import version_output

# extra_cflags (as a kernel passes them to load_inline) that get a precompiled header, by folder name.
FLAG_SETS = {"default": (), "O3": ("-O3",)}
HEADER = Path("torch") / "extension.h.gch"
# Making the headers costs about two builds' worth of CPU: a run makes them when it has this many C++
# builds to do. Once made they serve every later run, however small.
MIN_BUILDS = 4


def worth_making(sources) -> bool:
    """Whether a run that builds these kernel sources should make the headers."""
    return sum("cpp_extension" in source for source in sources) >= MIN_BUILDS


def flag_set(extra_cflags) -> str | None:
    """The FLAG_SETS name of a build's extra_cflags (blank entries ignored, as torch strips them)."""
    if isinstance(extra_cflags, str):
        extra_cflags = [extra_cflags]
    flags = tuple(f.strip() for f in extra_cflags or [] if f and f.strip())
    return next((name for name, wanted in FLAG_SETS.items() if wanted == flags), None)


class _ProbeDone(Exception):
    pass


def main_cpp_command(environment: dict | None = None) -> tuple[str, list[str]]:
    """torch's compiler (as a path) and its flags for an extension's main.cpp in `environment` (default:
    this process's), read from the ninja file torch writes (the build itself is stopped before it
    starts), without the per-extension name define. The jail passes no CXX to its builds, so a header
    made with the host's CXX would be refused there ("created by a different GCC executable")."""
    from torch.utils import cpp_extension

    environment = dict(os.environ if environment is None else environment)
    host_cxx = os.environ.pop("CXX", None)
    if environment.get("CXX"):
        os.environ["CXX"] = environment["CXX"]

    def stop(build_directory, *args, **kwargs):
        raise _ProbeDone(build_directory)

    original = cpp_extension._run_ninja_build
    cpp_extension._run_ninja_build = stop
    try:
        with tempfile.TemporaryDirectory(prefix="kbv_pch_probe_") as folder:
            try:
                cpp_extension.load_inline("kbv_pch_probe", cpp_sources="", build_directory=folder)
            except _ProbeDone:
                pass
            ninja = dict(line.rstrip().split(" =", 1) for line in (Path(folder) / "build.ninja").read_text().splitlines()
                         if " =" in line and not line.startswith(" "))
            ninja = {k: v.strip() for k, v in ninja.items()}
    finally:
        cpp_extension._run_ninja_build = original
        os.environ.pop("CXX", None)
        if host_cxx is not None:
            os.environ["CXX"] = host_cxx
    # post_cflags too: some torch builds put their ABI defines there, and a define the header was made
    # without makes GCC refuse it.
    words = shlex.split(ninja["cflags"]) + shlex.split(ninja.get("post_cflags", ""))
    cxx = shutil.which(ninja["cxx"], path=environment.get("PATH")) or ninja["cxx"]
    return cxx, [f for f in words if not f.startswith("-DTORCH_EXTENSION_NAME=")]


def _gcc_version(cxx: str) -> str | None:
    """`cxx --version`, or None when it is not GCC (or does not run)."""
    out = version_output(cxx)
    return out if out and "Free Software Foundation" in out and "clang" not in out.lower() else None


def is_gcc(cxx: str) -> bool:
    return _gcc_version(cxx) is not None


def _torch_header() -> Path:
    import torch

    return Path(torch.__file__).parent / "include" / "torch" / "extension.h"


def _toolchain_key(cxx: str, version: str, flags: list[str]) -> str:
    import torch

    text = "\n".join([torch.__version__, cxx, version, shlex.join(flags), str(_torch_header().stat().st_mtime_ns)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _make(cxx: str, flags: list[str], extra: tuple, target: Path) -> str | None:
    """Compile the header into target/torch/extension.h.gch (built aside, then renamed in: a build
    never sees half a file). Returns the compiler's message on failure."""
    header = _torch_header()
    staging = Path(tempfile.mkdtemp(prefix=".staging_", dir=target.parent))
    (staging / HEADER.parent).mkdir(parents=True)
    command = [cxx, "-x", "c++-header", str(header), "-o", str(staging / HEADER), *flags, *extra]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not (staging / HEADER).is_file():
        shutil.rmtree(staging, ignore_errors=True)
        return (done.stderr or done.stdout).strip()[-400:]
    # The header itself beside its .gch: a second #include of it (a kernel's own source after torch's line
    # in main.cpp) opens the file in the folder the first one came from.
    shutil.copy2(header, staging / HEADER.with_suffix(""))
    staging.chmod(0o755)
    staging.rename(target)
    return None


class Toolchain:
    """This machine's compiler and main.cpp flags (probed once) and where its headers live under a root."""

    def __init__(self, root: Path, environment: dict | None = None):
        """`environment`: the builds' own (the jail's allow-list of this process's), default this one's."""
        self.cxx, self.flags = main_cpp_command(environment)
        version = _gcc_version(self.cxx)
        self.usable = version is not None
        self.folder = Path(root).resolve() / _toolchain_key(self.cxx, version, self.flags) if self.usable else None

    def include_folders(self) -> dict[str, str]:
        """{flag-set name: the include folder a build of those flags searches first}; {} without GCC."""
        return {name: str(self.folder / name) for name in FLAG_SETS} if self.usable else {}

    def ensure(self, names=tuple(FLAG_SETS)) -> dict[str, str]:
        """Make the missing headers of the flag sets `names` (once per machine: a file lock lets
        concurrent evaluators wait for the first one) and return include_folders() of those that exist.
        A header that fails to compile is left out, with a warning: its builds read the header."""
        if not self.usable:
            return {}
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            for left in self.folder.glob(".staging_*"):  # of a maker that was killed
                shutil.rmtree(left, ignore_errors=True)
            missing = [name for name in names if not (self.folder / name / HEADER).is_file()]
            threads = [threading.Thread(target=self._make_or_warn, args=(name,)) for name in missing]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        return {name: folder for name, folder in self.include_folders().items() if (Path(folder) / HEADER).is_file()}

    def _make_or_warn(self, name: str) -> None:
        error = _make(self.cxx, self.flags, FLAG_SETS[name], self.folder / name)
        if error:
            print(f"warning: the precompiled torch header ({name}) did not build, so C++ builds with those "
                  f"flags read the header: {error.splitlines()[-1]}", file=sys.stderr)


def in_use(toolchain: Toolchain) -> dict[str, bool]:
    """{flag-set name: whether GCC takes its header} for a main.cpp like torch's (its own line, then a
    kernel's second include), from GCC's -H report ("!" marks a precompiled header it used)."""
    used = {}
    with tempfile.TemporaryDirectory(prefix="kbv_pch_check_") as folder:
        main = Path(folder) / "main.cpp"
        main.write_text("#include <torch/extension.h>\n#include <torch/extension.h>\nint kbv_check() { return 0; }\n")
        for name, include in toolchain.include_folders().items():
            command = [toolchain.cxx, "-H", "-fsyntax-only", f"-I{include}", *toolchain.flags, *FLAG_SETS[name], str(main)]
            report = subprocess.run(command, capture_output=True, text=True).stderr
            used[name] = f"! {Path(include) / HEADER}" in report
    return used


def main() -> None:
    """`python -m kernelbench_verified.evaluate.pch FOLDER [--unjailed]`: make this toolchain's headers
    under FOLDER (kernel_eval_build_dir/pch) and say, per flag set, how long that took and whether GCC uses them."""
    import time

    from .jail import allowed_environment

    folders = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(folders) != 1:
        raise SystemExit("usage: python -m kernelbench_verified.evaluate.pch FOLDER [--unjailed] "
                         "(FOLDER: kernel_eval_build_dir/pch, e.g. cache/kernel_builds/pch)")
    # As the jail's builds see it (pass --unjailed for builds with sandbox=none).
    toolchain = Toolchain(Path(folders[0]), None if "--unjailed" in sys.argv else allowed_environment(os.environ))
    if not toolchain.usable:
        raise SystemExit(f"{toolchain.cxx} is not GCC: there is no precompiled header to make")
    started = time.monotonic()
    made = toolchain.ensure()
    print(f"{toolchain.folder}: {sorted(made)} ready in {time.monotonic() - started:.1f} s; "
          f"flags {' '.join(toolchain.flags)}")
    for name, used in in_use(toolchain).items():
        print(f"  {name}: {'used' if used else 'NOT used'} by a main.cpp built like torch's")


if __name__ == "__main__":
    main()
