"""One intake for LMS downloads: each download read by its own LMS's names only (Canvas's, Moodle's, Blackboard's),
the same way by `nbgrader zip_collect` (the course's extractor and collector plugins) and by `grade` given the
zip, whose folders and timestamp.txt files are then the same bytes (switching from one to the other grades nobody
again). Every download name here is made by tests/lms_formats.py, which follows each LMS's own naming code."""

import os
import subprocess
import sys
import zipfile
from datetime import datetime

import nbtools
import pytest
from lms_formats import blackboard_name, blackboard_receipt, canvas_again, canvas_name, moodle_name

from autograder.grading import course, submissions
from autograder.grading.scoring import ledger

# Read through submissions, the intake's entry point before and after issue 47, so that the tests run (and fail)
# against the code they were written to change, not only against an import that is not there.
RefusedSubmission, lms_time, read_lms_name, timestamp_text = (
    submissions.RefusedSubmission, submissions.lms_time, submissions.read_lms_name, submissions.timestamp_text)


def _roster(root):
    from autograder.grading import intake

    return intake.roster(root, AID)

AID = "02_forward_pass"
NB = f"{AID}.ipynb"
BERLIN = "Europe/Berlin"
HOSTILE = f"x_bob_attempt_2099-12-31-23-59-59_{NB}"  # a learner's own upload name, naming a classmate
BACKSLASH = f"x\\FFN02_ada_attempt_2099-12-31-23-59-59_{NB}"  # the same, with a `\` before a classmate's whole name


def _quiet(*_):
    pass


def _config(zone="UTC"):
    config = course.load_config()
    config.LmsCollector.timezone = zone
    return config


def _zip(path, files):
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def _course(tmp_path, zone="UTC"):
    """A scratch course (its zone set unless `zone` is None) and its archive/ folder for zip_collect."""
    root = nbtools.scratch_course(tmp_path / "course", AID)
    if zone:
        with (root / "nbgrader_config.py").open("a") as f:
            f.write(f'\nc.LmsCollector.timezone = "{zone}"\n')
    archive = root / "downloaded" / AID / "archive"
    archive.mkdir(parents=True)
    return root, archive


def _zip_collect(root, *extra):
    return nbtools.nbgrader("zip_collect", *extra, AID, cwd=root)


def _found(archive, tmp_path, config, said=None):
    """{student: their folder} as `grade` reads the zip."""
    found = submissions.find(archive, AID, tmp_path / "scratch", config, log=said.append if said is not None
                             else _quiet)
    return {s.student: s.folder for s in found}


def _tree(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- each LMS's names


@pytest.mark.parametrize(("name", "lms", "student", "file_name", "time"), [
    (canvas_name("Smith, Jane", 12345, 678901, NB), "canvas", "12345", NB, None),
    (canvas_name("Smith, Jane", 12345, 678901, NB, late=True), "canvas", "12345", NB, None),
    (canvas_name("de_la_Cruz, Juan", 4, 99, "10_key_value_memory.ipynb"), "canvas", "4", "10_key_value_memory.ipynb",
     None),
    (canvas_name("Müller, José", 77, 7712031, canvas_again(NB, 1)), "canvas", "77", NB, None),  # uploaded again
    (canvas_name("Ng, Eve", 5, 6, "02_forward_pass-0b6f7c6e-1a2b-4c3d-8e9f-001122334455.ipynb"), "canvas", "5", NB,
     None),  # make_unique_filename's UUID, after seven tries
    (moodle_name("Jane Smith", 1234567, NB, folders=False), "moodle", "1234567", NB, None),
    (moodle_name("Jane Smith", 1234567, NB, folders=False, group="Group A"), "moodle", "1234567", NB, None),
    (moodle_name("Jean_Luc Picard", 7654321, NB), "moodle", "7654321", NB, None),
    (moodle_name("Zoë Ångström", 42, NB), "moodle", "42", NB, None),
    (blackboard_name("FFN02", "alice", "2026-12-02-09-15-42", NB), "blackboard", "alice", NB,
     datetime(2026, 12, 2, 8, 15, 42)),  # Berlin's 09:15:42 is 08:15:42 UTC in winter
    (blackboard_name("FFN 02 forward", "a.b-c@uni.edu", "2026-12-02-23-30-00", NB), "blackboard", "a.b-c@uni.edu",
     NB, datetime(2026, 12, 2, 22, 30)),
])
def test_each_lms_download_name_is_read(name, lms, student, file_name, time):
    found = read_lms_name(name, zone=BERLIN)
    assert (found.lms, found.student, found.file_name, found.time) == (lms, student, file_name, time)


def test_canvas_and_moodle_names_as_their_code_writes_them():
    """The helpers' names, as each LMS's code makes them (a check of the fixtures themselves)."""
    assert canvas_name("Smith, Jane", 12345, 678901, NB, late=True) == f"smithjane_LATE_12345_678901_{NB}"
    assert canvas_name("de_la_Cruz, Juan", 4, 99, "a\\b.ipynb") == "de_la_cruzjuan_4_99_a_b.ipynb"
    assert canvas_name("O'Brien_2_, Ann", 7, 8, NB) == f"obrien2ann_7_8_{NB}"  # no "_<digits>_" left in the name
    assert canvas_again(NB, 1) == "02_forward_pass-1.ipynb"
    assert moodle_name("Jean_Luc Picard", 7654321, NB) == f"Jean Luc Picard_7654321_assignsubmission_file_/{NB}"
    assert moodle_name("Ann", 9, "a\\b.ipynb") == "Ann_9_assignsubmission_file_/a/b.ipynb"  # PARAM_PATH


@pytest.mark.parametrize("name", [
    NB, f"alice_{NB}", f"FFN02_alice_attempt_2026-12-02_{NB}", f"smithjane_012_678_{NB}",
    f"anon_abcde_678_10_{NB}", f"Smithjane_12345_678901_{NB}", blackboard_receipt("FFN02", "alice",
                                                                                  "2026-12-02-09-15-42"),
])
def test_a_name_no_lms_writes_is_read_as_none(name):
    assert read_lms_name(name, zone="UTC") is None


# ---------------------------------------------------------------- 1. the learner's part never names the student


@pytest.mark.parametrize("fixed", [
    "FFN02_alice_attempt_2026-12-02-09-15-42_", "Alice Liddell_1234567_assignsubmission_file_",
    "liddellalice_1234567_678901_",
])
@pytest.mark.parametrize("upload", [HOSTILE, BACKSLASH])
def test_an_upload_name_cannot_take_a_classmates_place(fixed, upload):
    """Each LMS's fixed part, then a hostile upload name: alice's file, whole, its `\\` a character of the name."""
    lms = read_lms_name(fixed + NB, zone="UTC").lms
    found = read_lms_name(fixed + upload, (lms,), zone="UTC")
    assert found.student in ("alice", "1234567") and found.file_name == upload
    assert found.time in (None, datetime(2026, 12, 2, 9, 15, 42))


def _backslash_download():
    """A Blackboard download (zone Berlin): ada's attempt, and mallory's late attempt uploaded under a name with a
    `\\` that holds ada's whole name with a time in 2099, and one that holds her own name with an on-time time."""
    return {blackboard_name("FFN02", "ada", "2026-12-02-10-00-42", NB): "ada's",
            blackboard_name("FFN02", "mallory", "2026-12-04-09-00-31", BACKSLASH): "empty",
            blackboard_name("FFN02", "mallory", "2026-12-04-09-00-31",
                            f"x\\FFN02_mallory_attempt_2026-12-01-09-00-00_{NB}"): "mallory's"}


def test_a_backslash_leaves_the_classmate_and_the_clock_alone_through_grades_zip(tmp_path):
    archive = _zip(tmp_path / "download.zip", _backslash_download())
    found = _found(archive, tmp_path, _config(BERLIN))
    assert sorted(found) == ["ada", "mallory"]
    assert (found["ada"] / NB).read_text() == "ada's"
    assert (found["ada"] / "timestamp.txt").read_text() == "2026-12-02 09:00:42"
    assert (found["mallory"] / "timestamp.txt").read_text() == "2026-12-04 08:00:31"  # Blackboard's time: late
    assert not (found["mallory"] / NB).exists()  # her uploads keep their own names


def test_a_backslash_leaves_the_classmate_and_the_clock_alone_through_zip_collect(tmp_path):
    root, archive = _course(tmp_path, BERLIN)
    _zip(archive / "submissions.zip", _backslash_download())
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    submitted = root / "submitted"
    assert (submitted / "ada" / AID / NB).read_text() == "ada's"
    assert (submitted / "ada" / AID / "timestamp.txt").read_text() == "2026-12-02 09:00:42"
    assert (submitted / "mallory" / AID / "timestamp.txt").read_text() == "2026-12-04 08:00:31"
    assert not (submitted / "mallory" / AID / NB).exists()


def test_a_backslash_after_a_canvas_prefix_refuses_nobody(tmp_path):
    """Canvas itself makes a `\\` in an upload name "_" (sanitize_attachment_filename); a download made by hand that
    keeps it is still read by Canvas's names: the classmate keeps their file, and the class is collected."""
    archive = _zip(tmp_path / "download.zip", {
        canvas_name("Smith, Jane", 12345, 678901, NB): "jane's",
        f"kimcyrus_777_90002_x\\{canvas_name('Smith, Jane', 12345, 678902, NB)}": "empty",
        canvas_name("Kim, Cyrus", 777, 90001, NB): "cyrus's"})
    found = _found(archive, tmp_path, _config())
    assert sorted(found) == ["12345", "777"]
    assert (found["12345"] / NB).read_text() == "jane's" and (found["777"] / NB).read_text() == "cyrus's"


# ---------------------------------------------------------------- 2. nbgrader's layout is nbgrader's folders only


def _moodle_with_a_layout_inside():
    """A Moodle download (folders) in which participant 2222222's folder submission holds nbgrader's layout for
    participant 17 (a time in 2099) and for a participant 99 nobody is."""
    return {moodle_name("Ada L", 17, NB): "17's",
            moodle_name("Eve Ng", 2222222, NB): "eve's",
            moodle_name("Eve Ng", 2222222, "timestamp.txt", file_path="/17/02_forward_pass/"): "2099-12-31 23:59:59",
            moodle_name("Eve Ng", 2222222, NB, file_path="/99/02_forward_pass/"): "phantom"}


def test_nbgraders_layout_inside_a_download_is_no_ones_folder(tmp_path):
    said = []
    found = _found(_zip(tmp_path / "d.zip", _moodle_with_a_layout_inside()), tmp_path, _config(), said)
    assert sorted(found) == ["17", "2222222"]  # no phantom 99
    assert not (found["17"] / "timestamp.txt").exists()  # Moodle's names hold no time: nobody planted one
    assert (found["17"] / NB).read_text() == "17's" and (found["2222222"] / NB).read_text() == "eve's"
    assert sum("a folder of the student's inside Moodle's folder" in line for line in said) == 2, said
    root, archive = _course(tmp_path)
    _zip(archive / "submissions.zip", _moodle_with_a_layout_inside())
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert _tree(root / "submitted") == _tree(tmp_path / "scratch" / "unzipped")


def test_a_download_beside_nbgraders_layout_reads_only_the_download(tmp_path):
    archive = _zip(tmp_path / "d.zip", {blackboard_name("FFN02", "ada", "2026-12-02-10-00-42", NB): "ada's",
                                        f"bob/{AID}/{NB}": "bob's", f"bob/{AID}/timestamp.txt": "2026-12-01 00:00:00"})
    said = []
    assert sorted(_found(archive, tmp_path, _config(), said)) == ["ada"]
    assert any(f"set aside 'bob/{AID}/{NB}'" in line for line in said), said
    nbgrader_only = _zip(tmp_path / "n.zip", {f"course/bob/{AID}/{NB}": "bob's"})
    assert sorted(_found(nbgrader_only, tmp_path / "n", _config())) == ["bob"]  # nbgrader's own zip: read as such


# ---------------------------------------------------------------- 3. Canvas's newest attachment, whatever its name


def test_canvas_grades_the_newest_attachment_whatever_its_suffix(tmp_path):
    again = canvas_name("Kim, Cyrus", 777, 7712031, canvas_again(NB, 1))
    found = _found(_zip(tmp_path / "one.zip", {again: "newest"}), tmp_path / "a", _config())
    assert (found["777"] / NB).read_text() == "newest"
    both = {canvas_name("Kim, Cyrus", 777, 7700000, NB): "older", again: "newest"}
    found = _found(_zip(tmp_path / "both.zip", both), tmp_path / "b", _config())
    assert sorted(p.name for p in found["777"].iterdir()) == [NB]
    assert (found["777"] / NB).read_text() == "newest"


def test_canvas_two_downloads_then_again_keep_the_newest(tmp_path):
    root, archive = _course(tmp_path)
    _zip(archive / "first.zip", {canvas_name("Kim, Cyrus", 777, 7700000, NB): "older",
                                 canvas_name("Smith, Jane", 12345, 7700001, NB): "jane's"})
    _zip(archive / "second.zip", {canvas_name("Kim, Cyrus", 777, 7712031, canvas_again(NB, 1)): "newest"})
    for extra in ((), ("--force",)):  # collected again: still the one file, the newest
        run = _zip_collect(root, *extra)
        assert run.returncode == 0, run.stderr[-3000:]
        assert sorted(p.name for p in (root / "submitted" / "777" / AID).iterdir()) == [NB]
        assert (root / "submitted" / "777" / AID / NB).read_text() == "newest"
        assert (root / "submitted" / "12345" / AID / NB).read_text() == "jane's"
    assert f"777: {NB} from 'second.zip' replaces the one from 'first.zip' (its attachment is newer)" in run.stderr


# ---------------------------------------------------------------- 4. Canvas's _LATE, reported and kept


def test_canvas_late_marks_are_said_and_kept_in_the_roster(tmp_path):
    root, archive = _course(tmp_path)
    _zip(archive / "submissions.zip", {canvas_name("Kim, Cyrus", 777, 90001, NB, late=True): "late",
                                       canvas_name("Smith, Jane", 12345, 90002, NB): "on time"})
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Canvas marked 1 submission(s) late (_LATE): 777 (kimcyrus)" in run.stderr
    assert _roster(root) == {"777": {"lms": "canvas", "name": "kimcyrus", "late": True},
                                        "12345": {"lms": "canvas", "name": "smithjane", "late": False}}
    assert not (root / "submitted" / "777" / AID / "timestamp.txt").exists()  # still no time: nothing to charge


# ---------------------------------------------------------------- 5. a second Moodle download


def test_a_second_moodle_download_replaces_the_first_for_the_students_it_holds(tmp_path):
    root, archive = _course(tmp_path)
    later = _zip(archive / "a-later.zip", {moodle_name("Ann Lee", 1034571, NB): "ann's second",
                                          moodle_name("Cy Doe", 1034573, NB): "cy's, late"})
    earlier = _zip(archive / "b-earlier.zip", {moodle_name("Ann Lee", 1034571, NB): "ann's first",
                                              moodle_name("Bo Ray", 1034572, NB): "bo's"})
    os.utime(earlier, (1_700_000_000, 1_700_000_000))  # put into archive/ first, whatever the names' order
    os.utime(later, (1_700_086_400, 1_700_086_400))
    run = _zip_collect(root, "--force")
    assert run.returncode == 0, run.stderr[-3000:]
    submitted = root / "submitted"
    assert {s: (submitted / s / AID / NB).read_text() for s in ("1034571", "1034572", "1034573")} == {
        "1034571": "ann's second", "1034572": "bo's", "1034573": "cy's, late"}
    assert f"1034571: {NB} from 'a-later.zip' replaces the one from 'b-earlier.zip'" in run.stderr
    assert "two files claim" not in run.stderr


# ---------------------------------------------------------------- 6. what cannot be read is set aside


def _download_with_trouble():
    """Blackboard (zone Berlin): ada fine; a username holding "_"; a time Berlin's clocks show twice; two
    different files claiming one attempt of bo's."""
    return {blackboard_name("FFN02", "ada", "2026-10-20-10-00-42", NB): "ada's",
            blackboard_name("FFN02", "john_smith", "2026-10-20-11-00-05", NB): "john's",
            blackboard_name("FFN02", "dee", "2026-10-25-02-30-00", NB): "dee's",
            blackboard_name("FFN02", "bo", "2026-10-20-12-00-00", NB): "bo's one",
            f"copy/{blackboard_name('FFN02', 'bo', '2026-10-20-12-00-00', NB)}": "bo's other"}


def test_what_cannot_be_read_is_set_aside_and_the_class_collected(tmp_path):
    said = []
    found = _found(_zip(tmp_path / "d.zip", _download_with_trouble()), tmp_path, _config(BERLIN), said)
    assert sorted(found) == ["ada"] and (found["ada"] / NB).read_text() == "ada's"
    text = "\n".join(said)
    assert "its username holds '_'" in text and "rename the file with the username written without '_'" in text
    assert "shows twice (a daylight-saving change)" in text and "timestamp.txt holding its time in UTC" in text
    assert "two different files claim the same attempt of bo's" in text and "keep the right one" in text
    root, archive = _course(tmp_path, BERLIN)
    _zip(archive / "submissions.zip", _download_with_trouble())
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(p.name for p in (root / "submitted").iterdir()) == ["ada"]
    assert "its username holds '_'" in run.stderr and "Nothing was collected" not in run.stderr


def test_blackboard_names_wait_for_the_course_zone(tmp_path):
    """Blackboard's names give a wall clock without its zone: not read until the course says which."""
    archive = _zip(tmp_path / "d.zip", {blackboard_name("FFN02", "ada", "2026-12-02-16-59-59", NB): "ada's"})
    with pytest.raises(RefusedSubmission, match=r'c\.LmsCollector\.timezone = "Europe/Berlin"'):
        _found(archive, tmp_path, _config(""))
    root, course_archive = _course(tmp_path, zone=None)
    _zip(course_archive / "submissions.zip", {blackboard_name("FFN02", "ada", "2026-12-02-16-59-59", NB): "ada's"})
    run = _zip_collect(root)
    assert run.returncode == 1 and "c.LmsCollector.timezone" in run.stderr and "Nothing was collected" in run.stderr
    found = _found(archive, tmp_path / "b", _config(BERLIN))  # set: 16:59:59 in Berlin, a minute before 17:00
    assert (found["ada"] / "timestamp.txt").read_text() == "2026-12-02 15:59:59"


# ---------------------------------------------------------------- 15. zip_collect's own noise


def test_zip_collect_says_nothing_of_receipts_and_files_read_twice(tmp_path):
    root, archive = _course(tmp_path)
    files = {blackboard_name("FFN02", "ada", "2026-12-02-10-00-42", NB): "ada's",
             blackboard_receipt("FFN02", "ada", "2026-12-02-10-00-42"): "Name: Ada\nDate Submitted: ...",
             blackboard_name("FFN02", "bo", "2026-12-02-11-00-00", NB): "bo's",
             blackboard_receipt("FFN02", "bo", "2026-12-02-11-00-00"): "Name: Bo"}
    _zip(archive / "submissions.zip", files)
    _zip(archive / "submissions (1).zip", files)  # the same download, put there twice
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Skipped submission with no match information" not in run.stderr, run.stderr
    assert "left out: 4 blackboard receipts, 2 files read twice" in run.stderr, run.stderr
    assert (root / "submitted" / "bo" / AID / NB).read_text() == "bo's"


# ---------------------------------------------------------------- times, exactly


@pytest.mark.parametrize("second", range(60))
def test_every_second_is_read_as_itself(second):
    name = blackboard_name("FFN02", "alice", f"2026-12-02-09-15-{second:02d}", NB)
    assert read_lms_name(name, zone="UTC").time == datetime(2026, 12, 2, 9, 15, second)
    assert timestamp_text(lms_time(f"2026-12-02-23-59-{second:02d}", "UTC")) == f"2026-12-02 23:59:{second:02d}"


@pytest.mark.parametrize("text", ["2026-12-02-09-15-60", "2026-13-02-09-15-00", "2026-02-30-09-15-00",
                                  "2026-12-02-24-00-00", "2026-12-02-09-15"])
def test_an_impossible_time_is_refused_naming_it(text):
    with pytest.raises(RefusedSubmission, match=f"expected a time YYYY-MM-DD-hh-mm-ss, got '{text}'"):
        lms_time(text, "UTC")


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
    assert lms_time(local, zone) == utc
    assert read_lms_name(blackboard_name("FFN02", "alice", local, NB), zone=zone).time == utc


@pytest.mark.parametrize(("local", "what", "readings"), [
    ("2026-10-25-02-30-00", "shows twice", ("2026-10-25 00:30:00", "2026-10-25 01:30:00")),
    ("2026-03-29-02-30-00", "never shows", ("2026-03-29 01:30:00", "2026-03-29 00:30:00")),
])
def test_a_wall_time_a_clock_change_makes_unclear_is_refused(local, what, readings):
    with pytest.raises(RefusedSubmission) as info:
        lms_time(local, BERLIN)
    assert what in str(info.value) and all(r in str(info.value) for r in readings)


def test_an_unknown_zone_is_refused_naming_it():
    with pytest.raises(RefusedSubmission, match="IANA name .* got 'CEST'"):
        lms_time("2026-12-02-09-15-42", "CEST")


# ---------------------------------------------------------------- two readings, replaced attempts


def test_a_name_two_formats_read_differently_is_read_by_its_downloads_lms(tmp_path):
    hostile = canvas_name("Smith, Jane", 12345, 678901, HOSTILE)
    with pytest.raises(RefusedSubmission) as info:
        read_lms_name(hostile, zone="UTC")  # alone, nothing says which LMS wrote it
    assert "canvas: student 12345" in str(info.value) and "blackboard: student bob" in str(info.value)
    archive = _zip(tmp_path / "d.zip", {hostile: "jane's other file", canvas_name("Kim, Cyrus", 777, 9, NB): "c"})
    found = _found(archive, tmp_path, _config())  # a Canvas download: read as Canvas's
    assert sorted(found) == ["12345", "777"] and (found["12345"] / HOSTILE).read_text() == "jane's other file"
    said = []
    assert _found(_zip(tmp_path / "one.zip", {hostile: "?"}), tmp_path / "o", _config(), said) == {}
    assert any("its name reads two ways" in line and 'c.LmsCollector.formats = ["canvas"]' in line
               for line in said), said


def test_a_replaced_attempt_is_reported_in_utc_and_the_lms_zone(tmp_path):
    said = []
    archive = _zip(tmp_path / "d.zip", {blackboard_name("FFN02", "alice", "2026-12-03-10-00-05", NB): "newer",
                                        blackboard_name("FFN02", "alice", "2026-12-02-09-15-42", NB): "older"})
    found = _found(archive, tmp_path, _config(BERLIN), said)
    assert (found["alice"] / NB).read_text() == "newer"
    assert (found["alice"] / "timestamp.txt").read_bytes() == b"2026-12-03 09:00:05"
    assert (f"alice: {NB} of 2026-12-03 09:00:05 UTC (2026-12-03 10:00:05 in Europe/Berlin as the name gives it) "
            "replaces the older attempt of 2026-12-02 08:15:42 UTC (2026-12-02 09:15:42 in Europe/Berlin as the "
            "name gives it)") in said[0], said


# ---------------------------------------------------------------- both paths, the same reading


def _downloads():
    """One download of each LMS, seconds of 24 and more, a replaced attempt, a hostile upload name, Canvas's
    `-1` and `_LATE`, Moodle's folders."""
    return {"blackboard": {blackboard_name("FFN02", "alice", "2026-12-02-09-15-42", NB): "alice 1",
                           blackboard_name("FFN02", "alice", "2026-12-02-23-30-59", NB): "alice 2",
                           blackboard_name("FFN02", "bo", "2026-12-01-08-00-24", NB): "bo",
                           blackboard_name("FFN02", "bo", "2026-12-01-08-00-24", HOSTILE): "bo's other file"},
            "canvas": {canvas_name("Smith, Jane", 12345, 678901, canvas_again(NB, 1), late=True): "canvas"},
            "moodle": {moodle_name("Jane Smith", 7654321, NB): "moodle"}}


@pytest.mark.parametrize("lms", ["blackboard", "canvas", "moodle"])
def test_zip_collect_and_grades_zip_give_the_same_students_times_and_bytes(tmp_path, lms):
    root, archive = _course(tmp_path)
    _zip(archive / "submissions.zip", _downloads()[lms])
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Using file collector: LmsCollector" in run.stderr and "Using file extractor: LmsExtractor" in run.stderr
    collected = root / "submitted"
    found = submissions.find(archive / "submissions.zip", AID, tmp_path / "scratch", course.load_config(root),
                             log=_quiet)
    assert _tree(tmp_path / "scratch" / "unzipped") == _tree(collected)
    for s in found:  # switching from one path to the other grades nobody again
        assert ledger.submission_digest(s.folder) == ledger.submission_digest(collected / s.student / AID)
    if lms == "blackboard":
        assert f"alice: {NB} of 2026-12-02 23:30:59 UTC" in run.stderr
        assert (collected / "alice" / AID / "timestamp.txt").read_bytes() == b"2026-12-02 23:30:59"
        assert (collected / "alice" / AID / NB).read_text() == "alice 2"
    else:  # Canvas and Moodle names hold no time
        assert [s.student for s in found] == [{"canvas": "12345", "moodle": "7654321"}[lms]]
        assert not (found[0].folder / "timestamp.txt").exists() and (found[0].folder / NB).is_file()


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


def test_the_course_config_names_the_plugins_no_named_regexp_and_no_zone():
    config = course.load_config()
    assert config.ZipCollectApp.collector_plugin == "autograder.grading.submissions.LmsCollector"
    assert config.ZipCollectApp.extractor_plugin == "autograder.grading.submissions.LmsExtractor"
    assert "named_regexp" not in config.FileNameCollectorPlugin
    assert "timezone" not in config.LmsCollector  # the instructor says it: no zone is assumed
    collector = submissions.collector_class()(config=config)
    assert collector.formats == ["canvas", "moodle", "blackboard"] and collector.timezone == ""
    with pytest.raises(RefusedSubmission, match="among canvas, moodle, blackboard, got d2l"):
        read_lms_name(NB, ("canvas", "d2l"))


def test_both_paths_read_the_lms_time_zone_the_course_sets(tmp_path):
    root, archive = _course(tmp_path, "America/New_York")
    _zip(archive / "submissions.zip", {blackboard_name("FFN02", "alice", "2026-12-02-23-30-42", NB): "alice"})
    run = _zip_collect(root)
    assert run.returncode == 0, run.stderr[-3000:]
    found = _found(archive / "submissions.zip", tmp_path, course.load_config(root))
    expected = b"2026-12-03 04:30:42"  # 23:30:42 at UTC-05:00
    assert (found["alice"] / "timestamp.txt").read_bytes() == expected
    assert (root / "submitted" / "alice" / AID / "timestamp.txt").read_bytes() == expected


def test_a_submission_of_many_files_is_not_listed_in_the_ledger(tmp_path):
    for i in range(101):
        (tmp_path / f"f{i:03d}.txt").write_text(str(i))
    version = dict.fromkeys(ledger.PARTS, "v")
    assert "files" not in ledger.submission_entry(tmp_path, version)
    (tmp_path / "f100.txt").unlink()
    assert len(ledger.submission_entry(tmp_path, version)["files"]) == 100


def test_grade_given_a_download_it_cannot_read_names_it_and_writes_nothing(tmp_path):
    course_root = nbtools.scratch_course(tmp_path / "course", AID)
    archive = _zip(tmp_path / "download.zip", {canvas_name("Smith, Jane", 12345, 678901, HOSTILE): "two ways"})
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", AID, str(archive), "--out",
                          str(tmp_path / "results"), "--course", str(course_root)], capture_output=True, text=True,
                         env=nbtools.nbgrader_env(), timeout=600)
    assert run.returncode == 2, run.stderr[-3000:]
    assert "its name reads two ways" in run.stderr and "no file in" in run.stderr
    assert not (tmp_path / "results").exists() and not (course_root / "submitted").exists()
    assert not (course_root / "downloaded").exists()  # a download nobody's file was read from names nobody
