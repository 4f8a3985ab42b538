"""A private offering's seed: read from the instructor's configuration, and drawn with by the judge alone."""

import os
import types

import nbformat
import pytest
from adversarial import grading
from traitlets.config import Config

from autograder import REPO_ROOT, cells, offering
from autograder.grading.gate_in import sandbox
from autograder.grading.student.clean_rerun import CleanRerun
from ffn_helpers import checks

SEED = grading.OFFERING_SEED


def _config(seed_file=None, root="/nowhere"):
    config = Config()
    config.CourseDirectory.root = str(root)
    if seed_file is not None:
        config.Offering.seed_file = str(seed_file)
    return config


@pytest.fixture(autouse=True)
def _no_seed_in_the_environment(monkeypatch):
    monkeypatch.delenv(offering.ENV, raising=False)


def test_no_configuration_is_the_published_hidden_tests():
    assert offering.seed(None) is None
    assert offering.seed(_config()) is None


def test_the_seed_comes_from_the_file_the_configuration_names(tmp_path):
    (tmp_path / "seed").write_text(f" {SEED}\n")
    assert offering.seed(_config(tmp_path / "seed")) == SEED
    (tmp_path / "course").mkdir()
    assert offering.seed(_config("../seed", root=tmp_path / "course")) == SEED  # relative to the course root


def test_the_environment_variable_wins_over_the_file(tmp_path, monkeypatch):
    (tmp_path / "seed").write_text("5")
    monkeypatch.setenv(offering.ENV, "7")
    assert offering.seed(_config(tmp_path / "seed")) == 7


@pytest.mark.parametrize("text", ["-3", "seven", "1.5", ""])
def test_a_malformed_seed_says_what_was_expected(tmp_path, text):
    (tmp_path / "seed").write_text(text)
    with pytest.raises(ValueError, match=r"whole number >= 0, got"):
        offering.seed(_config(tmp_path / "seed"))


def test_a_missing_seed_file_or_one_inside_the_repository_is_refused(tmp_path):
    with pytest.raises(ValueError, match="cannot read the file"):
        offering.seed(_config(tmp_path / "absent"))
    with pytest.raises(ValueError, match="inside the repository"):
        offering.seed(_config(REPO_ROOT / "pyproject.toml"))


def _cell(source, **nbgrader):
    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, **nbgrader}
    return cell


KEY = ("look_assignment", "test_look_hidden")  # the hidden test's stream: its assignment and grade id


def _course_cells(expected):
    """A one-exercise notebook whose test passes only when the judge's hidden_rng(*KEY) draws `expected`."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("from ffn_helpers import checks\n", grade_id="setup", locked=True),
        _cell("def look():\n    return 1\n", grade_id="look", solution=True),
        _cell(f"assert checks.hidden_rng(*{KEY!r}).integers(2**32) == {expected}\n", grade_id="test_look_hidden",
              grade=True, locked=True, points=1.0),
    ]
    return cells.code_cells(nb)


def _first_draw(seed):
    checks.set_offering_seed(seed)
    try:
        return int(checks.hidden_rng(*KEY).integers(2**32))
    finally:
        checks.set_offering_seed(None)


@pytest.mark.sandbox
def test_a_configured_seed_changes_what_the_judges_hidden_tests_draw(tmp_path):
    """The worker hands the configured seed to its judge alone: the judge's hidden tests draw the offering's
    inputs, and the worker's own checks (which the sandboxes' share nothing with) stay published."""
    (tmp_path / "seed").write_text(str(SEED))
    configured = offering.seed(_config(tmp_path / "seed"))
    published, own = _first_draw(None), _first_draw(configured)
    assert published != own
    folder = tmp_path / "rerun"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    box = sandbox.Sandbox(readonly=(str(folder),), cwd=str(folder), uid=sandbox.slot_uid(3))
    for seed, expected, points in ((configured, own, 1.0), (None, published, 1.0), (configured, published, 0.0)):
        sandboxes = types.SimpleNamespace(isolate=True, hidden=(), clear_slot=lambda: None,
                                          judge_uid=lambda: sandbox.worker_uid(3, None))
        rerun = CleanRerun({}, 60, seed, None, sandboxes, None, None)
        course_cells = _course_cells(expected)
        clean = rerun.run(course_cells, box, {"look": []}, course_cells)
        verdict = clean.tests["test_look_hidden"]
        assert verdict.points == points, (seed, expected, verdict)
    assert not checks.private_offering()  # this process never held the offering's seed
