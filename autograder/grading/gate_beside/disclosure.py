"""What the clean re-run tells of a test's failure, and to whom: the one decision on hidden data in feedback.

A test's failure is judged in the grader's process, where its exception is the course's own. Two things of it are
kept: the catalogue's mistakes the failing check named (`mistakes`, read from the exception's data, never from its
message, which quotes what the learner's code returned or raised), and, under a private offering, the text the
student reads in place of the message (`for_student`), which would otherwise quote the offering's hidden inputs.
"""

from ...limits import MAX_TEST_MESSAGE_CHARS


def mistakes(exc, exercise):
    """The catalogue keys the failing check attached to `exc` (checks.failure) that are `exercise`'s own. A key of
    another catalogue is a course bug, which must cost a diagnosis, not the judge's whole verdict (judge.verdict
    refuses foreign keys)."""
    from ffn_helpers.checks import named_mistakes
    from ffn_helpers.mistakes import CATALOGUE

    own = {m.key for m in CATALOGUE.get(exercise, ())}
    return tuple(k for k in named_mistakes(exc) if k in own)


def for_student(exc, test):
    """What the student reads of the failure `exc` of `test` instead of its message, or None to read the message
    itself.

    Under a private offering (checks.set_offering_seed) a failure in the test cell's hidden tests happened on the
    offering's own inputs, which its message quotes with the expected values and what came back: the student
    reads the check's public text (checks.public_message: what failed, the shapes, how far off, the likely
    mistakes), and the message goes to the instructor only. A failure in the cell's visible part, on the published
    inputs, and any failure while no seed is set, keep their message.
    """
    from ffn_helpers import checks

    from ..course import hidden_lines

    if not checks.private_offering():
        return None
    line = _line_in(exc, f"<{test.label}>")
    if line is not None and line not in hidden_lines(test.python):
        return None
    return checks.public_message(exc)[:MAX_TEST_MESSAGE_CHARS]  # a line of the hidden tests, or none found: withheld


def _line_in(exc, filename):
    """The line of the test cell (compiled as `filename`) whose statement raised `exc`, or None."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            return tb.tb_lineno  # the outermost frame of the cell: a statement of the cell itself
        tb = tb.tb_next
    return None
