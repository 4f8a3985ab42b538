"""`python -m autograder export --to exercises|canvas|moodle ASSIGNMENT...`: the class's grades for an LMS.

Every file holds every student of the gradebook (classbook.py), and every cell passes
sanitise.csv_cell. The formats, and the LMS pages that define them, are in
autograder/README.md ("Export the grades").
"""

import sys
from pathlib import Path

from ... import RESULTS
from ...sanitise import csv_text, for_terminal
from .. import course
from ..scoring import classbook

CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]  # the columns Canvas's export opens with
CANVAS_ID_COLUMNS = {"sis_login_id": "SIS Login ID", "sis_user_id": "SIS User ID", "id": "ID"}
MOODLE_IDENTITY = ["Username", "First name", "Last name", "Email address"]


def _num(value):
    """A number as an LMS reads it: 8, 7.5, 0.3333; empty for no value."""
    return "" if value is None else f"{round(float(value), 4):g}"


def exercises_csv(sheet):
    """One row per student: status, score, late penalty, the grade, and a column per exercise."""
    named = any(r.first_name or r.last_name or r.email for r in sheet.rows)
    people = ["student_id", *(["first_name", "last_name", "email"] if named else [])]
    columns = [*people, "status", "score", "max_score", "late_penalty", "grade", "timestamp", *sheet.exercises]
    rows = []
    for r in sheet.rows:
        row = dict(student_id=r.student, status=r.status, score=_num(r.score), max_score=_num(r.max_score),
                   late_penalty=_num(r.late_penalty if r.score is not None else None), grade=_num(r.grade),
                   timestamp=r.timestamp)
        if named:
            row |= dict(first_name=r.first_name, last_name=r.last_name, email=r.email)
        rows.append(row | {ex: _num(p) for ex, p in r.exercises.items()})
    return csv_text(rows, columns)


def late_line(sheet):
    """One line on the sheet's late submissions and what each lost (None when none is late)."""
    if not sheet.late:
        return None
    said = [f"{late.student} {_duration(late.seconds_late)} late, "
            + ("no penalty" if late.penalty is None else f"{_num(late.penalty)} point(s) off") for late in sheet.late]
    line = (f"{sheet.assignment} was due {sheet.duedate} UTC; {len(said)} late: " + "; ".join(said[:10])
            + (" ..." if len(said) > 10 else ""))
    if any(late.penalty is None for late in sheet.late):
        line += (" (nbgrader's late penalty method gives none: set c.AssignLatePenalties.plugin_class in the "
                 "course's nbgrader_config.py, see the guide's 'Late work')")
    return line


def _duration(seconds):
    """5 s, 3 min, 2 h 5 min, 1 day 3 h: how late, to the unit that matters."""
    minutes, hours, days = int(seconds // 60), int(seconds // 3600), int(seconds // 86400)
    if days:
        return f"{days} day{'s' if days > 1 else ''}" + (f" {hours - 24 * days} h" if hours - 24 * days else "")
    if hours:
        return f"{hours} h" + (f" {minutes - 60 * hours} min" if minutes - 60 * hours else "")
    return f"{minutes} min" if minutes else f"{int(seconds)} s"


def _students(sheets):
    """{student id: a Row with the student's names}, over all sheets, sorted."""
    people = {}
    for s in sheets:
        for r in s.rows:
            people.setdefault(r.student, r)
    return dict(sorted(people.items()))


def _columns(sheets, names):
    """The LMS column of each assignment: the name given with --name, else the assignment id."""
    return {s.assignment: names.get(s.assignment, s.assignment) for s in sheets}


def _grades(sheets):
    return {(s.assignment, r.student): r.grade for s in sheets for r in s.rows}


def canvas_csv(sheets, names=None, id_column="sis_login_id"):
    """Canvas's gradebook import: its export's identity columns, a Points Possible row, a column per assignment.

    The student id goes into `id_column` (Canvas matches students on it); an empty grade
    leaves Canvas's grade as it is.
    """
    columns = _columns(sheets, names or {})
    header = [*CANVAS_IDENTITY, *columns.values()]
    grades = _grades(sheets)
    points = dict.fromkeys(CANVAS_IDENTITY, "") | {"Student": "Points Possible"}
    rows = [points | {columns[s.assignment]: _num(s.max_score) for s in sheets}]
    for student, who in _students(sheets).items():
        full = ", ".join(n for n in (who.last_name, who.first_name) if n) or student
        row = dict.fromkeys(CANVAS_IDENTITY, "") | {"Student": full, "ID": who.lms_user_id}
        row[CANVAS_ID_COLUMNS[id_column]] = student
        rows.append(row | {columns[s.assignment]: _num(grades[s.assignment, student]) for s in sheets})
    return csv_text(rows, header)


def moodle_csv(sheets, names=None):
    """Moodle's CSV grade import: an identifier column (Username) to map to a user, and a column per grade item."""
    columns = _columns(sheets, names or {})
    grades = _grades(sheets)
    rows = [dict(zip(MOODLE_IDENTITY, (student, who.first_name, who.last_name, who.email), strict=True))
            | {columns[s.assignment]: _num(grades[s.assignment, student]) for s in sheets}
            for student, who in _students(sheets).items()]
    return csv_text(rows, [*MOODLE_IDENTITY, *columns.values()])


def render(to, sheets, names=None, canvas_id="sis_login_id"):
    """The export's text for the format `to`."""
    if to == "exercises":
        if len(sheets) != 1:
            raise ValueError(f"--to exercises takes one assignment (a column per exercise), got {len(sheets)}")
        return exercises_csv(sheets[0])
    if to == "canvas":
        return canvas_csv(sheets, names, canvas_id)
    if to == "moodle":
        return moodle_csv(sheets, names)
    raise ValueError(f"expected --to exercises, canvas or moodle, got {to!r}")


def _names(pairs):
    """--name ASSIGNMENT=COLUMN pairs as a dict."""
    out = {}
    for pair in pairs or []:
        aid, sep, column = pair.partition("=")
        if not sep or not aid or not column:
            raise ValueError(f"expected --name ASSIGNMENT=COLUMN (e.g. '02_forward_pass=Forward pass (4711)'), "
                             f"got {pair!r}")
        out[aid] = column
    return out


def add_parser(subparsers):
    p = subparsers.add_parser("export", help="the class's grades as a CSV for Canvas, Moodle, or per exercise")
    p.add_argument("assignments", nargs="+", metavar="ASSIGNMENT", help="assignment ids, e.g. 02_forward_pass")
    p.add_argument("--to", required=True, choices=["exercises", "canvas", "moodle"],
                   help="canvas: Canvas's gradebook import; moodle: Moodle's CSV grade import; exercises: one row "
                        "per student with the status and a column per exercise")
    p.add_argument("--out", default=None, metavar="CSV",
                   help=f"the file to write (default: <course>/{RESULTS}/<to>-<assignments>.csv)")
    p.add_argument("--course", default=None, help="nbgrader course root (default: autograder/course/)")
    p.add_argument("--results", default=None, metavar="RESULTS_DIR",
                   help=f"where `grade` wrote <student>.json, for the statuses (default: <course>/{RESULTS}/"
                        "<assignment>; one assignment)")
    p.add_argument("--name", action="append", metavar="ASSIGNMENT=COLUMN",
                   help="the LMS's name for an assignment's column, e.g. '02_forward_pass=Forward pass (4711)'")
    p.add_argument("--canvas-id", choices=sorted(CANVAS_ID_COLUMNS), default="sis_login_id",
                   help="the Canvas column that holds the nbgrader student id (default: sis_login_id)")
    p.add_argument("--require-settled", action="store_true",
                   help="write nothing while a submission still needs manual grading in formgrader (each is named)")
    return p


def unsettled(sheets):
    """'02_forward_pass: bob, cy; ...' for the students whose submission still needs manual grading, or ''."""
    waiting = [(sheet.assignment, [r.student for r in sheet.rows if r.needs_manual]) for sheet in sheets]
    return "; ".join(f"{aid}: {', '.join(students)}" for aid, students in waiting if students)


def main(args):
    try:
        config = course.load_config(args.course) if args.course else course.load_config()
        if args.results and len(args.assignments) > 1:
            raise ValueError("--results names one assignment's folder; give one assignment with it")
        sheets = [classbook.sheet(config, aid, args.results) for aid in args.assignments]
        waiting = unsettled(sheets)
        if waiting and args.require_settled:
            raise ValueError(f"still needing manual grading in formgrader ({waiting}): give their points there, "
                             "then export again; nothing was written")
        text = render(args.to, sheets, _names(args.name), args.canvas_id)
        out = Path(args.out) if args.out else \
            Path(config.CourseDirectory.root) / RESULTS / f"{args.to}-{'+'.join(args.assignments)}.csv"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except (ValueError, OSError) as exc:
        print(f"export: error: {exc}", file=sys.stderr)
        return 2
    for line in filter(None, map(late_line, sheets)):
        print(for_terminal(line))
    print(f"wrote {out}: {len(_students(sheets))} students, {len(sheets)} assignment(s)")
    if waiting:
        print(for_terminal(f"export: still needing manual grading in formgrader, exported with the grader's points: "
                           f"{waiting} (--require-settled writes nothing until none is left)"), file=sys.stderr)
    return 0
