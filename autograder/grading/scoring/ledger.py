"""What `grade` has already graded: each submission's digest and the course version it was graded against.

A submission whose files and course version are unchanged since its last grading,
and whose result and gradebook entry are still there, is skipped (as `nbgrader
autograde` skips what it already graded); `--force` grades it again.
"""

import hashlib
import json
import os
import stat
from pathlib import Path

LEDGER = "graded.ledger"  # JSON, beside the <student>.json it vouches for (not *.json: the report reads those)
_MAX_BYTES = 200 * 1024 * 1024  # as course.copy_tree: past this, nothing is skipped (the digest is None)


def submission_digest(folder):
    """SHA-256 of the regular files under `folder` (names and bytes; links never followed), or None."""
    if folder is None:
        return None
    digest, budget = hashlib.sha256(), _MAX_BYTES
    for root, dirs, files in os.walk(folder):  # os.walk does not descend into linked folders
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                digest.update(f"unreadable {os.path.relpath(path, folder)}\0".encode())
                continue
            with os.fdopen(fd, "rb") as f:
                info = os.fstat(f.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_size > budget:
                    return None
                budget -= info.st_size
                digest.update(f"{os.path.relpath(path, folder)}\0{info.st_size}\0".encode())
                digest.update(f.read(info.st_size + 1))
    return digest.hexdigest()


def course_version(model, source_texts):
    """SHA-256 of what a grade depends on: the gradebook's assignment, its sources, the grader and ffn_helpers.

    ffn_helpers holds the checks (and OFFERING_SEED, which draws the hidden tests' inputs).
    """
    import ffn_helpers

    code = sorted(p for package in (Path(__file__).parent, Path(ffn_helpers.__file__).parent)
                  for p in package.glob("*.py"))
    digest = hashlib.sha256(json.dumps([model.to_dict(), source_texts], sort_keys=True).encode())
    for path in code:
        digest.update(f"{path.name}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def load(out_dir):
    """{student: {"submission": digest, "course": version}} from the results folder (empty if none or unreadable)."""
    path = Path(out_dir) / LEDGER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(out_dir, ledger):
    path = Path(out_dir) / LEDGER
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def entry(digest, version):
    return {"submission": digest, "course": version}


def up_to_date(ledger, student, digest, version, out_dir, in_gradebook):
    """True when this student's files and the course are as last graded, and the result is still on disk."""
    return (digest is not None and student in in_gradebook and ledger.get(student) == entry(digest, version)
            and (Path(out_dir) / f"{student}.json").is_file())
