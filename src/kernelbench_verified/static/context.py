"""What the static checker knows about one kernel file: syntax tree, import aliases, embedded C++/CUDA.

Built once per file and handed to every rule, so rules stay short and share one reading of the source.
"""

from __future__ import annotations

import ast
from functools import cached_property
from typing import Iterator

from .flow import Flow
from .sources import EmbeddedSource, pybind_functions

# Builder (last part of its name) -> (keywords, positional indices) whose values are C++/CUDA text.
SOURCE_ARGUMENTS = {
    "load_inline": (("cpp_sources", "cuda_sources"), (1, 2)),
    "RawKernel": (("code",), (0,)),
    "RawModule": (("code",), (0,)),
}
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
        self.flow = Flow(tree, self.parents, self.nodes)

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
            for literal in (lit for value in listed for lit in self.flow.literals(value)[0]):
                exported.setdefault(literal.value, literal.lineno)
        if not exported:
            for name in pybind_functions(self.embedded):
                exported.setdefault(name, self.builder_calls[0][0].lineno if self.builder_calls else 1)
        return exported

    # ---- embedded C++/CUDA --------------------------------------------------------------------------

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
    def load_calls(self) -> list[ast.Call]:
        """Calls of torch.utils.cpp_extension.load, which builds files rather than strings."""
        return [call for call, name in self.calls() if (name or "").endswith("cpp_extension.load")]

    def _written_texts(self) -> list[ast.AST]:
        """What the file writes into files (`f.write(x)`, `path.write_text(x)`): the sources of a load()."""
        return [arg for call, _ in self.calls() if isinstance(call.func, ast.Attribute)
                and call.func.attr in ("write", "write_text", "writelines") for arg in call.args[:1]]

    @cached_property
    def _embedded(self) -> tuple[list[EmbeddedSource], set[int], bool]:
        """(the C++/CUDA sources handed to a builder, the ids of their literals, whether every source
        argument could be followed to its literals)."""
        values = []
        for call, short in self.builder_calls:
            keywords, positions = SOURCE_ARGUMENTS[short]
            values += [kw.value for kw in call.keywords if kw.arg in keywords]
            values += [call.args[i] for i in positions if i < len(call.args)]
        written = self._written_texts() if self.load_calls else []
        sources, literal_ids, followed = [], set(), not (self.load_calls and not written)
        for value in values + written:
            literals, complete = self.flow.literals(value)
            followed &= complete
            for literal in literals:
                if id(literal) not in literal_ids:
                    literal_ids.add(id(literal))
                    sources.append(EmbeddedSource.from_literal(literal.value, literal.lineno))
        return sources, literal_ids, followed

    @property
    def embedded(self) -> list[EmbeddedSource]:
        """C++/CUDA text handed to a builder (load_inline, cupy RawKernel/RawModule, or written to the files
        a load() builds), followed through names, attributes, helpers and string operations (flow.py)."""
        return self._embedded[0]

    @property
    def sources_followed(self) -> bool:
        """Whether every source handed to a builder was followed to its literals: when not, a kernel
        source left over may reach a builder in a way this reading cannot see."""
        return self._embedded[2]

    @cached_property
    def uncompiled_cuda_literals(self) -> list[ast.Constant]:
        """String literals holding a __global__ kernel that no builder is seen to receive."""
        compiled = self._embedded[1]
        return [node for node in self.nodes if isinstance(node, ast.Constant) and isinstance(node.value, str)
                and "__global__" in node.value and id(node) not in compiled]

    def find_in_sources(self, pattern) -> Iterator[tuple[int, str]]:
        """(line, matched text) of a regex over every embedded source."""
        for source in self.embedded:
            for line, match in source.find(pattern):
                yield line, match.group(0)
