"""The course's own cells that the clean re-run's tests read: built once in the worker, each judge given a copy
(autograder/grading/gate_beside/course_namespace.py)."""

import types
import warnings

import nbformat
import numpy as np
import pytest

from autograder import SOURCE_DIR, assignments, authored, cells
from autograder.grading.gate_beside.course_namespace import CourseNamespace
from autograder.grading.gate_in import sandbox
from autograder.grading.student.clean_rerun import CleanRerun


def _cell(source, **nbgrader):
    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **nbgrader}
    return cell


def _course(*learner_cells, test="assert data == [1, 2]\n"):
    """A one-exercise notebook: the setup, `learner_cells` (the learner's own, unmarked), the answer, its test."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [_cell("import numpy as np\n", grade_id="setup", locked=True),
                *(_cell(source) for source in learner_cells),
                _cell("def look():\n    return 1\n", grade_id="look", solution=True),
                _cell(test, grade_id="test_look", grade=True, locked=True, points=1.0)]
    return cells.code_cells(nb)


def test_it_runs_the_cells_the_tests_read_and_leaves_the_worker_as_it_was(capsys):
    before_errors, before_filters = np.geterr(), list(warnings.filters)
    course = _course('data = [1, 2]\nnp.seterr(all="raise")\nimport warnings\nwarnings.simplefilter("error")\n'
                     'print("✔ data ready")\n',
                     "unread = 1 / 0\n")
    built = CourseNamespace.build(course)
    assert built.names["data"] == [1, 2] and "unread" not in built.names and built.errors == ()
    assert np.geterr() == before_errors and warnings.filters == before_filters
    assert capsys.readouterr() == ("", "")


def test_a_failing_course_cell_is_a_course_error_and_the_others_still_run():
    built = CourseNamespace.build(_course("broken = 1 / 0\n", "data = [1, 2]\n",
                                          test="assert data == [1, 2] and broken\n"))
    assert built.names["data"] == [1, 2]
    assert [message for _, message in built.errors] == ["ZeroDivisionError: division by zero"]


def test_each_clean_re_run_gets_a_namespace_of_its_own():
    built = CourseNamespace.build(_course("data = [1, 2]\n"))
    first = built.fresh()
    first["data"] = "rebound by a test"
    assert built.fresh()["data"] == [1, 2]


@pytest.mark.parametrize("aid", assignments())
def test_every_notebooks_course_cells_run_in_the_grader_without_an_error(aid):
    built = CourseNamespace.build(cells.code_cells(authored(SOURCE_DIR / aid / f"{aid}.py")))
    assert built.errors == ()


@pytest.mark.sandbox
def test_the_judge_tests_with_the_namespace_the_worker_built(tmp_path):
    """The worker builds a notebook's namespace once, before its judges fork: a judge runs none of those cells
    again. Here the namespace handed over holds what the cells would not compute, and the test sees it."""
    course = _course("data = [1, 2]\n", test="assert data == 'from the worker'\n")
    handed = CourseNamespace({**CourseNamespace.build(course).names, "data": "from the worker"}, ())
    folder = tmp_path / "rerun"
    folder.mkdir()
    tmp_path.chmod(0o755)
    box = sandbox.Sandbox(readonly=(str(folder),), cwd=str(folder), uid=sandbox.slot_uid(3))
    sandboxes = types.SimpleNamespace(isolate=True, hidden=(), clear_slot=lambda: None,
                                      judge_uid=lambda: sandbox.worker_uid(3, None))
    rerun = CleanRerun({}, 60, None, None, sandboxes, None, None)
    assert rerun.run(course, box, {"look": []}, course).tests["test_look"].points == 0.0
    assert rerun.run(course, box, {"look": []}, course, course_namespace=handed).tests["test_look"].points == 1.0
