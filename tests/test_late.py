"""Late work: a due date set with nbgrader's own command, the course's penalty plugin (a share per day, capped),
the penalty in grades.csv and in the Canvas and Moodle files, and a new due date applied without grading again.

No kernel runs here. `grade` runs as the instructor runs it, but the grading of each student (the workers, the
sandbox) is replaced by a stand-in that publishes given marks through grade's own publishing: what is tested is
what happens around the grading, from each student's timestamp.txt and the gradebook's due date.
"""

import csv
import io
import json
import zipfile

import nbformat
import nbtools
import pytest
from adversarial import grading
from traitlets import TraitError
from traitlets.config import Config

from autograder.__main__ import main as autograder_main
from autograder.grading import course, grade
from autograder.grading.scoring import classbook, gradebook, ledger, results
from autograder.grading.scoring.late import DAY, SharePerDayLate
from autograder.schema import CellResult, CellStatus, NotebookResult, Status

AID = "02_forward_pass"
DUE = "2026-12-01 17:00:00 Europe/Berlin"  # 16:00 UTC: Berlin is an hour ahead of UTC in winter
# timestamp.txt of each student, as the intake writes it (UTC, no zone) or as nbgrader's exchange does (a zone)
STAMPS = {"ada": "2026-12-01 15:59:59",  # a second before the due date: on time
          "bob": "2026-12-01 16:30:00",  # half an hour late (on time if the due date's zone were ignored)
          "cy": "2026-12-03 17:30:00.000000 CET",  # 16:30 UTC two days later: 2 days 30 min late, 3 started days
          "dee": "2026-12-09 12:00:00"}  # 7 days 20 h late: 8 days, over the cap
SHARE = {"ada": 1.0, "bob": 1.0, "cy": 0.5, "dee": 1.0}  # the share of the points each is given


def _marks(model, submission):
    """The stand-in's result for `submission`: SHARE of every test cell's points, and its timestamp.txt."""
    notebooks = []
    for nb in model.notebooks:
        share = SHARE[submission.student]
        cells = [CellResult(c.name, nb.exercise_of.get(c.name), share * c.points, float(c.points),
                            CellStatus.PASSED if share == 1 else CellStatus.PARTIAL, notebook=nb.name)
                 for c in nb.cells if c.grade and not c.solution]
        notebooks.append(NotebookResult(nb.name, Status.GRADED, sum(c.points for c in cells), nb.max_score, cells))
    stamp = (submission.folder / "timestamp.txt").read_text(encoding="utf-8").strip()  # as the worker reads it
    return results.student_result(submission.student, model.name, notebooks, timestamp=stamp).to_dict()


def _stand_in(config, model, found, setup, out_dir, versions, jobs, timeout, cluster, unsafe):
    """grade._grade_found without workers: each student published and remembered as a worker's reply would be."""
    with gradebook.open_gradebook(config) as gb:
        graded = [grade._record(config, model, s, {"result": _marks(model, s)}, out_dir, gb) for s in found]
    grade._remember(out_dir, graded, versions)
    return graded


def _no_grading(*args, **kwargs):
    raise AssertionError("a grading run started")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """A scratch course of 02 with a due date set by nbgrader's command, four submissions graded (by the stand-in)."""
    tmp = tmp_path_factory.mktemp("late")
    root = grading.make_course(tmp / "course", AID)
    done = nbtools.nbgrader("db", "assignment", "add", AID, f"--duedate={DUE}", cwd=root)
    assert done.returncode == 0, done.stderr
    learner = nbtools.learner(AID)
    grading.write_submissions(tmp / "submitted", AID, dict.fromkeys(STAMPS, learner))
    for student, stamp in STAMPS.items():
        (tmp / "submitted" / student / AID / "timestamp.txt").write_text(stamp, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grade, "_worker_setup", lambda *a, **k: None)
        mp.setattr(grade, "_grade_found", _stand_in)
        graded = grade.grade(AID, tmp / "submitted", tmp / "results", course_root=root, unsafe=True)
    assert sorted(r["student"] for r in graded) == sorted(STAMPS)
    return root, tmp / "submitted", tmp / "results", nbformat.reads(nbformat.writes(learner), as_version=4)


def _grades_csv(results_dir):
    return {row["student_id"]: row for row in csv.DictReader(io.StringIO((results_dir / "grades.csv").read_text()))}


def _export(root, to, tmp_path):
    out = tmp_path / f"{to}.csv"
    assert autograder_main(["export", AID, "--to", to, "--course", str(root), "--out", str(out)]) == 0
    return list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))


def _regrade(root, submitted, results_dir, capsys):
    """`grade` again, failing if it starts grading anyone; what it said."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grade, "_worker_setup", _no_grading)
        mp.setattr(grade, "_grade_found", _no_grading)
        assert grade.grade(AID, submitted, results_dir, course_root=root, unsafe=True) == []
    return capsys.readouterr().err


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
    canvas = _export(root, "canvas", tmp_path)
    assert canvas[0]["Student"] == "Points Possible" and float(canvas[0][AID]) == max_score
    by_login = {r["SIS Login ID"]: float(r[AID]) for r in canvas[1:]}
    moodle = {r["Username"]: float(r[AID]) for r in _export(root, "moodle", tmp_path)}
    for student, (score, penalty) in expected.items():
        assert by_login[student] == pytest.approx(score - penalty, abs=1e-4)
        assert moodle[student] == pytest.approx(score - penalty, abs=1e-4)


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
    assert f"{AID} was due 2026-12-01 16:00:00 UTC; 3 late: bob 30 min late, 1 point(s) off" in said
    assert "cy 2 days late, 1.5 point(s) off" in said and "dee 7 days 20 h late, 5 point(s) off" in said
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
        canvas = {r["SIS Login ID"]: float(r[AID]) for r in _export(root, "canvas", tmp_path)[1:]}
        assert canvas["bob"] == full and canvas["cy"] == pytest.approx(0.8 * full / 2, abs=1e-4)
        _set_due(root, "2026-12-10 00:00:00 UTC")  # after everyone: no penalty left anywhere, still no grading
        _regrade(root, submitted, results_dir, capsys)
        assert all(float(r["late_penalty"]) == 0 for r in _grades_csv(results_dir).values())
        moodle = {r["Username"]: float(r[AID]) for r in _export(root, "moodle", tmp_path)}
        assert moodle == pytest.approx({"ada": full, "bob": full, "cy": full / 2, "dee": full}, abs=1e-4)
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
        from autograder.grading.gate_out import exports

        line = exports.late_line(sheet)
        assert "bob 30 min late, no penalty" in line and "c.AssignLatePenalties.plugin_class" in line
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
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grade, "_worker_setup", lambda *a, **k: None)
        mp.setattr(grade, "_grade_found", _stand_in)
        grade.grade(AID, archive, tmp_path / "results", course_root=root, unsafe=True)
    rows = _grades_csv(tmp_path / "results")
    assert {s: rows[s]["timestamp"] for s in rows} == {"ada": "2026-12-01 15:59:59", "bob": "2026-12-01 16:00:01"}
    assert float(rows["ada"]["late_penalty"]) == 0 and float(rows["ada"]["grade"]) == float(rows["ada"]["max_score"])
    assert float(rows["bob"]["late_penalty"]) == pytest.approx(0.1 * float(rows["bob"]["max_score"]))
