"""Comparing a corpus's reference with the shipped problem of the same level and id, by syntax tree only
(nothing from a corpus is ever executed outside the evaluator's jail)."""

from __future__ import annotations

import ast

IDENTICAL = "identical"
CONSTANTS = "constants"      # the same code, other literal values (shapes, sizes, hyper-parameters, docstrings)
MODEL = "model"              # the code itself differs
NO_SHIPPED = "no_shipped"    # no shipped problem of that level and id
VERDICTS = (IDENTICAL, CONSTANTS, MODEL, NO_SHIPPED)

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")


def compare_references(corpus: str, shipped: str | None) -> str:
    """One of VERDICTS. Formatting and comments never count: the trees are compared."""
    if shipped is None:
        return NO_SHIPPED
    ours, theirs = ast.parse(corpus), ast.parse(shipped)
    if ast.dump(ours) == ast.dump(theirs):
        return IDENTICAL
    if ast.dump(_without_constants(ours)) == ast.dump(_without_constants(theirs)):
        return CONSTANTS
    return MODEL


def missing_names(tree: ast.Module) -> list[str]:
    """What a problem file must define at module level and this one does not."""
    defined = {node.name for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    return [name for name in REQUIRED_NAMES if name not in defined]


def _without_constants(tree: ast.Module) -> ast.Module:
    class Blank(ast.NodeTransformer):
        def visit_Constant(self, node):
            return ast.copy_location(ast.Constant(value=None), node)

        def visit_UnaryOp(self, node):  # -1 is a constant too
            if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
                return ast.copy_location(ast.Constant(value=None), node)
            return self.generic_visit(node)

    return Blank().visit(ast.parse(ast.unparse(tree)))
