"""Honest answers through the instructors' pipeline: every alternative answer of tests/submissions.

For each graded assignment, every correct and wrong variant (one student each, no
packing), the untouched learner notebook and the worked solution are graded twice:
by plain `nbgrader autograde` and by `python -m autograder grade --jobs 2`. The row
counts the students, the flagged ones, and the test cells whose points differ. An
honest answer, right or wrong, must cost exactly what plain nbgrader charges, with no
flag (tests/test_grading_variants.py asserts the same for the packed students).

The same run times both graders over the whole mixed batch (every assignment's
variants, one after the other): plain nbgrader's wall seconds over the grader's, with
its sandboxes and clean re-runs, is the speed-up an instructor sees on a class like it.
"""

import tempfile
import time
from pathlib import Path

from benchmarks import Row


def _corpus(aid):
    """student -> notebook: each variant alone, the learner notebook and the solution."""
    import importlib

    import nbtools

    module = importlib.import_module(f"submissions.{aid}")
    base = nbtools.completed_learner(aid)
    out = {"learner-notebook": nbtools.learner(aid), "reference-solution": nbtools.solution(aid)}
    out.update({name: nbtools.with_answers(base, cells) for name, cells in module.CORRECT.items()})
    out.update({w.name: nbtools.with_answers(base, {w.cell: w.source}) for w in module.WRONG})
    return out


def rows():
    import nbtools
    from adversarial import grading

    students = flagged = differ = 0
    seconds = {"plain": 0.0, "ours": 0.0}
    with tempfile.TemporaryDirectory(prefix="ffn-bench-corpus-") as tmp:
        for aid in nbtools.graded_assignments():
            root = Path(tmp) / aid
            submissions = _corpus(aid)
            plain_course = nbtools.scratch_course(root / "plain", aid)
            nbtools.generate(plain_course, aid)
            started = time.monotonic()
            plain = nbtools.autograde(plain_course, aid, submissions).scores
            seconds["plain"] += time.monotonic() - started
            course = grading.make_course(root / "ours", aid)
            grading.write_submissions(root / "submitted", aid, submissions)
            started = time.monotonic()
            ours = grading.run_batch(aid, root / "submitted", root / "results", course, jobs=2, cell_timeout=60.0,
                                     timeout=900.0)
            seconds["ours"] += time.monotonic() - started
            for student in submissions:
                students += 1
                result = ours.get(student, {"cells": [], "flags": [{}], "status": "missing"})
                flagged += bool(result["flags"]) or result["status"] != "graded"
                points = {c["grade_id"]: c["points"] for c in result["cells"]}
                differ += sum(points.get(gid) != score for gid, (score, _) in plain.get(student, {}).items())
    return [
        Row("honest submissions (tests/submissions): graded", students, "students"),
        Row("honest submissions: flagged or not 'graded'", flagged, "students", "0"),
        Row("honest submissions: test cells scored unlike plain nbgrader", differ, "cells", "0"),
        Row("mixed batch: plain nbgrader autograde (serial)", seconds["plain"], "s", "", f"{students} students"),
        Row("mixed batch: autograder grade --jobs 2 (sandboxed, clean re-run)", seconds["ours"], "s", "",
            f"{students} students"),
        Row("mixed batch: speed-up over plain nbgrader", seconds["plain"] / seconds["ours"], "ratio", ">= 3",
            "wall clock, both in this run"),
    ]
