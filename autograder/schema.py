"""One result schema: the records grading builds and writes (`<student>.json`, "schema": 1) and the report reads.

    StudentResult   one student's submission: its NotebookResults, flags, overall status and score
    NotebookResult  one notebook: its CellResults and Flags
    CellResult      one test cell: the points it earned, and each run's verdict (Run)
    Flag            an integrity finding on an exercise (or, with none, on the notebook: shown, costs nothing)

`to_dict` gives the JSON; `from_dict` reads exactly schema 1 back, or raises a
SchemaError saying where, what was expected and what came.
"""

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum

SCHEMA = 1


class Status(StrEnum):
    """A notebook's or a student's overall status, most serious first; the value is the label shown for it."""

    RESULTS_UNREADABLE = "results file unreadable"  # the report's own: a results file it could not read
    MISSING = "missing notebook"
    UNREADABLE = "unreadable notebook"
    GRADER_ERROR = "grader error"
    FLAGGED = "flagged"
    OUT_OF_MEMORY = "out of memory"
    TIMEOUT = "timeout"
    KERNEL_DIED = "kernel died"
    GRADED = "graded"

    @property
    def label(self):
        return self.value

    @classmethod
    def worst(cls, statuses):
        """The most serious of `statuses` (graded when there are none)."""
        return min(map(cls, statuses), key=list(cls).index, default=cls.GRADED)


class CellStatus(StrEnum):
    """A test cell's verdict; the value is the label shown for it."""

    PASSED = "passed"
    PARTIAL = "partial"
    FAILED = "failed"
    NOT_RUN = "not run"
    TIMEOUT = "timeout"
    RERUN_INCOMPLETE = "rerun incomplete"  # no verdict from the clean re-run: points withheld, for review
    FLAGGED = "flagged"

    @property
    def label(self):
        return self.value


class SchemaError(ValueError):
    """A record that is not schema 1: the message says where, what was expected and what came."""


@dataclass(frozen=True)
class Run:
    """One run's verdict on a test cell: its points, and why it lost any."""

    points: float
    message: str = ""


@dataclass(frozen=True)
class Diagnosis:
    """A catalogue mistake a failure message named ("Likely mistake (key): explanation")."""

    key: str
    explanation: str = ""


@dataclass(frozen=True)
class CellResult:
    """One graded test cell: min(notebook run, clean re-run) points, nothing when its exercise is flagged."""

    grade_id: str
    exercise: str | None
    points: float
    max_points: float
    status: CellStatus
    message: str = ""  # why it lost points ("" when it earned them all)
    diagnosis: tuple = ()  # Diagnosis of each catalogue mistake the message names
    notebook_run: Run = Run(0.0)
    clean_run: Run = Run(0.0)
    notebook: str | None = None

    @property
    def mistakes(self):
        """The catalogue keys the diagnosis names, in order, without repeats."""
        return tuple(dict.fromkeys(d.key for d in self.diagnosis))

    @property
    def explanations(self):
        """(key, explanation) of each diagnosis that gives one."""
        return tuple((d.key, d.explanation) for d in self.diagnosis if d.explanation)


@dataclass(frozen=True)
class Flag:
    """An integrity finding: `exercise` None (or kind `review`) is for review only and costs no points."""

    kind: str  # monkeypatch | reference | lying | shadow | review | tamper | disagreement | channel
    exercise: str | None
    detail: str
    where: str = ""  # e.g. "cell 12 (ffn_forward), line 3"
    notebook: str | None = None

    @property
    def costs_points(self):
        """Evidence on one exercise costs that exercise's points; nothing else costs any."""
        return self.kind != "review" and self.exercise is not None

    def describe(self):
        text = self.kind + (f" in {self.exercise}" if self.exercise else "")
        text += f": {self.detail}" if self.detail else ""
        return text + (f" ({self.where})" if self.where else "")

    def to_dict(self):
        return dict(asdict(self), costs_points=self.costs_points)


@dataclass
class NotebookResult:
    """One notebook of a submission."""

    notebook: str
    status: Status
    score: float
    max_score: float
    cells: list = field(default_factory=list)
    flags: list = field(default_factory=list)
    error: str | None = None  # the grader's traceback, when it failed on this notebook
    course_errors: list = field(default_factory=list)  # course cells that failed in the clean re-run

    def to_dict(self):
        return dict(asdict(self), cells=[asdict(c) for c in self.cells], flags=[f.to_dict() for f in self.flags])


@dataclass
class StudentResult:
    """One student's result: what `grade` writes as <student>.json and `check` prints."""

    student: str
    assignment: str
    status: Status
    score: float = 0.0
    max_score: float = 0.0
    notebooks: list = field(default_factory=list)
    flags: list = field(default_factory=list)  # the notebooks' flags, then the submission's own (review only)
    timestamp: str | None = None
    error: str | None = None
    seconds: float | None = None

    @property
    def cells(self):
        return [c for nb in self.notebooks for c in nb.cells]

    @property
    def status_label(self):
        return self.status.label

    def to_dict(self):
        """The JSON record; `cells` repeats the notebooks' cells in one list, for readers of one level."""
        return {"schema": SCHEMA, "student": self.student, "assignment": self.assignment, "status": self.status,
                "score": self.score, "max_score": self.max_score, "timestamp": self.timestamp,
                "error": self.error, "seconds": self.seconds, "notebooks": [nb.to_dict() for nb in self.notebooks],
                "cells": [asdict(c) for c in self.cells], "flags": [f.to_dict() for f in self.flags]}

    @classmethod
    def from_dict(cls, data, where="the record"):
        """The record of a schema 1 JSON object; SchemaError if it is anything else."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA or isinstance(data.get("schema"), bool):
            came = (_show(data) if not isinstance(data, dict) else "no schema field" if "schema" not in data
                    else f'"schema": {_show(data["schema"])}')
            raise SchemaError(f'{where} should be a student\'s results with "schema": {SCHEMA} (as `python -m '
                              f'autograder grade` writes them), got {came}')
        _fields(data, where, ("schema", "student", "assignment", "status", "score", "max_score", "notebooks",
                              "cells", "flags"), ("timestamp", "error", "seconds"))
        notebooks = [_notebook(nb, f"{where} notebooks[{i}]") for i, nb in enumerate(_list(data, "notebooks", where))]
        _list(data, "cells", where)  # the notebooks' cells again: read there
        return cls(_text(data, "student", where), _text(data, "assignment", where),
                   _status(Status, data, where), _number(data, "score", where), _number(data, "max_score", where),
                   notebooks, [_flag(f, f"{where} flags[{i}]") for i, f in enumerate(_list(data, "flags", where))],
                   _text(data, "timestamp", where, none=True), _text(data, "error", where, none=True),
                   None if data.get("seconds") is None else _number(data, "seconds", where))


def _show(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _fields(data, where, required, optional=()):
    if not isinstance(data, dict):
        raise SchemaError(f"{where} should be an object, got {_show(data)}")
    missing = [name for name in required if name not in data]
    if missing:
        raise SchemaError(f"{where} has no {', '.join(map(repr, missing))} field (schema {SCHEMA} has "
                          f"{', '.join(required + tuple(optional))})")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise SchemaError(f"{where} has the field(s) {', '.join(map(repr, unknown))}, which schema {SCHEMA} does "
                          f"not have (it has {', '.join(required + tuple(optional))})")


def _number(data, name, where):
    value = data[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SchemaError(f"{where} {name} should be a finite number, got {_show(value)}")
    return float(value)


def _text(data, name, where, none=False):
    value = data.get(name)
    if not (isinstance(value, str) or (none and value is None)):
        raise SchemaError(f"{where} {name} should be text{' or null' if none else ''}, got {_show(value)}")
    return value


def _list(data, name, where):
    if not isinstance(data[name], list):
        raise SchemaError(f"{where} {name} should be a list, got {_show(data[name])}")
    return data[name]


def _status(kind, data, where):
    try:
        return kind(data["status"])
    except ValueError:
        raise SchemaError(f"{where} status {_show(data['status'])} is not one of schema {SCHEMA}'s "
                          f"({', '.join(kind)})") from None


def _notebook(data, where):
    _fields(data, where, ("notebook", "status", "score", "max_score", "cells", "flags"), ("error", "course_errors"))
    errors = data.get("course_errors") or []
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
        raise SchemaError(f"{where} course_errors should be a list of text, got {_show(errors)}")
    return NotebookResult(_text(data, "notebook", where), _status(Status, data, where), _number(data, "score", where),
                          _number(data, "max_score", where),
                          [_cell(c, f"{where}.cells[{i}]") for i, c in enumerate(_list(data, "cells", where))],
                          [_flag(f, f"{where}.flags[{i}]") for i, f in enumerate(_list(data, "flags", where))],
                          _text(data, "error", where, none=True), errors)


def _cell(data, where):
    _fields(data, where, ("grade_id", "exercise", "points", "max_points", "status", "message", "diagnosis",
                          "notebook_run", "clean_run"), ("notebook",))
    where = f"{where} ({_text(data, 'grade_id', where)})"
    runs = {}
    for name in ("notebook_run", "clean_run"):
        _fields(data[name], f"{where} {name}", ("points", "message"))
        runs[name] = Run(_number(data[name], "points", f"{where} {name}"), _text(data[name], "message", where))
    diagnosis = []
    for item in _list(data, "diagnosis", where):
        _fields(item, f"{where} diagnosis", ("key", "explanation"))
        diagnosis.append(Diagnosis(_text(item, "key", where), _text(item, "explanation", where)))
    return CellResult(data["grade_id"], _text(data, "exercise", where, none=True), _number(data, "points", where),
                      _number(data, "max_points", where), _status(CellStatus, data, where),
                      _text(data, "message", where), tuple(diagnosis), runs["notebook_run"], runs["clean_run"],
                      _text(data, "notebook", where, none=True))


def _flag(data, where):
    _fields(data, where, ("kind", "exercise", "detail", "where", "costs_points"), ("notebook",))
    return Flag(_text(data, "kind", where), _text(data, "exercise", where, none=True), _text(data, "detail", where),
                _text(data, "where", where), _text(data, "notebook", where, none=True))

