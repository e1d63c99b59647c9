"""The package reads as the pipeline: stage subpackages over shared layers, imports only pointing down."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "kernelbench_verified"
# Lower ranks are lower in the stack; a module may import its own subpackage or anything ranked below.
RANKS = {"errors": 0, "paths": 0, "verdicts": 0, "lifetime": 0, "upstream_names": 0.5, "config": 1, "results": 1, "reports": 1, "cluster": 1, "cli": 2, "run_problems": 2, "measure": 2, "static": 2, "problems": 3,
         "evaluate": 4, "leaderboard": 4, "baseline": 5, "generate": 5, "corpus": 4,  # baseline: timing_path=sandbox runs the evaluator
         "validate": 6}  # validate_harness.py drives every stage


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Package modules `path` imports, at the top or inside functions."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".") if package else []
            base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
            target = ".".join(filter(None, [*base, node.module or ""]))
            for alias in node.names:
                candidate = f"{target}.{alias.name}".strip(".")
                found.add(candidate if candidate in MODULES else target)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kernelbench_verified."):
            found.add(node.module.removeprefix("kernelbench_verified."))
    return {m for m in found if m in MODULES and m != name}


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: imports_of(path) for name, path in MODULES.items()}


def top(name: str) -> str:
    return name.split(".")[0] if name else ""


@pytest.mark.parametrize("name", sorted(n for n in GRAPH if n))
def test_imports_point_down_the_stack(name):
    for target in GRAPH[name]:
        if top(target) == top(name) or not target:
            continue
        assert RANKS[top(target)] < RANKS[top(name)], f"{name} imports {target}, which is not below it"


def test_no_import_cycles():
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in GRAPH[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in GRAPH:
        if node not in state:
            visit(node, [node])


def test_every_top_level_entry_has_a_rank():
    assert {top(n) for n in GRAPH if n} <= set(RANKS)


def test_default_folders_follow_the_checkout_of_the_running_script(tmp_path):
    """A second checkout using this checkout's (editable) install evaluates against its own folders."""
    import subprocess
    import sys

    other = tmp_path / "other_checkout"
    (other / "configs").mkdir(parents=True)
    (other / "configs" / "eval.yaml").write_text("run_name: ???\n")
    (other / "scripts").mkdir()
    script = other / "scripts" / "show_defaults.py"
    script.write_text("from kernelbench_verified.problems.load import DEFAULT_PROBLEMS_DIR\n"
                      "from kernelbench_verified.problems.hidden_tests import DEFAULT_HIDDEN_DIR\n"
                      "from kernelbench_verified.config import CONFIG_DIR\n"
                      "print(DEFAULT_PROBLEMS_DIR, DEFAULT_HIDDEN_DIR, CONFIG_DIR)\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    problems, hidden, configs = result.stdout.split()
    assert (problems, hidden, configs) == (str(other / "KernelBench"), str(other / "hidden_tests"), str(other / "configs"))
