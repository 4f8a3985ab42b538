"""Attacks on the sandbox's bounds (no writable folder of the machine, memory of a bounded size, sockets reached by
descriptor only), each a test that fails if the attack succeeds.

- Memory no limit counts: a kernel tries to keep memory in memfds (written, never mapped, each under RLIMIT_FSIZE),
  in System V shared memory segments (detached, so RLIMIT_AS no longer counts them) and semaphore sets, beyond
  both the address-space limit and the size of its /tmp; to make message queues (System V, POSIX); and to make a
  user namespace and mount a tmpfs of any size in it. syscalls.py's seccomp filter refuses each. Tried in a
  kernel graded as root and in the sandbox `grade` builds for its unprivileged workers.
- The sockets: what `_open_sockets` refuses (a link, a FIFO, a file in place of a socket), and a socket renamed over
  a name the grader already opened: the grader reaches the socket it opened, or nothing.
"""

import errno
import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import loops
import pytest
from test_kernel import _manager, _started

from autograder.grading.gate_in import kernel, sandbox, syscalls

pytestmark = pytest.mark.sandbox

MiB = sandbox.MiB
_LIMITS = {"memory": 1024 * MiB, "tmp_size": 64 * MiB, "fsize": 256 * MiB}

# What student code keeps in memory that no limit of the sandbox counts: prints one JSON line.
_HOARD = r"""
import ctypes, errno, json, os
MiB = 2**20
libc = ctypes.CDLL(None, use_errno=True)
out = {"memfd": 0, "shm": 0}
fds = []
try:  # memfds: written with write(2), never mapped (RLIMIT_AS does not count them), each under RLIMIT_FSIZE
    for i in range(6):
        fd = os.memfd_create(f"hoard-{i}")
        for _ in range(200):
            os.write(fd, b"\1" * MiB)
        fds.append(fd)
        out["memfd"] += 200
except OSError as exc:
    out["memfd error"] = exc.errno
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.restype, libc.shmat.argtypes = ctypes.c_void_p, [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
ids = []
for i in range(6):  # System V segments: touched, then detached (they stay until their IPC namespace ends)
    sid = libc.shmget(0, 200 * MiB, 0o1600)
    if sid < 0:
        out["shm error"] = ctypes.get_errno()
        break
    ids.append(sid)
    addr = libc.shmat(sid, None, 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        out["shm error"] = ctypes.get_errno()
        break
    ctypes.memset(addr, 1, 200 * MiB)
    libc.shmdt(ctypes.c_void_p(addr))
    out["shm"] += 200
for sid in ids:
    libc.shmctl(sid, 0, None)  # IPC_RMID: give it back now, not when the sandbox ends
libc.semget.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
sems, out["sem"] = [], 0
for i in range(600):  # System V semaphore sets of 32,000 semaphores: 2 MiB of the kernel's memory each
    sid = libc.semget(0, 32000, 0o1600)
    if sid < 0:
        out["sem error"] = ctypes.get_errno()
        break
    sems.append(sid)
    out["sem"] += 2
for sid in sems:
    libc.semctl(sid, 0, 0)  # IPC_RMID
queue = libc.msgget(0, 0o1600)  # a System V message queue: its messages are kept in the kernel's memory
out["msgget"] = "made" if queue >= 0 else errno.errorcode[ctypes.get_errno()]
if queue >= 0:
    libc.msgctl(queue, 0, None)
libc.mq_open.restype = ctypes.c_int  # a POSIX message queue, likewise
posix = libc.mq_open(b"/hoard", os.O_CREAT | os.O_RDWR, 0o600, None)
out["mq_open"] = "made" if posix >= 0 else errno.errorcode[ctypes.get_errno()]
for where in ("/tmp", "/dev/shm"):  # extended attributes: their values are kept in the kernel's memory
    path = f"{where}/xattr-hoard"
    open(path, "w").close()
    for call, setter in (("setxattr", lambda: os.setxattr(path, "user.hoard", b"\1" * 65536)),
                         ("lsetxattr", lambda: os.setxattr(path, "user.hoard", b"\1" * 65536, follow_symlinks=False)),
                         ("fsetxattr", lambda: os.setxattr(os.open(path, os.O_RDONLY), "user.hoard", b"\1" * 65536))):
        try:
            setter()
            out[f"{call} {where}"] = "made"
        except OSError as exc:
            out[f"{call} {where}"] = errno.errorcode[exc.errno]
for fd in fds:
    os.close(fd)
print(json.dumps(out), flush=True)
"""

# A user namespace of student code's own, and in it a tmpfs of any size (a forked process: the kernel has threads).
_OWN_TMPFS = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    result = {}
    if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
        result["unshare errno"] = ctypes.get_errno()
    else:
        os.makedirs("/tmp/own-tmpfs", exist_ok=True)
        if libc.mount(b"none", b"/tmp/own-tmpfs", b"tmpfs", 0, b"size=64g") != 0:
            result["mount errno"] = ctypes.get_errno()
        else:
            result["mounted"] = os.statvfs("/tmp/own-tmpfs").f_blocks * os.statvfs("/tmp/own-tmpfs").f_frsize
    os.write(w, json.dumps(result).encode())
    os._exit(0)
os.close(w)
os.waitpid(pid, 0)
print(os.read(r, 4096).decode(), flush=True)
"""


def _in_kernel(tmp_path, sources, **limits):
    """What each of `sources` printed (its traceback, if it raised) in a kernel sandboxed as the grading worker
    sandboxes one (test_kernel's)."""
    _, _, km = _manager(tmp_path, **limits)

    async def run():
        kc = await _started(km)
        try:
            printed = []
            for source in sources:
                out = []
                await kc.execute_interactive(source, timeout=120, output_hook=lambda m, out=out: out.append(
                    m["content"].get("text", "") or "\n".join(m["content"].get("traceback", []))))
                printed.append("".join(out).strip())
            return printed
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    return loops.run(run())


def _last_json(text):
    return json.loads(text.strip().splitlines()[-1])


def _assert_bounded(hoard, limits):
    """No more memory kept than the address-space limit (the tmpfs's size is already well below it)."""
    assert hoard.get("memfd", 0) <= limits["memory"] // MiB, f"memfds kept {hoard['memfd']} MiB: {hoard}"
    assert hoard.get("shm", 0) <= limits["memory"] // MiB, f"System V segments kept {hoard['shm']} MiB: {hoard}"
    assert hoard.get("sem", 0) <= limits["memory"] // MiB, f"semaphore sets kept {hoard['sem']} MiB: {hoard}"
    assert hoard["msgget"] == hoard["mq_open"] == "EPERM", hoard  # no message queue to fill
    xattrs = {k: v for k, v in hoard.items() if "setxattr" in k}
    assert len(xattrs) == 6 and set(xattrs.values()) == {"EPERM"}, hoard  # no extended attribute to fill


# ---- memory no limit counts ----------------------------------------------------------------------------------------

def test_a_kernel_keeps_no_more_memory_than_its_limits_in_memfds_or_shared_memory(tmp_path):
    hoard, = _in_kernel(tmp_path, [_HOARD], **_LIMITS)
    _assert_bounded(_last_json(hoard), _LIMITS)


def test_a_kernel_mounts_no_tmpfs_of_its_own(tmp_path):
    printed, = _in_kernel(tmp_path, [_OWN_TMPFS], **_LIMITS)
    result = _last_json(printed)
    assert "mounted" not in result, f"student code mounted a tmpfs of {result['mounted'] // MiB} MiB: {result}"


# The sandbox `grade` builds: its worker is unprivileged, so bubblewrap makes a user namespace (--disable-userns);
# a warm process joins the same namespaces. As root, the driver runs as a worker's user, as grade.py starts one.
_DRIVER = r"""
import json, subprocess, sys
from autograder.grading.gate_in import sandbox
limits, code = json.loads(sys.argv[1]), sys.argv[2]
box = sandbox.Sandbox(cwd="/tmp/work", limits=sandbox.Limits(**limits))
run = subprocess.run(box.command([sys.executable, "-c", code]), capture_output=True, text=True, timeout=300,
                     stdin=subprocess.DEVNULL)
print(json.dumps({"argv": box.command([]), "stdout": run.stdout, "stderr": run.stderr[-2000:]}))
"""


def _in_workers_sandbox(code, limits):
    from autograder.grading.dispatch import pool
    from autograder.grading.gate_in import confine

    uid = sandbox.worker_uid(62)
    start = confine.worker_start(uid, pool._worker_paths()) if uid is not None else None
    run = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(limits), code], preexec_fn=start, cwd="/",
                         capture_output=True, text=True, timeout=400)
    assert run.returncode == 0, run.stderr[-3000:]
    data = json.loads(run.stdout.strip().splitlines()[-1])
    assert "--unshare-user" in data["argv"] and "--disable-userns" in data["argv"], data["argv"]
    assert data["stdout"].strip(), data["stderr"]
    return _last_json(data["stdout"])


def test_a_grade_workers_sandbox_keeps_no_more_memory_than_its_limits(tmp_path):
    _assert_bounded(_in_workers_sandbox(_HOARD, _LIMITS), _LIMITS)


def test_a_grade_workers_sandbox_mounts_no_tmpfs_of_its_own(tmp_path):
    result = _in_workers_sandbox(_OWN_TMPFS, _LIMITS)
    assert "mounted" not in result, result


# ---- the sockets ---------------------------------------------------------------------------------------------------

# In its sandbox's /tmp: a socket that counts the connections it accepts, and, named as sockets, what is not one.
_SERVER = r"""
import os, socket, sys, threading
os.chdir("/tmp")
def serve(path, tag):
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    s.listen(16)
    def loop():
        while True:
            conn, _ = s.accept()
            conn.sendall(tag)
            conn.close()
    threading.Thread(target=loop, daemon=True).start()
    return s
first = serve("k-t-1", b"first")
os.symlink("/proc/1/root/tmp/k-t-1", "k-t-2")  # a link (to a socket, even)
os.mkfifo("k-t-3")
open("k-t-4", "w").close()
os.symlink(sys.argv[1], "k-t-5")  # a link to a socket of the machine, by its name there
print("ready", flush=True)
sys.stdin.readline()
# Another socket renamed over the name the grader opened, and the one it opened closed.
serve("other", b"other")
os.rename("other", "k-t-1")
first.close()
print("swapped", flush=True)
sys.stdin.readline()
"""


def _connect_and_read(path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect(path)
        return s.recv(16)
    except OSError as exc:
        return exc.errno
    finally:
        s.close()


def test_the_grader_opens_only_the_sockets_the_sandbox_bound_and_keeps_to_them(tmp_path):
    machine = tmp_path / "machine.sock"  # a socket of the machine, outside the sandbox
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(machine))
    listener.listen()
    listener.settimeout(0.5)
    box = sandbox.Sandbox(cwd="/tmp", uid=sandbox.slot_uid(9))
    proc = subprocess.Popen(box.command([sys.executable, "-c", _SERVER, str(machine)]), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fds = []
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        # The socket: opened, by the root of bwrap's child, as the provisioner opens a kernel's
        opened = None
        deadline = time.monotonic() + 30
        while opened is None and time.monotonic() < deadline:
            opened = kernel._open_sockets(proc.pid, "/tmp", ["k-t-1"])
            time.sleep(0.01)
        assert opened is not None
        fds += opened
        # What is not a socket of the sandbox's own is never opened
        for name in ("k-t-2", "k-t-3", "k-t-4", "k-t-5"):
            try:
                refused = kernel._open_sockets(proc.pid, "/tmp", [name])
            except OSError:
                refused = None
            fds += refused or []
            assert refused is None, name
        via = f"/proc/self/fd/{opened[0]}"
        assert _connect_and_read(via) == b"first"
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "swapped"
        # The socket renamed over its name is never reached through the descriptor: the one opened, or nothing
        assert _connect_and_read(via) != b"other"
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        for fd in fds:
            os.close(fd)
        proc.kill()
        proc.wait()
        listener.close()


def test_the_sandbox_root_found_is_the_sandboxs_not_the_machines(tmp_path):
    """_sandbox_root of a plain start (prlimit -> env -> bwrap): bwrap's child's root, whose /tmp is the sandbox's."""
    box = sandbox.Sandbox(cwd="/tmp", uid=sandbox.slot_uid(9))
    marker = f"probe-{os.getpid()}"
    proc = subprocess.Popen(box.command([sys.executable, "-c", f"open('/tmp/{marker}', 'w'); input()"]),
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    try:
        root = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            root = kernel._sandbox_root(proc.pid)
            if root is not None:
                try:
                    tmp = os.open("tmp", os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root)
                except OSError:
                    tmp = None
                if tmp is not None:
                    found = marker in os.listdir(f"/proc/self/fd/{tmp}")
                    os.close(tmp)
                    if found:
                        break
                os.close(root)
                root = None
            time.sleep(0.01)
        assert root is not None
        assert os.fstat(root).st_ino != os.stat("/").st_ino or os.fstat(root).st_dev != os.stat("/").st_dev
        assert not Path("/tmp", marker).exists()  # the host's /tmp holds nothing the sandbox wrote
        os.close(root)
    finally:
        proc.kill()
        proc.wait()


# ---- the seccomp filter's decisions -------------------------------------------------------------------------------

def _run_bpf(program, nr, arch, args=()):
    """What classic BPF `program` (seccomp's subset of it) returns for one call: struct seccomp_data, little-endian
    (both machines the filter knows are)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args, *[0] * (6 - len(args)))
    steps = [struct.unpack_from("<HBBI", program, i) for i in range(0, len(program), 8)]
    a, pc = 0, 0
    while True:
        code, jt, jf, k = steps[pc]
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            a = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:  # BPF_ALU | BPF_AND | BPF_K
            a &= k
        elif code == 0x05:  # BPF_JMP | BPF_JA
            pc += k
        elif code in (0x15, 0x25, 0x35, 0x45):  # BPF_JMP | BPF_JEQ, JGT, JGE, JSET | BPF_K
            pc += jt if {0x15: a == k, 0x25: a > k, 0x35: a >= k, 0x45: a & k}[code] else jf
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"instruction {code:#x} at {pc - 1}: not one this interpreter knows")


_ALLOW, _EPERM, _ENOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS  # SECCOMP_RET_*
# Harmless-looking calls that no honest notebook makes and Docker's list leaves out: refused
_OFF_THE_LIST = ("kexec_load", "add_key", "keyctl", "request_key", "perf_event_open", "userfaultfd", "bpf", "ptrace",
                 "io_uring_setup", "mount", "setns", "clone3")
_CLONE_VM_THREAD = 0x3D0F00  # the flags the C library's pthread_create passes
_CLONE_NEWUSER = 0x10000000


@pytest.mark.parametrize("machine", sorted(syscalls.MACHINES))
def test_the_seccomp_filter_allows_its_list_and_refuses_everything_else_on_each_machine(machine):
    """libseccomp's program for each machine, run here by a BPF interpreter on each call it could be asked."""
    import pyseccomp as seccomp  # the `grading` extra's: libseccomp's own numbers for each machine
    arch = getattr(seccomp.Arch, syscalls.MACHINES[machine])
    program = syscalls.program(machine)

    def told(name, *args):
        return _run_bpf(program, seccomp.resolve_syscall(arch, name), arch, args)

    honest = ("read", "write", "openat", "mmap", "futex", "clone", "execve", "rseq", "getrandom", "statx",
              "sched_getaffinity", "epoll_pwait", "socket", "pipe2", "wait4", "ioctl", "close_range", "shmat")
    assert {n: told(n) for n in honest} == dict.fromkeys(honest, _ALLOW)
    refused = [n for n in syscalls.REFUSED if seccomp.resolve_syscall(arch, n) >= 0]  # known to this libseccomp
    assert {"setxattr", "memfd_create", "shmget", "setsid"} <= set(refused)
    assert {n: told(n) for n in refused} == dict.fromkeys(refused, _EPERM)
    assert {n: told(n) for n in _OFF_THE_LIST} == dict.fromkeys(_OFF_THE_LIST, _ENOSYS)
    # clone's flags: a thread or a fork, yes; any namespace, also with high bits set, no
    assert told("clone", _CLONE_VM_THREAD) == told("clone", 17) == _ALLOW  # 17: SIGCHLD, fork()
    for flags in (_CLONE_NEWUSER | 17, 0x20000 | 17, 0x40000000, (1 << 40) | _CLONE_NEWUSER):
        assert told("clone", flags) == _EPERM, hex(flags)
    assert told("socket", 2) == told("socket", 1) == _ALLOW and told("socket", 40) == _ENOSYS  # AF_VSOCK
    assert told("personality", 0xFFFFFFFF) == _ALLOW and told("personality", 0x0400000) == _ENOSYS  # READ_IMPLIES_EXEC
    # another ABI: refused, whatever the call (i386 and arm32; x32's numbers, under x86-64's own AUDIT_ARCH)
    read = seccomp.resolve_syscall(arch, "read")
    for other in (seccomp.Arch.X86, seccomp.Arch.ARM, *[a for a in (seccomp.Arch.X86_64, seccomp.Arch.AARCH64)
                                                        if a != arch]):
        assert _run_bpf(program, read, other) == _ENOSYS
    assert _run_bpf(program, 0x40000000 | read, arch) == _ENOSYS


_UNLISTED = r"""
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
told = {}
for call, number in json.loads(%r).items():
    made = libc.syscall(number, 0, 0, 0, 0, 0, 0)
    told[call] = "made" if made >= 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(told), flush=True)
"""


def test_a_grade_workers_sandbox_refuses_calls_off_the_allow_list():
    """Each is a call the kernel has: ENOSYS is the filter's answer, not the kernel's."""
    import pyseccomp as seccomp
    numbers = {n: seccomp.resolve_syscall(seccomp.Arch.NATIVE, n) for n in _OFF_THE_LIST if n != "clone3"}
    told = _in_workers_sandbox(_UNLISTED % json.dumps(numbers), _LIMITS)
    assert told == dict.fromkeys(numbers, "ENOSYS")


def test_without_libseccomp_the_sandbox_probe_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyseccomp", None)  # as where the binding is not installed
    syscalls.program.cache_clear()
    try:
        ok, why = sandbox.probe()
    finally:
        syscalls.program.cache_clear()  # compiled again, with the binding, by whatever runs next
    assert not ok and "apt-get install libseccomp2" in why and "pip install -e '.[grading]'" in why, why
