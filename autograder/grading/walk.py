"""Which files of a folder count, and how each is read: the one walker of a folder student code could have written.

A submission is copied (course.copy_tree: into the course, into a worker's folder), sent as bytes to a
cluster (dispatch/cluster.py) and vouched for by the ledger's digest (scoring/ledger.py); all three walk it
here, so that the files graded and the files the digest covers are the same ones. The rules:

- no symbolic link is followed: a linked folder is not entered, a linked file not read (each is left out,
  named with why); each folder is entered through its parent's descriptor and each file opened in it by name
  (os.fwalk), so a folder swapped for a link during the walk is not followed either;
- each file is opened without following a link and without waiting on a FIFO, and checked once open (a link
  or a special file swapped in between look and open is refused too): only a regular file counts;
- the files count in one order (each folder's names sorted, a folder's files before its subfolders'), up to
  `max_bytes` together: a file past what is left is left out, named with its size, and the walk goes on;
- a file is read up to the size it had when opened (one that grows meanwhile adds nothing).

Names are the folder's own (hidden ones too); a name holds no separator, so no path built from one leaves
the folder.
"""

import errno
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from ..limits import MAX_FOLDER_BYTES

CHUNK = 1 << 20


@dataclass
class Found:
    """One item under the walked folder: `rel`, its path there (the system's separators); `why` it does not count,
    or '' when it does; `folder`: a folder (made by a copy, never read); `file`, open, and `size`, for a file that
    counts."""

    rel: str
    why: str = ""
    folder: bool = False
    file: BinaryIO | None = None
    size: int = 0
    read: int = 0  # bytes given so far by chunks()

    def chunks(self):
        """The file's bytes, in pieces, up to the size it had when opened."""
        while self.file is not None and self.read < self.size:
            piece = self.file.read(min(CHUNK, self.size - self.read))
            if not piece:
                return
            self.read += len(piece)
            yield piece

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None


def open_no_follow(path, dir_fd=None):
    """A descriptor to read `path` (in the folder `dir_fd`, if given), never through a symbolic link (OSError for a
    link), never waiting on a FIFO.

    Windows has neither flag: there a link is refused before opening (a learner's own `check`, unsandboxed)."""
    if not hasattr(os, "O_NOFOLLOW") and _is_link(path, dir_fd):
        raise OSError(errno.ELOOP, "a symbolic link", str(path))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    return os.open(path, flags, dir_fd=dir_fd)


def _is_link(path, dir_fd=None):
    try:
        return stat.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_file(path, rel, budget, dir_fd=None):
    """Found for the one file at `path` (in the folder `dir_fd`, if given): open when it is a regular file of at
    most `budget` bytes, else why not."""
    try:
        fd = open_no_follow(path, dir_fd)
    except OSError as exc:
        return Found(rel, "a link" if _is_link(path, dir_fd) else f"unreadable ({exc.strerror})")
    f = os.fdopen(fd, "rb")
    info = os.fstat(f.fileno())
    if not stat.S_ISREG(info.st_mode):
        f.close()
        return Found(rel, "not a regular file")
    if info.st_size > budget:
        f.close()
        return Found(rel, f"over the size limit ({info.st_size:,} bytes)")
    return Found(rel, file=f, size=info.st_size)


def walk(source, max_bytes=MAX_FOLDER_BYTES):
    """Each item under `source` as a Found, in the walk's one order (the module's rules). A file that counts is
    open while its Found is in the caller's hands (read it with chunks()), and closed when the walk moves on."""
    budget = max_bytes
    for rel_here, dirs, files, dir_fd in _folders(os.fspath(source)):
        dirs.sort()
        for name in sorted(files):
            found = open_file(_path(source, rel_here, name, dir_fd), _rel(rel_here, name), budget, dir_fd)
            try:
                yield found
            finally:
                found.close()
            budget -= found.size  # what counted, whether or not the caller read it all
        linked = {name for name in dirs if _is_link(_path(source, rel_here, name, dir_fd), dir_fd)}
        for name in dirs:
            yield Found(_rel(rel_here, name), "a link" if name in linked else "", folder=True)
        dirs[:] = [d for d in dirs if d not in linked]


def _folders(source):
    """(each folder's path under `source`, its subfolders' names, its files' names, a descriptor of it or None).

    Where the system has os.fwalk, each folder is entered through its parent's descriptor and checked to be the
    folder that was listed, and each file is opened in it by name: no path is resolved again, so a folder swapped
    for a link meanwhile is never followed. Elsewhere (Windows: a learner's `check`), os.walk, which does not
    enter a linked folder either."""
    if hasattr(os, "fwalk"):
        for here, dirs, files, dir_fd in os.fwalk(source, follow_symlinks=False):
            yield os.path.relpath(here, source), dirs, files, dir_fd
    else:
        for here, dirs, files in os.walk(source):
            yield os.path.relpath(here, source), dirs, files, None


def _path(source, rel_here, name, dir_fd):
    """What to open `name` by: its name in the folder `dir_fd`, or its path from `source` without one."""
    return name if dir_fd is not None else os.path.join(source, rel_here, name)


def _rel(folder, name):
    return name if folder == os.curdir else os.path.join(folder, name)
