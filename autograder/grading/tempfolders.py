"""The grader's own temporary folders, and the removal of those whose process was killed.

`grade`, `check`, a cluster worker's assignment and the public build of ffn_helpers each make one folder in the
system's temporary folder, and remove it when they end, after Ctrl-C too (`send`: the folder an earlier release of
`grade --cluster` copied each submission into to send it; one left behind is still removed). A process killed
outright (SIGKILL, the kernel's out-of-memory killer) removes nothing, and its folder can hold students'
submissions. So each folder records its maker (OWNER: the process id and its pid
namespace), and making one first removes those whose maker is gone. Only a folder named as `make` names them, owned
by this user and recorded by a process of this pid namespace that no longer runs, is removed; no link is followed.
Where /proc does not name this process's pid namespace (macOS, Windows: a learner's `check`) nothing is removed.
"""

import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

OWNER = ".owner"
_NAME = re.compile(r"ffn-(grade|check|cluster|public|send)-[a-z0-9_]{8}")


def make(kind, mode=0o700):
    """A new folder `ffn-<kind>-XXXXXXXX` in the temporary folder, recorded as this process's."""
    sweep()
    path = Path(tempfile.mkdtemp(prefix=f"ffn-{kind}-"))
    path.chmod(mode)
    (path / OWNER).write_text(f"{_namespace()} {os.getpid()}\n", encoding="ascii")
    return path


@contextlib.contextmanager
def folder(kind, mode=0o700):
    """`make`'s folder while the block runs, removed afterwards (what it cannot remove is left: Windows keeps open
    files)."""
    path = make(kind, mode)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sweep(within=None):
    """Remove `make`'s folders in `within` (the temporary folder) whose maker ended without removing them; return
    their paths."""
    here = _namespace()
    if here is None or not shutil.rmtree.avoids_symlink_attacks:
        return []
    removed = []
    for path in Path(within or tempfile.gettempdir()).iterdir():
        maker = _maker(path) if _NAME.fullmatch(path.name) else None
        if maker is not None and maker[0] == here and not _runs(maker[1]):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _maker(path):
    """(pid namespace, pid) that `path`'s OWNER records, if `path` is a folder of this user's (not a link) holding
    one as a file of its own; else None."""
    try:
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            return None
        fd = os.open(path / OWNER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            info = os.fstat(fd)
            text = os.read(fd, 64).decode("ascii") if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() else ""
        finally:
            os.close(fd)
        namespace, pid = text.split()
        return (namespace, int(pid)) if int(pid) > 0 else None  # os.kill(0 or -1, ...) would ask a whole group
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _runs(pid):
    """Whether process `pid` of this pid namespace runs (asked of the kernel, not of /proc, which a mount can hide)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: it runs
        return True
    return True


def _namespace():
    """This process's pid namespace ("pid:[4026531836]"), or None where the system does not say."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except (OSError, AttributeError):
        return None
