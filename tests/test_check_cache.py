"""check_cache: `check` builds an assignment's course once, and never uses a build its source has outgrown."""

import json
import shutil

import pytest
from nbtools import completed_learner, with_answers

from autograder import SOURCE_DIR
from autograder.grading import check, check_cache

AID = "02_forward_pass"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(check_cache.CACHE_ENV, str(folder))
    return folder


def _counting_build(calls):
    def build(root, assignment_id):
        calls.append(assignment_id)
        (root / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
        (root / "made").write_text(str(len(calls)), encoding="utf-8")

    return build


def test_a_course_is_built_once_then_kept(cache):
    calls = []
    first = check_cache.built_course(AID, _counting_build(calls))
    again = check_cache.built_course(AID, _counting_build(calls))
    assert calls == [AID]
    assert first == again and (again / "made").read_text(encoding="utf-8") == "1"
    assert first.parent == cache


def test_a_build_that_fails_leaves_nothing_kept(cache):
    def broken(root, assignment_id):
        (root / "nbgrader_config.py").write_text("half", encoding="utf-8")
        raise RuntimeError("nbgrader failed")

    with pytest.raises(RuntimeError, match="nbgrader failed"):
        check_cache.built_course(AID, broken)
    assert list(cache.iterdir()) == []
    calls = []
    check_cache.built_course(AID, _counting_build(calls))
    assert calls == [AID]


def test_a_changed_source_is_built_again_and_only_the_builds_used_last_are_kept(cache, tmp_path, monkeypatch):
    """Two checkouts that check with different code (a learner's second clone) each keep their build; past
    check_cache.KEEP, the build used longest ago is forgotten."""
    source = tmp_path / "source"
    shutil.copytree(SOURCE_DIR / AID, source / AID)
    monkeypatch.setattr(check_cache, "SOURCE_DIR", source)
    path = source / AID / f"{AID}.py"
    original = path.read_text(encoding="utf-8")
    calls = []

    def built(version):
        path.write_text(original + (f"\n# %%\nx = {version}\n" if version else ""), encoding="utf-8")
        return check_cache.built_course(AID, _counting_build(calls))

    first, second = built(0), built(1)
    assert calls == [AID, AID] and first != second and first.exists()
    assert built(0) == first and built(1) == second and len(calls) == 2  # each checkout's build, kept
    assert check_cache.KEEP == 3
    built(0)  # used last now: 1 is the build used longest ago
    third, fourth = built(2), built(3)
    assert len(calls) == 4
    assert sorted(p.name for p in cache.iterdir()) == sorted(p.name for p in (first, third, fourth))


def test_the_digest_reads_the_course_configuration_and_the_versions(monkeypatch):
    before = check_cache.digest(AID)
    monkeypatch.setattr(check_cache, "_VERSIONED", ("nbgrader", "jupytext"))
    assert check_cache.digest(AID) != before


def test_a_kept_build_gives_the_points_a_fresh_build_gives(cache, tmp_path):
    """The first check builds the course, the second copies what was kept: both grade a wrong answer alike."""
    nb = with_answers(completed_learner(AID), {"ffn_forward": "def ffn_forward(x, W1, b1, W2, b2):\n"
                                                             "    return np.maximum(x @ W1, 0.0) @ W2 + b2\n"})
    path = tmp_path / f"{AID}.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    cold = check.check(path, unsafe=True, say=lambda text: None)
    assert len([p for p in cache.iterdir() if p.name.startswith(AID)]) == 1
    warm = check.check(path, unsafe=True, say=lambda text: None)
    points = [[(c["grade_id"], c["points"]) for c in r["cells"]] for r in (cold, warm)]
    assert points[0] == points[1]
    assert 0 < cold["score"] < cold["max_score"] and cold["score"] == warm["score"]


def test_a_partial_folder_under_the_kept_name_is_built_again(cache):
    calls = []
    kept = check_cache.built_course(AID, _counting_build(calls))
    (kept / "nbgrader_config.py").unlink()
    again = check_cache.built_course(AID, _counting_build(calls))
    assert calls == [AID, AID] and again == kept and (again / "made").read_text(encoding="utf-8") == "2"


def test_matplotlibs_font_list_is_built_once_per_version_of_matplotlib(cache, monkeypatch, tmp_path):
    """`grade` and `check` start their workers with it; building it costs each run a second or two."""
    from importlib import metadata

    from autograder.grading import worker

    built = []
    real = worker.matplotlib_cache
    monkeypatch.setattr(worker, "matplotlib_cache", lambda folder: built.append(folder) or real(folder))
    first = check_cache.matplotlib_fonts(tmp_path / 'own')
    assert first == cache / f"matplotlib-{metadata.version('matplotlib')}"
    assert [p.name for p in first.glob("fontlist-*.json")] and len(built) == 1
    assert check_cache.matplotlib_fonts(tmp_path / 'own') == first and len(built) == 1  # kept
    assert [p.name for p in cache.iterdir()] == [first.name]  # built beside, then renamed: nothing else left
    monkeypatch.setattr(metadata, "version", lambda name: "0.0-another")
    other = check_cache.matplotlib_fonts(tmp_path / 'own')
    assert other.name == "matplotlib-0.0-another" and len(built) == 2 and any(other.glob("fontlist-*.json"))



def test_without_a_cache_folder_it_may_write_a_run_builds_its_own_font_list(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(check_cache.CACHE_ENV, str(tmp_path / "a-file" / "cache"))
    fonts = check_cache.matplotlib_fonts(tmp_path / "own")
    assert fonts == tmp_path / "own" and any(fonts.glob("fontlist-*.json"))
