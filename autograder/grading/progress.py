"""A progress bar with an ETA on stderr (one line per update when stderr is not a terminal)."""

import sys
import time


def _clock(seconds):
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total, what="students", stream=None, width=24):
        self.total, self.what, self.width = total, what, width
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, last=""):
        elapsed = time.monotonic() - self.start
        eta = "?" if self.done == 0 else _clock(elapsed / self.done * (self.total - self.done))
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        tail = f" · {last}" if last else ""
        return f"[{bar}] {self.done}/{self.total} {self.what} · {_clock(elapsed)} elapsed · ETA {eta}{tail}"

    def advance(self, last=""):
        self.done += 1
        self.show(last)

    def show(self, last=""):
        text = self.line(last)
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
