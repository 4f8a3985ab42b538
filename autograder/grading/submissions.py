"""Find the students' submissions: nbgrader's `submitted/` layout, or an LMS zip download.

A folder: `<student>/<assignment>/<notebook>.ipynb` (what `nbgrader collect` and
`zip_collect` produce). A .zip file: either that layout inside, or the flat
files of an LMS download (Canvas, Moodle or Blackboard names, LMS_NAMES).
This module is the one place a download name is read for a student and a time:
`grade`'s zip through `unpack`, `nbgrader zip_collect` through LmsCollector,
the collector plugin the course's nbgrader_config.py names.
"""

import re
import shutil
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
TIMESTAMP = "timestamp.txt"  # nbgrader's (course.TIMESTAMP too: the two modules are independent layers)
_MAX_MEMBER = 50 * 1024 * 1024


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


def unpack(archive, assignment_id, target, config=None, log=print):
    """Unpack an LMS download into nbgrader's layout under `target`; return `target`.

    Only regular files are read, each under a size limit, and each is written to
    a path this function builds: names inside the zip never choose where a
    file goes (no `../` escapes). An LMS-named member is first staged as a file
    under its own name and folder, as zip_collect unzips it, and read by the same
    collector (LmsCollector); each student's timestamp.txt is then written as
    zip_collect writes it, so that either way of collecting gives the same bytes.
    """
    target = Path(target)
    staging = target.parent / "zip-files"
    collector = collector_class()(config=config) if config is not None else collector_class()()
    collector.log_to(log)
    with zipfile.ZipFile(archive) as zf:
        members = [info for info in zf.infolist() if not _ignored(info)]
        # every member is read before one is written: a later, newer attempt replaces an earlier one
        owners = [_owner(zf, info, assignment_id, collector, staging / f"{i:06d}", log) for i, info in
                  enumerate(members)]
        shutil.rmtree(staging, ignore_errors=True)  # read: only the chosen files are written, in nbgrader's layout
        target.mkdir(parents=True, exist_ok=True)
        for info, owner in zip(members, owners, strict=True):
            if owner is None or not collector.intake.is_kept(*owner):
                continue  # not a submission, or an attempt a newer one replaced (reported)
            folder = target / owner[0] / assignment_id
            folder.mkdir(parents=True, exist_ok=True)
            (folder / owner[1]).write_bytes(_read(zf, info))
    for student, time in collector.intake.times().items():
        (target / student / assignment_id / TIMESTAMP).write_text(timestamp_text(time), encoding="utf-8")
    return target


def _ignored(info):
    name = PurePosixPath(info.filename)
    return info.is_dir() or "__MACOSX" in name.parts or name.name.startswith(".")


def _read(zf, info):
    """A member's bytes, never more than the size limit (the header's size may lie)."""
    with zf.open(info) as src:
        return src.read(_MAX_MEMBER + 1)[:_MAX_MEMBER]


def _owner(zf, info, assignment_id, collector, staging, log):
    """(student, file name, where it was read from) of one zip member, or None (said in `log`) when it has none.

    From nbgrader's layout `<student>/<assignment>/<file>` if the member's path
    has it; else from its LMS download name, by the course's collector (LmsCollector).
    """
    if info.file_size > _MAX_MEMBER:
        log(f"skipping {info.filename}: larger than {_MAX_MEMBER // 2**20} MiB")
        return None
    parts = [p for p in PurePosixPath(info.filename).parts if p not in ("", ".", "..")]
    if assignment_id in parts[:-1] and parts.index(assignment_id) >= 1:  # nbgrader's layout, maybe in a folder
        k = parts.index(assignment_id)
        student, file_name, source = parts[k - 1], "/".join(parts[k + 1:]), info.filename
    else:
        source = _stage(zf, info, parts[-2:], staging)  # its name and the folder above it: all a name reader reads
        found = collector.collect(str(source)) if source else None
        if not found:
            if parts[-1].endswith(".ipynb") and str(source) not in collector.intake.set_aside:
                log(f"skipping {info.filename}: its name is none of the LMS download names the course reads "
                    "(Canvas, Moodle, Blackboard: see autograder/README.md)")
            return None
        student, file_name = found["student_id"], found["file_id"]
    if not student or not STUDENT_ID.match(student) or not file_name or "/" in file_name or file_name.startswith("."):
        log(f"skipping {info.filename}: no usable student id and file name in it")
        return None
    return student, file_name, str(source)


def _stage(zf, info, parts, staging):
    """The member written to `staging`/<its folder>/<its name> (both its own, no `..`), or None if it cannot be."""
    try:
        path = staging.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_read(zf, info))
    except (OSError, ValueError):  # a name too long for the file system, or holding a NUL
        return None
    return path


# ---------------------------------------------------------------- LMS download names
#
# Each LMS names a downloaded file <its fixed part><the name the learner uploaded>: the fixed part comes
# first, so each pattern is anchored at the start and takes the first (leftmost) fixed part, never one
# inside the learner's own upload name (`x_<classmate>_attempt_2099-…_02_forward_pass.ipynb`).
_TIME = r"(?P<time>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})"
_BB_USER = r"(?P<student>[A-Za-z0-9][A-Za-z0-9.@-]*)"  # STUDENT_ID without "_", which separates the parts
LMS_NAMES = {
    # Canvas, "Download Submissions": <sortable name>[_LATE]_<user id>_<attachment id>_<upload name>, as
    # canvas-lms builds it in lib/content_zipper.rb (get_filename, add_upload_submission): the name is lowercased
    # and stripped of non-word characters, the ids are database integers. No time is in the name.
    "canvas": re.compile(r"(?P<name>\w+?)(?:_LATE)?_(?P<student>[1-9]\d*)_[1-9]\d*_(?P<upload>.+)"),
    # Moodle, "Download all submissions": <full name>_<participant id>_assignsubmission_file_<upload name>, or,
    # with "Download submissions in folders" (the default since Moodle 3.1), that prefix as a folder holding the
    # upload: mod/assign/locallib.php download_submissions (the full name's "_" become spaces). No time either.
    "moodle": re.compile(r"(?P<name>[^_/]+)_(?P<student>\d+)_assignsubmission_file_(?P<upload>.*)"),
    # Blackboard Learn, Grade Centre "Assignment File Download":
    # <assignment>_<username>_attempt_<YYYY-MM-DD-hh-mm-ss>_<upload name> (and a .txt receipt per attempt). Its
    # source and help pages do not spell the name out; this is the form nbgrader's FileNameCollectorPlugin
    # documents (`ps1_bitdiddle_attempt_2016-01-30-15-00-00_problem1.ipynb`) and tools for its downloads read.
    "blackboard": re.compile(rf"(?P<name>.+?)_{_BB_USER}_attempt_{_TIME}_(?P<upload>.+)"),
}


class RefusedSubmission(ValueError):
    """A download name or a pair of files the intake will not guess about; the message names both readings."""


@dataclass(frozen=True)
class LmsName:
    lms: str
    student: str
    file_name: str
    time: datetime | None  # when submitted, in UTC (naive, as nbgrader keeps times); None: the LMS gives none
    title: str = ""  # the name's part before the student, where it is the same for a whole download (Blackboard's)

    def __str__(self):
        when = f" at {timestamp_text(self.time)} UTC" if self.time else ""
        return f"{self.lms}: student {self.student}, file {self.file_name}{when}"


def timestamp_text(time):
    """timestamp.txt's text, exactly as nbgrader's zip_collect writes it (`isoformat(" ")`, no newline)."""
    return time.isoformat(" ")


def lms_time(text, zone="UTC"):
    """An LMS's YYYY-MM-DD-hh-mm-ss, a wall-clock time in `zone` (an IANA name), as a naive UTC datetime.

    A wall time the zone's clocks skip or show twice (a daylight-saving change) is refused: either reading could
    decide whether work was late."""
    parts = text.split("-")
    if len(parts) != 6 or not all(p.isdigit() for p in parts):
        raise RefusedSubmission(f"expected a time YYYY-MM-DD-hh-mm-ss, got {text!r}")
    try:
        local = datetime(*map(int, parts), tzinfo=_zone(zone))
    except ValueError as exc:
        raise RefusedSubmission(f"expected a time YYYY-MM-DD-hh-mm-ss, got {text!r} ({exc})") from None
    first, second = (local.replace(fold=f).astimezone(UTC).replace(tzinfo=None) for f in (0, 1))
    if first != second:
        shown = local.replace(fold=0).astimezone(UTC).astimezone(local.tzinfo).replace(tzinfo=None)
        what = "shows twice" if shown == local.replace(tzinfo=None) else "never shows"
        raise RefusedSubmission(f"the time {text} in {zone} {what} (a daylight-saving change): it reads as "
                                f"{timestamp_text(first)} and as {timestamp_text(second)} UTC")
    return first


def _zone(name):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise RefusedSubmission(f"expected the LMS's time zone as an IANA name such as 'Europe/Berlin' or 'UTC', "
                                f"got {name!r}") from None


def read_lms_name(path, formats=tuple(LMS_NAMES), zone="UTC"):
    """Whose file `path` is, and when it was submitted, from its LMS download name: an LmsName, or None.

    `path` may be a zip member's path or an unpacked file's: only the file name counts, and the folder above
    it for Moodle's folders. A name that two formats read differently is refused (RefusedSubmission)."""
    unknown = [lms for lms in formats if lms not in LMS_NAMES]
    if unknown:
        raise RefusedSubmission(f"expected LMS formats among {', '.join(LMS_NAMES)}, got {', '.join(unknown)}")
    path = PurePosixPath(str(path).replace("\\", "/"))
    if "moodle" in formats:
        folder = _moodle_folder(path)
        if folder is not None:  # the folder is Moodle's; the file's whole name is the learner's, read by nobody
            return folder
    readings = {}
    for lms in formats:
        found = _read_as(lms, path, zone)
        if found is not None:
            readings[lms] = found
    different = {(r.student, r.file_name, r.time) for r in readings.values()}
    if len(different) > 1:
        raise RefusedSubmission(f"{str(path.name)!r} reads two ways: " + " and ".join(map(str, readings.values()))
                                + "; rename it to the one its LMS wrote, or set LmsCollector.formats")
    return next(iter(readings.values()), None)


def _read_as(lms, path, zone):
    m = LMS_NAMES[lms].fullmatch(path.name)
    upload = m and m.group("upload")
    if not m or not upload:
        return None
    if lms == "canvas" and (m.group("name") != m.group("name").lower() or m.group("name").startswith("anon_")):
        return None  # Canvas lowercases the name; "anon_<id>" is an anonymised download, which names nobody
    time = lms_time(m.group("time"), zone) if "time" in m.re.groupindex else None
    return LmsName(lms, m.group("student"), upload, time, m.group("name") if lms == "blackboard" else "")


def _moodle_folder(path):
    """Moodle's "Download submissions in folders": <prefix>_assignsubmission_file_/<upload name>."""
    m = LMS_NAMES["moodle"].fullmatch(path.parent.name)
    if m is None or m.group("upload") != "":
        return None
    return LmsName("moodle", m.group("student"), path.name, None)


class Intake:
    """One run's reading of an LMS download, file by file (zip_collect's plugin and `grade`'s zip both use it).

    It keeps, per student and file, the newest attempt, reports the one it replaces, and refuses two files
    that claim the same attempt."""

    def __init__(self, formats=tuple(LMS_NAMES), zone="UTC", log=print):
        self.formats, self.zone, self.log = tuple(formats), zone, log
        self.kept = {}  # (student, file name) -> (LmsName, the path it came from)
        self.title = None  # (the assignment's title in a Blackboard download, the path it was first read from)
        self.set_aside = set()  # the paths of older attempts and of files read twice (reported)

    def take(self, path):
        """The LmsName of `path` if it is the newest attempt so far of its file, else None (not an LMS name, or an
        attempt set aside: an older one, or the same file again; reported)."""
        found = read_lms_name(path, self.formats, self.zone)
        if found is None:
            return None
        self._same_title(found, path)
        key = (found.student, found.file_name)
        if key not in self.kept:
            self.kept[key] = (found, path)
            return found
        before, before_path = self.kept[key]
        if found.time is None or before.time is None or found.time == before.time:
            return self._again(found, path, before_path)
        newer, older = ((found, path), (before, before_path)) if found.time > before.time else \
            ((before, before_path), (found, path))
        self.log(f"{found.student}: {found.file_name} of {timestamp_text(newer[0].time)} replaces the older attempt "
                 f"of {timestamp_text(older[0].time)} ({_shown(older[1])})")
        self.kept[key] = newer
        self.set_aside.add(str(older[1]))
        return found if newer[0] is found else None

    def _same_title(self, found, path):
        """Blackboard titles every file of a download with the assignment's name: one read with another title
        has a username holding "_" (`ps1_john_smith_attempt_…`), which no pattern can split; refused, naming both."""
        if not found.title:
            return
        if self.title is None:
            self.title = (found.title, path)
        elif found.title != self.title[0]:
            raise RefusedSubmission(
                f"a Blackboard download names every file <assignment>_<username>_attempt_…, one assignment for all; "
                f"{_shown(self.title[1])} reads it as {self.title[0]!r} and {_shown(path)} as {found.title!r}: a "
                f"username holding '_' cannot be read (see autograder/README.md)")

    def _again(self, found, path, before_path):
        """A second file for an attempt already taken: set aside if it is the same bytes (a download collected
        twice), else refused, naming both."""
        if _same_bytes(path, before_path):
            self.log(f"{found.student}: {_shown(path)} is the same file as {_shown(before_path)}, read once")
            self.set_aside.add(str(path))
            return None
        raise RefusedSubmission(f"two files claim the same attempt of {found.student}'s {found.file_name}: "
                                f"{_shown(before_path)} and {_shown(path)}; keep one of them in the download")

    def is_kept(self, student, file_name, path):
        """False when `path` was read as an attempt of (student, file_name) that another one replaced."""
        kept = self.kept.get((student, file_name))
        return kept is None or kept[1] == path

    def times(self):
        """{student: the time of their newest kept file}, for timestamp.txt (as zip_collect keeps the newest)."""
        out = {}
        for (student, _), (found, _) in self.kept.items():
            if found.time is not None and (student not in out or found.time > out[student]):
                out[student] = found.time
        return out


def _same_bytes(a, b):
    try:
        return Path(a).read_bytes() == Path(b).read_bytes()
    except OSError:  # not files on disk (a bare name): nothing shows they are the same
        return False


def _shown(path):
    return repr(PurePosixPath(str(path)).name)


_COLLECTOR = None


def collector_class():
    """LmsCollector, nbgrader's collector plugin that reads names with this module's Intake.

    Made on first use, so that importing this module does not import nbgrader; the course's
    nbgrader_config.py names it as `autograder.grading.submissions.LmsCollector` (module __getattr__)."""
    global _COLLECTOR
    if _COLLECTOR is None:
        _COLLECTOR = _make_collector()
    return _COLLECTOR


def __getattr__(name):
    if name == "LmsCollector":
        return collector_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _make_collector():
    from nbgrader.plugins import FileNameCollectorPlugin
    from traitlets import List, Unicode

    class LmsCollector(FileNameCollectorPlugin):
        """`nbgrader zip_collect`'s reader of LMS download names: this module's Intake, not a `named_regexp`
        (nbgrader reads a regexp's YYYY-MM-DD-hh-mm-ss with dateutil, which takes the final -ss for a UTC offset)."""

        formats = List(Unicode(), default_value=list(LMS_NAMES),
                       help=f"The LMS download names to read, among {', '.join(LMS_NAMES)}.").tag(config=True)
        timezone = Unicode("UTC", help="The time zone (an IANA name) of the times in the LMS's file names; "
                           "timestamp.txt holds them in UTC.").tag(config=True)

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self._intake, self._say = None, None

        def log_to(self, log):
            self._say = log

        @property
        def intake(self):
            if self._intake is None:
                self._intake = Intake(self.formats, self.timezone, self._say or self.log.warning)
            return self._intake

        def collect(self, submitted_file):
            if PurePosixPath(str(submitted_file)).suffix not in self.valid_ext:
                return None
            try:
                found = self.intake.take(submitted_file)
            except RefusedSubmission as exc:
                if not hasattr(self.parent, "fail"):
                    raise
                self.parent.fail(f"{exc}. Nothing was collected.")  # zip_collect's own way to stop, exit code 1
            if found is None:
                return None
            # A datetime, not text: zip_collect then writes timestamp.txt as timestamp_text does.
            return {"student_id": found.student, "file_id": found.file_name, "timestamp": found.time}

    LmsCollector.__module__, LmsCollector.__qualname__ = __name__, "LmsCollector"
    return LmsCollector


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
