"""The grading worker's log holds text the student controls (tracebacks, nbgrader's messages about the
notebook); whoever `cat`s or `tail -f`s it must see that text, not have their terminal driven by it.
Every write the worker's Python code makes to stderr or stdout goes through one gate that shows control
characters as visible escapes."""

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.grading.worker import _EscapingWriter

ROOT = Path(__file__).resolve().parent.parent


def _through_the_gate(text):
    out = io.StringIO()
    _EscapingWriter(out).write(text)
    return out.getvalue()


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b[2J", "\\x1b[2J"),  # ESC: clear the screen
    ("\x07", "\\x07"),  # BEL
    ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),  # OSC 0: the window title
    ("\x1b]52;c;ZWNobyBoaQ==\x07", "\\x1b]52;c;ZWNobyBoaQ==\\x07"),  # OSC 52: write the clipboard
    ("0/10\r10/10", "0/10\\x0d10/10"),  # CR: overwrite the line
    ("0\b1", "0\\x081"),  # backspace
    ("\x7f", "\\x7f"),  # DEL
    ("\x9b31m", "\\x9b31m"),  # C1 CSI
    ("\x00", "\\x00"),
    ("\u202eabc\u202c", "\\u202eabc\\u202c"),  # bidi override
    ("\u2066x\u2069", "\\u2066x\\u2069"),  # bidi isolate
])
def test_control_characters_are_written_as_visible_escapes(raw, shown):
    assert _through_the_gate(raw) == shown


def test_ordinary_text_newlines_tabs_and_letters_pass_unchanged():
    text = "student-1: passed\tin 3.2 s\nrésumé 中文 ✔ (x < y) \\x1b\n"
    assert _through_the_gate(text) == text


def test_the_writer_answers_what_a_stream_is_asked():
    real = sys.__stderr__
    writer = _EscapingWriter(real)
    assert writer.encoding == real.encoding and writer.errors == real.errors
    assert writer.fileno() == real.fileno() and writer.writable()
    assert writer.write("abc\x1b") == 4


def test_print_logging_and_stderr_writes_in_the_worker_reach_the_log_escaped():
    script = textwrap.dedent("""
        import logging, sys
        from autograder.grading import worker
        worker._escaped_stderr()
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="[worker] %(levelname)s %(message)s")
        print("print \\x1b]0;title\\x07 é")
        logging.warning("log \\x1b]52;c;aGk=\\x07 \\x9b2J")
        sys.stderr.write("raw \\x1b[2J\\r10/10 \\u202e中\\n")
        logging.shutdown()
        sys.stderr.flush()
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=ROOT, timeout=60,
                         env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    log = run.stderr
    assert run.stdout == b""  # print() goes to the log, as in the worker
    for byte in (b"\x1b", b"\x07", b"\x9b", b"\r", "\u202e".encode()):
        assert byte not in log
    text = log.decode()
    assert "print \\x1b]0;title\\x07 é\n" in text
    assert "[worker] WARNING log \\x1b]52;c;aGk=\\x07 \\x9b2J\n" in text
    assert "raw \\x1b[2J\\x0d10/10 \\u202e中\n" in text


def test_each_student_gets_a_budget_of_the_log_and_a_flood_shows_as_one_cut():
    out = io.StringIO()
    writer = _EscapingWriter(out, budget=100)
    assert writer.write("a" * 60) == 60 and writer.write("b\x1b" * 30) == 60  # the caller is told all was taken
    assert writer.write("dropped\n") == 8
    first = out.getvalue()
    assert first.startswith("a" * 60 + "b\\x1b" * 8) and first.count("the log is cut here") == 1
    assert len(first.split("\n")[0]) == 100 and "dropped" not in first
    writer.renew()  # the next student
    writer.write("next student\n")
    assert out.getvalue() == first + "next student\n"
