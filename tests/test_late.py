"""Late work and one grade everywhere: a due date set with nbgrader's own command, the course's penalty plugin (a share
per day, capped), the grade after the penalty the same on the terminal, the page, grades.csv, the exports and the
report; the due date said on every run; a new due date applied without grading again; what the LMS said of each
student (names, Canvas's _LATE) kept; student data its owner's only; a hand-settled unreadable notebook replaced.

No kernel runs here. `grade` runs as the instructor runs it, but the grading of each student (the workers, the
sandbox) is replaced by a stand-in that publishes given marks through grade's own publishing: what is tested is
what happens around the grading, from each student's timestamp.txt and the gradebook's due date.
"""

import csv
import io
import json
import os
import shutil
import stat
import zipfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import nbtools
import pytest
from adversarial import grading
from lms_formats import blackboard_import, blackboard_name, canvas_import, canvas_name
from traitlets import TraitError
from traitlets.config import Config

from autograder.__main__ import main as autograder_main
from autograder.grading import course, grade
from autograder.grading.gate_out import exports, feedback
from autograder.grading.scoring import classbook, gradebook, ledger, results
from autograder.grading.scoring.late import DAY, SharePerDayLate
from autograder.report import class_report
from autograder.schema import CellResult, CellStatus, NotebookResult, Status

AID = "02_forward_pass"
DUE = "2026-12-01 17:00:00 Europe/Berlin"  # 16:00 UTC: Berlin is an hour ahead of UTC in winter
# timestamp.txt of each student, as the intake writes it (UTC, no zone) or as nbgrader's exchange does (a zone)
STAMPS = {"ada": "2026-12-01 15:59:59",  # a second before the due date: on time
          "bob": "2026-12-01 16:30:00",  # half an hour late (on time if the due date's zone were ignored)
          "cy": "2026-12-03 17:30:00.000000 CET",  # 16:30 UTC two days later: 2 days 30 min late, 3 started days
          "dee": "2026-12-09 12:00:00"}  # 7 days 20 h late: 8 days, over the cap
SHARE = {"ada": 1.0, "bob": 1.0, "cy": 0.5, "dee": 1.0}  # the share of the points each is given (else all)
UNREADABLE = set()  # students whose notebook the stand-in finds unreadable


def _marks(model, submission):
    """The stand-in's result for `submission`: SHARE of every test cell's points, and its timestamp.txt."""
    if submission.student in UNREADABLE:
        nbs = [results.empty_notebook(nb, "unreadable notebook", "not JSON") for nb in model.notebooks]
        return results.student_result(submission.student, model.name, nbs).to_dict()
    notebooks = []
    for nb in model.notebooks:
        share = SHARE.get(submission.student, 1.0)
        cells = [CellResult(c.name, nb.exercise_of.get(c.name), share * c.points, float(c.points),
                            CellStatus.PASSED if share == 1 else CellStatus.PARTIAL, notebook=nb.name)
                 for c in nb.cells if c.grade and not c.solution]
        notebooks.append(NotebookResult(nb.name, Status.GRADED, sum(c.points for c in cells), nb.max_score, cells))
    stamp_file = submission.folder / "timestamp.txt"
    stamp = stamp_file.read_text(encoding="utf-8").strip() if stamp_file.exists() else None  # as the worker reads it
    return results.student_result(submission.student, model.name, notebooks, timestamp=stamp).to_dict()


class _StandIn:
    """The grading backend (pool.LocalPool), replaced: each student's reply as a worker would send it, from _marks;
    everything around it (the driver, publishing, the terminal) runs as in a real run."""

    def __init__(self, setup, jobs, timeout, log_dir, model):
        self.scratch, self.model = Path(setup.scratch), model

    def run(self, queue, again, tick):
        for submission in queue:
            yield submission, {"result": _marks(self.model, submission)}


def _no_grading(*args, **kwargs):
    raise AssertionError("a grading run started")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """A scratch course of 02 with a due date set by nbgrader's command, four submissions graded (by the stand-in)."""
    tmp = tmp_path_factory.mktemp("late")
    root = grading.make_course(tmp / "course", AID)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write('\nc.LmsCollector.timezone = "Europe/Berlin"\n')  # the course's zone
    done = nbtools.nbgrader("db", "assignment", "add", AID, f"--duedate={DUE}", cwd=root)
    assert done.returncode == 0, done.stderr
    learner = nbtools.learner(AID)
    grading.write_submissions(tmp / "submitted", AID, dict.fromkeys(STAMPS, learner))
    for student, stamp in STAMPS.items():
        (tmp / "submitted" / student / AID / "timestamp.txt").write_text(stamp, encoding="utf-8")
    graded = _grade(root, tmp / "submitted", tmp / "results")
    assert sorted(r["student"] for r in graded) == sorted(STAMPS)
    return root, tmp / "submitted", tmp / "results", nbformat.reads(nbformat.writes(learner), as_version=4)


def _grade(root, submitted, results_dir, **kwargs):
    """`grade` as the instructor runs it, its grading by the stand-in (no kernel)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grade, "_worker_setup", lambda config, model, scratch, *a, **k: SimpleNamespace(scratch=scratch))
        mp.setattr(grade.pool, "LocalPool", _StandIn)
        return grade.grade(AID, submitted, results_dir, course_root=root, unsafe=True, **kwargs)


def _grades_csv(results_dir):
    return {row["student_id"]: row for row in csv.DictReader(io.StringIO((results_dir / "grades.csv").read_text()))}


def _export(root, to, tmp_path, *extra):
    out = tmp_path / f"{to}.csv"
    assert autograder_main(["export", AID, "--to", to, "--course", str(root), "--out", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8")


def _canvas(root, tmp_path):
    """{SIS Login ID: grade} as Canvas's importer reads the export (the term's ids are logins, not Canvas ids)."""
    read = canvas_import(_export(root, "canvas", tmp_path, "--canvas-id", "sis_login_id"))
    return read, {s["sis_login_id"]: float(s["grades"][AID]) for s in read["students"]}


def _regrade(root, submitted, results_dir, capsys):
    """`grade` again, failing if it starts grading anyone; what it said."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grade, "_worker_setup", _no_grading)
        mp.setattr(grade, "_grade_found", _no_grading)
        assert grade.grade(AID, submitted, results_dir, course_root=root, unsafe=True) == []
    return capsys.readouterr().out


def _set_due(root, due):
    done = nbtools.nbgrader("db", "assignment", "add", AID, f"--duedate={due}", cwd=root)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- the course's plugin


def test_a_share_per_started_day_up_to_the_cap():
    plugin = SharePerDayLate(config=Config({"SharePerDayLate": {"per_day": 0.1, "cap": 0.5}}))
    assert plugin.late_submission_penalty("s", 10.0, 0) == 0.0
    assert plugin.late_submission_penalty("s", 10.0, 1) == 1.0  # a second late: a started day
    assert plugin.late_submission_penalty("s", 10.0, DAY) == 1.0
    assert plugin.late_submission_penalty("s", 10.0, DAY + 1) == 2.0
    assert plugin.late_submission_penalty("s", 10.0, 3 * DAY) == 3.0  # 0.3 of 10, not 3.0000000000000004
    assert plugin.late_submission_penalty("s", 8.0, 5 * DAY) == 4.0  # the cap reached
    assert plugin.late_submission_penalty("s", 8.0, 40 * DAY) == 4.0  # and held
    assert plugin.late_submission_penalty("s", 0.0, 2 * DAY) == 0.0
    whole = SharePerDayLate(config=Config({"SharePerDayLate": {"per_day": 0.25, "cap": 1.0}}))
    assert whole.late_submission_penalty("s", 6.0, 10 * DAY) == 6.0


@pytest.mark.parametrize("name, value", [("per_day", 10), ("cap", -0.5), ("cap", 50)])
def test_a_share_outside_0_to_1_is_refused_saying_what_was_expected(name, value):
    with pytest.raises(TraitError) as info:
        SharePerDayLate(config=Config({"SharePerDayLate": {name: value}}))
    assert f"SharePerDayLate.{name}" in str(info.value) and "from 0 to 1" in str(info.value)
    assert repr(value) in str(info.value)


def test_the_course_configures_nbgraders_late_penalties_with_it():
    config = course.load_config()
    assert config.AssignLatePenalties.plugin_class == "autograder.grading.scoring.late.SharePerDayLate"
    assert 0 < config.SharePerDayLate.per_day <= config.SharePerDayLate.cap <= 1


# ---------------------------------------------------------------- from timestamp.txt to grades.csv and the LMS


def test_the_penalty_reaches_grades_csv_canvas_and_moodle(term, tmp_path):
    root, _, results_dir, _ = term
    rows = _grades_csv(results_dir)
    max_score = float(rows["ada"]["max_score"])
    assert max_score >= 10
    expected = {"ada": (max_score, 0.0),  # on time, by a second
                "bob": (max_score, 0.1 * max_score),  # half an hour late in UTC: one started day
                "cy": (max_score / 2, 0.3 * max_score / 2),  # 3 started days, of the half she scored
                "dee": (max_score, 0.5 * max_score)}  # 8 days: the cap
    for student, (score, penalty) in expected.items():
        row = rows[student]
        assert (float(row["score"]), float(row["late_penalty"])) == pytest.approx((score, penalty), abs=1e-4), row
        assert float(row["grade"]) == pytest.approx(score - penalty, abs=1e-4)
    assert rows["cy"]["timestamp"] == "2026-12-03 16:30:00"  # CET read as such, kept in UTC
    read, by_login = _canvas(root, tmp_path)
    assert float(read["points"][0]) == max_score
    blackboard = blackboard_import(_export(root, "blackboard", tmp_path))["students"]
    for student, (score, penalty) in expected.items():
        assert by_login[student] == pytest.approx(score - penalty, abs=1e-4)
        assert float(blackboard[student][0]) == pytest.approx(score - penalty, abs=1e-4)


def test_the_gradebook_formgrader_reads_holds_the_same_penalty(term):
    root, _, results_dir, _ = term
    rows = _grades_csv(results_dir)
    with gradebook.open_gradebook(course.load_config(root)) as gb:
        held = {s: gb.find_submission(AID, s).late_submission_penalty for s in STAMPS}
    assert held == pytest.approx({s: float(rows[s]["late_penalty"]) for s in STAMPS}, abs=1e-4)
    assert held["ada"] == 0 and held["bob"] > 0


def test_publishing_names_the_late_ones_and_what_they_lost(term, capsys):
    root, submitted, results_dir, _ = term
    said = _regrade(root, submitted, results_dir, capsys)
    assert (f"{AID} was due 2026-12-01 16:00:00 UTC (2026-12-01 17:00:00 in Europe/Berlin); 3 late: bob 30 min late "
            "(1 started day charged), 1 point(s) off") in said
    assert "cy 2 days late (3 started days charged), 1.5 point(s) off" in said
    assert "dee 7 days 20 h late (8 started days charged), 5 point(s) off" in said
    assert "ada" not in said.split("late:")[1]


# ---------------------------------------------------------------- a new due date: no grading, new penalties


def test_a_new_due_date_changes_the_penalties_and_grades_nobody_again(term, capsys, tmp_path):
    root, submitted, results_dir, _ = term
    config = course.load_config(root)
    model = course.read_assignment(config.CourseDirectory.db_url, AID)
    before = ledger.load(results_dir)
    try:
        _set_due(root, "2026-12-02 16:00:00 UTC")  # a day later: bob on time, cy 2 started days, dee 7
        said = _regrade(root, submitted, results_dir, capsys)
        assert "nothing new to grade" in said and "graded again" not in said
        assert ledger.load(results_dir) == before  # the ledger's course version holds no due date
        assert model.duedate != course.read_assignment(config.CourseDirectory.db_url, AID).duedate
        rows = _grades_csv(results_dir)
        full = float(rows["ada"]["max_score"])
        assert {s: float(rows[s]["late_penalty"]) for s in STAMPS} == pytest.approx(
            {"ada": 0.0, "bob": 0.0, "cy": 0.2 * full / 2, "dee": 0.5 * full}, abs=1e-4)
        canvas = _canvas(root, tmp_path)[1]
        assert canvas["bob"] == full and canvas["cy"] == pytest.approx(0.8 * full / 2, abs=1e-4)
        _set_due(root, "2026-12-10 00:00:00 UTC")  # after everyone: no penalty left anywhere, still no grading
        said = _regrade(root, submitted, results_dir, capsys)
        assert f"{AID} was due 2026-12-10 00:00:00 UTC (2026-12-10 01:00:00 in Europe/Berlin); nobody late" in said
        assert all(float(r["late_penalty"]) == 0 for r in _grades_csv(results_dir).values())
        assert _canvas(root, tmp_path)[1] == pytest.approx(
            {"ada": full, "bob": full, "cy": full / 2, "dee": full}, abs=1e-4)
    finally:
        _set_due(root, DUE)
        _regrade(root, submitted, results_dir, capsys)


def test_a_score_by_hand_changes_a_share_of_it(term, tmp_path):
    """The penalty is a share of the score as it stands: an instructor's score in formgrader changes it too."""
    root, _, results_dir, _ = term
    config = course.load_config(root)
    with gradebook.open_gradebook(config) as gb:
        grades = gb.find_submission_notebook(AID, AID, "bob").grades
        first, old = grades[0], grades[0].manual_score
        first.manual_score = 0.0
        gb.db.commit()
        lost = float(first.max_score)
    try:
        sheet = classbook.sheet(config, AID, results_dir)
        bob = next(r for r in sheet.rows if r.student == "bob")
        assert bob.score == pytest.approx(sheet.max_score - lost)
        assert bob.late_penalty == pytest.approx(0.1 * (sheet.max_score - lost))
    finally:
        with gradebook.open_gradebook(config) as gb:
            gb.find_submission_notebook(AID, AID, "bob").grades[0].manual_score = old
            gb.db.commit()
        classbook.sheet(config, AID, results_dir)


def test_without_a_penalty_plugin_the_late_are_named_and_lose_nothing(term, tmp_path, capsys):
    root, submitted, results_dir, _ = term
    config = course.load_config(root)
    config.AssignLatePenalties.plugin_class = "nbgrader.plugins.LateSubmissionPlugin"  # nbgrader's default: none
    try:
        sheet = classbook.sheet(config, AID, results_dir)
        assert all(r.late_penalty == 0 for r in sheet.rows)
        assert [(late.student, late.penalty) for late in sheet.late] == [("bob", None), ("cy", None), ("dee", None)]
        line = exports.late_lines(sheet)[0]
        assert "bob 30 min late (1 started day charged), no penalty" in line
        assert "c.AssignLatePenalties.plugin_class" in line
    finally:
        classbook.sheet(course.load_config(root), AID, results_dir)
    assert json.loads((results_dir / "bob.json").read_text())["timestamp"] == STAMPS["bob"]


def test_a_blackboard_time_in_the_lms_zone_against_a_due_date_in_another(tmp_path):
    """grade given the LMS's zip: the intake reads each time in c.LmsCollector.timezone, timestamp.txt holds it in
    UTC, and the due date (given in Berlin's zone) is compared in UTC: a second either side of it decides."""
    root = grading.make_course(tmp_path / "course", AID)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write('\nc.LmsCollector.timezone = "America/New_York"\n')  # 5 h behind UTC in December
    _set_due(root, "2026-12-01 17:00:00 Europe/Berlin")  # 16:00 UTC, 11:00 in New York
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for student, stamp in {"ada": "2026-12-01-10-59-59", "bob": "2026-12-01-11-00-01"}.items():
            zf.writestr(f"FFN02_{student}_attempt_{stamp}_{AID}.ipynb", nbformat.writes(nbtools.learner(AID)))
    _grade(root, archive, tmp_path / "results")
    rows = _grades_csv(tmp_path / "results")
    assert {s: rows[s]["timestamp"] for s in rows} == {"ada": "2026-12-01 15:59:59", "bob": "2026-12-01 16:00:01"}
    assert float(rows["ada"]["late_penalty"]) == 0 and float(rows["ada"]["grade"]) == float(rows["ada"]["max_score"])
    assert float(rows["bob"]["late_penalty"]) == pytest.approx(0.1 * float(rows["bob"]["max_score"]))


# ---------------------------------------------------------------- one grade everywhere (issue 47, 11)


def _page_grade(results_dir, student):
    """The grade the student's page gives first ('Your grade: 9/10 points'), as a number."""
    page = (results_dir / f"{student}.html").read_text(encoding="utf-8")
    head = page.split("<main>\n", 1)[1]
    assert head.startswith(feedback.GRADE_BLOCK), head[:300]
    return float(head.split("Your grade: ", 1)[1].split("/", 1)[0])


def _report_scores(results_dir):
    built = class_report.build([AID], results_dir)
    rep = built.reports[0]
    return dict(zip((s.student for s in rep.students if s.scored), rep.scores, strict=True)), rep


def test_one_grade_on_the_terminal_the_page_grades_csv_the_export_and_the_report(term, capsys, tmp_path):
    root, submitted, results_dir, _ = term
    rows = _grades_csv(results_dir)
    full = float(rows["ada"]["max_score"])
    canvas = _canvas(root, tmp_path)[1]
    scores, rep = _report_scores(results_dir)
    for student in STAMPS:
        grade_ = float(rows[student]["grade"])
        assert _page_grade(results_dir, student) == canvas[student] == scores[student] == pytest.approx(grade_)
    assert rep.at_full == 1  # ada alone: bob and dee lost points for lateness
    capsys.readouterr()
    _grade(root, submitted, results_dir, students=["bob"], force=True)
    said = capsys.readouterr().out
    bob = float(_grades_csv(results_dir)["bob"]["grade"])
    assert (f"bob: graded {bob:g}/{full:g} ({full:g} less {full - bob:g} for lateness: 30 min after the due date "
            "(1 started day charged))") in said, said


def test_after_a_new_due_date_and_for_a_new_late_student_the_terminal_says_what_grades_csv_says(term, capsys):
    root, submitted, results_dir, learner = term
    try:
        _set_due(root, "2026-11-29 16:00:00 UTC")  # bob now 2 days 30 min late: 3 started days
        grading.write_submissions(submitted, AID, {"eve": learner})
        (submitted / "eve" / AID / "timestamp.txt").write_text("2026-12-02 08:00:00", encoding="utf-8")  # 2 d 16 h
        capsys.readouterr()
        _grade(root, submitted, results_dir, students=["bob", "eve"], force=True)
        said = capsys.readouterr().out
        rows = _grades_csv(results_dir)
        full = float(rows["bob"]["max_score"])
        assert float(rows["bob"]["grade"]) == pytest.approx(0.7 * full) and float(rows["eve"]["grade"]) == \
            pytest.approx(0.7 * full)
        for student in ("bob", "eve"):
            assert f"{student}: graded {0.7 * full:g}/{full:g} ({full:g} less {0.3 * full:g} for lateness" in said
            assert _page_grade(results_dir, student) == pytest.approx(0.7 * full)
    finally:
        _set_due(root, DUE)
        shutil.rmtree(submitted / "eve", ignore_errors=True)
        with gradebook.open_gradebook(course.load_config(root)) as gb:
            gb.remove_submission(AID, "eve")
            gb.remove_student("eve")
        (results_dir / "eve.json").unlink()
        (results_dir / "eve.html").unlink()
        _grade(root, submitted, results_dir, students=["bob"], force=True)


def test_the_due_date_is_said_on_every_run_even_when_nobody_is_late(term, capsys):
    root, submitted, results_dir, _ = term
    try:
        _set_due(root, "2026-12-30 17:00:00 Europe/Berlin")  # a typo for 12-03: nobody late, and the line says when
        said = _regrade(root, submitted, results_dir, capsys)
        assert f"{AID} was due 2026-12-30 16:00:00 UTC (2026-12-30 17:00:00 in Europe/Berlin); nobody late" in said
    finally:
        _set_due(root, DUE)
        _regrade(root, submitted, results_dir, capsys)
    sheet = classbook.Sheet(AID, 10.0, {}, [], duedate="", zone="")
    assert exports.late_lines(sheet)[0].startswith(f"{AID} has no due date in the gradebook: nobody is late")


# ---------------------------------------------------------------- stdout: the results; stderr: the diagnostics (15)


def test_grades_results_go_to_stdout_and_its_diagnostics_to_stderr(term, capsys):
    root, submitted, results_dir, _ = term
    capsys.readouterr()
    _grade(root, submitted, results_dir, students=["ada"], force=True)
    out, err = capsys.readouterr()
    full = float(_grades_csv(results_dir)["ada"]["max_score"])
    assert f"ada: graded {full:g}/{full:g}\n" in out and "graded 1 submission(s): 1 graded" in out
    assert f"{AID} was due 2026-12-01 16:00:00 UTC" in out and "results: " in out
    assert "ada: graded again: --force" in err
    results_lines = (f"ada: graded {full:g}", "graded 1", "results: ")
    assert not [line for line in err.splitlines() if line.startswith(results_lines)]
    assert "was due" not in err  # stderr's progress line may show the last result beside the bar: not a result line


# ---------------------------------------------------------------- what the LMS said: names, Canvas's _LATE (4, 10)


def test_canvas_late_marks_and_names_reach_the_gradebook_grades_csv_and_the_exports(tmp_path, capsys):
    root = grading.make_course(tmp_path / "course", AID)
    learner = nbformat.writes(nbtools.learner(AID))
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:  # names as Canvas's content_zipper.rb writes them
        zf.writestr(canvas_name("Kim, Cyrus", 777, 7712031, NB := f"{AID}.ipynb", late=True), learner)
        zf.writestr(canvas_name("Müller, José", 12345, 7712032, NB), learner)
    capsys.readouterr()
    _grade(root, archive, tmp_path / "results")
    out = capsys.readouterr().out
    assert "1 submission(s) marked late by Canvas (_LATE), not charged here: 777 (kimcyrus)" in out
    rows = _grades_csv(tmp_path / "results")
    assert rows["777"]["lms_marked_late"] == "yes (canvas)" and rows["12345"]["lms_marked_late"] == ""
    assert (rows["777"]["last_name"], rows["12345"]["last_name"]) == ("kimcyrus", "müllerjosé")
    with gradebook.open_gradebook(course.load_config(root)) as gb:
        assert {s.id: s.last_name for s in gb.students} == {"777": "kimcyrus", "12345": "müllerjosé"}
    read = canvas_import(_export(root, "canvas", tmp_path))  # the default: Canvas's user id in ID
    assert {s["id"]: s["name"] for s in read["students"]} == {"777": "kimcyrus", "12345": "müllerjosé"}
    built = class_report.build([AID], tmp_path / "results")
    assert built.reports[0].students[0].name in ("kimcyrus", "müllerjosé")


# ---------------------------------------------------------------- student data is its owner's only (13)


def _loose(paths):
    """Every file or folder under `paths` that its group or others may read, write or enter."""
    out = []
    for top in paths:
        for here, _, files in os.walk(top):
            for path in [here] + [os.path.join(here, f) for f in files]:
                mode = os.lstat(path).st_mode
                if stat.S_IMODE(mode) & 0o077 and not stat.S_ISLNK(mode):
                    out.append(f"{path} {stat.filemode(mode)}")
    return out


def test_student_data_is_written_readable_by_its_owner_only(tmp_path):
    before = os.umask(0o022)  # what most accounts have
    try:
        root = grading.make_course(tmp_path / "course", AID)
        learner = nbformat.writes(nbtools.learner(AID))
        archive = root / "downloaded" / AID / "archive"
        archive.mkdir(parents=True)
        with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
            f.write('\nc.LmsCollector.timezone = "UTC"\n')
        with zipfile.ZipFile(archive / "submissions.zip", "w") as zf:
            zf.writestr(blackboard_name("FFN02", "ada", "2026-12-02-10-00-42", f"{AID}.ipynb"), learner)
        assert nbtools.nbgrader("zip_collect", AID, cwd=root).returncode == 0
        UNREADABLE.add("bo")
        grading.write_submissions(root / "submitted", AID, {"bo": nbtools.learner(AID)})
        _grade(root, root / "submitted", None)  # the default results folder, in the course
        for to, extra in (("canvas", ["--canvas-id", "sis_login_id"]), ("exercises", [])):
            assert autograder_main(["export", AID, "--to", to, "--course", str(root), *extra]) == 0
        report = root / "results" / "report.html"
        assert autograder_main(["report", AID, "--results", str(root / "results"), "--out", str(report),
                                "--csv", str(root / "results" / "report.csv")]) == 0
    finally:
        os.umask(before)
        UNREADABLE.discard("bo")
    data = [root / name for name in ("submitted", "autograded", "downloaded", "results", "gradebook.db")]
    assert (root / "results" / AID / "grades.csv").is_file() and (root / "autograded" / "bo" / AID).is_dir()
    assert _loose(data) == []


# ---------------------------------------------------------------- a settled unreadable notebook replaced (14)


def test_a_settled_unreadable_notebook_then_a_readable_file_page_and_export_agree(tmp_path, capsys):
    root = grading.make_course(tmp_path / "course", AID)
    submitted, results_dir = tmp_path / "submitted", tmp_path / "results"
    grading.write_submissions(submitted, AID, {"fay": nbtools.learner(AID)})
    UNREADABLE.add("fay")
    try:
        _grade(root, submitted, results_dir)
    finally:
        UNREADABLE.discard("fay")
    stand_in = nbformat.read(root / "autograded" / "fay" / AID / f"{AID}.ipynb", as_version=4)
    note = stand_in.cells[0]
    assert "give the points and a comment by hand" in note.source  # formgrader's page: the instructor's note
    shown, _ = feedback.HideHiddenTests().preprocess_cell(note, {"nbgrader": {"notebook": AID}}, 0)
    assert "by hand, here" not in shown.source and "could not be read" in shown.source  # the student's page's text
    assert feedback.INSTRUCTOR_NOTE in note.metadata
    with gradebook.open_gradebook(course.load_config(root)) as gb:  # settled by hand at 0, as formgrader saves it
        notebook = gb.find_submission_notebook(AID, AID, "fay")
        for g in notebook.grades:
            g.manual_score = 0.0
        for c in notebook.comments:
            c.manual_comment = "Nothing readable came: 0."
        gb.db.commit()
    (submitted / "fay" / AID / f"{AID}.ipynb").write_text(nbformat.writes(nbtools.completed_learner(AID)))  # new
    capsys.readouterr()
    _grade(root, submitted, results_dir)
    said = capsys.readouterr()
    full = float(_grades_csv(results_dir)["fay"]["max_score"])
    assert f"fay: graded {full:g}/{full:g}\n" in said.out and "given by hand" not in said.out
    assert "fay: the points and comments given by hand to the unreadable" in said.err
    assert _page_grade(results_dir, "fay") == float(_grades_csv(results_dir)["fay"]["grade"]) == full
    assert canvas_import(_export(root, "canvas", tmp_path, "--canvas-id", "sis_login_id"))["students"][0][
        "grades"][AID] == f"{full:g}"
    with gradebook.open_gradebook(course.load_config(root)) as gb:
        notebook = gb.find_submission_notebook(AID, AID, "fay")
        assert all(g.manual_score is None for g in notebook.grades)
        assert all(not c.manual_comment for c in notebook.comments)
