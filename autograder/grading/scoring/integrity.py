"""What a submission must not do, found by reading its code (the syntax tree of each learner cell).

- `monkeypatch`: assigning to, deleting or `setattr`-ing attributes of numpy,
  builtins, sys, math, ffn_helpers, IPython or the running shell (`get_ipython()`),
  or reaching under them (`vars(np)[...] = `, `sys.modules[...] = `, ctypes, gc);
- `reference`: an answer that uses the course's reference implementation of its
  own exercise (`ffn_helpers.ffn_forward` in the `ffn_forward` answer), the
  code that computes answers under other names (ANSWER_MACHINERY), or any of
  ffn_helpers' private code (`ffn_helpers._fast`'s FFN kernel);
- `lying`: an answer cell that defines a class posing as data (an ndarray or
  number subclass, or one that overrides `__eq__`);
- `shadow`: a learner's cell that rebinds a name the course's own cells
  import or define (`checks`, `mistakes`, `np`, a worked example): the
  notebook run's tests would use the learner's object (the clean re-run's
  never do);
- `review`: things that have no place in an answer and that the sandbox
  stops anyway (processes, signals, the network, deleting files, exiting):
  shown to the instructor, without costing points by themselves. Importing
  a module is no finding: using it to patch or reach objects is.

A finding costs points only on the exercise whose answer cell produced it;
one in any other cell (a learner's scratch cell) is shown for review only.

The clean re-run (rerun.py) is what keeps points honest; these findings name
the attempt so the instructor sees it.
"""

import ast
import functools
import importlib
import inspect
import pkgutil

from ...cells import bound_names, parse
from ...schema import Flag as Finding  # a finding is the Flag the result records
from .. import course

# Functions of ffn_helpers that answer an exercise whose name differs from theirs (the spec's table).
EXTRA_REFERENCES = {
    "ffn_forward": ("ffn_trace",),
    "post_ln_block": ("post_ln",),
    "pre_ln_block": ("pre_ln",),
    "swiglu_ffn": ("swiglu_forward",),
    "ffn_per_token": ("ffn_forward", "ffn_trace"),
    "swiglu_param_count": ("ffn_param_count",),
    "collapse_linear": ("collapse_to_linear",),
    "silu_stable": ("silu",),
    "gelu_exact": ("gelu",),
    "xavier_init": ("xavier_std",),
    "count_parameters": ("ffn_param_count",),
    "ffn_module_forward": ("ffn_forward", "ffn_trace"),
    "ffn_module_backward": ("ffn_backward",),
    "router_topk": ("top_k",),
    "quantize_int8": ("int8_scale",),
    "ffn_forward_float16": ("forward_in",),
}
# Every module of ffn_helpers that holds reference answers (tests/test_grader_units.py checks none is missing).
REFERENCE_MODULES = ("ffn_helpers", "ffn_helpers.activations", "ffn_helpers.ffn", "ffn_helpers.norm",
                     "ffn_helpers.budgets", "ffn_helpers.module", "ffn_helpers.positions", "ffn_helpers.memory",
                     "ffn_helpers.moe", "ffn_helpers.precision", "ffn_helpers.training")
# Feedback, figures and worked examples; `yours` runs the learner's own functions in demonstrations, and
# `torch_check` needs torch, which the grader's environment does not have.
NOT_REFERENCES = ("ffn_helpers.checks", "ffn_helpers.mistakes", "ffn_helpers.plots", "ffn_helpers.widgets",
                  "ffn_helpers.examples", "ffn_helpers.rounding", "ffn_helpers.yours", "ffn_helpers.torch_check")
# Code that computes answers under names no exercise has: the catalogue of mistakes (forward_pass.ffn_variant with
# its defaults is the FFN). No answer has a reason to call it, and no reference calls it: each of its functions is
# a reference of every exercise. (ffn_helpers' private modules are not listed: ffn.ffn_forward calls _fast's FFN
# kernel, and an answer may use the reference of another exercise. An answer that names one is found in its code.)
ANSWER_MACHINERY = ("ffn_helpers.mistakes",)

GUARDED = ("numpy", "builtins", "sys", "math", "ffn_helpers", "IPython", "ipykernel", "nbgrader", "scipy",
           "jupyter_client", "zmq", "traceback")
_SHELL_CALLS_ALLOWED = {"run_line_magic", "run_cell_magic", "system", "getoutput"}
_MAGICS_ALLOWED = {"time", "timeit", "matplotlib", "pip", "who", "whos", "prun", "capture", "history", "lsmagic",
                   "pinfo", "pinfo2", "psearch", "load_ext", "autoreload", "ls", "pwd"}
_LIE_DUNDERS = {"__eq__", "__ne__", "__array__", "__array_ufunc__", "__array_function__", "__float__",
                "__bool__", "__array_interface__", "__array_priority__"}
_LIE_BASES = {"numpy.ndarray", "numpy.generic", "numpy.float64", "float", "int", "complex", "str", "bool",
              "numpy.ma.MaskedArray", "tuple", "list", "dict"}
_REVIEW_CALLS = {
    "os._exit": "ends the process (os._exit)", "os.kill": "sends a signal to a process (os.kill)",
    "os.killpg": "sends a signal to a process group", "os.fork": "forks the process", "os.forkpty": "forks the process",
    "os.system": "runs a shell command", "os.popen": "runs a shell command", "os.remove": "deletes a file",
    "os.unlink": "deletes a file", "os.rmdir": "deletes a folder", "os.removedirs": "deletes folders",
    "os.rename": "renames files", "os.replace": "replaces files", "os.walk": "walks the file system",
    "os.chdir": "changes the working folder", "os.setsid": "starts a new session",
    "shutil.rmtree": "deletes a folder tree", "shutil.move": "moves files", "sys.exit": "exits (sys.exit)",
    "signal.signal": "installs a signal handler", "signal.alarm": "sets an alarm signal",
    "exit": "exits (exit())", "quit": "exits (quit())", "exec": "executes a string as code",
    "eval": "evaluates a string as code", "compile": "compiles a string as code", "__import__": "imports dynamically",
    "importlib.import_module": "imports dynamically", "importlib.reload": "reloads a module",
}
_REVIEW_MODULES = {"subprocess": "starts processes", "multiprocessing": "starts processes",
                   "socket": "opens network connections", "urllib": "opens network connections",
                   "http": "opens network connections", "requests": "opens network connections",
                   "ftplib": "opens network connections", "threading": "starts threads", "signal": "handles signals",
                   "pty": "opens terminals", "resource": "changes resource limits"}
# Importing gc, ctypes, importlib, inspect, os or sys is no evidence by itself (an honest answer may): what the
# code then does with them (patching, gc.get_referents, ctypes' memory access) is judged on its own.


def reference_names(exercise):
    """The dotted names in ffn_helpers that answer `exercise`: same name, the spec's table, ANSWER_MACHINERY."""
    names = {exercise, *EXTRA_REFERENCES.get(exercise, ())}
    found = []
    for module_name in REFERENCE_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in sorted(names):
            if callable(vars(module).get(name)):
                found.append(f"{module_name}.{name}")
    return found + list(answer_machinery())


@functools.cache
def answer_machinery():
    """The dotted name of every function defined in the modules of ANSWER_MACHINERY (a package: all its modules)."""
    found = []
    for top in ANSWER_MACHINERY:
        package = importlib.import_module(top)
        names = [top] + [f"{top}.{m.name}" for m in pkgutil.iter_modules(getattr(package, "__path__", []))]
        for module in map(importlib.import_module, names):
            found += [f"{module.__name__}.{name}" for name, value in vars(module).items()
                      if inspect.isfunction(value) and value.__module__ == module.__name__]
    return tuple(sorted(found))


class _Aliases:
    """What each name bound by an import (or by `x = get_ipython()`) stands for, across all cells."""

    def __init__(self, trees):
        self.modules = {"__builtins__": "builtins"}
        self.shell = {"get_ipython"}
        for tree in trees:
            if tree is None:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            self.modules[alias.asname] = alias.name
                        else:
                            top = alias.name.split(".")[0]
                            self.modules[top] = top
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    for alias in node.names:
                        if alias.name != "*":
                            self.modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif isinstance(node, ast.Assign) and self._is_shell(node.value):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self.shell.add(target.id)

    def dotted(self, node):
        """'numpy.testing.assert_allclose' for `np.testing.assert_allclose`, or None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.modules:
            return ".".join([self.modules[node.id], *reversed(parts)])
        if isinstance(node, ast.Name) and node.id in ("builtins",):
            return ".".join(["builtins", *reversed(parts)])
        return None

    def _is_shell(self, node):
        """Does this expression start from the running IPython shell?"""
        while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "get_ipython":
                return True
            node = node.func if isinstance(node, ast.Call) else node.value
        return isinstance(node, ast.Name) and node.id in getattr(self, "shell", {"get_ipython"}) \
            and node.id != "get_ipython"

    def guarded(self, node):
        """The guarded thing an attribute's base refers to ('numpy', 'the IPython shell'...), or None."""
        if self._is_shell(node):
            return "the IPython shell"
        name = self.dotted(node)
        if name and name.split(".")[0] in GUARDED:
            return name
        return None


def _where(cell, node):
    return f"{cell.label}, line {getattr(node, 'lineno', '?')}"


def _bases(node, aliases):
    out = []
    for base in node.bases:
        name = aliases.dotted(base) or (base.id if isinstance(base, ast.Name) else None)
        if name:
            out.append(name)
    return out


def course_objects(course_cells):
    """name -> what the course's locked cells bind it to by an import or a def/class ('numpy', 'def ffn_w4')."""
    out = {}
    for cell in course_cells:
        tree = parse(cell.source) if cell.role == "instructor" else None
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    if alias.name != "*":
                        out[alias.asname or alias.name.split(".")[0]] = _imported(node, alias)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out[node.name] = f"def {node.name}"
    return out


def _imported(node, alias):
    if isinstance(node, ast.Import):
        return alias.name if alias.asname else alias.name.split(".")[0]
    return f"{'.' * node.level}{node.module or ''}.{alias.name}"


def _shadowing(cell, tree, course):
    """The course names a learner's cell rebinds (importing the very same module again is no rebinding)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [(alias.asname or alias.name.split(".")[0], _imported(node, alias)) for alias in node.names]
            out += [(name, node) for name, what in names if name in course and course[name] != what]
        else:
            stores, _ = bound_names(ast.Module(body=[node], type_ignores=[]))
            out += [(name, node) for name in sorted(stores & set(course))]
    return out


def static_findings(cells, course_cells=()):
    """Findings for every learner-written code cell (answers, and cells that are not the course's own)."""
    course_sources = {c.source for c in course_cells}
    course = course_objects(course_cells or [c for c in cells if c.role == "instructor"])
    trees = {c.index: parse(c.source) for c in cells}
    aliases = _Aliases(trees.values())
    findings = []
    for cell in cells:
        if cell.role not in ("answer", "learner") or (cell.role == "learner" and cell.source in course_sources):
            continue
        tree = trees[cell.index]
        if tree is None:
            continue
        refs = set()
        if cell.role == "answer" and cell.exercise:
            refs = {r.split(".")[-1] for r in reference_names(cell.exercise)}
        findings += _cell_findings(cell, tree, aliases, refs)
        exercise = cell.exercise if cell.role == "answer" else None
        findings += [Finding("shadow", exercise, f"rebinds the course's {name} ({course[name]}): the notebook run's "
                             "tests would use it", _where(cell, node)) for name, node in _shadowing(cell, tree, course)]
    unique = []
    for f in findings:
        if f not in unique:
            unique.append(f)
    return unique


def _cell_findings(cell, tree, aliases, refs):
    scan = _CellScan(cell, aliases, refs)
    for node in ast.walk(tree):
        look = _LOOKS.get(type(node))
        if look is not None:
            look(scan, node)
    return scan.found


class _CellScan:
    """What one learner cell's code does: each kind of node is read by one method (see _LOOKS)."""

    def __init__(self, cell, aliases, refs):
        self.cell, self.aliases, self.refs, self.found = cell, aliases, refs, []
        self.exercise = cell.exercise if cell.role == "answer" else None

    def add(self, kind, detail, node):
        self.found.append(Finding(kind, self.exercise, detail, _where(self.cell, node)))

    def patched(self, target, node):
        """An assignment to (or deletion of) something guarded: numpy's, builtins', the shell's..."""
        guarded = self.aliases.guarded
        if isinstance(target, ast.Attribute):
            if what := guarded(target.value):
                self.add("monkeypatch", f"changes {what}.{target.attr}", node)
        elif isinstance(target, ast.Subscript):
            base = target.value
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "vars" \
                    and base.args and guarded(base.args[0]):
                self.add("monkeypatch", f"changes vars({guarded(base.args[0])})", node)
            elif isinstance(base, ast.Attribute) and base.attr in ("__dict__", "modules") and guarded(base.value):
                self.add("monkeypatch", f"changes {guarded(base.value)}.{base.attr}", node)
            elif guarded(base):
                self.add("monkeypatch", f"changes an entry of {guarded(base)}", node)
        elif isinstance(target, ast.Name) and target.id == "__builtins__":
            self.add("monkeypatch", "replaces __builtins__", node)
        elif isinstance(target, ast.Tuple | ast.List):
            for elt in target.elts:
                self.patched(elt, node)

    def assignment(self, node):
        for target in node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]:
            self.patched(target, node)

    def call(self, node):
        _call_findings(node, self.aliases, self.add)

    def import_(self, node):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for module in modules:
            top = module.split(".")[0]
            if top in _REVIEW_MODULES:
                self.add("review", f"imports {module}: {_REVIEW_MODULES[top]}", node)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ffn_helpers":
            for alias in node.names:
                if alias.name in self.refs:
                    self.add("reference", f"imports the reference {node.module}.{alias.name}", node)
                elif self.refs and _private(f"{node.module}.{alias.name}"):
                    self.add("reference", f"imports ffn_helpers' private {node.module}.{alias.name}", node)

    def attribute(self, node):
        if isinstance(node.ctx, ast.Load) and self.refs:
            name = self.aliases.dotted(node)
            if name and name.startswith("ffn_helpers") and node.attr in self.refs:
                self.add("reference", f"uses the reference {name}", node)
            elif name and _private(name) and not _private(self.aliases.dotted(node.value) or ""):
                self.add("reference", f"reaches into ffn_helpers' private code ({name})", node)

    def name(self, node):
        if isinstance(node.ctx, ast.Load) and self.refs:
            name = self.aliases.modules.get(node.id, "")
            if name.startswith("ffn_helpers.") and name.split(".")[-1] in self.refs:
                self.add("reference", f"uses the reference {name} (imported as {node.id})", node)
            elif _private(name):
                self.add("reference", f"reaches into ffn_helpers' private code ({name}, imported as {node.id})", node)

    def class_def(self, node):
        if self.cell.role != "answer":
            return
        lies = sorted(b for b in _bases(node, self.aliases) if b in _LIE_BASES)
        dunders = sorted(n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name in _LIE_DUNDERS)
        if lies or dunders:
            what = ", ".join([f"subclasses {b}" for b in lies] + [f"defines {d}" for d in dunders])
            self.add("lying", f"class {node.name} {what}: a result that only pretends to be data", node)


def _private(dotted):
    """Does a dotted name reach ffn_helpers' private code (`ffn_helpers._fast`, `ffn_helpers.checks._fmt`)?"""
    parts = dotted.split(".")
    return parts[0] == "ffn_helpers" and any(p.startswith("_") and not p.startswith("__") for p in parts[1:])


_LOOKS = {ast.Assign: _CellScan.assignment, ast.AugAssign: _CellScan.assignment, ast.AnnAssign: _CellScan.assignment,
          ast.Delete: _CellScan.assignment, ast.Call: _CellScan.call, ast.Import: _CellScan.import_,
          ast.ImportFrom: _CellScan.import_, ast.Attribute: _CellScan.attribute, ast.Name: _CellScan.name,
          ast.ClassDef: _CellScan.class_def}


def _call_findings(node, aliases, add):
    func = node.func
    name = aliases.dotted(func) or (func.id if isinstance(func, ast.Name) else None)
    if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
        what = aliases.guarded(node.args[0])
        if what:
            add("monkeypatch", f"{func.id}() on {what}", node)
    if isinstance(func, ast.Attribute) and aliases._is_shell(func.value):
        if func.attr not in _SHELL_CALLS_ALLOWED:
            add("monkeypatch", f"calls get_ipython().{func.attr}(): changes the running shell", node)
        elif func.attr in ("run_line_magic", "run_cell_magic") and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value not in _MAGICS_ALLOWED:
            add("review", f"uses the %{node.args[0].value} magic", node)
    if name in _REVIEW_CALLS:
        add("review", _REVIEW_CALLS[name], node)
    if name and name.split(".")[0] == "gc" and name.split(".")[-1] in ("get_referents", "get_referrers", "get_objects"):
        add("monkeypatch", f"{name}(): reaches objects it was not given", node)
    if name and name.split(".")[0] == "ctypes":
        add("monkeypatch", f"{name}(): reaches into the interpreter's memory", node)


def _same_code(a, b):
    def norm(text):
        return "\n".join(line.rstrip() for line in text.strip().splitlines())

    return norm(a) == norm(b)


def structure_findings(nb, model):
    """Compare a submitted notebook with the released one; fix what nbgrader would stumble on.

    `model`: the notebook's cells in the gradebook (course.NotebookModel). Returns
    (findings, notebook): duplicated graded cells keep only their last copy (as
    nbgrader's DeduplicateIds does, without leaving the empty metadata that stops
    a whole `nbgrader autograde` batch), cells with unknown grade ids lose their
    nbgrader metadata. Deleted and edited course cells are put back by nbgrader
    (OverwriteCells, add_missing_cells); here they are only reported.
    """
    findings = []
    exercise_of = model.exercise_of

    def add(kind, name, detail):
        exercise = exercise_of.get(name)
        if kind == "tamper" and exercise is None:
            kind = "review"  # a course cell outside any exercise (setup, a demo): restored, shown
        findings.append(Finding(kind, exercise, detail, f"cell {name}"))

    seen = _graded_cells(nb, {c.name for c in model.cells}, findings)
    for name, positions in seen.items():
        if len(positions) > 1:
            add("tamper", name, f"{name} appears {len(positions)} times (duplicated cell); only the last copy counts")
            for i in positions[:-1]:
                nb.cells[i].metadata.pop("nbgrader", None)
    for source_cell in model.cells:
        if source_cell.name not in seen:
            if source_cell.grade or source_cell.locked:
                what = "test cell" if source_cell.grade else "course cell"
                add("tamper", source_cell.name, f"the {what} {source_cell.name} was deleted (nbgrader puts it back)")
            continue
        if detail := _changed(source_cell, nb.cells[seen[source_cell.name][-1]]):
            add("tamper", source_cell.name, detail)
    return findings, nb


def _graded_cells(nb, known, findings):
    """grade_id -> the positions of the cells that carry it; metadata nbgrader would stumble on is dropped."""
    seen = {}
    for i, cell in enumerate(nb.cells):
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None:
            continue
        if not isinstance(meta, dict) or not meta:  # empty metadata stops a whole nbgrader batch
            cell.metadata.pop("nbgrader", None)
            continue
        name = meta.get("grade_id")
        if not name or name not in known:
            cell.metadata.pop("nbgrader", None)
            if name or meta.get("grade") or meta.get("solution") or meta.get("locked"):
                findings.append(Finding("tamper", None, f"a cell claims nbgrader metadata for {name or 'no id'!r}, "
                                        "which the assignment does not have", f"cell {i}"))
            continue
        seen.setdefault(name, []).append(i)
    return seen


def _changed(source_cell, cell):
    """What the learner changed in a course cell ("" for nothing); edited metadata is put back as released."""
    meta = cell.metadata.nbgrader
    changed = [key for key, want in (("grade", source_cell.grade), ("solution", source_cell.solution),
                                     ("locked", source_cell.locked), ("task", source_cell.task))
               if bool(meta.get(key, False)) != bool(want)]
    if source_cell.grade and float(meta.get("points", 0) or 0) != float(source_cell.points):
        changed.append("points")
    if cell.get("cell_type") != source_cell.cell_type:
        changed.append("cell type")
    if changed:
        # Put the released metadata back: nbgrader's OverwriteCells restores the source and the lock,
        # but a test cell turned into an answer cell would leave it with inconsistent checksums.
        meta.update(grade=source_cell.grade, solution=source_cell.solution, locked=source_cell.locked,
                    task=source_cell.task)
        if source_cell.grade:
            meta["points"] = source_cell.points
        else:
            meta.pop("points", None)
        return f"the metadata of {source_cell.name} was edited ({', '.join(changed)})"
    if source_cell.locked:
        released = course.strip_hidden_tests(source_cell.source) if source_cell.grade else source_cell.source
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else text
        if not (_same_code(text, released) or _same_code(text, source_cell.source)):  # as released, or whole
            return f"the locked cell {source_cell.name} was edited (nbgrader restores it)"
    return ""
