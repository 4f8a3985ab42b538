"""`python -m autograder export --to exercises|canvas|moodle|blackboard ASSIGNMENT...`: the class's grades for an LMS.

Every file holds the grade (the score less the late penalty) the gradebook gives (classbook.py), and every cell
passes sanitise.csv_cell. Each LMS's file is the one its own import reads; autograder/README.md ("6. Export the
grades") says how to upload it:

- Canvas, its gradebook import (canvas-lms app/models/gradebook_importer.rb): a header row whose first cells
  are Student and ID (then SIS User ID, SIS Login ID, Section), a "Points Possible" row, a column per assignment;
  it finds the student by the ID column (the Canvas user id the download named), else the SIS ids, else the name,
  and the assignment by "<name> (<id>)", else by its exact name, else it makes a new assignment.
- Moodle, the assignment's offline grading worksheet (mod/assign/feedback/offline/importgradeslib.php): the
  columns "Identifier" (get_string('recordid', 'assign')) holding "Participant <id>" (get_string('hiddenuser',
  'assign') and the participant id the download named), "Grade" and "Last modified (grade)", the three it
  requires; one file per assignment, since participant ids are per assignment.
- Blackboard Learn, the Grade Centre's "Work Offline > Upload": a header row, the student's Username, every value
  quoted in a comma-separated file, and a column per Grade Centre column, matched by the "|<Column ID>" its own
  download ends the header with (Blackboard Help, "Uploading or Downloading Grade Center Items for Working
  Offline"; a column without one is added as a new text column).
"""

import csv
import io
import sys
from datetime import UTC, datetime
from pathlib import Path

from ... import RESULTS, private
from ...sanitise import csv_cell, csv_text, for_terminal
from .. import course
from ..scoring import classbook

CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]  # the columns Canvas's export opens with
CANVAS_ID_COLUMNS = {"id": "ID", "sis_login_id": "SIS Login ID", "sis_user_id": "SIS User ID"}
# Moodle's worksheet: the three columns its importer requires, in English (a Moodle in another language reads its
# own words for them); Full name and Maximum Grade are for the person uploading, the importer passes them by.
MOODLE_ID, MOODLE_GRADE, MOODLE_MODIFIED = "Identifier", "Grade", "Last modified (grade)"
MOODLE_COLUMNS = [MOODLE_ID, "Full name", MOODLE_GRADE, "Maximum Grade", MOODLE_MODIFIED]
MOODLE_PARTICIPANT = "Participant "  # get_string('hiddenuser', 'assign'), trailing space included
BLACKBOARD_IDENTITY = ["Last Name", "First Name", "Username"]
FORMATS = ("exercises", "canvas", "moodle", "blackboard")


def _num(value):
    """A number as an LMS reads it: 8, 7.5, 0.3333; empty for no value."""
    return "" if value is None else f"{round(float(value), 4):g}"


def exercises_csv(sheet):
    """One row per student: status, score, late penalty, the grade, the LMS's late mark, a column per exercise."""
    named = any(r.first_name or r.last_name or r.email for r in sheet.rows)
    people = ["student_id", *(["first_name", "last_name", "email"] if named else [])]
    columns = [*people, "status", "score", "max_score", "late_penalty", "grade", "timestamp", "lms_marked_late",
               *sheet.exercises]
    rows = []
    for r in sheet.rows:
        row = dict(student_id=r.student, status=r.status, score=_num(r.score), max_score=_num(r.max_score),
                   late_penalty=_num(r.late_penalty if r.score is not None else None), grade=_num(r.grade),
                   timestamp=r.timestamp, lms_marked_late=f"yes ({r.lms})" if r.lms_late else "")
        if named:
            row |= dict(first_name=r.first_name, last_name=r.last_name, email=r.email)
        rows.append(row | {ex: _num(p) for ex, p in r.exercises.items()})
    return csv_text(rows, columns)


def late_lines(sheet):
    """What the terminal says of the sheet's lateness, on every run: the due date (in UTC and the course's zone), who
    was late, by how much and what each lost; and whom the LMS marked late."""
    rows = {r.student: r for r in sheet.rows}
    late = [f"{x.student} {classbook.duration(x.seconds_late)} late ({_started(x.seconds_late)}), "
            + ("no penalty" if x.penalty is None else f"{_num(x.penalty)} point(s) off") for x in sheet.late]
    line = sheet.due_text()
    if sheet.duedate:
        line += f"; {len(late)} late: " + "; ".join(late[:10]) + (" ..." if len(late) > 10 else "") if late \
            else "; nobody late"
    if any(x.penalty is None for x in sheet.late):
        line += (" (nbgrader's late penalty method gives none: set c.AssignLatePenalties.plugin_class in the "
                 "course's nbgrader_config.py, see the guide's 'Late work')")
    lines = [line]
    marked = [r for r in rows.values() if r.lms_late]
    if marked:
        lines.append(f"{len(marked)} submission(s) marked late by Canvas (_LATE), not charged here: "
                     + ", ".join(f"{r.student} ({r.last_name})" if r.last_name else r.student for r in marked)
                     + "; Canvas's own late policy applies to what you import (the guide's 'Late work')")
    return lines


def _started(seconds):
    days = -(-seconds // classbook.DAY)
    return f"{days:g} started day{'s' if days > 1 else ''} charged"


def _students(sheets):
    """{student id: a Row with the student's names}, over all sheets, sorted."""
    people = {}
    for s in sheets:
        for r in s.rows:
            if not people.get(r.student) or not people[r.student].name:
                people[r.student] = r
    return dict(sorted(people.items()))


def _columns(sheets, names):
    """The LMS column of each assignment: the name given with --name, else the assignment id."""
    return {s.assignment: names.get(s.assignment, s.assignment) for s in sheets}


def _grades(sheets):
    return {(s.assignment, r.student): r.grade for s in sheets for r in s.rows}


def _numeric_ids(people, what, fix):
    """Refuse (ValueError, naming them) students whose ids are not `what` (all digits), the ids an LMS gives."""
    odd = sorted(s for s in people if not s.isdigit())
    if odd:
        raise ValueError(f"{len(odd)} student id(s) are no {what}: {', '.join(odd[:10])}"
                         + (" ..." if len(odd) > 10 else "") + f" (not from that LMS's download); {fix}; nothing "
                         "was written")


def canvas_csv(sheets, names=None, id_column="id"):
    """Canvas's gradebook import: its export's identity columns, a Points Possible row, a column per assignment.

    The student id goes into `id_column`: ID (default) is the Canvas user id its download names each file with;
    an empty grade leaves Canvas's grade as it is."""
    columns = _columns(sheets, names or {})
    people = _students(sheets)
    if id_column == "id":
        _numeric_ids(people, "Canvas user ids", "give --canvas-id sis_login_id (or sis_user_id) when the course's "
                     "student ids are those")
    grades = _grades(sheets)
    points = dict.fromkeys(CANVAS_IDENTITY, "") | {"Student": "Points Possible"}
    rows = [points | {columns[s.assignment]: _num(s.max_score) for s in sheets}]
    for student, who in people.items():
        row = dict.fromkeys(CANVAS_IDENTITY, "") | {"Student": who.name or student,
                                                     "ID": who.lms_user_id if id_column != "id" else ""}
        row[CANVAS_ID_COLUMNS[id_column]] = student
        rows.append(row | {columns[s.assignment]: _num(grades[s.assignment, student]) for s in sheets})
    return csv_text(rows, [*CANVAS_IDENTITY, *columns.values()])


def moodle_worksheet(sheet, now=None):
    """One assignment's offline grading worksheet, as Moodle's importer reads it: a row per participant
    ("Participant <id>"), the grade, and the time of this export as the grade's last change (Moodle leaves out a
    row whose grade changed in Moodle since, unless told to ignore that)."""
    people = {s: r for s, r in _students([sheet]).items() if r.score is not None or r.lms}  # this assignment's
    _numeric_ids(people, "Moodle participant ids", "the worksheet names each student by the participant id "
                 "Moodle's download of this assignment gave")
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S+00:00")  # ISO 8601, as PHP's strtotime reads it
    rows = [{MOODLE_ID: f"{MOODLE_PARTICIPANT}{r.student}", "Full name": r.name, MOODLE_GRADE: _num(r.grade),
             "Maximum Grade": _num(r.max_score), MOODLE_MODIFIED: stamp} for r in people.values()]
    return csv_text(rows, MOODLE_COLUMNS)


def blackboard_csv(sheets, names=None):
    """Blackboard's Grade Centre upload: Last Name, First Name, Username, a column per assignment; every value
    quoted, as its comma-separated uploads must be."""
    columns = _columns(sheets, names or {})
    grades = _grades(sheets)
    header = [*BLACKBOARD_IDENTITY, *columns.values()]
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow([csv_cell(h) for h in header])
    for student, who in _students(sheets).items():
        writer.writerow([csv_cell(v) for v in (who.last_name, who.first_name, student,
                                               *(_num(grades[s.assignment, student]) for s in sheets))])
    return buf.getvalue()


def render(to, sheets, names=None, canvas_id="id"):
    """{file name suffix: text} of the export `to`: one file, or one per assignment (Moodle's worksheets)."""
    if to == "exercises":
        if len(sheets) != 1:
            raise ValueError(f"--to exercises takes one assignment (a column per exercise), got {len(sheets)}")
        return {"": exercises_csv(sheets[0])}
    if to == "canvas":
        return {"": canvas_csv(sheets, names, canvas_id)}
    if to == "moodle":
        if names:
            raise ValueError("--name names an LMS column; Moodle's worksheet has none (its upload page is the "
                             "assignment's own)")
        return {s.assignment: moodle_worksheet(s) for s in sheets}
    if to == "blackboard":
        return {"": blackboard_csv(sheets, names)}
    raise ValueError(f"expected --to {', '.join(FORMATS)}, got {to!r}")


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
    p = subparsers.add_parser("export", help="the class's grades as a file Canvas, Moodle or Blackboard imports, "
                                             "or per exercise")
    p.add_argument("assignments", nargs="+", metavar="ASSIGNMENT", help="assignment ids, e.g. 02_forward_pass")
    p.add_argument("--to", required=True, choices=list(FORMATS),
                   help="canvas: Canvas's gradebook import; moodle: each assignment's offline grading worksheet; "
                        "blackboard: the Grade Centre's upload; exercises: one row per student with the status and "
                        "a column per exercise")
    p.add_argument("--out", default=None, metavar="CSV",
                   help=f"the file to write (default: <course>/{RESULTS}/<to>-<assignments>.csv; Moodle: one "
                        "worksheet per assignment, so one assignment with --out)")
    p.add_argument("--course", default=None, help="nbgrader course root (default: autograder/course/)")
    p.add_argument("--results", default=None, metavar="RESULTS_DIR",
                   help=f"where `grade` wrote <student>.json, for the statuses (default: <course>/{RESULTS}/"
                        "<assignment>; one assignment)")
    p.add_argument("--name", action="append", metavar="ASSIGNMENT=COLUMN",
                   help="the LMS's column for an assignment, e.g. '02_forward_pass=Forward pass (4711)' (Canvas: "
                        "<name> (<assignment id>)); Blackboard: the header its own download gives the column, "
                        "'|<Column ID>' at its end)")
    p.add_argument("--canvas-id", choices=list(CANVAS_ID_COLUMNS), default="id",
                   help="the Canvas column that holds the nbgrader student id (default: id, the Canvas user id "
                        "its download names files with)")
    p.add_argument("--require-settled", action="store_true",
                   help="write nothing while a submission still needs manual grading in formgrader (each is named)")
    return p


def unsettled(sheets):
    """'02_forward_pass: bob, cy; ...' for the students whose submission still needs manual grading, or ''."""
    waiting = [(sheet.assignment, [r.student for r in sheet.rows if r.needs_manual]) for sheet in sheets]
    return "; ".join(f"{aid}: {', '.join(students)}" for aid, students in waiting if students)


def _targets(args, config, files):
    """{Path: text} the export writes."""
    if args.out:
        if len(files) > 1:
            raise ValueError(f"--to {args.to} writes one file per assignment ({len(files)}); leave --out out, or "
                             "export one assignment at a time")
        return {Path(args.out): next(iter(files.values()))}
    folder = Path(config.CourseDirectory.root) / RESULTS
    stem = f"{args.to}-{'+'.join(args.assignments)}"
    return {folder / (f"{args.to}-{suffix}.csv" if suffix else f"{stem}.csv"): text for suffix, text in files.items()}


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
        names = _names(args.name)
        targets = _targets(args, config, render(args.to, sheets, names, args.canvas_id))
        for out, text in targets.items():
            private.folder(out.parent)
            private.write_text(out, text)
    except (ValueError, OSError) as exc:
        print(f"export: error: {exc}", file=sys.stderr)
        return 2
    for line in (line for sheet in sheets for line in late_lines(sheet)):
        print(for_terminal(line))
    for out in targets:
        print(f"wrote {out}: {len(_students(sheets))} students, {len(sheets)} assignment(s)")
    unnamed = [aid for aid in args.assignments if aid not in names]
    if args.to in ("canvas", "blackboard") and unnamed:
        print(for_terminal(f"export: the column of {', '.join(unnamed)} is named as the assignment id: {args.to} "
                           "adds it as a new column; to fill your own, give --name ASSIGNMENT=\"<its column>\" (the "
                           "guide's section 6)"), file=sys.stderr)
    if waiting:
        print(for_terminal(f"export: still needing manual grading in formgrader, exported with the grader's points: "
                           f"{waiting} (--require-settled writes nothing until none is left)"), file=sys.stderr)
    return 0
