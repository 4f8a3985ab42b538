"""Student data (submissions, grades, feedback, names) is readable by its owner only: files 0600, folders 0700.

Every path of the course's tools that writes it goes through here. nbgrader's zip_collect runs under the umask
077 the course's extractor sets; generate_feedback's pages and folders are made so by the course's config and
hook. On a shared machine a mode of 0644 would hand every student's grades, names and a private offering's
hidden-test data to every account.
"""

import os
import stat
from pathlib import Path

FILE, FOLDER = 0o600, 0o700


def folder(path):
    """`path` as a folder only its owner can enter (made with its missing parents, each 0700); returned."""
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for p in reversed(missing):
        p.mkdir(mode=FOLDER, exist_ok=True)
        os.chmod(p, FOLDER)
    if not path.is_symlink():
        os.chmod(path, FOLDER)
    return path


def write_bytes(path, data):
    """Write `data` to `path` (a link there is replaced, never followed), mode 0600 whatever the umask."""
    path = Path(path)
    if path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE)
    with os.fdopen(fd, "wb") as f:
        os.fchmod(f.fileno(), FILE)
        f.write(data)
    return path


def write_text(path, text):
    return write_bytes(path, text.encode("utf-8"))


def tighten(root):
    """Make every folder under `root` (itself included) 0700 and every regular file 0600; links are left alone."""
    root = Path(root)
    if not root.exists() or root.is_symlink():
        return
    if root.is_file():
        os.chmod(root, FILE)
        return
    os.chmod(root, FOLDER)
    for here, dirs, files in os.walk(root):  # os.walk does not descend into linked folders
        for name in dirs + files:
            path = os.path.join(here, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                os.chmod(path, FOLDER)
            elif stat.S_ISREG(mode):
                os.chmod(path, FILE)
