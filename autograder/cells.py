"""The code cells of a graded notebook: who wrote each one, what it defines and uses, which exercise it is.

Roles, from nbgrader's cell metadata (after its OverwriteCells step has put
the course's locked cells back), by nbgrader's own predicates (is_solution, is_grade, is_locked below):

- `answer`: a learner's answer cell (`"solution": true`), its `grade_id` names the exercise;
- `test`: a graded cell that is not an answer (nbgrader locks every one; its source includes the hidden tests);
- `instructor`: any other locked cell of the course with a grade_id (the setup cell, demonstrations);
- `learner`: any other code cell (cells the learner added or could edit).

`role_of` is the one rule: the grader, `check`, the report, the feedback page, the build and the tests read a
cell's role through it, or through the three predicates. `assignment_of_answers` finds the course assignment whose
authored answer cells a notebook's are (`check` refuses 03's notebook saved under 02's name).
"""

import ast
import functools
import symtable
from collections import defaultdict
from dataclasses import dataclass

from . import SOURCE_DIR, assignments, exercises_in_order, source_metadata

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
    may_call: tuple = ()  # an answer cell's MAY_CALL: the course functions its answer may call (may_call.py)

    @property
    def label(self):
        return f"cell {self.index}" + (f" ({self.grade_id})" if self.grade_id else "")


@functools.cache
def _transformer():
    # Imported here: the class report (which reads cells through similarity) is standard library only, so that
    # `python -m autograder` outside the course's environment still says how to run it instead of a traceback
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


@functools.lru_cache(maxsize=4096)  # the course's own cells are the same in every submission
def to_python(source):
    """The plain-Python form IPython would run."""
    try:
        return _transformer().transform_cell(source)
    except Exception:  # IPython's transformer rejects some malformed input; compiling it will then fail clearly
        return source


def analysable(source):
    """Plain Python for analysis: the body of a %%time-like cell magic counts as the cell."""
    lines = source.lstrip().splitlines()
    if lines and lines[0].split(" ")[0] in _BODY_MAGICS:
        source = "\n".join(lines[1:])
    return to_python(source)


@functools.lru_cache(maxsize=4096)
def parse(source):
    """The cell's syntax tree, or None (shared between callers: never modify it)."""
    try:
        return ast.parse(analysable(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # readable.screen stubs such learner cells
        return None


def _target_names(target):
    for node in ast.walk(target):
        if isinstance(node, ast.Name):
            yield node.id


_DEFINITIONS = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _bound_here(node):
    """The names one statement (or except clause) binds itself, not counting the blocks inside it."""
    if isinstance(node, _DEFINITIONS):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"]
    if isinstance(node, ast.Assign):
        return [name for target in node.targets for name in _target_names(target)]
    if isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        return list(_target_names(node.target))
    if isinstance(node, ast.With | ast.AsyncWith):
        return [name for item in node.items if item.optional_vars is not None
                for name in _target_names(item.optional_vars)]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    return []


def _blocks(node):
    """The statement lists inside a top-level if/try/while/for/with/match: their names are top-level too."""
    if isinstance(node, _DEFINITIONS):
        return []
    blocks = [[n for n in inner if isinstance(n, ast.stmt | ast.excepthandler)]
              for field in ("body", "orelse", "finalbody", "handlers")
              if isinstance(inner := getattr(node, field, None), list)]
    if isinstance(node, ast.Match):
        blocks += [case.body for case in node.cases]
    return blocks


def bound_names(tree):
    """(stores, defines): names bound at the top level of a module, and the functions/classes among them."""
    stores, defines = set(), set()
    pending = list(tree.body) if tree is not None else []
    while pending:
        node = pending.pop()
        stores.update(_bound_here(node))
        if isinstance(node, _DEFINITIONS):
            defines.add(node.name)
        for block in _blocks(node):
            pending.extend(block)
    return frozenset(stores), frozenset(defines)


@functools.lru_cache(maxsize=4096)
def global_reads(python):
    """The global names a cell reads: at top level, or from inside its functions, lambdas and comprehensions."""
    try:
        table = symtable.symtable(python, "<cell>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
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


# An answer cell's metadata key: the names, under ffn_helpers, of the course functions its answer may call (the
# clean re-run's judge serves only those while the exercise is graded; autograder/may_call.py checks and tells them).
MAY_CALL = "may_call"


def _may_call(cell, role):
    """An answer cell's MAY_CALL as a tuple of strings; () for any other cell or a malformed value (the build
    refuses such a source: may_call.problems; a submission's own metadata is never what the grader reads)."""
    value = cell.get("metadata", {}).get(MAY_CALL)
    if role != "answer" or not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return ()
    return tuple(value)


def _nbgrader(cell):
    meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
    return meta if isinstance(meta, dict) else {}


# nbgrader's predicates (nbgrader/utils.py: is_solution, is_grade, is_locked), read here on plain dicts and notebook
# nodes alike: importing nbgrader costs seconds that `report` and the build need not pay. tests/test_cell_roles.py
# holds each to nbgrader's own on every combination of the flags.
def is_solution(cell):
    """nbgrader's is_solution: a cell the learner writes."""
    return bool(_nbgrader(cell).get("solution", False))


def is_grade(cell):
    """nbgrader's is_grade: a cell that carries points."""
    return bool(_nbgrader(cell).get("grade", False))


def is_locked(cell):
    """nbgrader's is_locked: never a solution cell, always a grade cell, else as its metadata says."""
    if is_solution(cell):
        return False
    return is_grade(cell) or bool(_nbgrader(cell).get("locked", False))


def role_of(cell):
    """answer, test, instructor or learner (the module's docstring): the one rule for a cell's role."""
    if is_solution(cell):
        return "answer"
    if is_grade(cell):
        return "test"
    if is_locked(cell) and _nbgrader(cell).get("grade_id"):
        return "instructor"
    return "learner"


def role_of_metadata(meta):
    """role_of for a cell known only by its nbgrader metadata (a source's header)."""
    return role_of({"metadata": {"nbgrader": meta}})


def code_cells(nb):
    """Every code cell of an nbformat notebook, as a `Cell`."""
    raw = [(i, c) for i, c in enumerate(nb.cells) if c.get("cell_type") == "code"]
    roles = [(_nbgrader(c).get("grade_id"), role_of(c)) for _, c in raw]
    out = []
    for (i, c), (grade_id, role), exercise in zip(raw, roles, exercises_in_order(roles), strict=True):
        source = c.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        tree = parse(source)
        stores, defines = bound_names(tree)
        python = to_python(source)
        out.append(Cell(i, role, grade_id, source, python, exercise, float(_nbgrader(c).get("points", 0) or 0),
                        stores, global_reads(analysable(source)), defines, _may_call(c, role)))
    return out


def needed(cells, wanted, providers):
    """The cells among `providers` that bind a name in `wanted`, or a name such a cell reads, in notebook order.

    Each name is looked up once in an index of the providers that bind it, so the time follows the names, not
    the length of a chain of cells that hand a name on (`b = a`, `c = b`, ... in any order). A provider's
    `loads` is read only once it is chosen (the copy report's statements work theirs out only then).
    """
    binders = defaultdict(list)
    for cell in providers:
        for name in cell.stores:
            binders[name].append(cell)
    chosen, seen = set(), set(wanted)
    pending = list(seen)
    while pending:
        for cell in binders.get(pending.pop(), ()):
            if cell.index not in chosen:
                chosen.add(cell.index)
                fresh = cell.loads - seen
                seen |= fresh
                pending.extend(fresh)
    return [c for c in cells if c.index in chosen]


# How code reads a global through a string, which `needed` cannot follow (it follows names): the namespace's own
# functions and what runs a string, the modules that hold the notebook's namespace or find one, and the attributes
# that open an object's or a frame's namespace. The usual ways, not every way: the copy report reads them as "may
# read anything the re-run runs" (report/similarity.py), never as a verdict.
LOOKUP_NAMES = frozenset({"globals", "vars", "locals", "getattr", "eval", "exec", "compile", "__import__",
                          "get_ipython", "__builtins__"})
LOOKUP_MODULES = frozenset({"__main__", "sys", "builtins", "importlib", "inspect", "gc", "pickle"})
LOOKUP_ATTRIBUTES = frozenset({"__globals__", "__dict__", "__builtins__", "f_globals", "f_locals", "user_ns"})


def reads_by_string(tree, names=frozenset()):
    """Whether code may read a global through a string: it names one of LOOKUP_NAMES or LOOKUP_MODULES, imports one
    of those modules, reads one of LOOKUP_ATTRIBUTES, or a string in it spells one of `names` (a name bound where
    it could be looked up)."""
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Name) and (node.id in LOOKUP_NAMES or node.id in LOOKUP_MODULES):
            return True
        if isinstance(node, ast.Attribute) and node.attr in LOOKUP_ATTRIBUTES:
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in LOOKUP_MODULES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LOOKUP_MODULES:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            return True
    return False


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


def assignment_of_answers(answer_ids, expected=None):
    """The course assignment whose source has these answer cells (most of them), or None.

    `expected`: the assignment they are thought to be, read first, and the answer on a tie; when its source has
    every one of them, no other can have more, and the other sources are not read (a second or more: `check`)."""
    wanted = {a for a in answer_ids if a}
    best, most = None, 0
    order = assignments()
    if expected in order:
        order.remove(expected)
        order.insert(0, expected)
    for aid in order:
        ours = {m.get("grade_id") for m in source_metadata(SOURCE_DIR / aid / f"{aid}.py")
                if role_of_metadata(m) == "answer"}
        if len(wanted & ours) > most:
            best, most = aid, len(wanted & ours)
        if aid == expected and wanted and wanted <= ours:
            return aid
    return best
