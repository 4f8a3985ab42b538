"""What a Dask task sent back, checked as data and laid out as a reply of one machine's grading worker.

A worker may have been taken over by the student code it ran: its answer is data to validate,
like the judge's verdict. Only a dict of the expected shape is read; the result goes through the
schema; the autograded folder may hold only the assignment's notebooks (parsed, then through
sanitise.notebook again) and the two small files nbgrader keeps; the feedback page is rendered
here, from the validated result, never taken from the worker.
"""

import tempfile
from pathlib import Path

from ... import limits, sanitise
from ...schema import SchemaError, Status
from .. import course
from ..scoring import results
from . import replies

_STATUSES = {"timeout": Status.TIMEOUT, "grader error": Status.GRADER_ERROR}


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
    """{"result": ..., "autograded_dir": ..., "html": ...}, a pool worker's reply, from what the task returned; its
    result read by replies.student_result, as the driver reads every reply, before a page is rendered from it."""
    try:
        data = plain(data)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or data.get("student") != student:
        return replies.refused(model, student, "the cluster's answer for this submission was not the plain data "
                               "expected (refused)")
    if "error" in data:
        status = _STATUSES.get(data.get("status"), Status.GRADER_ERROR)
        error = sanitise.plain(str(data["error"]), limits.MAX_MESSAGE_CHARS)
        return {"result": results.failed(model, student, status, error)}
    try:
        result = replies.student_result(data.get("result"), student, model)
        folder, notebooks = _autograded(data.get("files"), model, course_markdown, scratch, student)
    except (SchemaError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        return replies.refused(model, student, f"the cluster's result was refused: {exc}")
    return {"result": result.to_dict(), "autograded_dir": str(folder),
            "html": str(_page(result, notebooks, course_markdown, folder.parent))}


def _autograded(files, model, course_markdown, scratch, student):
    """The autograded folder, rebuilt here from the files sent: ({name: notebook} read back, the folder)."""
    import nbformat

    if not isinstance(files, dict):
        raise ValueError("the autograded files are not a mapping")
    names = {f"{n.name}.ipynb" for n in model.notebooks}
    kept = course.autograded_names(model)
    folder = Path(tempfile.mkdtemp(prefix=f"{student}-", dir=scratch)) / "autograded"
    folder.mkdir()
    notebooks = {}
    for name, data in files.items():
        if name not in kept or not isinstance(data, bytes):
            raise ValueError(f"unexpected file in the autograded folder: {str(name)[:80]!r}")
        if len(data) > limits.MAX_FILE_BYTES:
            raise ValueError(f"{name} is over {limits.MAX_FILE_BYTES:,} bytes")
        if name in names:
            stem = name[:-len(".ipynb")]
            nb = sanitise.notebook(nbformat.reads(data.decode("utf-8"), as_version=4),
                                   course_markdown.get(stem, ()))
            notebooks[stem] = nb
            (folder / name).write_text(nbformat.writes(nb), encoding="utf-8")
        elif name == course.TIMESTAMP and len(data) <= 200:
            (folder / name).write_text(sanitise.plain(data.decode("utf-8", errors="replace"), 100), encoding="utf-8")
        elif name == course.SECRET and course.is_exchange_secret(data):
            (folder / name).write_bytes(data)
    return folder, notebooks


def _page(result, notebooks, course_markdown, folder):
    """The feedback page, rendered here (feedback.student_page escapes every cell): what grade.py copies."""
    from ..gate_out import feedback

    page = folder / "feedback.html"
    page.write_text(feedback.student_page(result, notebooks, course_markdown), encoding="utf-8")
    return page
