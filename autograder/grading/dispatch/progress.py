"""A progress bar with an ETA on stderr (one line per update when stderr is not a terminal).

While students are being graded the line keeps ticking and names them, with where each
one's grading is (the notebook run or the clean re-run, and the cell) and the time it has
taken so far: a submission stuck in a loop shows as one whose cell stays and time grows.
"""

import os
import sys
import time

QUIET_TICKS = 30.0  # seconds between two ticking lines when stderr is not a terminal (a log file)


def _clock(seconds):
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def _columns(stream):
    """The width of the terminal `stream` writes to (a very wide one when it has no size)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 1 << 16


def running_text(running, limit=4):
    """'running: carol: clean re-run, test_relu (0:42); dan (0:03)' for [(student, seconds, where)], longest first.

    `where` (position.Listener's, or '') is text the parent made from the course's own names.
    """
    if not running:
        return ""
    items = sorted(running, key=lambda r: -r[1])
    shown = "; ".join(f"{student}: {where} ({_clock(seconds)})" if where else f"{student} ({_clock(seconds)})"
                      for student, seconds, where in items[:limit])
    return "running: " + shown + (f" (+{len(items) - limit})" if len(items) > limit else "")


class Progress:
    def __init__(self, total, what="students", stream=None, width=24, clock=time.monotonic):
        self.total, self.what, self.width, self.clock = total, what, width, clock
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = self.last_shown = clock()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, last="", draw_bar=True):
        elapsed = self.clock() - self.start
        eta = "?" if self.done == 0 else _clock(elapsed / self.done * (self.total - self.done))
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        tail = f" · {last}" if last else ""
        counts = f"{self.done}/{self.total} {self.what} · {_clock(elapsed)} elapsed · ETA {eta}{tail}"
        return f"[{bar}] {counts}" if draw_bar else counts

    def advance(self, last=""):
        self.done += 1
        self.show(last)

    def running(self, running):
        """Refresh the line with who is being graded: every call on a terminal, every QUIET_TICKS s in a log."""
        if self.done >= self.total or (not self.tty and self.clock() - self.last_shown < QUIET_TICKS):
            return
        self.show(running_text(running), final=False)

    def show(self, last="", final=True):
        text = self.line(last)
        self.last_shown = self.clock()
        if self.tty:
            # Longer than the terminal, the line would wrap, and the next tick would clear its last row only:
            # the bar goes first, then the end of the line.
            width = max(40, _columns(self.stream) - 1)
            text = text if len(text) <= width else self.line(last, draw_bar=False)[:width]
            self.stream.write("\r\x1b[2K" + text + ("\n" if final and self.done == self.total else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
