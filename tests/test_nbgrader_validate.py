"""`nbgrader validate` (what a student runs before submitting) passes on every solution and fails on every
learner version with exercises, one nbgrader process per notebook.

`nbgrader validate` exits 0 either way; its verdict is the text it prints.
"""

import re
import shutil

import nbtools
import pytest

from autograder import assignments

PASSED = "Success! Your notebook passes all the tests."
FAILED = re.compile(r"VALIDATION FAILED ON (\d+) CELL\(S\)")


def validate(path):
    result = nbtools.nbgrader("validate", path.name, cwd=path.parent, timeout=600)
    log = f"$ nbgrader validate {path.name} (exit {result.returncode})\n{result.stdout}\n{result.stderr[-3000:]}"
    return result, log


@pytest.mark.grading
@pytest.mark.parametrize("aid", assignments())
def test_validate_passes_on_solution(aid):
    result, log = validate(nbtools.SOLUTIONS_DIR / f"{aid}.ipynb")
    assert result.returncode == 0, log
    assert PASSED in result.stdout and not FAILED.search(result.stdout), log


@pytest.mark.grading
@pytest.mark.parametrize("aid", nbtools.graded_assignments())
def test_validate_fails_on_learner_version(aid):
    """Every exercise's visible check fails in the untouched learner version, and nbgrader says so."""
    path = nbtools.NOTEBOOKS_DIR / f"{aid}.ipynb"
    exercises = nbtools.answer_ids(nbtools.learner(aid))
    result, log = validate(path)
    assert result.returncode == 0, log
    failed = FAILED.search(result.stdout)
    assert failed, f"nbgrader validate does not report failing cells for notebooks/{aid}.ipynb:\n{log}"
    assert int(failed.group(1)) >= len(exercises), (
        f"{failed.group(1)} cell(s) failed, fewer than the {len(exercises)} exercise(s) {exercises}:\n{log}")
    assert "not implemented" in result.stdout, log


def test_release_holds_the_notebook_only(tmp_path):
    """generate_assignment on the course as committed: the authored source/<id>/<id>.py (solutions and
    hidden tests) beside the notebook must not reach release/."""
    aid = "02_forward_pass"
    course_root = nbtools.scratch_course(tmp_path / "course", aid)
    shutil.copy(nbtools.COURSE_ROOT / "source" / aid / f"{aid}.py", course_root / "source" / aid)
    run = nbtools.nbgrader("generate_assignment", aid, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    released = sorted(p.name for p in (course_root / "release" / aid).iterdir())
    assert released == [f"{aid}.ipynb"]
