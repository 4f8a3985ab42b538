"""The one reader of a grading worker's reply, whichever backend it came from (the local pool or a Dask task).

A worker handled student code and may have been taken over by it: its reply is data to check,
like the judge's verdict. The result goes through the schema, must be this student's and this
assignment's, and may claim no more than the gradebook allows (known cells only, each within its
maximum, every notebook of the assignment and no other); the files it names must lie in the run's
own scratch folder. Anything else is a `grader error` for that student, never a published score.
"""

from pathlib import Path

from ... import limits, readable
from ...schema import SchemaError, StudentResult
from ..scoring import results


def checked(reply, student, model, scratch):
    """{"result", and "autograded_dir", "html", "timing" where valid} to publish, or a `grader error` reply."""
    try:
        if not isinstance(reply, dict):
            raise SchemaError(f"a reply is a mapping, got {type(reply).__name__}")
        result = student_result(reply.get("result"), student, model)
        kept = {key: _inside(reply[key], scratch) for key in ("autograded_dir", "html") if reply.get(key) is not None}
    except (SchemaError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        return refused(model, student, f"the grading worker's result was refused: {exc}")
    timing = reply.get("timing")
    return {"result": result.to_dict(), **kept, **({"timing": timing} if isinstance(timing, dict) else {})}


def student_result(data, student, model):
    """The StudentResult that `data` holds, if it is this student's, of this assignment, within the gradebook;
    else SchemaError (or the ValueError, TypeError... of data that is not a result at all)."""
    result = StudentResult.from_dict(readable.clean(data), "the worker's result")
    if result.student != student or result.assignment != model.name:
        raise SchemaError(f"a result for {result.student}/{result.assignment}, not {student}/{model.name}")
    within_the_gradebook(result, model)
    return result


def refused(model, student, why):
    """The reply that stands for one the grader could not accept."""
    return {"result": results.failed(model, student, "grader error", why[:limits.MAX_MESSAGE_CHARS])}


def within_the_gradebook(result, model):
    """No score beyond what the gradebook allows: each test cell's points, each notebook's, the total."""
    tops = {c.name: float(c.points) for nb in model.notebooks for c in nb.cells if c.grade}
    if sorted(nb.notebook for nb in result.notebooks) != sorted(n.name for n in model.notebooks):
        raise SchemaError("the notebooks are not the assignment's")
    for cell in result.cells:
        top = tops.get(cell.grade_id)
        if top is None or cell.max_points != top or not 0 <= cell.points <= top:
            raise SchemaError(f"cell {cell.grade_id!r}: {cell.points:g}/{cell.max_points:g} points, not within "
                              "the gradebook's")
    total = sum(nb.max_score for nb in model.notebooks)
    if result.max_score != total or not 0 <= result.score <= total:
        raise SchemaError(f"a score of {result.score:g}/{result.max_score:g}, not within the gradebook's {total:g}")


def _inside(path, scratch):
    """`path` (text) if it lies in `scratch` once every link is resolved: the parent never copies from elsewhere."""
    if not isinstance(path, str):
        raise SchemaError(f"a file name is text, got {type(path).__name__}")
    real, root = Path(path).resolve(), Path(scratch).resolve()
    if not real.is_relative_to(root):
        raise SchemaError(f"{path[:200]!r} is not in the run's scratch folder")
    return str(real)
