"""One result schema: the records grading builds and writes (`<student>.json`, "schema": 1) and the report reads.

    StudentResult   one student's submission: its NotebookResults, flags, overall status and score
    NotebookResult  one notebook: its CellResults and Flags
    CellResult      one test cell: the points it earned, and each run's verdict (Run)
    Flag            an integrity finding on an exercise (or, with none, on the notebook: shown, costs nothing)

`to_dict` gives the JSON; `from_dict` reads exactly schema 1 back, or raises a
SchemaError saying where, what was expected and what came.
"""

import functools
import math
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from enum import Enum, StrEnum
from types import UnionType
from typing import get_args, get_origin

from .sanitise import plain_record

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
    """A catalogue mistake the failing check recognised: its key, and the catalogue's explanation."""

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
    # Why it lost points ("" when it earned them all), as the student reads it: under a private offering a failed
    # hidden test says what failed without its data, which `clean_run.message` keeps for the instructor.
    message: str = ""
    diagnosis: tuple[Diagnosis, ...] = ()  # each catalogue mistake the clean re-run's check recognised
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
    DERIVED = ("costs_points",)  # written for readers, read from kind and exercise

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
    cells: list[CellResult] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    error: str | None = None  # the grader's traceback, when it failed on this notebook
    course_errors: list[str] = field(default_factory=list)  # course cells that failed in the clean re-run

    def to_dict(self):
        """The JSON record, every string plain text (sanitise.plain_record): much of it quotes the learner."""
        return plain_record(dict(asdict(self), cells=[asdict(c) for c in self.cells],
                                 flags=[f.to_dict() for f in self.flags]))


@dataclass
class StudentResult:
    """One student's result: what `grade` writes as <student>.json and `check` prints."""

    student: str
    assignment: str
    status: Status
    score: float = 0.0
    max_score: float = 0.0
    notebooks: list[NotebookResult] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)  # the notebooks' flags, then the submission's own (review only)
    timestamp: str | None = None
    error: str | None = None
    seconds: float | None = None
    DERIVED = ("schema", "cells")

    @property
    def cells(self):
        return [c for nb in self.notebooks for c in nb.cells]

    @property
    def status_label(self):
        return self.status.label

    def to_dict(self):
        """The JSON record, every string plain text (sanitise.plain_record); `cells` repeats the notebooks'
        cells in one list, for readers of one level."""
        return plain_record({
            "schema": SCHEMA, "student": self.student, "assignment": self.assignment, "status": self.status,
            "score": self.score, "max_score": self.max_score, "timestamp": self.timestamp,
            "error": self.error, "seconds": self.seconds, "notebooks": [nb.to_dict() for nb in self.notebooks],
            "cells": [asdict(c) for c in self.cells], "flags": [f.to_dict() for f in self.flags]})

    @classmethod
    def from_dict(cls, data, where="the record"):
        """The record of a schema 1 JSON object; SchemaError if it is anything else."""
        if not isinstance(data, dict) or data.get("schema") != SCHEMA or isinstance(data.get("schema"), bool):
            came = (_show(data) if not isinstance(data, dict) else "no schema field" if "schema" not in data
                    else f'"schema": {_show(data["schema"])}')
            raise SchemaError(f'{where} should be a student\'s results with "schema": {SCHEMA} (as `python -m '
                              f'autograder grade` writes them), got {came}')
        try:
            return cls(**_fields(StudentResult, data, ""))
        except SchemaError as exc:
            raise SchemaError(f"{where}: {exc}") from None


def _show(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _read(kind, value, where):
    """The JSON `value` as a `kind` (a record, an enum, a list of one kind, a number, text, or one of these or null)."""
    category, args = _shape(kind)
    if category == "float":
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SchemaError(f"{where} should be a finite number, got {_show(value)}")
        return float(value)
    if category == "plain":
        if not isinstance(value, kind):
            raise SchemaError(f"{where} should be {'text' if kind is str else kind.__name__}, got {_show(value)}")
        return value
    if category == "optional":  # X | None
        return None if value is None else _read(args[0], value, where)
    if category in (list, tuple):
        if not isinstance(value, list):
            raise SchemaError(f"{where} should be a list, got {_show(value)}")
        return category(_read(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
    if category == "enum":
        try:
            return kind(value)
        except ValueError:
            raise SchemaError(f"{where} {_show(value)} is not one of schema {SCHEMA}'s ({', '.join(kind)})") from None
    return kind(**_fields(kind, value, where))  # a record


def _fields(kind, data, where):
    """{name: value} of each field of record `kind` in the JSON object `data`: all of them, and no other."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where or 'the record'} should be an object, got {_show(data)}")
    names, types, derived = _layout(kind)
    missing = [name for name in names if name not in data]
    unknown = [name for name in data if name not in names and name not in derived]
    if missing or unknown:
        raise SchemaError(f"{where or 'the record'} has " + (f"no {', '.join(map(repr, missing))} field" if missing else
                          f"the field(s) {', '.join(map(repr, unknown))}, which schema {SCHEMA} does not have")
                          + f" (its fields: {', '.join(names + derived)})")
    prefix = f"{where}." if where else ""
    return {name: _read(kind_, data[name], prefix + name) for name, kind_ in zip(names, types, strict=True)}


@functools.cache
def _shape(kind):
    """(what `kind` is, its type arguments), worked out once per type: a results file has thousands of values."""
    origin, args = get_origin(kind), get_args(kind)
    if origin is UnionType:
        return "optional", args
    if origin in (list, tuple):
        return origin, args
    if isinstance(kind, type) and issubclass(kind, Enum):
        return "enum", args
    if is_dataclass(kind):
        return "record", args
    return ("float" if kind is float else "plain"), args


@functools.cache
def _layout(kind):
    """(field names, their types, derived names) of record `kind`, worked out once per record type."""
    return [f.name for f in fields(kind)], [f.type for f in fields(kind)], list(getattr(kind, "DERIVED", ()))
