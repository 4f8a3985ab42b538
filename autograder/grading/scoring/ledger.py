"""What `grade` has already graded: each submission's digest and the course version it was graded against.

A submission whose files and course version are unchanged since its last grading,
and whose result and gradebook entry are still there, is skipped (as `nbgrader
autograde` skips what it already graded); `--force` grades it again. The course version
is kept in parts (PARTS: the grader's code, ffn_helpers, the source notebooks, the
release, the limits, a keyed digest of the offering's seed), so that a student graded
again is told which part changed (`why_grade`).
"""

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from ...limits import MAX_FOLDER_BYTES
from .. import walk

LEDGER = "graded.ledger"  # JSON, beside the <student>.json it vouches for (not *.json: the report reads those)
_MAX_LISTED = 100  # files listed in a ledger entry, by name and digest


def submission_digest(folder):
    """SHA-256 of the files under `folder` that count (names and bytes, and what was left out and why), or None."""
    return submission_files(folder)[0]


def submission_files(folder):
    """(submission_digest, {file's path under `folder`: SHA-256 of its bytes, or why it does not count}) or (None,
    None) without a folder: the files, so that a student graded again is told which of them changed (a new
    timestamp.txt alone, say).

    The folder is walked as it is copied to be graded (walk.py, course.copy_tree): the digest covers exactly the
    files graded, and names what the copy leaves out (a link, a special file, one past the size limit)."""
    if folder is None:
        return None, None
    digest, files = hashlib.sha256(), {}
    for found in walk.walk(folder, MAX_FOLDER_BYTES):
        if found.why:
            digest.update(f"left out {found.rel}: {found.why}\0".encode())
            files[found.rel] = f"left out: {found.why}"
        elif not found.folder:
            one = hashlib.sha256()
            digest.update(f"{found.rel}\0{found.size}\0".encode())
            for piece in found.chunks():
                digest.update(piece)
                one.update(piece)
            files[found.rel] = one.hexdigest()
    return digest.hexdigest(), files


PARTS = ("grader code", "ffn_helpers", "source notebook", "release", "limits", "offering seed")
CODE_PARTS = PARTS[:2]  # what a cluster's worker computes of itself: the rest comes to it with the run
KEY_FILE = ".ledger_key"  # in the course root, beside gradebook.db (git ignores it): keys the offering seed's digest
NOT_GRADING = ("report", "course")  # folders of autograder/ that grading never runs: the report, the course's data
_FORMAT = 2  # graded.ledger: {"ledger": 2, "students": {student: entry}}; before, {student: entry} with one version


def _folder_files(root, keep):
    """[(path relative to `root`, path)] of the files under `root` that `keep(relative path)` accepts, sorted.

    Walked recursively (subpackages count), never into a linked folder, bytecode caches left out."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in files:
            rel = os.path.relpath(os.path.join(here, name), root)
            if not name.endswith(".pyc") and keep(rel):
                found.append((rel, Path(here) / name))
    return sorted(found)


def _digest(*items, files=()):
    """SHA-256 of JSON-able `items` and of `files` ([(name, path)]: names and bytes)."""
    digest = hashlib.sha256(json.dumps(items, sort_keys=True).encode())
    for name, path in files:
        data = Path(path).read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def grader_files():
    """The grader's own files: every .py under autograder/ but NOT_GRADING's, and all of grading/ (its templates)."""
    import autograder
    import autograder.grading

    root, grading = Path(autograder.__file__).parent, Path(autograder.grading.__file__).parent
    inside = grading.relative_to(root)
    return _folder_files(root, lambda rel: Path(rel).parts[0] not in NOT_GRADING
                         and (rel.endswith(".py") or Path(rel).is_relative_to(inside)))


def helper_files():
    """Every file of ffn_helpers, subpackages and data included: the checks and references the tests run."""
    import ffn_helpers

    return _folder_files(Path(ffn_helpers.__file__).parent, lambda rel: True)


def code_version():
    """{part: digest} of the code that grades: the grader's and ffn_helpers'."""
    return {"grader code": _digest(files=grader_files()), "ffn_helpers": _digest(files=helper_files())}


def course_version(model, source_texts, release_files, limits, seed_digest):
    """{part: digest} of all that decides a grade (PARTS): the code, the assignment, the limits, the offering.

    `model` is the gradebook's assignment (what generate_assignment recorded of the release), `release_files`
    [(name, path)] the release's notebooks and files, `limits` what the workers are given that can change a
    score, `seed_digest` offering_digest's. Due dates and late penalties are not in it: grades.csv applies them.
    """
    released = {k: v for k, v in model.to_dict().items() if k != "duedate"}  # a new due date grades nobody again
    return {**code_version(), "source notebook": _digest(source_texts),
            "release": _digest(released, files=release_files), "limits": _digest(limits),
            "offering seed": seed_digest}


def offering_digest(seed, course_root):
    """"published" without an offering seed; else HMAC-SHA256 of it under the course's key (never the seed).

    A plain hash of a short number is undone by trying every number; the key, in KEY_FILE beside the gradebook
    and not in the results folder, makes the ledger alone useless for that."""
    if seed is None:
        return "published"
    return hmac.new(_key(Path(course_root) / KEY_FILE), str(seed).encode(), "sha256").hexdigest()


def _key(path):
    """The course's 32-byte ledger key, made (mode 600) on first use."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ValueError(f"cannot create the ledger's key {path} ({exc.strerror}): the course root must be "
                         "writable when an offering seed is set") from None
    else:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secrets.token_hex(32) + "\n")
    try:
        key = bytes.fromhex(path.read_text(encoding="utf-8").strip())
    except (OSError, ValueError) as exc:
        raise ValueError(f"the ledger's key {path} should hold 64 hex digits, got something else ({exc}): "
                         "delete it to make a new one (every student is then graded again)") from None
    if len(key) < 16:
        raise ValueError(f"the ledger's key {path} should hold 64 hex digits, got {len(key) * 2}: delete it to "
                         "make a new one (every student is then graded again)")
    return key


def changed(old, new, parts=PARTS):
    """The names of the `parts` of the course version that differ between `old` and `new` ({part: digest})."""
    return [p for p in parts if old.get(p) != new.get(p)]


def load(out_dir):
    """{student: {"submission": digest, "course": {part: digest}}} from the results folder (empty if none or
    unreadable). An older grader's ledger gives its entries as they are: `why_grade` grades those again."""
    path = Path(out_dir) / LEDGER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    if data.get("ledger") == _FORMAT and isinstance(data.get("students"), dict):
        return data["students"]
    return {} if "ledger" in data and not isinstance(data["ledger"], dict) else data  # a newer one, or the old


def save(out_dir, ledger):
    from ... import private

    path = Path(out_dir) / LEDGER
    tmp = path.with_suffix(".tmp")
    private.write_text(tmp, json.dumps({"ledger": _FORMAT, "students": ledger}, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def entry(digest, version, files=None):
    """A student's ledger entry; `files` ({path: SHA-256}, submission_files') lets why_grade name what changed."""
    return {"submission": digest, "course": version} | ({"files": files} if files is not None else {})


def submission_entry(folder, version):
    """The ledger entry of the submission in `folder` against the course `version` (its files listed when they are
    few: a submission of thousands of files would fill the ledger)."""
    digest, files = submission_files(folder)
    return entry(digest, version, files if files is not None and len(files) <= _MAX_LISTED else None)


def _changed_files(before, now):
    """"the files changed", naming them when both entries list their files (an older ledger's do not)."""
    old, new = before.get("files"), now.get("files")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return "the files changed"
    names = sorted(n for n in set(old) | set(new) if old.get(n) != new.get(n))
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return f"the files changed ({shown})" if names else "the files changed"


def why_grade(ledger, student, now, out_dir, in_gradebook, force=False):
    """Why `student` is graded in this run (one line), or None: their files and the course version (`now`, an
    entry) are as last graded and the result is still there, so they are skipped. `grade` and its cluster path
    both decide here."""
    if force:
        return "--force"
    if now["submission"] is None:
        return "its files cannot be compared (none submitted): graded every run"
    before = ledger.get(student)
    if not isinstance(before, dict):
        return "new submission"
    course = before.get("course")
    if not isinstance(course, dict) or set(course) != set(PARTS):
        return "graded by an older grader"
    why = [_changed_files(before, now)] if before.get("submission") != now["submission"] else []
    parts = changed(course, now["course"])
    if parts:
        why.append(f"the course version changed ({', '.join(parts)})")
    if not why and student not in in_gradebook:
        why.append("not in the gradebook")
    if not why and not (Path(out_dir) / f"{student}.json").is_file():
        why.append(f"its result {student}.json is gone")
    return "; ".join(why) or None
