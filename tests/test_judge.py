"""The clean re-run's tests run in a confined child of the worker (gate_beside/judge.py): what it can and cannot do.

Each test forks a real child with `judge.run`, lets it look around, and reads what it saw
from its verdict (the only thing that comes back). No learner's process is started.
"""

import json
import os
import resource
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from autograder.grading.gate_beside import judge, rerun
from autograder.grading.gate_in import sandbox

TESTS = {"test_look": ("look", 1.0)}
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the judge drops to a user of its own only when grading as root")


class NoLearner:
    """judge.run's launcher, for children that never ask for the learner's process."""

    def stop(self):
        pass


def _judged(look, tmp_path, hidden=(), memory=256 * 1024**2, isolate=True):
    def work(_student):
        result = rerun.CleanRunResult()
        result.tests["test_look"] = rerun.TestResult("test_look", "look", 1.0, 1.0, json.dumps(look()))
        return result

    uid = sandbox.slot_uid(100, sandbox.uid_base())
    data = judge.run(work, NoLearner(), uid=uid, memory=memory, timeout=60, hidden=hidden, isolate=isolate)
    return json.loads(judge.verdict(data, TESTS, {"look"}).tests["test_look"].message)


@pytest.fixture
def open_folder():
    """A folder anyone may enter (pytest's own temporary folders are root's only)."""
    folder = Path(tempfile.mkdtemp(prefix="ffn-judge-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@as_root
def test_the_judge_has_no_privileges_no_network_and_sees_no_course(open_folder):
    tmp_path = open_folder
    course = tmp_path / "course"
    course.mkdir(mode=0o755)
    (course / "gradebook.db").write_text("secret")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    (closed / "root-only.txt").write_text("secret")
    os.chmod(closed / "root-only.txt", 0o600)

    def look():
        try:
            socket.create_connection(("127.0.0.1", 22), timeout=1).close()
            network = "connected"
        except OSError as exc:
            network = type(exc).__name__
        try:
            (closed / "root-only.txt").read_text()
            private = "read"
        except OSError:
            private = "refused"
        import scipy.special  # noqa: F401 (a package imported only now: the interpreter is reachable)

        return {"uid": os.getuid(), "euid": os.geteuid(), "groups": os.getgroups(), "network": network,
                "course": sorted(os.listdir(course)), "private": private}

    seen = _judged(look, tmp_path, hidden=(str(course),))
    assert seen["uid"] == seen["euid"] != 0 and seen["groups"] == []
    assert seen["network"] != "connected"  # no loopback of the machine's: its own empty network
    assert seen["course"] == [] and seen["private"] == "refused"
    assert (course / "gradebook.db").read_text() == "secret"  # hidden in the child only


def test_the_judge_memory_is_bounded(tmp_path):
    """The judge may add 256 MiB here to what it maps already. A hoard of a fixed size would not show it: a free
    chunk of the heap it inherits can hold one without mapping anything new, so a 1 GiB hoard passed or failed with
    what the tests run before it in this process had freed (it failed once, after passing in every earlier run). So: the
    headroom the limit leaves, and a hoard larger than all the judge maps, which no inherited chunk can hold."""
    def look():
        mapped = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status", encoding="ascii")
                      if line.startswith("VmSize:"))
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        try:
            hoard = bytearray(mapped + 1024**3)
            return {"allocated": len(hoard)}
        except MemoryError:
            return {"allocated": 0, "limit": limit, "mapped": mapped}

    seen = _judged(look, tmp_path)
    assert seen["allocated"] == 0
    assert 0 < seen["limit"] - seen["mapped"] <= 256 * 1024**2, seen


def test_without_isolation_the_judge_keeps_its_user_and_its_limits(tmp_path):
    """`--unsafe` (no namespaces to be had): no namespaces, no new user, the memory limit all the same."""
    seen = _judged(lambda: {"uid": os.getuid(), "netns": os.readlink("/proc/self/ns/net"),
                            "limit": resource.getrlimit(resource.RLIMIT_AS)[0]}, tmp_path, isolate=False)
    assert seen["uid"] == os.getuid() and seen["netns"] == os.readlink("/proc/self/ns/net")
    assert seen["limit"] != resource.RLIM_INFINITY


def test_a_child_that_dies_gives_no_verdict(tmp_path):
    def work(_student):
        os._exit(3)

    with pytest.raises(judge.JudgeFailed, match="without a verdict"):
        judge.run(work, NoLearner(), uid=None, memory=256 * 1024**2, timeout=30)


@pytest.mark.parametrize("data, why", [
    ({"tests": {"test_other": {"points": 1.0, "message": "", "timed_out": False}}}, "no test of this notebook"),
    ({"tests": {"test_look": {"points": 5.0, "message": "", "timed_out": False}}}, "outside"),
    ({"tests": {"test_look": {"points": float("nan"), "message": "", "timed_out": False}}}, "outside"),
    ({"tests": {"test_look": {"points": "1", "message": "", "timed_out": False}}}, "outside"),
    ({"notes": [{"exercise": "look", "kind": "run-this", "detail": ""}]}, "malformed note"),
    ({"notes": [{"exercise": "someone-else", "kind": "lying", "detail": ""}]}, "malformed note"),
])
def test_a_verdict_is_checked_field_by_field(data, why):
    with pytest.raises(ValueError, match=why):
        judge.verdict(data, TESTS, {"look"})


def test_the_judge_holds_only_its_control_socket_and_the_log(tmp_path):
    """The worker's stdin (the parent's next requests) and its result channel must not reach the judge.

    An attack: a judge subverted by the data it compares writes a forged result line into every
    descriptor it inherited. Here a pipe stands for the worker's channel; the child finds it closed.
    """
    channel_read, channel_write = os.pipe()

    def look():
        held = [fd for fd in range(1024) if _is_open(fd)]
        return {"held": held, "stdin": os.read(0, 100).decode(), "channel_open": _is_open(channel_write)}

    try:
        seen = _judged(look, tmp_path, isolate=os.geteuid() == 0)
    finally:
        os.close(channel_write)
        assert os.read(channel_read, 100) == b""  # nothing was written into the channel
        os.close(channel_read)
    assert seen["channel_open"] is False
    assert seen["stdin"] == ""  # /dev/null, not the parent's requests
    assert len(seen["held"]) == 4 and seen["held"][:3] == [0, 1, 2]  # stdin, the log twice, the control socket


def _is_open(fd):
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
