"""Processes started warm: forked from a process that imported their modules once, then moved into a fresh sandbox.

A graded kernel spends a third of a second of CPU importing ipykernel, numpy and the course's helpers before
its first cell, and the clean re-run's interpreter a tenth importing numpy and its own code. Here bubblewrap
still builds each student's sandbox, holding it open with `sleep infinity`, and the process comes from a
zygote (zygote_main.py): forked, it joins that sandbox's namespaces and root, drops every capability, takes
the sandbox's limits, environment and working folder, and closes every other file descriptor, so it is what
bubblewrap would have started, less the imports (tests/test_zygote.py compares the two, and attacks it). A
zygote never reads a student's data, and each process it starts is a new fork into a new sandbox, so no
process holds another student's.

Used where a worker grades unprivileged in bubblewrap's user namespace (every `grade`: grade.py drops a worker
to a uid of its own); anywhere else, or once a zygote has failed to start a process, processes start the plain
way.

    worker ── b"F" ──> zygote ── fork ──> keeper ── setns, chroot, fork ──> kernel or runner (in the sandbox)
           <── socket to the keeper ──       <── namespaces, root, request ── worker
           <────────────── the process's pidfd ──────────────
"""

import contextlib
import json
import os
import platform
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from ...limits import MAX_MESSAGE_CHARS
from . import confine, syscalls

_HERE = Path(__file__).resolve().parent
_NS_GET_PARENT = 0xB702  # ioctl: the user namespace that owns this one
# Joined in this order: the outer user namespace (bwrap's, which owns the others), the others, then the inner one
# (bwrap's --disable-userns makes it: no namespace can be made inside).
_NAMESPACES = ("mnt", "net", "ipc", "uts", "cgroup", "pid")
_HOLDER = ["sleep", "infinity"]


class ZygoteError(RuntimeError):
    """A zygote could not start this process (the caller starts it the plain way)."""


def usable(sandbox, mode):
    """True when a process of `sandbox` can be started warm by a zygote of `mode`: bubblewrap's user namespace,
    and for a kernel, which has imported ffn_helpers already, nothing shown in another's place."""
    return (sys.platform.startswith("linux") and sandbox.isolate and sandbox.uid is None and os.geteuid() != 0
            and hasattr(os, "pidfd_open") and platform.machine() in confine.SYS_KEYCTL
            and (mode == "runner" or not sandbox.replaced))


class JoinedProcess:
    """A process a zygote started in a sandbox, as a Popen would show it: `pid` is its own (it leads its
    process group), kill() ends the sandbox (bwrap), and its keeper holds the pid until close()."""

    stdin = stdout = stderr = None

    def __init__(self, holder, pid, pidfd, keeper):
        self.holder, self.pid, self.pidfd, self.keeper = holder, pid, pidfd, keeper
        self.returncode = None

    def _exited(self):
        poller = select.poll()
        poller.register(self.pidfd, select.POLLIN)
        return bool(poller.poll(0))

    def poll(self):
        """None while the process runs; once it has ended, the sandbox ends too and this is bwrap's status."""
        if self.returncode is None and self._exited():
            self._end()
        return self.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("the sandboxed process", timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum):
        if self.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.pidfd, signum)
        if signum == signal.SIGKILL:
            self._end()

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def _end(self):
        """The sandbox goes: bwrap's init dies, and with it every process in the sandbox's process tree."""
        if self.holder.poll() is None:
            self.holder.kill()
        self.holder.wait()
        self.returncode = self.holder.returncode
        os.close(self.pidfd)
        self.keeper.close()  # the keeper reaps its child and ends


class Zygote:
    """A worker's zygote process: started once, asked for one process per sandbox.

    `mode` "kernel": ipykernel kernels (kernel.py's provisioner); "runner": the clean runner (rerun.py),
    whose `source` is rerun.runner_source()."""

    def __init__(self, env, mode="kernel", source=None, timeout=60.0):
        self.mode, self.timeout = mode, timeout
        self.control, theirs = socket.socketpair()
        # zygote_main imports nothing of the grader: the seccomp filter (syscalls.refuse, and the filter compiled)
        # and the cgroup's join (cgjoin.join_cgroup) come with it
        program = "\n\n".join((syscalls.source(), *((_HERE / name).read_text(encoding="utf-8")
                                                      for name in ("cgjoin.py", "zygote_main.py"))))
        self.process = subprocess.Popen(
            [sys.executable, "-c", program, str(theirs.fileno()), mode, *([source] if source else [])],
            env=dict(env), pass_fds=(theirs.fileno(),), cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        theirs.close()
        self.control.settimeout(timeout)
        self.ready = False  # its imports go on while the worker sets up: the first request waits for them

    def _wait_until_ready(self):
        try:
            reply = self.control.recv(4096)
        except OSError as exc:
            reply = f"error: no reply in {self.timeout:.0f} s ({exc})".encode()
        if reply != b"ready":
            detail = reply.decode(errors="replace") or self._stderr()
            raise ZygoteError(f"the {self.mode} zygote did not start: {detail}")
        self.ready = True

    def _stderr(self):
        try:
            _, err = self.process.communicate(timeout=5)
            said = (err or b"").decode(errors="replace").strip()[-MAX_MESSAGE_CHARS:]
            return said or f"exit status {self.process.returncode}"
        except (subprocess.TimeoutExpired, ValueError):
            return "no reason given"

    def close(self):
        self.control.close()  # the zygote ends when its control socket does
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()

    def start(self, sandbox, argv, channel=None):
        """Run what `python -c <this mode's program> *argv` would run, in a fresh `sandbox` (with `channel`, a
        socket, at descriptor 3: the runner's); return its JoinedProcess."""
        try:
            return self._start(sandbox, argv, channel)
        except (OSError, ZygoteError) as exc:  # a sandbox or keeper that ended midway, a keeper that does not answer
            # No student's code has run yet (the sandbox is new), so the fault is the machine's or the zygote's:
            # this worker's later processes start the plain way rather than meet it again.
            retire(self)
            if isinstance(exc, ZygoteError):
                raise
            raise ZygoteError(f"the {self.mode} zygote could not start a process: {exc}") from exc

    def _start(self, sandbox, argv, channel):
        holder, fds = _sandbox_held_open(sandbox, self.timeout)
        keeper = None
        try:
            keeper = self._keeper()
            request = {"namespaces": [kind for kind, _ in fds[:-1]], "argv": ["-c", *argv],
                       "env": {**sandbox.environment(), "PWD": sandbox.cwd},  # bwrap sets PWD
                       "cwd": sandbox.cwd, "limits": sandbox.rlimits(), "cgroup": list(sandbox.cgroup),
                       "keyctl": confine.SYS_KEYCTL[platform.machine()]}
            passed = [fd for _, fd in fds] + ([channel.fileno()] if channel is not None else [])
            socket.send_fds(keeper, [json.dumps(request).encode()], passed)
            message, pidfds, _, _ = socket.recv_fds(keeper, 4096, 1)
            words = message.split()
            if len(words) != 2 or words[0] != b"ok" or not words[1].isdigit() or len(pidfds) != 1:
                for fd in pidfds:
                    os.close(fd)
                said = message.decode(errors="replace")[:MAX_MESSAGE_CHARS]
                raise ZygoteError(said or "the keeper ended without a reply")
        except BaseException:
            holder.kill()
            holder.wait()
            if keeper is not None:
                keeper.close()
            raise
        finally:
            for _, fd in fds:
                os.close(fd)
        return JoinedProcess(holder, int(words[1]), pidfds[0], keeper)

    def _keeper(self):
        if not self.ready:
            self._wait_until_ready()
        try:
            self.control.sendall(b"F")
            message, fds, _, _ = socket.recv_fds(self.control, 4096, 1)
        except OSError as exc:
            raise ZygoteError(f"the {self.mode} zygote does not answer: {exc}") from exc
        if message != b"keeper" or len(fds) != 1:
            raise ZygoteError(f"the {self.mode} zygote said {message[:200]!r}")
        keeper = socket.socket(fileno=fds[0])
        keeper.settimeout(self.timeout)
        return keeper


def _sandbox_held_open(sandbox, timeout):
    """Start `sleep infinity` in `sandbox`; return its bwrap process and [(kind, fd)] of the namespaces to join,
    ending with ("root", fd): opened before anything else runs in the sandbox."""
    import fcntl  # here: rerun.py and kernel.py import this module on Windows too (a learner's `check`)

    read_end, write_end = os.pipe()
    try:
        holder = subprocess.Popen(sandbox.command(_HOLDER, info_fd=write_end), pass_fds=(write_end,),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
    finally:
        os.close(write_end)
    fds = []
    try:
        with os.fdopen(read_end, "rb") as info:
            init = json.loads(_read_all(info, timeout, holder))["child-pid"]
        pid = _holder_pid(init, timeout, holder)
        pidfd = os.pidfd_open(pid)
        try:
            user = os.open(f"/proc/{pid}/ns/user", os.O_RDONLY)
            fds.append(("outer_user", fcntl.ioctl(user, _NS_GET_PARENT)))
            for kind in _NAMESPACES:
                fd = os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY)
                if os.fstat(fd).st_ino == os.stat(f"/proc/self/ns/{kind}").st_ino:
                    os.close(fd)  # not unshared here (a kernel without cgroup namespaces): nothing to join
                else:
                    fds.append((kind, fd))
            fds.append(("user", user))
            fds.append(("root", os.open(f"/proc/{pid}/root", os.O_RDONLY | os.O_DIRECTORY)))
            if select.select([pidfd], [], [], 0)[0]:  # it ended while being opened: its number may be another's
                raise ZygoteError("the sandbox ended while it was being joined")
        finally:
            os.close(pidfd)
    except BaseException:
        for _, fd in fds:
            os.close(fd)
        holder.kill()
        holder.wait()
        raise
    return holder, fds


def _read_all(stream, timeout, holder):
    deadline, data = time.monotonic() + timeout, b""
    while True:
        ready, _, _ = select.select([stream], [], [], 0.1)
        if ready:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                return data
            data += chunk
        elif holder.poll() is not None:
            raise ZygoteError(f"bubblewrap ended (status {holder.returncode}) before starting the sandbox")
        elif time.monotonic() > deadline:
            raise ZygoteError(f"bubblewrap did not start the sandbox in {timeout:.0f} s")


def _holder_pid(init, timeout, holder):
    """The pid of `sleep infinity`, the one child of bwrap's init in the sandbox, once it runs."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
            if len(children) == 1 and Path(f"/proc/{children[0]}/cmdline").read_bytes().split(b"\0")[:2] == [
                    b"sleep", b"infinity"]:
                return int(children[0])
        except OSError:
            pass
        if holder.poll() is not None:
            raise ZygoteError(f"the sandbox ended (status {holder.returncode}) before it could be joined")
        if time.monotonic() > deadline:
            raise ZygoteError(f"the sandbox's process did not start in {timeout:.0f} s")
        time.sleep(0.002)


_RUNNING = {}  # mode -> this process's Zygote


def start(env, mode="kernel", source=None):
    """Start this process's zygote of `mode` (a worker has one of each); return it, or None, with the reason
    printed, when it cannot start (processes of that mode then start the plain way). One that starts but fails
    its imports says so at its first request, and is retired then."""
    try:
        _RUNNING[mode] = Zygote(env, mode, source)
    except (ZygoteError, OSError) as exc:
        print(f"{mode}s start the plain way: {exc}", file=sys.stderr, flush=True)
        _RUNNING.pop(mode, None)
    return _RUNNING.get(mode)


def current(mode="kernel"):
    """This process's zygote of `mode`, or None."""
    return _RUNNING.get(mode)


def retire(zygote):
    """Stop `zygote`; processes of its mode start the plain way from now on."""
    if _RUNNING.get(zygote.mode) is zygote:
        del _RUNNING[zygote.mode]
    zygote.close()
