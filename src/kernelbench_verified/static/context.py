"""What the static checker knows about one kernel file: syntax tree, import aliases, embedded C++/CUDA.

Built once per file and handed to every rule, so rules stay short and share one reading of the source.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Iterator

from .sources import EmbeddedSource, pybind_functions

# Builder (last part of its name) -> (keywords, positional indices) whose values are C++/CUDA text.
SOURCE_ARGUMENTS = {
    "load_inline": (("cpp_sources", "cuda_sources"), (1, 2)),
    "RawKernel": (("code",), (0,)),
    "RawModule": (("code",), (0,)),
}
# String methods and helpers whose result contains the text they are applied to.
_TEXT_PRESERVING_METHODS = {"format", "replace", "strip", "lstrip", "rstrip", "join", "dedent"}
_MAX_RESOLVE_DEPTH = 16
_DYNAMIC_IMPORTS = {"__import__", "importlib.import_module"}


class KernelFile:
    """A parsed kernel file. Never executes it."""

    def __init__(self, source: str, tree: ast.Module, precision: str = "fp32", backend: str = "cuda"):
        self.source = source
        self.tree = tree
        self.precision = precision
        self.backend = backend  # the kernels the run asked for: cuda (CUDA C++ or Triton) or triton
        self.nodes = list(ast.walk(tree))
        self.parents = {child: node for node in self.nodes for child in ast.iter_child_nodes(node)}

    # ---- names -------------------------------------------------------------------------------------

    @cached_property
    def aliases(self) -> dict[str, str]:
        """Local name -> the dotted module path it stands for (`F` -> `torch.nn.functional`)."""
        aliases = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        aliases[root] = root
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return aliases

    @cached_property
    def imports(self) -> list[tuple[str, int]]:
        """Every imported module or module member, fully dotted, with its line."""
        found = []
        for node in self.nodes:
            if isinstance(node, ast.Import):
                found += [(alias.name, node.lineno) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((node.module, node.lineno))
                found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
            elif isinstance(node, ast.Call) and self.qualified(node.func) in _DYNAMIC_IMPORTS and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.append((node.args[0].value, node.lineno))
        return found

    def qualified(self, node: ast.AST) -> str | None:
        """`F.relu` -> `torch.nn.functional.relu`; a chain rooted at a local name keeps that name."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        return ".".join([self.aliases.get(node.id, node.id), *reversed(parts)])

    def calls(self) -> Iterator[tuple[ast.Call, str | None]]:
        for node in self.nodes:
            if isinstance(node, ast.Call):
                yield node, self.qualified(node.func)

    def references(self) -> Iterator[tuple[ast.AST, str]]:
        """Every outermost Name/Attribute chain with its qualified name (`torch.cuda.Stream`, not `torch.cuda`)."""
        for node in self.nodes:
            if isinstance(node, (ast.Name, ast.Attribute)) and not isinstance(self.parents.get(node), ast.Attribute):
                name = self.qualified(node)
                if name:
                    yield node, name

    def imported(self, *modules: str) -> Iterator[tuple[str, int]]:
        """Imports of any of these modules or of anything inside them."""
        for name, line in self.imports:
            if any(name == m or name.startswith(m + ".") for m in modules):
                yield name, line

    def enclosing(self, node: ast.AST, kinds: tuple) -> ast.AST | None:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, kinds):
                return node
        return None

    @cached_property
    def forward_methods(self) -> list[ast.FunctionDef]:
        return [node for node in self.nodes if isinstance(node, ast.FunctionDef) and node.name == "forward"
                and isinstance(self.parents.get(node), ast.ClassDef)]

    @cached_property
    def extension_functions(self) -> dict[str, int]:
        """Functions the load_inline'd extensions export (`functions=[...]` or m.def), with their line."""
        exported = {}
        for call, short in self.builder_calls:
            listed = [kw.value for kw in call.keywords if kw.arg == "functions"]
            for literal in (lit for value in listed for lit in self._string_literals(value, 0)):
                exported.setdefault(literal.value, literal.lineno)
        if not exported:
            for name in pybind_functions(self.embedded):
                exported.setdefault(name, self.builder_calls[0][0].lineno if self.builder_calls else 1)
        return exported

    # ---- embedded C++/CUDA --------------------------------------------------------------------------

    @cached_property
    def module_values(self) -> dict[str, ast.AST]:
        """Module-level `NAME = value` assignments (the last one wins, as at import time)."""
        values = {}
        for node in self.tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        values[target.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                values[node.target.id] = node.value
        return values

    @cached_property
    def builder_calls(self) -> list[tuple[ast.Call, str]]:
        """Calls of load_inline / cupy RawKernel / RawModule, with the builder's short name."""
        found = []
        for call, name in self.calls():
            short = (name or "").rsplit(".", 1)[-1]
            if short in SOURCE_ARGUMENTS:
                found.append((call, short))
        return found

    @cached_property
    def _embedded(self) -> tuple[list[EmbeddedSource], set[int]]:
        sources, literal_ids = [], set()
        for call, short in self.builder_calls:
            keywords, positions = SOURCE_ARGUMENTS[short]
            values = [kw.value for kw in call.keywords if kw.arg in keywords]
            values += [call.args[i] for i in positions if i < len(call.args)]
            for value in values:
                for literal in self._string_literals(value, 0):
                    if id(literal) not in literal_ids:
                        literal_ids.add(id(literal))
                        sources.append(EmbeddedSource.from_literal(literal.value, literal.lineno))
        return sources, literal_ids

    @property
    def embedded(self) -> list[EmbeddedSource]:
        """C++/CUDA text handed to a builder, following module-level names, lists, `+`, f-strings, .format."""
        return self._embedded[0]

    @cached_property
    def uncompiled_cuda_literals(self) -> list[ast.Constant]:
        """String literals holding a __global__ kernel that no builder ever receives."""
        compiled = self._embedded[1]
        return [node for node in self.nodes if isinstance(node, ast.Constant) and isinstance(node.value, str)
                and "__global__" in node.value and id(node) not in compiled]

    def find_in_sources(self, pattern) -> Iterator[tuple[int, str]]:
        """(line, matched text) of a regex over every embedded source."""
        for source in self.embedded:
            for line, match in source.find(pattern):
                yield line, match.group(0)

    def _string_literals(self, node: ast.AST, depth: int) -> list[ast.Constant]:
        if depth > _MAX_RESOLVE_DEPTH or node is None:
            return []
        deeper = depth + 1
        if isinstance(node, ast.Constant):
            return [node] if isinstance(node.value, str) else []
        if isinstance(node, ast.Name):
            return self._string_literals(self.module_values.get(node.id), deeper)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [lit for element in node.elts for lit in self._string_literals(element, deeper)]
        if isinstance(node, ast.BinOp):
            return self._string_literals(node.left, deeper) + self._string_literals(node.right, deeper)
        if isinstance(node, ast.JoinedStr):
            return [lit for part in node.values for lit in self._string_literals(part, deeper)]
        if isinstance(node, ast.FormattedValue):
            return self._string_literals(node.value, deeper)
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if name in _TEXT_PRESERVING_METHODS:
                receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
                return [lit for part in receiver + list(node.args) for lit in self._string_literals(part, deeper)]
        return []
