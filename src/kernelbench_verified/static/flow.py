"""Following a value through a kernel file back to the string literals it is built from, the way a
reader would: a name to what it is assigned in its own function (then the enclosing ones, then the
module, blocks such as `if torch.cuda.is_available():` included), `self.attr` to what any method of the
class assigns it, a call of a helper defined in the file to what the helper returns, and lists, `+`,
f-strings, `.format`, `.join`, `textwrap.dedent` to their parts.

What it cannot follow (a function's parameter, a dict, a call of something not in the file) makes the
result incomplete, so a rule can tell "never handed to a builder" from "handed on in a way this reading
cannot see".
"""

from __future__ import annotations

import ast
from typing import Iterator

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# String methods and helpers whose result contains the text they are applied to.
TEXT_PRESERVING = {"format", "replace", "strip", "lstrip", "rstrip", "join", "dedent", "encode", "decode"}
MAX_DEPTH = 16


def local_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: inside `scope`, not inside the functions or classes it defines."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, DEFINITIONS):
            stack.extend(ast.iter_child_nodes(node))


def _leaves(target: ast.AST) -> list[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [leaf for element in target.elts for leaf in _leaves(element)]
    return [target]


def _paired(target: ast.AST, value: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """`a, b = x, y` pairs element by element; other unpacking leaves each target's value unknown."""
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return [pair for t, v in zip(target.elts, value.elts) for pair in _paired(t, v)]
    leaves = _leaves(target)
    return [(leaf, value if len(leaves) == 1 else None) for leaf in leaves]


def _assignments(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) of an assignment statement; a value unpacked into several targets is None."""
    if isinstance(node, ast.Assign):
        pairs = []
        for target in node.targets:
            pairs += _paired(target, node.value)
        return pairs
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
        return [(node.target, node.value)]
    if isinstance(node, ast.NamedExpr):
        return [(node.target, node.value)]
    return []


def _callee(call: ast.Call) -> str | None:
    """The name a call of a function of this file goes by: `helper(...)` or `self.helper(...)`."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        return func.attr
    return None


class Flow:
    """Where the values of one parsed file come from. Built once per file (KernelFile.flow)."""

    def __init__(self, tree: ast.Module, parents: dict, nodes: list):
        self.tree, self.parents, self.nodes = tree, parents, nodes
        self._names: dict[int, dict[str, list]] = {}

    def enclosing(self, node: ast.AST, kinds: tuple) -> ast.AST | None:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, kinds):
                return node
        return None

    def names_in(self, scope: ast.AST) -> dict[str, list]:
        """Name -> the values assigned to it in `scope` (a function or the module)."""
        if id(scope) not in self._names:
            table: dict[str, list] = {}
            for node in local_nodes(scope):
                for target, value in _assignments(node):
                    if isinstance(target, ast.Name):
                        table.setdefault(target.id, []).append(value)
            self._names[id(scope)] = table
        return self._names[id(scope)]

    def name_values(self, node: ast.Name) -> list | None:
        """What `node` may hold: the assignments of its innermost scope that assigns it; for a parameter,
        what the calls of its function in this file pass; None when neither is found."""
        scope = self.enclosing(node, SCOPES)
        while scope is not None:
            if node.id in self.names_in(scope):
                return self.names_in(scope)[node.id]
            if node.id in {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)}:
                return self.passed_values(scope, node.id)
            scope = self.enclosing(scope, SCOPES)
        return self.names_in(self.tree).get(node.id)

    def passed_values(self, function: ast.AST, parameter: str) -> list | None:
        """What the calls of `function` (by its name, or as a method of self) pass as `parameter`."""
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        names = [a.arg for a in function.args.posonlyargs + function.args.args]
        offset = 1 if names[:1] in (["self"], ["cls"]) else 0
        position = names.index(parameter) - offset if parameter in names else None
        values = []
        for call in (n for n in self.nodes if isinstance(n, ast.Call) and _callee(n) == function.name):
            keyword = [k.value for k in call.keywords if k.arg == parameter]
            if keyword:
                values += keyword
            elif position is not None and 0 <= position < len(call.args):
                values.append(call.args[position])
            else:
                return None  # a call that passes it in a way not read here (*args, a default)
        return values or None

    def attribute_values(self, node: ast.Attribute) -> list | None:
        """What `self.attr` may hold: every value its class assigns to it (in any method, or as a class
        attribute); None for attributes of anything else."""
        owner = self.enclosing(node, (ast.ClassDef,))
        if owner is None or not isinstance(node.value, ast.Name) or node.value.id not in ("self", "cls"):
            return None
        values = [value for child in ast.walk(owner) for target, value in _assignments(child)
                  if isinstance(target, ast.Attribute) and target.attr == node.attr
                  and isinstance(target.value, ast.Name) and target.value.id in ("self", "cls")]
        values += self.names_in(owner).get(node.attr, [])
        return values or None

    def returned_values(self, call: ast.Call) -> list | None:
        """What a helper defined in this file returns, for a call of it by name or as a method of self."""
        name = _callee(call)
        helpers = [n for n in self.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
        if not helpers:
            return None
        return [n.value for helper in helpers for n in local_nodes(helper) if isinstance(n, ast.Return)]

    def literals(self, node: ast.AST | None, depth: int = 0) -> tuple[list[ast.Constant], bool]:
        """The string literals `node` is built from, and whether every part of it could be followed."""
        if node is None or depth > MAX_DEPTH:
            return [], False
        deeper = depth + 1
        if isinstance(node, ast.Constant):
            return ([node] if isinstance(node.value, str) else []), True
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._all(node.elts, deeper)
        if isinstance(node, ast.BinOp):
            return self._all([node.left, node.right], deeper)
        if isinstance(node, ast.JoinedStr):
            return self._all(node.values, deeper)
        if isinstance(node, ast.FormattedValue):
            return self.literals(node.value, deeper)
        if isinstance(node, ast.Name):
            return self._all(self.name_values(node), deeper)
        if isinstance(node, ast.Attribute):
            return self._all(self.attribute_values(node), deeper)
        if isinstance(node, ast.Call):
            return self._call_literals(node, deeper)
        return [], False

    def _call_literals(self, call: ast.Call, depth: int) -> tuple[list[ast.Constant], bool]:
        func = call.func
        method = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if method in TEXT_PRESERVING:
            receiver = [func.value] if isinstance(func, ast.Attribute) else []
            return self._all(receiver + list(call.args) + [k.value for k in call.keywords], depth)
        if method == "str" and call.args:
            return self.literals(call.args[0], depth)
        return self._all(self.returned_values(call), depth)

    def _all(self, values: list | None, depth: int) -> tuple[list[ast.Constant], bool]:
        if values is None:
            return [], False
        found, complete = [], True
        for value in values:
            literals, followed = self.literals(value, depth)
            found += literals
            complete &= followed
        return found, complete
