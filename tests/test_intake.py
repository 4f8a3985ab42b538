"""One intake for LMS downloads: Canvas's, Moodle's and Blackboard's names read for a student and a time, the same
way by `nbgrader zip_collect` (the course's collector plugin) and by `grade` given the zip, whose timestamp.txt
files are then the same bytes (switching from one to the other grades nobody again)."""

import subprocess
import sys
import zipfile
from datetime import datetime

import nbtools
import pytest

from autograder.grading import course, submissions
from autograder.grading.scoring import ledger

AID = "02_forward_pass"
NB = f"{AID}.ipynb"
HOSTILE = f"x_bob_attempt_2099-12-31-23-59-59_{NB}"  # a learner's own upload name, naming a classmate


def _quiet(*_):
    pass


# ---------------------------------------------------------------- each LMS's names


@pytest.mark.parametrize(("name", "lms", "student", "file_name", "time"), [
    (f"smithjane_12345_678901_{NB}", "canvas", "12345", NB, None),
    (f"smithjane_LATE_12345_678901_{NB}", "canvas", "12345", NB, None),
    ("de_la_cruzjuan_4_99_10_key_value_memory.ipynb", "canvas", "4", "10_key_value_memory.ipynb", None),
    (f"Jane Smith_1234567_assignsubmission_file_{NB}", "moodle", "1234567", NB, None),
    (f"Group A-Jane Smith_1234567_assignsubmission_file_{NB}", "moodle", "1234567", NB, None),
    (f"download/Jane Smith_1234567_assignsubmission_file_/{NB}", "moodle", "1234567", NB, None),
    (f"FFN02_alice_attempt_2026-12-02-09-15-42_{NB}", "blackboard", "alice", NB, datetime(2026, 12, 2, 9, 15, 42)),
    (f"FFN 02 forward_a.b-c@uni.edu_attempt_2026-12-02-23-30-00_{NB}", "blackboard", "a.b-c@uni.edu", NB,
     datetime(2026, 12, 2, 23, 30)),
])
def test_each_lms_download_name_is_read(name, lms, student, file_name, time):
    found = submissions.read_lms_name(name)
    assert (found.lms, found.student, found.file_name, found.time) == (lms, student, file_name, time)


@pytest.mark.parametrize("name", [
    NB, f"alice_{NB}", f"FFN02_alice_attempt_2026-12-02_{NB}", f"smithjane_012_678_{NB}",
    f"anon_abcde_678_10_{NB}", f"Smithjane_12345_678901_{NB}", "FFN02_alice_attempt_2026-12-02-09-15-42.txt",
])
def test_a_name_no_lms_writes_is_read_as_none(name):
    assert submissions.read_lms_name(name) is None


# ---------------------------------------------------------------- the learner's part never names the student


@pytest.mark.parametrize("fixed", [
    "FFN02_alice_attempt_2026-12-02-09-15-42_", "Alice Liddell_1234567_assignsubmission_file_",
    "Alice Liddell_1234567_assignsubmission_file_/", "liddellalice_1234567_678901_",
])
def test_an_upload_name_cannot_take_a_classmates_place(fixed):
    """Each LMS's fixed part, then the hostile upload name: alice's file, or refused; bob's, never."""
    name = fixed + HOSTILE
    for formats in (tuple(submissions.LMS_NAMES), (submissions.read_lms_name(name.replace(HOSTILE, NB)).lms,)):
        try:
            found = submissions.read_lms_name(name, formats)
        except submissions.RefusedSubmission as exc:
            assert "reads two ways" in str(exc) and "student bob" in str(exc)
            continue
        assert found.student in ("alice", "1234567") and found.file_name == HOSTILE
        assert found.time in (None, datetime(2026, 12, 2, 9, 15, 42))


def test_the_hostile_upload_leaves_the_classmate_alone_through_grades_zip(tmp_path):
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"FFN02_alice_attempt_2026-12-02-09-15-42_{HOSTILE}", "alice's")
        zf.writestr(f"FFN02_bob_attempt_2026-12-01-08-00-00_{NB}", "bob's")
    found = {s.student: s.folder for s in submissions.find(archive, AID, tmp_path / "s", course.load_config(),
                                                           log=_quiet)}
    assert sorted(found) == ["alice", "bob"]
    assert (found["bob"] / NB).read_text() == "bob's" and (found["bob"] / "timestamp.txt").read_text() == \
        "2026-12-01 08:00:00"
    assert not (found["alice"] / NB).exists() and (found["alice"] / HOSTILE).read_text() == "alice's"


# ---------------------------------------------------------------- times, exactly


@pytest.mark.parametrize("second", range(60))
def test_every_second_is_read_as_itself(second):
    name = f"FFN02_alice_attempt_2026-12-02-09-15-{second:02d}_{NB}"
    assert submissions.read_lms_name(name).time == datetime(2026, 12, 2, 9, 15, second)
    assert submissions.timestamp_text(submissions.lms_time(f"2026-12-02-23-59-{second:02d}")) == \
        f"2026-12-02 23:59:{second:02d}"


@pytest.mark.parametrize("text", ["2026-12-02-09-15-60", "2026-13-02-09-15-00", "2026-02-30-09-15-00",
                                  "2026-12-02-24-00-00", "2026-12-02-09-15"])
def test_an_impossible_time_is_refused_naming_it(text):
    with pytest.raises(submissions.RefusedSubmission, match=f"expected a time YYYY-MM-DD-hh-mm-ss, got '{text}'"):
        submissions.lms_time(text)


@pytest.mark.parametrize(("zone", "local", "utc"), [
    ("UTC", "2026-12-02-09-15-42", datetime(2026, 12, 2, 9, 15, 42)),
    ("Europe/Berlin", "2026-12-02-09-15-42", datetime(2026, 12, 2, 8, 15, 42)),  # winter, +01:00
    ("Europe/Berlin", "2026-07-01-09-15-42", datetime(2026, 7, 1, 7, 15, 42)),  # summer, +02:00
    ("America/New_York", "2026-12-02-23-30-00", datetime(2026, 12, 3, 4, 30)),  # -05:00: the next day in UTC
    ("America/St_Johns", "2026-12-02-23-30-07", datetime(2026, 12, 3, 3, 0, 7)),  # -03:30
    ("Asia/Kolkata", "2026-12-02-05-00-59", datetime(2026, 12, 1, 23, 30, 59)),  # +05:30: the day before
    ("Asia/Kathmandu", "2026-12-02-09-15-42", datetime(2026, 12, 2, 3, 30, 42)),  # +05:45
    ("Pacific/Chatham", "2027-01-01-00-00-01", datetime(2026, 12, 31, 10, 15, 1)),  # +13:45 in its summer
])
def test_the_lms_time_zone_is_converted_to_utc(zone, local, utc):
    assert submissions.lms_time(local, zone) == utc
    name = f"FFN02_alice_attempt_{local}_{NB}"
    assert submissions.read_lms_name(name, zone=zone).time == utc


@pytest.mark.parametrize(("local", "what", "readings"), [
    ("2026-10-25-02-30-00", "shows twice", ("2026-10-25 00:30:00", "2026-10-25 01:30:00")),
    ("2026-03-29-02-30-00", "never shows", ("2026-03-29 01:30:00", "2026-03-29 00:30:00")),
])
def test_a_wall_time_a_clock_change_makes_unclear_is_refused(local, what, readings):
    with pytest.raises(submissions.RefusedSubmission) as info:
        submissions.lms_time(local, "Europe/Berlin")
    assert what in str(info.value) and all(r in str(info.value) for r in readings)


def test_an_unknown_zone_is_refused_naming_it():
    with pytest.raises(submissions.RefusedSubmission, match="IANA name .* got 'CEST'"):
        submissions.lms_time("2026-12-02-09-15-42", "CEST")


# ---------------------------------------------------------------- refused: two readings, two files for one attempt


def test_a_name_two_formats_read_differently_is_refused_naming_both():
    name = f"smithjane_12345_678901_x_bob_attempt_2099-12-31-23-59-59_{NB}"
    with pytest.raises(submissions.RefusedSubmission) as info:
        submissions.read_lms_name(name)
    said = str(info.value)
    assert "reads two ways" in said and "canvas: student 12345" in said and "blackboard: student bob" in said
    assert submissions.read_lms_name(name, ("canvas",)).student == "12345"  # one LMS set in the course config


def test_a_blackboard_username_holding_an_underscore_is_refused_not_misread():
    """`ps1_john_smith_attempt_…` would read as student `smith` of assignment `ps1_john`; beside a classmate's file,
    whose assignment reads `ps1`, the download is refused, naming both files."""
    intake = submissions.Intake()
    assert intake.take(f"FFN02_ada_attempt_2026-12-02-09-15-42_{NB}").student == "ada"
    with pytest.raises(submissions.RefusedSubmission) as info:
        intake.take(f"FFN02_john_smith_attempt_2026-12-02-09-16-01_{NB}")
    said = str(info.value)
    assert f"'FFN02_ada_attempt_2026-12-02-09-15-42_{NB}'" in said and "'FFN02'" in said
    assert f"'FFN02_john_smith_attempt_2026-12-02-09-16-01_{NB}'" in said and "'FFN02_john'" in said


def test_two_files_that_claim_one_attempt_are_refused_naming_both(tmp_path):
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"FFN02_alice_attempt_2026-12-02-09-15-42_{NB}", "one")
        zf.writestr(f"other/FFN02_alice_attempt_2026-12-02-09-15-42_{NB}", "two")
    with pytest.raises(submissions.RefusedSubmission) as info:
        submissions.find(archive, AID, tmp_path / "s", course.load_config(), log=_quiet)
    assert str(info.value).count(f"'FFN02_alice_attempt_2026-12-02-09-15-42_{NB}'") == 2
    assert "alice's 02_forward_pass.ipynb" in str(info.value)
    intake = submissions.Intake()
    intake.take(f"smithjane_12345_678901_{NB}")
    with pytest.raises(submissions.RefusedSubmission, match="'smithjane_12345_555555_02_forward_pass.ipynb'"):
        intake.take(f"smithjane_12345_555555_{NB}")  # no time: neither can be told newer


def test_a_download_collected_twice_is_read_once(tmp_path):
    """The guide's late submission: the LMS's new zip beside the first in archive/; the attempts both hold are
    the same bytes, read once, and the newer attempt replaces the older."""
    course_root = nbtools.scratch_course(tmp_path / "course", AID)
    archive = course_root / "downloaded" / AID / "archive"
    archive.mkdir(parents=True)
    first = {f"FFN02_alice_attempt_2026-12-02-09-15-42_{NB}": "alice 1",
             f"FFN02_bo_attempt_2026-12-01-08-00-24_{NB}": "bo"}
    second = dict(first, **{f"FFN02_alice_attempt_2026-12-04-07-00-33_{NB}": "alice 2"})
    for name, files in (("first.zip", first), ("second.zip", second)):
        with zipfile.ZipFile(archive / name, "w") as zf:
            for member, text in files.items():
                zf.writestr(member, text)
    run = nbtools.nbgrader("zip_collect", AID, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"bo: 'FFN02_bo_attempt_2026-12-01-08-00-24_{NB}' is the same file as" in run.stderr
    alice = course_root / "submitted" / "alice" / AID
    assert (alice / NB).read_text() == "alice 2" and (alice / "timestamp.txt").read_text() == "2026-12-04 07:00:33"
    assert (course_root / "submitted" / "bo" / AID / NB).read_text() == "bo"


def test_a_replaced_attempt_is_reported(tmp_path):
    said = []
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"FFN02_alice_attempt_2026-12-03-10-00-05_{NB}", "newer")
        zf.writestr(f"FFN02_alice_attempt_2026-12-02-09-15-42_{NB}", "older")
    [alice] = submissions.find(archive, AID, tmp_path / "s", course.load_config(), log=said.append)
    assert (alice.folder / NB).read_text() == "newer"
    assert (alice.folder / "timestamp.txt").read_bytes() == b"2026-12-03 10:00:05"
    assert said == [f"alice: {NB} of 2026-12-03 10:00:05 replaces the older attempt of 2026-12-02 09:15:42 "
                    f"('FFN02_alice_attempt_2026-12-02-09-15-42_{NB}')"]


# ---------------------------------------------------------------- both paths, the same reading


def _download(path):
    """One download of each LMS (a course reads one, but the names never collide), seconds of 24 and more."""
    files = {f"FFN02_alice_attempt_2026-12-02-09-15-42_{NB}": "alice 1",
             f"FFN02_alice_attempt_2026-12-02-23-30-59_{NB}": "alice 2",
             f"FFN02_bo_attempt_2026-12-01-08-00-24_{NB}": "bo",
             f"FFN02_bo_attempt_2026-12-01-08-00-24_{HOSTILE}": "bo's other file",
             f"smithjane_LATE_12345_678901_{NB}": "canvas",
             f"Jane Smith_7654321_assignsubmission_file_/{NB}": "moodle"}
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_zip_collect_and_grades_zip_give_the_same_students_times_and_bytes(tmp_path):
    course_root = nbtools.scratch_course(tmp_path / "course", AID)
    archive = course_root / "downloaded" / AID / "archive"
    archive.mkdir(parents=True)
    _download(archive / "submissions.zip")
    run = nbtools.nbgrader("zip_collect", AID, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Using file collector: LmsCollector" in run.stderr
    assert f"alice: {NB} of 2026-12-02 23:30:59 replaces the older attempt of 2026-12-02 09:15:42" in run.stderr
    collected = course_root / "submitted"

    found = submissions.find(archive / "submissions.zip", AID, tmp_path / "scratch", course.load_config(course_root),
                             log=_quiet)
    unzipped = tmp_path / "scratch" / "unzipped"
    assert [s.student for s in found] == ["12345", "7654321", "alice", "bo"]
    assert _tree(unzipped) == _tree(collected)
    assert (collected / "alice" / AID / "timestamp.txt").read_bytes() == b"2026-12-02 23:30:59"
    assert (collected / "bo" / AID / "timestamp.txt").read_bytes() == b"2026-12-01 08:00:24"
    assert (collected / "alice" / AID / NB).read_text() == "alice 2"
    assert not (collected / "12345" / AID / "timestamp.txt").exists()  # Canvas and Moodle names hold no time
    for s in found:  # switching from one path to the other grades nobody again
        assert ledger.submission_digest(s.folder) == ledger.submission_digest(collected / s.student / AID)


def test_zip_collect_refuses_an_ambiguous_download_and_collects_nothing(tmp_path):
    course_root = nbtools.scratch_course(tmp_path / "course", AID)
    archive = course_root / "downloaded" / AID / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zf:
        zf.writestr(f"FFN02_bo_attempt_2026-12-01-08-00-24_{NB}", "bo")
        zf.writestr(f"smithjane_12345_678901_x_bob_attempt_2099-12-31-23-59-59_{NB}", "two ways")
    run = nbtools.nbgrader("zip_collect", AID, cwd=course_root)
    assert run.returncode == 1
    assert "reads two ways" in run.stderr and "canvas: student 12345" in run.stderr and "student bob" in run.stderr
    assert not (course_root / "submitted").exists() or not list((course_root / "submitted").iterdir())


def test_a_changed_timestamp_is_the_reason_a_student_is_graded_again(tmp_path):
    """What grade's zip once wrote (one newline more than zip_collect) graded everyone again, saying only "the files
    changed": the reason now names the file, and an older ledger's entry (no file list) still gets a reason."""
    folder = tmp_path / "alice" / AID
    folder.mkdir(parents=True)
    (folder / NB).write_text("{}")
    (folder / "timestamp.txt").write_text("2026-12-02 09:15:42")
    version = dict.fromkeys(ledger.PARTS, "v")
    done = {"alice": ledger.submission_entry(folder, version)}
    ledger.save(tmp_path, done)
    done = ledger.load(tmp_path)
    (tmp_path / "alice.json").write_text("{}")
    assert ledger.why_grade(done, "alice", ledger.submission_entry(folder, version), tmp_path, {"alice"}) is None
    (folder / "timestamp.txt").write_text("2026-12-02 09:15:42\n")
    now = ledger.submission_entry(folder, version)
    assert ledger.why_grade(done, "alice", now, tmp_path, {"alice"}) == "the files changed (timestamp.txt)"
    older = {"alice": ledger.entry(done["alice"]["submission"], version)}
    assert ledger.why_grade(older, "alice", now, tmp_path, {"alice"}) == "the files changed"
    (folder / NB).write_text("{ }")
    (folder / "extra.py").write_text("")
    now = ledger.submission_entry(folder, version)
    assert ledger.why_grade(done, "alice", now, tmp_path, {"alice"}) == \
        f"the files changed ({NB}, extra.py, timestamp.txt)"


def test_the_course_config_names_the_collector_and_no_named_regexp():
    config = course.load_config()
    assert config.ZipCollectApp.collector_plugin == "autograder.grading.submissions.LmsCollector"
    assert "named_regexp" not in config.FileNameCollectorPlugin
    assert submissions.collector_class()(config=config).intake.formats == tuple(submissions.LMS_NAMES)
    with pytest.raises(submissions.RefusedSubmission, match="among canvas, moodle, blackboard, got d2l"):
        submissions.read_lms_name(NB, ("canvas", "d2l"))


def test_both_paths_read_the_lms_time_zone_the_course_sets(tmp_path):
    course_root = nbtools.scratch_course(tmp_path / "course", AID)
    with (course_root / "nbgrader_config.py").open("a") as f:
        f.write('\nc.LmsCollector.timezone = "America/New_York"\n')
    archive = course_root / "downloaded" / AID / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as zf:
        zf.writestr(f"FFN02_alice_attempt_2026-12-02-23-30-42_{NB}", "alice")
    run = nbtools.nbgrader("zip_collect", AID, cwd=course_root)
    assert run.returncode == 0, run.stderr[-3000:]
    [alice] = submissions.find(archive / "submissions.zip", AID, tmp_path / "s", course.load_config(course_root),
                               log=_quiet)
    expected = b"2026-12-03 04:30:42"  # 23:30:42 at UTC-05:00
    assert (alice.folder / "timestamp.txt").read_bytes() == expected
    assert (course_root / "submitted" / "alice" / AID / "timestamp.txt").read_bytes() == expected


def test_a_submission_of_many_files_is_not_listed_in_the_ledger(tmp_path):
    for i in range(101):
        (tmp_path / f"f{i:03d}.txt").write_text(str(i))
    version = dict.fromkeys(ledger.PARTS, "v")
    assert "files" not in ledger.submission_entry(tmp_path, version)
    (tmp_path / "f100.txt").unlink()
    assert len(ledger.submission_entry(tmp_path, version)["files"]) == 100


def test_grade_refuses_an_ambiguous_zip_and_writes_nothing(tmp_path):
    course_root = nbtools.scratch_course(tmp_path / "course", AID)
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"smithjane_12345_678901_x_bob_attempt_2099-12-31-23-59-59_{NB}", "two ways")
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", AID, str(archive), "--out",
                          str(tmp_path / "results"), "--course", str(course_root)], capture_output=True, text=True,
                         env=nbtools.nbgrader_env(), timeout=600)
    assert run.returncode == 2, run.stderr[-3000:]
    assert "error: " in run.stderr and "reads two ways" in run.stderr and "blackboard: student bob" in run.stderr
    assert not (tmp_path / "results").exists() and not (course_root / "submitted").exists()
