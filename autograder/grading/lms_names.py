"""The names an LMS gives the files of its "download all submissions" zip, read by that LMS's own rules.

Each LMS names a downloaded file <its fixed part><the name the learner uploaded>. The fixed part says whose file it
is (and, for Blackboard, when it was submitted); the upload name is the learner's own text, read by nobody: a `\\`,
a `/`-free path, a classmate's whole LMS name or `_attempt_…` in it splits nothing. Each pattern is anchored at
the start and takes the leftmost fixed part the LMS's own code can write. Only Moodle's "download submissions in
folders" has a folder of the LMS's making: the one holding the file, named by the same prefix.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath

_TIME = r"(?P<time>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})"
_BB_USER = r"(?P<student>[A-Za-z0-9][A-Za-z0-9.@-]*)"  # the course's student ids hold no "_", which separates parts
# Canvas, lib/content_zipper.rb: get_filename joins [sortable name, "LATE" when submission.late?, user id] with "_"
# and keeps only [[:word:]] characters (sanitize_file_name; sanitize_user_name lowercases the name and removes any
# "_<digits>_" from it, "because we use /_\d+_/ to infer the user/attachment ids"); add_upload_submission appends
# "_<attachment id>_<display name>", the display name's \x00 / \ : * ? " < > | made "_". So the first two numbers
# between underscores are the user id and the attachment id, as Canvas itself reads them back (Assignment
# #infer_comment_context_from_filename). [[:word:]] is Unicode's: letters, combining marks, digits, "_".
_CANVAS_NAME = r"(?P<name>[\w\u0300-\u036f]+?)"
# Moodle, mod/assign/locallib.php download_submissions: prefix = clean_filename(str_replace('_', ' ', [group name
# "-"] fullname) . '_' . get_uniqueid_for_user(userid)) (the participant id, per assignment), then
# clean_filename(prefix . '_assignsubmission_file_' . file name) (clean_filename drops / \ : and quotes), or, "in
# folders" (the default since Moodle 3.1), prefix . '_assignsubmission_file_' as a folder, then the file's path
# in the submission and its name. Under blind marking the full name is get_string('participant', 'assign').
_MOODLE_PREFIX = r"(?P<name>[^_/\\]+)_(?P<student>\d+)_assignsubmission_(?P<plugin>[a-z]+)_"
LMS_NAMES = {
    "canvas": re.compile(_CANVAS_NAME + r"(?P<late>_LATE)?_(?P<student>\d+)_(?P<attachment>\d+)_(?P<upload>.+)"),
    "moodle": re.compile(_MOODLE_PREFIX + r"(?P<upload>.*)"),
    # Blackboard Learn, Grade Centre "Assignment File Download": <assignment>_<username>_attempt_<YYYY-MM-DD-hh-mm-ss>
    # _<upload name>, and a receipt <assignment>_<username>_attempt_<time>.txt per attempt. Its source and help pages
    # do not spell the name out: this is the form nbgrader's FileNameCollectorPlugin documents
    # (`ps1_bitdiddle_attempt_2016-01-30-15-00-00_problem1.ipynb`), as autograder/README.md shows it. The time is the
    # Blackboard server's wall clock, in a zone the name does not give.
    "blackboard": re.compile(rf"(?P<name>.+?)_{_BB_USER}_attempt_{_TIME}(?:_(?P<upload>.+)|(?P<receipt>\.txt))"),
}
# Canvas, Attachment.make_unique_filename: a file uploaded again under a name the student's folder already holds
# becomes <basename>-<n><extname> (n from 1 to 7, then a UUID), extname being the name's match of this pattern.
_CANVAS_EXT = r"(?P<ext>(?:\.[A-Za-z][A-Za-z0-9]*)*\.[A-Za-z0-9]*)"
_CANVAS_AGAIN = re.compile(r"(?P<base>.+)-(?:[1-9]\d*|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                           + _CANVAS_EXT)
MOODLE_ANONYMOUS = "Participant"  # get_string('participant', 'assign'): the name under blind marking, nobody's


class RefusedSubmission(ValueError):
    """A name, a time or a setting the intake will not guess about; the message says why and what to do."""


class ZoneNotSet(RefusedSubmission):
    """Blackboard's names are read, and the course has not said its Blackboard's zone: nothing is collected."""


@dataclass(frozen=True)
class LmsName:
    """What one download name says: the LMS, the student, the file (as the student named it), and the LMS's marks."""

    lms: str
    student: str
    file_name: str
    time: datetime | None = None  # when submitted, in UTC (naive, as nbgrader keeps times); None: the LMS gives none
    title: str = ""  # Blackboard: the assignment's title, the same for a whole download
    name: str = ""  # the student's name as the download writes it (Canvas's, Moodle's); "" when it gives none
    late: bool = False  # Canvas marked the submission late (_LATE)
    attachment: int = 0  # Canvas's attachment id: a newer upload has a larger one
    receipt: bool = False  # the LMS's own file beside a submission (Blackboard's .txt receipt, Moodle's online text)
    local: str = ""  # the time as the name gives it (the LMS's wall clock), for messages

    def __str__(self):
        return f"{self.lms}: student {self.student}, file {self.file_name}" + (f" at {self.when}" if self.time else "")

    @property
    def when(self):
        """'2026-12-02 08:15:42 UTC (09:15:42 in the LMS's zone, as the name says)'."""
        if self.time is None:
            return "(no time)"
        return f"{timestamp_text(self.time)} UTC ({self.local} as the name gives it)"


def timestamp_text(time):
    """timestamp.txt's text, exactly as nbgrader's zip_collect writes it (`isoformat(" ")`, no newline)."""
    return time.isoformat(" ")


def lms_time(text, zone):
    """An LMS's YYYY-MM-DD-hh-mm-ss, a wall-clock time in `zone` (an IANA name), as a naive UTC datetime.

    A wall time the zone's clocks skip or show twice (a daylight-saving change) is refused: either reading could
    decide whether work was late."""
    parts = text.split("-")
    if len(parts) != 6 or not all(p.isdigit() for p in parts):
        raise RefusedSubmission(f"expected a time YYYY-MM-DD-hh-mm-ss, got {text!r}")
    tz = zone_info(zone)
    try:
        local = datetime(*map(int, parts), tzinfo=tz)
    except ValueError as exc:
        raise RefusedSubmission(f"expected a time YYYY-MM-DD-hh-mm-ss, got {text!r} ({exc})") from None
    first, second = (local.replace(fold=f).astimezone(UTC).replace(tzinfo=None) for f in (0, 1))
    if first != second:
        shown = local.replace(fold=0).astimezone(UTC).astimezone(local.tzinfo).replace(tzinfo=None)
        what = "shows twice" if shown == local.replace(tzinfo=None) else "never shows"
        raise RefusedSubmission(f"the time {text} in {zone} {what} (a daylight-saving change): it reads as "
                                f"{timestamp_text(first)} and as {timestamp_text(second)} UTC")
    return first


NO_ZONE = ("Blackboard's names give each attempt's time on its server's clock without the zone: set the zone in "
           "autograder/course/nbgrader_config.py, c.LmsCollector.timezone = \"Europe/Berlin\" (your Blackboard's "
           "IANA zone; \"UTC\" if it runs on UTC), as the guide's section 2 says")


def zone_info(name):
    """The ZoneInfo of an IANA name; RefusedSubmission naming what was expected when it is unset or unknown."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not name:
        raise ZoneNotSet(NO_ZONE)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise RefusedSubmission(f"expected the LMS's time zone as an IANA name such as 'Europe/Berlin' or 'UTC', "
                                f"got {name!r}") from None


def check_formats(formats):
    unknown = [lms for lms in formats if lms not in LMS_NAMES]
    if unknown:
        raise RefusedSubmission(f"expected LMS formats among {', '.join(LMS_NAMES)}, got {', '.join(unknown)}")


def readings(path, formats=tuple(LMS_NAMES), zone=None):
    """{lms: LmsName, or the RefusedSubmission of a time it cannot tell} of every format that reads `path`.

    `path` is a member's path in a download (a zip member's, or below the folder it was unzipped into): only the
    file name counts, and the folder holding it when that folder is Moodle's. The learner's part is never split:
    a `\\` in it is a character of the name, not a folder."""
    check_formats(formats)
    path = PurePosixPath(str(path))
    if "moodle" in formats:
        folder = moodle_folder(path.parent.name)
        if folder is not None:  # Moodle's folder: the file's whole name is the learner's, read by nobody
            return {"moodle": _moodle(folder, path.name)}
    out = {}
    for lms in formats:
        m = LMS_NAMES[lms].fullmatch(path.name)
        if m is not None and (m.group("upload") or (lms == "blackboard" and m.group("receipt"))):
            try:
                found = _READERS[lms](m, zone)
            except RefusedSubmission as exc:
                found = exc
            if found is not None:
                out[lms] = found
    return out


def read_lms_name(path, formats=tuple(LMS_NAMES), zone=None):
    """Whose file `path` is, and when it was submitted, from its LMS download name: an LmsName, or None.

    One name read alone: a name two formats read differently, or a time that cannot be told, is refused
    (RefusedSubmission). A download's files are read together by intake.plan, which reads each download by one
    LMS and sets such a file aside instead."""
    found = {lms: r for lms, r in readings(path, formats, zone).items() if not getattr(r, "receipt", False)}
    for value in found.values():
        if isinstance(value, RefusedSubmission):
            raise value
    different = {(r.student, r.file_name, r.time) for r in found.values()}
    if len(different) > 1:
        raise RefusedSubmission(f"{PurePosixPath(str(path)).name!r} reads two ways: "
                                + " and ".join(map(str, found.values()))
                                + "; rename it to the one its LMS wrote, or set LmsCollector.formats")
    return next(iter(found.values()), None)


def inside_moodle_folder(path):
    """The match of the Moodle folder a file lies below without being directly in it (a folder of the student's
    own inside Moodle's), or None."""
    for folder in PurePosixPath(str(path)).parents[1:]:
        m = moodle_folder(folder.name)
        if m is not None:
            return m
    return None


def moodle_folder(name):
    """The match of Moodle's folder name <prefix>_assignsubmission_<plugin>_ (nothing after it), or None."""
    m = LMS_NAMES["moodle"].fullmatch(name)
    return m if m is not None and m.group("upload") == "" else None


def _moodle(m, file_name):
    name = m.group("name")
    anonymous = name.rsplit("-", 1)[-1] == MOODLE_ANONYMOUS
    return LmsName("moodle", m.group("student"), file_name, name="" if anonymous else name,
                   receipt=m.group("plugin") != "file")


def _canvas(m, _zone):
    name, student = m.group("name"), m.group("student")
    if name != name.lower() or name.startswith("anon") or student.startswith("0"):
        return None  # Canvas lowercases the name and writes database ids; "anon_<id>" is anonymous grading's: nobody
    if m.group("attachment").startswith("0"):
        return None
    return LmsName("canvas", student, canvas_upload_name(m.group("upload")), name=name, late=bool(m.group("late")),
                   attachment=int(m.group("attachment")))


def canvas_upload_name(upload):
    """The name the student uploaded, without the `-<n>` Canvas adds to a file uploaded again under that name."""
    m = _CANVAS_AGAIN.fullmatch(upload)
    return m.group("base") + m.group("ext") if m else upload


def _blackboard(m, zone):
    time = lms_time(m.group("time"), zone)
    local = m.group("time")
    local = f"{local[:10]} {local[11:].replace('-', ':')} in {zone}"
    if m.group("receipt"):
        return LmsName("blackboard", m.group("student"), "", time, m.group("name"), receipt=True, local=local)
    return LmsName("blackboard", m.group("student"), m.group("upload"), time, m.group("name"), local=local)


_READERS = {"canvas": _canvas, "moodle": lambda m, _zone: _moodle(m, m.group("upload")), "blackboard": _blackboard}
