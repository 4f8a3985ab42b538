"""`grade --cluster ADDRESS | local:N`: the class graded on a Dask cluster, one writer in the instructor's process.

This process reads the submissions and sends each, as bytes, with the assignment (cluster_task's
bundle: no shared file system); each task runs the grading worker on a Dask worker's machine
(sandbox and all) and returns plain data, laid out here as a pool worker's reply (cluster_reply)
for driver.py, which checks and publishes it as one machine's (`Cluster` is a backend of the
driver, as pool.LocalPool is). Nothing from the cluster is unpickled here
(dask_guard), so the scheduler never runs in this process: `local:N` starts a scheduler and N
workers as processes of their own, listening on 127.0.0.1 only.

Faults: a worker that dies mid-task has its task run again elsewhere, once (the scheduler's
allowed-failures); a result is recorded once, and the ledger is saved after each, so a run
started again skips what is done. A task past its time limit is a `timeout` for its student.
"""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import distributed  # noqa: F401
except ImportError:
    raise RuntimeError("grading on a cluster needs Dask's distributed: pip install -e '.[cluster]' in the course's "
                       "environment") from None

from ...limits import MAX_FOLDER_BYTES
from .. import walk
from ..gate_in.sandbox import MAX_SLOTS
from . import cluster_reply, cluster_task, dask_guard

TICK = 1.0  # seconds between two looks at what is running
CONNECT_TIMEOUT = 120  # seconds for the scheduler and the first worker to come up
_LOCAL = re.compile(r"local:(\d+)")


def parse(spec):
    """('local', N) for `local:N`, else ('address', ADDRESS) for a scheduler's address such as tcp://host:8786."""
    match = _LOCAL.fullmatch(spec.strip())
    if match:
        n = int(match.group(1))
        if not 1 <= n <= MAX_SLOTS:
            raise ValueError(f"--cluster local:N expects N from 1 to {MAX_SLOTS}, got {n}")
        return "local", n
    if re.fullmatch(r"(tcp|tls)://[A-Za-z0-9.\-\[\]:]+:\d+", spec.strip()):
        return "address", spec.strip()
    raise ValueError(f"--cluster expects local:N or a scheduler's address (tcp://host:8786, tls://host:8786), "
                     f"got {spec!r}")


class LocalProcesses:
    """A Dask scheduler and `n` workers (one grading at a time each), processes of their own on 127.0.0.1.

    `wrap`: a command each worker is started through (the tests give each its own mount namespace); `host`: the
    address the scheduler listens on (the tests' network namespaces reach it on a bridge of their own); `within`:
    the folder to make this one's folder in (grade's run folder), else the temporary folder."""

    def __init__(self, n, wrap=(), env=None, host="127.0.0.1", within=None):
        self.folder = Path(tempfile.mkdtemp(prefix="ffn-dask-", dir=within))
        self.file = self.folder / "scheduler.json"
        # Dask's own scratch (`dask-scratch-space`: the scheduler's, which has no --local-directory) in here too
        self.env = dict(env or os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="1",
                        DASK_DISTRIBUTED__WORKER__DAEMON="False",  # a worker starts processes (the grading worker)
                        DASK_TEMPORARY_DIRECTORY=str(self.folder))
        self.log = open(self.folder / "dask.log", "ab")  # noqa: SIM115 (closed in close())
        self.scheduler = self._start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host,
                                      "--port", "0", "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
                                      "--scheduler-file", str(self.file)])
        self.workers = []
        self.address = self._address()
        self.workers = [self._start([*wrap, *self.worker_command(f"local-{k}")]) for k in range(n)]

    def worker_command(self, name, host="127.0.0.1"):
        """`dask worker` for this scheduler, given its address (no file shared with it): one thread (one student
        at a time), listening on `host`."""
        return [sys.executable, "-m", "distributed.cli.dask_worker", self.address, "--host", host, "--nthreads",
                "1", "--nworkers", "1", "--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--memory-limit",
                "0", "--name", name, "--local-directory", str(self.folder / name)]

    def _start(self, command):
        return subprocess.Popen(command, cwd=self.folder, env=self.env, stdout=self.log, stderr=self.log,
                                start_new_session=True)

    def _address(self):
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while time.monotonic() < deadline:
            if self.scheduler.poll() is not None:
                break
            try:
                return json.loads(self.file.read_text(encoding="utf-8"))["address"]
            except (OSError, ValueError, KeyError):
                time.sleep(0.2)
        self.close()
        raise RuntimeError("the local Dask scheduler did not start")

    def close(self):
        """The workers end together (each runs its plugins' teardown), then the scheduler."""
        _end(self.workers)
        _end([self.scheduler])
        self.log.close()
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


def _end(procs):
    """SIGTERM to each process (a worker closes, its plugins' teardown runs), then SIGKILL to what is left of them."""
    for proc in procs:
        with contextlib.suppress(OSError):
            proc.terminate()
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def connect(spec, workers=1, within=None):
    """(client, the LocalProcesses to close or None): the guard in place first, then a msgpack-only client.
    `within`: the folder a local cluster's files go in."""
    from distributed import Client

    dask_guard.install()
    kind, value = parse(spec)
    local = LocalProcesses(value, within=within) if kind == "local" else None
    try:
        client = Client(local.address if local else value, serializers=["msgpack"], deserializers=["msgpack"],
                        timeout=CONNECT_TIMEOUT)
        client.wait_for_workers(value if local else workers, timeout=CONNECT_TIMEOUT)
    except Exception:
        if local:
            local.close()
        raise
    return client, local


# --- the run ----------------------------------------------------------------------------------------------------
def bundle(setup, timeout, version):
    """What every task needs of the assignment, as plain data: sent to the workers once (scatter)."""
    root = Path(setup.course_root)
    release = Path(setup.release_dir)
    return {"model": setup.model, "course_notebooks": setup.course_notebooks, "limits": setup.limits,
            "isolate": setup.isolate, "cell_timeout": setup.cell_timeout, "timeout": float(timeout),
            "draw_figures": setup.draw_figures, "offering_seed": setup.offering_seed, "version": version,
            "template_db": Path(setup.template_db).read_bytes(),
            "nbgrader_config": (root / "nbgrader_config.py").read_bytes() if (root / "nbgrader_config.py").is_file()
            else b"",
            "release": {str(p.relative_to(release)): p.read_bytes() for p in sorted(release.rglob("*"))
                        if p.is_file() and not p.is_symlink()}}


def submission_files(folder, max_bytes=MAX_FOLDER_BYTES):
    """{relative path: bytes} of the files under a submission's folder that count: walk.py's walk, as
    course.copy_tree copies them and the ledger's digest reads them (never through a link, regular files only),
    read straight into memory, with no copy on disk. The paths are relative, with '/' between their parts."""
    if folder is None:
        return None
    return {Path(found.rel).as_posix(): b"".join(found.chunks()) for found in walk.walk(folder, max_bytes)
            if not found.why and not found.folder}


class _Run:
    """The tasks of one run: submitted, watched, resubmitted when a worker refuses, each answer taken once."""

    def __init__(self, client, data, timeout):
        self.client, self.data, self.timeout = client, data, timeout
        self.tasks, self.started, self.refusing = {}, {}, {}  # key -> (future, submission, again); key -> start
        self.running_since = {}  # key -> when a worker was first seen running it (not only holding it)

    def submit(self, submission, again=False):
        from .cluster_task import grade_one

        allowed = None
        if self.refusing:
            allowed = sorted(self._workers() - set(self.refusing))
            if not allowed:
                raise RuntimeError("no worker of the cluster can grade: " + "; ".join(sorted(set(
                    self.refusing.values()))))
        future = self.client.submit(grade_one, self.data, submission.student, submission_files(submission.folder),
                                    again, pure=False, workers=allowed, allow_other_workers=False,
                                    key=f"grade-{submission.student}-{os.urandom(4).hex()}")
        self.tasks[future.key] = (future, submission, again)

    def _workers(self):
        return set(self.client.scheduler_info(n_workers=-1)["workers"])

    def top_up(self, queue, again=False):
        """Submit from `queue` until each worker has two tasks: a submission's bytes leave this process only
        shortly before a worker takes them (a class of thousands is never held by the scheduler at once)."""
        window = 2 * max(1, len(self._workers() - set(self.refusing))) + 2
        while queue and len(self.tasks) < window:
            self.submit(queue.pop(0), again)

    def running(self):
        """(student, seconds, '') of the tasks a worker is running now, timed from the first tick that saw each run
        (plain data; where in the grading each is, which one machine's pool shows, does not cross the cluster).

        The scheduler's `processing` also holds the tasks a worker keeps queued behind the one it runs (`top_up`
        gives each two): which of them runs is the workers' own word, `call_stack`, asked of those keys only."""
        now = time.monotonic()
        busy = [key for keys in self.client.processing().values() for key in keys if key in self.tasks]
        for key in busy:
            self.started.setdefault(key, now)
        try:
            stacks = self.client.call_stack(keys=busy) if busy else {}
        except (OSError, TimeoutError):  # a worker that does not answer now: nobody is shown running this tick
            stacks = {}
        for key in {key for keys in stacks.values() for key in keys if key in self.tasks}:
            self.running_since.setdefault(key, now)
        return [(self.tasks[k][1].student, now - self.running_since[k], "") for k in self.running_since
                if k in self.tasks]

    def next_done(self):
        """(submission, again, what the task returned or a failure in its place) of each task done within a TICK."""
        from distributed import wait

        from .pool import STARTUP_TIMEOUT

        try:
            done = wait([t[0] for t in self.tasks.values()], timeout=TICK, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            done = set()
        for future in done:
            _, submission, again = self.tasks.pop(future.key)
            answer = {"student": submission.student, "error": f"the task ended in `{future.status}` on the cluster "
                      "(its worker died twice, or the cluster cancelled it)"}
            if future.status == "finished":
                try:
                    answer = future.result()
                except Exception as exc:  # noqa: BLE001 (what the guard refused, raised by Dask)
                    answer = {"student": submission.student, "error": f"the cluster's answer was refused: {exc}"}
            future.release()
            yield submission, again, answer
        now, limit = time.monotonic(), self.timeout + STARTUP_TIMEOUT + 60  # a worker that hangs
        since = {**self.started, **self.running_since}  # a task queued behind a long one is timed from its run
        for key in [k for k, t in since.items() if k in self.tasks and now - t > limit]:
            future, submission, again = self.tasks.pop(key)
            future.cancel()
            yield submission, again, {"student": submission.student, "status": "timeout",
                                      "error": f"the cluster's worker gave no answer within {limit:g} s"}

    def roll_call(self):
        """Ask each worker in the cluster now whether it can grade, before any submission is sent: one that cannot
        (no sandbox, another grader version) is named at once and given none. A worker that joins later is asked by
        its first task (`refused`)."""
        from distributed import wait

        from .cluster_task import ready

        asked = {w: self.client.submit(ready, self.data, pure=False, workers=[w], allow_other_workers=False,
                                       key=f"ready-{os.urandom(4).hex()}") for w in sorted(self._workers())}
        with contextlib.suppress(TimeoutError):  # a worker still busy: its first task asks it
            wait(list(asked.values()), timeout=CONNECT_TIMEOUT)
        for worker, future in asked.items():
            try:
                answer = future.result() if future.status == "finished" else {}
            except Exception as exc:  # noqa: BLE001 (what the guard refused, raised by Dask)
                answer = {"refused": f"its answer was refused: {exc}"}
            future.release()
            if isinstance(answer, dict) and answer.get("refused"):
                self._refuse(worker, answer["refused"])

    def refused(self, answer, submission, again):
        """A worker refused (no sandbox, another grader version): say so once, send the task elsewhere."""
        worker = answer.get("worker") if answer.get("worker") in self._workers() else "(unknown)"
        self._refuse(worker, answer.get("refused"))
        self.submit(submission, again)

    def _refuse(self, worker, why):
        why = " ".join(str(why)[:500].split())
        if worker not in self.refusing:
            print(f"worker {worker} refuses to grade: {why}", file=sys.stderr, flush=True)
        self.refusing[worker] = why


class Cluster:
    """The Dask backend of driver.grade_class: a context manager (connect, send the assignment, roll call; then
    close), whose `run` yields (submission, reply) as each task's answer comes, laid out as a pool worker's."""

    def __init__(self, model, setup, spec, timeout, version):
        self.model, self.setup, self.spec, self.timeout, self.version = model, setup, spec, timeout, version
        self.scratch = Path(setup.scratch) / "cluster"  # where each answer's files are rebuilt (cluster_reply)
        self.client = self.local = self.tasks = None

    def __enter__(self):
        import nbformat

        from ..gate_out import feedback

        self.scratch.mkdir(mode=0o700, exist_ok=True)
        self.markdown = {name: feedback.course_markdown(nbformat.reads(text, as_version=4))
                         for name, text in self.setup.course_notebooks.items()}
        self.client, self.local = connect(self.spec, within=self.setup.scratch)
        try:
            workers = len(self.client.scheduler_info(n_workers=-1)["workers"])
            print(f"grading on the cluster {self.spec} ({workers} worker(s) now)"
                  + (" in the bubblewrap sandbox" if self.setup.isolate else " WITHOUT the sandbox"),
                  file=sys.stderr)
            self.client.register_plugin(cluster_task.Cleanup())
            data = self.client.scatter(bundle(self.setup, self.timeout, self.version), broadcast=True, hash=False)
            self.tasks = _Run(self.client, data, self.timeout)
            self.tasks.roll_call()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        self.client.close()
        if self.local:
            self.local.close()

    def run(self, queue, again, tick):
        """(submission, reply) as each of `queue` is graded; a worker that refuses has its task sent elsewhere, and
        a task run twice (its worker died) counts once: its first answer stands."""
        queue, answered, run = list(queue), set(), self.tasks
        run.top_up(queue, again)
        while run.tasks:
            for submission, task_again, data in run.next_done():
                if isinstance(data, dict) and "refused" in data:
                    run.refused(data, submission, task_again)
                elif submission.student not in answered:
                    answered.add(submission.student)
                    yield submission, cluster_reply.reply(data, submission.student, self.model, self.markdown,
                                                          self.scratch)
            run.top_up(queue, again)
            if tick:
                tick(run.running())
