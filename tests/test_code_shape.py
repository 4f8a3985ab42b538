"""The code's shape: functions a maintainer reads in one go, classes of one job, and no import circles in ffn_helpers.

Lengths count from a function's `def` line (a class's `class` line) to its last line, docstring included (nested
functions count inside their enclosing function, and on their own; a class counts its methods).
"""

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 50
MAX_CLASS_LINES = 200  # a class past this has grown a second job into private methods: give that job a class
MAX_COMPLEXITY = 15
FOLDERS = ("autograder", "ffn_helpers")  # the grader and the course's helpers: the rules have no exception there


def _python_files():
    return [path for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]


def _definitions(path, kinds):
    """(qualified name, first line, length in lines) of every definition of `kinds` in the file at `path`, nested
    ones too (a method is `Class.method`, a class in a function `f.Inner`)."""
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, kinds):
                found.append((prefix + child.name, child.lineno, child.end_lineno - child.lineno + 1))
            defines = isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, f"{prefix}{child.name}." if defines else prefix)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def _functions(path):
    """Every function and method in the file at `path` (see _definitions)."""
    return _definitions(path, ast.FunctionDef | ast.AsyncFunctionDef)


def _classes(path):
    """Every class in the file at `path`, nested ones too (see _definitions)."""
    return _definitions(path, ast.ClassDef)


def test_no_function_is_over_50_lines():
    long = [f"{path.relative_to(ROOT)}:{line} {name} ({length} lines)"
            for path in _python_files() for name, line, length in _functions(path) if length > MAX_LINES]
    assert not long, f"split these functions (at most {MAX_LINES} lines each):\n  " + "\n  ".join(long)


def test_no_class_is_over_200_lines():
    long = [f"{path.relative_to(ROOT)}:{line} {name} ({length} lines)"
            for path in _python_files() for name, line, length in _classes(path) if length > MAX_CLASS_LINES]
    assert not long, f"split these classes by job (at most {MAX_CLASS_LINES} lines each):\n  " + "\n  ".join(long)


def test_the_class_count_sees_a_long_class_and_a_nested_one(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CLASS_LINES))
    path = tmp_path / "long.py"
    path.write_text(f"class Long:\n{body}\n\n\ndef f():\n    class Inner:\n        pass\n", encoding="utf-8")
    assert _classes(path) == [("Long", 1, MAX_CLASS_LINES + 1), ("f.Inner", MAX_CLASS_LINES + 5, 2)]


# A `noqa` (of a line, or `ruff: noqa` of a file) that names C901, or names no code and so silences every rule.
_OPTING_OUT = re.compile(r"#[^#]*\bnoqa\b(?!\s*:)|#[^#]*\bnoqa\s*:[^#]*\bC901\b", re.IGNORECASE)


def test_ruff_limits_complexity_and_nothing_opts_out():
    lint = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in lint["select"], f"ruff's C901 should be selected in pyproject.toml, got {lint['select']}"
    ignored = [*lint.get("ignore", []), *lint.get("extend-ignore", []),
               *(code for key in ("per-file-ignores", "extend-per-file-ignores")
                 for codes in lint.get(key, {}).values() for code in codes)]
    assert not any("C901".startswith(code) for code in ignored), f"pyproject.toml's ruff ignores C901: {ignored}"
    limit = lint.get("mccabe", {}).get("max-complexity")
    assert limit is not None and limit <= MAX_COMPLEXITY, \
        f"[tool.ruff.lint.mccabe] max-complexity should be at most {MAX_COMPLEXITY}, got {limit}"
    hidden = [f"{path.relative_to(ROOT)}:{n}" for path in _python_files()
              for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _OPTING_OUT.search(line)]
    assert not hidden, "a `noqa` there hides a function too complex to read; split it instead: " + ", ".join(hidden)


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
