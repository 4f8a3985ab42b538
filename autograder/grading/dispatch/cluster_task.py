"""What runs on a Dask worker of `grade --cluster`: one submission through the grading worker, as plain data back.

A task gets the assignment (`bundle`: its model, the course's notebooks, the gradebook template,
the release files, as bytes) and one submission's files as bytes: nothing is read from a shared
file system. The first task of a run on a Dask worker writes the bundle into a folder of its own
and starts a grading worker (worker.py, through pool.WorkerProcess: bubblewrap, the judge, the
limits); later tasks reuse it, as one machine's pool does. The task returns only plain data (the
schema's result, the autograded notebooks as bytes), which the instructor's process validates.

A worker that cannot build the sandbox, or runs another version of the grader, refuses with one line.
"""

import atexit
import contextlib
import hashlib
import json
import os
import select
import shutil
import stat
import threading
import time
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin

from ...limits import MAX_FILE_BYTES, MAX_MESSAGE_CHARS
from .. import course, tempfolders
from ..worker_setup import WorkerSetup


class _Job:
    """What pool.WorkerProcess.take_in reads: a student and the folder of their files."""

    def __init__(self, student, folder):
        self.student, self.folder = student, folder


class _Assignment:
    """One run's assignment on this Dask worker: its files on disk and the grading workers started for it."""

    def __init__(self, bundle):
        from ..gate_in import sandbox
        from ..scoring import ledger

        self.bundle = bundle
        # Under the temporary folder, not the Dask worker's own: a kernel's sockets are files in here, and their
        # names may not be longer than 107 bytes. Cleanup (a worker plugin) deletes it when the worker stops, and
        # the next assignment on this machine if the worker was killed (tempfolders).
        self.home = tempfolders.make("cluster", 0o711)  # each grading worker's user reaches its own folder in here
        # Slots are reused (a killed worker's slot goes back): slot k's sandboxes run as uid base + k and its
        # worker as base + MAX_SLOTS + k (sandbox.slot_uid, worker_uid), so there may never be more than MAX_SLOTS.
        self.idle, self.free, self.slots, self.started, self.lock = [], [], 0, 0, threading.Lock()
        ok, why = (True, "") if not bundle["isolate"] else sandbox.probe(sandbox.Limits(**bundle["limits"]))
        self.refusal = "" if ok else f"the grading sandbox cannot be set up: {' '.join(why.split())}"
        # The rest of the course version (the assignment, the limits, the seed) comes in the bundle itself.
        other = ledger.changed(bundle["version"], ledger.code_version(), ledger.CODE_PARTS) if ok else []
        if other:
            self.refusal = f"this worker runs another version of the {' and '.join(other)} than the instructor"
        self.setup = self._write() if not self.refusal else None

    def _write(self):
        """The bundle's files in this folder, and the set-up every grading worker is started with (as grade's)."""
        from ..gate_in import sandbox

        b, files = self.bundle, self.home / "assignment"
        write_files(files / "release", b["release"])
        write_files(files / "config", {"nbgrader_config.py": b["nbgrader_config"]})
        (files / "template.db").write_bytes(b["template_db"])
        return WorkerSetup.for_run(
            model=b["model"], scratch=self.home, course_root=files / "config", release_dir=files / "release",
            template_db=files / "template.db", course_notebooks=b["course_notebooks"], limits=b["limits"],
            isolate=b["isolate"], offering_seed=b["offering_seed"], hide=(_worker_directory(),),
            cell_timeout=b["cell_timeout"], draw_figures=bool(b.get("draw_figures")), uid_base=sandbox.uid_base())

    def take(self):
        """An idle grading worker, or a new one in a slot of its own (its own sandbox uids)."""
        from ..gate_in import sandbox
        from .pool import WorkerProcess

        with self.lock:
            if self.idle:
                return self.idle.pop()
            if self.free:
                slot = self.free.pop()
            elif self.slots < sandbox.MAX_SLOTS:
                slot, self.slots = self.slots, self.slots + 1
            else:
                raise RuntimeError(f"more than {sandbox.MAX_SLOTS} students at once on one Dask worker (--nthreads)")
            generation, self.started = self.started, self.started + 1
        logs = self.home / "logs"
        logs.mkdir(exist_ok=True)
        return WorkerProcess(slot, self.setup, logs / f"worker-{slot}.log", generation)

    def give_back(self, w):
        with self.lock:
            self.idle.append(w)

    def discard(self, w):
        """A grading worker that overran or crashed: killed, its slot free for the next one."""
        w.kill()
        with self.lock:
            self.free.append(w.slot)

    def close(self):
        for w in self.idle:
            with contextlib.suppress(Exception):
                w.stop()
        self.idle = []
        shutil.rmtree(self.home, ignore_errors=True)


_CURRENT = {}  # the bundle's digest -> _Assignment; one run's at a time per Dask worker
_LOCK = threading.Lock()


def _assignment(bundle):
    key = json.dumps(bundle["version"], sort_keys=True) + hashlib.sha256(bundle["template_db"]).hexdigest()
    with _LOCK:
        if key not in _CURRENT:
            for old in _CURRENT.values():
                old.close()
            _CURRENT.clear()
            _CURRENT[key] = _Assignment(bundle)
        return _CURRENT[key]


@atexit.register
def _close_all():
    with _LOCK:
        for a in _CURRENT.values():
            a.close()
        _CURRENT.clear()


class Cleanup(WorkerPlugin):
    """The grading workers stopped and their folder deleted when the Dask worker stops."""

    name = "ffn-grading-cleanup"

    def teardown(self, worker):
        _close_all()


def grade_one(bundle, student, files, again=False):
    """Grade one submission here; return {"student", "result", "files"} or {"refused": why}. Never raises."""
    try:
        assignment = _assignment(bundle)
        if assignment.refusal:
            return {"refused": assignment.refusal, "worker": _worker_address()}
        return _grade(assignment, student, files, again)
    except Exception as exc:  # noqa: BLE001 (a failed task is a `grader error` for this student, as plain data)
        error = f"the cluster task failed: {type(exc).__name__}: {exc}"
        return {"student": student, "error": error[:MAX_MESSAGE_CHARS]}


def ready(bundle):
    """The roll call before a run: {} when this worker can grade the assignment, else {"refused": why, "worker"}."""
    try:
        refusal = _assignment(bundle).refusal
    except Exception as exc:  # noqa: BLE001 (said to the instructor as one line, as a refusal)
        refusal = f"it could not prepare the assignment: {type(exc).__name__}: {exc}"
    return {"refused": refusal[:MAX_MESSAGE_CHARS], "worker": _worker_address()} if refusal else {}


def _worker_address():
    return getattr(_dask_worker(), "address", "")


def _worker_directory():
    """The Dask worker's own scratch folder (hidden from student code, as the rest of this one)."""
    return getattr(_dask_worker(), "local_directory", "")


def _dask_worker():
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None


def _grade(assignment, student, files, again):
    folder = None
    inbox = assignment.home / "in" / f"{student}-{os.getpid()}-{threading.get_ident()}"
    if files is not None:
        folder = inbox / student
        write_files(folder, files)
    w = assignment.take()
    timeout = float(assignment.bundle["timeout"])
    try:
        reply = _ask(w, _Job(student, folder), timeout, again)
    finally:
        shutil.rmtree(inbox, ignore_errors=True)
        shutil.rmtree(w.home / "in" / student, ignore_errors=True)  # take_in's copy (as grade's pool deletes it)
    if reply.get("lost"):
        assignment.discard(w)
        return {"student": student, "status": reply["lost"], "error": reply["why"]}
    assignment.give_back(w)
    out = {"student": student, "result": reply["result"], "files": read_back(reply.get("autograded_dir"))}
    for path in (reply.get("autograded_dir"), reply.get("html")):
        if path:
            shutil.rmtree(path, ignore_errors=True) if Path(path).is_dir() else Path(path).unlink(missing_ok=True)
    return out


def _ask(w, job, timeout, again):
    """Send one student to grading worker `w` and wait for its reply; {"lost": status, "why": ...} if none came."""
    from .pool import STARTUP_TIMEOUT

    deadline = time.monotonic() + (STARTUP_TIMEOUT if not w.ready else 0)
    sent = False
    while True:
        if w.ready and not sent:
            w.send({"op": "grade", "student": job.student, "input_dir": w.take_in(job), "again": again})
            sent, deadline = True, time.monotonic() + timeout
        wait = deadline - time.monotonic()
        if wait <= 0:
            if not sent:
                return {"lost": "grader error", "why": f"the grading worker did not start within {STARTUP_TIMEOUT} s"}
            return {"lost": "timeout", "why": f"grading this submission took longer than {timeout:g} s"}
        if not select.select([w], [], [], wait)[0]:
            continue
        try:
            messages = w.messages()
        except EOFError:
            return {"lost": "grader error", "why": "the grading worker crashed on this submission"}
        for message in messages:
            if message.get("ready"):
                w.ready = True
            elif sent and "at" not in message and message.get("student") == job.student:  # "at": where it is
                return message


def write_files(folder, files):
    """Write {relative path: bytes} under `folder` (a fresh one); a path that would leave it is refused."""
    folder = Path(folder)
    folder.mkdir(parents=True)
    for rel, data in files.items():
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"expected a relative file name, got {rel!r}")
        target = folder.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as f:
            f.write(bytes(data))


def read_back(folder):
    """{name: bytes} of the regular files directly in `folder` (an autograded folder), each within the limit."""
    out = {}
    if not folder or not Path(folder).is_dir():
        return out
    for item in sorted(Path(folder).iterdir()):
        if item.suffix != ".ipynb" and item.name not in (course.TIMESTAMP, course.SECRET):
            continue
        try:  # opened without following a link, checked once open: the folder is the grading worker's user's
            fd = os.open(item, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES:
                out[item.name] = f.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]
    return out
