"""A Python that lacks what macOS or Windows lack, on Linux: imported by every process started with this
folder on PYTHONPATH (the check, its kernel, the learner's process, what they start).

FFN_SIMULATE=windows: `resource`, `fcntl`, `pwd`, `grp` and `termios` cannot be imported, and `os` and
`socket` have no fork, process groups, sessions, effective uid, O_NOFOLLOW, O_NONBLOCK or descriptor passing.
FFN_SIMULATE=macos: `resource` is there, the rest as on Linux.
Both: nothing under /proc can be read, and prlimit, bwrap and setpriv are not found.

What is missing is missing for the course's own code (autograder/, ffn_helpers/, its public build and
the learner's process's runner, whose code is compiled as `<string>`): the libraries it uses (nbgrader, jupyter_client,
the standard library) choose by `sys.platform` or `os.name` what they import and call, are tested on
those systems by their own projects, and would take their Windows branch there; here they get the real
module. That choice is by the frame that imports or looks the name up. /proc and the three commands are
missing for everyone.

This simulates the two systems' missing parts; it is no macOS or Windows (their signals, their
process and file semantics, RLIMIT_AS on macOS are not simulated).
"""

import builtins
import importlib.abc
import io
import os
import shutil
import socket
import sys

SYSTEM = os.environ.get("FFN_SIMULATE", "")
BLOCKED = {"resource", "fcntl", "pwd", "grp", "termios"} if SYSTEM == "windows" else set()
MISSING_TOOLS = {"prlimit", "bwrap", "setpriv"}


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROJECT = tuple(os.path.join(REPO, name) + os.sep for name in ("autograder", "ffn_helpers"))


def _from_project(depth=2):
    """True when the code asking (the first frame outside the import machinery) is the course's own."""
    frame = sys._getframe(depth)
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen") or "importlib" in
                                 frame.f_code.co_filename):
        frame = frame.f_back
    name = frame.f_code.co_filename if frame is not None else ""
    return name.startswith(PROJECT) or name == "<string>" or f"{os.sep}ffn-public-" in name


class _Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED and _from_project():
            raise ModuleNotFoundError(f"No module named {name!r} (simulated {SYSTEM})", name=name)
        return None


def _import(real_import):
    def wrapped(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name in BLOCKED and _from_project():  # one already imported is found in sys.modules
            raise ModuleNotFoundError(f"No module named {name!r} (simulated {SYSTEM})", name=name)
        return real_import(name, globals, locals, fromlist, level)

    return wrapped


def _hide(module, names):
    """Take `names` out of `module` for the course's code (AttributeError, so hasattr is False); others see them."""
    hidden = {name: getattr(module, name) for name in names if hasattr(module, name)}
    for name in hidden:
        delattr(module, name)

    def __getattr__(name):
        if name in hidden and not _from_project():
            return hidden[name]
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r} (simulated {SYSTEM})")

    module.__getattr__ = __getattr__


def _no_proc(function):
    def wrapped(path, *args, **kwargs):
        text = os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike) else ""
        if text == "/proc" or text.startswith("/proc/"):
            raise FileNotFoundError(2, f"No such file or directory (simulated {SYSTEM})", text)
        return function(path, *args, **kwargs)

    return wrapped


def _which(which):
    def wrapped(cmd, *args, **kwargs):
        return None if os.path.basename(str(cmd)) in MISSING_TOOLS else which(cmd, *args, **kwargs)

    return wrapped


if SYSTEM in ("windows", "macos"):
    sys.meta_path.insert(0, _Blocked())
    builtins.__import__ = _import(builtins.__import__)
    builtins.open = io.open = _no_proc(builtins.open)
    for name in ("open", "stat", "lstat", "listdir", "scandir", "readlink"):
        setattr(os, name, _no_proc(getattr(os, name)))
    shutil.which = _which(shutil.which)
if SYSTEM == "windows":
    _hide(os, ("fork", "forkpty", "killpg", "getpgid", "setsid", "geteuid", "O_NOFOLLOW", "O_NONBLOCK"))
    _hide(socket, ("send_fds", "recv_fds"))
