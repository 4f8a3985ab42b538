"""Processes started warm (grading/gate_in/zygote.py): what bubblewrap would have started, and nothing more.

A warm process (the clean re-run's interpreter, a graded kernel) is forked from a zygote that imported its
modules once, then joins a sandbox that bubblewrap built for it. What is guaranteed:

- it equals, item by item, the process bubblewrap starts in the same kind of sandbox: its user, capabilities
  and privileges, signals, umask, limits, namespaces, mounts, hostname, network, environment, working folder,
  open files and the course package it holds; the few items that must differ are named, each with why;
- from inside it, it sees its own sandbox only: no pid but its sandbox's; no file descriptor, shared mapping
  or environment of the zygote's or the worker's; nothing another student's process wrote; killing what it can
  kill ends its own sandbox and nothing else, and leaves no keeper behind; its limits hold;
- a zygote that cannot start a process is retired, and processes start the plain way, and work.

A zygote runs only where a worker grades unprivileged (zygote.usable is False for root), so one driver process,
as a worker's user of its own when the tests run as root, makes every start and attack once, through the code
a worker uses (Sandboxes.start_zygote, rerun.StudentProcess, kernel.SandboxedKernelManager), and writes the
report that the tests read.
"""

import contextlib
import functools
import inspect
import json
import os
import re
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from dataclasses import replace
from pathlib import Path

import loops
import pytest

pytestmark = [pytest.mark.sandbox, pytest.mark.xdist_group("zygote")]

_SECRET = "FFN_TEST_WORKER_SECRET"  # in the driver's environment, as anything in a worker's might be
_MiB = 1024**2


def _probe(name):
    """What a process sees of itself and its sandbox (run inside it): JSON in its working folder, `name`."""
    import ctypes
    import errno
    import hashlib
    import importlib
    import json
    import marshal
    import os
    import resource
    import signal
    import socket
    import sys
    import tempfile

    def read(path):
        try:
            with open(path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError as exc:
            return type(exc).__name__

    def link(path):
        try:
            return os.readlink(path)
        except OSError as exc:
            return type(exc).__name__

    def session_of_a_child():
        """A forked child's setsid(): the kernel would make a scheduling group (autogroup) for its session."""
        r, w = os.pipe()
        child = os.fork()
        if child == 0:
            try:
                os.setsid()
                os.write(w, b"a session of its own")
            except OSError as exc:
                os.write(w, os.strerror(exc.errno).encode())
            os._exit(0)
        os.close(w)
        told = os.read(r, 200).decode()
        os.close(r)
        os.waitpid(child, 0)
        return told

    def off_the_allow_list():
        """Calls syscalls.py's allow-list leaves out, by number, with no arguments: what each is told."""
        numbers = {"x86_64": {"kexec_load": 246, "add_key": 248, "perf_event_open": 298, "userfaultfd": 323,
                              "bpf": 321},
                   "aarch64": {"kexec_load": 104, "add_key": 217, "perf_event_open": 241, "userfaultfd": 282,
                               "bpf": 280}}[os.uname().machine]
        told = {}
        for call, number in numbers.items():
            made = libc.syscall(number, 0, 0, 0, 0, 0, 0)
            told[call] = "made" if made >= 0 else errno.errorcode[ctypes.get_errno()]
        return told

    libc = ctypes.CDLL(None, use_errno=True)
    unshared = libc.unshare(0x10000000)  # CLONE_NEWUSER: bwrap's --disable-userns forbids it
    unshare_errno = ctypes.get_errno() if unshared else 0
    death = ctypes.c_int(0)
    libc.prctl(2, ctypes.byref(death), 0, 0, 0)  # PR_GET_PDEATHSIG
    status = dict(line.split(":", 1) for line in read("/proc/self/status").splitlines() if ":" in line)
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    course = [importlib.import_module(f"ffn_helpers{m}") for m in ("", ".checks", ".examples", ".mistakes", ".plots")]
    maps = [line.split(None, 5) for line in read("/proc/self/maps").splitlines()]
    report = {
        **{key: status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                                                "Seccomp", "SigBlk", "SigIgn", "Umask", "Uid", "Gid", "Groups")},
        "id maps": [read(f"/proc/self/{n}") for n in ("uid_map", "gid_map", "setgroups")],
        "limits": {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")},
        "root listing": sorted(os.listdir("/")), "/dev": sorted(os.listdir("/dev")),
        # a kernel's sockets by their port alone: their name is new each start
        "/tmp": sorted("k-…-" + n.rsplit("-", 1)[1] if n.startswith("k-") else n for n in os.listdir("/tmp")),
        "mounts": [(f[4], f[5], f[f.index("-") + 1], f[f.index("-") + 3])
                   for f in (line.split() for line in read("/proc/self/mountinfo").splitlines())],
        "hostname": socket.gethostname(), "interfaces": socket.if_nameindex(),
        "unshare(CLONE_NEWUSER)": [unshared, os.strerror(unshare_errno)],
        "setsid in a child": session_of_a_child(),
        "cgroup": read("/proc/self/cgroup"),
        "the driver's key": find_key("the driver's"),  # noqa: F821 (_KEYS, run before this function)
        "off the allow-list": off_the_allow_list(),
        # each namespace: the same as the sandbox's init's, and as its command's (pid 2: itself, or the holder)
        "namespaces": {k: [link(f"/proc/self/ns/{k}") == link(f"/proc/{p}/ns/{k}") for p in (1, 2)]
                       for k in sorted(os.listdir("/proc/self/ns"))},
        "os.environ": dict(os.environ), "cwd": os.getcwd(),
        "prctl": {n: libc.prctl(n, 0, 0, 0, 0) for n in (3, 7, 13, 21, 27, 37, 39, 42)},  # dumpable ... THP
        "personality": libc.personality(0xFFFFFFFF),
        "proc files": {n: read(f"/proc/self/{n}") for n in ("coredump_filter", "sessionid", "loginuid",
                                                            "oom_score_adj", "timerslack_ns")},
        "priority": [os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0))],
        "signal handlers": {s.name: repr(signal.getsignal(s)).split(" at 0x")[0] for s in signal.Signals
                            if s not in (signal.SIGKILL, signal.SIGSTOP)},
        "python": [sys.executable, sys.path, list(sys.flags), sys.prefix, tempfile.gettempdir(),
                   os.path.expanduser("~"), sys.getfilesystemencoding()],
        "course package": {m.__name__: sorted((k, hashlib.sha256(marshal.dumps(v.__code__)).hexdigest())
                                              for k, v in vars(m).items() if hasattr(v, "__code__")) for m in course},
        "unseen mapped files": sorted({m[5] for m in maps if len(m) == 6 and m[5].startswith("/")
                                       and not os.path.exists(m[5])}),
        "shared writable mappings": [m for m in maps if m[1][1] == "w" and m[1][3] == "s"],
        # these differ (TestEquivalence._MUST_DIFFER)
        "pid": os.getpid(), "PPid": status["PPid"].strip(), "session": [os.getsid(0), os.getpgid(0)],
        "argv": sys.argv, "pdeathsig": death.value, "pids": pids,
        "fds": {fd: link(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")},
        "environs": {p: [read(f"/proc/{p}/environ"), read(f"/proc/{p}/cmdline")] for p in pids},
    }
    with open(os.path.join(os.getcwd(), name), "w", encoding="utf-8") as f:
        json.dump(report, f)


# ---- the driver (a process of its own, not root): each snippet runs in a learner's process, leaving JSON in `out`

_LISTING = """import json, os, signal, time
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
out = json.dumps({"pids": pids, "me": os.getpid(), "child": child})
"""
# The session keyring (keyctl(2), add_key(2) by their system call numbers): -3 names the caller's session keyring
_KEYS = """import ctypes, errno, os
_libc = ctypes.CDLL(None, use_errno=True)
_ADD_KEY, _KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
def add_key(name):
    return _libc.syscall(_ADD_KEY, b"user", name.encode(), b"payload", 7, -3)
def find_key(name):  # KEYCTL_SEARCH (10) of the session keyring
    found = _libc.syscall(_KEYCTL, 10, -3, b"user", name.encode(), 0)
    return "found" if found >= 0 else errno.errorcode[ctypes.get_errno()]
"""
_MARK = _KEYS + """import builtins, numpy, sys
sys.zygote_mark = numpy.zygote_mark = builtins.zygote_mark = "the first's"
for path in ("/tmp/mark", "/dev/shm/mark"):
    with open(path, "w") as f:
        f.write("the first's")
add_key("the first's")
"""
_SEEN = _KEYS + """import builtins, json, os, random, sys, numpy
out = json.dumps({"globals": [getattr(m, "zygote_mark", None) for m in (sys, numpy, builtins)],
                  "files": [os.path.exists(p) for p in ("/tmp/mark", "/dev/shm/mark")],
                  "keys": [find_key("the first's"), find_key("the driver's")],
                  "draws": [random.random(), numpy.random.random()]})
"""
_LIMITS = """import errno, json, os
def attempt(do):
    try:
        return str(do())
    except (MemoryError, OSError) as exc:
        return errno.errorcode[exc.errno] if isinstance(exc, OSError) else type(exc).__name__
shm = os.statvfs("/dev/shm")
out = json.dumps([attempt(lambda: len(bytearray(1024**3))), attempt(lambda: open("big", "wb").write(bytes(2 << 20))),
                  shm.f_blocks * shm.f_frsize >> 20])
"""
_KILL = "import os, signal\nos.kill({}, signal.SIGKILL)\nout = '{}'"


def _children(pid):
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


# running or sleeping; not Z (a zombie), X (dead) or "gone". A keeper can be seen in uninterruptible sleep (D) for
# a moment, as the kernel tears down the sandbox it waits for.
_ALIVE = {"R", "S", "D"}


def _state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _ask(student, source, timeout=30):
    """Run `source` in the learner's process: its `out`, or the reason there is none (rpc's ChannelClosed...)."""
    try:
        student.peer.deadline = time.monotonic() + timeout
        student.peer.request({"op": "exec", "source": source, "label": "<test>"})
        return json.loads(student.peer.request({"op": "lookup", "name": "out"}))
    except BaseException as exc:  # noqa: B036 (rpc.ChannelError is a BaseException)
        return type(exc).__name__


def _ended(process, within=10.0):
    deadline = time.monotonic() + within
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return process.poll() is not None


def _dead(process, within=10.0):
    """True once `process` (a JoinedProcess) has ended, seen on its pidfd: the worker has not let its keeper go."""
    return bool(select.select([process.pidfd], [], [], within)[0])


def _new_children(pid, before):
    """`pid`'s children not in `before`: the keeper of the process started since, not older ones still ending."""
    return sorted(set(_children(pid)) - before)


def _settled(pids, within=10.0):
    """The states of `pids` once none runs any more (a zombie is "Z"), or after `within` seconds."""
    deadline = time.monotonic() + within
    while any(_state(pid) not in ("Z", "gone") for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    return [_state(pid) for pid in pids]


class _Driver:
    def __init__(self, scratch):
        from autograder.grading.student.sandboxes import Sandboxes

        self.scratch, self.made, self.report = Path(scratch), 0, {}
        # A worker's own ways to make its sandboxes and start its zygotes (one slot, not root)
        setup = types.SimpleNamespace(slot=0, uid_base=None, isolate=True, hidden=(), limits={}, cgroup=())
        self.worker = Sandboxes(setup, figures="text", mpl_cache=None)
        self.start_zygotes = functools.partial(self.worker.start_zygote, self.scratch)

    @contextlib.contextmanager
    def section(self, name):
        entry = self.report.setdefault(name, {})
        try:
            yield entry
        except BaseException:  # noqa: B036 (the test of this section reads what failed; the driver goes on)
            entry["error"] = traceback.format_exc()

    def sandbox(self, **limits):
        """A student's own sandbox, its working folder and its kernel's runtime folder."""
        self.made += 1
        work, runtime = (self.scratch / f"student-{self.made}" / name for name in ("work", "runtime"))
        work.mkdir(parents=True)
        runtime.mkdir()
        box = self.worker.sandbox(work, writable=(work, runtime))
        return box.with_(limits=replace(box.limits, **limits)), work, runtime

    def runner(self, **limits):
        from autograder.grading.gate_beside import rerun

        box, *folders = self.sandbox(**limits)
        student = rerun.StudentProcess(box)
        student.start(None, None)
        student.folders = folders
        return student

    def kernel(self, sources, **limits):
        """A graded kernel, started as nbgrader's run starts one: what each of `sources` printed, its process."""
        from autograder.grading.gate_in import kernel

        box, work, runtime = self.sandbox(**limits)

        async def run():
            km = kernel.SandboxedKernelManager(kernel_name="python3", sandbox_json=kernel.sandbox_to_json(box, runtime))
            await km.start_kernel(cwd=box.cwd)
            kc = km.client()
            kc.start_channels()
            try:
                await kc.wait_for_ready(timeout=60)
                printed = []
                for source in sources:
                    out = []
                    await kc.execute_interactive(source, timeout=60, output_hook=lambda m, out=out: out.append(
                        m["content"].get("text", "")))
                    printed.append("".join(out))
                return printed, type(km.provisioner.process).__name__
            finally:
                kc.stop_channels()
                await km.shutdown_kernel(now=True)

        return (*loops.run(run()), work, runtime)

    def probe(self, entry, mode):
        source = f"{_KEYS}\n{inspect.getsource(_probe)}\n_probe('probe')\nout = 'null'"
        if mode == "runner":
            student = self.runner()
            entry["process"], _ = type(student.proc).__name__, _ask(student, source)
            student.stop()
            work, runtime = student.folders
        else:
            _, entry["process"], work, runtime = self.kernel([source])
        text = (work / "probe").read_text(encoding="utf-8").replace(str(work), "<work>")
        entry["probe"] = json.loads(re.sub(r"kernel-[0-9a-f]+\.json", "kernel.json",
                                           text.replace(str(runtime), "<runtime>")))


def _interrupt(d, entry):
    """A request that overruns, interrupted as the clean re-run interrupts one: the process answers again."""
    student = d.runner()
    entry["process"] = type(student.proc).__name__
    timer = threading.Timer(1.0, student.interrupt)
    timer.start()
    entry["interrupted"] = _ask(student, "import time\nwhile True:\n    time.sleep(0.01)")
    timer.join()
    entry["after"] = [_ask(student, "out = '42'"), student.proc.poll()]
    student.stop()


def _attacks(d, zygotes):
    """From inside warm processes: the clean re-run's, and kernels where named."""
    with d.section("listing") as entry:
        before = set(_children(zygotes["runner"]))
        student = d.runner()
        entry["processes"] = [type(student.proc).__name__]
        entry["seen"], keepers = _ask(student, _LISTING), _new_children(zygotes["runner"], before)
        entry["kill(-1)"], entry["dead"] = _ask(student, _KILL.format(-1, 0)), _dead(student.proc)
        # read while the worker still holds the keeper: once poll() lets it go, it ends, as it should
        entry["zygotes"] = {mode: _state(pid) for mode, pid in zygotes.items()}
        entry["keepers"] = [_state(pid) for pid in keepers]
        entry["ended"] = _ended(student.proc)
        entry["keepers after"] = _settled(keepers)
        student.stop()
        after = d.runner()
        entry["processes"] += [type(after.proc).__name__, _ask(after, "out = '42'")]
        after.stop()
    with d.section("memory") as entry:
        entry["zygote maps"] = {mode: [line for line in Path(f"/proc/{pid}/maps").read_text().splitlines()
                                       if line.split()[1][1::2] == "ws"] for mode, pid in zygotes.items()}
        entry["zygote fds"] = sorted({os.readlink(f"/proc/{pid}/fd/{fd}") for pid in zygotes.values()
                                      for fd in os.listdir(f"/proc/{pid}/fd")})
        first, second = d.runner(), d.runner()  # both running: the second forked after the first wrote
        entry["runners"] = [_ask(first, _MARK + _SEEN), _ask(second, _SEEN)]
        entry["processes"] = [type(first.proc).__name__, type(second.proc).__name__]
        first.stop()
        second.stop()
        kernels = [d.kernel([_MARK + _SEEN + "print(out)"]), d.kernel([_SEEN + "print(out)"])]
        entry["kernels"] = [json.loads(printed[0]) for printed, *_ in kernels]
        entry["processes"] += [process for _, process, *_ in kernels]
    with d.section("signals") as entry:
        student = d.runner()
        entry["kill 1"] = [_ask(student, _KILL.format(1, 1)), _ask(student, "out = '2'"), student.proc.poll()]
        student.stop()
        before = set(_children(zygotes["runner"]))
        student = d.runner()
        keepers = _new_children(zygotes["runner"], before)
        entry["processes"] = [type(student.proc).__name__]
        entry["kill 2"], entry["ended"] = _ask(student, _KILL.format(2, 0)), _ended(student.proc)
        entry["keeper closed"], entry["keeper"] = student.proc.keeper.fileno() == -1, _settled(keepers)
        student.stop()
        after = d.runner()
        entry["zygote's children"] = [[_state(pid), pid in keepers] for pid in _children(zygotes["runner"])]
        entry["processes"].append(type(after.proc).__name__)
        after.stop()
    with d.section("limits") as entry:
        student = d.runner(memory=512 * _MiB, fsize=_MiB)
        entry["memory, fsize"], entry["processes"] = _ask(student, _LIMITS), [type(student.proc).__name__]
        student.stop()
        student, started = d.runner(cpu=1), time.monotonic()
        entry["processes"].append(type(student.proc).__name__)
        entry["cpu"] = [_ask(student, "while True:\n    pass", timeout=60), time.monotonic() - started,
                        _ended(student.proc)]
        student.stop()
        printed, process, *_ = d.kernel([_LIMITS + "print(out)"], memory=1536 * _MiB, fsize=_MiB)
        entry["kernel"] = json.loads(printed[0])
        entry["processes"].append(process)


def _failures(d, zygote):
    """Each zygote's keeper killed as the worker is about to send it its request."""
    keeper, start, raised = zygote.Zygote._keeper, zygote.Zygote.start, []

    def killed_keeper(self):
        before = set(_children(self.process.pid))
        sock = keeper(self)
        for pid in set(_children(self.process.pid)) - before:
            os.kill(pid, 9)
            while _state(pid) not in ("Z", "gone"):
                time.sleep(0.005)
        return sock

    def recorded_start(self, *args, **kwargs):
        try:
            return start(self, *args, **kwargs)
        except BaseException as exc:
            raised.append(f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
            raise

    zygote.Zygote._keeper, zygote.Zygote.start = killed_keeper, recorded_start
    try:
        for mode in ("runner", "kernel"):
            with d.section(f"failed {mode}") as entry:
                was, raised[:] = zygote.current(mode), []
                if mode == "runner":
                    student = d.runner()
                    entry["process"], entry["works"] = type(student.proc).__name__, _ask(student, "out = '42'")
                    student.stop()
                else:
                    printed, entry["process"], *_ = d.kernel(["print(6 * 7)"])
                    entry["works"] = json.loads(printed[0])
                entry["raised"], entry["retired"] = list(raised), zygote.current(mode) is None
                entry["zygote ended"] = was.process.poll() is not None
    finally:
        zygote.Zygote._keeper, zygote.Zygote.start = keeper, start


def _drive(scratch):
    from autograder.grading.gate_in import zygote

    d = _Driver(scratch)
    d.report["secret in the driver"] = os.environ[_SECRET] in Path("/proc/self/environ").read_text(errors="replace")
    keys = {}
    exec(_KEYS, keys)  # a credential in the worker's session keyring, as a login's (pam_keyinit) would be
    d.report["the driver's key"] = [keys["add_key"]("the driver's") > 0, keys["find_key"]("the driver's")]
    for mode in ("runner", "kernel"):
        with d.section(f"plain {mode}") as entry:
            d.probe(entry, mode)
    with d.section("plain interrupt") as entry:
        _interrupt(d, entry)
    d.start_zygotes()
    zygotes = {mode: zygote.current(mode).process.pid for mode in ("runner", "kernel") if zygote.current(mode)}
    d.report["zygotes"] = sorted(zygotes)
    for mode in ("runner", "kernel"):
        with d.section(f"warm {mode}") as entry:
            d.probe(entry, mode)
    with d.section("warm interrupt") as entry:
        _interrupt(d, entry)
    if len(zygotes) == 2:
        _attacks(d, zygotes)
        d.report["keepers left"] = {mode: _settled(_children(pid)) for mode, pid in zygotes.items()}
        _failures(d, zygote)
    with d.section("never ready") as entry:
        broken = zygote.Zygote({"PATH": os.environ["PATH"]}, "no-such-mode")
        try:
            broken.start(d.sandbox()[0], ["3"])
        except zygote.ZygoteError as exc:
            entry["raised"] = str(exc)
        entry["ended"] = broken.process.poll() is not None
    for mode in ("runner", "kernel"):
        if zygote.current(mode) is not None:
            zygote.retire(zygote.current(mode))
    d.report["left running"] = [Path(f"/proc/{pid}/cmdline").read_bytes()[:200].decode(errors="replace")
                                for pid in _children(os.getpid())]
    (d.scratch / "report.json").write_text(json.dumps(d.report), encoding="utf-8")


# ---- the tests ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report():
    """The driver's report; as root, the driver runs as a worker's user, started as grade.py starts a worker."""
    from autograder.grading.dispatch import pool
    from autograder.grading.gate_in import confine, sandbox

    secret = secrets.token_hex(16)
    uid = sandbox.worker_uid(63)  # None unless root: the driver then runs as this user, who is not root either
    scratch = tempfile.mkdtemp(prefix="ffn-zygote-")
    try:
        confine.hand_over(scratch, uid)
        start = confine.worker_start(uid, [*pool._worker_paths(), str(Path(__file__).parent)]) if uid else None
        run = subprocess.run([sys.executable, __file__, scratch], env={**os.environ, _SECRET: secret, "HOME": scratch},
                             cwd="/", preexec_fn=start, capture_output=True, text=True, timeout=300)
        path = Path(scratch, "report.json")
        assert run.returncode == 0 and path.exists(), f"the driver failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"
        data = json.loads(path.read_text(encoding="utf-8"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert data["secret in the driver"] and data["zygotes"] == ["kernel", "runner"], data
    return {**data, "secret": secret}


def _section(report, name):
    entry = report[name]
    assert "error" not in entry, entry["error"]
    return entry


def _kinds(fds, kernel):
    """The kinds of open descriptors; for a kernel each kind once, without its stdin (see _MUST_DIFFER): ZeroMQ
    opens a socket per connection as it comes, and SQLite's journal comes and goes with the history's writes."""
    kinds = [re.sub(r"\[\d+\]$", "", target) for fd, target in fds.items()
             if target != "FileNotFoundError" and not (kernel and (fd == "0" or target.endswith("-journal")))]
    return sorted(set(kinds) if kernel else kinds)  # FileNotFoundError: the listing's own descriptor, closed


class TestEquivalence:
    _MUST_DIFFER = {
        "pid": "the holder, `sleep infinity`, is pid 2, so a warm process is pid 3",
        "PPid": "its parent, the keeper, is outside the sandbox's pid namespace: 0",
        "session": "it leads a session and group of its own (setsid); bubblewrap's child is in bwrap's, outside: 0",
        "pdeathsig": "bubblewrap's child dies with bwrap's init (--die-with-parent); a warm process dies with the "
                     "pid namespace when that init ends, which the signal would add nothing to",
        "pids": "the holder is one more process in the sandbox",
        "environs": "its /proc/self/environ and cmdline are the zygote's exec (the course's environment with a "
                    "scratch HOME; zygote_main.py's source), and it sees the holder's (TestFromInside: no secret)",
        "argv": "the runner's channel: bubblewrap's child has it at the number the worker had, a warm one at 3",
        "fds": "compared by kind: the channel's number, and a kernel's stdin (a pipe from jupyter_client, "
               "/dev/null in a warm kernel; neither reads it)",
        "limits": "compared without RLIMIT_NPROC: the sandbox's process count is the uid's processes at its start "
                  "plus its own, and a worker with zygotes and keepers has more",
    }

    @pytest.mark.parametrize("mode", ["runner", "kernel"])
    def test_a_warm_process_equals_the_one_bubblewrap_starts_item_by_item(self, report, mode):
        plain, warm = _section(report, f"plain {mode}"), _section(report, f"warm {mode}")
        assert (plain["process"], warm["process"]) == ("Popen", "JoinedProcess")  # warm, not a fallback
        plain, warm = plain["probe"], warm["probe"]
        assert set(plain) == set(warm) and set(self._MUST_DIFFER) < set(plain)
        same = sorted(set(plain) - set(self._MUST_DIFFER))
        assert {k: plain[k] for k in same} == {k: warm[k] for k in same}
        assert _kinds(plain["fds"], mode == "kernel") == _kinds(warm["fds"], mode == "kernel")
        limits = [{k: v for k, v in p["limits"].items() if k != "RLIMIT_NPROC"} for p in (plain, warm)]
        assert limits[0] == limits[1]
        assert warm["limits"]["RLIMIT_NPROC"][0] > plain["limits"]["RLIMIT_NPROC"][0] > 256
        # the differences are those named
        assert (plain["pid"], plain["PPid"], warm["pid"], warm["PPid"], warm["session"]) == (2, "1", 3, "0", [3, 3])
        assert (plain["pdeathsig"], warm["pdeathsig"]) == (9, 0) and warm["pids"] == [1, 2, 3]
        if mode == "runner":
            assert warm["argv"] == ["-c", "3"] and plain["argv"][0] == "-c"
        else:
            assert warm["argv"] == plain["argv"] == ["-c", "-f", "<runtime>/kernel.json"]
        # what the items hold, so that the comparison cannot pass on two empty reports
        assert warm["CapEff"] == warm["CapBnd"] == "0" * 16 and warm["NoNewPrivs"] == "1"
        assert warm["unshare(CLONE_NEWUSER)"][0] != 0 and warm["hostname"] == "sandbox"
        assert warm["setsid in a child"] == "Operation not permitted"  # its processes share one scheduling group
        assert all(all(same) for same in warm["namespaces"].values()), warm["namespaces"]
        assert warm["cwd"] == warm["os.environ"]["PWD"] == "<work>" and len(warm["mounts"]) > 10
        assert warm["course package"]["ffn_helpers.checks"]
        assert warm["unseen mapped files"] == warm["shared writable mappings"] == []
        # no keyring at all, plain or warm: keyctl is off the filter's allow-list (so not the worker's, whose
        # credential the driver can find; zygote_main still joins a fresh one, as confine.fresh_keyring does)
        assert report["the driver's key"] == [True, "found"] and warm["the driver's key"] == "ENOSYS"
        # calls off the allow-list are refused, plain or warm, as by a kernel without them
        assert set(warm["off the allow-list"].values()) == {"ENOSYS"} and len(warm["off the allow-list"]) == 5


    def test_an_interrupted_request_leaves_the_runner_running_warm_as_plain(self, report):
        """The clean re-run interrupts a call that overruns its time (SIGINT): the request ends, the same process
        answers the next one; a warm runner too, whose module was imported in its zygote (whose pid it is not)."""
        plain, warm = _section(report, "plain interrupt"), _section(report, "warm interrupt")
        assert (plain["process"], warm["process"]) == ("Popen", "JoinedProcess")
        for entry in (plain, warm):
            assert entry["interrupted"] != "ChannelClosed" and entry["after"] == [42, None], entry


class TestFromInside:
    def test_it_sees_only_its_sandboxs_processes_and_killing_all_it_can_ends_only_its_sandbox(self, report):
        entry = _section(report, "listing")
        seen = entry["seen"]
        assert seen["pids"] == sorted([1, 2, seen["me"], seen["child"]]) and seen["me"] == 3
        # kill(-1) reaches the holder, so its sandbox ends, and it with it (bubblewrap's own child finds no process
        # it may signal: ESRCH); outside the sandbox, nothing
        assert entry["dead"] and entry["ended"]
        assert entry["zygotes"].keys() == {"runner", "kernel"} and set(entry["zygotes"].values()) <= _ALIVE
        assert len(entry["keepers"]) == 1 and set(entry["keepers"]) <= _ALIVE  # its keeper outlived the attack
        assert entry["keepers after"] == ["gone"]  # and, let go, ended and was reaped: no zombie holds its pid
        assert entry["processes"] == ["JoinedProcess", "JoinedProcess", 42]  # the next student's: warm, and works

    def test_nothing_one_warm_process_writes_is_seen_by_the_next(self, report):
        entry = _section(report, "memory")
        assert entry["zygote maps"] == {"runner": [], "kernel": []}  # no memory shared with what it forks
        assert entry["processes"] == ["JoinedProcess"] * 4
        for first, second in (entry["runners"], entry["kernels"]):
            assert first["globals"] == ["the first's"] * 3 and first["files"] == [True, True]
            assert second["globals"] == [None] * 3 and second["files"] == [False, False]
            assert first["keys"] == second["keys"] == ["ENOSYS", "ENOSYS"]  # keyrings: off the seccomp allow-list
            assert first["draws"][0] != second["draws"][0] and first["draws"][1] != second["draws"][1]

    def test_it_holds_no_descriptor_but_its_standard_ones_and_its_channel(self, report):
        zygotes = set(_section(report, "memory")["zygote fds"]) - {"/dev/null"}
        fds = {fd: t for fd, t in _section(report, "warm runner")["probe"]["fds"].items() if t != "FileNotFoundError"}
        assert fds.keys() >= {"0", "1", "2", "3"} and fds["3"].startswith("socket:")
        assert {target for fd, target in fds.items() if fd != "3"} == {"/dev/null"}  # its own, and the runner's
        assert len(zygotes) >= 2 and not zygotes & set(fds.values())  # not the zygotes' sockets or pipes
        targets = set(_section(report, "warm kernel")["probe"]["fds"].values())  # nor in a kernel; nor a namespace
        assert not zygotes & targets
        assert all(t.startswith(("/", "socket:[", "pipe:[", "anon_inode:")) or t.endswith("Error") for t in targets)

    def test_no_environment_or_command_line_it_can_read_holds_the_workers_secret(self, report):
        for mode in ("runner", "kernel"):
            probe = _section(report, f"warm {mode}")["probe"]
            environs = probe["environs"]
            assert sorted(environs) == ["1", "2", "3"]  # bwrap's init, the holder, itself: each read
            assert not [t for pair in environs.values() for t in pair if t.endswith("Error")]
            assert "PATH=" in environs["3"][0] and report["secret"] not in json.dumps(probe)

    def test_killing_the_holder_ends_it_and_leaves_no_keeper_while_signals_to_init_are_dropped(self, report):
        entry = _section(report, "signals")
        # pid 1 is bwrap's init, which has no handler: the kernel drops the signal, as in bubblewrap's own sandbox
        assert entry["kill 1"] == [1, 2, None]  # it answered twice, and runs
        assert entry["processes"] == ["JoinedProcess", "JoinedProcess"]
        assert entry["ended"] and entry["keeper closed"]  # poll() saw it end, and let its keeper go
        assert entry["keeper"] == ["gone"]  # which ended, and the zygote reaped it at once
        [(state, old)] = entry["zygote's children"]  # the next one's keeper, and no other
        assert state in _ALIVE and not old

    def test_its_limits_hold(self, report):
        entry = _section(report, "limits")
        assert entry["processes"] == ["JoinedProcess"] * 3
        # /dev/shm, memory no limit counts, is as small as /tmp (Limits.tmp_size), not half the machine's memory
        assert entry["memory, fsize"] == entry["kernel"] == ["MemoryError", "EFBIG", 256]
        reason, seconds, ended = entry["cpu"]
        assert reason == "ChannelClosed" and ended and seconds < 30  # SIGXCPU after its one second of CPU


@pytest.mark.parametrize("mode", ["runner", "kernel"])
def test_a_zygote_that_fails_a_start_is_retired_and_processes_start_the_plain_way(report, mode):
    entry = _section(report, f"failed {mode}")
    assert len(entry["raised"]) == 1
    assert entry["raised"][0].startswith("autograder.grading.gate_in.zygote.ZygoteError: ")
    assert entry["retired"] and entry["zygote ended"]
    assert entry["process"] == "Popen" and entry["works"] == 42


def test_a_zygote_whose_imports_failed_says_why_at_its_first_request_and_ends(report):
    """A zygote does not hold its worker up while it imports; one that failed to start is found out at its first
    request, which raises ZygoteError with the zygote's own words, starts nothing and ends the zygote."""
    entry = _section(report, "never ready")
    assert re.fullmatch(r"the no-such-mode zygote did not start: .*unknown zygote mode 'no-such-mode'",
                        entry["raised"], re.DOTALL), entry["raised"]
    assert entry["ended"]


def test_nothing_is_left_running(report):
    left = report["keepers left"]  # after the attacks, each zygote's children: keepers that ended were reaped
    assert left.keys() == {"runner", "kernel"} and all(set(states) <= {"gone"} for states in left.values()), left
    assert report["left running"] == []  # no zygote or sandbox


if __name__ == "__main__":  # the driver, which the `report` fixture starts
    _drive(sys.argv[1])
