"""What the learner meets outside the notebooks' own cells: their working copy and the stated contracts.

- `make lab` opens the learner's own copy (`autograder.authoring.lab.sync_learner_copy`): made from
  notebooks/ on the first run; later runs add new notebooks, update copies the learner
  never changed, and never overwrite one they did.
- The float64 contract that 00_start_here states: a float32 answer fails, and its message
  names the dtype before anything else.
"""

import json
import subprocess

import nbtools
import numpy as np
import pytest

from autograder.authoring import lab
from ffn_helpers import checks


@pytest.fixture
def course(tmp_path):
    """A scratch course folder with two notebooks, and where the learner's copy goes."""
    source = tmp_path / "notebooks"
    source.mkdir()
    (source / "00_a.ipynb").write_text('{"v": "a1"}')
    (source / "01_b.ipynb").write_text('{"v": "b1"}')
    return source, tmp_path / "my-notebooks"


def test_first_run_copies_every_notebook(course):
    source, dest = course
    report = lab.sync_learner_copy(source, dest)
    assert report.added == ["00_a.ipynb", "01_b.ipynb"] and not report.updated and not report.kept
    assert (dest / "00_a.ipynb").read_text() == '{"v": "a1"}'
    assert set(json.loads((dest / lab.MANIFEST).read_text())) == {"00_a.ipynb", "01_b.ipynb"}


def test_a_later_run_adds_new_notebooks_and_never_overwrites_the_learners(course):
    source, dest = course
    lab.sync_learner_copy(source, dest)
    (dest / "00_a.ipynb").write_text('{"v": "my work"}')  # the learner saved 00
    (source / "00_a.ipynb").write_text('{"v": "a2"}')  # the course changed 00 and 01, and added 02
    (source / "01_b.ipynb").write_text('{"v": "b2"}')
    (source / "02_c.ipynb").write_text('{"v": "c1"}')
    report = lab.sync_learner_copy(source, dest)
    assert report.added == ["02_c.ipynb"]
    assert report.updated == ["01_b.ipynb"]  # never saved by the learner: safe to bring up to date
    assert report.kept == ["00_a.ipynb"]
    assert (dest / "00_a.ipynb").read_text() == '{"v": "my work"}'
    assert (dest / "01_b.ipynb").read_text() == '{"v": "b2"}'
    assert (dest / "02_c.ipynb").read_text() == '{"v": "c1"}'
    # Still the learner's on every later run, and reported only while the course's version differs.
    assert lab.sync_learner_copy(source, dest).kept == ["00_a.ipynb"]
    assert (dest / "00_a.ipynb").read_text() == '{"v": "my work"}'


def test_a_learners_notebook_is_kept_even_without_a_manifest(course):
    """A folder the course did not record (say, its manifest deleted): every differing notebook is theirs."""
    source, dest = course
    dest.mkdir()
    (dest / "00_a.ipynb").write_text('{"v": "my work"}')
    report = lab.sync_learner_copy(source, dest)
    assert report.kept == ["00_a.ipynb"] and report.added == ["01_b.ipynb"]
    assert (dest / "00_a.ipynb").read_text() == '{"v": "my work"}'


def test_nothing_changes_when_nothing_changed(course):
    source, dest = course
    lab.sync_learner_copy(source, dest)
    report = lab.sync_learner_copy(source, dest)
    assert not report.added and not report.updated and not report.kept


def test_learner_lab_opens_the_learners_copy_and_git_ignores_it():
    argv, _env, root = lab.lab_command("learner", open_browser=False)
    assert root == nbtools.REPO_ROOT
    assert argv[-1] == "my-notebooks/00_start_here.ipynb"
    assert lab.LEARNER_COPY == nbtools.REPO_ROOT / "my-notebooks"
    probe = "my-notebooks/00_start_here.ipynb"
    if (nbtools.REPO_ROOT / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", probe], cwd=nbtools.REPO_ROOT)
        assert ignored.returncode == 0, f"{probe} is not git-ignored"
    else:  # an exported copy without git: the rule must still be there
        assert "my-notebooks/" in (nbtools.REPO_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "my-notebooks/" in (nbtools.REPO_ROOT / "README.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------- the float64 contract


def test_a_float32_answer_fails_and_the_message_names_the_dtype_first():
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    expected = x @ W
    got = x.astype(np.float32) @ W.astype(np.float32)
    # Within rtol 1e-7 of the float64 values, so only the dtype rule makes it fail.
    assert np.allclose(got, expected, rtol=checks.DEFAULT_RTOL, atol=checks.DEFAULT_ATOL)
    result = checks.compare(got, expected, name="ffn_forward(...)")
    assert not result.ok
    assert result.message.startswith("ffn_forward(...) has dtype float32, expected float64")


def test_an_exact_float32_answer_still_passes():
    assert checks.compare(np.array([1.5, -2.0], dtype=np.float32), np.array([1.5, -2.0])).ok


def test_the_tolerances_00_states_are_the_checks_tolerances():
    text = "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells)
    assert "relative $10^{-7}$, some to $10^{-10}$" in text
    assert checks.DEFAULT_RTOL == 1e-7
    limiting = "\n".join(c.source for c in nbtools.source("08_limiting_behaviour").cells)
    assert "RTOL = 1e-10" in limiting
