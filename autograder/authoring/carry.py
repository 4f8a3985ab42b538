"""Carry a learner's answers over to the course's newer version of a notebook.

    python -m autograder carry-over my-notebooks/02_forward_pass.ipynb

After an update of the course, `make lab` keeps a notebook the learner changed and prints this
command for it (lab.take_command). It keeps the learner's file as `<name>-mine.ipynb` (the first
free `-mine-2`, `-mine-3`, ... if that name is taken: nothing already there is lost), then writes
the course's new version (`notebooks/<name>`) in its place with each answer cell's source taken
from the learner's cell of the same `grade_id` (nbgrader's name for it). An answer cell the
learner never touched, a stub whose every body still only raises NotImplementedError (or says
"YOUR ANSWER HERE"), is not carried: the new version's stub takes its place, with its new
docstring. Every answer of the learner's that the new version has no cell for is listed, as are
the other code cells of theirs the new version does not have (their own scratch cells, or the
course's older code); all of them stay in the `-mine` file. Nothing is written when either
notebook cannot be read.
"""

import ast
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import NOTEBOOKS_DIR
from ..cells import is_solution

STUB_LINES = {"# YOUR CODE HERE", "raise NotImplementedError()", "YOUR ANSWER HERE", ""}


@dataclass
class Carried:
    mine: Path = None  # where the learner's file went
    carried: list = field(default_factory=list)  # grade ids whose answers came over
    left: list = field(default_factory=list)  # grade ids of answers the new version has no cell for
    other: list = field(default_factory=list)  # first lines of the learner's other code cells the new version lacks
    signatures: list = field(default_factory=list)  # carried answers whose first line differs from the new stub's


def _text(source):
    return "".join(source) if isinstance(source, list) else str(source)


def _grade_id(cell):
    return (cell.get("metadata", {}).get("nbgrader", {}) or {}).get("grade_id") if is_solution(cell) else None


def _stub_body(body):
    """Only a docstring and `raise NotImplementedError()`: a body the learner has not written yet."""
    return all(isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
               or isinstance(stmt, ast.Raise) and "NotImplementedError" in ast.unparse(stmt) for stmt in body)


def untouched(source):
    """Is an answer cell still as the course released it: every function (and method) body a stub, nothing else
    but docstrings; for a markdown answer, "YOUR ANSWER HERE" alone?"""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # markdown
        return not {line.strip() for line in source.splitlines()} - STUB_LINES
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                if not _stub_body(member.body):
                    return False
            elif not _stub_body([member]):
                return False
    return True


def _read(path, what):
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
        return nb
    except (OSError, ValueError, AttributeError) as exc:
        raise ValueError(f"{what} {path} cannot be read as a notebook: {exc}") from None


def free_name(path):
    """`<stem>-mine.ipynb` beside `path`, or the first of `-mine-2`, `-mine-3`, ... not taken."""
    stem, k = path.name.removesuffix(".ipynb"), 1
    while True:
        candidate = path.with_name(f"{stem}-mine{'' if k == 1 else f'-{k}'}.ipynb")
        if not candidate.exists():
            return candidate
        k += 1


def merge(mine, new):
    """The new version's notebook with the learner's answers put in, and what was and was not carried."""
    report = Carried()
    answers = {gid: _text(c.get("source", "")) for c in mine["cells"] if (gid := _grade_id(c))}
    in_new = {gid for c in new["cells"] if (gid := _grade_id(c))}
    for cell in new["cells"]:
        gid = _grade_id(cell)
        if gid not in answers or untouched(answers[gid]) or answers[gid] == _text(cell.get("source", "")):
            continue
        stub = _text(cell.get("source", ""))
        if answers[gid].strip().splitlines()[:1] != stub.strip().splitlines()[:1]:
            report.signatures.append(gid)
        cell["source"] = answers[gid]
        report.carried.append(gid)
    report.left = [gid for gid, source in answers.items() if gid not in in_new and not untouched(source)]
    sources = {_text(c.get("source", "")) for c in new["cells"]}
    report.other = [(_text(c.get("source", "")).strip().splitlines() or [""])[0][:60] for c in mine["cells"]
                    if c.get("cell_type") == "code" and not _grade_id(c)
                    and _text(c.get("source", "")).strip() and _text(c.get("source", "")) not in sources]
    return new, report


def carry_over(path, course=NOTEBOOKS_DIR):
    """Keep the learner's `path` as -mine, write the course's version with their answers in its place."""
    path = Path(path)
    mine = _read(path, "your notebook")
    new = _read(Path(course) / path.name, "the course's version")
    merged, report = merge(mine, new)
    report.mine = free_name(path)
    os.replace(path, report.mine)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return report


def _say(path, report):
    where = path.parent
    lines = [f"Kept yours as {where / report.mine.name}; wrote the course's new version to {path} with your answers."]
    if report.carried:
        lines.append(f"  carried over: {', '.join(report.carried)}")
    if report.signatures:
        lines.append(f"  the first line of these changed in the new version; compare yours with it: "
                     f"{', '.join(report.signatures)}")
    if report.left:
        lines.append(f"  NOT carried (the new version has no such exercise; they are in {report.mine.name}): "
                     f"{', '.join(report.left)}")
    if report.other:
        lines.append(f"  other code cells of yours the new version does not have (your own, or the course's older "
                     f"code) stay in {report.mine.name}: " + "; ".join(repr(line) for line in report.other))
    return "\n".join(lines)


def main(path, course=NOTEBOOKS_DIR):
    path = Path(path)
    if not path.name.endswith(".ipynb") or path.name.removesuffix(".ipynb").endswith("-mine"):
        print(f"error: expected your copy of a course notebook, such as my-notebooks/02_forward_pass.ipynb, "
              f"got {path}", file=sys.stderr)
        return 2
    try:
        report = carry_over(path, course)
    except ValueError as exc:
        print(f"error: {exc}; nothing was changed", file=sys.stderr)
        return 2
    print(_say(path, report))
    return 0
