"""Your own code in a demonstration: run it where it is ready, say so in one line where it is not.

    with yours.attempt("the gradient check of your module"):
        print_check(yours.gradient_check(...))

A notebook's demonstrations use the course's reference, so that it runs top to bottom before
anything is written (autograder/AUTHORING.md). A few run *your* functions instead: the gradient
check of your backward pass with your numerical gradient, your training run, the PyTorch
cross-check. Each sits in a `with yours.attempt(...)` block: a function you have not written yet
(NotImplementedError), a crash or a warning becomes one line on stdout that says what happened, and
the cell goes on. Nothing is raised and nothing reaches stderr, so Run All carries on; nothing here
prints a ✔: these are not checks, and earn no points.
"""

import warnings

import numpy as np

from ._arrays import as_float
from .module import GRAD_CHECK_GOOD, GRAD_CHECK_WRONG, relative_error


class attempt:
    """A block that runs the learner's code; `done` says whether it ran to its end."""

    def __init__(self, what):
        self.what = what
        self.done = False

    def __enter__(self):
        self._catching = warnings.catch_warnings(record=True)
        self._caught = self._catching.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, kind, error, tb):
        self._catching.__exit__(None, None, None)
        for caught in self._caught[:3]:
            print(f"(your code warned: {caught.category.__name__}: {caught.message})")
        if error is None:
            self.done = True
            return False
        if not isinstance(error, Exception):  # an interrupt, or the kernel shutting down: not ours to keep
            return False
        print(_why_not(self.what, error, tb))
        return True


def _why_not(what, error, tb):
    if isinstance(error, NotImplementedError):
        last = tb
        while last is not None and last.tb_next is not None:
            last = last.tb_next
        name = last.tb_frame.f_code.co_qualname if last is not None else "a function"  # Python 3.11+
        return f"{what}: skipped, `{name}` is not implemented yet (write it, run its cell, then this one again)."
    return f"{what}: stopped, your code raised {type(error).__name__}: {error}"


def verdict(rel):
    """The gradient check's reading of a relative error (module.GRAD_CHECK_GOOD, GRAD_CHECK_WRONG)."""
    if rel <= GRAD_CHECK_GOOD:
        return "right"
    return "WRONG" if rel > GRAD_CHECK_WRONG else "look closer"


def gradient_check(analytic, loss_at, numerical_gradient, at, h=1e-5):
    """{name: relative error} of analytic[name] against `numerical_gradient(f, at[name], h)`.

    `loss_at(name, value)` is the loss with `at[name]` replaced by `value`; `numerical_gradient` is
    the learner's own (09). Names whose analytic gradient is None are left out.
    """
    found = {}
    for name, value in at.items():
        if analytic.get(name) is None:
            continue
        numeric = numerical_gradient(lambda v, name=name: loss_at(name, v), value, h)
        found[name] = relative_error(as_float(analytic[name], f"your gradient {name}"),
                                     as_float(numeric, f"your numerical gradient of {name}"))
    return found


def model_loss_at(model, x, G):
    """For `gradient_check`: loss_at(name, value) = Σ G ⊙ model(x) with model.<name> (or x itself) set to value; the
    model's own parameter is put back after each call."""
    def loss_at(name, value):
        if name == "x":
            return float(np.sum(G * model(value)))
        kept = getattr(model, name)
        setattr(model, name, value)
        try:
            return float(np.sum(G * model(x)))
        finally:
            setattr(model, name, kept)

    return loss_at


def print_check(errors, subject="your backward pass"):
    """One line per parameter: the relative error and what it means for `subject`."""
    for name, rel in errors.items():
        print(f"  {name:>2}: rel = {rel:.1e}  -> {verdict(rel)}")
    if errors:
        worst = max(errors.values())
        print(f"  largest: {worst:.1e}, so {subject} is {verdict(worst)} by this check" if
              worst <= GRAD_CHECK_GOOD or worst > GRAD_CHECK_WRONG else
              f"  largest: {worst:.1e}: look closer (a ReLU input within h of 0?)")

