"""A progress bar with an ETA on stderr (one line per update when stderr is not a terminal).

While students are being graded the line keeps ticking and names them, with where each
one's grading is (the notebook run or the clean re-run, and the cell) and the time it has
taken so far: a submission stuck in a loop shows as one whose cell stays and time grows.
"""

import os
import sys
import time

QUIET_TICKS = 30.0  # seconds between two ticking lines when stderr is not a terminal (a log file)
LONG_SLACK = 5.0  # seconds a student may run beyond twice the others' average before the ETA is no longer told


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


def _entry(student, seconds, where):
    return f"{student}: {where} ({_clock(seconds)})" if where else f"{student} ({_clock(seconds)})"


def _cut(text, room):
    return text if len(text) <= room else text[:max(0, room - 1)] + "…"


def running_text(running, limit=4, width=None):
    """'running: carol: clean re-run, test_relu (0:42); dan (0:03)' for [(student, seconds, where)], longest first.

    `where` (position.Listener's, or '') is text the parent made from the course's own names. Given a `width`, the
    text is the fullest that fits: the others' `where` goes first, then the end of the slowest one's, then students
    from the end, so that the slowest student's name and time are the last thing to be cut.
    """
    if not running:
        return ""
    items = sorted(running, key=lambda r: -r[1])
    for shown in range(min(limit, len(items)), 0, -1):
        more = f" (+{len(items) - shown})" if len(items) > shown else ""
        for detailed in range(shown, -1, -1):
            entries = [_entry(s, t, w if i < detailed else "") for i, (s, t, w) in enumerate(items[:shown])]
            text = "running: " + "; ".join(entries) + more
            if width is None or len(text) <= width:
                return text
            if detailed == 1:  # the slowest one's place, cut to the room left beside its name and time
                student, seconds, where = items[0]
                room = width - (len(text) - len(where))
                if room >= len("notebook…") and len(where) > room:
                    entries[0] = _entry(student, seconds, _cut(where, room))
                    return "running: " + "; ".join(entries) + more
    return "running: " + _entry(items[0][0], items[0][1], "") + (f" (+{len(items) - 1})" if len(items) > 1 else "")


class Progress:
    def __init__(self, total, what="students", stream=None, width=24, clock=time.monotonic):
        self.total, self.what, self.width, self.clock = total, what, width, clock
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = self.last_shown = clock()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.seen, self.took = {}, []  # student -> seconds at the last tick; the seconds of those gone since
        self.long = False  # every student left is running, one of them far longer than the others took

    def eta(self, elapsed):
        if self.done == 0 or self.long:
            return "?"
        return _clock(elapsed / self.done * (self.total - self.done))

    def line(self, last="", draw_bar=True, what=True):
        elapsed = self.clock() - self.start
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        tail = f" · {last}" if last else ""
        counts = (f"{self.done}/{self.total}{' ' + self.what if what else ''} · {_clock(elapsed)} elapsed · "
                  f"ETA {self.eta(elapsed)}{tail}")
        return f"[{bar}] {counts}" if draw_bar else counts

    def clear(self):
        """On a terminal, wipe the line, so that a result printed on stdout does not land beside it."""
        if self.tty:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

    def advance(self, last=""):
        self.done += 1
        self.show(last)

    def running(self, running):
        """Refresh the line with who is being graded: every call on a terminal, every QUIET_TICKS s in a log."""
        self._watch(running)
        if self.done >= self.total or (not self.tty and self.clock() - self.last_shown < QUIET_TICKS):
            return
        self.show(running=running, final=False)

    def _watch(self, running):
        """Learn how long students take (the last time seen of each one gone), and whether the average the ETA is
        made of still holds: it does not once only long runners are left (a loop), whose end it cannot tell."""
        now = {student: seconds for student, seconds, _ in running}
        self.took += [seconds for student, seconds in self.seen.items() if student not in now]
        self.seen = now
        typical = sum(self.took) / len(self.took) if self.took else None
        self.long = typical is not None and self.total - self.done <= len(now) and any(
            seconds > 2 * typical + LONG_SLACK for seconds in now.values())

    def show(self, last="", final=True, running=()):
        self.last_shown = self.clock()
        if not self.tty:
            self.stream.write(self.line(last or running_text(running)) + "\n")
        else:
            # Longer than the terminal, the line would wrap, and the next tick would clear its last row only:
            # the bar goes first, then the running students' detail, slowest student last; then the end of the line.
            width = max(40, _columns(self.stream) - 1)
            text = self.line(last or running_text(running))
            if len(text) > width and running:  # then "students", then the detail (running_text)
                head = self.line(draw_bar=False, what=False)
                text = (head + " · " + running_text(running, width=width - len(head) - 3))[:width]
            elif len(text) > width:
                text = self.line(last, draw_bar=False)[:width]
            self.stream.write("\r\x1b[2K" + text + ("\n" if final and self.done == self.total else ""))
        self.stream.flush()
