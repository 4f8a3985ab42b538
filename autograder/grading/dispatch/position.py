"""Where a worker is in a student's grading (which phase, which cell), as it may tell the parent.

The worker runs student code, so what it says is untrusted: the message holds four small
integers and no text, `{"at": [phase, notebook, cell, below]}`:

- `phase`: an index into PHASES;
- `notebook`: an index into the assignment's notebooks (course.AssignmentModel, which both sides hold);
- `cell`: an index into that notebook's cells in the model (the course's named cells), or -1;
- `below`: 1 when the cell running is not one of the course's but one below `cell` (-1: above all of them).

The parent names the cell from its own copy of the model (`Listener`) and drops anything
else: another shape, an index out of range. It names at most RATE positions a second, the
latest always. The worker sends at most one message every GAP seconds, and the latest
position always (`Reporter`).
"""

import json
import sys
import threading
import time

PHASES = ("notebook run", "clean re-run")
NOTEBOOK_RUN, CLEAN_RERUN = 0, 1
GAP = 0.25  # seconds between two messages of a worker (what it says in between is merged into the next)
RATE, BURST = 10.0, 10  # messages a second the parent takes from a worker, and how many at once


def locate(names, grade_ids):
    """[cell, below] for each cell of a notebook in order (its grade id, or None), against the course's `names`."""
    index = {name: i for i, name in enumerate(names)}
    above, out = -1, []
    for gid in grade_ids:
        if isinstance(gid, str) and gid in index:
            above = index[gid]
            out.append([above, 0])
        else:
            out.append([above, 1])
    return out


def checked(at, sizes):
    """`at` as [phase, notebook, cell, below] if it is one for notebooks of `sizes` cells, else None."""
    if type(at) is not list or len(at) != 4 or not all(type(v) is int for v in at):
        return None  # bool is no int here, and no float, string or nested value passes
    phase, notebook, cell, below = at
    if not (0 <= phase < len(PHASES) and 0 <= notebook < len(sizes) and -1 <= cell < sizes[notebook]
            and below in (0, 1)):
        return None
    return at


def describe(at, model):
    """'clean re-run, test_ffn_forward' for a checked position, named from the course's own `model`."""
    phase, notebook, cell, below = at
    nb = model.notebooks[notebook]
    prefix = f"{nb.name}: " if len(model.notebooks) > 1 else ""
    if cell < 0:
        where = "a cell at the top" if below else ""
    else:
        name = nb.cells[cell].name
        where = f"a cell below {name}" if below else name
    return PHASES[phase] + (f", {prefix}{where}" if where else f" of {nb.name}" if prefix else "")


class Listener:
    """The parent's side, one per worker: the latest position it said, checked and named; the rest dropped.

    Over the rate a position is held back, not lost: the latest one held is named as soon as the rate allows,
    at the next message or the next look at `where`. A parent busy for a while (publishing a result on a loaded
    machine) reads a worker's positions in a burst, and the last of the burst is where the worker is now."""

    def __init__(self, model, clock=time.monotonic):
        self.model, self.clock = model, clock
        self.sizes = [len(nb.cells) for nb in model.notebooks]
        self._where, self.held, self.dropped = "", None, 0
        self.tokens, self.filled = float(BURST), clock()

    @property
    def where(self):
        """What the worker said last, named ('' before it said anything of this student)."""
        self._name_held()
        return self._where

    def _name_held(self):
        """Name the position held back if the rate allows; True if none is left held."""
        if self.held is not None and self._token():
            self._where, self.held = describe(self.held, self.model), None
        return self.held is None

    def reset(self):
        self._where, self.held = "", None

    def _token(self):
        now = self.clock()
        self.tokens = min(float(BURST), self.tokens + (now - self.filled) * RATE)
        self.filled = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    def hear(self, message):
        """Take one message of the worker's that has an "at"; True if it is named now (False: dropped, or held
        back until the rate allows)."""
        at = checked(message.get("at"), self.sizes) if set(message) == {"at"} else None
        if at is None:
            self.dropped += 1
            return False
        if self.held is not None:  # a newer position: the one held back is never named
            self.dropped += 1
        self.held = at
        return self._name_held()


class Tracker:
    """The worker's side: the cell running, as the notebook run and the clean re-run see it, as a position."""

    def __init__(self, model):
        self.model = model
        self.notebooks = {nb.name: i for i, nb in enumerate(model.notebooks)}
        self.report = lambda at: None  # Reporter.at, once the worker has its channel
        self._located = (None, [])

    def phase(self, phase, name, where=(-1, 0)):
        if name in self.notebooks:
            self.report([phase, self.notebooks[name], *where])

    def _names(self, name):
        return [c.name for c in self.model.notebooks[self.notebooks[name]].cells]

    def notebook_cell(self, name, nb_cells, index):
        """A Recorder's on_cell: the notebook run's cell `index`, by the course's name of it or of the one above it."""
        try:
            if self._located[0] is not nb_cells:
                ids = [(c.get("metadata") or {}).get("nbgrader", {}).get("grade_id") for c in nb_cells]
                self._located = (nb_cells, locate(self._names(name), ids))
            self.phase(NOTEBOOK_RUN, name, self._located[1][index])
        except Exception as exc:  # the progress line must never cost a grade
            print(f"progress: {exc!r}", file=sys.stderr, flush=True)

    def clean_positions(self, nbm, code):
        """cell -> its position in the clean re-run (rerun.CleanRun's on_cell): the submission's cells
        (`code`, cells.Cell) by their place among them, the course's tests by name."""
        names, notebook = self._names(nbm.name), self.notebooks[nbm.name]
        placed = dict(zip([c.index for c in code], locate(names, [c.grade_id for c in code]), strict=True))

        def at(cell):
            where = locate(names, [cell.grade_id])[0] if cell.role == "test" else placed.get(cell.index)
            return [CLEAN_RERUN, notebook, *(where or (-1, 1))]

        return at


class Reporter:
    """The worker's side: writes the channel's lines, positions at most every GAP seconds (the latest always)."""

    def __init__(self, channel, sizes, gap=GAP, clock=time.monotonic):
        self.channel, self.sizes, self.gap, self.clock = channel, sizes, gap, clock
        self.lock = threading.Lock()
        self.pending, self.timer, self.last = None, None, float("-inf")

    def at(self, at):
        """Say where the worker is now; a malformed position is not sent."""
        if checked(at, self.sizes) is None:
            return
        with self.lock:
            wait = self.last + self.gap - self.clock()
            if wait <= 0:
                self._send(at)
                return
            self.pending = list(at)
            if self.timer is None:
                self.timer = threading.Timer(wait, self._flush)
                self.timer.daemon = True
                self.timer.start()

    def write(self, message):
        """A reply: a position still waiting is dropped (it was the finished student's), none follows it."""
        with self.lock:
            self.pending = None
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            self.channel.write(json.dumps(message) + "\n")
            self.channel.flush()

    def _flush(self):
        with self.lock:
            if self.timer is not threading.current_thread():
                return  # cancelled by a reply while it waited for the lock
            self.timer = None
            if self.pending is not None:
                self._send(self.pending)

    def _send(self, at):
        self.pending, self.last = None, self.clock()
        self.channel.write(json.dumps({"at": at}) + "\n")
        self.channel.flush()
