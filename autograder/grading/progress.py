"""A progress bar with an ETA on stderr (one line per update when stderr is not a terminal).

While students are being graded the line keeps ticking and names them, with the time
each has taken so far: a submission stuck in a loop shows as one whose time grows.
"""

import sys
import time

QUIET_TICKS = 30.0  # seconds between two ticking lines when stderr is not a terminal (a log file)


def _clock(seconds):
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def running_text(running, limit=4):
    """'running: carol 0:42, dan 0:03' for [(student, seconds)], longest first."""
    if not running:
        return ""
    items = sorted(running, key=lambda r: -r[1])
    shown = ", ".join(f"{student} {_clock(seconds)}" for student, seconds in items[:limit])
    return "running: " + shown + (f" (+{len(items) - limit})" if len(items) > limit else "")


class Progress:
    def __init__(self, total, what="students", stream=None, width=24, clock=time.monotonic):
        self.total, self.what, self.width, self.clock = total, what, width, clock
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = self.last_shown = clock()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, last=""):
        elapsed = self.clock() - self.start
        eta = "?" if self.done == 0 else _clock(elapsed / self.done * (self.total - self.done))
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        tail = f" · {last}" if last else ""
        return f"[{bar}] {self.done}/{self.total} {self.what} · {_clock(elapsed)} elapsed · ETA {eta}{tail}"

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
            self.stream.write("\r\x1b[2K" + text + ("\n" if final and self.done == self.total else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
