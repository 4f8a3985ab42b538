"""A zygote's program (zygote.py starts it as `python -c <this file> FD MODE [SOURCE]`; it imports nothing of
the grader).

MODE `kernel`: it imports what every graded kernel imports (ipykernel, numpy, the course's ffn_helpers);
MODE `runner`: numpy and the clean runner's definitions (SOURCE, rerun.runner_source()), never ffn_helpers,
which the clean re-run's sandbox replaces with its public build. Then it only forks. It never reads anything
of a student: on each request byte from the worker it forks a *keeper* and hands the worker a socket to it.
The keeper reads the one request it is for (the sandbox's namespaces and root, argv, environment, limits, and
for the runner its channel), joins the sandbox bubblewrap made for it, and forks the process there, which
drops every capability, takes the sandbox's limits, closes every other file descriptor and starts as
`python -c` would have. The keeper stays outside the sandbox's process tree (no process in it can name it)
and keeps its child unreaped until the worker closes the socket: its pid, and its process group, stay its.
A keeper is reaped the moment it ends (the zygote ignores SIGCHLD, so the kernel reaps its children): no keeper
waits as a zombie, holding a pid, for the zygote's next request or its end.
"""

import ctypes
import errno
import importlib
import json
import os
import resource
import signal
import socket
import sys
import types

MODE = sys.argv[2]
if MODE == "kernel":
    if sys.path and sys.path[0] == "":  # as ipykernel's launcher: nothing is looked for in the working folder
        del sys.path[0]
    sys.modules["debugpy"] = None  # no debugger in a graded kernel: upstream.HIDE_DEBUGPY, checked by the grader
    # The kernel's application, and what its start imports besides (ipykernel.kernelapp.IPKernelApp.initialize)
    import sqlite3  # noqa: F401

    import ipykernel.debugger  # noqa: F401
    import IPython.core.completerlib  # noqa: F401
    import IPython.core.debugger  # noqa: F401
    import IPython.core.oinspect  # noqa: F401
    import IPython.extensions.storemagic  # noqa: F401
    import IPython.utils.wildcard  # noqa: F401
    import tornado.gen  # noqa: F401
    import tornado.platform.asyncio  # noqa: F401
    import tornado.queues  # noqa: F401
    from ipykernel import kernelapp

    import ffn_helpers  # noqa: F401
    import ffn_helpers.checks  # noqa: F401
    import ffn_helpers.examples  # noqa: F401
    import ffn_helpers.mistakes  # noqa: F401
    import ffn_helpers.plots  # noqa: F401
elif MODE == "runner":
    RUNNER = types.ModuleType("__zygote__")  # not "__main__" yet: the source would start its main
    exec(compile(sys.argv[3], "<string>", "exec"), RUNNER.__dict__)
    RUNNER.__name__ = "__main__"  # what `python -c <runner>` has as __main__
else:
    raise SystemExit(f"unknown zygote mode {MODE!r}")
import numpy  # noqa: E402

_NS = {"user": 0x10000000, "mnt": 0x00020000, "net": 0x40000000, "ipc": 0x08000000, "uts": 0x04000000,
       "pid": 0x20000000, "cgroup": 0x02000000}
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIMITS = {"memory": resource.RLIMIT_AS, "cpu": resource.RLIMIT_CPU, "nproc": resource.RLIMIT_NPROC,
           "fsize": resource.RLIMIT_FSIZE, "nofile": resource.RLIMIT_NOFILE}
_CHANNEL = 3  # the runner's channel, at the number a `python -c` runner would find it


def _check(result, what):
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _join(kinds, fds, root):
    """Enter the sandbox: its outer user namespace, its other namespaces, its inner user namespace, its root."""
    for kind, fd in zip(kinds, fds, strict=True):
        _check(_LIBC.setns(fd, _NS[kind.removeprefix("outer_")]), f"setns({kind})")
    os.fchdir(root)
    os.chroot(".")
    os.chdir("/")


def _drop_capabilities(last_cap):
    """No capability left, none to gain back (bubblewrap's own child has none either)."""
    for cap in range(last_cap + 1):
        _check(_LIBC.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), f"drop capability {cap} from the bounding set")
    _check(_LIBC.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear the ambient capabilities")
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: both 32-bit halves zero
    _check(_LIBC.capset(header, data), "capset")
    _check(_LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _fresh_keyring(keyctl):
    """A new, empty session keyring, as confine.fresh_keyring joins one: not the worker's, not the last student's
    (`keyctl`: the system call's number, confine.SYS_KEYCTL's, sent with the request; 1: JOIN_SESSION_KEYRING)."""
    if _LIBC.syscall(keyctl, 1, None) < 0 and ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM):
        raise OSError(ctypes.get_errno(), "keyctl: cannot join a new session keyring")


def _start(request, last_cap, channel):
    """The process's own start, in the sandbox: never returns."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # until its program sets its own, as rerun.py starts one
        os.setsid()  # a process group of its own, as bwrap's child leads (rerun.py interrupts the group)
        _fresh_keyring(request["keyctl"])
        _drop_capabilities(last_cap)
        # syscalls.py's seccomp filter (zygote.py runs its source before this file's), as a plain start installs it
        refuse()  # noqa: F821
        for name, value in request["limits"].items():
            resource.setrlimit(_LIMITS[name], (value, value))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if channel is not None:
            os.dup2(channel, _CHANNEL)
        os.closerange(3 if channel is None else _CHANNEL + 1, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(0o022)
        sys.path_importer_cache.clear()  # what the zygote saw of the folders on the path, outside the sandbox
        importlib.invalidate_caches()
        sys.argv = list(request["argv"])
        if "numpy.random" in sys.modules:  # its own draws, not the zygote's (`random` reseeds itself at fork)
            numpy.random.seed()
        if MODE == "kernel":
            kernelapp.launch_new_instance()
        else:
            sys.modules["__main__"] = RUNNER
            RUNNER.main(str(_CHANNEL), *request["argv"][2:])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os._exit(code)


def _keep(sock):
    """One request: join the sandbox, fork the process, hand the worker its pid and pidfd. Never returns."""
    code = 1
    try:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 16)
        request = json.loads(message)
        kinds = request["namespaces"]
        # Into the sandbox's cgroup first, from outside its namespaces (cgjoin.py's source comes before this file's):
        # the process forked below, and all it starts, are counted there from their first instruction
        join_cgroup(request.get("cgroup", ()))  # noqa: F821
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as f:
            last_cap = int(f.read())
        _join(kinds, fds[:len(kinds)], fds[len(kinds)])
        channel = fds[len(kinds) + 1] if len(fds) > len(kinds) + 1 else None
        for fd in fds[:len(kinds) + 1]:
            os.close(fd)
        kid = os.fork()
        if kid == 0:
            sock.detach()  # its number is closed with every other in _start
            _start(request, last_cap, channel)
        if channel is not None:
            os.close(channel)
        pidfd = os.pidfd_open(kid)
        socket.send_fds(sock, [b"ok %d" % kid], [pidfd])
        os.close(pidfd)
        _drop_capabilities(last_cap)
        sock.recv(1)  # until the worker is done with it (or ends): then the pid may be another's
        os.waitpid(kid, 0)
        code = 0
    except BaseException as exc:  # the worker reads why, and starts the process the plain way
        try:
            sock.sendall(f"error: {type(exc).__name__}: {exc}".encode()[:4000])
        except OSError:
            pass
    finally:
        os._exit(code)


def _threads():
    return len(os.listdir("/proc/self/task"))


def main(fd):
    control = socket.socket(fileno=fd)
    os.setsid()
    numpy.ones((64, 64)) @ numpy.ones((64, 64))  # OpenBLAS's buffers, taken once (worker.py's _KERNEL_STARTUP)
    if MODE == "runner" and any(name.split(".")[0] == "ffn_helpers" for name in sys.modules):
        control.sendall(b"error: the runner's zygote imported ffn_helpers, which its sandbox replaces")
        return
    if _threads() != 1:  # a fork copies one thread: a lock another held would stay held forever
        control.sendall(f"error: the zygote has {_threads()} threads, not 1".encode())
        return
    control.sendall(b"ready")
    # From here on every failure goes back over a socket; the worker reads the stderr pipe only when the start
    # fails, so a warning written there later would fill it and stop the zygote.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # each keeper is reaped by the kernel as it ends
    while control.recv(1):
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            # The keeper waits for its own child, which starts with the disposition bubblewrap's would have
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            control.close()
            ours.close()
            _keep(theirs)
        theirs.close()
        socket.send_fds(control, [b"keeper"], [ours.fileno()])
        ours.close()


if __name__ == "__main__":
    main(int(sys.argv[1]))
