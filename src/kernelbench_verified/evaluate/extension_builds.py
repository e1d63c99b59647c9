"""A kernel's extension builds, seen from inside its sandbox: each routed into the kernel's own build
folder under a unique name (and to the precompiled torch header for its flags), each timed and listed
in BUILDS for the judge; and the build phase's probes, which make the builds a kernel would otherwise
make lazily while its GPU waits.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import time
from pathlib import Path

import torch

from .pch import flag_set
from .transport import import_values
from ..problems.load import load_module


class CompileFailure(Exception):
    pass


# Every extension build the kernel asked for in this process: (name, seconds, whether it succeeded).
# Reported to the judge (informational: the kernel's own process says it), so a record shows the
# builds that ran in the sandbox instead of in the build phase.
BUILDS: list[tuple[str, float, bool]] = []
# Left in a build's folder when it failed: the digest of what was built and the error. The same build
# asked for again (the judged sandbox after the build phase, the robustness sandbox, the hidden run)
# fails at once with that error instead of running the compiler again while the GPU waits: on CUDA-L1's
# level-2 kernels, failed builds retried in judged sandboxes took 106 of the 185 s the judges spent on
# 27 kernels (H100, build_cache=True). The folder is the kernel's own, so the note reaches no other kernel.
FAILED_MARKER = "kbv_build_failed.json"


def route_extension_builds(build_dir: Path, suffix: str, torch_pch: dict) -> None:
    """Make every cpp_extension build of this kernel use its own directory and a unique name, and find
    the precompiled torch header made for its C++ flags first (pch.py)."""
    from torch.utils import cpp_extension

    def wrap(original):
        signature = inspect.signature(original)

        def routed(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            name = f"{bound.arguments['name']}_{suffix}"
            bound.arguments["name"] = name
            bound.arguments["build_directory"] = str(build_dir / name)
            header = torch_pch.get(flag_set(bound.arguments.get("extra_cflags")))
            if header:
                bound.arguments["extra_include_paths"] = [header, *(bound.arguments.get("extra_include_paths") or [])]
            (build_dir / name).mkdir(parents=True, exist_ok=True)
            if "sources" in bound.arguments:  # load(): files the kernel wrote, often in a fresh temp folder
                bound.arguments["sources"] = _stable_sources(bound.arguments["sources"], build_dir / name / "sources")
            marker, digest = build_dir / name / FAILED_MARKER, _build_digest(bound.arguments)
            failed_before = _failed_before(marker, digest)
            if failed_before is not None:
                BUILDS.append((name, 0.0, False))
                raise CompileFailure(f"{failed_before}\n(this build failed before with the same sources and "
                                     f"flags; it was not run again)")
            started = time.monotonic()
            try:
                built = original(*bound.args, **bound.kwargs)
            except Exception as exc:
                BUILDS.append((name, round(time.monotonic() - started, 2), False))
                try:
                    marker.write_text(json.dumps({"digest": digest, "error": str(exc)[-4000:]}))
                except OSError:  # a full build folder: the kernel still sees its build's own error
                    pass
                raise CompileFailure(str(exc)) from exc
            marker.unlink(missing_ok=True)
            BUILDS.append((name, round(time.monotonic() - started, 2), True))
            return built

        return routed

    cpp_extension.load_inline = wrap(cpp_extension.load_inline)
    cpp_extension.load = wrap(cpp_extension.load)


def _build_digest(arguments: dict) -> str:
    """What decides a build's outcome: its arguments (sources, flags, name) and, for load(), the files."""
    digest = hashlib.sha256()
    for key in sorted(arguments):
        if key not in ("build_directory", "verbose"):
            digest.update(f"{key}={arguments[key]!r};".encode())
    sources = arguments.get("sources")
    if sources is not None:
        folder = Path(sources[0]).parent if sources else None
        for path in sorted(folder.iterdir()) if folder and folder.is_dir() else []:
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def _failed_before(marker: Path, digest: str) -> str | None:
    """The error a build of this digest failed with before, or None."""
    try:
        noted = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    return str(noted.get("error", "")) if isinstance(noted, dict) and noted.get("digest") == digest else None


HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".inl", ".inc")


def _stable_sources(sources, folder: Path) -> list[str]:
    """Copies of the source files of a load() (and the headers beside them) at paths that do not change
    between processes, so the build the build phase made is the one the judged process finds: a kernel
    that writes its .cu into a fresh temporary folder would otherwise rebuild it in every process. A
    copy is rewritten only when its content differs, so an unchanged source keeps its time and ninja
    builds nothing."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [Path(p) for p in ([sources] if isinstance(sources, (str, os.PathLike)) else sources)]
    beside = {h for p in paths if p.parent.is_dir() for h in p.parent.iterdir() if h.suffix in HEADER_SUFFIXES}
    copies = []
    for path in [*paths, *sorted(beside)]:
        target = folder / path.name
        data = path.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)
        if path in paths:
            copies.append(str(target))
    return copies


def probe_builds(kernel, job: dict) -> None:
    """In the build phase (mode "compile", no GPU): construct ModelNew and call it once on inputs of the
    problem's shapes on the meta device, so that extensions built in `__init__`, in a helper of the first
    forward or inside a try/except are built here, on a CPU build worker, and found built when the
    kernel is judged, instead of built while its GPU waits. A helper the forward reaches only for a GPU's
    inputs (`if x.is_cuda:`) is called directly (builder_helpers). Whatever the kernel raises is ignored:
    it is judged in its own evaluation. A build guarded by torch.cuda.is_available() is reached by
    probe_gpu_guarded_builds."""
    model_cls = getattr(kernel, "ModelNew", None)
    if not isinstance(model_cls, type):
        return
    model = None
    try:
        if job.get("init_args") is None or not job.get("reference_source"):
            raise LookupError("no constructor arguments or inputs to probe with")
        path = Path(job["workdir"]) / "reference.py"
        path.write_text(job["reference_source"])
        reference = load_module(path, "probe_reference")
        with torch.device("meta"), torch.no_grad():
            model = model_cls(*import_values(job["init_args"]))
            model(*flatten(reference.get_inputs()))
    except BaseException:  # noqa: BLE001 - the probe only triggers builds
        pass
    try:
        helpers = builder_helpers(kernel, model)
    except Exception:  # noqa: BLE001 - the kernel's objects answered oddly: no helper is probed
        helpers = []
    for helper in helpers:
        try:
            with torch.device("meta"), torch.no_grad():
                helper()
        except BaseException:  # noqa: BLE001 - the probe only triggers builds
            pass


def builder_helpers(kernel, model) -> list:
    """The kernel module's functions (cached ones too: `@functools.lru_cache`) and its model's methods
    that call an extension builder (`load_inline`, cpp_extension's `load`, as the static checker resolves
    them) and can be called with no arguments: the helpers a forward calls only for inputs on a GPU,
    which the probe's meta inputs never reach."""
    lines = builder_call_lines(Path(kernel.__file__).read_text())
    found = [f for f in vars(kernel).values()
             if callable(f) and inspect.isfunction(inspect.unwrap(f)) and inspect.unwrap(f).__module__ == kernel.__name__]
    if model is not None:
        for name, function in inspect.getmembers(type(model), inspect.isfunction):
            if function.__module__ == kernel.__name__ and name not in ("__init__", "forward", "__call__"):
                found.append(getattr(model, name))
    return [f for f in found if _takes_no_arguments(f) and _holds_a_line(f, lines)]


def builder_call_lines(source: str) -> set[int]:
    """The lines of a kernel file's load_inline and cpp_extension.load calls."""
    from ..static.check import parse
    from ..static.context import KernelFile

    tree = parse(source)
    if not isinstance(tree, ast.Module):
        return set()
    kernel_file = KernelFile(source, tree)
    return ({call.lineno for call, short in kernel_file.builder_calls if short == "load_inline"}
            | {call.lineno for call in kernel_file.load_calls})


def _takes_no_arguments(function) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _holds_a_line(function, lines: set[int]) -> bool:
    """Whether the function's own source spans one of `lines`."""
    try:
        body, first = inspect.getsourcelines(inspect.unwrap(function))
    except (OSError, TypeError):
        return False
    return any(first <= line < first + len(body) for line in lines)


def probe_gpu_guarded_builds(job: dict) -> None:
    """A kernel that builds only where `torch.cuda.is_available()` (at import, in `__init__`, in its first
    call) builds nothing on a GPU-less build worker. Such a file is imported and probed once more with
    the check answering True, so that its builds are made here too. Whatever that raises (a CUDA call
    with no GPU, a failed build) is ignored: the kernel is judged, and its errors reported, in its own
    evaluation."""
    if "is_available" not in job["kernel_source"] or torch.cuda.is_available():
        return
    path = Path(job["workdir"]) / f"kernel_{job['build_key'][:12]}_gpu_guarded.py"
    path.write_text(job["kernel_source"])
    torch.cuda.is_available = lambda: True
    try:
        probe_builds(load_module(path, f"kernel_{job['build_key'][:12]}_gpu_guarded"), job)
    except BaseException:  # noqa: BLE001 - the probe only triggers builds
        pass
    finally:
        torch.cuda.is_available = _cuda_is_available


_cuda_is_available = torch.cuda.is_available


def flatten(output) -> list:
    return list(output) if isinstance(output, (tuple, list)) else [output]
