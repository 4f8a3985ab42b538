"""The grader from the command line, as the instructor guide uses it: `check`, `grade` on an LMS zip,
then nbgrader's own generate_feedback and export on the graded course."""

import contextlib
import html
import json
import subprocess
import sys
import zipfile

import nbformat
import nbtools
import pytest
from adversarial import grading
from run_locks import one_batch

from autograder.schema import StudentResult

ASSIGNMENT = "02_forward_pass"
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("grader-cli")]
MISSING_B1 = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n"


def _autograder(*args, cwd=None, jobs=None):
    """`python -m autograder ...`; a `grade` holds the run's locks for the `jobs` sandboxes it runs at once
    (run_locks.one_batch; None: every core)."""
    with one_batch(jobs) if args[0] == "grade" else contextlib.nullcontext():
        return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, env=nbtools.nbgrader_env(), timeout=1800)


def test_check_prints_the_json_of_one_notebook(tmp_path):
    run = _autograder("check", nbtools.SOLUTIONS_DIR / f"{ASSIGNMENT}.ipynb", "--json",
                      "--feedback", tmp_path / "f.html")
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["schema"] == 1 and json.loads(json.dumps(StudentResult.from_dict(result).to_dict())) == result
    assert result["assignment"] == ASSIGNMENT and result["status"] == "graded"
    assert result["score"] == result["max_score"] > 0
    assert [c["grade_id"] for c in result["cells"]] == nbtools.test_ids(nbtools.source(ASSIGNMENT))
    assert "Every test passed" in (tmp_path / "f.html").read_text()


def test_check_says_what_name_it_expected(tmp_path):
    path = tmp_path / "homework.ipynb"
    path.write_text(nbformat.writes(nbtools.learner(ASSIGNMENT)))
    run = _autograder("check", path)
    assert run.returncode == 2
    assert "cannot tell which assignment 'homework.ipynb' is" in run.stderr and "02_forward_pass" in run.stderr


def _lms_zip(path, students):
    with zipfile.ZipFile(path, "w") as zf:
        for (student, stamp), nb in students.items():
            zf.writestr(f"FFN02_{student}_attempt_{stamp}_{ASSIGNMENT}.ipynb", nbformat.writes(nb))


def _in_utc(course_root):
    """Blackboard's names are read once the course says its Blackboard's zone (the guide's section 2)."""
    with open(course_root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write('\nc.LmsCollector.timezone = "UTC"\n')
    return course_root


def _hidden_lines():
    return nbtools.secret_lines(ASSIGNMENT)


def test_the_guides_cycle_with_zip_collect(tmp_path):
    """generate_assignment, zip_collect, grade, generate_feedback, export: the commands of autograder/README.md."""
    course_root = _in_utc(nbtools.scratch_course(tmp_path / "course", ASSIGNMENT))
    run = nbtools.nbgrader("generate_assignment", ASSIGNMENT, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    released = nbformat.read(course_root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    answers = {gid: c.source for gid, c in nbtools.cells_by_id(nbtools.solution(ASSIGNMENT)).items()
               if gid in nbtools.answer_ids(released)}
    wrong = dict(answers, ffn_forward=MISSING_B1)
    archive = course_root / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    _lms_zip(archive / "submissions.zip", {("ada", "2024-05-02-10-00-00"): nbtools.with_answers(released, answers),
                                           ("bo", "2024-05-02-11-30-00"): nbtools.with_answers(released, wrong)})
    run = nbtools.nbgrader("zip_collect", ASSIGNMENT, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(p.name for p in (course_root / "submitted").iterdir()) == ["ada", "bo"]

    run = _autograder("grade", ASSIGNMENT, course_root / "submitted", "--out", tmp_path / "grading", "--jobs", "2",
                      "--course", course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ETA" in run.stderr and "2/2 students" in run.stderr
    ada = json.loads((tmp_path / "grading" / "ada.json").read_text())
    bo = json.loads((tmp_path / "grading" / "bo.json").read_text())
    assert ada["score"] == ada["max_score"] and ada["timestamp"].startswith("2024-05-02 10:00:00")
    assert bo["score"] < bo["max_score"] and {d["key"] for c in bo["cells"] for d in c["diagnosis"]} == {"missing_b1"}
    csv = (tmp_path / "grading" / "grades.csv").read_text().splitlines()
    assert csv[0].startswith("student_id,status,score,max_score,late_penalty,grade,timestamp,") and len(csv) == 3

    run = nbtools.nbgrader("generate_feedback", ASSIGNMENT, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    page = html.unescape((course_root / "feedback" / "bo" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text())
    hidden = _hidden_lines()
    assert hidden and not [line for line in hidden if line in page]
    assert "[Figure (not drawn while grading): Diagram: W-2" in page and "src=\"data:image/png" not in page

    run = nbtools.nbgrader("export", "--to", tmp_path / "export.csv", cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = (tmp_path / "export.csv").read_text().splitlines()
    assert rows[0].startswith("assignment,duedate,timestamp,student_id") and len(rows) == len(csv)
    assert sorted(r.split(",")[3] for r in rows[1:]) == ["ada", "bo"]
    scores = {r.split(",")[3]: float(r.split(",")[9]) for r in rows[1:]}
    assert scores == {"ada": ada["score"], "bo": bo["score"]}


def test_grade_takes_an_lms_zip_directly(tmp_path):
    """... and with --draw-figures, the graded notebook keeps the course's figures as images."""
    course_root = _in_utc(grading.make_course(tmp_path / "course", ASSIGNMENT))
    _lms_zip(tmp_path / "download.zip", {("cy", "2024-05-03-09-15-00"): nbtools.completed_learner(ASSIGNMENT)})
    run = _autograder("grade", ASSIGNMENT, tmp_path / "download.zip", "--out", tmp_path / "results",
                      "--course", course_root, "--draw-figures", jobs=1)  # cy alone: one sandbox
    assert run.returncode == 0, run.stderr[-3000:]
    cy = json.loads((tmp_path / "results" / "cy.json").read_text())
    assert cy["status"] == "graded" and cy["score"] == cy["max_score"]
    assert (course_root / "submitted" / "cy" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
    graded = nbformat.read(course_root / "autograded" / "cy" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    assert sum(map(nbtools.images, graded.cells)) >= 3
