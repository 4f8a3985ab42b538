"""Read what `python -m autograder grade` wrote into RESULTS_DIR, as the class report needs it.

`read_results` is the one place that knows the per-student JSON: everything
else in the report works on the `StudentResult`s it returns. It is tolerant on
purpose: a field it does not know is ignored and listed in `Results.notes`, a
file it cannot read becomes a student whose status says so, and nothing here
raises for bad input except `ReportError` (no results at all, a missing folder).

Where the files are: `RESULTS_DIR/<student>.json` (one assignment per folder, or
each file naming its assignment) or `RESULTS_DIR/<assignment>/<student>.json`.
"""

import json
import math
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ffn_helpers.checks import LIKELY_MISTAKE

from .. import SOURCE_DIR, exercise_of_test


class ReportError(Exception):
    """Bad input the report cannot work around; the message says what was expected and what came."""


# Overall statuses (issue 5), with the words the report shows for them. The last one is the report's
# own: a results file that could not be read at all.
STATUS_LABELS = {
    "graded": "graded",
    "flagged": "flagged",
    "timeout": "timeout",
    "out_of_memory": "out of memory",
    "kernel_died": "kernel died",
    "unreadable": "unreadable notebook",
    "missing": "missing notebook",
    "grader_error": "grader error",
    "results_unreadable": "results file unreadable",
    "unknown": "unknown status",
}
_STATUS_ALIASES = {
    "graded": "graded", "ok": "graded", "complete": "graded", "completed": "graded", "passed": "graded",
    "flagged": "flagged", "integrity": "flagged",
    "timeout": "timeout", "timed out": "timeout", "time out": "timeout",
    "out of memory": "out_of_memory", "oom": "out_of_memory", "memory": "out_of_memory",
    "kernel died": "kernel_died", "kernel dead": "kernel_died", "kernel crashed": "kernel_died",
    "died": "kernel_died", "crashed": "kernel_died",
    "unreadable notebook": "unreadable", "unreadable": "unreadable", "invalid notebook": "unreadable",
    "missing notebook": "missing", "missing": "missing", "not submitted": "missing", "no submission": "missing",
    "grader error": "grader_error", "error": "grader_error",
}
# Students whose notebook produced no scores at all: they are not part of the score statistics.
UNSCORED = ("unreadable", "missing", "grader_error", "results_unreadable")

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# The field names the adapter reads (results.py's names first), each with the other spellings it accepts.
_STUDENT_FIELDS = {
    "student": ("student", "student_id", "id"),
    "assignment": ("assignment", "assignment_id"),
    "status": ("status", "overall_status", "state"),
    "reason": ("error", "reason", "detail"),
    "cells": ("cells", "tests", "test_cells", "grades"),
    "flags": ("flags", "integrity_flags", "integrity"),
}
_CELL_FIELDS = {
    "grade_id": ("grade_id", "id", "name", "cell"),
    "exercise": ("exercise",),
    "points": ("points", "score"),
    "max_points": ("max_points", "max_score", "points_possible", "possible"),
    "status": ("status", "outcome"),
    "message": ("message", "messages", "failure", "feedback", "output"),
    "diagnosis": ("diagnosis", "diagnoses", "mistakes", "mistake_keys", "likely_mistakes"),
}
# Fields the grader writes that the report has no use for: read silently, never listed as unknown.
# (The score is recomputed from the cells, and `notebooks` holds the same cells again, per notebook.)
_IGNORED_STUDENT_FIELDS = ("score", "max_score", "notebooks", "timestamp", "notebook", "feedback", "seconds",
                           "version", "schema_version")
_IGNORED_CELL_FIELDS = ("notebook", "notebook_run", "clean_run", "seconds", "hidden")


@dataclass(frozen=True)
class TestCell:
    """One graded test cell of one student."""

    grade_id: str
    exercise: str
    points: float  # earned (0 when the grader gave no score)
    max_points: float
    status: str = ""
    mistakes: tuple = ()  # catalogue keys the diagnosis named, in order, without repeats
    explanations: tuple = ()  # (key, the explanation as the message gave it)
    message: str = ""


@dataclass(frozen=True)
class Flag:
    """An integrity finding: `costs_points` False is a `review` note (shown, not penalised)."""

    kind: str
    detail: str = ""
    exercise: str | None = None
    where: str = ""
    costs_points: bool = True

    def describe(self):
        text = self.kind + (f" in {self.exercise}" if self.exercise else "")
        text += f": {self.detail}" if self.detail else ""
        return text + (f" ({self.where})" if self.where else "")


@dataclass
class StudentResult:
    student: str
    assignment: str
    status: str  # a key of STATUS_LABELS
    reason: str = ""
    cells: tuple = ()
    flags: tuple = ()
    path: Path | None = None

    @property
    def scored(self):
        """The notebook was graded far enough to have scores (a timeout still scores the other exercises)."""
        return self.status not in UNSCORED and bool(self.cells)

    @property
    def status_label(self):
        return STATUS_LABELS[self.status]


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


_CELL_HEADER = re.compile(r"^# %%(?P<rest>.*)$")
_NBGRADER_META = re.compile(r"\bnbgrader=(?P<json>\{.*\})\s*$")


def _source_metadata(path):
    """The nbgrader metadata of each cell of a jupytext percent source, read from its `# %%` header lines.

    (Reading the headers directly avoids importing jupytext and nbformat, which costs seconds.)
    """
    metas = []
    for line in path.read_text(encoding="utf-8").splitlines():
        header = _CELL_HEADER.match(line)
        if header:
            meta = _NBGRADER_META.search(header["rest"])
            metas.append(json.loads(meta["json"]) if meta else {})
    return metas


def course_layout(assignment):
    """The graded test cells of a course assignment, from its authored source; None if it is not one."""
    path = SOURCE_DIR / assignment / f"{assignment}.py"
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", assignment) or not path.is_file():
        return None
    metas = [m for m in _source_metadata(path) if m.get("grade_id")]
    answers = {m["grade_id"] for m in metas if m.get("solution")}
    cells, previous = [], None
    for meta in metas:
        if meta.get("solution"):
            previous = meta["grade_id"]
        elif meta.get("grade"):
            cells.append((meta["grade_id"], exercise_of_test(meta["grade_id"], answers, previous),
                          float(meta.get("points", 0) or 0)))
    return Layout(assignment, tuple(cells))


def normalise_status(raw):
    """('graded' | 'timeout' | ..., a note when the value was not understood)."""
    if raw is None:
        return None, ""
    text = re.sub(r"[\s_-]+", " ", str(raw)).strip().lower()
    if text in _STATUS_ALIASES:
        return _STATUS_ALIASES[text], ""
    known = ", ".join(STATUS_LABELS[k] for k in STATUS_LABELS if k not in ("results_unreadable", "unknown"))
    return "unknown", f"status {raw!r} is not one the report knows ({known})"


def mistakes_named(text):
    """[(key, explanation)] of every 'Likely mistake (key): explanation' line in `text`."""
    return [(m["key"], m["text"].strip()) for m in LIKELY_MISTAKE.finditer(_ANSI.sub("", text))]


class _BadField(Exception):
    pass


def _pick(record, names):
    """The value of the first of `names` present in `record` (None if none is)."""
    return next((record[name] for name in names if name in record), None)


def _number(value, where):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _BadField(f"{where} should be a finite number, got {value!r}")
    return float(value)


def _listed(value):
    return [] if value is None else value if isinstance(value, list) else [value]


def _diagnosis(message, diagnosis, where):
    """[(key, explanation or '')] from a failure message's lines and a structured diagnosis list."""
    named = []
    for text in _listed(message):
        if isinstance(text, dict):
            text = text.get("message") or text.get("text") or ""
        if not isinstance(text, str):
            raise _BadField(f"{where} message should be text, got {text!r}")
        named += mistakes_named(text)
    for item in _listed(diagnosis):
        key, text = (item, "") if isinstance(item, str) else (
            (item.get("key"), item.get("explanation") or "") if isinstance(item, dict) else (None, ""))
        if not isinstance(key, str) or not key or not isinstance(text, str):
            raise _BadField(f"{where} diagnosis should be a list of {{'key': ..., 'explanation': ...}}, got {item!r}")
        named.append((key, text.strip()))
    return named


class _Reader:
    def __init__(self, notes):
        self.notes = notes
        self.unknown = Counter()  # (where, field) -> files

    def _track_unknown(self, record, spec, ignored, where):
        known = {name for names in spec.values() for name in names} | set(ignored)
        for name in record:
            if name not in known:
                self.unknown[(where, name)] += 1

    def cell(self, record, where, grade_id=None):
        if not isinstance(record, dict):
            raise _BadField(f"{where} should be an object with the cell's points, got {record!r}")
        self._track_unknown(record, _CELL_FIELDS, _IGNORED_CELL_FIELDS, "test cell")
        values = {k: _pick(record, names) for k, names in _CELL_FIELDS.items()}
        grade_id = grade_id or values["grade_id"]
        if not isinstance(grade_id, str) or not grade_id:
            raise _BadField(f"{where} has no grade_id (the test cell's name)")
        where = f"{where} ({grade_id})"
        points = _number(values["points"], f"{where} points") or 0.0
        max_points = _number(values["max_points"], f"{where} max_points")
        if max_points is None:
            raise _BadField(f"{where} has no max_points")
        named = _diagnosis(values["message"], values["diagnosis"], where)
        exercise = values["exercise"] if isinstance(values["exercise"], str) and values["exercise"] else None
        message = values["message"] if isinstance(values["message"], str) else ""
        return TestCell(grade_id, exercise or exercise_of_test(grade_id), points, max_points,
                        "" if values["status"] is None else str(values["status"]),
                        tuple(dict.fromkeys(k for k, _ in named)), tuple((k, t) for k, t in named if t), message)

    def flags(self, value, where):
        out = []
        for item in _listed(value):
            if isinstance(item, str):
                out.append(Flag(item))
            elif isinstance(item, dict):
                kind = item.get("kind") or item.get("code") or item.get("type") or "flag"
                detail = item.get("detail") or item.get("message") or ""
                exercise = item.get("exercise")
                costs = item.get("costs_points") is not False and kind != "review"
                out.append(Flag(str(kind), str(detail), str(exercise) if exercise else None,
                                str(item.get("where") or ""), costs))
            else:
                raise _BadField(f"{where} flags should be a list of objects with a kind and a detail, got {item!r}")
        return tuple(out)

    def student(self, record, path, assignment):
        where = path.name
        self._track_unknown(record, _STUDENT_FIELDS, _IGNORED_STUDENT_FIELDS, "student")
        values = {k: _pick(record, names) for k, names in _STUDENT_FIELDS.items()}
        student = values["student"] if isinstance(values["student"], str | int) else None
        student = str(student) if student not in (None, "") else path.stem
        raw_cells = values["cells"] or []
        if isinstance(raw_cells, dict):  # {grade_id: {...}}
            cells = tuple(self.cell(c, f"{where} cells", gid) for gid, c in raw_cells.items())
        elif isinstance(raw_cells, list):
            cells = tuple(self.cell(c, f"{where} cells[{i}]") for i, c in enumerate(raw_cells))
        else:
            raise _BadField(f"cells should be a list of test cells, got {type(raw_cells).__name__}")
        flags = self.flags(values["flags"], where)
        status, status_note = normalise_status(values["status"])
        if status is None:
            status = "graded" if cells else "missing"
            self.notes.append(f"{where}: no status field; taken as {STATUS_LABELS[status]!r}")
        reason = "" if values["reason"] is None else str(values["reason"])
        reason = "; ".join(r for r in (status_note, reason or _reason_from_cells(status, cells)) if r)
        return StudentResult(student, assignment, status, reason, cells, flags, path)

    def unknown_notes(self):
        for (where, name), n in sorted(self.unknown.items()):
            files = "1 file" if n == 1 else f"{n} files"
            self.notes.append(f"ignored the {where} field {name!r} (in {files}): the report does not know it")


def _reason_from_cells(status, cells):
    """Why a submission was not graded normally, from its cells when the results give no reason."""
    if status in ("graded", "flagged"):  # a flagged submission's flags say why
        return ""
    if status == "timeout":
        late = [c.grade_id for c in cells if normalise_status(c.status)[0] == "timeout"]
        if late:
            return "timed out in " + ", ".join(late)
    messages = [c.message.strip().splitlines()[0] for c in cells
                if c.message.strip() and c.points < c.max_points and not c.mistakes]
    if status == "out_of_memory":
        messages = [m for m in messages if "Memory" in m] or messages
    return next(iter(dict.fromkeys(messages)), "")[:300]


def _records(path):
    """The JSON records in one file: an object is one student, a list holds several."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def _looks_like_student(record):
    if not isinstance(record, dict):
        return False
    return any(name in record for key in ("status", "cells", "student") for name in _STUDENT_FIELDS[key])


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
    reader = _Reader(notes)
    students = {aid: {} for aid in assignments}
    others = Counter()  # results of assignments not asked for
    for results_dir in map(Path, results_dirs):
        if not results_dir.is_dir():
            raise ReportError(f"--results should be the folder `python -m autograder grade` wrote, "
                              f"but {str(results_dir)!r} " + ("is not a folder" if results_dir.exists()
                                                               else "does not exist"))
        for path, implied in _candidate_files(results_dir, assignments):
            _read_file(path, implied, assignments, reader, students, others)
    reader.unknown_notes()
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
    return Results({aid: [s[k] for k in sorted(s)] for aid, s in students.items()}, layouts, notes)


def _read_file(path, implied, assignments, reader, students, others):
    try:
        records = _records(path)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        aid = implied or (assignments[0] if len(assignments) == 1 else None)
        reason = f"{path.name} could not be read as JSON ({exc})"
        if aid is None:
            reader.notes.append(f"skipped {reason}")
            return
        reader.notes.append(f"{reason}: its student is listed as needing attention")
        students[aid].setdefault(path.stem, StudentResult(path.stem, aid, "results_unreadable", reason, path=path))
        return
    for record in records:
        if not _looks_like_student(record):
            reader.notes.append(f"skipped {path.name}: not a student's results (no status, cells or student field)")
            continue
        aid = record.get("assignment") or record.get("assignment_id") or implied
        if aid is None:
            if len(assignments) != 1:
                reader.notes.append(f"skipped {path.name}: it names no assignment; with several assignments, put "
                                    "each one's results in RESULTS_DIR/<assignment>/ or give each an 'assignment'")
                continue
            aid = assignments[0]
        if aid not in students:
            others[str(aid)] += 1
            continue
        try:
            result = reader.student(record, path, aid)
        except _BadField as exc:
            reason = f"{path.name}: {exc}"
            reader.notes.append(f"{reason}; its student is listed as needing attention")
            student = record.get("student") or record.get("student_id") or path.stem
            result = StudentResult(str(student), aid, "results_unreadable", reason, path=path)
        if result.student in students[aid]:
            first = students[aid][result.student].path
            reader.notes.append(f"{path.name}: a second result for {result.student} in {aid}; "
                                f"kept the one in {first.name if first else 'the first file'}")
            continue
        students[aid][result.student] = result


# ---------------------------------------------------------------- answer cells, for the similarity section


def course_answers(assignment):
    """({grade_id: published solution code}, {grade_id: starter code}) of a course assignment's answer cells."""
    from .. import NOTEBOOKS_DIR, SOLUTIONS_DIR

    return tuple(_answer_cells(json.loads((folder / f"{assignment}.ipynb").read_text(encoding="utf-8")))
                 for folder in (SOLUTIONS_DIR, NOTEBOOKS_DIR))


def _answer_cells(notebook, wanted=None):
    """{grade_id: source} of a notebook's answer cells (nbgrader `solution`), the first of each id."""
    out = {}
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for c in cells if isinstance(cells, list) else ():
        meta = c.get("metadata", {}).get("nbgrader", {}) if isinstance(c, dict) else {}
        gid = meta.get("grade_id") if isinstance(meta, dict) and meta.get("solution") else None
        source = c.get("source") if gid else None
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if isinstance(gid, str) and isinstance(source, str) and (wanted is None or gid in wanted):
            out.setdefault(gid, source)
    return out


def read_answers(notebooks_dir, assignment, students, wanted):
    """({student: {grade_id: code}}, notes) from NOTEBOOKS_DIR/<student>/<assignment>/<assignment>.ipynb.

    The path is built from a valid student id and the course's own assignment and notebook names; no
    folder on it may be a link, and the notebook is opened without following one (worker.read_notebook).
    """
    from ..grading.submissions import STUDENT_ID
    from ..grading.worker import read_notebook

    answers, unread = {}, Counter()
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
        answers[student] = _answer_cells(nb, wanted)
    notes = [f"{n} of {len(students)} students' notebooks of {assignment} were not compared: {why}"
             for why, n in sorted(unread.items())]
    return answers, notes


def _plain_dir(path):
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
