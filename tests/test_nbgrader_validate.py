"""`nbgrader validate` (what a student runs before submitting) passes on every solution and fails on every
learner version with exercises.

One `nbgrader validate` over all the solutions, one over all the learner versions (as a student may
validate several notebooks at once): the application takes seconds to start, a notebook's run much less.
Each notebook is still one test, reading its own part of the output (nbgrader logs "Validating '<path>'"
before each notebook's run and verdict). `nbgrader validate` exits 0 either way; its verdict is the text
it prints.
"""

import functools
import re
import shutil
import subprocess
import sys

import nbtools
import pytest

from autograder import assignments

PASSED = "Success! Your notebook passes all the tests."
FAILED = re.compile(r"VALIDATION FAILED ON (\d+) CELL\(S\)")
VALIDATING = re.compile(r"^\[ValidateApp \| INFO\] Validating '(?P<path>.+)'$", re.MULTILINE)
ERROR = re.compile(r"^\[ValidateApp \| (ERROR|CRITICAL)\]", re.MULTILINE)
FORMS = {"solutions": (nbtools.SOLUTIONS_DIR, assignments()),
         "notebooks": (nbtools.NOTEBOOKS_DIR, nbtools.graded_assignments())}


@functools.cache
def validated(form):
    """(notebook name -> its part of the output, the command's exit and the output's end) for one `nbgrader validate`
    of every notebook of `form`; its two streams read as one, unbuffered, so each part is in order."""
    folder, aids = FORMS[form]
    names = [f"{aid}.ipynb" for aid in aids]
    env = {**nbtools.nbgrader_env(), "PYTHONUNBUFFERED": "1"}
    with nbtools.kernel_socket_flags() as flags:
        result = subprocess.run([sys.executable, "-m", "nbgrader", "validate", *names, *flags], cwd=folder, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    starts = list(VALIDATING.finditer(result.stdout))
    ends = [m.start() for m in starts[1:]] + [len(result.stdout)]
    parts = {m["path"].rpartition("/")[2]: result.stdout[m.start():end] for m, end in zip(starts, ends, strict=True)}
    return parts, f"$ nbgrader validate {' '.join(names)} (exit {result.returncode}), its end:\n{result.stdout[-3000:]}"


def verdict(form, aid):
    """The output `nbgrader validate` printed for `form`/<aid>.ipynb alone; fails if it has none or logged an error."""
    parts, log = validated(form)
    part = parts.get(f"{aid}.ipynb")
    assert part is not None, f"nbgrader validate never reached {form}/{aid}.ipynb:\n{log}"
    assert not ERROR.search(part), f"nbgrader validate logged an error on {form}/{aid}.ipynb:\n{part[-3000:]}"
    return part


@pytest.mark.grading
@pytest.mark.parametrize("aid", [pytest.param(aid, marks=pytest.mark.xdist_group("nbgrader-validate-solutions"))
                                 for aid in FORMS["solutions"][1]])
def test_validate_passes_on_solution(aid):
    part = verdict("solutions", aid)
    assert PASSED in part and not FAILED.search(part), part[-3000:]


@pytest.mark.grading
@pytest.mark.parametrize("aid", [pytest.param(aid, marks=pytest.mark.xdist_group("nbgrader-validate-notebooks"))
                                 for aid in FORMS["notebooks"][1]])
def test_validate_fails_on_learner_version(aid):
    """Every exercise's visible check fails in the untouched learner version, and nbgrader says so."""
    exercises = nbtools.answer_ids(nbtools.learner(aid))
    part = verdict("notebooks", aid)
    failed = FAILED.search(part)
    assert failed, f"nbgrader validate does not report failing cells for notebooks/{aid}.ipynb:\n{part[-3000:]}"
    assert int(failed.group(1)) >= len(exercises), (
        f"{failed.group(1)} cell(s) failed, fewer than the {len(exercises)} exercise(s) {exercises}:\n{part[-3000:]}")
    assert "not implemented" in part, part[-3000:]


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
