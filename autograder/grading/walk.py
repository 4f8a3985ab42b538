"""Which files of a folder count, and how each is read: the one walker of a folder student code could have written.

A submission is copied (course.copy_tree: into the course, into a worker's folder), sent as bytes to a
cluster (dispatch/cluster.py) and vouched for by the ledger's digest (scoring/ledger.py); all three walk it
here, so that the files graded and the files the digest covers are the same ones. The rules:

- no symbolic link is followed: a linked folder is not entered, a linked file not read (each is left out,
  named with why);
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


def open_no_follow(path):
    """A descriptor to read `path`, never through a symbolic link (OSError for a link), never waiting on a FIFO.

    Windows has neither flag: there a link is refused before opening (a learner's own `check`, unsandboxed)."""
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
        raise OSError(errno.ELOOP, "a symbolic link", str(path))
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    return os.open(path, flags)


def open_file(path, rel, budget):
    """Found for the one file at `path`: open when it is a regular file of at most `budget` bytes, else why not."""
    try:
        fd = open_no_follow(path)
    except OSError as exc:
        return Found(rel, "a link" if os.path.islink(path) else f"unreadable ({exc.strerror})")
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
    source, budget = os.fspath(source), max_bytes
    for here, dirs, files in os.walk(source):  # os.walk does not descend into linked folders
        rel_here = os.path.relpath(here, source)
        dirs.sort()
        for name in sorted(files):
            found = open_file(os.path.join(here, name), _rel(rel_here, name), budget)
            try:
                yield found
            finally:
                found.close()
            budget -= found.size  # what counted, whether or not the caller read it all
        for name in dirs:
            linked = os.path.islink(os.path.join(here, name))
            yield Found(_rel(rel_here, name), "a link" if linked else "", folder=True)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))]


def _rel(folder, name):
    return name if folder == os.curdir else os.path.join(folder, name)
