"""Formgrader tells the truth: what `grade` found is where the instructor grades, and its ⚡ button is off.

One small batch of 02_forward_pass through `python -m autograder grade` (an honest student, an infinite
loop, a monkeypatch, a file that is no notebook), then the data formgrader shows, read the way formgrader
reads it: nbgrader's NbGraderAPI (the submissions list) and the gradebook's grades and comments. Then
the instructor's JupyterLab, asked to autograde through formgrader's own API, must refuse and run nothing.
"""

import csv
import io
import json
import secrets
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbtools
import pytest
from adversarial import ASSIGNMENT, Context, grading, patch_numpy
from run_locks import one_batch

from autograder.authoring import lab
from autograder.grading import course as course_mod
from autograder.grading.scoring import gradebook

AID = ASSIGNMENT
REPO = Path(__file__).resolve().parents[1]
LOOP = "def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("formgrader")
    root = grading.make_course(tmp / "course", AID)
    honest = nbtools.completed_learner(AID)
    answers = {c.metadata.nbgrader.grade_id: c.source for c in honest.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    ctx = Context(nbtools.learner(AID), answers, str(root), str(tmp / "results"), 0)
    students = {"honest": honest, "looping": nbtools.with_answers(honest, {"ffn_forward": LOOP}),
                "patcher": patch_numpy(ctx), "broken": b"this is no notebook"}
    grading.write_submissions(tmp / "submitted", AID, students)
    results = grading.run_batch(AID, tmp / "submitted", tmp / "results", root, cell_timeout=5.0)
    return root, results


def _api(root):
    """nbgrader's NbGraderAPI for the course, as formgrader's handlers make it."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = course_mod.load_config(root)
    return NbGraderAPI(CourseDirectory(config=config), config=config)


def _comments(root, student):
    """{answer cell: the grader's comment} of a student's notebook in the gradebook formgrader reads."""
    with gradebook.open_gradebook(course_mod.load_config(root)) as gb:
        notebook = gb.find_submission_notebook(AID, AID, student)
        return {c.name: c.auto_comment for c in notebook.comments if c.auto_comment}


@pytest.mark.grading
def test_the_statuses_show_in_formgraders_submission_list(graded):
    root, results = graded
    assert {s: r["status"] for s, r in results.items()} == {
        "honest": "graded", "looping": "timeout", "patcher": "flagged", "broken": "unreadable notebook"}
    listed = {s["student"]: s for s in _api(root).get_submissions(AID)}
    assert listed["honest"]["autograded"] and not listed["honest"]["needs_manual_grade"]
    for student in ("looping", "patcher", "broken"):  # not "graded 6/10", not "needs autograding"
        assert listed[student]["autograded"], (student, listed[student])
        assert listed[student]["needs_manual_grade"], (student, listed[student])


@pytest.mark.grading
def test_the_grader_says_why_on_the_answer_cells(graded):
    root, _ = graded
    assert _comments(root, "honest") == {}
    looping = _comments(root, "looping")
    assert list(looping) == ["ffn_forward"] and "timeout" in looping["ffn_forward"]
    assert "status of the notebook: timeout" in looping["ffn_forward"]
    patcher = _comments(root, "patcher")
    assert "flagged: monkeypatch in ffn_forward" in patcher["ffn_forward"]
    assert "np.allclose" not in json.dumps(patcher)  # a flag's detail quotes learner code: not in the comment
    broken = _comments(root, "broken")
    assert broken and all("unreadable notebook" in text for text in broken.values())
    assert set(broken) == {"ffn_forward", "linear_torch", "dead_fraction"}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def instructor_server(tmp_path_factory):
    """The instructor's JupyterLab (jupyter/instructor/'s configuration) on a scratch course with one submission."""
    tmp = tmp_path_factory.mktemp("instructor")
    root = grading.make_course(tmp / "course", AID)
    grading.write_submissions(root / "submitted", AID, {"bob": nbtools.completed_learner(AID)})
    port, token = _free_port(), secrets.token_hex(24)
    argv, env, _ = lab.lab_command("instructor", port=port, open_browser=False, allow_root=True, root=root,
                                   extra=[f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0"])
    env.update(HOME=str(tmp), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"))
    env.pop("JUPYTER_CONFIG_DIR", None)
    with open(tmp / "server.log", "w") as log:
        process = subprocess.Popen(argv, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait(f"http://127.0.0.1:{port}/api/status", token, process)
            yield f"http://127.0.0.1:{port}", token, root
        finally:
            process.terminate()
            process.wait(15)


def _wait(url, token, process, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the instructor's JupyterLab exited"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": f"token {token}"}),
                                        timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"the instructor's JupyterLab did not answer within {timeout} s")


def test_the_autograde_button_of_the_instructors_formgrader_runs_nothing(instructor_server):
    base, token, root = instructor_server
    request = urllib.request.Request(f"{base}/formgrader/api/submission/{AID}/bob/autograde", data=b"",
                                     method="POST", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        answer = json.loads(reply.read())
    assert answer["success"] is False and "turned off" in answer["log"], answer
    assert not (root / "autograded").exists()  # nbgrader's autograde never ran
    command = next(line.strip() for line in answer["log"].splitlines() if "python -m autograder grade" in line)
    assert command == (f"python -m autograder grade {AID} {root.resolve() / 'submitted'} --course {root.resolve()} "
                       "--student bob --force"), command


@pytest.mark.grading
def test_the_dialogs_command_grades_again_when_pasted_at_the_repository_root(tmp_path):
    """bob graded once; then the command the Autograde dialog gives, pasted as it is: bob is graded again."""
    from autograder.grading.gate_out import formgrader

    root = grading.make_course(tmp_path / "my course", AID)  # a space: the command quotes its paths
    grading.write_submissions(root / "submitted", AID, {"bob": nbtools.completed_learner(AID)})
    env = nbtools.nbgrader_env()
    with one_batch(jobs=1):  # bob alone: grade runs one sandbox
        first = subprocess.run([sys.executable, "-m", "autograder", "grade", AID, str(root / "submitted"), "--course",
                                str(root)], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    pasted = formgrader.refusal(AID, "bob", root)["log"].split("\n\n")[1].strip()
    assert pasted.startswith("python -m autograder grade ")
    with one_batch(jobs=1):
        again = subprocess.run(["bash", "-c", pasted.replace("python", shlex.quote(sys.executable), 1)], cwd=REPO,
                               env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "bob: graded again: --force" in again.stderr and "left as they are" not in again.stderr, again.stderr
    assert formgrader.grade_command(AID, "bob") == (f"python -m autograder grade {AID} autograder/course/submitted "
                                                    "--student bob --force")


def test_every_formgrader_config_turns_the_button_off():
    for config in ("jupyter/instructor", "deploy/jupyterhub/grader"):
        settings = json.loads((REPO / config / "jupyter_server_config.json").read_text(encoding="utf-8"))
        extensions = settings["ServerApp"]["jpserver_extensions"]
        if extensions.get("nbgrader.server_extensions.formgrader"):
            assert extensions.get("autograder.grading.gate_out.formgrader") is True, config


# ---------------------------------------------------------------- an unreadable notebook, settled by hand


BY_LOGIN = ("--to", "canvas", "--canvas-id", "sis_login_id")  # the students' ids here are logins, not Canvas user ids


def _export(root, *args):
    return subprocess.run([sys.executable, "-m", "autograder", "export", AID, "--course", str(root), *args],
                          capture_output=True, text=True, env=nbtools.nbgrader_env(), timeout=300)


@pytest.mark.grading
def test_an_unreadable_notebook_is_settled_in_formgrader_and_the_exports_wait_for_it(graded, tmp_path):
    """broken's file is no notebook: formgrader lists it with a page of every graded cell, the instructor gives
    points and a comment there, generate_feedback writes its page; until then the exports name who is left."""
    root, _ = graded
    api = _api(root)
    listed = {s["student"]: s for s in api.get_notebook_submissions(AID, AID)}
    assert set(listed) == {"honest", "looping", "patcher", "broken"}  # not 3 of 4
    stand_in = root / "autograded" / "broken" / AID / f"{AID}.ipynb"
    assert "could not be read" in stand_in.read_text() and "broken.json" in stand_in.read_text()
    from browser.test_formgrader_safety import formgrader_html  # the page formgrader's SubmissionHandler makes

    page = formgrader_html(stand_in)
    for test_id in nbtools.test_ids(nbtools.learner(AID)):  # a points box for each test cell
        assert f'<input class="score tabbable" id="{test_id}"' in page, test_id

    waiting = _export(root, *BY_LOGIN, "--out", tmp_path / "canvas.csv")
    assert waiting.returncode == 0 and f"{AID}: broken, looping, patcher" in waiting.stderr, waiting.stderr
    refused = _export(root, *BY_LOGIN, "--out", tmp_path / "refused.csv", "--require-settled")
    assert refused.returncode == 2 and "broken, looping, patcher" in refused.stderr, refused.stderr
    assert not (tmp_path / "refused.csv").exists()

    with gradebook.open_gradebook(course_mod.load_config(root)) as gb:  # as formgrader's grade and comment PUTs do
        for student in ("broken", "looping", "patcher"):
            notebook = gb.find_submission_notebook(AID, AID, student)
            for grade in notebook.grades:
                grade.manual_score, grade.needs_manual_grade = float(grade.max_score) / 2, False
            for comment in notebook.comments:
                comment.manual_comment = "Read by hand: the file you sent was damaged; graded from the copy you mailed."
        gb.db.commit()
        top = float(gb.find_submission(AID, "broken").max_score)
    settled = _export(root, *BY_LOGIN, "--out", tmp_path / "settled.csv", "--require-settled")
    assert settled.returncode == 0 and "manual grading" not in settled.stderr, settled.stderr
    rows = {r[3]: r for r in csv.reader(io.StringIO((tmp_path / "settled.csv").read_text()))}
    assert float(rows["broken"][5]) == top / 2

    run = nbtools.nbgrader("generate_feedback", AID, "--student", "broken", cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    page = (root / "feedback" / "broken" / AID / f"{AID}.html").read_text()
    assert "could not be read" in page and "graded from the copy you mailed" in page
