"""The demonstrations that run the learner's own code (ffn_helpers.yours) really run it.

09's and 13's gradient check compares the learner's backward pass with the learner's own
`numerical_gradient`: a wrong numerical gradient turns every line WRONG, a backward pass
without ReLU's mask only W1, b1 and x. Until the functions are written, each such cell says
in one line which one is missing, and raises nothing (`yours.attempt`). The optional PyTorch
cell's skipped path is here; its real path, with torch installed, is tests/test_torch_crosscheck.py.
"""

import contextlib
import io
import sys
import warnings

import nbtools
import pytest

from ffn_helpers import yours

GRADIENT_CHECK = 'yours.attempt("The gradient check of your module")'
TORCH = "torch_check.load()"
NOTEBOOKS = ("09_ffn_module", "13_training")

# A numerical gradient that divides by h, not 2h: twice the right value (09's `divided_by_h`).
OVER_H = '''def numerical_gradient(f, x, h=1e-5):
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + h
        up = f(x)
        x[index] = old - h
        down = f(x)
        x[index] = old
        grad[index] = (up - down) / h
    return grad
'''


def answers(aid, replace=None):
    """The worked solution's answer cells, in order, with the sources of `replace` (grade id -> source) put in."""
    nb = nbtools.source(aid)
    return [(replace or {}).get(nbtools.grade_id(c), c.source) for c in nb.cells if nbtools.is_answer(c)]


def maskless(aid):
    """`aid`'s answers with ReLU's derivative left out of ffn_module_backward (09's `missing_activation_grad`)."""
    cells = nbtools.cells_by_id(nbtools.source(aid))
    owner = "ffn_module_backward" if aid.startswith("09") else "FeedForwardNetwork"
    source = cells[owner].source.replace("(z > 0).astype(float)", "1.0")
    assert source != cells[owner].source
    return {owner: source}


def run_cell(aid, marker, replace=None, everything_before=False, hide=()):
    """Run `aid`'s setup cell, its answers (the worked solution's, with `replace`), then its one code cell holding
    `marker` (and, with `everything_before`, every code cell before it); what it printed, stderr left empty."""
    nb = nbtools.source(aid)
    code = [c for c in nb.cells if c.cell_type == "code"]
    target = [i for i, c in enumerate(code) if marker in c.source]
    assert len(target) == 1, (aid, marker, len(target))
    before = [c.source for c in code[:target[0]] if not nbtools.is_answer(c) and not nbtools.is_test(c)]
    namespace, out, err = {"display": print}, io.StringIO(), io.StringIO()
    blocked = {name: sys.modules.get(name) for name in hide}
    try:
        sys.modules.update(dict.fromkeys(hide))  # `import torch` then raises ImportError, as without torch
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("default")
            exec(nbtools.cells_by_id(nb)["setup"].source, namespace)
            for source in answers(aid, replace):
                exec(source, namespace)
            for source in before if everything_before else ():
                exec(source, namespace)
            exec(code[target[0]].source, namespace)
    finally:
        for name, module in blocked.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    assert err.getvalue() == "", err.getvalue()
    return out.getvalue()


def verdicts(printed):
    """{parameter: verdict} from the table `yours.print_check` prints."""
    return {line.split(":")[0].strip(): line.rsplit("-> ", 1)[1].strip() for line in printed.splitlines()
            if "rel = " in line and "-> " in line}


@pytest.mark.parametrize("aid", NOTEBOOKS)
def test_the_gradient_check_of_your_module_passes_on_right_answers(aid):
    printed = run_cell(aid, GRADIENT_CHECK)
    assert verdicts(printed) == dict.fromkeys(["W1", "b1", "W2", "b2", "x"], "right"), printed
    assert "so your backward pass is right by this check" in printed


@pytest.mark.parametrize("aid", NOTEBOOKS)
def test_the_gradient_check_uses_your_own_numerical_gradient(aid):
    """A numerical gradient that divides by h makes every gradient of the (right) backward pass read WRONG: the
    check runs the learner's function, not the course's."""
    printed = run_cell(aid, GRADIENT_CHECK, {"numerical_gradient": OVER_H})
    assert verdicts(printed) == dict.fromkeys(["W1", "b1", "W2", "b2", "x"], "WRONG"), printed


@pytest.mark.parametrize("aid", NOTEBOOKS)
def test_the_gradient_check_uses_your_own_backward_pass(aid):
    """Without ReLU's mask, the gradients that pass through σ' read WRONG and the output layer's stay right."""
    printed = run_cell(aid, GRADIENT_CHECK, maskless(aid))
    assert verdicts(printed) == {"W1": "WRONG", "b1": "WRONG", "W2": "right", "b2": "right", "x": "WRONG"}, printed


@pytest.mark.parametrize("aid", NOTEBOOKS)
def test_until_they_are_written_the_check_says_which_function_is_missing(aid):
    stub = "def numerical_gradient(f, x, h=1e-5):\n    raise NotImplementedError()\n"
    printed = run_cell(aid, GRADIENT_CHECK, {"numerical_gradient": stub})
    assert printed.strip().endswith("skipped, `numerical_gradient` is not implemented yet (write it, run its "
                                     "cell, then this one again).")
    assert "✔" not in printed and "rel =" not in printed


@pytest.mark.parametrize("aid", NOTEBOOKS)
def test_without_torch_the_cross_check_says_in_one_line_why(aid):
    printed = run_cell(aid, TORCH, everything_before=True, hide=("torch",))
    last = printed.strip().splitlines()[-1]
    assert last == ("PyTorch cross-check skipped: torch is not installed here (it is optional: `pip install torch` "
                    "adds it).")


def test_attempt_reports_and_goes_on():
    """yours.attempt: an unwritten function and a crash are one line each on stdout; a warning is reported there
    too; an interrupt still stops the cell."""
    def unwritten():
        raise NotImplementedError()

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        with yours.attempt("A demo") as trial:
            unwritten()
        assert not trial.done
        with yours.attempt("A demo"):
            raise ValueError("shapes (2,3) and (4,) not aligned")
        with yours.attempt("A demo") as trial:
            warnings.warn("overflow encountered in exp", RuntimeWarning, stacklevel=1)
        assert trial.done
    assert out.getvalue().splitlines() == [
        "A demo: skipped, `test_attempt_reports_and_goes_on.<locals>.unwritten` is not implemented yet (write it, "
        "run its cell, then this one again).",
        "A demo: stopped, your code raised ValueError: shapes (2,3) and (4,) not aligned",
        "(your code warned: RuntimeWarning: overflow encountered in exp)"]
    with pytest.raises(KeyboardInterrupt), yours.attempt("A demo"):
        raise KeyboardInterrupt
