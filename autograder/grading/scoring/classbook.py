"""The class's grades as the gradebook holds them: every student of the course, per assignment and exercise.

The gradebook is the one record (scores by hand in formgrader included); the status of
each submission comes from the `<student>.json` that `grade` wrote beside it. Reading a sheet publishes it:
the late penalties are set first, from the due date the gradebook holds now (gradebook.late_penalties).
"""

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ... import RESULTS
from ...schema import Status
from .. import course, intake

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
    seconds_late: float = 0.0  # after the due date the gradebook holds now (0: on time, or no time)
    lms: str = ""  # the LMS whose download held the submission (intake's roster), "" when none did
    lms_late: bool = False  # that LMS marked it late (Canvas's _LATE): its own late policy, not charged here

    @property
    def grade(self):
        """The points the LMS should show: the score less the late penalty (None: nothing submitted)."""
        return None if self.score is None else max(0.0, self.score - self.late_penalty)

    @property
    def name(self):
        return " ".join(n for n in (self.first_name, self.last_name) if n)

    def points_text(self):
        """'9/10': the grade (after the late penalty) out of the maximum, as the terminal and the page give it."""
        return f"{self.grade:g}/{self.max_score:g}" if self.score is not None else f"-/{self.max_score:g}"

    def late_text(self):
        """'7 min after the due date (1 started day charged)', or '' when on time."""
        if self.seconds_late <= 0:
            return ""
        days = math.ceil(self.seconds_late / DAY)
        return f"{duration(self.seconds_late)} after the due date ({days} started day{'s' if days > 1 else ''} charged)"


DAY = 24 * 60 * 60


def duration(seconds):
    """5 s, 3 min, 2 h 5 min, 1 day 3 h: how late, to the unit that matters."""
    minutes, hours, days = int(seconds // 60), int(seconds // 3600), int(seconds // 86400)
    if days:
        return f"{days} day{'s' if days > 1 else ''}" + (f" {hours - 24 * days} h" if hours - 24 * days else "")
    if hours:
        return f"{hours} h" + (f" {minutes - 60 * hours} min" if minutes - 60 * hours else "")
    return f"{minutes} min" if minutes else f"{int(seconds)} s"


@dataclass
class Sheet:
    """One assignment's grades: its exercises in course order with their maxima, and a row per student."""

    assignment: str
    max_score: float
    exercises: dict  # exercise -> max points
    rows: list
    late: list = field(default_factory=list)  # gradebook.Late, one per late submission
    duedate: str = ""  # the assignment's due date in UTC ("" when it has none)
    zone: str = ""  # the course's time zone (c.LmsCollector.timezone), "" when unset

    def due_text(self):
        """'due 2026-12-03 16:00:00 UTC (2026-12-03 17:00:00 in Europe/Berlin)', or what to do when it has none."""
        if not self.duedate:
            return (f"{self.assignment} has no due date in the gradebook: nobody is late (set one with nbgrader db "
                    f"assignment add {self.assignment} --duedate=..., the guide's 'Late work')")
        return f"{self.assignment} was due {self.duedate} UTC ({in_zone(self.duedate, self.zone)})"


def results_dir(config, assignment_id):
    """Where `grade` writes an assignment's results by default: <course>/results/<assignment>."""
    return Path(config.CourseDirectory.root) / RESULTS / assignment_id


def in_zone(utc_text, zone):
    """'2026-12-03 17:00:00 in Europe/Berlin' for a UTC time's text, or why no zone is shown."""
    if not zone:
        return "no course time zone set: c.LmsCollector.timezone"
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        local = datetime.fromisoformat(utc_text).replace(tzinfo=UTC).astimezone(ZoneInfo(zone))
    except (ZoneInfoNotFoundError, ValueError):
        return f"c.LmsCollector.timezone {zone!r} is no IANA zone"
    return f"{local.replace(tzinfo=None).isoformat(sep=' ')} in {zone}"


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
    from . import gradebook

    model = course.read_assignment(config.CourseDirectory.db_url, assignment_id) \
        if course.db_path(config).exists() else None
    if model is None:
        raise ValueError(f"{assignment_id} is not in the gradebook {course.db_path(config)}: grade it first "
                         "(python -m autograder grade)")
    results = Path(results) if results else results_dir(config, assignment_id)
    of, maxima = _exercises(model)
    late = gradebook.late_penalties(config, assignment_id)
    lms = intake.roster(config.CourseDirectory.root, assignment_id)
    with gradebook.open_gradebook(config) as gb:
        due = gb.find_assignment(assignment_id).duedate
        rows = [_row(gb, student, assignment_id, of, maxima, results, lms.get(student.id, {}))
                for student in sorted(gb.students, key=lambda s: s.id)]
    return Sheet(assignment_id, model_max(maxima), maxima, rows, late, due.isoformat(sep=" ") if due else "",
                 course.course_zone(config))


def _row(gb, student, assignment_id, of, maxima, results, lms):
    """One student's Row, from the gradebook (and `lms`, what the downloads said of them)."""
    from nbgrader.api import MissingEntry

    names = dict(student=student.id, first_name=student.first_name or "",
                 last_name=student.last_name or intake.display_name(lms), email=student.email or "",
                 lms_user_id=student.lms_user_id or "")
    try:
        sub = gb.find_submission(assignment_id, student.id)
    except MissingEntry:
        return Row(**names, status=NO_SUBMISSION, score=None, max_score=model_max(maxima), late_penalty=0.0,
                   timestamp="", exercises=dict.fromkeys(maxima))
    points = dict.fromkeys(maxima, 0.0)
    for nb in sub.notebooks:
        for g in nb.grades:
            ex = of.get((nb.name, g.name))
            if ex is not None:
                points[ex] += float(g.score or 0.0)
    return Row(**names, status=_status(results, student.id), **_points(sub),
               timestamp=sub.timestamp.isoformat(sep=" ") if sub.timestamp else "", exercises=points,
               needs_manual=bool(sub.needs_manual_grade), lms=str(lms.get("lms") or ""),
               lms_late=bool(lms.get("late")))


def _points(sub):
    """A gradebook submission's score (the hand scores given in formgrader in place of the grader's), maximum,
    late penalty and lateness: what grades.csv, the exports, the page and the terminal give."""
    return {"score": float(sub.score), "max_score": float(sub.max_score),
            "late_penalty": float(sub.late_submission_penalty or 0.0),
            "seconds_late": float(sub.total_seconds_late or 0.0)}


def student_row(gb, assignment_id, student, fallback=None):
    """The Row of one student's submission in the open gradebook `gb` (its penalty as last published), or a Row
    of `fallback` (a StudentResult) when its recording failed."""
    from nbgrader.api import MissingEntry

    try:
        points = _points(gb.find_submission(assignment_id, student))
    except MissingEntry:  # its recording failed (the run said why): the grader's own points
        points = {"score": fallback.score, "max_score": fallback.max_score, "late_penalty": 0.0}
    return Row(student, "", "", "", "", "", **points, timestamp="")


def result_line(gb, result):
    """What the terminal says of a result just recorded (and its penalty published) in the open gradebook `gb`: the
    points grades.csv, the page and the exports give (Row.grade), with the grader's own, the hand scores and the
    late penalty beside them when they differ."""
    row = student_row(gb, result.assignment, result.student, result)
    notes = [f"{result.score:g} from the grader, {row.score:g} with the scores given by hand"] \
        if row.score != result.score else []
    if row.late_penalty:
        notes.append(f"{row.score:g} less {row.late_penalty:g} for lateness: {row.late_text()}")
    elif row.seconds_late > 0:
        notes.append(f"no penalty for lateness: {row.late_text().replace(' charged', '')}")
    return f"{result.student}: {result.status} {row.points_text()}" + (f" ({'; '.join(notes)})" if notes else "")


def model_max(maxima):
    return float(sum(maxima.values()))
