"""Open the course in JupyterLab: the learner's setup, or the instructor's with nbgrader's formgrader.

    python -m autograder lab               # learner: my-notebooks/00_start_here.ipynb, Validate only
    python -m autograder lab --instructor  # instructor: formgrader on the course in autograder/course/

The learner works in their own copy, `my-notebooks/` (git-ignored), never in the
generated `notebooks/`: a saved notebook there would make `make check-course`
fail and `git pull` conflict with the learner's work. `sync_learner_copy` makes
the copy on the first run; later runs add the course's new notebooks, bring
copies whose cells the learner never changed up to date, and never overwrite a
notebook the learner changed (for one the course changed too, they print the
command that takes the course's version with the learner's answers carried over: carry.py).

The server binds to 127.0.0.1 and keeps token authentication. Which nbgrader
parts each role sees is configured in jupyter/<role>/ (also used by Binder's
`start` script), put first on JUPYTER_CONFIG_PATH.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import COURSE_ROOT, NOTEBOOKS_DIR, REPO_ROOT
from . import carry

CONFIG_DIRS = {role: REPO_ROOT / "jupyter" / role for role in ("learner", "instructor")}
LEARNER_COPY = REPO_ROOT / "my-notebooks"
# What the course last copied into the learner's folder: notebook name -> the digest of its content
# (`_content`). It tells a copy the learner never changed (safe to update) from one they did (never touched by us).
MANIFEST = ".course-versions.json"


@dataclass
class SyncReport:
    added: list = field(default_factory=list)  # new in the learner's folder
    updated: list = field(default_factory=list)  # unchanged copies replaced by the course's newer version
    kept: list = field(default_factory=list)  # changed by the learner while the course changed too: left alone


def _bytes_digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _content(path):
    """A digest of what a person wrote in the notebook: each cell's type, source and tags.

    Opening and saving a notebook changes its metadata (`language_info`), outputs and
    execution counts, never this, so a notebook the learner only ran still counts as
    unchanged. A file that is not a notebook is compared by its bytes.
    """
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        content = [[c["cell_type"], _text(c.get("source", "")), sorted(c.get("metadata", {}).get("tags", []))]
                   for c in cells]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return _bytes_digest(path)
    return "cells:" + hashlib.sha256(json.dumps(content).encode()).hexdigest()


def _text(source):
    return "".join(source) if isinstance(source, list) else str(source)


def _replace(src, dest):
    """Copy src over dest through a temporary file, so dest is never half-written."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    os.close(fd)
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    except BaseException:
        os.unlink(tmp)
        raise


def _unchanged(target, recorded):
    """Is the learner's copy what the course last copied? (A manifest of older versions holds byte digests.)"""
    return recorded is not None and recorded in (_content(target), _bytes_digest(target))


def _manifest(dest):
    """What the course last copied into `dest`: {notebook name: content digest}; {} when there is no record."""
    try:
        copied = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return copied if isinstance(copied, dict) else {}


def _write_manifest(dest, copied):
    tmp = dest / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(copied, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, dest / MANIFEST)


def sync_learner_copy(source=NOTEBOOKS_DIR, dest=LEARNER_COPY):
    """Bring the learner's folder `dest` up to date with the course's notebooks in `source`.

    A notebook missing from `dest` is copied. One whose cells are still those the course
    copied last time (the learner may have run and saved it, but changed no cell) is
    replaced by a newer course version. Anything else is the learner's work and stays.
    """
    dest.mkdir(parents=True, exist_ok=True)
    copied = _manifest(dest)
    report = SyncReport()
    for src in sorted(source.glob("*.ipynb")):
        target, new = dest / src.name, _content(src)
        if not target.exists():
            _replace(src, target)
            report.added.append(src.name)
        elif _content(target) == new:
            pass  # the course's cells already (whatever was saved around them)
        elif _unchanged(target, copied.get(src.name)):
            _replace(src, target)
            report.updated.append(src.name)
        else:  # the learner's work: left alone, and reported when the course has moved on since they started
            started = copied.get(src.name)
            if started == _bytes_digest(src):  # recorded by an older version of this tool, by its bytes
                copied[src.name] = started = new
            if started != new:
                report.kept.append(src.name)
            continue  # the manifest keeps the version the learner started from
        copied[src.name] = new
    _write_manifest(dest, copied)
    return report


def take_command(name, where="my-notebooks"):
    """The command that takes the course's version of `name` with the learner's answers carried over
    (carry.py), keeping the learner's file under another name: run by the Python running now."""
    python = "python"
    if Path(os.path.abspath(sys.executable)).is_relative_to(Path(os.path.abspath(REPO_ROOT))):  # the course's .venv
        python = os.path.relpath(sys.executable, REPO_ROOT)
    sep = "\\" if os.name == "nt" else "/"
    return f"{python} -m autograder carry-over {where}{sep}{name}"


def carry_over(path, source=NOTEBOOKS_DIR):
    """`python -m autograder carry-over PATH`: carry.main, then the manifest records that the learner's copy now
    starts from the course's current version, so that `make lab` no longer reports it."""
    status = carry.main(path, source)
    path = Path(path)
    if status == 0:
        copied = _manifest(path.parent)
        copied[path.name] = _content(Path(source) / path.name)
        _write_manifest(path.parent, copied)
    return status


def lab_command(role, port=None, open_browser=True, allow_root=False, extra=(), root=None):
    """The `jupyter lab` argument list and environment for `role`; nothing is started.

    `root` replaces the folder served (tests serve a scratch copy of the course, with
    its notebooks/ and solutions/ only). The learner's JupyterLab serves the
    repository, so solutions/ is at hand, and opens the learner's own copy.
    """
    if role == "instructor":
        default, start = COURSE_ROOT, None  # nbgrader reads nbgrader_config.py from the working folder
    elif root is None:
        default, start = REPO_ROOT, f"{LEARNER_COPY.relative_to(REPO_ROOT)}/00_start_here.ipynb"
    else:
        default, start = REPO_ROOT, "notebooks/00_start_here.ipynb"
    root = default if root is None else root
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")  # nbgrader's gradebook needs `alembic` on PATH
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        [str(CONFIG_DIRS[role])] + [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p])
    argv = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={root}", "--ServerApp.ip=127.0.0.1"]
    if port is not None:
        argv.append(f"--ServerApp.port={port}")
    if not open_browser:
        argv.append("--no-browser")
    if allow_root:
        argv.append("--allow-root")
    if start:
        argv.append(start)
    return argv + list(extra), env, root


def refuse_root(allow_root=False):
    """The refusal to run JupyterLab as root, or None; standard library only: `make lab` asks before installing."""
    if hasattr(os, "geteuid") and os.geteuid() == 0 and not allow_root:
        return ("JupyterLab should not run as root: start it as your normal user. "
                "If you really mean to (a container, say), add --allow-root "
                "(`make lab ARGS=--allow-root`).")
    return None


def main(instructor=False, port=None, open_browser=True, allow_root=False):
    role = "instructor" if instructor else "learner"
    refusal = refuse_root(allow_root)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    if instructor:
        from . import build

        build.write_sources()  # the formgrader works on autograder/course/source/<id>/<id>.ipynb
    argv, env, root = lab_command(role, port, open_browser, allow_root)
    if shutil.which("jupyter", path=env["PATH"]) is None:
        print("jupyter is not installed in this environment: run `make setup` first.", file=sys.stderr)
        return 2
    if not instructor:
        report = sync_learner_copy()
        where = LEARNER_COPY.relative_to(REPO_ROOT)
        print(f"Your work lives in {where}/ (yours alone: git ignores it, and updates never overwrite "
              "a notebook you changed).")
        if report.added:
            print(f"  copied from the course: {', '.join(report.added)}")
        if report.updated:
            print(f"  updated to the course's newer version (you had not changed them): {', '.join(report.updated)}")
        for name in report.kept:
            print(f"  kept your {where}/{name}, which you changed; the course's version (notebooks/{name}) "
                  f"differs. To take it with your answers carried over (yours is kept as "
                  f"{name.removesuffix('.ipynb')}-mine.ipynb; close it in JupyterLab first):\n"
                  f"      {take_command(name, where)}")
    print(f"Opening the {role} JupyterLab on {root} (127.0.0.1, token required; Ctrl-C to stop).", flush=True)
    os.chdir(root)
    if os.name == "nt":  # no exec on Windows (os.execv starts a new process and this one ends, leaving the console)
        return subprocess.call(argv, env=env)
    os.execvpe(argv[0], argv, env)


if __name__ == "__main__":  # `make lab`'s first step, before anything is installed: refuse root early
    refusal = refuse_root("--allow-root" in sys.argv[1:])
    if refusal:
        print(refusal, file=sys.stderr)
    sys.exit(2 if refusal else 0)
