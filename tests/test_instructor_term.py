"""An instructor's term, pasted from autograder/README.md into a fresh clone.

The first test walks a whole term of Blackboard downloads: release, the course's zone set, collect (times to the
second, an upload name that tries to pass for a classmate's newest attempt), a wrong assignment id refused, a due
date set, grade a class of three (one answer loops forever), collect a second download (a late attempt, a `\\`
attack on a classmate's file, a truncated notebook) and grade only the new ones (the late penalty on the terminal,
grades.csv and the export alike), regrade one student, see the export refuse while submissions need manual
grading, settle them by hand as formgrader saves a score, write the feedback (the unreadable notebook's page
without the instructor's note), export for Blackboard, report; every file of the students' the owner's only, and
`git status` showing nothing of theirs.

The second walks each LMS from its download to the file its import reads: the guide's sections 2 ("Collect") and
6 ("Export") pasted in order, the commands of that LMS's subsections and the shared ones, on downloads named as the
LMS's own code names them (tests/lms_formats.py: Canvas's `-1` and `_LATE`, Moodle's folders and a second
download, Blackboard's attempts), then the export read by that LMS's importer's rules.

Every command run here is quoted from the guide (the test checks that it is there, word for word); the test adds
only a short cell time limit, so the endless loop costs seconds.
"""

import contextlib
import csv
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import nbtools
import pytest
from lms_formats import (
    blackboard_import,
    blackboard_name,
    blackboard_receipt,
    canvas_again,
    canvas_import,
    canvas_name,
    moodle_import,
    moodle_name,
)
from nbgrader.api import Gradebook
from run_locks import one_batch

from autograder import REPO_ROOT
from autograder.grading.scoring.gradebook import cell_scores

AID = "02_forward_pass"
NB = f"{AID}.ipynb"
GUIDE = (REPO_ROOT / "autograder" / "README.md").read_text(encoding="utf-8")
SHORT = ["--cell-timeout", "5"]
LOOP = "def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n"
MISSING_B1 = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n"
GRADE = "python -m autograder grade 02_forward_pass autograder/course/submitted --jobs 2"
LMSS = ("Canvas", "Moodle", "Blackboard")
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("instructor-term")]


def _command(line):
    return re.sub(r"\s+#.*$", "", line).strip()


def _guide_lines():
    """Every command line of the guide's bash blocks, comments cut."""
    blocks = re.findall(r"```bash\n(.*?)```", GUIDE, flags=re.S)
    return {_command(line) for block in blocks for line in block.splitlines()}


def _pasted(section, lms):
    """The commands of the guide's `## <section>` an instructor of `lms` pastes, in order: every bash block but
    those under another LMS's `### ` heading."""
    text = GUIDE[GUIDE.index(f"\n## {section}"):]
    text = text[:text.index("\n## ", 4)]
    commands, heading = [], ""
    for part in re.split(r"(```bash\n.*?```)", text, flags=re.S):
        if part.startswith("```bash"):
            if heading not in set(LMSS) - {lms}:
                commands += [_command(line) for line in part[len("```bash\n"):-3].splitlines() if line.strip()]
        else:
            headings = re.findall(r"^### (.+)$", part, flags=re.M)
            heading = headings[-1].strip() if headings else heading
    return commands


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


def _locks_for(line):
    """The run's cores for a `grade` line (its sandboxes beside other tests' would oversubscribe the machine:
    run_locks.py); nothing for any other command."""
    return one_batch() if "autograder grade" in line else contextlib.nullcontext()


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
        with _locks_for(line):
            done = subprocess.run(["bash", "-c", line], cwd=self.clone, env=self.env, capture_output=True,
                                  text=True, timeout=1800)
        if ok:
            assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        return done


def _zip(path, files):
    """A download: {name in the zip: a notebook or text}."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in files.items():
            zf.writestr(name, content if isinstance(content, str) else nbformat.writes(content))


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


def _loose(clone):
    """Every file or folder of the students' data in the clone that its group or others may read."""
    course = clone / "autograder/course"
    tops = [course / n for n in ("submitted", "autograded", "feedback", "downloaded", "results", "gradebook.db")]
    out = []
    for top in (t for t in tops if t.exists()):
        for here, _, files in os.walk(top):
            for path in [here] + [os.path.join(here, f) for f in files]:
                if stat.S_IMODE(os.lstat(path).st_mode) & 0o077:
                    out.append(f"{path}: {stat.filemode(os.lstat(path).st_mode)}")
    return out


def _git_status(clone):
    """What git sees changed: the course's nbgrader_config.py (the zone the guide sets), and nothing else."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone,
                            capture_output=True, text=True, check=True).stdout
    return [line for line in status.splitlines() if line != " M autograder/course/nbgrader_config.py"]


def _bb(student, stamp, upload=NB):
    return blackboard_name("FFN02", student, stamp, upload)


def test_a_term_from_a_fresh_clone(tmp_path):
    clone = _fresh_clone(tmp_path / "clone")
    home = tmp_path / "home"
    sh = Shell(clone, home)
    results = clone / "autograder/course/results" / AID

    # 0-1: build, release; the course's zone (its Blackboard's), as section 2 says
    assert "python -m autograder build 02_forward_pass" in GUIDE
    for aid in (AID, "03_residual_layernorm"):  # 03 only to be named by mistake below
        done = subprocess.run([sys.executable, "-m", "autograder", "build", aid], cwd=clone, env=sh.env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
    sh("(cd autograder/course && nbgrader generate_assignment 02_forward_pass)")
    sh('(cd autograder/course && nbgrader db assignment add 02_forward_pass --duedate="2026-12-03 17:00:00 '
       'Europe/Berlin")')  # 16:00 UTC: ada, bob and cy on time, dee (below) 16 h late
    sh("echo 'c.LmsCollector.timezone = \"Europe/Berlin\"' >> autograder/course/nbgrader_config.py")
    released = nbformat.read(clone / f"autograder/course/release/{AID}/{NB}", as_version=4)
    right = nbtools.completed_learner(AID)

    # 2: a Blackboard download of three students, collected as the guide says; bob also uploads an empty notebook
    # under a name that tries to pass for ada's newest attempt
    _zip(home / "Downloads/submissions.zip", {
        _bb("ada", "2026-12-02-10-00-42"): right, blackboard_receipt("FFN02", "ada", "2026-12-02-10-00-42"): "ok",
        _bb("bob", "2026-12-02-11-15-23"): nbtools.with_answers(right, {"ffn_forward": MISSING_B1}),
        _bb("bob", "2026-12-02-11-15-23", f"x_ada_attempt_2099-12-31-23-59-59_{NB}"): nbtools.learner(AID),
        _bb("cy", "2026-12-02-12-00-59"): nbtools.with_answers(right, {"ffn_forward": LOOP})})
    assert nbtools.answer_ids(released) == nbtools.answer_ids(right)
    sh("mkdir -p autograder/course/downloaded/02_forward_pass/archive")
    sh("cp ~/Downloads/submissions.zip autograder/course/downloaded/02_forward_pass/archive/")
    done = sh("(cd autograder/course && nbgrader zip_collect 02_forward_pass)")
    assert "Skipped submission with no match information" not in done.stderr
    submitted = clone / "autograder/course/submitted"
    assert {s: (submitted / s / AID / "timestamp.txt").read_text() for s in ("ada", "bob", "cy")} == {
        "ada": "2026-12-02 09:00:42", "bob": "2026-12-02 10:15:23", "cy": "2026-12-02 11:00:59"}  # Berlin's, in UTC
    assert (submitted / "bob" / AID / f"x_ada_attempt_2099-12-31-23-59-59_{NB}").is_file()

    # a wrong assignment id that exists: refused, naming what the folder holds, nothing written
    done = subprocess.run(["bash", "-c", GRADE.replace(AID, "03_residual_layernorm", 1)], cwd=clone, env=sh.env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 2 and "no submission in" in done.stderr and "'02_forward_pass' (3)" in done.stderr
    assert not (clone / "autograder/course/release/03_residual_layernorm").exists()
    assert not (clone / "autograder/course/results/03_residual_layernorm").exists()
    assert not [c for c in cell_scores(clone / "autograder/course/gradebook.db") if c.assignment != AID]

    # 3: grade the class; the endless loop is a timeout, the progress line names the students
    done = sh(GRADE, *SHORT)
    assert "3/3 students" in done.stderr
    assert "02_forward_pass was due 2026-12-03 16:00:00 UTC (2026-12-03 17:00:00 in Europe/Berlin); nobody late" \
        in done.stdout
    first = {s: json.loads((results / f"{s}.json").read_text()) for s in ("ada", "bob", "cy")}
    assert first["ada"]["status"] == "graded" and first["ada"]["score"] == first["ada"]["max_score"] > 0
    assert first["bob"]["status"] == "graded" and 0 < first["bob"]["score"] < first["bob"]["max_score"]
    assert first["cy"]["status"] == "timeout" and first["cy"]["score"] < first["cy"]["max_score"]
    full = first["ada"]["max_score"]
    rows = _grades(clone)
    assert sorted(rows) == ["ada", "bob", "cy"] and rows["cy"]["status"] == "timeout"
    assert float(rows["bob"]["score"]) == first["bob"]["score"] and "ffn_forward" in rows["bob"]
    stamps = {s: (results / f"{s}.json").stat().st_mtime_ns for s in first}

    # a second download beside the first: dee late, uploading too a file named with a `\` and ada's name and a time
    # in 2099; eve's notebook truncated. Collected, and only these two graded; the class's CSV still holds everyone
    truncated = nbformat.writes(right)[:700]
    _zip(home / "Downloads/submissions.zip", {
        _bb("dee", "2026-12-04-09-00-31"): right,
        _bb("dee", "2026-12-04-09-00-31", f"x\\FFN02_ada_attempt_2099-12-31-23-59-59_{NB}"): nbtools.learner(AID),
        _bb("eve", "2026-12-02-15-00-00"): truncated})
    sh("cp ~/Downloads/submissions.zip autograder/course/downloaded/02_forward_pass/archive/later.zip")
    sh("(cd autograder/course && nbgrader zip_collect --force 02_forward_pass)")
    assert sorted(p.name for p in submitted.iterdir()) == ["ada", "bob", "cy", "dee", "eve"]
    assert (submitted / "ada" / AID / "timestamp.txt").read_text() == "2026-12-02 09:00:42"
    assert (submitted / "eve" / AID / NB).read_text() == truncated
    done = sh(GRADE, *SHORT)
    assert "2/2 students" in done.stderr and "3 submission(s) already graded" in done.stderr
    assert {s: (results / f"{s}.json").stat().st_mtime_ns for s in first} == stamps
    rows = _grades(clone)
    assert sorted(rows) == ["ada", "bob", "cy", "dee", "eve"] and rows["dee"]["status"] == "graded"
    assert rows["eve"]["status"] == "unreadable notebook" and float(rows["eve"]["score"]) == 0
    stand_in = clone / "autograder/course/autograded/eve" / AID / NB  # formgrader's page for it
    assert "could not be read" in stand_in.read_text() and "eve.json" in stand_in.read_text()
    assert rows["dee"]["timestamp"] == "2026-12-04 08:00:31"
    # dee is late: the course's plugin takes a tenth of the score (one started day); the terminal says what
    # grades.csv says
    assert "1 late: dee 16 h late (1 started day charged), " in done.stdout
    assert float(rows["dee"]["late_penalty"]) == pytest.approx(0.1 * full)
    assert float(rows["dee"]["grade"]) == pytest.approx(0.9 * full)
    assert f"dee: graded {0.9 * full:g}/{full:g} ({full:g} less {0.1 * full:g} for lateness" in done.stdout
    assert [float(rows[s]["late_penalty"]) for s in ("ada", "bob", "cy", "eve")] == [0] * 4

    # regrade one student: bob alone is graded, the CSV keeps the class
    done = sh("python -m autograder grade 02_forward_pass autograder/course/submitted --student bob --force", *SHORT)
    assert "1/1 students" in done.stderr and (results / "bob.json").stat().st_mtime_ns != stamps["bob"]
    assert sorted(_grades(clone)) == ["ada", "bob", "cy", "dee", "eve"]

    # the export waits for the submissions that need manual grading: cy's timeout and eve's unreadable file
    export = [c for c in _pasted("6. Export the grades", "Blackboard") if "--to blackboard" in c][0]
    exported = clone / f"autograder/course/results/blackboard-{AID}.csv"
    done = sh(export, ok=False)
    assert done.returncode == 2 and f"({AID}: cy, eve)" in done.stderr, done.stderr
    assert "nothing was written" in done.stderr and not exported.exists()
    # settled by hand, as formgrader saves it: cy's endless loop earns nothing; eve mailed her notebook again, and
    # it holds ada's answers, so she gets every point
    mailed = "Your upload was damaged; graded from the copy you mailed."
    assert _settle_by_hand(clone, lambda s, g: float(g.max_score) if s == "eve" else 0.0,
                           {"eve": mailed}).keys() == {"eve", "cy"}

    # 5-7: feedback (eve's page tells her, not the instructor's note), the Blackboard file, the report
    sh("(cd autograder/course && nbgrader generate_feedback 02_forward_pass)")
    page = (clone / "autograder/course/feedback/eve" / AID / f"{AID}.html").read_text()
    assert "could not be read by the grader" in page and mailed in page and "by hand, here" not in page
    done = sh(export)
    assert "manual grading" not in done.stderr and "wrote " in done.stdout, done.stderr
    read = blackboard_import(exported.read_text())
    assert read["columns"] == [("FFN02 [Total Pts: 10 Score] |1234567", "1234567")]
    grades = {user: float(values[0]) for user, values in read["students"].items()}
    assert grades == pytest.approx({"ada": full, "bob": first["bob"]["score"], "cy": first["cy"]["score"],
                                    "dee": 0.9 * full, "eve": full})  # dee's answers are ada's: less 10 %
    sh("python -m autograder report 02_forward_pass --results autograder/course/results "
       "--out autograder/course/results/report.html --csv autograder/course/results/report.csv")
    assert (clone / "autograder/course/results/report-answers.csv").is_file()

    # the students' data: its owner's only, and nothing of it visible to git
    assert _loose(clone) == []
    assert _git_status(clone) == []


# ---------------------------------------------------------------- each LMS, from its download to its import


def _canvas(right, partial):
    """Canvas's downloads: kim resubmits the same name (Canvas: `-1`) late; jane unchanged; josé late, new."""
    first = {canvas_name("Kim, Cyrus", 777, 7700000, NB): partial,
             canvas_name("Smith, Jane", 12345, 7700001, NB): right}
    later = {canvas_name("Kim, Cyrus", 777, 7712031, canvas_again(NB, 1), late=True): right,
             canvas_name("Smith, Jane", 12345, 7700001, NB): right,
             canvas_name("Müller, José", 4242, 7712040, NB, late=True): partial}
    return first, later


def _moodle(right, partial):
    """Moodle's downloads (folders): Ann resubmits, Bo unchanged, Cy new in the later one."""
    first = {moodle_name("Ann Lee", 1034571, NB): partial, moodle_name("Bo_Ray", 1034572, NB): right}
    later = {moodle_name("Ann Lee", 1034571, NB): right, moodle_name("Bo_Ray", 1034572, NB): right,
             moodle_name("Cy Doe", 1034573, NB): partial}
    return first, later


def _blackboard(right, partial):
    """Blackboard's downloads (Berlin): ada on time; bob's second attempt 16 h late, beside a `\\` attack on ada."""
    first = {_bb("ada", "2026-12-02-10-00-42"): right, _bb("bob", "2026-12-02-11-15-23"): partial}
    later = {**first, _bb("bob", "2026-12-04-09-00-31"): right,
             _bb("bob", "2026-12-04-09-00-31", f"x\\FFN02_ada_attempt_2099-12-31-23-59-59_{NB}"): partial,
             blackboard_receipt("FFN02", "bob", "2026-12-04-09-00-31"): "receipt"}
    return first, later


def _check_canvas(clone, rows, full):
    read = canvas_import((clone / f"autograder/course/results/canvas-{AID}.csv").read_text())
    assert read["assignments"] == [("Forward pass", "4711")] and float(read["points"][0]) == full
    by_id = {s["id"]: s for s in read["students"]}
    assert sorted(by_id) == ["12345", "4242", "777"]
    assert {i: float(s["grades"]["Forward pass"]) for i, s in by_id.items()} == {
        i: float(rows[i]["grade"]) for i in by_id}
    assert float(rows["777"]["grade"]) == full  # the newest attachment, "-1", is graded
    assert by_id["777"]["name"] == "kimcyrus" and by_id["4242"]["name"] == "müllerjosé"
    assert {s: rows[s]["lms_marked_late"] for s in rows} == {"777": "yes (canvas)", "4242": "yes (canvas)",
                                                           "12345": ""}


def _check_moodle(clone, rows, full):
    read = moodle_import((clone / f"autograder/course/results/moodle-{AID}.csv").read_text())
    assert sorted(r["participant"] for r in read) == ["1034571", "1034572", "1034573"]
    assert all(r["prefix"] == "Participant " for r in read)
    assert {r["participant"]: float(r["grade"]) for r in read} == {s: float(rows[s]["grade"]) for s in rows}
    assert float(rows["1034571"]["grade"]) == full  # the later download's file
    assert rows["1034572"]["last_name"] == "Bo Ray"


def _check_blackboard(clone, rows, full):
    read = blackboard_import((clone / f"autograder/course/results/blackboard-{AID}.csv").read_text())
    assert read["columns"] == [("FFN02 [Total Pts: 10 Score] |1234567", "1234567")]
    assert {u: float(v[0]) for u, v in read["students"].items() if v[0]} == {
        s: float(rows[s]["grade"]) for s in rows if rows[s]["grade"]}
    assert float(rows["ada"]["grade"]) == full and float(rows["bob"]["grade"]) == pytest.approx(0.9 * full)
    assert rows["bob"]["timestamp"] == "2026-12-04 08:00:31"


@pytest.mark.parametrize("lms", LMSS)
def test_each_lms_from_its_download_to_its_import_as_the_guide_says(tmp_path, lms):
    clone = _fresh_clone(tmp_path / "clone")
    home = tmp_path / "home"
    sh = Shell(clone, home)
    done = subprocess.run([sys.executable, "-m", "autograder", "build", AID], cwd=clone, env=sh.env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    sh("(cd autograder/course && nbgrader generate_assignment 02_forward_pass)")
    right = nbtools.completed_learner(AID)
    first, later = {"Canvas": _canvas, "Moodle": _moodle, "Blackboard": _blackboard}[lms](
        right, nbtools.with_answers(right, {"ffn_forward": MISSING_B1}))
    _zip(home / "Downloads/submissions.zip", first)
    said = ""
    for command in _pasted("2. Collect the submissions", lms):  # in the guide's order
        if "archive/later.zip" in command:  # the second download, after the late work came
            _zip(home / "Downloads/submissions.zip", later)
        said += sh(command).stderr
    assert "Skipped submission with no match information" not in said
    said = sh(GRADE, *SHORT)
    assert "was due 2026-12-03 16:00:00 UTC" in said.stdout
    for command in _pasted("6. Export the grades", lms):
        sh(command)
    rows = _grades(clone)
    full = max(float(r["max_score"]) for r in rows.values())
    {"Canvas": _check_canvas, "Moodle": _check_moodle, "Blackboard": _check_blackboard}[lms](clone, rows, full)
    with Gradebook(f"sqlite:///{clone / 'autograder/course/gradebook.db'}") as gb:  # the names the LMS gave, kept
        named = {s.id: s.last_name for s in gb.students}
    assert all(named.values()) if lms != "Blackboard" else not any(named.values())
    assert _loose(clone) == [] and _git_status(clone) == []
