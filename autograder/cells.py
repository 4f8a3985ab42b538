"""The code cells of a graded notebook: who wrote each one, what it defines and uses, which exercise it is.

Roles, from nbgrader's cell metadata (after its OverwriteCells step has put
the course's locked cells back):

- `instructor`: a locked cell of the course that is not a test (the setup cell, demonstrations);
- `test`: a graded, locked test cell (its source includes the hidden tests);
- `answer`: a learner's answer cell (`"solution": true`), its `grade_id` names the exercise;
- `learner`: any other code cell (cells the learner added or could edit).
"""

import ast
import functools
import symtable
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager

_BODY_MAGICS = ("%%time", "%%timeit", "%%capture", "%%prun")


@dataclass(frozen=True)
class Cell:
    index: int  # position among the notebook's cells
    role: str  # instructor | test | answer | learner
    grade_id: str | None
    source: str  # as the notebook has it
    python: str  # IPython syntax (magics, !commands) turned into plain Python
    exercise: str | None  # the exercise an answer or test cell belongs to
    points: float = 0.0
    stores: frozenset = frozenset()  # names the cell binds at top level
    loads: frozenset = frozenset()  # names the cell reads
    defines: frozenset = frozenset()  # functions and classes it defines at top level

    @property
    def label(self):
        return f"cell {self.index}" + (f" ({self.grade_id})" if self.grade_id else "")


@functools.cache
def _transformer():
    return TransformerManager()


@functools.lru_cache(maxsize=4096)  # the course's own cells are the same in every submission
def to_python(source):
    """The plain-Python form IPython would run."""
    try:
        return _transformer().transform_cell(source)
    except Exception:  # IPython's transformer rejects some malformed input; compiling it will then fail clearly
        return source


def _magic_body(source):
    """Plain Python for analysis: the body of a %%time-like cell magic counts as the cell."""
    lines = source.lstrip().splitlines()
    if lines and lines[0].split(" ")[0] in _BODY_MAGICS:
        source = "\n".join(lines[1:])
    return to_python(source)


@functools.lru_cache(maxsize=4096)
def parse(source):
    """The cell's syntax tree, or None (shared between callers: never modify it)."""
    try:
        return ast.parse(_magic_body(source))
    except (SyntaxError, ValueError):
        return None


def _target_names(target):
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            yield node.id


def bound_names(tree):
    """(stores, defines): names bound at the top level of a module, and the functions/classes among them."""
    stores, defines = set(), set()

    def visit(body):
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                stores.add(node.name)
                defines.add(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    if alias.name != "*":
                        stores.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    stores.update(_target_names(target))
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                stores.update(_target_names(node.target))
            elif isinstance(node, ast.For | ast.AsyncFor):
                stores.update(_target_names(node.target))
            elif isinstance(node, ast.With | ast.AsyncWith):
                for item in node.items:
                    if item.optional_vars is not None:
                        stores.update(_target_names(item.optional_vars))
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for field in ("body", "orelse", "finalbody", "handlers"):  # if/try/while/for blocks at top level
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        visit([n for n in inner if isinstance(n, ast.stmt | ast.excepthandler)])
            if isinstance(node, ast.ExceptHandler) and node.name:
                stores.add(node.name)
            if isinstance(node, ast.Match):
                for case in node.cases:
                    visit(case.body)

    if tree is not None:
        visit(tree.body)
    return frozenset(stores), frozenset(defines)


@functools.lru_cache(maxsize=4096)
def global_reads(python):
    """The global names a cell reads: at top level, or from inside its functions, lambdas and comprehensions."""
    try:
        table = symtable.symtable(python, "<cell>", "exec")
    except (SyntaxError, ValueError):
        return frozenset()
    names = set()

    def visit(scope, top):
        for sym in scope.get_symbols():
            if sym.is_referenced() and (top or sym.is_global()):
                names.add(sym.get_name())
        for child in scope.get_children():
            visit(child, False)

    visit(table, True)
    return frozenset(names)


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def role_of(cell):
    meta = _nbgrader(cell)
    if meta.get("solution"):
        return "answer"
    if meta.get("grade") and meta.get("locked", True):
        return "test"
    if meta.get("locked") and meta.get("grade_id"):
        return "instructor"
    return "learner"


def exercise_of_test(grade_id, answer_ids, previous_answer):
    """`test_<f>` and `test_<f>_hidden` belong to exercise `<f>`; otherwise to the answer just above."""
    name = grade_id or ""
    if name.startswith("test_"):
        name = name[len("test_"):]
    for suffix in ("_hidden", "_visible"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name if name in answer_ids else previous_answer


def code_cells(nb):
    """Every code cell of an nbformat notebook, as a `Cell`."""
    raw = [(i, c) for i, c in enumerate(nb.cells) if c.get("cell_type") == "code"]
    answer_ids = {_nbgrader(c).get("grade_id") for _, c in raw if role_of(c) == "answer"}
    out, previous_answer = [], None
    for i, c in raw:
        meta, role = _nbgrader(c), role_of(c)
        grade_id = meta.get("grade_id")
        if role == "answer":
            exercise = previous_answer = grade_id
        elif role == "test":
            exercise = exercise_of_test(grade_id, answer_ids, previous_answer)
        else:
            exercise = None
        source = c.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        tree = parse(source)
        stores, defines = bound_names(tree)
        python = to_python(source)
        out.append(Cell(i, role, grade_id, source, python, exercise, float(meta.get("points", 0) or 0),
                        stores, global_reads(_magic_body(source)), defines))
    return out


def needed(cells, wanted, providers):
    """The cells among `providers` that bind a name in `wanted`, or a name such a cell reads, in notebook order."""
    wanted, chosen = set(wanted), set()
    changed = True
    while changed:
        changed = False
        for cell in providers:
            if cell.index not in chosen and cell.stores & wanted:
                chosen.add(cell.index)
                wanted |= cell.loads
                changed = True
    return [c for c in cells if c.index in chosen]


def slim(python, wanted):
    """A course cell cut down to the statements that bind a name in `wanted` (imports to those names).

    Used for the clean re-run, where the course's setup cell would otherwise import
    everything the notebook's demonstrations use (matplotlib, for one), for every student.
    """
    try:
        tree = ast.parse(python)
    except (SyntaxError, ValueError):
        return python
    kept = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a for a in node.names if (a.asname or a.name.split(".")[0]) in wanted]
            if names:
                node.names = names
                kept.append(node)
        else:
            stores, _ = bound_names(ast.Module(body=[node], type_ignores=[]))
            if stores & wanted:
                kept.append(node)
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) if kept else "pass"
