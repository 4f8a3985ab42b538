"""The local backend of grading: a pool of worker processes on this machine, one student at a time each.

Each worker is a `python -m autograder.grading.worker` child (worker.py: it imports nbgrader once and
grades one student at a time in its own scratch course) with a JSON-lines channel. The pool hands out
submissions, and kills and replaces a worker that crashed or overran a student's time limit: that
student's reply is then a `grader error` or a `timeout` result. A Dask task runs one WorkerProcess
the same way (cluster_task.py). What a worker replies is data for replies.checked, never trusted.
"""

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ... import offering
from ...limits import MiB
from .. import course
from ..gate_in import cgroups, confine, sandbox
from ..scoring import results
from . import position

TICK = 1.0  # seconds between two refreshes of the progress line while students are being graded
STARTUP_TIMEOUT = 600  # seconds for a worker to import nbgrader and copy the course (slow on a loaded machine)
MAX_LINE = 64 * MiB  # bytes of one line from a worker (a student's result is a few MiB at most)
TIMING_LOG = "timing.jsonl"  # in the run's logs/: each worker's start-up, and each student's stages (driver.py)


class WorkerProcess:
    """One worker: a `python -m autograder.grading.worker` child with a JSON-lines channel."""

    def __init__(self, slot, setup, log_path, generation):
        self.slot = slot
        self.home = Path(setup.scratch) / f"w{slot}-{generation}"
        # Grading as root, the worker runs as a user of its own (sandbox.worker_uid), which may read only its own
        # folder: what it needs from the course is copied there, and its results are read back from there.
        self.uid = sandbox.worker_uid(slot, setup.uid_base) if setup.isolate else None
        # Its own cgroup, bounding its memory and holding its sandboxes' (cgroups.py); joined before it runs
        self.group, own = cgroups.worker_group(f"w{slot}-{generation}", sandbox.Limits(**setup.limits), self.uid)
        self.setup = setup.but(slot=slot, scratch=str(self.home / "scratch"), cgroup=self.group,
                               **_worker_files(setup, self.home))
        confine.hand_over(self.home, self.uid)
        start = confine.worker_start(self.uid, _worker_paths()) if self.uid is not None else confine.fresh_keyring
        start = _joining(own, start)
        self.log = open(log_path, "ab")  # noqa: SIM115 (closed in kill())
        env = {k: v for k, v in os.environ.items() if k != offering.ENV}  # the seed goes in the setup, to the judge
        # TMPDIR: what the worker makes as temporary (its public build of ffn_helpers, ...) is in the run's folder,
        # which grade() removes however the run ends; the worker itself ends with os._exit, cleaning nothing
        env = dict(env, **sandbox.own_folders(self.home, tmp=self.home / "tmp"),
                   PYTHONPATH=os.pathsep.join(_code_roots()), **sandbox.ONE_THREAD)  # its judges fork it
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder.grading.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, start_new_session=True,
                                     preexec_fn=start, cwd="/", env=env)
        self.buffer = b""
        self.ready = False
        self.job = None
        self.created = self.started = time.monotonic()  # self.started: of the current job
        self.deadline = time.monotonic() + STARTUP_TIMEOUT
        self.send({"op": "setup", "setup": self.setup.to_dict()})

    def take_in(self, job):
        """A copy of the student's submitted folder in the worker's own (regular files only), or None."""
        if job.folder is None:
            return None
        folder = self.home / "in" / job.student
        course.copy_tree(job.folder, folder)
        confine.hand_over(folder, self.uid)
        return str(folder)

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def fileno(self):
        return self.proc.stdout.fileno()

    def messages(self):
        """Read what is available; return the complete messages, each a JSON object, and drop any other line
        (raise EOFError when the worker is gone, or sends a line longer than MAX_LINE: it is treated as crashed)."""
        data = os.read(self.fileno(), 1 << 20)
        if not data:
            raise EOFError
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        if len(self.buffer) > MAX_LINE or any(len(line) > MAX_LINE for line in lines):
            raise EOFError
        return [m for m in map(_json_object, lines) if m is not None]

    def kill(self):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)
        self.log.close()
        cgroups.remove(self.group)  # and what of its sandboxes still runs

    def ask_to_stop(self):
        """Tell the worker to end once it has answered (stop() then waits for it)."""
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):  # ValueError: stdin closed already
            self.send({"op": "stop"})
            self.proc.stdin.close()

    def stop(self):
        self.ask_to_stop()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def _joining(group, start):
    """`start` (a preexec_fn), after joining `group`, if there is one."""
    if not group:
        return start

    def joined():
        cgroups.join_cgroup(group)
        start()

    return joined


def _json_object(line):
    """The JSON object a worker's line holds, or None (a compromised worker may send anything)."""
    try:
        message = json.loads(line) if line.strip() else None
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _worker_files(setup, home):
    """Copies, in the worker's folder, of the course files it reads; the setup entries that name them."""
    files = home / "course-files"
    (files / "config").mkdir(parents=True)
    shutil.copyfile(setup.template_db, files / "template.db")
    shutil.copyfile(Path(setup.course_root) / "nbgrader_config.py", files / "config" / "nbgrader_config.py")
    course.copy_tree(setup.release_dir, files / "release")  # what a learner received: nothing of source/
    given = {}
    if setup.matplotlib_cache:  # built once for the run (grade._worker_setup); a worker without one builds its own
        course.copy_tree(setup.matplotlib_cache, files / "matplotlib")
        given["matplotlib_cache"] = str(files / "matplotlib")
    (home / "feedback").mkdir()
    (home / "scratch").mkdir()
    (home / "tmp").mkdir()  # its TMPDIR
    return {"template_db": str(files / "template.db"), "course_root": str(files / "config"),
            "release_dir": str(files / "release"), **given,
            "feedback_dir": str(home / "feedback") if setup.feedback_dir else None}


def _packages():
    """The folders of the grader's own two packages, as this process imported them (links resolved)."""
    import autograder
    import ffn_helpers

    return [Path(m.__file__).resolve().parent for m in (autograder, ffn_helpers)]


def _code_roots():
    """The folders holding the grader's own two packages, first on a worker's path: it runs the very code that
    grades (not the checkout an editable install names, which may be another one, or closed to its user)."""
    return sorted({str(p.parent) for p in _packages()})


def _worker_paths():
    """What a worker's interpreter must reach: Python, its packages, and the course's own two packages."""
    return sorted({*sandbox.required_paths(), *map(str, _packages())})


def _last_line(log):
    """The last line a worker wrote to its log (usually why it ended), printable and short."""
    with open(log, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 4096))
        lines = [line for line in f.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return "".join(c for c in lines[-1] if c.isprintable())[:300] if lines else "it wrote nothing"


class _Pool:
    """The workers of one run: hands submissions out, and replaces a worker that crashed or overran."""

    def __init__(self, setup, jobs, timeout, log_dir, model, again=False):
        self.setup, self.timeout, self.log_dir, self.model, self.generation = setup, timeout, log_dir, model, 0
        self.again = again  # the regrade after the batch (see _again_alone)
        self.workers = [self._start(slot) for slot in range(jobs)]

    def _start(self, slot):
        w = WorkerProcess(slot, self.setup, self.log_dir / f"worker-{slot}.log", self.generation)
        w.heard = position.Listener(self.model)  # where it says it is: checked, named from our own model
        return w

    def _replace(self, w):
        w.kill()
        self.generation += 1
        self.workers[self.workers.index(w)] = self._start(w.slot)

    def assign(self, queue):
        for w in self.workers:
            if w.ready and w.job is None and queue:
                w.job = queue.pop(0)
                w.started = time.monotonic()
                w.deadline = w.started + self.timeout
                w.heard.reset()
                w.send({"op": "grade", "student": w.job.student, "input_dir": w.take_in(w.job), "again": self.again})

    def replies(self, w):
        """(submission, reply) for each result worker `w` sent; a worker that died fails its submission."""
        try:
            for message in w.messages():
                if message.get("ready"):
                    w.ready = True
                    with open(self.log_dir / TIMING_LOG, "a", encoding="utf-8") as log:  # its start-up, once
                        log.write(json.dumps({"worker": w.slot, "stages": {
                            "worker start": round(time.monotonic() - w.created, 3)}}) + "\n")
                elif "at" in message:  # where it is (position.py); never a result
                    if w.job is not None:
                        w.heard.hear(message)
                elif w.job is not None and message.get("student") == w.job.student:
                    job, w.job = w.job, None
                    shutil.rmtree(w.home / "in" / job.student, ignore_errors=True)
                    yield job, message
        except EOFError:
            if not w.ready:
                log = self.log_dir / f"worker-{w.slot}.log"
                raise RuntimeError(f"worker {w.slot} failed to start ({_last_line(log)}); see {log}") from None
            job = w.job
            self._replace(w)
            if job is not None:
                yield job, {"result": results.failed(self.model, job.student, "grader error",
                                              "the grading worker crashed on this submission")}

    def running(self):
        """(student, seconds so far, where its grading is or '') of each submission being graded now."""
        now = time.monotonic()
        return [(w.job.student, now - w.started, w.heard.where) for w in self.workers if w.job is not None]

    def overdue(self):
        """(submission, reply) for each submission past its time: its worker is killed and replaced."""
        now = time.monotonic()
        for w in list(self.workers):
            if now < w.deadline or (w.job is None and w.ready):
                continue
            if not w.ready:
                raise RuntimeError(f"worker {w.slot} did not start within {STARTUP_TIMEOUT} s")
            job = w.job
            self._replace(w)
            yield job, {"result": results.failed(self.model, job.student, "timeout",
                                          f"grading this submission took longer than {self.timeout:g} s")}


class LocalPool:
    """The backend of one machine: `jobs` workers for the batch, one for the students graded again alone."""

    def __init__(self, setup, jobs, timeout, log_dir, model):
        self.setup, self.jobs, self.timeout, self.log_dir, self.model = setup, jobs, timeout, log_dir, model
        self.scratch = Path(setup.scratch)  # every worker's folder, and so every file a reply names, is in here

    def run(self, queue, again, tick):
        """(submission, reply) as each of `queue` is graded; `again`: one worker, in a folder of its own."""
        setup, jobs = self.setup, self.jobs
        if again:
            (self.scratch / "again").mkdir(mode=0o711, exist_ok=True)
            setup, jobs = setup.but(scratch=str(self.scratch / "again")), 1
        yield from run_pool(queue, setup, jobs, self.timeout, self.log_dir, self.model, again=again, tick=tick)


def run_pool(queue, setup, jobs, timeout, log_dir, model, again=False, tick=None):
    """Grade every submission of `queue` with `jobs` workers; yield (submission, worker reply) as each finishes.

    `tick(running)`, if given, is called at least every TICK seconds with _Pool.running().
    """
    queue = list(queue)
    pool = _Pool(setup, min(jobs, len(queue)), timeout, log_dir, model, again)
    try:
        while queue or any(w.job for w in pool.workers):
            pool.assign(queue)
            active = [w for w in pool.workers if w.job or not w.ready]
            if not active:
                break
            wait = max(0.0, min(min(w.deadline for w in active) - time.monotonic(), TICK if tick else 1e9))
            readable, _, _ = select.select(active, [], [], wait)
            for w in readable:
                yield from pool.replies(w)
            yield from pool.overdue()
            if tick:
                tick(pool.running())
    except BaseException:  # Ctrl-C, or the run failed: no worker finishes its student first
        for w in pool.workers:
            w.kill()
        raise
    finally:
        for w in pool.workers:  # all told first: they end side by side
            w.ask_to_stop()
        for w in pool.workers:
            w.stop()
