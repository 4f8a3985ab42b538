"""The grader's namespace for the clean re-run's tests: the course's own cells that the tests read, run once.

Which cells these are, and what they compute, depend on the course alone: they come
from the instructor's source notebook, never from the submission, and none draws a
hidden test's stream (tests/test_hidden_streams.py: no draw outside a hidden test),
so the offering's seed, which only the judge holds, changes nothing in them. So a
worker builds a notebook's namespace once, before its first judge forks, and every
judge after it inherits a copy; it used to run them per student (13's capacity sweep
and training runs: 3.7 s of every student's clean re-run).

The cells run in the worker, a trusted process, so whatever they leave behind is
confined: numpy's error state and the warnings filters are restored afterwards, and
their printing goes nowhere.
"""

import contextlib
import io
import warnings
from dataclasses import dataclass

from ...cells import needed


class _Shell:
    """`get_ipython()` for the course's own cells in the grader: magics do nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


@dataclass(frozen=True)
class CourseNamespace:
    """`names`: what the course's cells bound; `errors`: (cell label, message) of those that failed (a course bug)."""

    names: dict
    errors: tuple

    @classmethod
    def build(cls, course_cells):
        """Run the cells of `course_cells` (a notebook's, as cells.code_cells reads them) that its tests need."""
        import numpy as np

        shell, errors = _Shell(), []
        names = {"__name__": "__main__", "get_ipython": lambda: shell}
        with warnings.catch_warnings(), np.errstate(), quiet():
            for cell in grader_side(course_cells):
                try:
                    exec(compile(cell.python, f"<{cell.label}>", "exec"), names)
                except Exception as exc:
                    errors.append((cell.label, f"{type(exc).__name__}: {exc}"))
        return cls(names, tuple(errors))

    def fresh(self):
        """A namespace of its own for one clean re-run: its tests may rebind names, never this one's."""
        return dict(self.names)


def grader_side(course_cells):
    """The course's setup, demonstration and data cells that its test cells read, in notebook order."""
    tests = [c for c in course_cells if c.role == "test" and c.grade_id]
    trusted = [c for c in course_cells if c.role in ("instructor", "learner")]
    return needed(course_cells, set().union(*(t.loads for t in tests)), trusted)


@contextlib.contextmanager
def quiet():
    """The course's cells print their ✔ lines; in the grader they go nowhere."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield
