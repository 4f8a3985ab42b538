"""Confining a trusted process that handles what student code made: a user of its own, namespaces, limits.

Two processes of the grader use it (the student's code itself runs in sandbox.py's bubblewrap):

- a worker (grade.py starts it): dropped, before it starts, to a user id of its own that
  owns nothing but its scratch folder, so nbgrader and nbconvert parse what a kernel sent
  with no rights to speak of;
- the judge (judge.py): the worker's child that runs the clean re-run's tests, which also
  leaves the network and sees no course, submissions or results.

Python may live under a folder only root can enter (/root/.pyenv): in the process's own
mount namespace, each such folder gets an empty, traversable one over it, with only the
interpreter's folders bound back (`reachable`).
"""

import ctypes
import errno
import os
import platform
import sys

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
_MNT_DETACH = 0x2
_PR_SET_NO_NEW_PRIVS = 38
# keyctl(2) has no wrapper in the C library: its system call's number, and KEYCTL_JOIN_SESSION_KEYRING
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "arm64": 219}
KEYCTL_JOIN_SESSION_KEYRING = 1


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _bytes(value):
    return value.encode() if isinstance(value, str) else value


def _mount(libc, source, target, fstype=None, flags=0, data=None):
    if libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)) != 0:
        raise OSError(ctypes.get_errno(), f"mount {source} on {target}")


def _unshare(libc, flags, what):
    if libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), f"unshare: cannot {what}")


def own_mounts(network=False):
    """A mount namespace of this process's own (and a network namespace with no way out, if asked).

    As root, directly; as another user, inside a user namespace of its own where it is root."""
    libc = _libc()
    flags = _CLONE_NEWNS | (_CLONE_NEWNET if network else 0)
    if os.geteuid() != 0:
        uid, gid = os.geteuid(), os.getegid()
        _unshare(libc, flags | _CLONE_NEWUSER, "make namespaces (are user namespaces disabled?)")
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as f:
                f.write(text)
    else:
        _unshare(libc, flags, "make namespaces")
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)


def hide(paths):
    """An empty folder over each of `paths` (in this process's own mount namespace)."""
    libc = _libc()
    for path in paths:
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4k,mode=0755")


def reachable(paths):
    """Make `paths` (and what lies under them) reachable by any user, in this process's own mount namespace."""
    from .sandbox import closed_ancestor

    libc = _libc()
    closed = sorted({a for a in map(closed_ancestor, paths) if a})
    if not closed:
        return
    stage = "/tmp/.ffn-confine-stage"
    os.makedirs(stage, exist_ok=True)
    _mount(libc, "tmpfs", stage, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4k,mode=0700")
    inside = sorted({p for p in paths if any(p.startswith(a + "/") for a in closed)})
    for i, path in enumerate(inside):
        os.mkdir(f"{stage}/{i}")
        _mount(libc, path, f"{stage}/{i}", None, _MS_BIND | _MS_REC)
    for folder in closed:
        _mount(libc, "tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755")
    for i, path in enumerate(inside):
        os.makedirs(path, exist_ok=True)
        _mount(libc, f"{stage}/{i}", path, None, _MS_BIND | _MS_REC)
    libc.umount2(stage.encode(), _MNT_DETACH)


def become(uid):
    """Drop to `uid` (and a group of the same number, no other groups), with no way back."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def limit(memory=None, cpu=None, fsize=None, strict=True):
    """Resource limits on this process: address space, CPU seconds, size of a file it writes.

    `strict=False` (a learner's `check` without the sandbox, e.g. on macOS): a limit the system refuses is
    left unset (unsandboxed.not_held has said which do not hold) instead of ending the process."""
    import resource  # POSIX only: imported here, so that importing this module works everywhere

    for which, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_FSIZE, fsize),
                         (resource.RLIMIT_CORE, 0)):
        if value is not None:
            try:
                resource.setrlimit(which, (int(value), int(value)))
            except (ValueError, OSError):
                if strict:
                    raise


def hand_over(folder, uid):
    """Give `folder` (and all in it) to `uid`, the folder closed to every other user (mode 0700).

    A worker's folder holds the course files it was given and its students' code, outputs and
    results: another worker's user must not read it. `uid` None (not grading as root): the mode only."""
    os.chmod(folder, 0o700)
    if uid is None:
        return
    for root, dirs, files in os.walk(folder):
        os.chown(root, uid, uid)
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)


def fresh_keyring():
    """Join a new, empty session keyring (Linux): what the caller's session keyring holds, such as the credentials
    a login put there (pam_keyinit), is out of reach of this process and of everything it starts, sandboxes included
    (bubblewrap gives none a keyring of its own). Where a seccomp filter refuses keyctl, no process under it can
    reach a keyring either."""
    if not sys.platform.startswith("linux"):
        return
    number = SYS_KEYCTL.get(platform.machine())
    if number is None:
        raise OSError(errno.ENOSYS, f"keyctl's system call number on {platform.machine()} is not known here")
    if _libc().syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EPERM):
            raise OSError(code, "keyctl: cannot join a new session keyring")


def worker_start(uid, paths):
    """`preexec_fn` of a worker started as root: its own mounts, the interpreter reachable, a keyring of its own,
    then `uid`."""

    def start():
        own_mounts()
        reachable(paths)
        fresh_keyring()
        become(uid)

    return start
