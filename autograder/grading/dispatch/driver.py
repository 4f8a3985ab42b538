"""Grade a class through a backend: the batch, then each student whose clean re-run could not finish, alone.

A backend (pool.LocalPool on this machine, cluster.Cluster on Dask) has a `scratch` folder and one
method, `run(queue, again, tick)`, that yields (submission, reply) as each student's grading ends.
Every reply, whichever backend sent it, goes through replies.checked before `record` publishes it.
"""

import json
import time

from ...schema import Status
from . import replies
from .pool import TIMING_LOG
from .progress import Progress

WITHHELD = " (a test still unfinished: withheld, for review)"


def grade_class(backend, found, model, record, log_dir, say, line=None, tell=None):
    """Grade `found`; `record(submission, reply)` publishes one checked reply and returns its StudentResult, and
    `line(result)` (result_line by default) is what the terminal says of it: on the progress line, and through
    `tell` (the run's results, stdout), one line each. `say` gets the diagnostics."""
    line = line or result_line
    tell = tell or say
    progress = Progress(len(found))
    progress.show()
    graded, later = [], []
    with open(log_dir / TIMING_LOG, "a", encoding="utf-8") as timing:
        for submission, reply in backend.run(found, again=False, tick=progress.running):
            reply = replies.checked(reply, submission.student, model, backend.scratch)
            if unfinished(reply):
                later.append((submission, reply))
                progress.advance(later_line(submission))
                continue
            graded.append(_timed(record, timing, submission, reply))
            text = line(graded[-1])
            progress.clear()
            tell(text)
            progress.advance(text)
        graded += _again_alone(backend, later, model, record, timing, say, line, tell)
    return graded


def _again_alone(backend, later, model, record, timing, say, line, tell):
    """Grade each of `later` (submission, first reply) again, one at a time, after the batch; publish that result
    (the first, if the regrade itself failed). A test still unfinished then is withheld, with a `review` flag: the
    notebook run alone never earns points."""
    if not later:
        return []
    say(again_line(later))
    again = {}
    progress = Progress(len(later), what="graded again")
    progress.show()
    try:
        for submission, reply in backend.run([s for s, _ in later], again=True, tick=progress.running):
            again[submission.student] = replies.checked(reply, submission.student, model, backend.scratch)
            progress.advance(submission.student)
    except Exception as exc:  # a regrade that cannot even start must not cost the batch's results
        say(f"grading again failed ({exc!r}): the batch's results stand")
    graded = []
    for submission, first in later:
        reply = again.get(submission.student)
        if reply is None or reply["result"].get("status") == Status.GRADER_ERROR:
            reply = first
        graded.append(_timed(record, timing, submission, reply))
        tell(f"  {line(graded[-1])}" + (WITHHELD if unfinished(reply) else ""))
    return graded


def _timed(record, log, submission, reply):
    """record(submission, reply), and one line of where that student's time went in the run's timing log."""
    started = time.monotonic()
    result = record(submission, reply)
    log_timing(log, submission.student, reply, time.monotonic() - started)
    return result


def log_timing(log, student, reply, publish):
    """One line of where a student's time went: the worker's figures (numbers only) and this process's publish."""
    stages = reply.get("timing") if isinstance(reply.get("timing"), dict) else {}
    kept = {str(k)[:60]: float(v) for k, v in list(stages.items())[:30]
            if type(v) in (int, float) and 0 <= v < 1e6}
    log.write(json.dumps({"student": student, "stages": dict(kept, publish=round(publish, 3))}) + "\n")
    log.flush()


def unfinished(reply):
    """True when a test of this result passed the notebook run but got no verdict from the clean re-run."""
    cells = (reply.get("result") or {}).get("cells") or []
    return any(isinstance(c, dict) and c.get("status") == "rerun incomplete" for c in cells)


def result_line(result):
    """What the progress line and the terminal say of one published result."""
    return f"{result.student}: {result.status} {result.score:g}/{result.max_score:g}"


def later_line(submission):
    return f"{submission.student}: clean re-run unfinished, graded again after the batch"


def again_line(later):
    return f"grading {len(later)} submission(s) again, alone: their clean re-run could not finish a test"
