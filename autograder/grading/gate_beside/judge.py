"""Where the clean re-run's tests run: a child of the worker with no privileges, no network and bounded memory.

The tests compare what the learner's code returned, and that is hostile data. So the
worker forks, and the child, before it runs any test:

- leaves the network and hides the course, the submissions, the results and the
  worker's scratch folder under empty folders (namespaces of its own: confine.py);
- drops to a user id of its own that owns nothing, with no way back, when it was
  started as root (a worker started by `grade` already runs as such a user);
- caps its address space, CPU time and file size.

The learner's process is still started by the worker, which has the rights to build
the sandbox: the child asks for one over a control socket and receives its end of the
channel (SCM_RIGHTS); it can also ask for an interrupt or a stop. What comes back is
the verdict, as one JSON document that `verdict` checks field by field: a test the
course does not have, points out of range, an unknown kind of note are refused.
"""

import contextlib
import json
import math
import os
import signal
import socket
import time
import traceback

from ...limits import MAX_MESSAGE_CHARS, MAX_TEST_MESSAGE_CHARS, MiB
from ..gate_in import confine
from ..gate_in.sandbox import required_paths
from .rerun import CleanRunResult, Note, TestResult, connect

MEMORY = 512 * MiB  # address space the judge may add to what it inherits: the tests compare small arrays
_MAX_VERDICT = 8 * MiB  # bytes of the JSON verdict
_NOTE_KINDS = ("patched", "reference", "lying", "channel")
_MAX_FD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 4096


class JudgeFailed(RuntimeError):
    """The child ended, or overran, without a verdict."""


class Controlled:
    """The learner's process as the child sees it: started, interrupted and stopped by the worker."""

    def __init__(self, control):
        self.control, self.peer = control, None
        self.interrupts = 0  # sent to the process running now (rerun._stopped)

    def _ask(self, op):
        self.control.sendall((json.dumps({"op": op}) + "\n").encode())

    def start(self, on_reply, on_reference):
        from . import rpc

        self.stop()
        self.interrupts = 0
        self._ask("start")
        _, fds, _, _ = socket.recv_fds(self.control, 16, 1)
        if not fds:
            raise rpc.ChannelClosed("the worker could not start the learner's process")
        self.peer = connect(socket.socket(fileno=fds[0]), on_reply, on_reference)

    def interrupt(self):
        self.interrupts += 1
        self._ask("interrupt")

    def at(self, at):
        """Tell the worker which cell runs now (position.py's four integers), for the progress line."""
        self.control.sendall((json.dumps({"op": "at", "at": at}) + "\n").encode())

    def stop(self):
        if self.peer is not None:
            self._ask("stop")
            self.peer.sock.close()
            self.peer = None


def run(work, launcher, *, uid, memory, timeout, hidden=(), isolate=True, on_at=None):
    """`work(student)` -> CleanRunResult, in a confined child; return its result as checked JSON (a dict).

    `launcher`: the worker's rerun.StudentProcess, which spawns the learner's sandboxed process.
    `on_at(value)`: what the child said with Controlled.at (unchecked: position.Reporter checks it).
    """
    if not hasattr(os, "fork"):
        return _in_process(work, launcher, isolate, on_at)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # the child: confine, judge, report, and never return into the worker's code
        code = 1
        try:
            ours.close()
            _hold_only(theirs.fileno())
            _confine(uid, memory, timeout, hidden, isolate)
            result = work(Controlled(theirs))
            theirs.sendall((json.dumps({"op": "done", "result": _as_json(result)}) + "\n").encode())
            code = 0
        except BaseException:  # noqa: B036 (whatever happens, the child reports it and ends here)
            with contextlib.suppress(Exception):
                theirs.sendall((json.dumps({"op": "failed", "error": traceback.format_exc()[-4000:]}) + "\n").encode())
        finally:
            os._exit(code)
    theirs.close()
    try:
        return _serve(ours, launcher, pid, time.monotonic() + timeout, on_at)
    finally:
        launcher.stop()
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        ours.close()


def _in_process(work, launcher, isolate, on_at=None):
    """Where there is no fork (Windows), which only a learner's unsandboxed `check` reaches: the tests run in this
    process, under no limit of their own (unsandboxed.not_held says so); the learner's process is still stopped by
    the clean re-run's deadlines. The verdict goes through the same JSON as a child's."""
    if isolate:
        raise JudgeFailed("no fork on this system: the tests cannot run in a confined child")
    try:
        return json.loads(json.dumps(_as_json(work(_Here(launcher, on_at)))))
    except Exception as exc:
        raise JudgeFailed(f"the clean re-run failed: {traceback.format_exc()[-MAX_MESSAGE_CHARS:]}") from exc
    finally:
        launcher.stop()


class _Here:
    """The launcher as `work` sees it when the tests run in this process: Controlled's `at` goes straight to on_at."""

    def __init__(self, launcher, on_at):
        self._launcher, self._on_at = launcher, on_at

    def __getattr__(self, name):
        return getattr(self._launcher, name)

    def at(self, at):
        if self._on_at is not None:
            self._on_at(at)


def _serve(control, launcher, pid, deadline, on_at=None):
    """Answer the child's requests until its verdict comes (or it ends, or overruns)."""
    buffer = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise JudgeFailed("the clean re-run overran its time")
        control.settimeout(left)
        try:
            data = control.recv(1 << 20)
        except TimeoutError:
            continue
        if not data:
            raise JudgeFailed("the clean re-run's process ended without a verdict")
        buffer += data
        if len(buffer) > _MAX_VERDICT:
            raise JudgeFailed("the clean re-run's verdict is too large")
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            op = message.get("op")
            if op == "start":
                launcher.stop()
                channel = launcher.spawn()
                socket.send_fds(control, [b"ok"], [channel.fileno()])
                channel.close()
            elif op == "interrupt":
                launcher.interrupt()
            elif op == "stop":
                launcher.stop()
            elif op == "at":
                if on_at is not None:
                    on_at(message.get("at"))
            elif op == "done":
                return message.get("result")
            elif op == "failed":
                raise JudgeFailed(f"the clean re-run failed: {str(message.get('error'))[-MAX_MESSAGE_CHARS:]}")
            else:
                raise JudgeFailed(f"unknown request {str(op)[:40]!r} from the clean re-run")


def _hold_only(control):
    """Keep the control socket and the log (stdout, stderr); close every other descriptor the fork inherited.

    The worker's stdin carries the parent's next requests and its channel carries results the
    parent trusts: a judge subverted by the data it compares must reach neither.
    """
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.closerange(3, control)
    os.closerange(control + 1, _MAX_FD)


def _confine(uid, memory, timeout, hidden, isolate=True):
    """Out of the network, the course and results hidden, a user of its own (as root), limits: in that order.

    `isolate=False` is `--unsafe` (no namespaces to be had): the limits only."""
    if isolate:
        confine.own_mounts(network=True)
        confine.hide(hidden)
    if isolate and os.geteuid() == 0 and uid is not None:
        confine.reachable(required_paths())
        confine.become(uid)
    mapped = _address_space()
    if mapped is None and isolate:
        raise JudgeFailed("no /proc/self/status: the judge cannot cap its memory")
    # Without /proc (macOS, where only the unsandboxed check runs) the memory is left as it is: a cap that does not
    # count what the fork maps already would end the judge at once (unsandboxed.not_held says so in a line).
    confine.limit(memory=None if mapped is None else mapped + memory, cpu=int(timeout) + 60, fsize=16 * MiB,
                  strict=isolate)


def _address_space():
    """What this process maps already (the worker's libraries and heap, inherited by the fork), or None unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # no /proc (macOS)
        pass
    return None


def _as_json(result):
    return {
        "tests": {gid: {"points": t.points, "message": t.message, "timed_out": t.timed_out,
                        "incomplete": t.incomplete, "mistakes": list(t.mistakes), "public": t.public}
                  for gid, t in result.tests.items()},
        "cell_errors": [list(e) for e in result.cell_errors],
        "notes": [{"exercise": n.exercise, "kind": n.kind, "detail": n.detail} for n in result.notes],
        "course_errors": [list(e) for e in result.course_errors],
    }


def _text(value, limit):
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value[:limit]


def _mistakes(keys, exercise, gid):
    """The catalogue keys a test's check named: each must be one of its exercise's mistakes."""
    from ffn_helpers.mistakes import CATALOGUE

    known = {m.key for m in CATALOGUE.get(exercise, ())}
    if not isinstance(keys, list) or len(keys) > len(known) or not all(type(k) is str and k in known for k in keys):
        raise ValueError(f"{gid}: mistakes {str(keys)[:200]} are not keys of {exercise}'s catalogue")
    return tuple(dict.fromkeys(keys))


def verdict(data, tests, exercises):
    """A CleanRunResult from the child's JSON, or ValueError.

    `tests`: grade_id -> (exercise, max points) of the course's test cells; `exercises`: answer ids.
    """
    if not isinstance(data, dict):
        raise ValueError("the verdict is not an object")
    result = CleanRunResult()
    for gid, entry in dict(data.get("tests") or {}).items():
        if gid not in tests or not isinstance(entry, dict):
            raise ValueError(f"a verdict on {str(gid)[:80]!r}, which is no test of this notebook")
        exercise, top = tests[gid]
        points = entry.get("points")
        if type(points) not in (int, float) or not math.isfinite(points) or not 0 <= points <= top:
            raise ValueError(f"{gid}: points {points!r} outside [0, {top:g}]")
        public, message = entry.get("public"), _text(entry.get("message", ""), MAX_TEST_MESSAGE_CHARS)
        result.tests[gid] = TestResult(gid, exercise, top, float(points), message,
                                       entry.get("timed_out") is True, entry.get("incomplete") is True,
                                       _mistakes(entry.get("mistakes", []), exercise, gid),
                                       None if public is None else _text(public, MAX_TEST_MESSAGE_CHARS))
    for key in ("cell_errors", "course_errors"):
        for entry in list(data.get(key) or [])[:200]:
            if not isinstance(entry, list) or len(entry) != 2:
                raise ValueError(f"malformed {key}")
            getattr(result, key).append((_text(entry[0], 200), _text(entry[1], MAX_MESSAGE_CHARS)))
    for entry in list(data.get("notes") or [])[:200]:
        if not isinstance(entry, dict) or entry.get("kind") not in _NOTE_KINDS \
                or not (entry.get("exercise") is None or entry.get("exercise") in exercises):
            raise ValueError("malformed note")
        result.notes.append(Note(entry["exercise"], entry["kind"], _text(entry.get("detail", ""), 300)))
    return result
