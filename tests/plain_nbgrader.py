"""Plain nbgrader's verdict on each submission of the grading variants, recorded, and read back while it still holds.

test_grading_variants compares the course's grader with plain `nbgrader autograde` on every variant. Plain nbgrader
is the slow half: a kernel, the notebook and its figures for each of some 170 submissions, about 1,000 core-seconds,
a quarter of the suite. Its verdict on a submission is a function of what nbgrader reads:
  - the submitted notebook;
  - the assignment's source notebook and the course's nbgrader_config.py (what generate_assignment and autograde read);
  - the course's helper package, ffn_helpers/, whose checks the test cells call;
  - nbgrader's version (pinned in pyproject.toml).
So each verdict is recorded in tests/submissions/nbgrader_verdicts/<aid>.json under a SHA-256 of exactly those, and
a submission whose key is not in the record (a new variant, a changed check, another packing) is graded by plain
nbgrader on the spot, in the same batch as always: a record can make the suite faster, never make it compare with
a verdict on anything else. `make record-nbgrader-verdicts` regrades every submission and rewrites the records, and
test_the_nbgrader_verdicts_are_recorded fails while any record is stale, so the record on main is always current.

Not in the key: the versions of Python, numpy and the other libraries the notebook runs on. The course's checks
must give the same verdict on each (CI runs every notebook on each Python and BLAS kernel), and the grader's half
of each comparison runs live: a verdict that did change with them would show as a disagreement, never hide one.

A record holds, per student and test cell, the points, the maximum and the mistakes the cell's output names
("Likely mistake (key): ...", the line ffn_helpers.checks.failure writes); nothing else of the outputs is kept.
"""

import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass, field

import nbformat
import nbtools

RECORDS = nbtools.REPO_ROOT / "tests" / "submissions" / "nbgrader_verdicts"
REFRESH = "FFN_RECORD_NBGRADER_VERDICTS"  # =1: grade every submission with plain nbgrader and rewrite the record
COMMAND = "make record-nbgrader-verdicts"
NAMED_MISTAKE = re.compile(r"^Likely mistake \(([^)\s]+)\): ", re.MULTILINE)  # checks.failure's line


@dataclass
class Verdicts:
    """Plain nbgrader's verdicts on one assignment's submissions."""

    aid: str
    scores: dict  # student -> {test cell grade_id: (score, max_score)}
    named: dict  # student -> {test cell grade_id: the mistake keys its output names}
    graded_now: list = field(default_factory=list)  # the students plain nbgrader graded in this run
    log: str = ""  # nbgrader's output, when it ran

    def missing(self, student):
        """Why `student` has no complete set of scores ('' when it has one)."""
        if student not in self.scores:
            return f"{student} was not graded. nbgrader's log (last 3000 characters):\n{self.log[-3000:]}"
        unscored = [gid for gid, (score, _) in self.scores[student].items() if score is None]
        return f"{student}: no score for {unscored}" if unscored else ""


@functools.cache
def _inputs_of(aid):
    """The SHA-256 of what every submission of `aid` shares: its source, the course's config, ffn_helpers/, nbgrader."""
    import nbgrader

    digest = hashlib.sha256()
    helpers = nbtools.REPO_ROOT / "ffn_helpers"
    files = sorted(p for p in helpers.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for label, data in [("nbgrader", nbgrader.__version__.encode()),
                        ("config", (nbtools.COURSE_ROOT / "nbgrader_config.py").read_bytes()),
                        ("source", nbformat.writes(nbtools.source(aid)).encode()),
                        *((f"ffn_helpers/{p.relative_to(helpers).as_posix()}", p.read_bytes()) for p in files)]:
        digest.update(f"{label}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def key(aid, nb):
    """The key of plain nbgrader's verdict on the submission `nb` of `aid`."""
    submitted = nbformat.writes(nb).encode()
    return hashlib.sha256(_inputs_of(aid).encode() + b"\0" + submitted).hexdigest()


def _path(aid):
    return RECORDS / f"{aid}.json"


def read_record(aid):
    """student -> {"key", "cells": {grade_id: [score, max_score, [mistake keys]]}}; {} where there is none."""
    path = _path(aid)
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))["students"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path.parent.name}/{path.name} is not a record of nbgrader's verdicts ({exc}); "
                         f"`{COMMAND}` rewrites it") from exc


def stale(aid, submissions):
    """(students whose recorded verdict is missing or keyed differently, recorded students no longer submitted)."""
    record = read_record(aid)
    changed = sorted(s for s, nb in submissions.items() if record.get(s, {}).get("key") != key(aid, nb))
    return changed, sorted(set(record) - set(submissions))


def verdicts(course, aid, submissions):
    """Plain nbgrader's verdicts on `submissions` (student -> notebook) of `aid`, in the scratch course `course`.

    Recorded verdicts whose key still matches are read; every other submission is autograded now, in one batch.
    With FFN_RECORD_NBGRADER_VERDICTS=1 every submission is autograded and the record rewritten."""
    refresh = os.environ.get(REFRESH) == "1"
    record = {} if refresh else read_record(aid)
    keys = {student: key(aid, nb) for student, nb in submissions.items()}
    scores, named = {}, {}
    for student in submissions:
        entry = record.get(student)
        if entry and entry.get("key") == keys[student]:
            scores[student] = {gid: (score, top) for gid, (score, top, _) in entry["cells"].items()}
            named[student] = {gid: tuple(found) for gid, (_, _, found) in entry["cells"].items()}
    now = {student: nb for student, nb in submissions.items() if student not in scores}
    result = Verdicts(aid, scores, named, graded_now=sorted(now))
    if now:
        batch = nbtools.autograde(course, aid, now)
        result.log = batch.log
        for student, cell_scores in batch.scores.items():
            cells = nbtools.cells_by_id(batch.autograded(student))
            scores[student] = cell_scores
            named[student] = {gid: tuple(NAMED_MISTAKE.findall(nbtools.output_text(cells[gid])))
                              for gid in cell_scores if gid in cells}
    if refresh:
        _write(aid, keys, result)
    return result


def _write(aid, keys, result):
    """Rewrite the record of `aid`: every student with a score on each of its test cells."""
    students = {}
    for student in sorted(result.scores):
        if result.missing(student):
            continue  # nothing is recorded that nbgrader did not grade; the tests say why
        students[student] = {"key": keys[student], "cells": {
            gid: [score, top, list(result.named[student].get(gid, ()))]
            for gid, (score, top) in sorted(result.scores[student].items())}}
    RECORDS.mkdir(parents=True, exist_ok=True)
    head = json.dumps({"assignment": aid, "made_by": f"{COMMAND} (tests/plain_nbgrader.py)"})[:-1]
    rows = ",\n".join(f"  {json.dumps(student)}: {json.dumps(entry)}" for student, entry in students.items())
    _path(aid).write_text(f'{head}, "students": {{\n{rows}\n}}}}\n', encoding="utf-8")  # a line per student
