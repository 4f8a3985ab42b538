"""Locks of one test run, shared by its xdist workers: a folder made by the controller before it starts them (they
inherit its name through the environment), removed at its end."""

import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

LOCKS = "FFN_TEST_LOCKS"
WAITS = "waits.log"  # in the folder of locks: one line per wait of a second or more, read at the run's end
_held = threading.local()


def cores():
    """The sandboxes the machine runs at once without oversubscribing it: one per core."""
    return max(1, os.cpu_count() or 1)


def _slot_files(folder, stack):
    return [stack.enter_context(open(Path(folder) / f"core-{i}.lock", "a", encoding="ascii")) for i in range(cores())]


def _take_one(files):
    """Lock one free core's file, or wait for this worker's own (it holds nothing while it waits: no deadlock)."""
    for f in files:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            continue
    own = int("".join(c for c in os.environ.get("PYTEST_XDIST_WORKER", "") if c.isdigit()) or 0)
    fcntl.flock(files[own % len(files)], fcntl.LOCK_EX)


@contextlib.contextmanager
def one_batch(jobs=None):
    """Hold the test run's cores for a sandboxed grading batch of `jobs` at once (None: a `grade` of its own
    choosing, which may use them all): one core's lock for a batch of one job, every core's for more. So the run's
    xdist workers never grade with more sandboxes than the machine has cores (two workers each grading with two
    jobs made timing tests fail on a loaded machine), yet one-job batches on different workers run side by side
    rather than leave a core idle. Re-entrant within a thread (a test that holds it may call run_batch); the locks
    go when their files close, however the batch ends. Cores are taken in order, and a one-job batch holds none
    while it waits, so two batches never wait for each other."""
    folder = os.environ.get(LOCKS)
    depth = getattr(_held, "depth", 0)
    if not folder or depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth = depth
        return
    with contextlib.ExitStack() as stack:
        files = _slot_files(folder, stack)
        asked = time.monotonic()
        if jobs == 1:
            _take_one(files)
        else:
            for f in files:
                fcntl.flock(f, fcntl.LOCK_EX)
        _record_wait(folder, time.monotonic() - asked)
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0


def _record_wait(folder, seconds):
    """A wait of a second or more, with the test that waited: while a worker waits for a core, a core may sit idle."""
    if seconds >= 1:
        test = os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" ", 1)[0]
        with open(Path(folder) / WAITS, "a", encoding="utf-8") as log:  # lines this short are appended whole
            log.write(f"{seconds:.1f}\t{test}\n")


def waits(folder):
    """[(seconds, test)] of the run's waits for its locks, longest first."""
    path = Path(folder) / WAITS
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return sorted(((float(s), test) for s, test in (line.split("\t", 1) for line in lines)), reverse=True)


def make_folder():
    """Make the run's folder of locks unless an outer process (the xdist controller) has: the folder made, or None."""
    if os.environ.get(LOCKS):
        return None
    os.environ[LOCKS] = tempfile.mkdtemp(prefix="ffn-test-locks-")
    return os.environ[LOCKS]


def remove_folder(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.environ.pop(LOCKS, None)
