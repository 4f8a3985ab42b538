"""Synthetic graded classes for the class report's tests, benchmark and screenshot.

`student_record` writes one student's results the way `python -m autograder grade`
does (the one place in the tests that knows that JSON); `synthetic_class` builds a
class whose every number is known by construction: `Construction.named[exercise][key]`
is the set of students given that mistake.
"""

import builtins
import copy
import io
import json
import keyword
import random
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder import NOTEBOOKS_DIR
from autograder.grading.scoring import results
from autograder.report.results import course_layout
from autograder.schema import CellResult, CellStatus, Flag, NotebookResult, Run, Status
from ffn_helpers import mistakes

ASSIGNMENT = "02_forward_pass"


def failure_message(function, keys):
    """A failure message as `checks.check` writes it, naming the catalogue mistakes `keys`."""
    lines = [f"{function}(...) differs from the expected result: max abs diff 0.53 (rtol 1e-07, atol 1e-12)."]
    for key in keys:
        lines.append(f"Likely mistake ({key}): {mistakes.by_key(key)[0].explanation}")
    return "\n".join(lines)


def cell(grade_id, exercise, points, max_points, message="", status=None, keys=()):
    """One test cell's result (a schema.CellResult), as results.combine makes it: `keys`, the mistakes its check
    named (the clean re-run's data, never read from `message`)."""
    status = status or ("passed" if points >= max_points else "partial" if points > 0 else "failed")
    run = Run(points, message)
    return CellResult(grade_id, exercise, points, max_points, CellStatus(status), message,
                      results.diagnoses(exercise, keys), run, run)


def student_record(student, assignment, cells, status="graded", flags=(), error=None):
    """One student's results JSON (a dict, schema 1), made by the grader's own results.student_result."""
    cells = [replace(c, notebook=assignment) for c in cells]
    flags = [replace(f, notebook=assignment) for f in flags]
    notebook = NotebookResult(assignment, Status(status), sum(c.points for c in cells),
                              sum(c.max_points for c in cells), cells, flags)
    return results.student_result(student, assignment, [notebook], timestamp="2025-01-31T12:00:00",
                                  error=error).to_dict()


def flag(kind, exercise, detail, where="cell 12, line 2"):
    return Flag(kind, exercise, detail, where)


def not_run_cells(layout, message):
    """The cells of a notebook that could not be graded at all (results.empty_notebook's)."""
    return [cell(g, e, 0.0, p, message, status="not run") for g, e, p in layout.cells]


def write_class(folder, records):
    """Write each record as <folder>/<student>.json; return the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for record in records:
        (folder / f"{record['student']}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return folder


@dataclass
class Construction:
    """What a synthetic class was built from: the numbers the report must find."""

    assignment: str
    students: list = field(default_factory=list)
    scores: dict = field(default_factory=dict)  # scored student -> total
    max_score: float = 0.0
    credit: dict = field(default_factory=lambda: defaultdict(dict))  # exercise -> student -> (earned, max)
    named: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))  # exercise -> key -> students
    unscored: dict = field(default_factory=dict)  # student -> status
    problems: dict = field(default_factory=dict)  # student -> status, for scored students not plainly graded

    def failed(self, exercise):
        return {s for s, (earned, top) in self.credit[exercise].items() if earned < top}


def graded_cells(layout, wrong, timed_out=(), flagged=()):
    """Cells of a submission: `wrong` maps exercise -> (keys named, test cells lost); the rest earn full points.

    Cells in `timed_out` score 0 with a timeout; exercises in `flagged` score 0 as results.combine does.
    """
    cells = []
    for grade_id, exercise, points in layout.cells:
        keys, lost = wrong.get(exercise, ((), ()))
        if exercise in flagged:
            cells.append(cell(grade_id, exercise, 0.0, points, status="flagged"))
        elif grade_id in timed_out:
            cells.append(cell(grade_id, exercise, 0.0, points, "timed out after 30 s", status="timeout"))
        elif grade_id in lost:
            message = (failure_message(exercise, keys) if keys
                       else f"AssertionError: {exercise}(...) has shape (3,), expected (5, 3).")
            cells.append(cell(grade_id, exercise, 0.0, points, message, keys=keys))
        else:
            cells.append(cell(grade_id, exercise, points, points))
    return cells


def synthetic_class(n=40, *, seed=0, assignment=ASSIGNMENT, mistakes_per_student=(0.45, 0.35, 0.15, 0.05)):
    """(records, construction): `n` students of `assignment` with random catalogue mistakes and grading problems.

    A share of students (by `mistakes_per_student`: P(0), P(1), P(2), P(3) mistaken exercises) get
    mistakes, each losing one or both test cells of the exercise; about 1 in 15 has a grading problem.
    """
    rng = random.Random(seed)
    layout = course_layout(assignment)
    exercises = layout.exercises
    c = Construction(assignment, max_score=layout.max_score)
    records = []
    for i in range(n):
        student = f"s{i:03d}"
        c.students.append(student)
        roll = rng.random()
        if roll < 0.02:
            message = f"no {assignment}.ipynb in submitted/{student}/{assignment}/"
            records.append(student_record(student, assignment, not_run_cells(layout, message),
                                          status="missing notebook"))
            c.unscored[student] = "missing"
            continue
        if roll < 0.035:
            message = f"submitted/{student}/{assignment}/{assignment}.ipynb is not valid notebook JSON"
            records.append(student_record(student, assignment, not_run_cells(layout, message),
                                          status="unreadable notebook"))
            c.unscored[student] = "unreadable"
            continue
        k = rng.choices(range(len(mistakes_per_student)), weights=mistakes_per_student)[0]
        wrong = {}
        for exercise in rng.sample(exercises, min(k, len(exercises))):
            cells_of = [g for g, e, _ in layout.cells if e == exercise]
            group = mistakes.CATALOGUE.get(exercise, ())
            keys = (rng.choice(group).key,) if group and rng.random() < 0.85 else ()
            lost = tuple(cells_of) if rng.random() < 0.7 else tuple(cells_of[-1:])
            wrong[exercise] = (keys, lost)
        timed_out, flagged, flags, status = (), (), (), "graded"
        if rng.random() < 0.03:
            timed_out, status = (layout.cells[-1][0],), "timeout"
        elif rng.random() < 0.03:
            exercise = rng.choice(exercises)
            flags = (flag("reference", exercise, f"calls the reference ffn_helpers.{exercise}"),)
            wrong.pop(exercise, None)
            flagged, status = (exercise,), "flagged"
        cells = graded_cells(layout, wrong, timed_out, flagged)
        records.append(student_record(student, assignment, cells, status=status, flags=flags))
        _account(c, student, layout, cells, wrong, timed_out)
        if status != "graded":
            c.problems[student] = status
    return records, c


def _account(c, student, layout, cells, wrong, timed_out):
    c.scores[student] = sum(x.points for x in cells)
    for exercise in layout.exercises:
        mine = [x for x in cells if x.grade_id in {g for g, e, _ in layout.cells if e == exercise}]
        earned, top = sum(x.points for x in mine), sum(x.max_points for x in mine)
        c.credit[exercise][student] = (earned, top)
        keys, lost = wrong.get(exercise, ((), ()))
        if set(lost) - set(timed_out):  # a failure message, not a timeout, names the keys
            for key in keys:
                c.named[exercise][key].add(student)


# ---------------------------------------------------------------- answer cells, for "answers to look at"


def renamed(code, tag):
    """`code` with every name it binds or uses renamed (`x` -> `x_<tag>`) and laid out anew, comments added.

    Keywords, builtins and names after a dot stay: what a student who copies and disguises code changes.
    """
    toks, out, previous = list(tokenize.generate_tokens(io.StringIO(code).readline)), [], ""
    for tok in toks:
        text = tok.string
        if tok.type == tokenize.NAME and not keyword.iskeyword(text) and previous != "." and text not in BUILTINS:
            text = f"{text}_{tag}"
        out.append((tok.type, text))
        if tok.type == tokenize.NEWLINE:
            out.append((tokenize.COMMENT, f"# my own work, {tag}"))
            out.append((tokenize.NL, "\n"))
        previous = tok.string
    return tokenize.untokenize(out)  # untokenize's own spacing: every token spaced anew


BUILTINS = frozenset(dir(builtins))


def answer_cells(path):
    """{grade_id: source} of a notebook file's answer cells."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    return {c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def write_notebooks(folder, assignment, answers):
    """Write folder/<student>/<assignment>/<assignment>.ipynb: the learner notebook with `answers[student]` put in."""
    learner = json.loads((NOTEBOOKS_DIR / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    for student, cells in answers.items():
        nb = copy.deepcopy(learner)
        for c in nb["cells"]:
            gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if gid in cells and c["metadata"]["nbgrader"].get("solution"):
                c["source"] = cells[gid]
        path = Path(folder) / student / assignment / f"{assignment}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(nb), encoding="utf-8")
    return Path(folder)
