"""The grader's limits that more than one module reads: each one here, once, with its unit and why it has its value.

A maintainer who changes one changes it here, and every reader follows: `grade`, `check`, the class report, a
cluster's tasks, the feedback pages, and the instructor guide's table of limits (tests/test_limits.py holds the
guide to these values, and finds no module that writes one of them again as a bare number). A bound that one part
of the grader alone reads stays beside the code it bounds: what a kernel's message may cost
(grading/gate_in/limits.py), the sandbox's rlimits (gate_in/sandbox.py's `Limits`), what one output may keep
(sanitise.py), what crosses the clean re-run's channel (gate_beside/rpc.py, which runs as source inside the sandbox).

The lowest layer of the grader (pyproject.toml's contracts): every module of it may import this one, which imports
nothing of the grader, and of ffn_helpers only the length of a figure's text alternative, which the course's
figures decide (MAX_ALT_CHARS, below).
"""

MiB = 2**20  # bytes: the unit of every size here, and of the grader's messages that state one
GiB = 2**30

# ---- files ---------------------------------------------------------------------------------------------------------
# Bytes of one file of one student's, whichever way it travels: a submitted notebook as `grade`, `check` and the
# report read it (course.read_notebook), a member of an LMS download's zip, the autograded notebook and the feedback
# page a worker or a cluster's task hands back; and, all together, the files besides the notebook that nbgrader
# keeps of a submission (so the largest file a zip may bring is kept too). The course's notebooks are under 100 kB
# as handed out, and a graded run keeps at most 5 million characters of a notebook's output: this is room for a
# learner's own images many times over, and each such file is read whole into the grader's memory.
MAX_FILE_BYTES = 50 * MiB
# Bytes of the files of one folder the grader copies, sends or compares, all together: a submission's (copied into
# the course's submitted/ and autograded/, into a sandbox's working folder, sent as bytes to a cluster's task, and
# digested by the ledger, which so covers exactly what was copied and graded) and an assignment's release files:
# four files at their limit.
MAX_FOLDER_BYTES = 200 * MiB

# ---- text ----------------------------------------------------------------------------------------------------------
# Characters of a note in words, as a result or a page keeps it: a flag's detail, a diagnosis in a page's summary,
# a grader error or a worker's refusal, a warning the learner's code raised, the end of a helper process's stderr
# or traceback. An exception's message and a traceback's last frames fit (about 25 lines); a page that lists every
# flag of a notebook stays one a person reads.
MAX_MESSAGE_CHARS = 2_000
# Characters of why a test failed (its exception's type and message), as a result keeps it and the feedback page
# shows it under the test: ten times a note, as an assertion about arrays quotes them and the learner reads what
# went wrong from this message alone.
MAX_TEST_MESSAGE_CHARS = 20_000

# ---- time ----------------------------------------------------------------------------------------------------------
# Seconds of wall-clock time one student's grading may take, both runs and the feedback (`grade --timeout`'s
# default). An honest submission takes a few seconds; this is fifteen cell timeouts at the course's 60 s, so a
# notebook whose answers loop still gets its points for the others (a looping exercise costs one timeout, its later
# tests 3 s each).
STUDENT_TIMEOUT_SECONDS = 900.0


_FROM_FFN_HELPERS = ("MAX_ALT_CHARS",)  # each read from ffn_helpers._display on first use (below)


def __getattr__(name):
    """MAX_ALT_CHARS: characters of an image's text alternative, kept whole in a feedback page and the autograded
    notebook. The course's figures write them, so ffn_helpers decides the length (ffn_helpers._display, with its
    reason); the grader cuts every image's at the same length, so a course figure's passes whole. It is read on first
    use: importing ffn_helpers imports numpy, which `grade`'s own process and `--help` otherwise never need."""
    if name in _FROM_FFN_HELPERS:
        from ffn_helpers import _display

        return getattr(_display, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
