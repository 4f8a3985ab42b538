"""The class's grades as the gradebook holds them: every student of the course, per assignment and exercise.

The gradebook is the one record (scores by hand in formgrader included); the status of
each submission comes from the `<student>.json` that `grade` wrote beside it. Reading a sheet publishes it:
the late penalties are set first, from the due date the gradebook holds now (gradebook.late_penalties).
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from ... import RESULTS
from ...schema import Status
from .. import course

NO_SUBMISSION = "no submission"  # a student of the course with nothing in the gradebook for this assignment


@dataclass
class Row:
    """One student's grade for one assignment."""

    student: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    status: str  # schema.Status, NO_SUBMISSION, or "" (graded, but not by `grade`)
    score: float | None  # None: no submission
    max_score: float
    late_penalty: float
    timestamp: str
    exercises: dict = field(default_factory=dict)  # exercise -> points (None: no submission)
    needs_manual: bool = False  # a cell still waits for the instructor's points in formgrader

    @property
    def grade(self):
        """The points the LMS should show: the score less the late penalty (None: nothing submitted)."""
        return None if self.score is None else max(0.0, self.score - self.late_penalty)


@dataclass
class Sheet:
    """One assignment's grades: its exercises in course order with their maxima, and a row per student."""

    assignment: str
    max_score: float
    exercises: dict  # exercise -> max points
    rows: list
    late: list = field(default_factory=list)  # gradebook.Late, one per late submission
    duedate: str = ""  # the assignment's due date in UTC ("" when it has none)


def results_dir(config, assignment_id):
    """Where `grade` writes an assignment's results by default: <course>/results/<assignment>."""
    return Path(config.CourseDirectory.root) / RESULTS / assignment_id


def _exercises(model):
    """(grade id -> exercise, exercise -> max points), in course order."""
    of, maxima = {}, {}
    for nb in model.notebooks:
        exercise_of = nb.exercise_of
        for c in nb.cells:
            if c.grade and not c.solution:
                ex = exercise_of.get(c.name) or c.name
                of[nb.name, c.name] = ex
                maxima[ex] = maxima.get(ex, 0.0) + float(c.points)
    return of, maxima


def _status(results, student):
    """The status `grade` gave this student's submission (its JSON), or ""."""
    try:
        status = json.loads((Path(results) / f"{student}.json").read_text(encoding="utf-8")).get("status")
    except (OSError, ValueError, AttributeError):
        return ""
    return status if status in {s.value for s in Status} else ""


def sheet(config, assignment_id, results=None):
    """The assignment's grades for every student in the gradebook (a Sheet); ValueError if it was never graded."""
    from nbgrader.api import MissingEntry

    from . import gradebook

    model = course.read_assignment(config.CourseDirectory.db_url, assignment_id) \
        if course.db_path(config).exists() else None
    if model is None:
        raise ValueError(f"{assignment_id} is not in the gradebook {course.db_path(config)}: grade it first "
                         "(python -m autograder grade)")
    results = Path(results) if results else results_dir(config, assignment_id)
    of, maxima = _exercises(model)
    rows, late = [], gradebook.late_penalties(config, assignment_id)
    with gradebook.open_gradebook(config) as gb:
        due = gb.find_assignment(assignment_id).duedate
        for student in sorted(gb.students, key=lambda s: s.id):
            names = dict(student=student.id, first_name=student.first_name or "", last_name=student.last_name or "",
                         email=student.email or "", lms_user_id=student.lms_user_id or "")
            try:
                sub = gb.find_submission(assignment_id, student.id)
            except MissingEntry:
                rows.append(Row(**names, status=NO_SUBMISSION, score=None, max_score=model_max(maxima),
                                late_penalty=0.0, timestamp="", exercises=dict.fromkeys(maxima)))
                continue
            points = dict.fromkeys(maxima, 0.0)
            for nb in sub.notebooks:
                for g in nb.grades:
                    ex = of.get((nb.name, g.name))
                    if ex is not None:
                        points[ex] += float(g.score or 0.0)
            rows.append(Row(**names, status=_status(results, student.id), **_points(sub),
                            timestamp=sub.timestamp.isoformat(sep=" ") if sub.timestamp else "", exercises=points,
                            needs_manual=bool(sub.needs_manual_grade)))
    return Sheet(assignment_id, model_max(maxima), maxima, rows, late, due.isoformat(sep=" ") if due else "")


def _points(sub):
    """A gradebook submission's score (the hand scores given in formgrader in place of the grader's), maximum and
    late penalty: what grades.csv, the exports and the terminal give."""
    return {"score": float(sub.score), "max_score": float(sub.max_score),
            "late_penalty": float(sub.late_submission_penalty or 0.0)}


def result_line(gb, result):
    """What the terminal says of a result just recorded in the open gradebook `gb`: the points grades.csv and the
    exports give (Row.grade), with the grader's own and the late penalty beside them when they differ."""
    from nbgrader.api import MissingEntry

    try:
        points = _points(gb.find_submission(result.assignment, result.student))
    except MissingEntry:  # its recording failed (the run said why): the grader's own points
        points = {"score": result.score, "max_score": result.max_score, "late_penalty": 0.0}
    row = Row(result.student, "", "", "", "", f"{result.status}", **points, timestamp="")
    notes = [f"{result.score:g} from the grader, {row.score:g} with the scores given by hand"] \
        if row.score != result.score else []
    notes += [f"{row.score:g} less {row.late_penalty:g} for lateness"] if row.late_penalty else []
    return f"{row.student}: {row.status} {row.grade:g}/{row.max_score:g}" + (f" ({'; '.join(notes)})" if notes else "")


def model_max(maxima):
    return float(sum(maxima.values()))
