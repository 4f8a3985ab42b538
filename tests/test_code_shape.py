"""The code's shape: functions a maintainer reads in one go, and no import circles in ffn_helpers.

Lengths count from a function's `def` line to its last line, docstring included (nested functions count
inside their enclosing function, and on their own).
"""

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 50
MAX_COMPLEXITY = 15

# autograder/ functions over MAX_LINES that are being split, as "module.qualified_name" (the module's file name
# without .py, so that the entry survives a file moving between packages). THIS LIST MAY ONLY SHRINK: add nothing
# to it; when a function is split, remove its entry (the test fails while a fixed function is still listed).
KNOWN_LONG_IN_AUTOGRADER = {
    "execute.SandboxExecute._execute_cell",
    "sandbox.Sandbox._bwrap",
    "worker.Worker._grade",
    "worker.Worker._autograde",
}


def _functions(path):
    """(qualified name, first line, length in lines) of every function and method in the file at `path`."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((prefix + child.name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def _too_long(folder):
    """{"module.qualified_name": "path:line name (n lines)"} for each function over MAX_LINES under `folder`."""
    return {f"{path.stem}.{name}": f"{path.relative_to(ROOT)}:{line} {name} ({length} lines)"
            for path in sorted((ROOT / folder).rglob("*.py"))
            for name, line, length in _functions(path) if length > MAX_LINES}


def test_no_function_in_ffn_helpers_is_over_50_lines():
    long = _too_long("ffn_helpers")
    assert not long, f"split these functions (at most {MAX_LINES} lines each):\n  " + "\n  ".join(long.values())


def test_no_new_function_in_autograder_is_over_50_lines():
    long = _too_long("autograder")
    new = sorted(v for k, v in long.items() if k not in KNOWN_LONG_IN_AUTOGRADER)
    assert not new, f"split these functions (at most {MAX_LINES} lines each):\n  " + "\n  ".join(new)


def test_the_list_of_known_long_functions_only_names_long_ones():
    """A function split since is taken off the list, so that it cannot grow back unnoticed."""
    fixed = sorted(KNOWN_LONG_IN_AUTOGRADER - set(_too_long("autograder")))
    assert not fixed, (f"no longer over {MAX_LINES} lines (or gone): remove from KNOWN_LONG_IN_AUTOGRADER in "
                       f"{Path(__file__).name}: {', '.join(fixed)}")


def test_ruff_limits_complexity_and_nothing_in_ffn_helpers_opts_out():
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"], f"ruff's C901 should be selected in pyproject.toml, got {lint['select']}"
    limit = lint.get("mccabe", {}).get("max-complexity")
    assert limit is not None and limit <= MAX_COMPLEXITY, \
        f"[tool.ruff.lint.mccabe] max-complexity should be at most {MAX_COMPLEXITY}, got {limit}"
    hidden = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "ffn_helpers").rglob("*.py"))
              for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if "noqa" in line and "C901" in line.split("noqa", 1)[1]]
    assert not hidden, "a `noqa: C901` hides a function too complex to read; split it instead: " + ", ".join(hidden)


def _module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, modules):
    """The modules of `modules` that the file at `path` imports anywhere, inside functions too."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = (f"{base}.{node.module}" if node.module else base) if node.level else node.module
            for alias in node.names:  # `from . import plots` names a module; `from .plots import fmt` a name in one
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return (found & modules) - {name}


def test_ffn_helpers_has_no_import_circles():
    """Imports inside functions count: they are how matplotlib and ipywidgets stay out of a graded kernel, and a
    circle through one works only as long as nobody imports the other side first."""
    paths = {_module_name(p): p for p in (ROOT / "ffn_helpers").rglob("*.py")}
    graph = {name: _imports(path, set(paths)) for name, path in paths.items()}

    def reaches(start, goal):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                if nxt == goal:
                    return True
                seen.add(nxt)
                todo.append(nxt)
        return False

    circles = sorted(f"{a} -> {b} -> ... -> {a}" for a in graph for b in graph[a] if reaches(b, a))
    assert not circles, "import circles (a lower module should hold what both sides need):\n  " + "\n  ".join(circles)
