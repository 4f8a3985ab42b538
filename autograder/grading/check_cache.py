"""What `check` would otherwise make again on every run, kept in the user's cache folder.

The instructor course of one assignment, built from its authored source (nbgrader's
generate_assignment: seconds, most of a check), is kept under a name made of a digest
of everything the build reads: the assignment's source folder, the course's nbgrader
configuration, the course's own code, and the versions of nbgrader, jupytext and nbformat.
A change to any of them makes another name, so a stale build is never used; an entry is
written whole (built beside, then renamed), so a check stopped half-way leaves none.
matplotlib's font list is kept there too, one per version of matplotlib, for `check` and `grade`
alike: building it costs every run a second or two.
"""

import contextlib
import hashlib
import os
import shutil
import tempfile
from importlib import metadata
from pathlib import Path

from .. import COURSE_ROOT, PACKAGE_DIR, SOURCE_DIR
from . import course

CACHE_ENV = "FFN_CHECK_CACHE"  # another folder for the cache (a test's own); else the user's cache folder
_VERSIONED = ("nbgrader", "jupytext", "nbformat")
KEEP = 3  # builds kept per assignment, the ones used last


def folder():
    """The cache's folder: $FFN_CHECK_CACHE, or the system's cache folder for this user."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    import platformdirs  # jupyter_core's own dependency

    return Path(platformdirs.user_cache_dir("ffn-course")) / "check"


def digest(assignment_id):
    """A digest of everything building `assignment_id`'s instructor course reads."""
    h = hashlib.sha256()
    code = sorted(p for p in PACKAGE_DIR.rglob("*.py") if not p.is_relative_to(COURSE_ROOT))
    source = sorted(p for p in (SOURCE_DIR / assignment_id).rglob("*") if p.is_file())
    named = [(f"code/{p.relative_to(PACKAGE_DIR).as_posix()}", p) for p in [COURSE_ROOT / "nbgrader_config.py", *code]]
    named += [(f"source/{p.relative_to(SOURCE_DIR).as_posix()}", p) for p in source]
    for name, path in named:
        h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    for name in _VERSIONED:
        h.update(f"{name}={metadata.version(name)}\0".encode())
    return h.hexdigest()[:24]


def built_course(assignment_id, build):
    """A folder holding `assignment_id`'s instructor course as `build(root, assignment_id)` makes it, from the
    cache if current."""
    key = f"{assignment_id}-{digest(assignment_id)}"
    home = folder()
    kept = home / key
    if (kept / "nbgrader_config.py").is_file():
        with contextlib.suppress(OSError):
            os.utime(kept)  # used now: the last one _forget_others would remove
        return kept
    home.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=home))
    try:
        build(fresh, assignment_id)
        if (kept / "nbgrader_config.py").is_file():  # another check made it meanwhile: the same build, in use
            return kept
        if kept.exists():  # a folder of that name without a whole build in it (not one of ours): replaced
            shutil.rmtree(kept, ignore_errors=True)
        with contextlib.suppress(OSError):  # another check made it first: theirs is the same
            fresh.rename(kept)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    _forget_others(home, assignment_id, key)
    return kept


def _forget_others(home, assignment_id, key):
    """Remove the assignment's builds beyond the KEEP used last: the source or the grader changed since, or another
    checkout of the course (a learner's second clone; a branch) checks with other code and needs a build of its own,
    which keeping only the newest would make each of the two build again at every check."""
    others = [old for old in home.glob(f"{assignment_id}-*") if old.name != key and old.is_dir()]
    others.sort(key=lambda old: old.stat().st_mtime, reverse=True)
    for old in others[KEEP - 1:]:
        shutil.rmtree(old, ignore_errors=True)


def matplotlib_fonts(elsewhere):
    """A folder holding matplotlib's font list (worker.matplotlib_cache), built the first time for this version of
    matplotlib: `check` gives it to its worker and `grade` a copy to each of its workers. Built beside, then renamed,
    so a run never copies a list another run is still writing. `elsewhere`: a folder of the run's own, where the list
    is built for this run alone when the cache folder cannot be written (a user without a home of their own)."""
    from .worker import matplotlib_cache

    fonts = folder() / f"matplotlib-{metadata.version('matplotlib')}"
    if any(fonts.glob("fontlist-*.json")):
        return fonts
    try:
        fonts.parent.mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(prefix=f".{fonts.name}-", dir=fonts.parent))
    except OSError:
        return matplotlib_cache(elsewhere)
    try:
        if any(matplotlib_cache(fresh).glob("fontlist-*.json")):
            with contextlib.suppress(OSError):  # another run made it first: theirs is the same
                fresh.rename(fonts)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    fonts.mkdir(exist_ok=True)  # still without a list if matplotlib made none: each worker builds its own
    return fonts


def copy_course(kept, root):
    """A check's own copy of a kept course at `root`: nothing a check does can change the cache."""
    course.copy_tree(kept, root)
    return root
