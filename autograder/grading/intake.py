"""One reading of an assignment's LMS downloads, file by file: `grade` given a zip and `nbgrader zip_collect` both.

`plan` reads every file's name first, then decides:

- each download is read by one LMS's names, the one that reads most of its files (lms_names.py): a file another
  LMS would read otherwise is read by the download's LMS, and a name no format reads is no submission;
- per student, the newest file of each name is kept: Blackboard's by the attempt's time, Canvas's by the
  attachment id (a newer upload has a larger one, whatever `-1` Canvas gave its name), Moodle's by the download
  (a later download replaces an earlier one for the students it holds: Moodle's names hold no time);
- a file that cannot be read (a time a clock change makes unclear, two different files claiming one attempt, a
  Blackboard username holding "_", a file in a folder of the student's inside Moodle's) is set aside, named, with
  what to do; the rest of the class is collected. Only a setting (an unknown LMS, a zone not set) stops it all.

What the downloads say of each student (the LMS, the name it writes, Canvas's `_LATE` mark) is kept beside them in
ROSTER, for the gradebook, grades.csv and the exports.
"""

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .. import private
from .lms_names import (
    LMS_NAMES,
    MOODLE_ANONYMOUS,
    RefusedSubmission,
    ZoneNotSet,
    check_formats,
    inside_moodle_folder,
    readings,
    timestamp_text,
)

STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$")
ROSTER = "lms-roster.json"  # in <course>/downloaded/<assignment>/: what the downloads said of each student


@dataclass(frozen=True)
class Member:
    """One file of a download."""

    key: object  # what the caller finds it by (a zip member's index, an unzipped file's path)
    path: str  # its path inside its download
    download: str = ""  # the download's name ("" when there is one)
    order: float = 0.0  # when the download came: a later one replaces an earlier one's files (Moodle's)
    read: Callable[[], bytes] | None = None  # its bytes, for telling a file read twice from a different one

    @property
    def shown(self):
        return repr(f"{self.download}: {self.path}" if self.download else self.path)

    def same_bytes(self, other):
        try:
            return self.read is not None and other.read is not None and self.read() == other.read()
        except OSError:
            return False


@dataclass
class Plan:
    """What a reading of downloads decided: the files kept (by member key), those set aside, and what to say."""

    kept: dict = field(default_factory=dict)  # member key -> (Member, LmsName)
    set_aside: list = field(default_factory=list)  # (Member, why and what to do)
    said: list = field(default_factory=list)  # lines for the terminal
    students: dict = field(default_factory=dict)  # student -> {"lms", "name", "late"}
    quiet: Counter = field(default_factory=Counter)  # files left out that need no word each: receipts, read twice
    lms_named: bool = False  # some file carries an LMS download name

    def owner(self, key):
        """The LmsName of the kept member `key`, or None."""
        kept = self.kept.get(key)
        return kept[1] if kept else None

    def times(self):
        """{student: the time of their newest kept file}, for timestamp.txt (as zip_collect keeps the newest)."""
        out = {}
        for _, found in self.kept.values():
            if found.time is not None and (found.student not in out or found.time > out[found.student]):
                out[found.student] = found.time
        return out


def plan(members, formats=tuple(LMS_NAMES), zone=None):
    """The Plan of reading `members` (Member records of one or more downloads)."""
    check_formats(formats)
    out, candidates = Plan(), []
    by_download = {}
    for member in members:
        by_download.setdefault(member.download, []).append(member)
    for group in by_download.values():
        candidates += _read_download(group, formats, zone, out)
    for student_files in _by_student(candidates).values():
        for member, found in _newest(student_files, out):
            out.kept[member.key] = (member, found)
    _roster(out)
    _summarise(out, zone)
    return out


def _read_download(members, formats, zone, out):
    """[(Member, LmsName)] of one download's files its LMS reads; the others set aside or left out (in `out`)."""
    read = {m.key: readings(m.path, formats, zone) for m in members}
    counts = Counter(lms for r in read.values() for lms in r)
    out.lms_named |= bool(counts)
    top = counts.most_common()
    lms = top[0][0] if top and (len(top) == 1 or top[0][1] > top[1][1]) else None
    found = []
    for member in members:
        reading = _reading(member, read[member.key], lms, out)
        if reading is not None:
            found.append((member, reading))
    return _one_title(found, out)


def _reading(member, read, lms, out):
    """The LmsName `member` is read as in a download of `lms` (None: ambiguous), or None (set aside, said why)."""
    if inside_moodle_folder(member.path) is not None:
        return _aside(out, member, "it lies in a folder of the student's inside Moodle's folder: move it up into "
                      "Moodle's folder if it is the notebook, then collect again, or grade it by hand")
    value = read.get(lms) if lms else _agreed(read)
    if lms is None and value is None and len(read) > 1:
        return _aside(out, member, "its name reads two ways (" + " and ".join(map(str, read.values())) + "); set "
                      "c.LmsCollector.formats = [\"canvas\"] (your LMS) in autograder/course/nbgrader_config.py")
    if isinstance(value, ZoneNotSet):
        raise value
    if isinstance(value, RefusedSubmission):
        return _aside(out, member, f"{value}; grade it by hand, or put it into submitted/<student>/<assignment>/ "
                      "with a timestamp.txt holding its time in UTC (Blackboard's receipt states it)")
    if value is None:
        if read or PurePosixPath(member.path).suffix == ".ipynb":
            return _aside(out, member, f"its name is none of the {lms or 'LMS'} download names the course reads "
                          "(Canvas, Moodle, Blackboard: see autograder/README.md)")
        out.quiet["files that are not submissions"] += 1
        return None
    if value.receipt:
        out.quiet[f"{value.lms} receipts"] += 1
        return None
    return _checked(member, value, out)


def _agreed(read):
    """The one reading every format that reads a name agrees on (a download whose LMS is not clear), or None."""
    values = list(read.values())
    if len(values) == 1:
        return values[0]
    if not values or any(isinstance(v, RefusedSubmission) for v in values):
        return None
    return values[0] if len({(v.student, v.file_name, v.time) for v in values}) == 1 else None


def _checked(member, found, out):
    """`found`, or None (set aside) when its student or file name cannot stand in a folder of the course."""
    if not STUDENT_ID.match(found.student):
        return _aside(out, member, f"{found.student!r} is no student id the course can use (letters, digits, "
                      "'.', '@', '-'); grade it by hand")
    name = found.file_name
    if not name or "/" in name or name.startswith(".") or name in (".", ".."):
        return _aside(out, member, f"{name!r} is no file name a submission folder can hold; grade it by hand")
    return found


def _one_title(found, out):
    """Blackboard titles every file of a download with the assignment's name: a file read with another title has a
    username holding "_" (`FFN02_john_smith_attempt_…`), which no pattern can split; set aside, naming both."""
    titles = Counter(f.title for _, f in found if f.lms == "blackboard")
    if len(titles) < 2:
        return found
    title = titles.most_common(1)[0][0]
    kept = []
    for member, f in found:
        if f.lms == "blackboard" and f.title != title:
            _aside(out, member, f"this download's files are named {title}_<username>_attempt_…, and this one reads "
                   f"as {f.title}_{f.student}_…: its username holds '_', which the course's student ids cannot; "
                   "rename the file with the username written without '_' (that is then the student's id) and "
                   "collect again, or grade it by hand")
        else:
            kept.append((member, f))
    return kept


def _aside(out, member, why):
    out.set_aside.append((member, why))
    return None


def _by_student(candidates):
    out = {}
    for member, found in candidates:
        out.setdefault(found.student, []).append((member, found))
    return out


def _newest(files, out):
    """The files one student keeps: from their latest download (Moodle's, Canvas's), each name's newest."""
    files = _latest_download(files, out)
    by_name = {}
    for member, found in files:
        by_name.setdefault(found.file_name, []).append((member, found))
    kept = []
    for same in by_name.values():
        kept += _newest_of(same, out)
    return kept


def _latest_download(files, out):
    """Moodle's and Canvas's download holds a student's whole current submission: the latest one that holds the
    student replaces the others (Canvas: the one holding their newest attachment; Moodle: the download that came
    last). Blackboard's attempts each carry their time: all are kept for _newest_of."""
    if files[0][1].lms == "blackboard":
        return files
    rank = (lambda mf: mf[1].attachment) if files[0][1].lms == "canvas" else (lambda mf: mf[0].order)
    latest = max(files, key=rank)[0].download
    kept = [(m, f) for m, f in files if m.download == latest]
    for member, found in files:
        if member.download != latest:
            _replaced(out, (member, found), next((k for k in kept if k[1].file_name == found.file_name), None),
                      f"from {latest!r} replaces the one from {member.download!r} ("
                      + ("its attachment is newer)" if found.lms == "canvas" else
                         "Moodle's names hold no time: the download that came later, by when it was put into "
                         "archive/, is the newer)"))
    return kept


def _newest_of(same, out):
    """Of one student's files of one name, the newest (a list of one), or none: two different files claim it."""
    key = {"blackboard": lambda mf: mf[1].time, "canvas": lambda mf: mf[1].attachment}.get(same[0][1].lms,
                                                                                            lambda mf: 0)
    newest = max(key(mf) for mf in same)
    top = [mf for mf in same if key(mf) == newest]
    first = top[0]
    for other in top[1:]:
        if not first[0].same_bytes(other[0]):
            shown = " and ".join(m.shown for m, _ in top)
            for member, _ in top:
                _aside(out, member, f"two different files claim the same attempt of {first[1].student}'s "
                       f"{first[1].file_name} ({shown}); keep the right one in the download (archive/) and collect "
                       "again, or grade it by hand")
            return []
        out.quiet["files read twice (the same bytes in two downloads)"] += 1
    for mf in same:
        if key(mf) != newest:
            why = (f"of {first[1].when} replaces the older attempt of {mf[1].when}" if first[1].lms == "blackboard"
                   else "(a newer attachment) replaces the older one")
            _replaced(out, mf, first, why)
    return [first]


def _replaced(out, older, newer, why):
    """Say that `newer` (Member, LmsName) replaces `older`, unless both are the same bytes (read once, quietly)."""
    member, found = older
    if newer is not None and member.same_bytes(newer[0]):
        out.quiet["files read twice (the same bytes in two downloads)"] += 1
        return
    what = f"{found.file_name} {why}" if newer is not None else f"the files from {member.download!r} are replaced"
    out.said.append(f"{found.student}: {what} ({member.shown} left out)")


def _roster(out):
    for _, found in out.kept.values():
        entry = out.students.setdefault(found.student, {"lms": found.lms, "name": "", "late": False})
        entry["name"] = entry["name"] or found.name
        entry["late"] |= found.late


def _summarise(out, zone):
    for member, why in out.set_aside:
        out.said.append(f"set aside {member.shown}: {why}")
    late = sorted(s for s, e in out.students.items() if e["late"])
    if late:
        out.said.append(f"Canvas marked {len(late)} submission(s) late (_LATE): " + ", ".join(
            _named(s, out.students[s]["name"]) for s in late) + "; Canvas's late policy applies there (see the "
            "guide's 'Late work'), grades.csv marks them in lms_marked_late")
    if any(found.lms == "blackboard" for _, found in out.kept.values()):
        out.said.append(f"Blackboard's attempt times read in {zone} (c.LmsCollector.timezone), kept in UTC")
    if out.quiet:
        out.said.append("left out: " + ", ".join(f"{n} {what}" for what, n in sorted(out.quiet.items())))


def _named(student, name):
    return f"{student} ({name})" if name else student


# ---------------------------------------------------------------- the roster, beside the downloads


def roster_path(course_root, assignment_id):
    return Path(course_root) / "downloaded" / assignment_id / ROSTER


def roster(course_root, assignment_id):
    """{student: {"lms", "name", "late"}} the downloads of `assignment_id` said (empty when none was read)."""
    try:
        data = json.loads(roster_path(course_root, assignment_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    students = data.get("students") if isinstance(data, dict) else None
    return {s: e for s, e in students.items() if isinstance(e, dict)} if isinstance(students, dict) else {}


def save_roster(course_root, assignment_id, students):
    """Merge `students` (a Plan's) into the roster: a student a download held is as that download says."""
    if not students:
        return
    merged = roster(course_root, assignment_id) | students
    path = roster_path(course_root, assignment_id)
    private.folder(path.parent)
    private.write_text(path, json.dumps({"students": merged}, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def display_name(entry):
    """The name a roster entry gives ("" when its LMS gave none: Blackboard's, or Moodle's under blind marking)."""
    name = str(entry.get("name") or "")
    return "" if name == MOODLE_ANONYMOUS else name


__all__ = ["Member", "Plan", "plan", "roster", "save_roster", "timestamp_text", "STUDENT_ID", "RefusedSubmission"]
