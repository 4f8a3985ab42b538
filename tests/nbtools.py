"""Helpers for the course tests: read nbgrader metadata, execute notebooks, grade submissions with nbgrader.

The three forms of a notebook (see autograder/AUTHORING.md):
`source(aid)` the authored notebook (solutions and hidden tests), `learner(aid)` the
committed `notebooks/<aid>.ipynb`, `solution(aid)` the committed `solutions/<aid>.ipynb`.
They are read once per process and shared: copy before changing one (`with_answers` does).
"""

import ast
import contextlib
import copy
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from traitlets.config import Config

import autograder
from autograder.authoring import build
from autograder.cells import role_of

REPO_ROOT = autograder.REPO_ROOT
COURSE_ROOT = autograder.COURSE_ROOT
NOTEBOOKS_DIR = autograder.NOTEBOOKS_DIR
SOLUTIONS_DIR = autograder.SOLUTIONS_DIR

ORIENTATION = "00_start_here"  # the ungraded tour: one demonstration exercise, at most 1 point
CAPSTONE = "09_ffn_module"  # the capstone may carry more points and take longer

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


# ---------------------------------------------------------------- the three forms


@functools.cache
def source(aid):
    """The authored notebook, read from autograder/course/source/<aid>/<aid>.py as the build reads it."""
    return build.read_source(aid)


@functools.cache
def learner(aid):
    return nbformat.read(NOTEBOOKS_DIR / f"{aid}.ipynb", as_version=4)


@functools.cache
def solution(aid):
    return nbformat.read(SOLUTIONS_DIR / f"{aid}.ipynb", as_version=4)


# ---------------------------------------------------------------- nbgrader cell metadata


def meta(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell):
    return meta(cell).get("grade_id")


def is_test(cell):
    """An autograded test cell (autograder.cells.role_of, the grader's one rule)."""
    return role_of(cell) == "test"


def is_answer(cell):
    """An exercise's answer cell: the learner writes it (autograder.cells.role_of)."""
    return role_of(cell) == "answer"


def points(cell):
    return float(meta(cell).get("points", 0))


def cells_by_id(nb):
    return {grade_id(c): c for c in nb.cells if grade_id(c)}


def test_ids(nb):
    return [grade_id(c) for c in nb.cells if is_test(c)]


def answer_ids(nb):
    return [grade_id(c) for c in nb.cells if is_answer(c)]


def exercise_of(test_id, exercises):
    """(exercise, aspect, hidden) for a test cell id `test_<fn>[_<aspect>][_hidden]`, or None.

    The exercise is the grader's own rule (autograder.exercise_of_test): the longest exercise
    name that fits wins (`test_relu_grad` is relu_grad's), aspects as in `test_ffn_module_backward_layer2`.
    """
    fn = autograder.exercise_of_test(test_id, exercises) if test_id.startswith("test_") and exercises else None
    if fn is None:
        return None
    core = test_id.removeprefix("test_").removesuffix("_hidden")
    return fn, core[len(fn):], test_id.endswith("_hidden")


def graded_assignments():
    """The assignments with at least one graded test cell (the orientation notebook may have none)."""
    return [aid for aid in autograder.assignments() if test_ids(source(aid))]


def _by_markers(text, begin, end):
    """(lines strictly between `begin` and `end` marker lines, the other lines), by nbgrader's rule:
    a marker is any line containing it, and belongs to neither."""
    inside_lines, outside_lines, inside = [], [], False
    for line in text.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        else:
            (inside_lines if inside else outside_lines).append(line)
    return inside_lines, outside_lines


def between_markers(text, begin, end):
    """The lines strictly between `begin` and `end` marker lines."""
    return _by_markers(text, begin, end)[0]


def outside_markers(text, begin, end):
    """The lines of `text` not between the markers (and not the markers themselves)."""
    return _by_markers(text, begin, end)[1]


def secret_lines(aid, min_chars=21):
    """The hidden tests' lines of `aid` that the released notebook does not show (a feedback page or an
    attacker holding one has seen what the hidden tests keep secret), each of at least `min_chars`."""
    released = {line.strip() for cell in learner(aid).cells for line in cell.source.splitlines()}
    lines = [line.strip() for cell in source(aid).cells
             for line in between_markers(cell.source, "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")]
    return [line for line in lines if len(line) >= min_chars and line not in released]


def python_source(cell_source):
    """A cell's source as plain Python (IPython magics such as %timeit turned into calls)."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(cell_source)


def names_used(cell_source):
    """The bare names (not attributes) a code cell loads, calls or defines."""
    tree = ast.parse(python_source(cell_source))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
    return found


def _is_attempt(node):
    """A `with yours.attempt(...)` block: a demonstration that runs the learner's code (ffn_helpers.yours)."""
    return isinstance(node, ast.With) and any(
        isinstance(item.context_expr, ast.Call) and isinstance(item.context_expr.func, ast.Attribute)
        and item.context_expr.func.attr == "attempt" and isinstance(item.context_expr.func.value, ast.Name)
        and item.context_expr.func.value.id == "yours" for item in node.items)


def names_used_outside_attempts(cell_source):
    """`names_used`, leaving out the bodies of `with yours.attempt(...)` blocks."""
    found, pending = set(), [ast.parse(python_source(cell_source))]
    while pending:
        node = pending.pop()
        if _is_attempt(node):
            continue
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        pending.extend(ast.iter_child_nodes(node))
    return found


def attempts(cell_source):
    """How many `with yours.attempt(...)` blocks a code cell holds."""
    return sum(_is_attempt(node) for node in ast.walk(ast.parse(python_source(cell_source))))


def top_level_definitions(cell_source):
    tree = ast.parse(python_source(cell_source))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


# ---------------------------------------------------------------- outputs


def output_text(cell):
    """Everything a cell showed, as text: streams, errors (traceback without colour codes), plain-text results."""
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
            parts.append(ANSI.sub("", "\n".join(out.traceback)))
        else:
            parts.append(str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def errors(cell):
    return [o for o in cell.get("outputs", []) if o.output_type == "error"]


def stderr(cell):
    return "".join(o.text for o in cell.get("outputs", []) if o.output_type == "stream" and o.name == "stderr")


def images(cell):
    """How many images a cell shows: outputs with an image/png, or an HTML <img> of one (a course figure)."""
    return sum("image/png" in o.get("data", {}) or str(o.get("data", {}).get("text/html", "")).startswith("<img ")
               for o in cell.get("outputs", []))


def describe(cell, index):
    """A short name for a cell in failure messages."""
    gid = grade_id(cell)
    first = next((line for line in cell.source.splitlines() if line.strip()), "")
    return f"cell {index}" + (f" ({gid})" if gid else "") + f": {first[:70]!r}"


# ---------------------------------------------------------------- executing notebooks

# Run in the kernel before the notebook: count the matplotlib Figures each cell creates,
# so a test can check that every figure made is also shown (an image/png output).
_TRACK_FIGURES = """
import matplotlib.figure as _ffn_mf
_ffn_cell, _ffn_figures = [0], {}
def _ffn_pre_run_cell(info):
    if info.store_history:
        _ffn_cell[0] += 1
def _ffn_counting_init(self, *args, _ffn_init=_ffn_mf.Figure.__init__, **kwargs):
    _ffn_init(self, *args, **kwargs)
    _ffn_figures[_ffn_cell[0]] = _ffn_figures.get(_ffn_cell[0], 0) + 1
_ffn_mf.Figure.__init__ = _ffn_counting_init
get_ipython().events.register("pre_run_cell", _ffn_pre_run_cell)
"""
_REPORT_FIGURES = "import json as _ffn_json; print(_ffn_json.dumps(_ffn_figures))"


@dataclass
class Execution:
    nb: nbformat.NotebookNode  # the executed notebook, outputs included
    seconds: float  # wall time, kernel start-up included
    figures: dict = field(default_factory=dict)  # cell index -> matplotlib Figures the cell created
    stopped: str | None = None  # run_all: why Run All stopped before the last cell (None: it did not)


def execute(path, *, cwd=None, track_figures=False, timeout=300, run_all=False, env=None):
    """Execute a notebook top to bottom in a fresh python3 kernel (errors allowed: they stay in the outputs).

    run_all: stop at the first error, as Run All and `nbconvert --execute` do, except in a cell tagged
    `raises-exception`; `stopped` says where it stopped. env: the kernel's environment (default: this process's).
    """
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    with _kernel_sockets() as config:
        client = NotebookClient(nb, kernel_name="python3", timeout=timeout, allow_errors=not run_all,
                                resources={"metadata": {"path": str(Path(cwd or path.parent))}}, config=config)
        with _signal_handling_kept():
            return _run(client, nb, track_figures=track_figures, run_all=run_all, env=env)


@contextlib.contextmanager
def _signal_handling_kept():
    """Put SIGINT and SIGTERM back as they were once nbclient is done with them.

    nbclient handles both on its event loop while a kernel runs (NotebookClient.async_setup_kernel), and asyncio's
    remove_signal_handler then sets SIGINT to Python's own handler and SIGTERM to the default, whatever they were:
    in a suite started in the background by a script, where SIGINT starts ignored, every process a later test
    started would no longer inherit that (tests/inherited_signals.py)."""
    if threading.current_thread() is not threading.main_thread():  # there nbclient leaves signals alone
        yield
        return
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            if handler is not None:  # None: set outside Python, which cannot be put back
                signal.signal(sig, handler)


@contextlib.contextmanager
def _kernel_sockets():
    """A configuration whose kernels talk over Unix sockets in a folder of their own.

    With ports of 127.0.0.1, another test's kernel can take a port between jupyter_client choosing it and this
    kernel binding it: "Address already in use", and the kernel dies before replying.
    """
    folder = tempfile.mkdtemp(prefix="nbk-")
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = os.path.join(folder, "k")
    try:
        yield config
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(client, nb, *, track_figures, run_all, env):
    kernel = {} if env is None else {"env": env}
    start = time.perf_counter()
    if run_all:
        try:
            client.execute(**kernel)
        except CellExecutionError as stop:
            return Execution(nb, time.perf_counter() - start, stopped=str(stop)[:3000])
        return Execution(nb, time.perf_counter() - start)
    if not track_figures:
        client.execute(**kernel)
        return Execution(nb, time.perf_counter() - start)
    # The tracker runs as extra cells (outside the history), removed again afterwards.
    nb.cells.insert(0, nbformat.v4.new_code_cell(_TRACK_FIGURES))
    nb.cells.append(nbformat.v4.new_code_cell(_REPORT_FIGURES))
    sent = []  # notebook cell indices, in the order the kernel ran them
    with client.setup_kernel(**kernel):
        client.wait_for_reply(client.kc.kernel_info())
        last = len(nb.cells) - 1
        for i, cell in enumerate(nb.cells):
            tracker = i in (0, last)
            if not tracker and cell.cell_type == "code" and cell.source.strip():
                sent.append(i - 1)
            client.execute_cell(cell, i, store_history=not tracker)
    seconds = time.perf_counter() - start
    tracker_cells = (nb.cells.pop(0), nb.cells.pop())
    if errors(tracker_cells[0]) or errors(tracker_cells[1]) or not tracker_cells[1].outputs:
        raise RuntimeError("the figure tracker failed in the kernel:\n" + "\n".join(map(output_text, tracker_cells)))
    counts = json.loads(tracker_cells[1].outputs[0].text)
    figures = {sent[int(k) - 1]: n for k, n in counts.items() if int(k) >= 1}
    return Execution(nb, seconds, figures)


# ---------------------------------------------------------------- nbgrader


def nbgrader_env():
    """The environment for nbgrader: this interpreter's bin/ first on PATH (a new gradebook runs `alembic`)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@contextlib.contextmanager
def kernel_socket_flags():
    """nbgrader's command-line flags for _kernel_sockets' configuration: its kernels on Unix sockets."""
    with _kernel_sockets() as config:
        yield [f"--KernelManager.transport={config.KernelManager.transport}",
               f"--KernelManager.ip={config.KernelManager.ip}"]


def nbgrader(*args, cwd, timeout=1800):
    """Run the nbgrader command line, a command that runs kernels with them on Unix sockets (kernel_socket_flags);
    return the CompletedProcess (stdout and stderr as text)."""
    with kernel_socket_flags() as flags:
        flags = flags if args[0] in ("autograde", "validate") else []
        return subprocess.run([sys.executable, "-m", "nbgrader", *map(str, args), *flags], cwd=cwd,
                              env=nbgrader_env(), capture_output=True, text=True, timeout=timeout)


def scratch_course(root, aid):
    """A copy of the nbgrader course under `root` holding the source of `aid`; return its path.

    The course's nbgrader_config.py puts the course root (and its gradebook) next to itself.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(COURSE_ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    target = root / "source" / aid / f"{aid}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(nbformat.writes(source(aid)) + "\n", encoding="utf-8")
    return root


def with_answers(nb, answers):
    """A copy of `nb` whose answer cells named in `answers` (grade_id -> source) hold the given sources."""
    nb = copy.deepcopy(nb)
    cells = {grade_id(c): c for c in nb.cells if is_answer(c)}
    unknown = sorted(set(answers) - set(cells))
    if unknown:
        raise KeyError(f"no answer cell with grade_id {unknown}; the answer cells are {sorted(cells)}")
    for gid, text in answers.items():
        cells[gid].source = text
    return nb


def completed_learner(aid):
    """The learner notebook with every answer cell filled in from the worked solution."""
    sol = cells_by_id(solution(aid))
    return with_answers(learner(aid), {gid: sol[gid].source for gid in answer_ids(learner(aid))})


class _NoShell:
    """`get_ipython()` in a notebook run by `run_in_process`: every call on it does nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def cell_index(aid, gid):
    """The index of the cell `gid` (a grade_id) among the solution notebook's cells."""
    found = [i for i, cell in enumerate(solution(aid).cells) if grade_id(cell) == gid]
    if len(found) != 1:
        raise KeyError(f"{aid} has {len(found)} cells with grade_id {gid!r}, expected one")
    return found[0]


def run_in_process(aid, answers, *, cells=None, namespace=None):
    """The solution notebook's code `cells` (a slice) run in this process, in `namespace` (a fresh one if None),
    with `answers` (grade_id -> source) in its answer cells: grade_id -> the exception, for each graded cell that
    raised. By default the cells up to the last graded one: a cell's outcome is decided before any cell below it
    runs, so the free cells after the last test (13's capacity sweep: 4.5 s) could change nothing returned.

    Fast (no kernel, no nbgrader) and the very cells the grader runs, hidden tests included; magics and shell
    lines are left out, and the figures go to Agg.
    """
    import contextlib
    import io
    import warnings

    import matplotlib

    matplotlib.use("Agg")
    unknown = sorted(set(answers) - set(answer_ids(solution(aid))))
    if unknown:
        raise KeyError(f"no answer cell with grade_id {unknown} in {aid}")
    if namespace is None:
        namespace = {"__name__": "__main__", "get_ipython": _NoShell}
    if cells is None:
        graded = [i for i, cell in enumerate(solution(aid).cells) if grade_id(cell)]
        cells = slice(0, graded[-1] + 1 if graded else None)
    raised = {}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cell in solution(aid).cells[cells]:
            if cell.cell_type != "code":
                continue
            gid = grade_id(cell)
            text = answers.get(gid, cell.source)
            text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("%", "!")))
            try:
                exec(compile(text, f"<{gid}>", "exec"), namespace)
            except Exception as exc:
                if gid:
                    raised[gid] = exc
    return raised


@dataclass
class GradedBatch:
    """The outcome of one `nbgrader autograde` run: scores per student and test cell."""

    course: Path
    aid: str
    scores: dict  # student -> {test cell grade_id: (score, max_score)}
    log: str

    def autograded(self, student):
        """The autograded notebook of `student`, with the outputs of the grading run."""
        return nbformat.read(self.course / "autograded" / student / self.aid / f"{self.aid}.ipynb", as_version=4)


def autograde(course, aid, submissions):
    """Submit each notebook of `submissions` (student id -> notebook), autograde them in one batch, read scores."""
    from nbgrader.api import Gradebook, MissingEntry

    for student, nb in submissions.items():
        path = Path(course) / "submitted" / student / aid / f"{aid}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    result = nbgrader("autograde", aid, cwd=course)
    log = f"$ nbgrader autograde {aid} (exit {result.returncode})\n{result.stdout}\n{result.stderr}"
    scores = {}
    with Gradebook(f"sqlite:///{Path(course) / 'gradebook.db'}") as gb:
        for student in submissions:
            try:
                sub = gb.find_submission_notebook(aid, aid, student)
            except MissingEntry:
                continue
            scores[student] = {g.name: (g.score, g.max_score) for g in sub.grades}
    return GradedBatch(Path(course), aid, scores, log)
