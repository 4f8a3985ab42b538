"""The adversarial batch (issue 5, items 1-14): attackers graded together with honest students.

Two batches of 02_forward_pass through `python -m autograder grade` (in-process):
the honest students alone, in one course; the same honest students together with
every attack of tests/adversarial, in another. Every attacker must get no point
it did not earn and show up with its status or flag; the batch must complete;
each honest student must score exactly as in the batch without attackers; the
gradebook must stay intact, also after a background process had time to strike.
"""

import contextlib
import html
import json
import sqlite3
import sys
import threading
import time

import adversarial
import nbtools
import psutil
import pytest
from adversarial import ASSIGNMENT, ATTACKS, Context, grading

from autograder.grading.scoring.gradebook import cell_scores

pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("grader-adversarial")]



class _Watch(threading.Thread):
    """Notes each process named `name` while the batch runs (polling /proc), so that the tests can wait for each
    to be gone instead of for the time it would take to strike."""

    def __init__(self, name):
        super().__init__(daemon=True)
        self.name, self.seen, self.stop = name, {}, threading.Event()

    def run(self):
        while not self.stop.wait(0.02):  # polling interval while the batch runs
            for proc in psutil.process_iter(["name"]):
                if proc.info["name"] == self.name:
                    self.seen.setdefault(proc.pid, proc)

    def alive(self):
        out = []
        for proc in self.seen.values():
            with contextlib.suppress(psutil.Error):
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(proc)
        return out


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    base = tmp_path_factory.mktemp("adversarial")
    course_root = grading.make_course(base / "course", ASSIGNMENT)
    baseline_root = grading.copy_course(course_root, base / "baseline-course")
    server = grading.LocalServer()
    solution = nbtools.cells_by_id(nbtools.solution(ASSIGNMENT))
    ctx = Context(learner=nbtools.learner(ASSIGNMENT), course=str(course_root), results=str(base / "results"),
                  answers={gid: solution[gid].source for gid in adversarial.EXERCISES}, port=server.port)
    wrong = [w for w in __import__(f"submissions.{ASSIGNMENT}", fromlist=["WRONG"]).WRONG]
    honest = adversarial.honest_students(ctx, wrong)
    attacks = {a.student: a.build(ctx) for a in ATTACKS}
    grading.write_submissions(base / "honest", ASSIGNMENT, honest)
    grading.write_submissions(base / "submitted", ASSIGNMENT, {**honest, **attacks})
    try:
        baseline = grading.run_batch(ASSIGNMENT, base / "honest", base / "baseline-results", baseline_root, jobs=2)
        watch = _Watch(adversarial.SLEEPER_NAME)
        watch.start()
        try:
            # two jobs: attackers graded beside honest students, each sandbox alongside another
            graded = grading.run_batch(ASSIGNMENT, base / "submitted", base / "results", course_root, jobs=2)
        finally:
            watch.stop.set()
            watch.join(10)
        yield {"baseline": baseline, "graded": graded, "honest": honest, "course": course_root, "base": base,
               "server": server, "sleepers": watch}
    finally:
        server.close()


def test_every_student_is_graded(batches):
    students = set(batches["honest"]) | {a.student for a in ATTACKS}
    assert set(batches["graded"]) == students
    for student in students:
        path = batches["base"] / "results" / f"{student}.json"
        assert json.loads(path.read_text())["student"] == student
        assert (batches["base"] / "results" / f"{student}.html").stat().st_size > 0


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.student for a in ATTACKS])
def test_attack_earns_nothing_and_shows_up(batches, attack):
    result = batches["graded"][attack.student]
    by_exercise = grading.points_by_exercise(result)
    summary = json.dumps({k: result[k] for k in ("status", "score", "flags")}, indent=1)[:3000]
    assert result["status"] in attack.status, f"{attack.student} ({attack.what}): {summary}"
    for exercise in attack.zero:
        assert by_exercise[exercise][0] == 0, f"{attack.student} earned points for {exercise}: {summary}"
    for exercise in attack.full:
        got, top = by_exercise[exercise]
        assert got == top, f"{attack.student} lost honest points on {exercise} ({got}/{top}): {summary}"
    if attack.flags:
        kinds = {f["kind"] if f["costs_points"] else "review" for f in result["flags"]}
        assert kinds & attack.flags, f"{attack.student}: expected a flag among {sorted(attack.flags)}: {summary}"


def test_a_clean_run_that_cannot_finish_withholds_the_notebook_runs_points(batches):
    """The two-faced answer passes its visible test in the notebook run only by cheating; it keeps nothing."""
    result = batches["graded"]["two-faced"]
    visible = next(c for c in result["cells"] if c["grade_id"] == "test_ffn_forward")
    assert visible["notebook_run"]["points"] == visible["max_points"] > 0, visible
    assert (visible["points"], visible["status"]) == (0, "rerun incomplete"), visible
    assert any(f["kind"] == "review" and not f["costs_points"] and f["exercise"] == "ffn_forward"
               for f in result["flags"]), result["flags"]


def test_honest_students_score_as_without_attackers(batches):
    for student in batches["honest"]:
        alone, together = batches["baseline"][student], batches["graded"][student]
        assert together["status"] == alone["status"] == "graded", student
        assert [(c["grade_id"], c["points"]) for c in together["cells"]] == \
            [(c["grade_id"], c["points"]) for c in alone["cells"]], student
        assert together["flags"] == alone["flags"] == [], student
    correct = batches["graded"]["honest-correct"]
    assert correct["score"] == correct["max_score"] > 0
    unfinished = grading.points_by_exercise(batches["graded"]["honest-unfinished"])
    assert unfinished["dead_fraction"][0] == 0


def _gradebook_scores(course_root):
    path = course_root / "gradebook.db"
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        db.close()
    return {(row.student, row.cell): row.auto_score for row in cell_scores(path)}


def test_gradebook_intact_and_matches_results(batches):
    sleepers = batches["sleepers"]
    assert sleepers.seen, "the sleeper's background process was never seen running"
    deadline = time.monotonic() + 30  # its sandbox's end takes it: by then it can strike no more
    while sleepers.alive() and time.monotonic() < deadline:
        time.sleep(0.05)  # polling
    assert not sleepers.alive(), "a sleeper outlived its grading"
    scores = _gradebook_scores(batches["course"])
    for student, result in batches["graded"].items():
        for cell in result["cells"]:
            assert scores[(student, cell["grade_id"])] == cell["points"], (student, cell["grade_id"])
    for student in batches["honest"]:  # the other students' files are still there and still notebooks
        path = batches["course"] / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert json.loads(path.read_text())["cells"], student
        saved = json.loads((batches["base"] / "results" / f"{student}.json").read_text())
        assert saved["score"] == batches["graded"][student]["score"]


def test_nothing_reached_the_local_server(batches):
    assert batches["server"].connections == 0 and batches["server"].received == []


def test_grades_csv_has_the_class_with_status_and_exercises(batches):
    lines = (batches["base"] / "results" / "grades.csv").read_text().splitlines()
    assert lines[0].startswith("student_id,status,score,max_score,late_penalty,grade,timestamp,lms_marked_late,"
                               "ffn_forward")
    assert len(lines) == 1 + len(batches["graded"])


def test_feedback_never_shows_hidden_tests(batches):
    hidden = nbtools.secret_lines(ASSIGNMENT)
    assert hidden, "the assignment has hidden tests"
    for student in batches["graded"]:
        page = html.unescape((batches["base"] / "results" / f"{student}.html").read_text())
        leaked = [line for line in hidden if line in page]
        assert not leaked, f"{student}'s feedback shows hidden test lines: {leaked[:3]}"
        assert "<script" not in page.lower(), student


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v"]))
