"""Find the students' submissions: nbgrader's `submitted/` layout, or an LMS zip download.

A folder: `<student>/<assignment>/<notebook>.ipynb` (what `nbgrader collect` and
`zip_collect` produce). A .zip file: either that layout inside, or the flat
files of an LMS download, whose names nbgrader's zip_collect would read with
`FileNameCollectorPlugin.named_regexp` (the course config sets one).
"""

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
_MAX_MEMBER = 50 * 1024 * 1024
_LMS_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d{2})-(\d{2})-(\d{2})$")


@dataclass(frozen=True)
class Submission:
    student: str
    folder: Path | None  # holds <notebook>.ipynb (and timestamp.txt); None: the student submitted nothing


def find(submitted, assignment_id, scratch, config=None, log=print):
    """The submissions of `assignment_id` under `submitted` (a folder or a .zip), sorted by student id.

    A zip is unpacked into `scratch`. Folders whose name is not a valid student
    id are skipped with a message.
    """
    submitted = Path(submitted)
    if submitted.is_file() and zipfile.is_zipfile(submitted):
        submitted = unpack(submitted, assignment_id, Path(scratch) / "unzipped", config, log)
    elif not submitted.is_dir():
        raise FileNotFoundError(f"expected a folder <student>/{assignment_id}/<notebook>.ipynb or a .zip, "
                                f"got {submitted} (it does not exist or is neither)")
    out = []
    for folder in sorted(p for p in submitted.iterdir() if p.is_dir()):
        if not STUDENT_ID.match(folder.name):
            log(f"skipping {folder}: {folder.name!r} is not a valid student id")
            continue
        target = folder / assignment_id
        out.append(Submission(folder.name, target if target.is_dir() else None))
    return out


def _lms_name(path, config):
    """nbgrader's FileNameCollectorPlugin applied to one unpacked file: dict(student_id, file_id, ...) or None."""
    from nbgrader.plugins import FileNameCollectorPlugin

    plugin = FileNameCollectorPlugin(config=config) if config is not None else FileNameCollectorPlugin()
    if not plugin.named_regexp:
        return None
    return plugin.collect(str(path))


def unpack(archive, assignment_id, target, config=None, log=print):
    """Unpack an LMS download into nbgrader's layout under `target`; return `target`.

    Only regular files are read, each under a size limit, and each is written to
    a path this function builds: names inside the zip never choose where a
    file goes (no `../` escapes).
    """
    target = Path(target)
    raw = target.parent / "zip-files"
    raw.mkdir(parents=True, exist_ok=True)
    target.mkdir(parents=True, exist_ok=True)
    latest = {}  # (student, file) -> timestamp text
    with zipfile.ZipFile(archive) as zf:
        for i, info in enumerate(zf.infolist()):
            name = PurePosixPath(info.filename)
            if info.is_dir() or "__MACOSX" in name.parts or name.name.startswith("."):
                continue
            if info.file_size > _MAX_MEMBER:
                log(f"skipping {info.filename}: larger than {_MAX_MEMBER // 2**20} MiB")
                continue
            owner = _owner(zf, info, assignment_id, raw / f"{i:06d}_{name.name}", config, log)
            if owner is None:
                continue
            student, file_name, stamp = owner
            if (student, file_name) in latest and (stamp or "") < (latest[student, file_name] or ""):
                continue  # an older attempt of a file already taken
            latest[student, file_name] = stamp
            folder = target / student / assignment_id
            folder.mkdir(parents=True, exist_ok=True)
            (folder / file_name).write_bytes(_read(zf, info))
            if stamp:
                (folder / "timestamp.txt").write_text(stamp + "\n", encoding="utf-8")
    return target


def _read(zf, info):
    """A member's bytes, never more than the size limit (the header's size may lie)."""
    with zf.open(info) as src:
        return src.read(_MAX_MEMBER + 1)[:_MAX_MEMBER]


def _owner(zf, info, assignment_id, staged, config, log):
    """(student, file name, timestamp or None) of one zip member, or None (said in `log`) when it has none.

    From nbgrader's layout `<student>/<assignment>/<file>` if the member's path
    has it; else from the file name, by the course's FileNameCollectorPlugin
    (the member is first staged at `staged` for the plugin to read).
    """
    name = PurePosixPath(info.filename)
    student, file_name, stamp = None, None, None
    parts = [p for p in name.parts if p not in ("", ".", "..")]
    if assignment_id in parts[:-1]:  # nbgrader's own layout, possibly under a top folder
        k = parts.index(assignment_id)
        if k >= 1:
            student, file_name = parts[k - 1], "/".join(parts[k + 1:])
    if student is None:
        staged.write_bytes(_read(zf, info))
        found = _lms_name(staged, config)
        if not found:
            if name.suffix == ".ipynb":
                log(f"skipping {info.filename}: its name does not match "
                    "FileNameCollectorPlugin.named_regexp (see autograder/README.md)")
            return None
        student, file_name, stamp = found.get("student_id"), found.get("file_id"), found.get("timestamp")
    if not student or not STUDENT_ID.match(student) or not file_name or "/" in file_name or file_name.startswith("."):
        log(f"skipping {info.filename}: no usable student id and file name in it")
        return None
    return student, file_name, _normal_timestamp(stamp)


def _normal_timestamp(stamp):
    """LMS timestamps such as 2024-01-30-15-00-00, as nbgrader reads them ('2024-01-30 15:00:00')."""
    if not stamp:
        return None
    m = _LMS_TIMESTAMP.match(stamp)
    return f"{m.group(1)} {m.group(2)}:{m.group(3)}:{m.group(4)}" if m else stamp


class WrongAssignment(ValueError):
    """No submission holds the assignment: the id is wrong, or the folder is another assignment's."""


def require_assignment(found, assignment_id, notebooks, root):
    """Refuse (WrongAssignment) when no submission in `found` holds one of `notebooks` (names without .ipynb).

    Grading such a folder would write a 0 for every student into the gradebook: it is
    nearly always a wrong assignment id, and the message names what the folder holds.
    """
    if any(s.folder is not None and any((s.folder / f"{n}.ipynb").is_file() for n in notebooks) for s in found):
        return
    wanted = ", ".join(f"{n}.ipynb" for n in notebooks)
    raise WrongAssignment(f"no submission in {root} holds {assignment_id} ({wanted}); found {what_is_in(root)}. "
                          "Check the assignment id; nothing was graded or written.")


def what_is_in(root, limit=8):
    """What a submissions folder holds, for a message: its assignment folders and notebooks, with counts."""
    folders, notebooks, students = {}, {}, 0
    root = Path(root)
    for student in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()) if root.is_dir() else []:
        students += 1
        for sub in student.iterdir():
            if sub.is_dir() and not sub.is_symlink():
                folders[sub.name] = folders.get(sub.name, 0) + 1
                for nb in sub.glob("*.ipynb"):
                    notebooks[nb.name] = notebooks.get(nb.name, 0) + 1
    if not students:
        return "no student folders"

    def listed(counts):
        items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return ", ".join(f"{name!r} ({n})" for name, n in items[:limit]) + (" ..." if len(items) > limit else "")

    return (f"{students} student folder(s) holding the assignment folders {listed(folders) or 'none'}"
            f" and the notebooks {listed(notebooks) or 'none'}")


def missing_message(folder, notebook):
    """Why a notebook counts as missing, naming the notebooks that were submitted instead (a near-miss name)."""
    message = f"no {notebook}.ipynb was submitted"
    others = sorted(p.name for p in Path(folder).glob("*.ipynb")) if folder is not None and Path(folder).is_dir() \
        else []
    if others:
        shown = ", ".join(repr(n) for n in others[:5]) + (" ..." if len(others) > 5 else "")
        message += f"; found {shown}: the file must be named exactly {notebook}.ipynb"
    return message
