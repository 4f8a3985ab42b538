"""An instructor's term, pasted from autograder/README.md into a fresh clone: release, collect an LMS zip (Blackboard
names, times to the second, an upload name that tries to pass for a classmate's newest attempt), a wrong
assignment id refused, a due date set, grade a class of three (one answer loops forever), collect a second download
(a late Blackboard submission, a Canvas one and a Moodle one in Moodle's folders, each of the two with an upload
name that tries to pass for a classmate's, and the Moodle one truncated) and grade only the new three (the late
penalty reaches grades.csv and the Canvas file), regrade one student, see the exports refuse while submissions
need manual grading, settle them by hand as formgrader saves a score, write the feedback (the unreadable
notebook's page too), export for Canvas, report; and `git status` shows nothing of the students'.

Every command run here is quoted from the guide (the test checks that it is there, word for word); the test adds
only a short cell time limit, so the endless loop costs seconds.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import nbtools
import pytest
from nbgrader.api import Gradebook

from autograder import REPO_ROOT
from autograder.grading.scoring.gradebook import cell_scores

AID = "02_forward_pass"
GUIDE = (REPO_ROOT / "autograder" / "README.md").read_text(encoding="utf-8")
SHORT = ["--cell-timeout", "5"]
LOOP = "def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n"
MISSING_B1 = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n"
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("instructor-term")]


def _guide_lines():
    """Every command line of the guide's bash blocks, comments cut."""
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE, flags=re.S)
    return {re.sub(r"\s+#.*$", "", line).strip() for block in blocks for line in block.splitlines()}


def _fresh_clone(target):
    """What a clone of this checkout holds (the files git lists, as deploy/jupyterhub/setup.sh copies), committed."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (REPO_ROOT / rel).is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / rel, target / rel)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "clone"]):
        subprocess.run([*git, *args], cwd=target, check=True, capture_output=True)
    return target


class Shell:
    """Runs guide commands with bash in the clone, the course's environment first on PATH, HOME in the scratch."""

    def __init__(self, clone, home):
        self.clone = clone
        self.env = dict(os.environ, HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                        f"{os.environ.get('PATH', '')}")
        self.env.pop("PYTHONPATH", None)

    def __call__(self, command, *extra, ok=True):
        assert command in _guide_lines(), f"not a command of the guide: {command}"
        line = " ".join([command, *extra])
        done = subprocess.run(["bash", "-c", line], cwd=self.clone, env=self.env, capture_output=True, text=True,
                              timeout=1800)
        if ok:
            assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        return done


def _zip(path, students, others=()):
    """A Blackboard download: one notebook per (student, time stamp[, the name the student uploaded under]); `others`
    adds (name in the zip, its text) as they are, for Canvas's and Moodle's names."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for (student, stamp, *upload), nb in students.items():
            zf.writestr(f"FFN02_{student}_attempt_{stamp}_{upload[0] if upload else AID + '.ipynb'}",
                        nbformat.writes(nb))
        for name, text in others:
            zf.writestr(name, text)


def _settle_by_hand(clone, points, comment):
    """What formgrader's grade and comment PUTs do (nbgrader's GradeHandler, CommentHandler), for each cell still
    waiting for the instructor: the points `points(grade)`, the comment on each of the student's comments."""
    settled = {}
    with Gradebook(f"sqlite:///{clone / 'autograder/course/gradebook.db'}") as gb:
        for sub in gb.assignment_submissions(AID):
            notebook = gb.find_submission_notebook(AID, AID, sub.student.id)
            waiting = [g for g in notebook.grades if g.needs_manual_grade]
            for grade in waiting:
                grade.manual_score = points(sub.student.id, grade)
                grade.needs_manual_grade = grade.manual_score is None and grade.auto_score is None
            if waiting and comment.get(sub.student.id):
                for cell in notebook.comments:
                    cell.manual_comment = comment[sub.student.id]
            settled[sub.student.id] = len(waiting)
        gb.db.commit()
    return {s: n for s, n in settled.items() if n}


def _grades(clone):
    with (clone / "autograder/course/results" / AID / "grades.csv").open(newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_a_term_from_a_fresh_clone(tmp_path):
    clone = _fresh_clone(tmp_path / "clone")
    home = tmp_path / "home"
    sh = Shell(clone, home)
    results = clone / "autograder/course/results" / AID

    # 0-1: build, release
    assert "python -m autograder build 02_forward_pass" in GUIDE
    for aid in (AID, "03_residual_layernorm"):  # 03 only to be named by mistake below
        done = subprocess.run([sys.executable, "-m", "autograder", "build", aid], cwd=clone, env=sh.env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    sh("(cd autograder/course && nbgrader generate_assignment 02_forward_pass)")
    sh('(cd autograder/course && nbgrader db assignment add 02_forward_pass --duedate="2026-12-03 17:00:00 '
       'Europe/Berlin")')  # 16:00 UTC: ada, bob and cy on time, dee (below) 17 h late
    released = nbformat.read(clone / f"autograder/course/release/{AID}/{AID}.ipynb", as_version=4)
    right = nbtools.completed_learner(AID)

    # 2: an LMS zip of three students, collected as the guide says; bob also uploads an empty notebook under a name
    # that tries to pass for ada's newest attempt
    _zip(home / "Downloads/submissions.zip", {
        ("ada", "2026-12-02-10-00-42"): right,
        ("bob", "2026-12-02-11-15-23"): nbtools.with_answers(right, {"ffn_forward": MISSING_B1}),
        ("bob", "2026-12-02-11-15-23", f"x_ada_attempt_2099-12-31-23-59-59_{AID}.ipynb"): nbtools.learner(AID),
        ("cy", "2026-12-02-12-00-59"): nbtools.with_answers(right, {"ffn_forward": LOOP})})
    assert nbtools.answer_ids(released) == nbtools.answer_ids(right)
    sh("mkdir -p autograder/course/downloaded/02_forward_pass/archive")
    sh("cp ~/Downloads/submissions.zip autograder/course/downloaded/02_forward_pass/archive/")
    sh("(cd autograder/course && nbgrader zip_collect 02_forward_pass)")
    submitted = clone / "autograder/course/submitted"
    assert {s: (submitted / s / AID / "timestamp.txt").read_text() for s in ("ada", "bob", "cy")} == {
        "ada": "2026-12-02 10:00:42", "bob": "2026-12-02 11:15:23", "cy": "2026-12-02 12:00:59"}
    assert (submitted / "bob" / AID / f"x_ada_attempt_2099-12-31-23-59-59_{AID}.ipynb").is_file()

    # a wrong assignment id that exists: refused, naming what the folder holds, nothing written
    grade = "python -m autograder grade 02_forward_pass autograder/course/submitted --jobs 2"
    done = subprocess.run(["bash", "-c", grade.replace(AID, "03_residual_layernorm", 1)], cwd=clone, env=sh.env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "no submission in" in done.stderr and "'02_forward_pass' (3)" in done.stderr
    assert not (clone / "autograder/course/release/03_residual_layernorm").exists()
    assert not (clone / "autograder/course/results/03_residual_layernorm").exists()
    assert not [c for c in cell_scores(clone / "autograder/course/gradebook.db") if c.assignment != AID]

    # 3: grade the class; the endless loop is a timeout, the progress line names the students
    done = sh(grade, *SHORT)
    assert "3/3 students" in done.stderr
    first = {s: json.loads((results / f"{s}.json").read_text()) for s in ("ada", "bob", "cy")}
    assert first["ada"]["status"] == "graded" and first["ada"]["score"] == first["ada"]["max_score"] > 0
    assert first["bob"]["status"] == "graded" and 0 < first["bob"]["score"] < first["bob"]["max_score"]
    assert first["cy"]["status"] == "timeout" and first["cy"]["score"] < first["cy"]["max_score"]
    rows = _grades(clone)
    assert sorted(rows) == ["ada", "bob", "cy"] and rows["cy"]["status"] == "timeout"
    assert rows["ada"]["timestamp"] == "2026-12-02 10:00:42" and rows["cy"]["timestamp"] == "2026-12-02 12:00:59"
    assert float(rows["bob"]["score"]) == first["bob"]["score"] and "ffn_forward" in rows["bob"]
    stamps = {s: (results / f"{s}.json").stat().st_mtime_ns for s in first}

    # a second download: dee late (Blackboard); Canvas user 777 (marked LATE by Canvas, but Canvas's names hold no
    # time, so no penalty here) with a second upload named as user 12345's Canvas file; Moodle participant 2222222 in
    # Moodle's folders, a truncated notebook beside an upload named as participant 1111111's Moodle file. Collected,
    # and only these three graded; the class's CSV still holds everyone
    truncated = nbformat.writes(right)[:700]
    _zip(home / "Downloads/submissions.zip", {("dee", "2026-12-04-09-00-31"): right}, others=[
        (f"kimcyrus_LATE_777_90001_{AID}.ipynb", nbformat.writes(right)),
        (f"kimcyrus_LATE_777_90002_smithjane_12345_678901_{AID}.ipynb", nbformat.writes(nbtools.learner(AID))),
        (f"Eve Ng_2222222_assignsubmission_file_/{AID}.ipynb", truncated),
        (f"Eve Ng_2222222_assignsubmission_file_/Ada L_1111111_assignsubmission_file_{AID}.ipynb",
         nbformat.writes(nbtools.learner(AID)))])
    sh("cp ~/Downloads/submissions.zip autograder/course/downloaded/02_forward_pass/archive/")
    sh("(cd autograder/course && nbgrader zip_collect --force 02_forward_pass)")
    assert sorted(p.name for p in submitted.iterdir()) == ["2222222", "777", "ada", "bob", "cy", "dee"]
    assert sorted(p.name for p in (submitted / "777" / AID).glob("*.ipynb")) == [
        f"{AID}.ipynb", f"smithjane_12345_678901_{AID}.ipynb"]
    assert sorted(p.name for p in (submitted / "2222222" / AID).glob("*.ipynb")) == [
        f"{AID}.ipynb", f"Ada L_1111111_assignsubmission_file_{AID}.ipynb"]
    assert (submitted / "2222222" / AID / f"{AID}.ipynb").read_text() == truncated
    done = sh(grade, *SHORT)
    assert "3/3 students" in done.stderr and "3 submission(s) already graded" in done.stderr
    assert {s: (results / f"{s}.json").stat().st_mtime_ns for s in first} == stamps
    rows = _grades(clone)
    assert sorted(rows) == ["2222222", "777", "ada", "bob", "cy", "dee"] and rows["dee"]["status"] == "graded"
    assert rows["777"]["status"] == "graded" and float(rows["777"]["score"]) == first["ada"]["max_score"]
    assert rows["2222222"]["status"] == "unreadable notebook" and float(rows["2222222"]["score"]) == 0
    assert rows["777"]["timestamp"] == rows["2222222"]["timestamp"] == ""  # Canvas and Moodle names hold no time
    stand_in = clone / "autograder/course/autograded/2222222" / AID / f"{AID}.ipynb"  # formgrader's page for it
    assert "could not be read" in stand_in.read_text() and "2222222.json" in stand_in.read_text()
    assert rows["dee"]["timestamp"] == "2026-12-04 09:00:31"
    # dee is late: the course's plugin takes a tenth of the score (one started day); nobody else loses anything
    assert "was due 2026-12-03 16:00:00 UTC; 1 late: dee 17 h late, " in done.stderr
    assert float(rows["dee"]["late_penalty"]) == pytest.approx(0.1 * float(rows["dee"]["score"]))
    assert float(rows["dee"]["score"]) > 0 and float(rows["dee"]["grade"]) == pytest.approx(
        0.9 * float(rows["dee"]["score"]))
    assert [float(rows[s]["late_penalty"]) for s in ("ada", "bob", "cy", "777", "2222222")] == [0] * 5

    # regrade one student: bob alone is graded, the CSV keeps the class
    done = sh("python -m autograder grade 02_forward_pass autograder/course/submitted --student bob --force", *SHORT)
    assert "1/1 students" in done.stderr and (results / "bob.json").stat().st_mtime_ns != stamps["bob"]
    assert sorted(_grades(clone)) == ["2222222", "777", "ada", "bob", "cy", "dee"]

    # the exports wait for the submissions that need manual grading: cy's timeout and 2222222's unreadable file
    canvas_csv = clone / f"autograder/course/results/canvas-{AID}.csv"
    settle = "python -m autograder export --to canvas 02_forward_pass --require-settled"
    done = sh(settle, ok=False)
    assert done.returncode == 2 and f"({AID}: 2222222, cy)" in done.stderr, done.stderr
    assert "nothing was written" in done.stderr and not canvas_csv.exists()
    # settled by hand, as formgrader saves it: cy's endless loop earns nothing; Eve mailed her notebook again, and
    # it holds ada's answers, so she gets every point
    mailed = "Your upload was damaged; graded from the copy you mailed."
    assert _settle_by_hand(clone, lambda s, g: float(g.max_score) if s == "2222222" else 0.0,
                           {"2222222": mailed}).keys() == {"2222222", "cy"}

    # 5-7: feedback, the Canvas CSV, the report
    sh("(cd autograder/course && nbgrader generate_feedback 02_forward_pass)")
    page = (clone / "autograder/course/feedback/2222222" / AID / f"{AID}.html").read_text()
    assert "could not be read" in page and mailed in page
    done = sh(settle)
    assert "manual grading" not in done.stderr and "wrote " in done.stdout, done.stderr
    with (clone / f"autograder/course/results/canvas-{AID}.csv").open(newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", AID]
    assert canvas[1][0].strip() == "Points Possible" and float(canvas[1][5]) == first["ada"]["max_score"]
    grades = {row[3]: row[5] for row in canvas[2:]}
    assert sorted(grades) == ["2222222", "777", "ada", "bob", "cy", "dee"]
    assert float(grades["ada"]) == float(grades["777"]) == float(grades["2222222"]) == first["ada"]["max_score"]
    assert float(grades["cy"]) == first["cy"]["score"]
    assert float(grades["dee"]) == pytest.approx(0.9 * first["ada"]["max_score"])  # dee's answers are ada's: less 10 %
    sh("python -m autograder report 02_forward_pass --results autograder/course/results "
       "--out autograder/course/results/report.html --csv autograder/course/results/report.csv")
    assert (clone / "autograder/course/results/report-answers.csv").is_file()

    # nothing of the students' is visible to git
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
