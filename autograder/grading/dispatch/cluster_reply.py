"""What a Dask task sent back, checked as data and laid out as a reply of one machine's grading worker.

A worker may have been taken over by the student code it ran: its answer is data to validate,
like the judge's verdict. Only a dict of the expected shape is read; the result goes through the
schema; the autograded folder may hold only the assignment's notebooks (parsed, then through
sanitise.notebook again) and the two small files nbgrader keeps; the feedback page is rendered
here, from the validated result, never taken from the worker.
"""

import re
import tempfile
from pathlib import Path

from ... import readable
from ...schema import SchemaError, Status, StudentResult
from ..gate_out import sanitise
from ..scoring import results
from . import cluster_task

_SECRET_TEXT = re.compile(r"[0-9a-f]{16,256}\n?")  # nbgrader's exchange secret, as worker.py keeps it
_STATUSES = {"timeout": Status.TIMEOUT, "grader error": Status.GRADER_ERROR}


def failed(model, student, status, message):
    """A result for a student no notebook of whom was graded (as grade.py's for a crashed worker)."""
    notebooks = [results.empty_notebook(n, status, message) for n in model.notebooks]
    return results.student_result(student, model.name, notebooks, error=message).to_dict()


def plain(value, depth=0):
    """msgpack's data (tuples for lists) as JSON's: dicts with string keys, lists, text, bytes, numbers, None."""
    if depth > 64:
        raise ValueError("the data is nested too deep")
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError("a mapping with a key that is not text")
        return {k: plain(v, depth + 1) for k, v in value.items()}
    if value is None or type(value) in (str, bytes, int, float, bool):
        return value
    raise ValueError(f"not plain data: {type(value).__name__}")


def reply(data, student, model, course_markdown, scratch):
    """{"result": ..., "autograded_dir": ..., "html": ...} for grade._record, from what the task returned."""
    try:
        data = plain(data)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or data.get("student") != student:
        return {"result": failed(model, student, "grader error", "the cluster's answer for this submission was not "
                                 "the plain data expected (refused)")}
    if "error" in data:
        status = _STATUSES.get(data.get("status"), Status.GRADER_ERROR)
        return {"result": failed(model, student, status, sanitise.plain(str(data["error"]), 2000))}
    try:
        result = StudentResult.from_dict(readable.clean(data.get("result")), "the cluster's result")
        if result.student != student or result.assignment != model.name:
            raise SchemaError(f"a result for {result.student}/{result.assignment}, not {student}/{model.name}")
        _within_the_gradebook(result, model)
        folder, notebooks = _autograded(data.get("files"), model, course_markdown, scratch, student)
    except (SchemaError, ValueError, TypeError, KeyError, AttributeError) as exc:
        return {"result": failed(model, student, "grader error", f"the cluster's result was refused: {exc}"[:2000])}
    return {"result": result.to_dict(), "autograded_dir": str(folder),
            "html": str(_page(result, notebooks, course_markdown, folder.parent))}


def _within_the_gradebook(result, model):
    """No score beyond what the gradebook allows: each test cell's points, each notebook's, the total."""
    tops = {c.name: float(c.points) for nb in model.notebooks for c in nb.cells if c.grade}
    if sorted(nb.notebook for nb in result.notebooks) != sorted(n.name for n in model.notebooks):
        raise SchemaError("the notebooks are not the assignment's")
    for cell in result.cells:
        if cell.grade_id not in tops or cell.max_points != tops[cell.grade_id] or not 0 <= cell.points <= tops[
                cell.grade_id]:
            raise SchemaError(f"cell {cell.grade_id!r}: {cell.points:g}/{cell.max_points:g} points, not within "
                              "the gradebook's")
    total = sum(nb.max_score for nb in model.notebooks)
    if result.max_score != total or not 0 <= result.score <= total:
        raise SchemaError(f"a score of {result.score:g}/{result.max_score:g}, not within the gradebook's {total:g}")


def _autograded(files, model, course_markdown, scratch, student):
    """The autograded folder, rebuilt here from the files sent: ({name: notebook} read back, the folder)."""
    import nbformat

    if not isinstance(files, dict):
        raise ValueError("the autograded files are not a mapping")
    names = {f"{n.name}.ipynb" for n in model.notebooks}
    folder = Path(tempfile.mkdtemp(prefix=f"{student}-", dir=scratch)) / "autograded"
    folder.mkdir()
    notebooks = {}
    for name, data in files.items():
        if name not in names | set(cluster_task.KEPT) or not isinstance(data, bytes):
            raise ValueError(f"unexpected file in the autograded folder: {str(name)[:80]!r}")
        if len(data) > cluster_task.MAX_FILE_BYTES:
            raise ValueError(f"{name} is over {cluster_task.MAX_FILE_BYTES:,} bytes")
        if name in names:
            stem = name[:-len(".ipynb")]
            nb = sanitise.notebook(nbformat.reads(data.decode("utf-8"), as_version=4),
                                   course_markdown.get(stem, ()))
            notebooks[stem] = nb
            (folder / name).write_text(nbformat.writes(nb), encoding="utf-8")
        elif name == "timestamp.txt" and len(data) <= 200:
            (folder / name).write_text(sanitise.plain(data.decode("utf-8", errors="replace"), 100), encoding="utf-8")
        elif name == "submission_secret.txt" and _SECRET_TEXT.fullmatch(data.decode("ascii", errors="replace")):
            (folder / name).write_bytes(data)
    return folder, notebooks


def _page(result, notebooks, course_markdown, folder):
    """The feedback page, rendered here (feedback.render escapes every cell): what grade.py copies."""
    import nbformat

    from ..gate_out import feedback

    parts = [feedback.render(notebooks.get(nb.notebook, nbformat.v4.new_notebook()), nb.to_dict(), result.student,
                             course_markdown.get(nb.notebook, frozenset())) for nb in result.notebooks]
    page = folder / "feedback.html"
    page.write_text(readable.clean_text("\n<hr>\n".join(parts)), encoding="utf-8")
    return page
