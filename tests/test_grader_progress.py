"""The progress line of `grade` names, for each student being graded, the phase and the cell running.

The worker says where it is with four integers (position.py); the parent names the phase and
the cell from its own copy of the assignment, and drops whatever else a worker sends. The
last test grades a class with an endless loop and reads the line while it runs.
"""

import fcntl
import io
import json
import os
import pty
import select
import struct
import termios
import threading
import time
from types import SimpleNamespace

import nbformat
import nbtools
import pytest

from autograder.cells import code_cells
from autograder.grading.course import AssignmentModel, NotebookModel, SourceCellModel
from autograder.grading.dispatch import driver, position
from autograder.grading.dispatch import pool as local_pool
from autograder.grading.dispatch.progress import Progress, running_text

AID = "02_forward_pass"
NAMES = ["setup", "ffn_forward", "test_ffn_forward", "test_ffn_forward_hidden"]


def _model(*notebooks):
    return AssignmentModel(AID, [NotebookModel(name, [SourceCellModel(n, "code", True, "") for n in NAMES])
                                 for name in notebooks or (AID,)])


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class _Terminal(io.StringIO):
    def isatty(self):
        return True


# ---------------------------------------------------------------- the text


def test_the_progress_line_names_the_student_the_phase_and_the_cell():
    heard = position.Listener(_model())
    assert heard.hear({"at": [position.CLEAN_RERUN, 0, NAMES.index("test_ffn_forward"), 0]})
    clock, out = _Clock(), _Terminal()
    bar = Progress(3, stream=out, clock=clock)
    bar.advance("ada: graded 10/10")
    clock.now += 50
    bar.running([("bob", 41.0, heard.where), ("cy", 3.0, "")])
    tick = out.getvalue().split("\r\x1b[2K")[-1]
    assert tick.endswith("1/3 students · 0:50 elapsed · ETA 1:40 · "
                         "running: bob: clean re-run, test_ffn_forward (0:41); cy (0:03)")


def test_each_kind_of_position_reads_as_the_course_names_it():
    one, two = _model(), _model("01_intro", AID)
    cases = [(one, [0, 0, -1, 0], "notebook run"),
             (one, [0, 0, 1, 0], "notebook run, ffn_forward"),
             (one, [1, 0, 1, 1], "clean re-run, a cell below ffn_forward"),
             (one, [1, 0, -1, 1], "clean re-run, a cell at the top"),
             (two, [0, 1, -1, 0], f"notebook run of {AID}"),
             (two, [1, 1, 2, 0], f"clean re-run, {AID}: test_ffn_forward")]
    for model, at, text in cases:
        heard = position.Listener(model)
        assert heard.hear({"at": at}), at
        assert heard.where == text


def test_running_text_shows_the_longest_four():
    running = [(f"s{i}", float(i), "notebook run, setup") for i in range(6)]
    text = running_text(running)
    assert text.startswith("running: s5: notebook run, setup (0:05); s4:") and text.endswith("s2: notebook run, "
                                                                                           "setup (0:02) (+2)")


def _shown_on_a_terminal(columns, draw):
    """What `draw(stream)` writes on a pseudo-terminal `columns` wide: the last line drawn."""
    leader, follower = pty.openpty()
    try:
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        with os.fdopen(follower, "w", closefd=False) as stream:
            draw(stream)
        shown = b""
        while select.select([leader], [], [], 0.5)[0]:  # all that was written, however the terminal hands it over
            shown += os.read(leader, 65536)
        shown = shown.decode()
    finally:
        os.close(leader)
        os.close(follower)
    return shown.split("\x1b[2K")[-1]


def test_on_a_terminal_the_line_is_cut_to_its_width():
    """A line wider than the terminal would wrap, and the next tick would clear only its last row."""
    line = _shown_on_a_terminal(60, lambda stream: Progress(2, stream=stream).running(
        [("bob", 41.0, "clean re-run, a cell below test_ffn_forward_hidden")]))
    assert line == "0/2 · 0:00 elapsed · ETA ? · running: bob: clean re… (0:41)"  # no bar, its place cut: 59


def test_at_80_columns_the_slowest_student_and_its_time_are_shown_first():
    """A class of 12 on 2 workers: the looper's name, time and as much of its place as fits; the other's after."""
    def draw(stream):
        clock = _Clock()
        bar = Progress(12, stream=stream, clock=clock)
        for _ in range(10):
            bar.advance("ada: graded 10/10")
        clock.now += 62
        bar.running([("dan", 1.0, "notebook run, ffn_forward"), ("looper", 62.0, "notebook run, test_ffn_forward")])

    line = _shown_on_a_terminal(80, draw)
    assert line == "10/12 · 1:02 elapsed · ETA 0:12 · running: looper: notebook… (1:02); dan (0:01)", line


def test_the_eta_is_not_told_once_only_a_long_runner_is_left():
    """Eleven students of about a second each, then one in a loop: the average no longer says when it ends."""
    clock, out = _Clock(), _Terminal()
    bar = Progress(12, stream=out, clock=clock)
    for i in range(11):
        bar.running([(f"s{i}", 0.4, ""), ("looper", clock.now - 100.0, "notebook run, ffn_forward")])
        clock.now += 0.5
        bar.running([(f"s{i}", 0.9, ""), ("looper", clock.now - 100.0, "notebook run, ffn_forward")])
        bar.advance(f"s{i}: graded 10/10")
    assert "ETA 0:00" in out.getvalue().split("\r\x1b[2K")[-1]  # the looper has run 5.5 s: it may end any time
    ticks = []
    for _ in range(60):
        clock.now += 1.0
        bar.running([("looper", clock.now - 100.0, "notebook run, ffn_forward")])
        ticks.append(out.getvalue().split("\r\x1b[2K")[-1])
    assert "ETA ?" in ticks[-1] and "running: looper: notebook run, ffn_forward (1:05)" in ticks[-1], ticks[-1]
    assert [t for t in ticks if "ETA ?" not in t] == ticks[:1]  # past 2 x 0.9 s + 5 s, the ETA is not told


# ---------------------------------------------------------------- the worker's side


def test_a_cell_is_located_by_its_course_name_or_the_one_above_it():
    assert position.locate(NAMES, [None, "setup", None, "ffn_forward", "mine", "test_ffn_forward", 7]) == [
        [-1, 1], [0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]]


def test_the_worker_tracks_both_runs_by_the_course_names():
    nb = nbtools.completed_learner(AID)
    nb.cells.insert(0, nbformat.v4.new_code_cell("x = 1"))  # a learner's own cell, above every named one
    test_index = next(i for i, c in enumerate(nb.cells) if nbtools.grade_id(c) == "test_ffn_forward")
    nb.cells.insert(test_index + 1, nbformat.v4.new_code_cell("y = 2"))  # and one below test_ffn_forward
    model = AssignmentModel(AID, [NotebookModel(AID, [SourceCellModel(nbtools.grade_id(c), c.cell_type, True, "")
                                                      for c in nb.cells if nbtools.grade_id(c)])])
    names = [c.name for c in model.notebooks[0].cells]
    said = []
    tracker = position.Tracker(model)
    tracker.report = said.append
    for i in (0, test_index, test_index + 1):
        tracker.notebook_cell(AID, nb.cells, i)
    test = names.index("test_ffn_forward")
    assert said == [[0, 0, -1, 1], [0, 0, test, 0], [0, 0, test, 1]]
    code = code_cells(nb)
    at = tracker.clean_positions(model.notebooks[0], code)
    assert at(next(c for c in code if c.grade_id == "ffn_forward")) == [1, 0, names.index("ffn_forward"), 0]
    assert at(code[0]) == [1, 0, -1, 1]
    assert at(next(c for c in code if c.source == "y = 2")) == [1, 0, test, 1]
    hidden = next(c for c in code_cells(nbtools.source(AID)) if c.grade_id == "test_ffn_forward_hidden")
    assert at(hidden) == [1, 0, names.index("test_ffn_forward_hidden"), 0]  # a course test: by its name
    tracker.notebook_cell(AID, [{"metadata": "not a dict"}], 0)  # never raises into the grading
    assert len(said) == 3


class _Channel:
    def __init__(self):
        self.lines, self.lock = [], threading.Lock()

    def write(self, text):
        with self.lock:
            self.lines.append(json.loads(text))

    def flush(self):
        pass


def _wait_for(condition, seconds=10.0):
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.01)
    return condition()


def test_the_worker_says_where_it_is_at_most_every_gap_and_always_the_latest():
    channel = _Channel()
    reporter = position.Reporter(channel, [4], gap=0.2, clock=_Clock())  # no time passes but the timer's
    for cell in range(4):  # four cells in a row: the first is sent at once, the last after the gap
        reporter.at([0, 0, cell, 0])
    assert channel.lines == [{"at": [0, 0, 0, 0]}]
    assert _wait_for(lambda: len(channel.lines) == 2)
    assert channel.lines[1] == {"at": [0, 0, 3, 0]}
    reporter.at([1, 0, 4, 0])  # out of range: not sent
    reporter.at([1, 0, 2, True])  # not an integer: not sent
    reporter.at([1, 0, 1, 0])  # within the gap: waits
    timer = reporter.timer
    assert timer is not None  # the position waits on a timer
    reporter.write({"student": "bob"})  # the reply: the position waiting was bob's, and is dropped
    timer.join(10)  # the timer's thread is over: it was cancelled, or it ran and sent nothing
    assert not timer.is_alive() and reporter.timer is None and reporter.pending is None
    assert channel.lines[2:] == [{"student": "bob"}]


# ---------------------------------------------------------------- the parent's side: a compromised worker

FORGED = [
    {"at": [1, 0, 2, 0], "student": "cy"},  # anything beside "at"
    {"at": [1, 0, 4, 0]}, {"at": [1, 0, 10**30, 0]}, {"at": [1, 0, -2, 0]},  # no such cell
    {"at": [2, 0, 0, 0]}, {"at": [-1, 0, 0, 0]},  # no such phase (-1 would name the last in Python)
    {"at": [0, 1, 0, 0]}, {"at": [0, -1, 0, 0]},  # no such notebook
    {"at": [0, 0, 0, 2]}, {"at": [True, 0, 0, 0]}, {"at": [1.0, 0, 0, 0]}, {"at": [[1], 0, 0, 0]},
    {"at": [0, 0, "<b>cy's own text</b>", 0]}, {"at": "clean re-run, cy's own text"}, {"at": [0, 0, 0]},
    {"at": [0, 0, 0, 0, 0]}, {"at": {"phase": 0}}, {"at": None},
]


def _pool_with_one_worker(clock):
    """The parent's pool around one worker whose channel is a pipe this test writes, as a worker would."""
    model = _model()
    read, write = os.pipe()
    w = object.__new__(local_pool.WorkerProcess)
    w.proc, w.buffer, w.ready, w.slot = SimpleNamespace(stdout=os.fdopen(read, "rb")), b"", True, 0
    w.job, w.started, w.deadline = SimpleNamespace(student="cy"), time.monotonic(), time.monotonic() + 600
    w.heard = position.Listener(model, clock=clock)
    pool = object.__new__(local_pool._Pool)
    pool.model, pool.workers = model, [w]
    return pool, w, os.fdopen(write, "wb")


def _say(pipe, pool, w, messages):
    pipe.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    pipe.flush()
    return list(pool.replies(w))


def test_a_forged_or_out_of_range_position_is_dropped():
    clock = _Clock()
    pool, w, pipe = _pool_with_one_worker(clock)
    try:
        assert _say(pipe, pool, w, [{"at": [0, 0, 1, 0]}]) == []
        before = pool.running()
        assert [(s, where) for s, _, where in before] == [("cy", "notebook run, ffn_forward")]
        for forged in FORGED:
            clock.now += 1.0  # never over the rate: each is dropped for what it is
            assert _say(pipe, pool, w, [forged]) == [], forged  # no result, no crash, the worker kept
            assert w.heard.where == "notebook run, ffn_forward", forged
        assert w.heard.dropped == len(FORGED) and pool.workers == [w] and w.job.student == "cy"
        assert "own text" not in running_text(pool.running())
        clock.now += 1.0
        assert _say(pipe, pool, w, [{"at": [1, 0, 2, 0]}]) == []  # and it is still heard when it tells the truth
        assert w.heard.where == "clean re-run, test_ffn_forward"
    finally:
        pipe.close()
        w.proc.stdout.close()


def test_a_line_that_is_no_json_object_is_dropped_and_one_too_long_ends_the_worker(monkeypatch):
    clock = _Clock()
    pool, w, pipe = _pool_with_one_worker(clock)
    try:
        pipe.write(b'{"at": [0, 0, 1, 0]}\n' + b"not json\n" + b"[" * 20_000 + b"\n" + b'"at"\n[1, 2]\n'
                   + b'{"at": [1, 0, 2, 0]\n' + b"\xff\xfe\n" + b"null\n")
        pipe.flush()
        assert list(pool.replies(w)) == [] and w.heard.where == "notebook run, ffn_forward"
        monkeypatch.setattr(local_pool, "MAX_LINE", 1000)
        pipe.write(b'{"student": "cy", "result": "' + b"x" * 2000)  # no end of line, ever
        pipe.flush()
        with pytest.raises(EOFError):
            w.messages()
    finally:
        pipe.close()
        w.proc.stdout.close()


def test_a_flood_of_positions_is_cut_to_the_rate_and_its_last_is_named_once_the_rate_allows():
    clock = _Clock()
    pool, w, pipe = _pool_with_one_worker(clock)
    try:
        _say(pipe, pool, w, [{"at": [0, 0, i % 4, 0]} for i in range(1000)])
        assert w.heard.dropped == 1000 - position.BURST - 1  # the last one is held back, not dropped
        assert w.heard.where == f"notebook run, {NAMES[(position.BURST - 1) % 4]}"  # no token left yet
        clock.now += 1.0
        assert w.heard.where == f"notebook run, {NAMES[999 % 4]}"  # where the worker is now
        _say(pipe, pool, w, [{"at": [1, 0, 3, 1]} for _ in range(100)])
        named = int(position.RATE) - 1  # the second's tokens, less the one that named the flood's last
        assert w.heard.dropped == 1000 - position.BURST - 1 + 100 - named - 1
        assert w.heard.where == "clean re-run, a cell below test_ffn_forward_hidden"
    finally:
        pipe.close()
        w.proc.stdout.close()


def test_the_last_position_of_a_burst_read_late_is_where_the_progress_line_says_the_student_is():
    """A parent busy publishing a result on a loaded machine reads 12 positions at once (a notebook run of 3 s at
    one every GAP seconds): the worker then sits in its last cell, saying nothing more. On main the progress line
    kept naming the tenth cell for good, and test_leftovers' Ctrl-C test waited in vain for the last."""
    clock = _Clock()
    pool, w, pipe = _pool_with_one_worker(clock)
    try:
        burst = [{"at": [0, 0, i % 3, 0]} for i in range(11)] + [{"at": [0, 0, 3, 1]}]
        _say(pipe, pool, w, burst)
        clock.now += 1.0  # the next second's look at the worker
        assert [where for _, _, where in pool.running()] == ["notebook run, a cell below test_ffn_forward_hidden"]
    finally:
        pipe.close()
        w.proc.stdout.close()


# ---------------------------------------------------------------- a real batch, read while it runs

LOOP = "def ffn_forward(x, W1, b1, W2, b2):\n    while True:\n        pass\n"
SLOW = ("import time\n\ntime.sleep(3)  # in both runs, within the cell's time limit\n\n\n"
        "def ffn_forward(x, W1, b1, W2, b2):\n"
        "    return np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0) @ W2 + b2\n")


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.xdist_group("grader-progress")
def test_the_line_names_a_looping_student_its_phase_and_cell_while_it_runs(tmp_path, monkeypatch):
    from adversarial import grading

    course_root = grading.make_course(tmp_path / "course", AID)
    learner = nbtools.completed_learner(AID)
    grading.write_submissions(tmp_path / "submitted", AID, {
        "looper": nbtools.with_answers(learner, {"ffn_forward": LOOP}),
        "slow": nbtools.with_answers(learner, {"ffn_forward": SLOW})})
    terminal = _Terminal()  # a terminal: the line is redrawn at every tick (a second)
    monkeypatch.setattr(driver, "Progress", lambda total, **kw: Progress(total, stream=terminal, **kw))
    results = grading.run_batch(AID, tmp_path / "submitted", tmp_path / "results", course_root, cell_timeout=5.0)
    lines = terminal.getvalue().split("\r\x1b[2K")

    def first(text):
        return next((i for i, line in enumerate(lines) if text in line), None)

    assert results["looper"]["status"] == "timeout"
    looping = first("running: looper: notebook run, test_ffn_forward (")
    assert looping is not None and looping < first("looper: timeout "), lines
    slow_done = first(f"slow: {results['slow']['status']} ")
    in_notebook, in_clean = first("slow: notebook run, ffn_forward ("), first("slow: clean re-run, ffn_forward (")
    assert None not in (in_notebook, in_clean, slow_done) and in_notebook < in_clean < slow_done, lines
