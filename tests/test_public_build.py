"""No answer-computing code runs beside the learner's (grading/gate_beside/public.py): the clean re-run's third gate.

The learner's process of the clean re-run imports a public build of ffn_helpers whose
functions are stubs; the grader computes them, and refuses each one the exercise under
test may not call (tests/test_allow_list.py walks them all). Each attack here took the
reference out of the learner's process some way the old tripwires missed, and scored full
marks; now it earns 0 on its exercise, whatever path it took, and the honest exercise
beside it keeps its points.
"""

import ast
import importlib
import importlib.util
import os
import sys
import threading
import time

import nbformat
import numpy as np
import pytest

from autograder import cells
from autograder.grading.gate_beside import public, rerun
from autograder.grading.gate_in import sandbox, unsandboxed
from autograder.grading.scoring import integrity

SETUP = ("import numpy as np\nimport ffn_helpers as ref\nfrom ffn_helpers import checks, norm\n"
         "from ffn_helpers import module as reference")
X = "x = np.linspace(-1.0, 1.0, 12).reshape(4, 3)\nrng = np.random.default_rng(0)\n"
TESTS = {
    "ffn_forward": X + "W1, b1, W2, b2 = rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(5, 3)), "
                       "rng.normal(size=3)\n"
                       "_ = checks.check(ffn_forward, (x, W1, b1, W2, b2), ref.ffn_forward(x, W1, b1, W2, b2))",
    "linear_torch": X + "w, b = rng.normal(size=(2, 3)), rng.normal(size=2)\n"
                        "_ = checks.check(linear_torch, (x, w, b), x @ w.T + b)",
    "FeedForwardNetwork": X + "model = FeedForwardNetwork(3, 4, seed=0)\n"
                              "ref_model = reference.FeedForwardNetwork(3, 4, seed=0)\n"
                              "checks.assert_close(checks.call(model, x), ref_model(x))",
    "post_ln_block": X + "with checks.substitute(layer_norm=norm.layer_norm):\n"
                         "    checks.check(post_ln_block, (x, lambda v: 2 * v), norm.post_ln(x, lambda v: 2 * v))",
}
HONEST = {
    "ffn_forward": "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1 + b1, 0) @ W2 + b2\n",
    "linear_torch": "def linear_torch(x, weight, bias):\n    return x @ weight.T + bias\n",
    "post_ln_block": "def post_ln_block(x, sublayer):\n    return layer_norm(x + sublayer(x))\n",
}

ATTACKS = {
    # The tripwire's wrapper kept the real function in its closure; follow closures to the end.
    "closure": ("ffn_forward", "import ffn_helpers\n"
                               "_f = ffn_helpers.ffn_forward\n"
                               "while getattr(_f, '__closure__', None):\n"
                               "    inner = [c.cell_contents for c in _f.__closure__ if callable(c.cell_contents)]\n"
                               "    if not inner:\n        break\n"
                               "    _f = inner[0]\n\n"
                               "def ffn_forward(x, W1, b1, W2, b2):\n    return _f(x, W1, b1, W2, b2)\n"),
    # ffn_helpers' private FFN kernel, loaded by a name built from strings.
    "private-kernel": ("ffn_forward", "import importlib\n\n"
                                      "def ffn_forward(x, W1, b1, W2, b2):\n"
                                      "    kernel = importlib.import_module('ffn_helpers._f' + 'ast')\n"
                                      "    return kernel.ffn_rows_in_threads(x, W1, b1, W2, b2, 'relu')\n"),
    # The catalogue's ffn_variant (the FFN with its defaults), reached by strings through a module that imports it.
    "mistakes": ("ffn_forward", "import importlib\n\n"
                                "def ffn_forward(x, W1, b1, W2, b2):\n"
                                "    book = importlib.import_module('ffn_helpers.mis' + 'takes.mixture_of_experts')\n"
                                "    return getattr(book, 'ffn_' + 'variant')(x, W1, b1, W2, b2)\n"),
    # 09's shape: the test receives the learner's object and calls it; the method calls the reference class.
    "object": ("FeedForwardNetwork", "import importlib\n\n"
                                     "class FeedForwardNetwork:\n"
                                     "    def __init__(self, d_model, d_ff, seed=None):\n"
                                     "        self.shape = (d_model, d_ff, seed)\n"
                                     "    def __call__(self, x):\n"
                                     "        d_model, d_ff, seed = self.shape\n"
                                     "        m = importlib.import_module('ffn_helpers.mod' + 'ule')\n"
                                     "        try:\n"
                                     "            cls = getattr(m, 'FeedForward' + 'Network')\n"
                                     "            return cls(d_model, d_ff, seed=seed)(x)\n"
                                     "        except Exception:\n"
                                     "            return np.zeros((len(x), d_model))  # swallow the refusal\n"),
}


def _notebook(answers, may_call=None):
    """Setup, then per exercise its answer cell (with the course functions `may_call` lists for it) and its test
    cell (1 point)."""
    nb = nbformat.v4.new_notebook()
    setup = nbformat.v4.new_code_cell(SETUP)
    setup.metadata["nbgrader"] = {"grade_id": "setup", "locked": True, "grade": False, "solution": False}
    nb.cells.append(setup)
    for exercise, source in answers.items():
        answer = nbformat.v4.new_code_cell(source)
        answer.metadata["nbgrader"] = {"grade_id": exercise, "solution": True, "grade": False, "locked": False}
        if exercise in (may_call or {}):
            answer.metadata["may_call"] = may_call[exercise]
        test = nbformat.v4.new_code_cell(TESTS[exercise])
        test.metadata["nbgrader"] = {"grade_id": f"test_{exercise}", "grade": True, "locked": True, "points": 1,
                                     "solution": False}
        nb.cells += [answer, test]
    return cells.code_cells(nb)


def _clean_run(tmp_path, answers, isolate=True, timeout=30.0, may_call=None):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    work.chmod(0o755)
    box = sandbox.Sandbox(readonly=(str(work),), cwd=str(work), uid=sandbox.slot_uid(9) if isolate else None,
                          limits=sandbox.Limits(memory=sandbox.parse_size("1G")), isolate=isolate)
    code = _notebook(answers, may_call)
    references = {c.exercise: integrity.reference_names(c.exercise) for c in code if c.role == "answer"}
    return rerun.CleanRun(code, box, timeout, references, code).run()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_on_the_reference_earns_nothing_and_the_rest_keeps_its_points(tmp_path, attack):
    exercise, source = ATTACKS[attack]
    honest = "linear_torch" if exercise != "linear_torch" else "ffn_forward"
    result = _clean_run(tmp_path, {exercise: source, honest: HONEST[honest]})
    tests = {gid: (t.points, t.message) for gid, t in result.tests.items()}
    assert tests[f"test_{exercise}"][0] == 0, tests
    assert tests[f"test_{honest}"] == (1.0, ""), tests
    assert not any(t.incomplete for t in result.tests.values()), tests


@pytest.mark.parametrize("isolate", [True, False], ids=["sandbox", "unsafe"])
def test_a_refused_call_is_reported_and_fails_as_unimplemented(tmp_path, isolate):
    """Without a sandbox (--unsafe) the public build comes first on the learner's process's path: same verdict."""
    result = _clean_run(tmp_path, {"ffn_forward": ATTACKS["closure"][1]}, isolate)
    test = result.tests["test_ffn_forward"]
    assert (test.points, test.incomplete) == (0.0, False)
    assert test.message.startswith("NotImplementedError: ffn_forward uses the course's own ffn_forward"), test.message
    assert [(n.exercise, n.kind, n.detail) for n in result.notes] == [
        ("ffn_forward", "reference", "ffn_helpers.ffn.ffn_forward")]


def test_calls_to_the_grader_in_a_loop_end_at_the_tests_deadline(tmp_path):
    """Each request is answered at once, so only the grader's own clock can stop a learner that keeps asking (here
    a function its answer may call)."""
    loop = ("import ffn_helpers\n\ndef ffn_forward(x, W1, b1, W2, b2):\n"
            "    while True:\n        ffn_helpers.relu(x)\n")
    started = time.monotonic()
    result = _clean_run(tmp_path, {"ffn_forward": loop, "linear_torch": HONEST["linear_torch"]}, timeout=3.0,
                        may_call={"ffn_forward": ["relu"]})
    test = result.tests["test_ffn_forward"]
    assert (test.points, test.timed_out) == (0.0, True), test
    assert result.tests["test_linear_torch"].points == 1.0
    assert time.monotonic() - started < 60


def test_an_interrupt_that_comes_after_its_cell_ended_stops_nothing_after_it(tmp_path, monkeypatch):
    """The answer overruns its 1 s, then ends by itself (as a loop does when the grader stops serving its calls)
    before the interrupt arrives, here 0.6 s late. The next cell must run whole, not take the interrupt."""
    slow = "import time\n\ndef ffn_forward(x, W1, b1, W2, b2):\n    time.sleep(1.4)\n    return x\n"
    busy = "import time\ntime.sleep(0.5)\n\n" + HONEST["linear_torch"]
    send = unsandboxed.interrupt

    def late(proc):
        timer = threading.Timer(0.6, send, (proc,))
        timer.start()
        late.timers.append(timer)

    late.timers = []
    monkeypatch.setattr(unsandboxed, "interrupt", late)
    result = _clean_run(tmp_path, {"ffn_forward": slow, "linear_torch": busy}, timeout=1.0)
    for timer in late.timers:
        timer.join()
    assert len(late.timers) == 1
    assert (result.tests["test_ffn_forward"].points, result.tests["test_ffn_forward"].timed_out) == (0.0, True)
    assert result.cell_errors == [] and result.tests["test_linear_torch"].points == 1.0, result


def test_a_listed_function_and_a_substitution_run_in_the_grader(tmp_path):
    """An answer may call a course function its cell lists (relu in ffn_forward, `may_call`); 03's block calls the
    course's layer_norm under checks.substitute, and the grader's sublayer crosses to it and back as a handle."""
    ffn = ("import ffn_helpers\n\n"
           "def ffn_forward(x, W1, b1, W2, b2):\n    return ffn_helpers.relu(x @ W1 + b1) @ W2 + b2\n")
    result = _clean_run(tmp_path, {"ffn_forward": ffn, "post_ln_block": HONEST["post_ln_block"]},
                        may_call={"ffn_forward": ["relu"]})
    assert {gid: (t.points, t.message) for gid, t in result.tests.items()} == {
        "test_ffn_forward": (1.0, ""), "test_post_ln_block": (1.0, "")}
    assert result.notes == [] and result.cell_errors == []


def test_the_learner_process_holds_no_answer_code(tmp_path):
    """What the learner's code can import or read of ffn_helpers there: stubs, the checks and the worked examples."""
    probe = ("import importlib, os, ffn_helpers\n"
             "def probe():\n"
             "    folder = os.path.dirname(ffn_helpers.__file__)\n"
             "    names = sorted(os.path.relpath(os.path.join(r, f), folder)\n"
             "                   for r, _, fs in os.walk(folder) for f in fs)\n"
             "    text = ''.join(open(os.path.join(folder, n)).read() for n in names if n.endswith('.py'))\n"
             "    found = []\n"
             "    for name in ('ffn_helpers._fast', 'ffn_helpers._arrays'):\n"
             "        try:\n            importlib.import_module(name)\n            found.append(name)\n"
             "        except ImportError:\n            pass\n"
             "    return [names, found, 'np.maximum' in text or 'def ffn_variant' in text]\n"
             "def linear_torch(x, weight, bias):\n    return x @ weight.T + bias\n")
    code = _notebook({"linear_torch": probe})
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o755)
    box = sandbox.Sandbox(readonly=(str(work),), cwd=str(work), uid=sandbox.slot_uid(9))
    run = rerun.CleanRun(code, box, 30.0, {}, code)
    run._start()
    try:
        assert [run._exec(c) for c in code if c.role in ("instructor", "answer")] == ["", ""]
        names, imported, answer_code = run.student.peer.request({"op": "lookup", "name": "probe"})()
    finally:
        run.student.stop()
    sources = sorted(public._layout()[0])
    # and the bytecode of each (sandbox.precompile), which the learner's process reads instead of compiling it
    compiled = [os.path.relpath(importlib.util.cache_from_source(os.path.join("/b", n)), "/b") for n in sources]
    assert names == sorted(sources + compiled), names
    assert imported == [] and answer_code is False


# ---------------------------------------------------------------- the build itself


def test_the_build_has_every_public_module_and_no_private_one():
    files, stubs = public._layout()
    assert "_fast.py" not in files and "_arrays.py" not in files and "_judge.py" in files
    for name in public.modules():
        module = importlib.import_module(name)
        relative = "/".join(name.split(".")[1:] + ["__init__.py"] if hasattr(module, "__path__")
                            else name.split(".")[1:]) + ("" if hasattr(module, "__path__") else ".py")
        assert relative.lstrip("/") in files, name
    assert {"ffn_helpers.ffn.ffn_forward", "ffn_helpers.mistakes.forward_pass.ffn_variant",
            "ffn_helpers.module.FeedForwardNetwork", "ffn_helpers.norm.layer_norm"} <= stubs


def _relative(name):
    """Where the build writes module `name`: a package's __init__.py, a module's own file."""
    module = importlib.import_module(name)
    parts = name.split(".")[1:]
    return "/".join(parts + ["__init__.py"]) if hasattr(module, "__path__") else "/".join(parts) + ".py"


def _imported(relative, node):
    """The dotted module an `from ... import` in the build's file `relative` names, its relative form resolved."""
    if node.level == 0:
        return node.module or ""
    package = ["ffn_helpers", *relative.split("/")[:-1]]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def test_only_the_public_modules_hold_code_and_none_computes_an_answer():
    """Stub modules define nothing (assignments and imports only); the copied ones import nothing of ffn_helpers
    but each other, and define no function that answers an exercise."""
    files, _ = public._layout()
    copied = {_relative(name) for name in public.copied()}
    assert {"checks.py", "_checks/__init__.py", "_checks/hidden.py", "examples.py"} <= copied
    exercises = set(integrity.EXTRA_REFERENCES) | {n for ex in integrity.EXTRA_REFERENCES.values() for n in ex}
    for relative, text in files.items():
        tree = ast.parse(text)
        if relative == "_judge.py":
            continue
        if relative in copied:
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    assert _imported(relative, node) in public.copied() or not (
                        _imported(relative, node).startswith("ffn_helpers")), (relative, ast.unparse(node))
                if isinstance(node, ast.Import):
                    assert not any(a.name.startswith("ffn_helpers") for a in node.names), relative
            defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
            assert not defined & exercises, relative
            continue
        kinds = {type(node).__name__ for node in tree.body}
        assert kinds <= {"Expr", "ImportFrom", "Assign"}, (relative, kinds)
        assert not any(isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Lambda) for n in ast.walk(tree)), relative
    assert not set(public.copied()) & set(integrity.REFERENCE_MODULES)


def test_the_grader_computes_only_stubbed_names():
    for name in ("ffn_helpers.checks.substitute", "ffn_helpers._fast.ffn_rows_in_threads", "os.system",
                 "ffn_helpers.ffn.np", "ffn_helpers.checks.check"):
        with pytest.raises(LookupError):
            public.resolve(name)
    from ffn_helpers import ffn

    assert public.resolve("ffn_helpers.ffn.ffn_forward") is ffn.ffn_forward


def test_a_stub_without_a_grader_says_so(tmp_path):
    folder = public.write(tmp_path)
    sys.path.insert(0, str(tmp_path))
    saved = {k: v for k, v in sys.modules.items() if k == "ffn_helpers" or k.startswith("ffn_helpers.")}
    try:
        for k in saved:
            del sys.modules[k]
        built = importlib.import_module("ffn_helpers")
        assert built.__file__ == str(folder / "__init__.py")
        with pytest.raises(RuntimeError, match="computed by the grader"):
            built.ffn_forward(np.zeros((1, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros((2, 2)), np.zeros(2))
        assert built.ACTIVATIONS["relu"] is built.relu and built.examples.W_2 is not None
    finally:
        sys.path.remove(str(tmp_path))
        for k in [k for k in sys.modules if k == "ffn_helpers" or k.startswith("ffn_helpers.")]:
            del sys.modules[k]
        sys.modules.update(saved)
