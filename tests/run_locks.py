"""Locks of one test run, shared by its xdist workers: a folder made by the controller before it starts them (they
inherit its name through the environment), removed at its end."""

import contextlib
import fcntl
import os
import shutil
import tempfile
import threading
from pathlib import Path

LOCKS = "FFN_TEST_LOCKS"
_held = threading.local()


@contextlib.contextmanager
def one_batch():
    """Hold the test run's lock for sandboxed grading: at most one batch at a time across xdist workers. A batch's
    sandboxes and kernels keep two cores busy; two at once made timing tests fail on a loaded machine. Re-entrant
    within a thread (a test that holds it may call run_batch)."""
    folder = os.environ.get(LOCKS)
    depth = getattr(_held, "depth", 0)
    if not folder or depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth = depth
        return
    with open(Path(folder) / "sandboxed-grading.lock", "a", encoding="ascii") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, however the batch ends
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0


def make_folder():
    """Make the run's folder of locks unless an outer process (the xdist controller) has: the folder made, or None."""
    if os.environ.get(LOCKS):
        return None
    os.environ[LOCKS] = tempfile.mkdtemp(prefix="ffn-test-locks-")
    return os.environ[LOCKS]


def remove_folder(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.environ.pop(LOCKS, None)
