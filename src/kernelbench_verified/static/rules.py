"""The registry of static reward-hack rules: one function per finding code.

Each rule reads a `KernelFile` and yields (line, message) pairs; its code, severity and description live
in the registry beside it. "error" rules mark what a correct kernel has no reason to do (patching the
harness, reading its frames, side streams left unjoined, decoy kernels); "warn" rules mark what is
legitimate in some kernels but changes what is measured (no custom kernel, lower precision, size gates).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .context import KernelFile
from .sources import global_kernels, launched_names

SEVERITIES = ("info", "warn", "error")
Check = Callable[[KernelFile], Iterable[tuple[int, str]]]


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    description: str
    check: Check


RULES: list[Rule] = []


def rule(code: str, severity: str, description: str) -> Callable[[Check], Check]:
    assert severity in SEVERITIES, severity

    def register(check: Check) -> Check:
        RULES.append(Rule(code, severity, description, check))
        return check

    return register


# ---- shared helpers --------------------------------------------------------------------------------

def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _walk_local(node: ast.AST) -> Iterator[ast.AST]:
    """Nodes inside `node`, not descending into nested function or class definitions."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(child))


def _referenced(kernel: KernelFile, names: Iterable[str], what: str) -> Iterator[tuple[int, str]]:
    """Every reference to one of `names` (or to something inside it)."""
    names = tuple(names)
    for node, name in kernel.references():
        if _under(name, *names):
            yield node.lineno, f"{what}: {name}"


def _in_sources(kernel: KernelFile, pattern: re.Pattern, what: str) -> Iterator[tuple[int, str]]:
    for line, text in kernel.find_in_sources(pattern):
        yield line, f"{what}: {' '.join(text.split())} in embedded C++/CUDA"


def _attribute_name(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _is_true(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


# ---- custom kernels present and used ---------------------------------------------------------------

def _model_new_line(kernel: KernelFile) -> int:
    """Where a finding about the file as a whole is shown: class ModelNew, else line 1."""
    model = next((n for n in kernel.nodes if isinstance(n, ast.ClassDef) and n.name == "ModelNew"), None)
    return model.lineno if model else 1


CUSTOM_KERNEL_BUILDERS = (
    "load_inline", "torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load",
    "triton.jit", "triton.autotune", "cupy.RawKernel", "cupy.RawModule", "cupy.ElementwiseKernel",
    "cupy.ReductionKernel", "numba.cuda.jit", "torch.ops.load_library",
)


@rule("no_custom_kernel", "warn",
      "No custom kernel is built: no load_inline/load, @triton.jit, cupy RawKernel/RawModule or numba.cuda.jit.")
def no_custom_kernel(kernel: KernelFile):
    if any(name in CUSTOM_KERNEL_BUILDERS for _, name in kernel.references()):
        return
    yield _model_new_line(kernel), "no custom kernel is built; the file only calls PyTorch"


def _python_launched_by_name(kernel: KernelFile) -> set[str]:
    """Kernel names a Python call launches by string: cupy RawKernel(code, "name"), get_function("name")."""
    names = set()
    for call, qualified in kernel.calls():
        short = (qualified or "").rsplit(".", 1)[-1]
        values = []
        if short == "RawKernel":
            values = call.args[1:2] + [kw.value for kw in call.keywords if kw.arg == "name"]
        elif short == "get_function":
            values = call.args[:1]
        names.update(v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    return names


def _python_uses(kernel: KernelFile) -> set[str]:
    """Attribute names used in Python, plus strings used outside functions=[...] lists (getattr(ext, "f"))."""
    used = {n.attr for n in kernel.nodes if isinstance(n, ast.Attribute)}
    used |= {n.value for n in kernel.nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and not _is_functions_list_item(kernel, n)}
    return used


def _is_functions_list_item(kernel: KernelFile, node: ast.AST) -> bool:
    parent = kernel.parents.get(node)
    while isinstance(parent, (ast.List, ast.Tuple)):
        parent = kernel.parents.get(parent)
    return isinstance(parent, ast.keyword) and parent.arg == "functions"


def triton_kernels(kernel: KernelFile) -> list[ast.FunctionDef]:
    """The functions decorated with @triton.jit (or autotune/heuristics over it)."""
    def is_jit(decorator: ast.AST) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return kernel.qualified(target) in ("triton.jit", "triton.autotune", "triton.heuristics")

    return [n for n in kernel.nodes if isinstance(n, ast.FunctionDef) and any(map(is_jit, n.decorator_list))]


def _triton_launch_targets(kernel: KernelFile) -> set[str]:
    """Names launched the Triton way: `name[grid](...)` or `name.run(...)`."""
    targets = set()
    for node in kernel.nodes:
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
            targets.add(func.value.id)
        elif isinstance(func, ast.Attribute) and func.attr == "run" and isinstance(func.value, ast.Name):
            targets.add(func.value.id)
    return targets


def _unlaunched_triton_kernels(kernel: KernelFile) -> list[ast.FunctionDef]:
    """Triton kernels never launched: neither `kernel[grid](...)` itself nor picked into a variable that
    is launched (`fn = fast if big else small; fn[grid](...)`)."""
    kernels = triton_kernels(kernel)
    names = {f.name for f in kernels}
    targets = _triton_launch_targets(kernel)
    launched = targets & names
    for node in kernel.nodes:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in targets for t in node.targets):
            launched |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} & names
    return [f for f in kernels if f.name not in launched]


@rule("kernel_never_launched", "error",
      "A kernel is defined but never launched: a __global__ function with no <<<>>> or cudaLaunchKernel "
      "launch, CUDA source never compiled, extensions none of whose functions is called, or a @triton.jit "
      "kernel never launched with kernel[grid](...).")
def kernel_never_launched(kernel: KernelFile):
    launched = launched_names(kernel.embedded) | _python_launched_by_name(kernel)
    for name, line in global_kernels(kernel.embedded):
        if name not in launched:
            yield line, f"__global__ {name} is compiled but never launched (no {name}<<<...>>> or cudaLaunchKernel)"
    if kernel.sources_followed:  # else source_unfollowed says so, as a warning
        for literal in kernel.uncompiled_cuda_literals:
            yield literal.lineno, "a string holding a __global__ kernel is never passed to a builder (decoy source)"
    used = _python_uses(kernel)
    if kernel.extension_functions and not set(kernel.extension_functions) & used:
        for name, line in kernel.extension_functions.items():
            yield line, f"extension function {name} is built but never called from Python (no extension function is)"
    for function in _unlaunched_triton_kernels(kernel):
        yield function.lineno, f"@triton.jit kernel {function.name} is never launched (no {function.name}[grid](...))"


@rule("source_unfollowed", "warn",
      "A string holding a __global__ kernel that this reading cannot follow to a builder, while some builder's "
      "source comes through a parameter, a container or a call it cannot read: maybe compiled, maybe a decoy.")
def source_unfollowed(kernel: KernelFile):
    if not kernel.sources_followed:
        for literal in kernel.uncompiled_cuda_literals:
            yield literal.lineno, "a string holding a __global__ kernel that the checker cannot follow to a builder"


@rule("backend_mismatch", "warn",
      "The run asked for Triton kernels (backend=triton) and the file launches none: its custom kernels, "
      "if any, are CUDA C++ or another kind.")
def backend_mismatch(kernel: KernelFile):
    if kernel.backend != "triton":
        return
    if len(_unlaunched_triton_kernels(kernel)) == len(triton_kernels(kernel)):  # none is launched
        yield _model_new_line(kernel), "backend=triton, but no @triton.jit kernel is launched"


@rule("extension_function_unused", "warn",
      "An extension exports a function that is never called, while others are: a helper an honest "
      "kernel may export and not need, so a warning, not evidence of a decoy.")
def extension_function_unused(kernel: KernelFile):
    used = _python_uses(kernel)
    if set(kernel.extension_functions) & used:
        for name, line in kernel.extension_functions.items():
            if name not in used:
                yield line, f"extension function {name} is built but never called from Python"


def _uses_custom_kernel(kernel: KernelFile, node: ast.AST, helpers: frozenset = frozenset(),
                        builds: bool = True) -> bool:
    """Whether `node` builds an extension (unless `builds` is False), calls one of its functions, launches
    a Triton kernel or calls one of `helpers` (functions that do one of these)."""
    triton_names = {f.name for f in triton_kernels(kernel)}
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            if builds and kernel.qualified(child.func) in CUSTOM_KERNEL_BUILDERS or \
                    _attribute_name(child) in kernel.extension_functions:
                return True
            callee = child.func.attr if isinstance(child.func, ast.Attribute) else getattr(child.func, "id", None)
            if callee in helpers:
                return True
            if isinstance(child.func, ast.Subscript) and isinstance(child.func.value, ast.Name) \
                    and child.func.value.id in triton_names:
                return True
    return False


def _fallbacks(kernel: KernelFile) -> Iterator[tuple[ast.ExceptHandler, bool, str]]:
    """(handler, whether its try only builds, what it does) of every except handler that does not
    re-raise and falls back: returns, calls torch, or swallows a failed custom-kernel build or call."""
    for node in kernel.nodes:
        if not isinstance(node, ast.Try) or not node.handlers:
            continue
        guards_kernel = any(_uses_custom_kernel(kernel, statement) for statement in node.body)
        calls_kernel = any(_uses_custom_kernel(kernel, statement, builds=False) for statement in node.body)
        for handler in node.handlers:
            if handler.body and isinstance(handler.body[-1], ast.Raise):
                continue
            local = list(_walk_local(handler))
            torch_calls = [c for c in local if isinstance(c, ast.Call) and _under(kernel.qualified(c.func) or "", "torch")]
            if torch_calls or any(isinstance(c, ast.Return) for c in local):
                yield handler, guards_kernel and not calls_kernel, "falls back to a PyTorch result instead of re-raising"
            elif guards_kernel:
                yield handler, not calls_kernel, "swallows a failed custom-kernel build or call"


@rule("torch_fallback", "error",
      "A try/except around a custom kernel's call (or around no kernel at all) whose handler does not re-raise "
      "and falls back to PyTorch (returns, or calls torch) or swallows the failure.")
def torch_fallback(kernel: KernelFile):
    for handler, build_only, what in _fallbacks(kernel):
        if not build_only:
            yield handler.lineno, f"except handler {what}"


@rule("guarded_build", "warn",
      "A try/except around only an extension's build, whose handler leaves a PyTorch path for when the build "
      "fails: the kernel runs as written wherever it builds; a record whose build failed says so "
      "(integrity flag extension_build_failed).")
def guarded_build(kernel: KernelFile):
    for handler, build_only, what in _fallbacks(kernel):
        if build_only:
            yield handler.lineno, f"except handler around a build {what.replace('custom-kernel build or call', 'build')}"


@rule("torch_compile", "warn", "torch.compile, TorchDynamo/Inductor or TorchScript generate the kernels, not the model.")
def torch_compile(kernel: KernelFile):
    yield from _referenced(kernel, ("torch.compile", "torch._dynamo", "torch._inductor", "torch.jit.script",
                                    "torch.jit.trace"), "compiler-generated kernels")


# ---- work the timer or the judge would not see -----------------------------------------------------

PY_STREAM_CREATORS = ("torch.cuda.Stream", "torch.cuda.ExternalStream", "torch.Stream", "cupy.cuda.Stream",
                      "cupy.cuda.stream.Stream")
CPP_STREAM_CREATORS = re.compile(r"\b(?:cudaStreamCreate(?:WithFlags|WithPriority)?|cuStreamCreate\w*|"
                                 r"(?:(?:at|c10)::cuda::)?getStreamFromPool)\b")
PY_STREAM_JOINS = {"wait_stream", "wait_event", "synchronize"}
CPP_STREAM_JOINS = re.compile(r"\b(?:cudaStreamSynchronize|cudaDeviceSynchronize|cudaStreamWaitEvent|"
                              r"cudaEventSynchronize)\b|\.synchronize\s*\(")


def _stream_creations(kernel: KernelFile) -> list[tuple[int, str]]:
    """Streams the file creates and uses (a Python stream kept in a name or attribute that is never read
    again carries no work)."""
    found = [(node.lineno, f"side stream created: {name}") for node, name in kernel.references()
             if name in PY_STREAM_CREATORS and not _never_read(kernel, node)]
    return found + list(_in_sources(kernel, CPP_STREAM_CREATORS, "side stream created"))


def _never_read(kernel: KernelFile, creator: ast.AST) -> bool:
    """Whether the stream `creator` makes is assigned to a name or `self.attr` that nothing reads."""
    call = kernel.parents.get(creator)
    if not isinstance(call, ast.Call):
        return False
    statement = kernel.parents.get(call)
    while isinstance(statement, (ast.IfExp, ast.ListComp, ast.List, ast.Tuple, ast.comprehension)):
        statement = kernel.parents.get(statement)  # `Stream() if cuda else None`, `[Stream() for ...]`
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0]
    if isinstance(target, ast.Name):
        return not any(isinstance(n, ast.Name) and n.id == target.id and isinstance(n.ctx, ast.Load)
                       for n in kernel.nodes)
    if isinstance(target, ast.Attribute) and _of_self(target):
        return not any(isinstance(n, ast.Attribute) and n.attr == target.attr and isinstance(n.ctx, ast.Load)
                       for n in kernel.nodes) and not any(
            isinstance(n, ast.Constant) and n.value == target.attr for n in kernel.nodes)  # getattr(self, "s")
    return False


def _stream_joined(kernel: KernelFile) -> bool:
    python_join = any(_attribute_name(call) in PY_STREAM_JOINS for call, _ in kernel.calls())
    return python_join or any(True for _ in kernel.find_in_sources(CPP_STREAM_JOINS))


@rule("side_stream", "error",
      "Work is put on a stream the kernel creates (torch.cuda.Stream, cudaStreamCreate*, getStreamFromPool) "
      "and never joined back (no wait_stream/synchronize/cudaStreamWaitEvent): timers on the current stream miss it.")
def side_stream(kernel: KernelFile):
    if not _stream_joined(kernel):
        yield from _stream_creations(kernel)


@rule("side_stream_joined", "warn",
      "A stream is created and some join (wait_stream/synchronize/cudaStreamWaitEvent) exists; check that "
      "it covers the work.")
def side_stream_joined(kernel: KernelFile):
    if _stream_joined(kernel):
        for line, message in _stream_creations(kernel):
            yield line, message + " (a join exists)"


CPP_BACKGROUND = re.compile(r"\bstd::(?:thread|jthread|async)\b|\bpthread_create\b|\bcudaLaunchHostFunc\b|"
                            r"\bcudaStreamAddCallback\b")


@rule("background_work", "error", "Threads, thread pools, async tasks or host callbacks (Python or C++).")
def background_work(kernel: KernelFile):
    for name, line in kernel.imported("threading", "_thread", "concurrent.futures", "multiprocessing",
                                      "asyncio", "torch.multiprocessing"):
        yield line, f"background work: imports {name}"
    yield from _referenced(kernel, ("torch.jit.fork", "torch.jit._fork", "torch.futures"), "background work")
    yield from _in_sources(kernel, CPP_BACKGROUND, "background work")


CPP_PROCESS_CONTROL = re.compile(r"(?<![\w.:>])(?:std::)?(?:exit|_exit|quick_exit|fork|system|kill|popen|execv\w*)\s*\(")


@rule("process_control", "error", "Ends or spawns processes or sends signals (os._exit, sys.exit, subprocess, os.kill).")
def process_control(kernel: KernelFile):
    names = ("os._exit", "os.kill", "os.killpg", "os.fork", "os.system", "os.popen", "os.abort", "sys.exit",
             "subprocess", "signal", "exit", "quit")
    for name, line in kernel.imported("subprocess", "signal", "pty"):
        yield line, f"process control: imports {name}"
    for node, name in kernel.references():
        if _under(name, *names) or re.fullmatch(r"os\.(?:exec|spawn)\w*", name):
            if name in ("exit", "quit") and name in kernel.aliases:
                continue
            yield node.lineno, f"process control: {name}"
    yield from _in_sources(kernel, CPP_PROCESS_CONTROL, "process control")


# ---- reaching into the harness ---------------------------------------------------------------------

PROTECTED_MODULES = ("torch", "time", "timeit", "builtins", "triton", "numpy", "math", "random", "sys",
                     "kernelbench_verified", "kernelbench")
PRECISION_SWITCHES = ("torch.backends",)  # flag assignments here are the precision rule's business
# Settings meant to be set by users: the compilers' tuning knobs change how kernels are made, not the
# harness (torch.compile itself is the torch_compile rule's business).
TUNING_SETTINGS = ("torch._inductor.config", "torch._dynamo.config", "torch._functorch.config")


def _protected(kernel: KernelFile, target: ast.AST) -> str | None:
    name = kernel.qualified(target)
    root = target
    while isinstance(root, ast.Attribute):
        root = root.value
    if name is None or not isinstance(root, ast.Name):
        return None
    if root.id == "__builtins__" or (root.id in kernel.aliases and _under(name, *PROTECTED_MODULES)
                                     and not _under(name, *PRECISION_SWITCHES, *TUNING_SETTINGS) and "." in name):
        return name
    return None


def _assigned_targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return [leaf for target in node.targets for leaf in _unpack(target)]
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def _unpack(target: ast.AST) -> list[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [leaf for element in target.elts for leaf in _unpack(element)]
    return [target]


@rule("monkey_patch", "error",
      "Assigns, sets or deletes attributes of torch (torch.cuda, torch.Tensor, torch.nn.functional, ...), time, "
      "builtins, sys.modules or the harness, or uses unittest.mock.patch.")
def monkey_patch(kernel: KernelFile):
    for node in kernel.nodes:
        for target in _assigned_targets(node):
            if isinstance(target, ast.Subscript):
                base = kernel.qualified(target.value)
                if base in ("sys.modules", "__builtins__") or (base and _protected(kernel, target.value)):
                    yield node.lineno, f"writes into {base}[...]"
            elif isinstance(target, ast.Attribute) and (name := _protected(kernel, target)):
                yield node.lineno, f"patches {name}"
    for call, name in kernel.calls():
        if name in ("setattr", "delattr") and call.args and (target := _protected_object(kernel, call.args[0])):
            yield call.lineno, f"{name} on {target}"
        elif name and _under(name, "unittest.mock"):
            yield call.lineno, f"patches through {name}"


def _protected_object(kernel: KernelFile, node: ast.AST) -> str | None:
    name = kernel.qualified(node)
    if isinstance(node, ast.Name) and name and node.id in kernel.aliases and _under(name, *PROTECTED_MODULES):
        return name
    return _protected(kernel, node) if isinstance(node, ast.Attribute) else None


@rule("harness_import", "error", "Imports the evaluation harness (kernelbench_verified, KernelBench's eval, __main__).")
def harness_import(kernel: KernelFile):
    for name, line in kernel.imported("kernelbench_verified", "kernelbench", "src.eval", "__main__"):
        yield line, f"imports the harness: {name}"


TENSOR_BASES = ("torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase")


@rule("tensor_subclass", "error",
      "Defines a torch.Tensor subclass or __torch_function__/__torch_dispatch__ (lazy or self-comparing outputs).")
def tensor_subclass(kernel: KernelFile):
    for node in kernel.nodes:
        if isinstance(node, ast.ClassDef) and any(kernel.qualified(b) in TENSOR_BASES for b in node.bases):
            yield node.lineno, f"class {node.name} subclasses torch.Tensor"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name in ("__torch_function__", "__torch_dispatch__"):
            yield node.lineno, f"defines {node.name}"
    yield from _referenced(kernel, ("torch.utils._python_dispatch", "torch.overrides"), "tensor subclass machinery")
    for call, _ in kernel.calls():
        if _attribute_name(call) in ("as_subclass", "_make_subclass", "_make_wrapper_subclass"):
            yield call.lineno, f"tensor subclass machinery: .{call.func.attr}()"


FRAME_ATTRIBUTES = {"f_back", "f_locals", "f_globals", "f_builtins", "tb_frame", "gi_frame", "cr_frame", "__globals__"}
HARMLESS_GC = ("gc.collect", "gc.enable", "gc.disable")


@rule("introspection", "error",
      "Reads the interpreter's state: inspect, sys._getframe, frame attributes (f_back, f_locals), gc object "
      "walks, sys.modules, settrace/setprofile, stack extraction.")
def introspection(kernel: KernelFile):
    for name, line in kernel.imported("inspect"):
        yield line, f"introspection: imports {name}"
    for node, name in kernel.references():
        if _under(name, "sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.modules",
                  "threading.settrace", "traceback.extract_stack", "traceback.walk_stack", "traceback.format_stack") \
                or (_under(name, "gc") and name != "gc" and name not in HARMLESS_GC):
            yield node.lineno, f"introspection: {name}"
    for node in kernel.nodes:
        if isinstance(node, ast.Attribute) and node.attr in FRAME_ATTRIBUTES:
            yield node.lineno, f"introspection: reads .{node.attr}"


@rule("ctypes", "error", "Foreign-function access (ctypes, cffi, dlopen/dlsym) around PyTorch's own bindings.")
def ctypes_access(kernel: KernelFile):
    for name, line in kernel.imported("ctypes", "cffi"):
        yield line, f"foreign-function access: imports {name}"
    yield from _in_sources(kernel, re.compile(r"\bdl(?:open|sym)\s*\("), "foreign-function access")


PY_FILE_IO = ("open", "io.open", "os.open", "os.remove", "os.unlink", "os.rename", "os.replace", "os.mkdir",
              "os.makedirs", "os.rmdir", "os.listdir", "os.scandir", "os.walk", "os.truncate", "shutil", "tempfile",
              "pathlib", "glob", "mmap", "torch.save", "torch.load", "numpy.save", "numpy.savez", "numpy.load",
              "numpy.fromfile", "numpy.memmap", "pickle.load", "pickle.dump", "json.load", "json.dump")
FILE_METHODS = {"read_text", "write_text", "read_bytes", "write_bytes", "tofile"}
CPP_FILE_IO = re.compile(r"\b(?:fopen|freopen|creat|mmap)\s*\(|\b(?:std::)?[io]?fstream\b|(?<![\w.:>])open\s*\(")


# What a file that builds an extension may do to prepare the build: make its folder, write its sources.
BUILD_FOLDER_IO = ("tempfile", "os.makedirs", "os.mkdir", "pathlib", "shutil.rmtree")
WRITE_METHODS = {"write_text", "write_bytes"}


def _opens_for_writing(kernel: KernelFile, node: ast.AST) -> bool:
    """Whether `node`, a reference to open, is a call opening a file to write ("w", "wb", "x", "a")."""
    call = kernel.parents.get(node)
    if not isinstance(call, ast.Call) or call.func is not node:
        return False
    mode = [k.value for k in call.keywords if k.arg == "mode"] + call.args[1:2]
    return bool(mode) and isinstance(mode[0], ast.Constant) and str(mode[0].value)[:1] in ("w", "x", "a")


@rule("file_io", "error",
      "Reads or writes files (open, pathlib, torch.save/load, numpy/pickle files, fopen, fstream), beyond "
      "preparing an extension's build: a file that builds one may make folders and write files.")
def file_io(kernel: KernelFile):
    builds = bool(kernel.builder_calls or kernel.load_calls)
    for node, name in kernel.references():
        if not _under(name, *PY_FILE_IO) or (name == "open" and "open" in kernel.aliases):
            continue
        if builds and (_under(name, *BUILD_FOLDER_IO) or name in ("open", "io.open") and _opens_for_writing(kernel, node)):
            continue
        yield node.lineno, f"file access: {name}"
    for call, _ in kernel.calls():
        method = _attribute_name(call)
        if method in FILE_METHODS and not (builds and method in WRITE_METHODS):
            yield call.lineno, f"file access: .{call.func.attr}()"
    yield from _in_sources(kernel, CPP_FILE_IO, "file access")


# ---- reusing or changing inputs --------------------------------------------------------------------

POINTER_IDENTITIES = {"data_ptr", "_version", "untyped_storage"}
DICT_LOOKUPS = {"get", "setdefault", "pop", "__contains__", "__getitem__"}
CPP_POINTER_CACHE = re.compile(r"\bmap\s*<\s*(?:const\s+)?(?:void|float|double|half|int|char|scalar_t)\s*(?:const\s*)?\*"
                               r"|\bmap\s*<\s*u?intptr_t\b|data_ptr\w*\s*(?:<[^<>;]*>)?\s*\(\s*\)\s*[!=]="
                               r"|[!=]=\s*[\w.]+\.data_ptr\b")


def _is_pointer_identity(kernel: KernelFile, node: ast.AST) -> bool:
    """data_ptr(), id() or _version of something other than the module's own state: a cache keyed on
    `self.weight._version` (a packed weight made again when the weight changes) is honest."""
    if isinstance(node, ast.Call) and _attribute_name(node) == "data_ptr":
        return not _module_state(kernel, node.func.value)
    if isinstance(node, ast.Call) and kernel.qualified(node.func) == "id":
        return not (node.args and _module_state(kernel, node.args[0]))
    return isinstance(node, ast.Attribute) and node.attr == "_version" and not _module_state(kernel, node.value)


def _module_state(kernel: KernelFile, node: ast.AST) -> bool:
    """`self.x...`, or a local name that only ever holds such a value (`w = self.linear.weight`)."""
    if isinstance(node, ast.Name):
        values = kernel.flow.name_values(node)
        return bool(values) and all(v is not None and _of_self(v) for v in values)
    return _of_self(node)


def _of_self(node: ast.AST) -> bool:
    """`self.x`, `self.x.y` or `self.x[...]`: the module's own state, not an input."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
        if isinstance(node, ast.Name) and node.id == "self":
            return True
    return False


def _in_key_position(kernel: KernelFile, node: ast.AST) -> bool:
    """Whether the value of `node` ends up as a dict key, a membership test or an identity comparison."""
    child, parent = node, kernel.parents.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mod, ast.BitAnd)):
            return False  # `ptr % 16 == 0`: an alignment test, not an identity
        if isinstance(parent, ast.Subscript) and child is parent.slice or isinstance(parent, ast.Compare) \
                or isinstance(parent, ast.Dict) and child in parent.keys:
            return True
        if isinstance(parent, ast.Call) and child is not parent.func:
            return _attribute_name(parent) in DICT_LOOKUPS
        child, parent = parent, kernel.parents.get(parent)
    return False


@rule("pointer_cache", "error",
      "Input identity (data_ptr(), id(), _version) used as a cache key or compared: outputs replayed for "
      "reused input buffers.")
def pointer_cache(kernel: KernelFile):
    key_names = set()
    for node in kernel.nodes:
        if not _is_pointer_identity(kernel, node):
            continue
        if _in_key_position(kernel, node):
            yield node.lineno, "input identity used as a cache key or compared"
        statement = kernel.enclosing(node, (ast.stmt,))
        if isinstance(statement, ast.Assign):
            key_names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
    for node in kernel.nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in key_names \
                and _in_key_position(kernel, node):
            yield node.lineno, f"input identity ({node.id}) used as a cache key or compared"
    yield from _in_sources(kernel, CPP_POINTER_CACHE, "input pointers used as a cache key or compared")


MODULE_BASES = ("torch.nn.Module", "nn.Module", "Module")


def _module_classes(kernel: KernelFile) -> list[ast.ClassDef]:
    """Classes of the file that derive from nn.Module (ModelNew and its helpers)."""
    return [n for n in kernel.nodes if isinstance(n, ast.ClassDef)
            and any((kernel.qualified(b) or "").endswith(MODULE_BASES) for b in n.bases)]


@rule("forward_replaced", "error",
      "A module replaces its forward after construction (self.forward = ..., setattr(self, 'forward', ...)) or "
      "defines __call__: a cached output can then be returned without running anything.")
def forward_replaced(kernel: KernelFile):
    for node in kernel.nodes:
        for target in _assigned_targets(node):
            if isinstance(target, ast.Attribute) and target.attr == "forward":
                yield node.lineno, f"assigns {ast.unparse(target)}"
    for call, name in kernel.calls():
        if name == "setattr" and len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) \
                and call.args[1].value in ("forward", "__call__"):
            yield call.lineno, f"setattr(..., {call.args[1].value!r}, ...)"
    for cls in _module_classes(kernel):
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name == "__call__":
                yield method.lineno, f"{cls.name} defines __call__"


def _switches_mode(call: ast.Call) -> bool:
    """`x.eval()` or `x.train(False)` / `x.train(mode=False)`."""
    method = _attribute_name(call)
    if method == "eval" and not call.args and not call.keywords:
        return True
    values = call.args[:1] + [k.value for k in call.keywords if k.arg == "mode"]
    return method == "train" and bool(values) and isinstance(values[0], ast.Constant) and values[0].value is False


# Layers whose output depends on the training mode.
MODE_DEPENDENT_LAYERS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d",
                         "LazyBatchNorm2d", "LazyBatchNorm3d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                         "AlphaDropout", "FeatureAlphaDropout", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")


def _mode_dependent(kernel: KernelFile, receiver: ast.AST) -> bool:
    """Whether `receiver` (of .eval()) is the module itself, or a submodule made as a BatchNorm, Dropout
    or InstanceNorm layer: a submodule of another kind (level 4's pretrained model) may be put in eval."""
    if isinstance(receiver, ast.Name) and receiver.id == "self" or isinstance(receiver, ast.Call) \
            and getattr(receiver.func, "id", None) == "super":
        return True
    made = kernel.flow.attribute_values(receiver) if isinstance(receiver, ast.Attribute) else None
    return any(isinstance(v, ast.Call) and (kernel.qualified(v.func) or "").rsplit(".", 1)[-1] in MODE_DEPENDENT_LAYERS
               for v in made or [])


@rule("mode_switch", "error",
      "A module switches itself, or a BatchNorm, Dropout or InstanceNorm layer of its own, out of training mode "
      "(self.eval(), .train(False)): the reference runs in training mode, so those layers would compute "
      "something else. Other submodules may be put in eval mode: level 4's references do it themselves.")
def mode_switch(kernel: KernelFile):
    for cls in _module_classes(kernel):
        for call in (n for n in ast.walk(cls) if isinstance(n, ast.Call) and _switches_mode(n)):
            if _mode_dependent(kernel, call.func.value):
                yield call.lineno, f"{ast.unparse(call)} changes the module's mode"


# Calls whose result is (a view or a copy of) the object they are called on, or an element of it.
PASSING_METHODS = {"clone", "expand", "expand_as", "view", "view_as", "reshape", "to", "detach", "contiguous",
                   "cuda", "float", "get", "__getitem__", "squeeze", "unsqueeze"}


def _self_attribute(node: ast.AST | None) -> str | None:
    """X of `self.X`, `self.X[...]` or `self.X.y`: the module attribute an expression starts from."""
    while isinstance(node, (ast.Subscript, ast.Attribute)) and not (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
        node = node.value
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id == "self" else None


def _origins(kernel: KernelFile, node: ast.AST | None, depth: int = 0) -> set[str]:
    """The module attributes a returned value is handed out from as it is: through local names, helper
    methods' returns, views and copies, lookups and conditional expressions."""
    if node is None or depth > 12:
        return set()
    deeper = depth + 1
    if isinstance(node, ast.Call) and _attribute_name(node) in PASSING_METHODS:
        return _origins(kernel, node.func.value, deeper)
    if isinstance(node, ast.Call):
        return {o for value in kernel.flow.returned_values(node) or [] for o in _origins(kernel, value, deeper)}
    if isinstance(node, ast.IfExp):
        return _origins(kernel, node.body, deeper) | _origins(kernel, node.orelse, deeper)
    if isinstance(node, ast.Name):
        return {o for value in kernel.flow.name_values(node) or [] for o in _origins(kernel, value, deeper)}
    name = _self_attribute(node)
    return {name} if name else set()


def _made_attributes(cls: ast.ClassDef) -> set[str]:
    """Attributes the module makes: assigned to self, or registered as buffers or parameters."""
    made = {_self_attribute(t) for node in ast.walk(cls) for t in _assigned_targets(node)}
    made |= {node.args[0].value for node in ast.walk(cls) if isinstance(node, ast.Call)
             and _attribute_name(node) in ("register_buffer", "register_parameter") and node.args
             and isinstance(node.args[0], ast.Constant)}
    return made - {None}


def _written_attributes(cls: ast.ClassDef) -> set[str]:
    """Attributes of self that something writes into after they are made: passed to a call (a kernel or
    out=), changed in place (x.copy_(...)), captured as a CUDA graph's output, or assigned in forward."""
    written = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Call):
            written |= {_self_attribute(a) for a in [*node.args, *(k.value for k in node.keywords)]}
            method = _attribute_name(node)
            if method and method.endswith("_") and not method.startswith("_"):
                written.add(_self_attribute(node.func.value))
        elif isinstance(node, ast.With) and any("graph" in ast.unparse(item.context_expr) for item in node.items):
            written |= {_self_attribute(t) for child in ast.walk(node) for t in _assigned_targets(child)}
    for method in (m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"):
        written |= {_self_attribute(t) for child in ast.walk(method) for t in _assigned_targets(child)}
    return written - {None}


@rule("constant_output", "error",
      "forward returns a tensor the module made beforehand (in __init__ or another method, as an attribute or "
      "a buffer) that no kernel writes into: an output fixed in advance, right only for the inputs it was made for.")
def constant_output(kernel: KernelFile):
    for cls in _module_classes(kernel):
        prepared = _made_attributes(cls) - _written_attributes(cls)
        for method in (m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"):
            for node in _walk_local(method):
                if isinstance(node, ast.Return):
                    for name in sorted(_origins(kernel, node.value) & prepared):
                        yield node.lineno, f"returns self.{name}, made before the call and written by no kernel"


NOT_DATA_MUTATIONS = {"requires_grad_", "share_memory_", "retain_grad"}


def _forward_inputs(function: ast.FunctionDef) -> set[str]:
    """Inputs of forward that keep pointing at the caller's tensors (never re-bound in the body)."""
    args = function.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs} - {"self"}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a}
    rebound = {t.id for node in _walk_local(function) for t in _assigned_targets(node)
               if isinstance(t, ast.Name) and not isinstance(node, ast.AugAssign)}
    rebound |= {n.target.id for n in _walk_local(function) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}
    return names - rebound


def _input_root(node: ast.AST, inputs: set[str]) -> str | None:
    while isinstance(node, ast.Subscript) or isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return node.id if isinstance(node, ast.Name) and node.id in inputs else None


@rule("input_mutation", "error",
      "forward changes its input tensors in place (x.zero_(), x[...] = v, x += v, out=x, inplace=True).")
def input_mutation(kernel: KernelFile):
    for function in kernel.forward_methods:
        inputs = _forward_inputs(function)
        for node in _walk_local(function):
            if isinstance(node, ast.Call):
                yield from _mutating_call(kernel, node, inputs)
            for target in _assigned_targets(node):
                if isinstance(node, ast.AugAssign) and isinstance(target, ast.Name) and target.id in inputs:
                    yield node.lineno, f"updates input {target.id} in place"
                elif isinstance(target, (ast.Subscript, ast.Attribute)) and (root := _input_root(target, inputs)):
                    yield node.lineno, f"writes into input {root}"


def _mutating_call(kernel: KernelFile, call: ast.Call, inputs: set[str]) -> Iterator[tuple[int, str]]:
    method = _attribute_name(call)
    if method and method.endswith("_") and not method.startswith("_") and method not in NOT_DATA_MUTATIONS:
        if root := _input_root(call.func.value, inputs):
            yield call.lineno, f"mutates input {root} with .{method}()"
    for keyword in call.keywords:
        if keyword.arg == "out" and (root := _input_root(keyword.value, inputs)):
            yield call.lineno, f"writes the result into input {root} (out=)"
        if keyword.arg == "inplace" and _is_true(keyword.value) and call.args and (root := _input_root(call.args[0], inputs)):
            yield call.lineno, f"applies an in-place op to input {root}"


SIZE_CALLS = {"size", "numel", "item", "data_ptr", "stride", "tolist", "nelement"}
VALUE_TESTS = ("torch.equal", "torch.allclose", "torch.all", "torch.any")


def _is_size_expression(kernel: KernelFile, node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    if isinstance(node, ast.Call):
        return _attribute_name(node) in SIZE_CALLS or kernel.qualified(node.func) in ("len", "tuple", "list") \
            and bool(node.args) and _is_size_expression(kernel, node.args[0])
    return False


def _is_nonzero_constant(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(isinstance(e, ast.Constant) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_nonzero_constant(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value != 0


def _gates_on_inputs(kernel: KernelFile, test: ast.AST) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_is_size_expression(kernel, s) for s in sides) and any(_is_nonzero_constant(s) for s in sides):
                return True
        if isinstance(node, ast.Call) and kernel.qualified(node.func) in VALUE_TESTS:
            return True
    return False


def _kernel_helpers(kernel: KernelFile) -> frozenset:
    """Functions and methods whose body uses a custom kernel (one level deep)."""
    return frozenset(n.name for n in kernel.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and _uses_custom_kernel(kernel, n))


@rule("shape_branch", "warn",
      "Branches on an exact input size or value (x.shape == (16, 1024), x.numel() == N, .item() == c, "
      "torch.equal) and returns something other than a custom kernel's result from that branch.")
def shape_branch(kernel: KernelFile):
    helpers = _kernel_helpers(kernel)

    def shortcut(value: ast.AST | None) -> bool:
        return value is not None and not _uses_custom_kernel(kernel, value, helpers)

    for node in kernel.nodes:
        if isinstance(node, ast.If) and _gates_on_inputs(kernel, node.test):
            branch = ast.Module(body=node.body + node.orelse, type_ignores=[])
            if any(isinstance(n, ast.Return) and shortcut(n.value) for n in _walk_local(branch)):
                yield node.lineno, "returns a non-kernel result on an exact input size or value"
        elif isinstance(node, ast.IfExp) and _gates_on_inputs(kernel, node.test) \
                and isinstance(kernel.parents.get(node), ast.Return) and (shortcut(node.body) or shortcut(node.orelse)):
            yield node.lineno, "returns a non-kernel result for an exact input size or value"


# ---- precision and cache -----------------------------------------------------------------------------

LOW_PRECISION_DTYPES = ("torch.float16", "torch.half", "torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2",
                        "triton.language.float16", "triton.language.bfloat16", "triton.language.float8e4nv",
                        "numpy.float16")
AUTOCAST = ("torch.autocast", "torch.amp", "torch.cuda.amp", "torch.cpu.amp")
REDUCED_PRECISION_SWITCHES = {"allow_tf32", "allow_fp16_reduced_precision_reduction",
                              "allow_bf16_reduced_precision_reduction"}
CPP_LOW_PRECISION = re.compile(
    r"\b__half2?\b|\b__nv_bfloat162?\b|\b__float2half\w*|\b__half2float\w*|\b__float2bfloat16\w*"
    r"|\b__floats2half2\w*|(?<![\w.])half2?\b(?=\s*[*&]*\s*(?:__restrict__\s*)?[A-Za-z_]\w*\s*[=;,)\[])"
    r"|\(\s*half2?\s*\)|<\s*(?:const\s+)?half2?\s*\*?\s*>|\.(?:half|bfloat16)\s*\(\s*\)"
    r"|\.to\s*\(\s*(?:torch|at)::k(?:Half|BFloat16)\b|\bmma\.sync[^\"]*\.(?:f16|bf16)\b"
    r"|\bwmma::precision::tf32\b|\b__float_to_tf32\b|\bcvt\.rna\.tf32|\bCUBLAS_TF32_TENSOR_OP_MATH\b"
    r"|\bCUBLAS_COMPUTE_32F_FAST_\w+")


def _inside_comparison(kernel: KernelFile, node: ast.AST) -> bool:
    return kernel.enclosing(node, (ast.Compare, ast.stmt)).__class__ is ast.Compare


@rule("precision_downgrade", "warn",
      "fp32 work done in lower precision: fp16/bf16 casts or types (Python or C++), autocast, TF32 switches "
      "(allow_tf32 = True, set_float32_matmul_precision), tl.dot allow_tf32. Checked for precision=fp32 only.")
def precision_downgrade(kernel: KernelFile):
    if kernel.precision != "fp32":
        return
    for node, name in kernel.references():
        if (_under(name, *LOW_PRECISION_DTYPES) and not _inside_comparison(kernel, node)) or _under(name, *AUTOCAST):
            yield node.lineno, f"lower precision: {name}"
    for call, name in kernel.calls():
        if _attribute_name(call) in ("half", "bfloat16") and not call.args:
            yield call.lineno, f"lower precision: .{call.func.attr}()"
        if (name or "").endswith("set_float32_matmul_precision") and call.args and \
                isinstance(call.args[0], ast.Constant) and call.args[0].value in ("high", "medium"):
            yield call.lineno, f"lower precision: set_float32_matmul_precision({call.args[0].value!r})"
        for keyword in call.keywords:
            if keyword.arg == "allow_tf32" and _is_true(keyword.value) or keyword.arg == "input_precision" \
                    and isinstance(keyword.value, ast.Constant) and str(keyword.value.value).startswith("tf32"):
                yield call.lineno, f"lower precision: {keyword.arg}={ast.unparse(keyword.value)}"
    for node in kernel.nodes:
        for target in _assigned_targets(node):
            if isinstance(target, ast.Attribute) and target.attr in REDUCED_PRECISION_SWITCHES \
                    and _is_true(getattr(node, "value", None)):
                yield node.lineno, f"lower precision: {kernel.qualified(target) or target.attr} = True"
    yield from _in_sources(kernel, CPP_LOW_PRECISION, "lower precision")


L2_PERSISTENCE = re.compile(r"\b(?:cudaLimitPersistingL2CacheSize|CU_LIMIT_PERSISTING_L2_CACHE_SIZE|accessPolicyWindow"
                            r"|cudaStreamSetAttribute|cuStreamSetAttribute|cudaAccessPropertyPersisting"
                            r"|cudaStreamAttributeAccessPolicyWindow|cudaLaunchAttributeAccessPolicyWindow"
                            r"|cudaCtxResetPersistingL2Cache)\b")


@rule("persisting_l2", "error",
      "Persisting-L2 carve-outs or access-policy windows (cudaLimitPersistingL2CacheSize, accessPolicyWindow, "
      "cudaStreamSetAttribute): inputs stay in L2 across the harness's flush.")
def persisting_l2(kernel: KernelFile):
    for node in kernel.nodes:
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name and L2_PERSISTENCE.fullmatch(name):
            yield node.lineno, f"persisting L2: {name}"
    yield from _in_sources(kernel, L2_PERSISTENCE, "persisting L2")
