"""Write graded results into the course's nbgrader gradebook (from the trusted parent process only).

After this, formgrader and `nbgrader export` show the scores: each test cell's
`auto_score`, the notebook's `flagged` mark for a flagged submission, and the
late-submission penalty nbgrader's configured plugin computes (late_penalties, at publication). Formgrader also shows
what the sandboxed grader found: a test cell that timed out, was not run, was
flagged or got no verdict from the clean re-run is marked as needing manual grading,
and each answer cell concerned carries the grader's comment (statuses, flag kinds). `cell_scores`
reads them back, without writing, for whoever checks what grading stored.
"""

import logging
import sqlite3
import warnings
from pathlib import Path
from typing import NamedTuple

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.utils import parse_utc
from sqlalchemy.exc import SAWarning

from ... import upstream
from ...schema import CellStatus, Status


def scratch_writes(db_url):
    """Let the gradebook at `db_url` skip the disk flush on commit: for a worker's scratch copy only.

    nbgrader commits after every cell it records (a flush to disk each time); the scratch copy is thrown
    away with its worker, and the course's gradebook, written by the parent alone, keeps its flushes.
    Needs upstream.reuse_gradebook_engines (one engine per URL): every later Gradebook on `db_url` uses this one.
    """
    from nbgrader import api
    from sqlalchemy import event

    engines = upstream.gradebook_engines()  # refuses unless reuse_gradebook_engines has run
    with api.Gradebook(db_url):  # makes the engine (and checks the schema) once
        pass
    engine = engines[db_url]

    @event.listens_for(engine, "connect")
    def _no_flush(connection, _record):
        connection.execute("PRAGMA synchronous = OFF")

    engine.dispose()  # connections opened before the listener: closed, the next ones get the pragma


def _course_id(config):
    return config.CourseDirectory.get("course_id", "")


def open_gradebook(config):
    """The course's gradebook (use it as a context manager)."""
    return Gradebook(config.CourseDirectory.db_url, _course_id(config))


def record(config, result, gb=None):
    """Store one student's result (a schema.StudentResult) in the course gradebook (or the open `gb`)."""
    with warnings.catch_warnings():  # nbgrader's own add_submission trips SQLAlchemy's autoflush warnings
        warnings.simplefilter("ignore", SAWarning)
        if gb is not None:
            _record(config, result, gb)
        else:
            with open_gradebook(config) as gb:
                _record(config, result, gb)


def _record(config, result, gb):
    assignment, student = result.assignment, result.student
    gb.update_or_create_student(student)
    kwargs = {}
    if result.timestamp:
        try:
            kwargs["timestamp"] = parse_utc(result.timestamp)
        except (ValueError, OverflowError, TypeError):
            pass
    gb.update_or_create_submission(assignment, student, **kwargs)
    for nb_result in result.notebooks:
        try:
            notebook = gb.find_submission_notebook(nb_result.notebook, assignment, student)
        except MissingEntry:
            continue
        cells = {c.grade_id: c for c in nb_result.cells}
        for grade in notebook.grades:
            cell = cells.get(grade.name)
            if cell is None:
                continue  # a manually graded cell: left to the grader
            grade.auto_score = float(cell.points)
            grade.needs_manual_grade = grade.manual_score is not None or cell.status in TO_REVIEW
        notebook.flagged = nb_result.status == "flagged"
        said = comments(nb_result, [c.name for c in notebook.comments])
        for comment in notebook.comments:
            comment.auto_comment = said.get(comment.name)
    gb.db.commit()  # the late penalty is applied at publication (late_penalties), from the due date of then


class Late(NamedTuple):
    """A late submission as published: how late, and the points its notebooks lost for it."""

    student: str
    seconds_late: float
    penalty: float | None  # None: the configured plugin gave none (nbgrader's default, 'none')


def late_penalties(config, assignment_id):
    """Set each notebook's late penalty of every submission of `assignment_id` in the gradebook; the Late ones.

    nbgrader's AssignLatePenalties, as the course configures it, decides: its plugin (plugin_class) and its bounds
    (no less than 0, no more than the notebook's score), from the submission's time against the due date the
    gradebook holds now (a student's extension included). It runs when results are published, for the whole
    class, so a new due date or a score by hand changes the penalty without grading anyone again. Its own
    preprocess would open a gradebook per notebook, under nbgrader's default course id: this is its body, in one
    session for the class.
    """
    assign = late_plugin(config)
    late = []
    with warnings.catch_warnings(), open_gradebook(config) as gb:
        warnings.simplefilter("ignore", SAWarning)
        try:
            submitted = gb.find_assignment(assignment_id).submissions
        except MissingEntry:
            return []
        late = [found for found in (apply_late(assign, s) for s in submitted) if found is not None]
        gb.db.commit()
    return sorted(late)


def late_plugin(config):
    """nbgrader's AssignLatePenalties with the plugin the course configures, ready for apply_late."""
    from nbgrader.preprocessors import AssignLatePenalties

    assign = AssignLatePenalties(config=config, log=_QUIET)
    assign.init_plugin()
    return assign


def apply_late(assign, submission):
    """Set the late penalty of each notebook of one gradebook `submission` (uncommitted); its Late, or None."""
    seconds, penalty = submission.total_seconds_late, None
    for notebook in submission.notebooks:
        notebook.late_submission_penalty = None
        given = assign.plugin_inst.late_submission_penalty(submission.student.id, notebook.score,
                                                           seconds) if seconds > 0 else None
        if given is not None:
            notebook.late_submission_penalty = assign._check_late_penalty(notebook, float(given))
            penalty = (penalty or 0.0) + notebook.late_submission_penalty
    return Late(submission.student.id, seconds, penalty) if seconds > 0 else None


def publish_late(config, gb, assignment_id, student):
    """The late penalty of one submission just recorded in the open `gb`, as late_penalties sets the class's: the
    terminal's line and the student's page then give the grade grades.csv gives."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        try:
            apply_late(late_plugin(config), gb.find_submission(assignment_id, student))
        except MissingEntry:
            return
        gb.db.commit()


def clear_hand_grading(gb, assignment_id, student, notebook):
    """Drop the points and comments given by hand to one notebook of a submission (uncommitted): they were given to
    the stand-in of a file the grader could not read, which a readable file has now replaced."""
    try:
        submitted = gb.find_submission_notebook(notebook, assignment_id, student)
    except MissingEntry:
        return False
    given = [g for g in submitted.grades if g.manual_score is not None] + \
        [c for c in submitted.comments if c.manual_comment]
    for grade in submitted.grades:
        grade.manual_score = None
    for comment in submitted.comments:
        comment.manual_comment = None
    return bool(given)


def add_names(config, names):
    """Give each student of `names` ({student: name}) in the gradebook that name as their last name, where the
    gradebook has none (a name set with `nbgrader db student add` is kept)."""
    if not names:
        return
    with warnings.catch_warnings(), open_gradebook(config) as gb:
        warnings.simplefilter("ignore", SAWarning)
        for student in gb.students:
            name = names.get(student.id)
            if name and not (student.first_name or student.last_name):
                student.last_name = name
        gb.db.commit()


def keep_private(config):
    """The gradebook is student data: readable by its owner only (nbgrader makes it 0644)."""
    from ... import private

    url = config.CourseDirectory.db_url
    path = Path(url.removeprefix("sqlite:///"))
    if url.startswith("sqlite:///") and path.is_file() and not path.is_symlink():
        private.tighten(path)


_QUIET = logging.getLogger("autograder.late")  # nbgrader's plugin logs each notebook; publication says it once
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


# Test cells whose points a person should look at: formgrader lists their submission as needing manual grading.
TO_REVIEW = frozenset({CellStatus.TIMEOUT, CellStatus.NOT_RUN, CellStatus.RERUN_INCOMPLETE, CellStatus.FLAGGED})


def comments(nb_result, answer_cells):
    """{answer cell: what the sandboxed grader found}, for formgrader's comment on that cell.

    In the grader's own words only: statuses, test cell ids and points, flag kinds and the course's
    exercise names. A flag's detail and place quote or locate learner code, so they stay in the results
    JSON and the student's page.
    """
    known = set(answer_cells)
    lines = {name: [] for name in known}
    for cell in nb_result.cells:
        if cell.status in TO_REVIEW and cell.exercise in known:
            lines[cell.exercise].append(f"{cell.grade_id}: {cell.status.label} "
                                        f"({cell.points:g} of {cell.max_points:g} points)")
    for flag in nb_result.flags:
        kind = flag.kind if flag.kind in FLAG_KINDS else "finding"
        if flag.exercise in known:
            lines[flag.exercise].append(f"flagged: {kind} in {flag.exercise}")
    if nb_result.status != Status.GRADED:
        whole = nb_result.status not in (Status.FLAGGED, Status.TIMEOUT)  # a problem of the notebook, not a cell
        for name in known:
            if lines[name] or whole:
                lines[name].append(f"status of the notebook: {nb_result.status.label}")
    return {name: "The sandboxed grader (python -m autograder grade): " + "; ".join(said) + "."
            for name, said in lines.items() if said}


FLAG_KINDS = frozenset({"monkeypatch", "reference", "lying", "shadow", "review", "tamper", "disagreement", "channel"})


class CellScore(NamedTuple):
    """One graded cell of one student's submission, as the gradebook holds it."""

    assignment: str
    notebook: str
    student: str
    cell: str  # the cell's grade id
    auto_score: float | None
    manual_score: float | None
    max_score: float


def cell_scores(db_path):
    """Every graded cell in the gradebook at `db_path` (CellScore records), read without writing anything.

    (nbgrader's own Gradebook would create its tables on opening the file.)"""
    db = sqlite3.connect(f"{Path(db_path).absolute().as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT assignment.name, notebook.name, submitted_assignment.student_id, base_cell.name, "
            "grade.auto_score, grade.manual_score, grade_cells.max_score FROM grade "
            "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
            "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id "
            "JOIN assignment ON submitted_assignment.assignment_id = assignment.id "
            "JOIN notebook ON submitted_notebook.notebook_id = notebook.id "
            "JOIN base_cell ON grade.cell_id = base_cell.id JOIN grade_cells ON grade_cells.id = base_cell.id "
            "ORDER BY assignment.name, submitted_assignment.student_id, notebook.name, base_cell.name").fetchall()
    finally:
        db.close()
    return [CellScore(*row) for row in rows]


def submitted_students(config, assignment):
    """The ids of the students with a submission of `assignment` in the gradebook (read only; none: empty)."""
    url = config.CourseDirectory.db_url
    path = Path(url.removeprefix("sqlite:///"))
    if not url.startswith("sqlite:///") or not path.exists():
        return set()
    db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT submitted_assignment.student_id FROM submitted_assignment JOIN assignment "
                          "ON submitted_assignment.assignment_id = assignment.id WHERE assignment.name = ?",
                          (assignment,)).fetchall()
    finally:
        db.close()
    return {row[0] for row in rows}
