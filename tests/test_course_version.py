"""The course version `grade` skips by (grading/ledger.py): all that decides a grade, kept in parts, so that a
student graded again is told which part changed; an offering's seed appears only keyed, never as itself."""

import hashlib
import json
import stat
import types
from pathlib import Path

import nbtools
import pytest
from adversarial import grading

import autograder
import autograder.grading
from autograder import offering
from autograder.grading.scoring import ledger

ASSIGNMENT = "02_forward_pass"
SEED = grading.OFFERING_SEED
MISSING_B1 = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n"


@pytest.fixture(autouse=True)
def _no_seed_in_the_environment(monkeypatch):
    monkeypatch.delenv(offering.ENV, raising=False)


def _version(tmp_path, **change):
    """A whole course version (ledger.course_version) of fixed inputs, with `change`'s in their place."""
    recorded = change.get("model", {"name": ASSIGNMENT, "cells": [1, 2], "duedate": None})
    model = types.SimpleNamespace(to_dict=lambda: recorded)
    release = tmp_path / "release.txt"
    if not release.exists():
        release.write_text("weights\n")
    return ledger.course_version(model, change.get("source", {ASSIGNMENT: "{}"}), [("data.txt", release)],
                                 change.get("limits", {"cell timeout": 10}), change.get("seed", "published"))


# ---------------------------------------------------------------- what the version covers


def _fake_autograder(root):
    """A tree laid out as autograder/ (grading/ with a template, report/, course/), to walk instead of the real one."""
    for rel in ("__init__.py", "schema.py", "grading/__init__.py", "grading/ledger.py",
                "grading/templates/feedback.html", "report/__init__.py", "report/class_report.py",
                "course/nbgrader_config.py", "course/source/02_forward_pass/02_forward_pass.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    return root


def test_every_file_of_the_grader_counts_subpackages_and_templates_included(tmp_path, monkeypatch):
    root = _fake_autograder(tmp_path / "autograder")
    monkeypatch.setattr(autograder, "__file__", str(root / "__init__.py"))
    monkeypatch.setattr(autograder.grading, "__file__", str(root / "grading" / "__init__.py"))
    before = ledger.code_version()["grader code"]
    nested = root / "grading" / "scoring" / "deeper" / "rules.py"  # a subpackage two levels down
    nested.parent.mkdir(parents=True)
    nested.write_text("POINTS = 1\n")
    added = ledger.code_version()["grader code"]
    assert added != before
    nested.write_text("POINTS = 2\n")
    edited = ledger.code_version()["grader code"]
    assert edited not in (before, added)
    (root / "grading" / "templates" / "feedback.html").write_text("<p>another page</p>\n")
    assert ledger.code_version()["grader code"] != edited
    edited = ledger.code_version()["grader code"]
    (root / "grading" / "scoring" / "deeper" / "__pycache__").mkdir()
    (root / "grading" / "scoring" / "deeper" / "__pycache__" / "rules.cpython-311.pyc").write_bytes(b"\0")
    (root / "report" / "class_report.py").write_text("# the report reads results; it never grades\n")
    (root / "course" / "source" / "02_forward_pass" / "02_forward_pass.py").write_text("# the source part's\n")
    assert ledger.code_version()["grader code"] == edited


def test_the_real_grader_and_ffn_helpers_are_walked_recursively():
    grader = {rel for rel, _ in ledger.grader_files()}
    here = Path(ledger.__file__).relative_to(Path(autograder.__file__).parent).as_posix()  # wherever grading/ keeps it
    assert {"schema.py", "offering.py", here} <= grader
    assert [rel for rel in grader if rel.startswith("grading/") and rel.endswith("templates/feedback.html")]
    assert not [rel for rel in grader if rel.startswith(("report/", "course/")) or rel.endswith(".pyc")]
    helpers = {rel for rel, _ in ledger.helper_files()}
    assert {"checks.py", "mistakes/mistake.py"} <= helpers  # mistakes/ is a subpackage


def test_each_part_of_the_version_is_kept_apart(tmp_path):
    base = _version(tmp_path)
    assert set(base) == set(ledger.PARTS)
    assert ledger.changed(base, _version(tmp_path)) == []
    assert ledger.changed(base, _version(tmp_path, limits={"cell timeout": 11})) == ["limits"]
    assert ledger.changed(base, _version(tmp_path, source={ASSIGNMENT: "[]"})) == ["source notebook"]
    assert ledger.changed(base, _version(tmp_path, model={"name": ASSIGNMENT, "cells": [1]})) == ["release"]
    assert ledger.changed(base, _version(tmp_path, seed="abc")) == ["offering seed"]
    due = _version(tmp_path, model={"name": ASSIGNMENT, "cells": [1, 2], "duedate": "2024-05-01T12:00:00"})
    assert ledger.changed(base, due) == []  # due dates and late penalties are not part of it
    (tmp_path / "release.txt").write_text("other weights\n")
    assert ledger.changed(base, _version(tmp_path)) == ["release"]


def test_the_offering_seed_is_kept_only_as_a_keyed_digest(tmp_path):
    course_root = tmp_path / "course"
    course_root.mkdir()
    assert ledger.offering_digest(None, course_root) == "published"
    assert not (course_root / ledger.KEY_FILE).exists()  # no seed: no key made
    digest = ledger.offering_digest(SEED, course_root)
    key = course_root / ledger.KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert digest == ledger.offering_digest(SEED, course_root)  # the key is kept: the same seed, the same digest
    assert digest != ledger.offering_digest(SEED + 1, course_root)
    assert str(SEED) not in digest
    plain = {hashlib.new(name, str(SEED).encode()).hexdigest() for name in ("sha256", "sha1", "md5", "sha512")}
    assert digest not in plain
    other = tmp_path / "other-course"
    other.mkdir()
    assert ledger.offering_digest(SEED, other) != digest  # another key: nothing to compare across courses
    key.write_text("not hex\n")
    with pytest.raises(ValueError, match="should hold 64 hex digits"):
        ledger.offering_digest(SEED, course_root)


# ---------------------------------------------------------------- why a student is graded again


def test_why_grade_names_the_reason(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "ada.json").write_text("{}")
    now = ledger.entry("files-1", _version(tmp_path))
    done = {"ada": now}
    ledger.save(out, done)
    assert ledger.load(out) == done
    assert ledger.why_grade(done, "ada", now, out, {"ada"}) is None  # unchanged: skipped
    assert ledger.why_grade(done, "ada", now, out, {"ada"}, force=True) == "--force"
    assert ledger.why_grade(done, "bo", now, out, {"ada"}) == "new submission"
    assert ledger.why_grade(done, "ada", dict(now, submission="files-2"), out, {"ada"}) == "the files changed"
    seeded = ledger.entry("files-1", _version(tmp_path, seed="abc", limits={"cell timeout": 11}))
    assert (ledger.why_grade(done, "ada", seeded, out, {"ada"})
            == "the course version changed (limits, offering seed)")
    both = dict(seeded, submission="files-2")
    assert ledger.why_grade(done, "ada", both, out, {"ada"}).startswith("the files changed; the course version")
    unreadable = ledger.entry(None, now["course"])
    assert ledger.why_grade(done, "ada", unreadable, out, {"ada"}).startswith("its files cannot be compared")
    assert ledger.why_grade(done, "ada", now, out, set()) == "not in the gradebook"
    (out / "ada.json").unlink()
    assert ledger.why_grade(done, "ada", now, out, {"ada"}) == "its result ada.json is gone"


def test_an_older_graders_ledger_grades_again_without_a_crash(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "ada.json").write_text("{}")
    (out / ledger.LEDGER).write_text(json.dumps({"ada": {"submission": "files-1", "course": "0123abcd"}}))
    done = ledger.load(out)
    now = ledger.entry("files-1", _version(tmp_path))
    assert ledger.why_grade(done, "ada", now, out, {"ada"}) == "graded by an older grader"
    (out / ledger.LEDGER).write_text('["not", "a", "ledger"]')
    assert ledger.load(out) == {}


# ---------------------------------------------------------------- grading again, for real


@pytest.mark.grading
@pytest.mark.xdist_group("course-version")
def test_a_seed_or_a_limit_set_after_grading_grades_every_student_again(tmp_path, capsys):
    """Grade two students; again unchanged (skipped); with an offering seed set as the guide says (each graded
    again, for that reason); with another cell time limit (again, for that one)."""
    course_root = grading.make_course(tmp_path / "course", ASSIGNMENT)
    right = nbtools.completed_learner(ASSIGNMENT)
    submitted = grading.write_submissions(tmp_path / "submitted", ASSIGNMENT, {
        "ada": right, "bo": nbtools.with_answers(right, {"ffn_forward": MISSING_B1})})
    out = tmp_path / "results"

    def run(cell_timeout=10.0):
        graded = grading.run_batch(ASSIGNMENT, submitted, out, course_root, cell_timeout=cell_timeout)
        return graded, capsys.readouterr().err

    first, err = run()
    assert sorted(first) == ["ada", "bo"] and "2 new submission(s): ada, bo" in err
    again, err = run()
    assert again == {} and "2 submission(s) already graded with these files and this course version" in err

    grading.private_offering(course_root, tmp_path / "private", SEED)  # as AUTHORING.md's "A private offering"
    seeded, err = run()
    assert sorted(seeded) == ["ada", "bo"]
    for student in ("ada", "bo"):
        assert f"{student}: graded again: the course version changed (offering seed)" in err
    kept = (out / ledger.LEDGER).read_text()
    assert str(SEED) not in kept and "already graded" not in err

    again, err = run()
    assert again == {} and "2 submission(s) already graded" in err

    longer, err = run(cell_timeout=11.0)
    assert sorted(longer) == ["ada", "bo"]
    for student in ("ada", "bo"):
        assert f"{student}: graded again: the course version changed (limits)" in err
