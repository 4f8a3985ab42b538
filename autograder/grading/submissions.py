"""Find the students' submissions: nbgrader's `submitted/` layout, or an LMS zip download.

A folder: `<student>/<assignment>/<notebook>.ipynb` (what `nbgrader collect` and
`zip_collect` produce). A .zip file: either that layout inside, or the flat
files of an LMS download (Canvas, Moodle or Blackboard names: lms_names.py).
A download is read in one place, intake.plan: `grade`'s zip through `unpack`,
`nbgrader zip_collect` through LmsExtractor and LmsCollector, the plugins the
course's nbgrader_config.py names.
"""

import functools
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .. import private
from ..limits import MAX_FILE_BYTES, MiB
from ..sanitise import for_terminal
from . import intake
from .intake import STUDENT_ID
from .lms_names import LMS_NAMES, LmsName, RefusedSubmission, lms_time, read_lms_name, timestamp_text  # noqa: F401

TIMESTAMP = "timestamp.txt"  # nbgrader's (course.TIMESTAMP too: the two modules are independent layers)


@dataclass(frozen=True)
class Submission:
    student: str
    folder: Path | None  # holds <notebook>.ipynb (and timestamp.txt); None: the student submitted nothing


def find(submitted, assignment_id, scratch, config=None, log=print, course_root=None):
    """The submissions of `assignment_id` under `submitted` (a folder or a .zip), sorted by student id.

    A zip is unpacked into `scratch` (what it says of each student kept in `course_root`'s roster, when given).
    Folders whose name is not a valid student id are skipped with a message.
    """
    submitted = Path(submitted)
    if submitted.is_file() and zipfile.is_zipfile(submitted):
        submitted = unpack(submitted, assignment_id, Path(scratch) / "unzipped", config, log, course_root=course_root)
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


def unpack(archive, assignment_id, target, config=None, log=print, course_root=None):
    """Unpack a download into nbgrader's layout under `target`; return `target`.

    Only regular files are read, each under a size limit, and each is written to a path this function builds:
    names inside the zip never choose where a file goes (no `../` escapes). A zip of LMS download names is read
    by intake.plan, as zip_collect reads it (LmsExtractor, LmsCollector): the same files kept, the same
    timestamp.txt bytes, so either way of collecting gives the same folders; what the download said of each
    student goes into the course's roster (`course_root`). Only a zip that holds no LMS download name is read
    as nbgrader's own layout, `<student>/<assignment>/<file>` (maybe inside a folder).
    """
    target = private.folder(target)
    collector = collector_class()(config=config) if config is not None else collector_class()()
    with zipfile.ZipFile(archive) as zf:
        infos = [info for info in zf.infolist() if not _ignored(info) and _small(info, log)]
        members = [intake.Member(i, info.filename, read=functools.partial(_read, zf, info))
                   for i, info in enumerate(infos)]
        decided = intake.plan(members, collector.formats, collector.timezone)
        for line in decided.said:
            log(line)
        if not decided.lms_named:
            for info in infos:
                owner = _nbgrader_owner(info, assignment_id, log)
                if owner is not None:
                    _write(target, owner[0], assignment_id, owner[1], _read(zf, info))
            return target
        for member, found in decided.kept.values():
            _write(target, found.student, assignment_id, found.file_name, member.read())
    for student, time in decided.times().items():
        private.write_text(target / student / assignment_id / TIMESTAMP, timestamp_text(time))
    if course_root is not None:
        intake.save_roster(course_root, assignment_id, decided.students)
    return target


def _write(target, student, assignment_id, file_name, data):
    private.write_bytes(private.folder(target / student / assignment_id) / file_name, data)


def _ignored(info):
    name = PurePosixPath(info.filename)
    return info.is_dir() or "__MACOSX" in name.parts or name.name.startswith(".")


def _small(info, log):
    if info.file_size > MAX_FILE_BYTES:
        log(f"skipping {info.filename}: larger than {MAX_FILE_BYTES // MiB} MiB")
        return False
    return True


def _read(zf, info):
    """A member's bytes, never more than the size limit (the header's size may lie)."""
    with zf.open(info) as src:
        return src.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]


def _nbgrader_owner(info, assignment_id, log):
    """(student, file name) of a member in nbgrader's layout `[<folder>/]<student>/<assignment>/<file>`, or None."""
    parts = [p for p in PurePosixPath(info.filename).parts if p not in ("", ".", "..")]
    if assignment_id not in parts[:-1] or parts.index(assignment_id) < 1:
        if parts and parts[-1].endswith(".ipynb"):
            log(f"skipping {info.filename}: neither an LMS download name (Canvas, Moodle, Blackboard: see "
                f"autograder/README.md) nor nbgrader's <student>/{assignment_id}/<file>")
        return None
    k = parts.index(assignment_id)
    student, file_name = parts[k - 1], "/".join(parts[k + 1:])
    if not STUDENT_ID.match(student) or not file_name or "/" in file_name or file_name.startswith("."):
        log(f"skipping {info.filename}: no usable student id and file name in it")
        return None
    return student, file_name


_COLLECTOR, _EXTRACTOR = None, None


def collector_class():
    """LmsCollector, nbgrader's collector plugin that reads names with intake.plan.

    Made on first use, so that importing this module does not import nbgrader; the course's
    nbgrader_config.py names it as `autograder.grading.submissions.LmsCollector` (module __getattr__)."""
    global _COLLECTOR
    if _COLLECTOR is None:
        _COLLECTOR = _make_collector()
    return _COLLECTOR


def extractor_class():
    """LmsExtractor, nbgrader's extractor plugin: it unzips, reads the downloads (intake.plan), and leaves in
    zip_collect's extracted/ folder only the files kept, so that zip_collect sees no older attempt, receipt or
    file read twice (nothing for it to skip, or to take for a duplicate)."""
    global _EXTRACTOR
    if _EXTRACTOR is None:
        _EXTRACTOR = _make_extractor()
    return _EXTRACTOR


def __getattr__(name):
    if name == "LmsCollector":
        return collector_class()
    if name == "LmsExtractor":
        return extractor_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _make_collector():
    from nbgrader.plugins import FileNameCollectorPlugin
    from traitlets import List, Unicode

    class LmsCollector(FileNameCollectorPlugin):
        """`nbgrader zip_collect`'s reader of LMS download names: intake.plan's decision, not a `named_regexp`
        (nbgrader reads a regexp's YYYY-MM-DD-hh-mm-ss with dateutil, which takes the final -ss for a UTC offset)."""

        formats = List(Unicode(), default_value=list(LMS_NAMES),
                       help=f"The LMS download names to read, among {', '.join(LMS_NAMES)}.").tag(config=True)
        timezone = Unicode("", help="The course's time zone (an IANA name such as Europe/Berlin): the zone of the "
                           "times in Blackboard's names (timestamp.txt holds them in UTC), and the zone due dates "
                           "are shown in beside UTC. Blackboard's names are not read while it is unset."
                           ).tag(config=True)

        def collect(self, submitted_file):
            if PurePosixPath(str(submitted_file)).suffix not in self.valid_ext:
                return None
            decided = getattr(self.parent, "lms_plan", None)
            if decided is None:  # the course's extractor did not run: read the unzipped folder as it would
                try:
                    decided = self.parent.lms_plan = _plan_extracted(self.parent, self.formats, self.timezone)
                except RefusedSubmission as exc:
                    self.parent.fail(f"{exc}. Nothing was collected.")
            found = decided.owner(os.path.abspath(submitted_file))
            if found is None:
                return None
            # A datetime, not text: zip_collect then writes timestamp.txt as timestamp_text does.
            return {"student_id": found.student, "file_id": found.file_name, "timestamp": found.time}

    LmsCollector.__module__, LmsCollector.__qualname__ = __name__, "LmsCollector"
    return LmsCollector


def _make_extractor():
    from nbgrader.plugins import ExtractorPlugin

    class LmsExtractor(ExtractorPlugin):
        """nbgrader's extractor, then intake.plan over what it unzipped: the files not kept are removed from
        extracted/ (each said once, by the plan), the roster saved, and the rest of zip_collect's run writes its
        files readable by the instructor only."""

        def extract(self, archive_path, extracted_path):
            os.umask(0o077)  # zip_collect's own copies into submitted/ follow: student data, the owner's only
            super().extract(archive_path, extracted_path)
            collector = getattr(self.parent, "collector_plugin_inst", None)
            formats = getattr(collector, "formats", list(LMS_NAMES))
            zone = getattr(collector, "timezone", "")
            try:
                decided = _plan_extracted(self.parent, formats, zone, archive_path, extracted_path)
            except RefusedSubmission as exc:
                self.parent.fail(f"{exc}. Nothing was collected.")
            for line in decided.said:
                self.log.warning(for_terminal(line))
            kept = {member.key for member, _ in decided.kept.values()}
            for key in _extracted_files(extracted_path):
                if key not in kept and decided.lms_named:
                    os.remove(key)
            self.parent.lms_plan = decided
            coursedir = self.parent.coursedir
            intake.save_roster(coursedir.root, coursedir.assignment_id, decided.students)
            private.folder(Path(coursedir.root) / "downloaded")
            for folder in (Path(coursedir.root) / "downloaded" / coursedir.assignment_id, Path(extracted_path),
                           Path(coursedir.root) / coursedir.submitted_directory):
                private.tighten(folder)  # zip_collect copies modes: what it copies into submitted/ is 0600 too

    LmsExtractor.__module__, LmsExtractor.__qualname__ = __name__, "LmsExtractor"
    return LmsExtractor


def _extracted_files(extracted_path):
    return sorted(os.path.join(root, f) for root, _, files in os.walk(extracted_path) for f in files)


def _plan_extracted(app, formats, zone, archive_path=None, extracted_path=None):
    """intake.plan of zip_collect's extracted/ folder: each zip unzipped into a folder of its own is a download,
    ordered by when its zip was put into archive/ (its modification time)."""
    archive_path = archive_path or app._format_collect_path(app.archive_directory)
    extracted_path = extracted_path or app._format_collect_path(app.extracted_directory)
    downloads = {}  # the folder a zip was unzipped into -> (the zip's name, its modification time)
    for root, _, files in os.walk(archive_path):
        for name in files:
            stem, ext = os.path.splitext(name)
            if ext in (".zip", ".gz"):
                stem = stem[:-4] if stem.endswith(".tar") else stem
                folder = os.path.normpath(os.path.join(extracted_path, os.path.relpath(root, archive_path), stem))
                downloads[folder] = (name, os.stat(os.path.join(root, name)).st_mtime)
    members = []
    for path in _extracted_files(extracted_path):
        folder = next((f for f in downloads if path.startswith(f + os.sep)), None)
        name, order = downloads.get(folder, ("", 0.0))
        rel = os.path.relpath(path, folder or extracted_path)
        members.append(intake.Member(path, rel, name, order, functools.partial(_file_bytes, path)))
    return intake.plan(members, formats, zone)


def _file_bytes(path):
    with open(path, "rb") as f:
        return f.read(MAX_FILE_BYTES + 1)


class WrongAssignment(ValueError):
    """No submission holds the assignment: the id is wrong, or the folder is another assignment's."""


def require_assignment(found, assignment_id, notebooks, root, course_root=None, archive=None):
    """Refuse (WrongAssignment) a folder that is not the class's submissions of the assignment: one of the course's
    own folders (its root, release/, source/...), or one where no submission holds one of `notebooks` (names
    without .ipynb).

    Grading such a folder would write a 0 for every student into the gradebook, or grade the solutions as a
    student. The message blames what is wrong: the folder (its layout, named from what it holds) or, when the
    students' folders hold other assignments, the assignment id. `archive`: the LMS zip `root` was unpacked from.
    """
    course_folder = _course_folder(root, course_root)
    if course_folder:
        raise WrongAssignment(f"{root} is {course_folder}, not the submissions: give the folder that holds one "
                              f"folder per student ({Path(course_root) / 'submitted'}); nothing was graded or written.")
    if any(s.folder is not None and any((s.folder / f"{n}.ipynb").is_file() for n in notebooks) for s in found):
        return
    wanted = ", ".join(f"{n}.ipynb" for n in notebooks)
    if archive is not None and not found:
        raise WrongAssignment(f"no file in {archive} is a submission of {assignment_id} ({wanted}), by its LMS "
                              f"download name or a <student>/{assignment_id}/ path: check the assignment id, and that "
                              "the zip is this assignment's download; nothing was graded or written.")
    layout = f"<folder>/<student>/{assignment_id}/{notebooks[0]}.ipynb"
    root, has_folder = Path(root), any(s.folder is not None for s in found)
    if (root / assignment_id).is_dir() or any(root.glob("*.ipynb")):
        why = (f"it looks like one student's folder (it holds {assignment_id}/ or notebooks itself): give the folder "
               f"above it, laid out as {layout}")
    elif not found:
        why = f"it holds no student folders: expected {layout}"
    elif has_folder:
        why = f"the {assignment_id}/ folders hold no notebook of that name: check the file names"
    elif not any(p.is_dir() for s in found for p in (root / s.student).iterdir()):
        why = f"the student folders hold no assignment folder: expected {layout}"
    else:
        why = "Check the assignment id"
    raise WrongAssignment(f"no submission in {root} holds {assignment_id} ({wanted}); found {what_is_in(root)}. "
                          f"{why[0].upper()}{why[1:]}; nothing was graded or written.")


def _course_folder(root, course_root):
    """'the course's root' or 'the course's release/ folder'... when `root` is one of them (never the submissions),
    else ''."""
    if course_root is None:
        return ""
    course, here = Path(course_root).resolve(), Path(root).resolve()
    if here == course:
        return "the course's root"
    for name in ("source", "release", "autograded", "feedback", "results", "downloaded"):
        if here == course / name:
            return f"the course's {name}/ folder"
    return ""


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
