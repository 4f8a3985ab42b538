"""The instructor's term around the grader: where the class's data lives, what `grade` refuses or skips, the
progress line, the command line, and the exports an LMS takes (each format against a sample of it)."""

import csv
import io
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from lms_formats import blackboard_import, canvas_import, moodle_import

from autograder import COURSE_ROOT, REPO_ROOT
from autograder.grading import course, submissions
from autograder.grading.dispatch import progress
from autograder.grading.gate_out import exports
from autograder.grading.scoring import classbook, ledger
from autograder.report import class_report

DATA_PATHS = ["autograder/course/results/02_forward_pass/grades.csv",
              "autograder/course/results/02_forward_pass/ada.json",
              "autograder/course/results/canvas-02_forward_pass.csv", "autograder/course/results/report.html",
              "autograder/course/downloaded/02_forward_pass/archive/submissions.zip",
              "autograder/course/submitted/ada/02_forward_pass/02_forward_pass.ipynb",
              "autograder/course/autograded/ada/02_forward_pass/02_forward_pass.ipynb",
              "autograder/course/feedback/ada/02_forward_pass/02_forward_pass.html",
              "autograder/course/release/02_forward_pass/02_forward_pass.ipynb", "autograder/course/gradebook.db",
              "autograder/course/.report_salt", "autograder/course/.ledger_key",
              "autograder/course/source/02_forward_pass/02_forward_pass.ipynb",
              "autograder/course/something-new/notes.txt",
              "grading/02_forward_pass/grades.csv", "report.html", "report.csv"]


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


# ---------------------------------------------------------------- the class's data is never in git


def test_the_class_data_is_ignored_and_setup_sh_copies_none_of_it(tmp_path):
    """In a scratch repository with the checkout's .gitignore: the file list deploy/jupyterhub/setup.sh copies
    holds the course's code and sources, and nothing a class produced."""
    _git("init", "-q", cwd=tmp_path)
    shutil.copy(REPO_ROOT / ".gitignore", tmp_path / ".gitignore")
    code = ["autograder/course/nbgrader_config.py", "autograder/course/source/02_forward_pass/02_forward_pass.py",
            "autograder/course/source/02_forward_pass/weights.npz"]
    for rel in DATA_PATHS + code:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    setup = (REPO_ROOT / "deploy/jupyterhub/setup.sh").read_text()
    assert "ls-files -z --cached --others --exclude-standard" in setup  # the listing this test repeats
    listed = set(_git("ls-files", "--cached", "--others", "--exclude-standard", cwd=tmp_path).split())
    assert listed == {".gitignore", *code}
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=tmp_path).split()[1::2] == sorted(listed)


def test_the_default_results_folder_is_in_the_ignored_course_folder():
    config = course.load_config()
    default = classbook.results_dir(config, "02_forward_pass")
    assert default == COURSE_ROOT / "results" / "02_forward_pass"
    rel = (default / "grades.csv").relative_to(REPO_ROOT)
    assert subprocess.run(["git", "check-ignore", "-q", str(rel)], cwd=REPO_ROOT).returncode == 0


# ---------------------------------------------------------------- what `grade` refuses, names and skips


def _submissions(root, layout):
    """{student: {relative path: text}} as files under root."""
    for student, files in layout.items():
        for rel, text in files.items():
            path = root / student / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


def test_an_assignment_no_submission_holds_is_refused_naming_what_was_found(tmp_path):
    root = _submissions(tmp_path, {s: {"02_forward_pass/02_forward_pass.ipynb": "{}"} for s in ("ada", "bo", "cy")})
    found = submissions.find(root, "03_residual_layernorm", tmp_path / "scratch")
    assert [s.folder for s in found] == [None, None, None]
    with pytest.raises(submissions.WrongAssignment) as info:
        submissions.require_assignment(found, "03_residual_layernorm", ["03_residual_layernorm"], root)
    message = str(info.value)
    assert "no submission" in message and "03_residual_layernorm.ipynb" in message
    assert "3 student folder(s)" in message and "'02_forward_pass' (3)" in message
    assert "Check the assignment id" in message
    found = submissions.find(root, "02_forward_pass", tmp_path / "scratch")
    submissions.require_assignment(found, "02_forward_pass", ["02_forward_pass"], root)  # no error


def test_a_wrong_folder_is_named_as_the_folder_not_the_id(tmp_path):
    aid = "02_forward_pass"
    course_root = tmp_path / "course"
    (course_root / "release" / aid).mkdir(parents=True)
    (course_root / "release" / aid / f"{aid}.ipynb").write_text("{}")
    classes = _submissions(tmp_path / "submitted", {s: {f"{aid}/{aid}.ipynb": "{}"} for s in ("ada", "bo")})
    flat = _submissions(tmp_path / "flat", {s: {f"{aid}.ipynb": "{}"} for s in ("ada", "bo")})
    (tmp_path / "empty").mkdir()
    cases = {classes / "ada": "looks like one student's folder", flat: "hold no assignment folder",
             tmp_path / "empty": "holds no student folders", course_root: "is the course's root, not the submissions",
             course_root / "release": "is the course's release/ folder"}
    for folder, why in cases.items():
        found = submissions.find(folder, aid, tmp_path / "scratch")
        with pytest.raises(submissions.WrongAssignment) as info:
            submissions.require_assignment(found, aid, [aid], folder, course_root)
        message = str(info.value)
        assert why in message and "assignment id" not in message and "nothing was graded or written" in message, (
            folder, message)
    found = submissions.find(classes, aid, tmp_path / "scratch")
    submissions.require_assignment(found, aid, [aid], classes, course_root)  # the class's folder: no error
    with pytest.raises(submissions.WrongAssignment, match=r"no file in \S*download.zip is a submission of "):
        submissions.require_assignment([], aid, [aid], tmp_path / "empty", course_root, tmp_path / "download.zip")


@pytest.mark.grading
def test_a_wrong_assignment_id_leaves_nothing_behind(tmp_path):
    import nbtools
    from adversarial import grading

    from autograder.grading import grade as grade_mod

    root = grading.make_course(tmp_path / "course", "02_forward_pass")
    grading.write_submissions(tmp_path / "submitted", "02_forward_pass", {"bob": nbtools.completed_learner(
        "02_forward_pass")})
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    with pytest.raises(FileNotFoundError, match="'02_forward_pas' is neither in the gradebook nor in"):
        grade_mod.grade("02_forward_pas", tmp_path / "submitted", course_root=root, unsafe=True)  # runs no code
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # no results/02_forward_pas/ either


@pytest.mark.grading
def test_a_source_built_from_an_older_authored_py_is_refused_before_grading(tmp_path, monkeypatch):
    """The built source notebook is git-ignored: after a pull that changes <id>.py, grading against the old build
    would use the old hidden tests without a word."""
    import nbtools
    from adversarial import grading

    from autograder.authoring import build
    from autograder.grading import grade as grade_mod

    aid = "02_forward_pass"
    root = grading.make_course(tmp_path / "course", aid)
    authored = root / "source" / aid / f"{aid}.py"
    shutil.copy(COURSE_ROOT / "source" / aid / f"{aid}.py", authored)
    monkeypatch.setattr(build, "SOURCE_DIR", root / "source")
    monkeypatch.setattr(grade_mod, "COURSE_ROOT", root)
    build.write_sources([aid])
    assert build.stale_source(aid) is None
    text = authored.read_text()
    assert text.count("### BEGIN HIDDEN TESTS") >= 1
    authored.write_text(text.replace("### BEGIN HIDDEN TESTS", "### BEGIN HIDDEN TESTS\nassert True", 1))
    grading.write_submissions(tmp_path / "submitted", aid, {"bob": nbtools.completed_learner(aid)})
    with pytest.raises(ValueError, match=rf"built from an older {aid}.py: build it again .*generate_assignment"):
        grade_mod.grade(aid, tmp_path / "submitted", course_root=root, unsafe=True)  # runs no code
    assert not (root / "results").exists()
    build.write_sources([aid])
    assert build.stale_source(aid) is None


def test_a_near_miss_file_name_is_named(tmp_path):
    folder = tmp_path / "bo" / "02_forward_pass"
    folder.mkdir(parents=True)
    (folder / "02_forward_pass (1).ipynb").write_text("{}")
    message = submissions.missing_message(folder, "02_forward_pass")
    assert message.startswith("no 02_forward_pass.ipynb was submitted")
    assert "'02_forward_pass (1).ipynb'" in message and "named exactly 02_forward_pass.ipynb" in message
    assert submissions.missing_message(None, "02_forward_pass") == "no 02_forward_pass.ipynb was submitted"


def test_the_ledger_knows_unchanged_submissions(tmp_path):
    folder = tmp_path / "ada" / "02_forward_pass"
    folder.mkdir(parents=True)
    (folder / "02_forward_pass.ipynb").write_text('{"cells": []}')
    first = ledger.submission_digest(folder)
    assert first == ledger.submission_digest(folder) and first is not None
    (folder / "timestamp.txt").write_text("2024-05-02 10:00:00\n")  # a late resubmission changes its time stamp
    second = ledger.submission_digest(folder)
    assert second != first
    os.symlink("/etc/passwd", folder / "link")  # never followed: an unreadable entry, not the target's bytes
    assert ledger.submission_digest(folder) not in (first, second)
    assert ledger.submission_digest(None) is None

    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "ada.json").write_text("{}")
    v1, v2 = dict.fromkeys(ledger.PARTS, "1"), dict(dict.fromkeys(ledger.PARTS, "1"), release="2")
    done = {"ada": ledger.entry(first, v1)}
    ledger.save(tmp_path / "out", done)
    assert ledger.load(tmp_path / "out") == done
    assert ledger.why_grade(done, "ada", ledger.entry(first, v1), tmp_path / "out", {"ada"}) is None
    assert ledger.why_grade(done, "ada", ledger.entry(second, v1), tmp_path / "out", {"ada"})  # new files
    assert ledger.why_grade(done, "ada", ledger.entry(first, v2), tmp_path / "out", {"ada"})  # another version
    assert ledger.why_grade(done, "ada", ledger.entry(first, v1), tmp_path / "out", set())  # gone from the gradebook
    (tmp_path / "out" / "ada.json").unlink()
    assert ledger.why_grade(done, "ada", ledger.entry(first, v1), tmp_path / "out", {"ada"})  # its result deleted


# ---------------------------------------------------------------- the progress line ticks


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_progress_line_ticks_and_names_who_is_running():
    clock, out = _Clock(), _Terminal()
    bar = progress.Progress(3, stream=out, clock=clock)
    bar.advance("ada: graded 10/10")
    bar.advance("bo: graded 8/10")
    clock.now = 10.0
    frozen = out.getvalue()
    for t in (11.0, 12.0, 400.0):  # a student stuck in a loop: the line goes on, its time grows
        clock.now = t
        bar.running([("cy", t - 9.0, "notebook run, test_ffn_forward")])
    ticks = out.getvalue()[len(frozen):].split("\r\x1b[2K")[1:]
    assert len(ticks) == 3
    assert "running: cy: notebook run, test_ffn_forward (0:02)" in ticks[0] and "0:11 elapsed" in ticks[0]
    assert "running: cy: notebook run, test_ffn_forward (6:31)" in ticks[2] and "6:40 elapsed" in ticks[2] \
        and "2/3 students" in ticks[2]


def test_in_a_log_the_progress_line_ticks_every_half_minute():
    clock, out = _Clock(), io.StringIO()
    bar = progress.Progress(2, stream=out, clock=clock)
    bar.show()
    for t in range(1, 95):
        clock.now = float(t)
        bar.running([("cy", float(t), "clean re-run, a cell below ffn_forward"), ("dan", 1.0, "")])
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 + 3  # at 30, 60 and 90 s
    assert lines[-1].endswith("running: cy: clean re-run, a cell below ffn_forward (1:30); dan (0:01)")


# ---------------------------------------------------------------- the command line


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True, timeout=300)


def test_every_autograder_command_of_the_guide_runs_from_the_repository_root():
    """The guide says to run everything from the repository root: each `python -m autograder` line of its bash
    blocks parses, and each path it names is there from the root, or in autograder/course/ (the class data the
    steps above it make), or the instructor's own (~)."""
    import re
    import shlex

    from autograder.__main__ import _parser

    guide = (REPO_ROOT / "autograder" / "README.md").read_text(encoding="utf-8")
    lines = [re.sub(r"\s+#.*$", "", line).strip() for block in re.findall(r"```bash\n(.*?)```", guide, flags=re.S)
             for line in block.splitlines()]
    commands = [shlex.split(line)[3:] for line in lines if line.startswith("python -m autograder ")]
    assert len(commands) >= 8 and any("--cluster" in c for c in commands)
    for args in commands:
        _parser().parse_args(args)  # an unknown option or a missing argument would end the test here
        for arg in args:
            if "/" in arg and "://" not in arg and not arg.startswith(("~", "-")):
                assert (REPO_ROOT / arg).exists() or Path(arg).is_relative_to("autograder/course"), (arg, args)


def test_version_help_and_jobs():
    version = _cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("python -m autograder 1.")
    top = _cli("--help").stdout
    for command in ("build", "lab", "grade", "check", "export", "report"):
        assert f"    {command} " in top, command
    zero = _cli("grade", "02_forward_pass", "submitted", "--jobs", "0")
    assert zero.returncode == 2 and "expected 1 or more students graded at once, got 0" in zero.stderr
    word = _cli("grade", "02_forward_pass", "submitted", "--jobs", "two")
    assert word.returncode == 2 and "expected a whole number" in word.stderr and "'two'" in word.stderr


def test_make_help_lists_the_commands():
    done = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert {"setup", "lab", "instructor", "course", "test", "lint", "help"} <= set(names)


# ---------------------------------------------------------------- one score: the terminal, grades.csv, the exports


class _Graded:
    """A backend whose grading is done already: each student's reply as a worker sends it (no kernel starts)."""

    def __init__(self, scratch, replies):
        self.scratch, self.replies = Path(scratch), replies

    def run(self, queue, again, tick):
        for submission in queue:
            yield submission, {"result": self.replies[submission.student]}


@pytest.mark.grading
def test_after_a_hand_score_the_terminal_says_what_grades_csv_and_canvas_say(tmp_path, monkeypatch, capsys):
    import nbtools
    from adversarial import grading

    from autograder.grading import grade as grade_mod
    from autograder.grading.scoring import gradebook, results
    from autograder.schema import CellResult, CellStatus, NotebookResult, Status

    aid = "02_forward_pass"
    root = grading.make_course(tmp_path / "course", aid)
    grading.write_submissions(tmp_path / "submitted", aid, {"bob": nbtools.completed_learner(aid)})
    config = course.load_config(root)
    nb = course.prepare_assignment(config, aid).notebooks[0]
    tests = [c for c in nb.cells if c.grade and not c.solution]
    cells = [CellResult(c.name, nb.exercise_of.get(c.name), 0.0 if c is tests[-1] else float(c.points),
                        float(c.points), CellStatus.FAILED if c is tests[-1] else CellStatus.PASSED) for c in tests]
    auto = sum(c.points for c in cells)
    bob = results.student_result("bob", aid, [NotebookResult(aid, Status.GRADED, auto, nb.max_score, cells)])
    monkeypatch.setattr(grade_mod.pool, "LocalPool", lambda setup, *a: _Graded(setup.scratch, {"bob": bob.to_dict()}))
    grade_mod.grade(aid, tmp_path / "submitted", course_root=root, unsafe=True)  # _Graded: no student code runs
    with gradebook.open_gradebook(config) as gb:  # formgrader: one more point by hand on the failed test
        gb.find_grade(tests[-1].name, aid, aid, "bob").manual_score = 1.0
        gb.db.commit()
    capsys.readouterr()
    grade_mod.grade(aid, tmp_path / "submitted", course_root=root, force=True, unsafe=True)
    said = capsys.readouterr().out
    top = nb.max_score
    assert f"bob: graded {auto + 1:g}/{top:g} ({auto:g} from the grader, {auto + 1:g} with the scores given by hand)" \
        in said, said
    row = next(csv.DictReader(io.StringIO((root / "results" / aid / "grades.csv").read_text())))
    assert float(row["score"]) == float(row["grade"]) == auto + 1
    canvas = _read(exports.canvas_csv([classbook.sheet(config, aid)], id_column="sis_login_id"))
    assert float(canvas[2][5]) == auto + 1


# ---------------------------------------------------------------- the exports, read as each LMS's import reads them

# Canvas's gradebook export, which its import takes back (the identity columns, a Points Possible row, then one
# column per assignment named "<name> (<id>)"), as Canvas's guide "How do I import grades in the Gradebook?" shows.
CANVAS_SAMPLE = """Student,ID,SIS User ID,SIS Login ID,Section,Assignment 1 (4711)
    Points Possible,,,,,10.00
"Doe, Jane",1001,S1001,jdoe,Section A,8.50
"""


def _sheet(ids=("ada", "bo", "cy")):
    rows = [classbook.Row(ids[0], "Ada", "Lovelace", "ada@example.edu", "1001", "graded", 10.0, 10.0, 0.0,
                          "2024-05-02 10:00:00", {"ffn_forward": 6.0, "relu": 4.0}),
            classbook.Row(ids[1], "=HYPERLINK(\"x\")", "", "", "", "timeout", 4.0, 10.0, 1.0, "2024-05-03 09:00:00",
                          {"ffn_forward": 0.0, "relu": 4.0}, seconds_late=3600.0),
            classbook.Row(ids[2], "", "", "", "", classbook.NO_SUBMISSION, None, 10.0, 0.0, "",
                          {"ffn_forward": None, "relu": None})]
    return classbook.Sheet("02_forward_pass", 10.0, {"ffn_forward": 6.0, "relu": 4.0}, rows)


def _read(text):
    return list(csv.reader(io.StringIO(text)))


def test_canvas_reads_the_canvas_export_by_the_download_s_user_ids():
    """Canvas's importer (lms_formats.canvas_import: gradebook_importer.rb's rules) takes our file as it takes its own
    export, finds each student by the ID column (the Canvas user id the download named) and fills the assignment
    named "<name> (<id>)"; an id that is no Canvas user id is refused unless told which column holds it."""
    assert canvas_import(CANVAS_SAMPLE)["assignments"] == [("Assignment 1", "4711")]  # the sample, as Canvas reads it
    ours = canvas_import(exports.canvas_csv([_sheet(("1001", "1002", "1003"))], {"02_forward_pass": "Forward (4711)"}))
    assert ours["assignments"] == [("Forward", "4711")] and float(ours["points"][0]) == 10.0
    students = {s["id"]: s for s in ours["students"]}
    assert sorted(students) == ["1001", "1002", "1003"] and students["1001"]["name"] == "Ada Lovelace"
    assert float(students["1001"]["grades"]["Forward"]) == 10.0
    assert float(students["1002"]["grades"]["Forward"]) == 3.0  # the late penalty is taken off
    assert students["1003"]["grades"]["Forward"] == ""  # nothing submitted: Canvas leaves its grade as it is
    with pytest.raises(ValueError, match="no Canvas user ids: ada, bo, cy .* --canvas-id sis_login_id"):
        exports.canvas_csv([_sheet()])
    by_login = canvas_import(exports.canvas_csv([_sheet()], id_column="sis_login_id"))
    assert [s["sis_login_id"] for s in by_login["students"]] == ["ada", "bo", "cy"]
    assert by_login["assignments"] == [("02_forward_pass", None)]  # no id: Canvas matches the title, or adds one
    assert _read(exports.canvas_csv([_sheet()], id_column="sis_login_id"))[3][0] == "'=HYPERLINK(\"x\")"  # text


def test_moodle_reads_the_worksheet_by_participant_ids():
    """Moodle's offline grading worksheet importer (lms_formats.moodle_import: importgradeslib.php's rules) finds
    its three columns and a "Participant <id>" in each row; a student who did not come from Moodle is refused."""
    now = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
    rows = moodle_import(exports.moodle_worksheet(_sheet(("1034571", "1034572", "1034573")), now))
    assert [(r["prefix"], r["participant"], r["grade"]) for r in rows] == [
        ("Participant ", "1034571", "10"), ("Participant ", "1034572", "3")]  # no row for who submitted nothing
    assert all(r["modified"] == now for r in rows)
    with pytest.raises(ValueError, match="no Moodle participant ids: ada, bo"):
        exports.moodle_worksheet(_sheet())
    with pytest.raises(ValueError, match="Moodle's worksheet has none"):
        exports.render("moodle", [_sheet()], {"02_forward_pass": "x"})


def test_blackboard_reads_the_grade_centre_upload_by_username():
    column = "FFN02 [Total Pts: 10 Score] |123"  # as Blackboard's own download heads the column
    ours = blackboard_import(exports.blackboard_csv([_sheet()], {"02_forward_pass": column}))
    assert ours["columns"] == [("FFN02 [Total Pts: 10 Score] |123", "123")]
    assert ours["students"] == {"ada": ["10"], "bo": ["3"], "cy": [""]}
    assert blackboard_import(exports.blackboard_csv([_sheet()]))["columns"] == [("02_forward_pass", None)]


def test_the_per_exercise_export_has_one_row_per_student():
    ours = list(csv.DictReader(io.StringIO(exports.exercises_csv(_sheet()))))
    assert [r["student_id"] for r in ours] == ["ada", "bo", "cy"]
    assert list(ours[0])[-2:] == ["ffn_forward", "relu"]
    assert [(r["status"], r["score"], r["grade"], r["ffn_forward"], r["relu"]) for r in ours] == [
        ("graded", "10", "10", "6", "4"), ("timeout", "4", "3", "0", "4"), ("no submission", "", "", "", "")]
    assert ours[1]["first_name"] == "'=HYPERLINK(\"x\")"
    nameless = _sheet()
    nameless.rows = [r for r in nameless.rows if r.student == "cy"]
    assert "first_name" not in exports.exercises_csv(nameless).splitlines()[0]  # no empty name columns


def test_the_export_command_refuses_bad_names():
    with pytest.raises(ValueError, match="expected --name ASSIGNMENT=COLUMN"):
        exports._names(["02_forward_pass"])
    with pytest.raises(ValueError, match="takes one assignment"):
        exports.render("exercises", [_sheet(), _sheet()])


# ---------------------------------------------------------------- the report's two tables, two files


def test_the_report_csv_is_two_files_of_one_table_each(tmp_path):
    class Match:
        grade_id, student, other, score = "ffn_forward", "bo", None, 0.97

    class Look:
        assignment, matches = "02_forward_pass", [Match()]

    class_report.write_csv([], tmp_path / "report.csv", [Look()])
    table = list(csv.reader((tmp_path / "report.csv").open()))
    answers = list(csv.DictReader((tmp_path / "report-answers.csv").open()))
    assert table == [list(class_report.CSV_COLUMNS)] and "student" not in table[0]
    assert answers == [{"assignment": "02_forward_pass", "exercise": "ffn_forward", "student": "bo",
                        "compared_with": class_report.SOLUTION, "similarity": "0.9700"}]
    assert Path(class_report.answers_path("out/r.csv")) == Path("out/r-answers.csv")
