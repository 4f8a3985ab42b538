"""Read what `python -m autograder grade` wrote into RESULTS_DIR, as the class report needs it.

`read_results` is the one place that reads the per-student JSON: exactly schema 1
(autograder/schema.py, the records the grader writes); everything else in the report
works on the `StudentResult`s it returns. A file it cannot read (not JSON, another
schema, a field of the wrong type) becomes a student whose status says so, with a
note naming the file, what was expected and what came; nothing here raises for bad
input except `ReportError` (no results at all, a missing folder).

Where the files are: `RESULTS_DIR/<student>.json` (one assignment per folder, or
each file naming its assignment) or `RESULTS_DIR/<assignment>/<student>.json`.
Beside them, `grades.csv` (what `grade` writes from the gradebook) gives each student's
grade after the late penalty and with the points given by hand, and their name: the
report's totals are those grades, as the exports give them.
"""

import csv
import json
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import SOURCE_DIR, exercise_of_test, exercises_in_order, readable, schema, source_metadata
from ..cells import role_of_metadata
from ..schema import CellStatus, SchemaError, Status


class ReportError(Exception):
    """Bad input the report cannot work around; the message says what was expected and what came."""


# Students whose notebook produced no scores at all: they are not part of the score statistics.
UNSCORED = (Status.UNREADABLE, Status.MISSING, Status.GRADER_ERROR, Status.RESULTS_UNREADABLE)


@dataclass
class StudentResult(schema.StudentResult):
    """A student's result as the report reads it: the record, why it needs attention, and its file."""

    reason: str = ""
    path: Path | None = None
    grade: float | None = None  # grades.csv's: the score with hand points, less the late penalty (None: not there)
    name: str = ""  # grades.csv's first and last name (the LMS download's, kept in the gradebook)

    @property
    def scored(self):
        """The notebook was graded far enough to have scores (a timeout still scores the other exercises)."""
        return self.status not in UNSCORED and bool(self.cells)


@dataclass(frozen=True)
class Layout:
    """An assignment's graded test cells in course order: (grade_id, exercise, max points)."""

    assignment: str
    cells: tuple

    @property
    def exercises(self):
        return list(dict.fromkeys(ex for _, ex, _ in self.cells))

    @property
    def max_score(self):
        return sum(p for _, _, p in self.cells)


@dataclass
class Results:
    students: dict  # assignment -> [StudentResult], in student order
    layouts: dict  # assignment -> Layout or None (not a course assignment)
    notes: list = field(default_factory=list)  # what the reader ignored or could not read, for the report


def course_layout(assignment):
    """The graded test cells of a course assignment, from its authored source; None if it is not one."""
    path = SOURCE_DIR / assignment / f"{assignment}.py"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", assignment) or not path.is_file():
        return None
    metas = [m for m in source_metadata(path) if m.get("grade_id")]
    roles = [(m["grade_id"], role if (role := role_of_metadata(m)) in ("answer", "test") else None) for m in metas]
    cells = [(grade_id, exercise, float(meta.get("points", 0) or 0))
             for meta, (grade_id, role), exercise in zip(metas, roles, exercises_in_order(roles), strict=True)
             if role == "test"]
    return Layout(assignment, tuple(cells))


def _student(record, path):
    """The report's StudentResult of one schema 1 record (SchemaError if it is not one)."""
    result = StudentResult.from_dict(record, path.name)
    for nb in result.notebooks:  # a test cell of no known exercise is its own, by the one rule
        nb.cells = [c if c.exercise else replace(c, exercise=exercise_of_test(c.grade_id)) for c in nb.cells]
    result.reason, result.path = result.error or _reason_from_cells(result.status, result.cells), path
    return result


def _reason_from_cells(status, cells):
    """Why a submission was not graded normally, from its cells when the results give no reason."""
    if status in (Status.GRADED, Status.FLAGGED):  # a flagged submission's flags say why
        return ""
    if status == Status.TIMEOUT:
        late = [c.grade_id for c in cells if c.status == CellStatus.TIMEOUT]
        if late:
            return "timed out in " + ", ".join(late)
    messages = [c.message.strip().splitlines()[0] for c in cells
                if c.message.strip() and c.points < c.max_points and not c.mistakes]
    if status == Status.OUT_OF_MEMORY:
        messages = [m for m in messages if "Memory" in m] or messages
    return next(iter(dict.fromkeys(messages)), "")[:300]


def _candidate_files(results_dir, assignments):
    """(path, assignment implied by its folder or None) for every JSON the report may read."""
    files = [(p, None) for p in sorted(results_dir.glob("*.json"))]
    for aid in assignments:
        sub = results_dir / aid
        if sub.is_dir():
            files += [(p, aid) for p in sorted(sub.glob("*.json"))]
    return files


def read_results(results_dirs, assignments):
    """Every student's results for `assignments` found in `results_dirs` (a folder or a list of folders)."""
    if isinstance(results_dirs, str | Path):
        results_dirs = [results_dirs]
    assignments = list(dict.fromkeys(assignments))
    notes = []
    students = {aid: {} for aid in assignments}
    others = Counter()  # results of assignments not asked for
    for results_dir in map(Path, results_dirs):
        if not results_dir.is_dir():
            raise ReportError(f"--results should be the folder `python -m autograder grade` wrote, "
                              f"but {str(results_dir)!r} " + ("is not a folder" if results_dir.exists()
                                                               else "does not exist"))
        for path, implied in _candidate_files(results_dir, assignments):
            _read_file(path, implied, assignments, notes, students, others)
    if others:
        notes.append("ignored results of assignments not asked for: "
                      + ", ".join(f"{aid} ({n})" for aid, n in sorted(others.items())))
    found = sum(len(s) for s in students.values())
    if not found:
        where = ", ".join(map(str, results_dirs))
        seen = f" (it holds results of {', '.join(sorted(others))} only)" if others else ""
        raise ReportError(f"found no student results for {', '.join(assignments)} in {where}{seen}: expected "
                          "<student>.json files as written by `python -m autograder grade ASSIGNMENT "
                          "SUBMITTED_DIR --out RESULTS_DIR`")
    layouts = {aid: course_layout(aid) for aid in assignments}
    for aid in assignments:
        _read_grades(results_dirs, aid, len(assignments) == 1, students[aid])
    return Results({aid: [s[k] for k in sorted(s)] for aid, s in students.items()}, layouts, notes)


def _read_grades(results_dirs, aid, alone, students):
    """Each student's grade and name from grades.csv (RESULTS_DIR/<assignment>/, or RESULTS_DIR/ for the one
    assignment asked for); a file that is not there, or a row that does not parse, leaves the student as it is."""
    for results_dir in map(Path, results_dirs):
        for path in [results_dir / aid / "grades.csv"] + ([results_dir / "grades.csv"] if alone else []):
            try:
                with path.open(newline="", encoding="utf-8") as f:
                    rows = list(csv.DictReader(f))
            except (OSError, UnicodeDecodeError, csv.Error):
                continue
            for row in rows:
                student = students.get(row.get("student_id") or "")
                if student is None:
                    continue
                try:
                    student.grade = float(row["grade"]) if row.get("grade") else None
                except ValueError:
                    student.grade = None
                name = " ".join(n for n in (row.get("first_name"), row.get("last_name")) if n)
                student.name = readable.clean(name.lstrip("'"))[:200]
            return


def _read_file(path, implied, assignments, notes, students, others):
    record, reason = None, ""
    try:
        record = readable.clean(json.loads(path.read_text(encoding="utf-8")))  # no lone surrogate reaches the page
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        reason = f"{path.name} could not be read as JSON ({exc})"
    if not reason and not (isinstance(record, dict) and ("student" in record or "schema" in record)):
        notes.append(f"skipped {path.name}: not a student's results (no schema or student field)")
        return
    named = record.get("assignment") if isinstance(record, dict) else None
    aid = named if isinstance(named, str) else implied or (assignments[0] if len(assignments) == 1 else None)
    if aid is None:
        notes.append(f"skipped {reason}" if reason else f"skipped {path.name}: it names no assignment; with several "
                     "assignments, put each one's results in RESULTS_DIR/<assignment>/ or give each an 'assignment'")
        return
    if aid not in students:
        others[aid] += 1
        return
    try:
        result = None if reason else _student(record, path)
    except SchemaError as exc:
        reason = str(exc)
    if reason:
        notes.append(f"{reason}: its student is listed as needing attention")
        result = StudentResult(path.stem, aid, Status.RESULTS_UNREADABLE, reason=reason, path=path)
    if result.student in students[aid]:
        first = students[aid][result.student].path
        notes.append(f"{path.name}: a second result for {result.student} in {aid}; "
                     f"kept the one in {first.name if first else 'the first file'}")
        return
    students[aid][result.student] = result


# ---------------------------------------------------------------- answer cells, for the similarity section


def course_answers(assignment):
    """({grade_id: published solution code}, {grade_id: starter code}) of a course assignment's answer cells."""
    from .. import NOTEBOOKS_DIR, SOLUTIONS_DIR

    return tuple(_answer_cells(json.loads((folder / f"{assignment}.ipynb").read_text(encoding="utf-8")))
                 for folder in (SOLUTIONS_DIR, NOTEBOOKS_DIR))


def _course_cells(assignment):
    """The sources of the course's own locked cells in the learner release of `assignment` (none without one)."""
    from .. import NOTEBOOKS_DIR

    try:
        release = json.loads((NOTEBOOKS_DIR / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    return frozenset(source for _, role, source in _code_cells(release) if role == "instructor")


def _code_cells(notebook):
    """(nbgrader metadata, role, source) of each code cell of a notebook read as JSON; malformed ones left out."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for c in cells if isinstance(cells, list) else ():
        meta = c.get("metadata", {}).get("nbgrader", {}) if isinstance(c, dict) else {}
        meta = meta if isinstance(meta, dict) else {}
        source = c.get("source") if isinstance(c, dict) else None
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if isinstance(source, str) and c.get("cell_type") == "code":
            yield meta, role_of_metadata(meta), source


def _answer_cells(notebook, wanted=None, course=None):
    """{grade_id: code} of a notebook's answer cells (nbgrader `solution`), the first of each id, each with the
    notebook's other cells the clean re-run runs for it (similarity.code_it_runs). Those other cells are the ones
    the re-run may run beside the answers (cells.role_of): every code cell that is neither an answer nor a test;
    what it runs is chosen by the names the answers of `wanted` (the course's exercises) read. The course's own
    cells among them resolve names but are not shown: in one of the course's notebooks (`course` None) its locked
    cells; in a student's, the cells whose source is one in `course`, never what the student's own metadata claims
    (a free cell marked locked is still the student's)."""
    from .similarity import code_it_runs, other_cells

    out, free, ours = {}, [], []
    for meta, role, source in _code_cells(notebook):
        gid = meta.get("grade_id") if role == "answer" else None
        if isinstance(gid, str) and (wanted is None or gid in wanted):
            out.setdefault(gid, source)
        elif role in ("instructor", "learner"):
            the_courses = role == "instructor" if course is None else source in course
            (ours if the_courses else free).append(source)
    others = other_cells(free, ours, out.values()) if out else None  # read once for all the notebook's answer cells
    return {gid: code_it_runs(code, others) for gid, code in out.items()}


def read_answers(notebooks_dir, assignment, students, wanted):
    """({student: {grade_id: code}}, notes) from NOTEBOOKS_DIR/<student>/<assignment>/<assignment>.ipynb.

    The path is built from a valid student id and the course's own assignment and notebook names; no
    folder on it may be a link, and the notebook is opened without following one (course.read_notebook).
    """
    from ..grading.course import read_notebook
    from ..grading.submissions import STUDENT_ID

    answers, unread, course = {}, Counter(), _course_cells(assignment)
    for student in students:
        if not STUDENT_ID.match(student):
            unread["not a valid student id"] += 1
            continue
        folder = Path(notebooks_dir) / student / assignment
        if not all(_plain_dir(p) for p in (folder.parent, folder)):
            unread["no notebook folder (or a link)"] += 1
            continue
        nb, why = read_notebook(folder / f"{assignment}.ipynb")
        if nb is None:
            unread[why if len(why) < 60 else why[:57] + "..."] += 1
            continue
        answers[student] = _answer_cells(readable.clean(nb), wanted, course)
    notes = [f"{n} of {len(students)} students' notebooks of {assignment} were not compared: {why}"
             for why, n in sorted(unread.items())]
    return answers, notes


def _plain_dir(path):
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
