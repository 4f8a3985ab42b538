"""What the learner meets outside the notebooks' own cells: their working copy and the stated contracts.

- `make lab` opens the learner's own copy (`autograder.authoring.lab.sync_learner_copy`): made from
  notebooks/ on the first run; later runs add new notebooks, update copies the learner
  never changed, and never overwrite one they did.
- The float64 contract that 00_start_here states: a float32 answer fails, and its message
  names the dtype before anything else.
"""

import contextlib
import functools
import importlib
import importlib.util
import io
import json
import re
import subprocess
import sys
from collections import defaultdict

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


def _notebook(*sources, tags=(), language_info=None, outputs=False):
    """A small notebook as JupyterLab saves it: code cells with these sources (and outputs, if run)."""
    cells = [{"cell_type": "code", "source": src, "metadata": {"tags": list(tags)} if tags else {},
              "execution_count": 1 if outputs else None,
              "outputs": [{"output_type": "stream", "name": "stdout", "text": "ran\n"}] if outputs else []}
             for src in sources]
    metadata = {"kernelspec": {"name": "python3"}, "language_info": language_info or {"name": "python"}}
    return json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_a_notebook_the_learner_only_opened_and_ran_still_takes_updates(tmp_path):
    """Saving adds language_info, outputs and execution counts; no cell changed, so the update replaces it."""
    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    (source / "00_start_here.ipynb").write_text(_notebook("x = 1"))
    lab.sync_learner_copy(source, dest)
    saved = _notebook("x = 1", outputs=True, language_info={"name": "python", "version": "3.12.1"})
    (dest / "00_start_here.ipynb").write_text(saved)
    (source / "00_start_here.ipynb").write_text(_notebook("x = 2"))
    report = lab.sync_learner_copy(source, dest)
    assert report.updated == ["00_start_here.ipynb"] and not report.kept
    assert (dest / "00_start_here.ipynb").read_text() == _notebook("x = 2")


def test_a_course_change_of_cell_tags_reaches_an_unchanged_copy(tmp_path):
    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    (source / "02.ipynb").write_text(_notebook("check()"))
    lab.sync_learner_copy(source, dest)
    (source / "02.ipynb").write_text(_notebook("check()", tags=["raises-exception"]))
    assert lab.sync_learner_copy(source, dest).updated == ["02.ipynb"]


def test_a_changed_notebook_is_kept_and_the_printed_command_takes_the_courses_version(tmp_path):
    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    (source / "02_forward_pass.ipynb").write_text(_answered(("f", "def f():\n    raise NotImplementedError()")))
    lab.sync_learner_copy(source, dest)
    mine = _answered(("f", "def f():\n    return 1"))
    (dest / "02_forward_pass.ipynb").write_text(mine)
    (source / "02_forward_pass.ipynb").write_text(_answered(("f", "def f():\n    raise NotImplementedError()"),
                                                            (None, "new")))
    report = lab.sync_learner_copy(source, dest)
    assert report.kept == ["02_forward_pass.ipynb"] and not report.updated
    command = lab.take_command("02_forward_pass.ipynb", "my-notebooks")
    assert command.endswith(" -m autograder carry-over my-notebooks/02_forward_pass.ipynb")
    assert lab.carry_over(dest / "02_forward_pass.ipynb", source) == 0  # what the command runs
    assert (dest / "02_forward_pass-mine.ipynb").read_text() == mine
    assert _sources(dest / "02_forward_pass.ipynb") == ["def f():\n    return 1", "new"]
    report = lab.sync_learner_copy(source, dest)  # the learner's copy now starts from the course's version
    assert not report.kept and not report.updated and report.added == []
    assert _sources(dest / "02_forward_pass.ipynb") == ["def f():\n    return 1", "new"]


def test_a_manifest_of_byte_digests_still_tells_unchanged_copies(tmp_path):
    """Folders made before the rule compared cells: their manifest holds sha256 of the bytes."""
    import hashlib

    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    dest.mkdir()
    old = _notebook("x = 1")
    (source / "a.ipynb").write_text(_notebook("x = 2"))
    (dest / "a.ipynb").write_text(old)
    (dest / lab.MANIFEST).write_text(json.dumps({"a.ipynb": hashlib.sha256(old.encode()).hexdigest()}))
    assert lab.sync_learner_copy(source, dest).updated == ["a.ipynb"]


# ---------------------------------------------------------------- carrying answers over to a new version


def _answered(*cells, markdown=()):
    """A learner notebook: (grade_id or None, source) code cells, answer cells where a grade_id is given; then
    (grade_id, text) markdown answer cells."""
    def meta(gid):
        return {"nbgrader": {"grade": False, "grade_id": gid, "locked": False, "schema_version": 3,
                             "solution": True, "task": False}} if gid else {}

    nb = {"cells": [{"cell_type": "code", "source": src, "metadata": meta(gid), "execution_count": None,
                     "outputs": []} for gid, src in cells]
          + [{"cell_type": "markdown", "source": src, "metadata": meta(gid)} for gid, src in markdown],
          "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1)


def _sources(path):
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in json.loads(path.read_text())["cells"]]


STUB = '    """{doc}"""\n    # YOUR CODE HERE\n    raise NotImplementedError()'
V1 = _answered(
    (None, "import numpy as np"),
    ("f", "def f(x):\n" + STUB.format(doc="Twice x.")),
    ("g", "def g(x):\n" + STUB.format(doc="x squared.")),
    ("Model", "class Model:\n    def __init__(self):\n" + STUB.format(doc="Set up.").replace("\n    ", "\n        ")
     .replace('    """', '        """', 1) + "\n\n    def run(self):\n"
     + STUB.format(doc="Run.").replace("\n    ", "\n        ").replace('    """', '        """', 1)),
    ("old", "def old():\n" + STUB.format(doc="Gone in version 2.")),
    ("unanswered", "def unanswered():\n" + STUB.format(doc="Left as it was.")),
    markdown=[("essay", "YOUR ANSWER HERE")])


def _version_2():
    """The course's next version: f's docstring changed, g takes a new argument, old is gone, h is new, and the
    stub of `unanswered` says more."""
    return _answered(
        (None, "import numpy as np\nimport math"),
        ("f", "def f(x):\n" + STUB.format(doc="Twice x, for any shape.")),
        ("g", "def g(x, power=2):\n" + STUB.format(doc="x to a power.")),
        ("Model", json.loads(V1)["cells"][3]["source"]),
        ("h", "def h():\n" + STUB.format(doc="New in version 2.")),
        ("unanswered", "def unanswered():\n" + STUB.format(doc="Left as it was; now with more to read.")),
        markdown=[("essay", "YOUR ANSWER HERE")])


def test_carry_over_keeps_every_answer_across_an_update(tmp_path):
    """Version 1 answered (the class half-way, one exercise untouched, a scratch cell added), version 2 released:
    every answer comes over by grade_id, untouched stubs take the new text, and what version 2 no longer has is
    listed, never dropped: the learner's file is kept whole as -mine."""
    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    (source / "03_x.ipynb").write_text(V1)
    lab.sync_learner_copy(source, dest)
    nb = json.loads(V1)
    answers = {"f": "def f(x):\n    return 2 * x", "g": "def g(x):\n    return x * x",
               "Model": nb["cells"][3]["source"].replace("raise NotImplementedError()", "self.ready = True", 1),
               "old": "def old():\n    return 'mine'"}
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        cell["source"] = answers.get(gid, cell["source"])
    nb["cells"].insert(2, {"cell_type": "code", "source": "print(f(3))  # trying it", "metadata": {},
                           "execution_count": 1, "outputs": []})
    mine = json.dumps(nb, indent=1)
    (dest / "03_x.ipynb").write_text(mine)
    (source / "03_x.ipynb").write_text(_version_2())
    assert lab.sync_learner_copy(source, dest).kept == ["03_x.ipynb"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert lab.carry_over(dest / "03_x.ipynb", source) == 0
    new = dict(zip(["setup", "f", "g", "Model", "h", "unanswered", "essay"], _sources(dest / "03_x.ipynb"),
                   strict=True))
    assert {k: new[k] for k in answers if k in new} == {k: v for k, v in answers.items() if k != "old"}
    v2 = dict(zip(new, _sources(source / "03_x.ipynb"), strict=True))
    assert new["setup"] == v2["setup"] and new["h"] == v2["h"] and new["essay"] == "YOUR ANSWER HERE"
    assert new["unanswered"] == v2["unanswered"]  # an untouched stub takes the new version's text
    assert (dest / "03_x-mine.ipynb").read_text() == mine
    said = out.getvalue()
    assert "carried over: f, g, Model" in said
    assert "NOT carried (the new version has no such exercise; they are in 03_x-mine.ipynb): old" in said
    assert "the first line of these changed in the new version; compare yours with it: g" in said
    assert "'print(f(3))  # trying it'" in said
    assert lab.sync_learner_copy(source, dest).kept == []


def test_carry_over_never_overwrites_an_earlier_mine_and_changes_nothing_it_cannot_read(tmp_path):
    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    dest.mkdir()
    (source / "03_x.ipynb").write_text(_version_2())
    (dest / "03_x.ipynb").write_text(_answered(("f", "def f(x):\n    return 2 * x")))
    (dest / "03_x-mine.ipynb").write_text("an earlier -mine")
    assert lab.carry_over(dest / "03_x.ipynb", source) == 0
    assert (dest / "03_x-mine.ipynb").read_text() == "an earlier -mine"
    assert "return 2 * x" in (dest / "03_x-mine-2.ipynb").read_text()
    (dest / "04_y.ipynb").write_text("{not json")
    (source / "04_y.ipynb").write_text(_version_2())
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert lab.carry_over(dest / "04_y.ipynb", source) == 2
        assert lab.carry_over(dest / "05_z.ipynb", source) == 2  # no such notebook of the learner's
        (dest / "05_z.ipynb").write_text(_version_2())
        assert lab.carry_over(dest / "05_z.ipynb", source) == 2  # nor of the course's
    assert "your notebook" in err.getvalue() and "the course's version" in err.getvalue()
    assert (dest / "04_y.ipynb").read_text() == "{not json" and not (dest / "04_y-mine.ipynb").exists()
    assert (dest / "05_z.ipynb").exists() and not (dest / "05_z-mine.ipynb").exists()


@pytest.mark.parametrize("source, expected", [
    ("def f(x):\n    \"\"\"Doc.\"\"\"\n    # YOUR CODE HERE\n    raise NotImplementedError()", True),
    ("class C:\n    def a(self):\n        raise NotImplementedError()\n\n    def b(self):\n        pass", False),
    ("class C:\n    def a(self):\n        raise NotImplementedError()", True),
    ("def f(x):\n    return x", False),
    ("import numpy as np\n\ndef f(x):\n    raise NotImplementedError()", False),
    ("YOUR ANSWER HERE", True),
    ("My answer: it overflows.", False),
    ("def f(x) return", False),  # unparsable: the learner's text
])
def test_an_untouched_answer_is_only_what_the_course_released(source, expected):
    from autograder.authoring import carry

    assert carry.untouched(source) is expected


def test_carry_over_takes_a_real_course_notebook_with_the_answers_of_an_older_copy(tmp_path):
    """`python -m autograder carry-over` on 13's learner notebook from before its hints (an older version), answered
    with the worked solution: the course's current version comes back with every answer in it."""
    learner = json.loads((nbtools.NOTEBOOKS_DIR / "13_training.ipynb").read_text(encoding="utf-8"))
    solution = nbtools.cells_by_id(nbtools.solution("13_training"))
    older = [c for c in learner["cells"] if not "".join(c["source"]).startswith("<details>")]
    for cell in older:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = solution[gid].source
    mine = tmp_path / "my-notebooks" / "13_training.ipynb"
    mine.parent.mkdir()
    mine.write_text(json.dumps({**learner, "cells": older}, indent=1))
    run = subprocess.run([sys.executable, "-m", "autograder", "carry-over", str(mine)], cwd=nbtools.REPO_ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    carried = nbtools.cells_by_id(nbformat_read(mine))
    answers = nbtools.answer_ids(nbtools.learner("13_training"))
    assert all(carried[gid].source == solution[gid].source for gid in answers)
    assert len(nbformat_read(mine).cells) == len(learner["cells"])  # the hints are back
    assert f"carried over: {', '.join(answers)}" in run.stdout
    assert json.loads((mine.parent / lab.MANIFEST).read_text())["13_training.ipynb"] == lab._content(
        nbtools.NOTEBOOKS_DIR / "13_training.ipynb")


def nbformat_read(path):
    import nbformat

    return nbformat.read(path, as_version=4)


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


# What the checks do, measured: every graded notebook's solution run in this process up to its last test cell,
# with checks.compare, checks.call and checks.check_equal recording, per test cell, the tolerances the checks
# compare with, the inputs they give the learner's function and the results they expect.


def _kind(value):
    """'float64', 'int64'... for an array (or a list the check reads as one), 'np.float32' for a numpy scalar,
    'int' or 'float' for a Python number."""
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}"
    if isinstance(value, bool | int | float):
        return type(value).__name__
    if isinstance(value, np.ndarray | list | tuple):
        try:
            return str(np.asarray(value).dtype)
        except ValueError:
            return None
    return None


def _test_cell():
    """The grade_id of the test cell that made this call (run_in_process names each cell's code `<grade_id>`)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<test_"):
            return name[1:-1]
        frame = frame.f_back
    return None


@functools.cache
def what_the_checks_do():
    """{(aid, test cell): {"rtol": {...}, "args": {kinds}, "expected": {kinds}}}, from the checks themselves."""
    seen = defaultdict(lambda: defaultdict(set))
    originals = checks.compare, checks.call, checks.check_equal

    def compare(actual, expected, **kw):
        if (cell := _test_cell()) is not None:
            seen[aid, cell]["rtol"].add(float(kw.get("rtol", checks.DEFAULT_RTOL)))
            seen[aid, cell]["expected"].add(_kind(expected))
        return originals[0](actual, expected, **kw)

    def call(fn, *args, name=None):
        if (cell := _test_cell()) is not None:
            seen[aid, cell]["args"].update(_kind(a) for a in args)
        return originals[1](fn, *args, name=name)

    def check_equal(actual, expected, **kw):
        if (cell := _test_cell()) is not None:
            seen[aid, cell]["expected"].add(_kind(expected))
        return originals[2](actual, expected, **kw)

    checks.compare, checks.call, checks.check_equal = compare, call, check_equal
    try:
        for aid in sorted(nbtools.graded_assignments()):
            last = nbtools.cell_index(aid, nbtools.test_ids(nbtools.solution(aid))[-1])
            assert nbtools.run_in_process(aid, {}, cells=slice(0, last + 1)) == {}, aid
    finally:
        checks.compare, checks.call, checks.check_equal = originals
    return {key: {k: kinds[k] - {None} for k in ("rtol", "args", "expected")} for key, kinds in seen.items()}


def _start_here_text():
    return "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells if c.cell_type == "markdown")


def _rtols(aid, exercise=None):
    """The relative tolerances of `aid`'s checks (of one exercise's test cells, if given)."""
    return {r for (a, cell), kinds in what_the_checks_do().items() if a == aid
            and (exercise is None or cell.removeprefix("test_").removesuffix("_hidden") == exercise)
            for r in kinds["rtol"]}


def test_the_dtypes_00_states_are_the_ones_the_checks_use():
    text = " ".join(_start_here_text().split())
    assert "In notebooks 01 to 11 and 13 the arrays of numbers are **float64**" in text
    # The exceptions it names, as (exercise, "args" or "expected"): integer indices.
    named = {("top_memories", "expected"), ("router_topk", "expected"), ("load_balancing_loss", "args")}
    assert all(f"`{exercise}`" in text for exercise, _ in named)
    assert "01's hidden tests also pass single numpy numbers (`np.float32`, `np.int64`)" in text
    integer_arrays, scalars = set(), set()
    for (aid, cell), kinds in what_the_checks_do().items():
        if aid.startswith("12"):  # 12 is about lower precision itself (00 says so)
            continue
        exercise = cell.removeprefix("test_").removesuffix("_hidden")
        for role in ("args", "expected"):
            arrays = {k for k in kinds[role] if not k.startswith("np.") and k not in ("int", "float", "bool")}
            assert arrays <= {"float64"} or (exercise, role) in named, (cell, role, arrays)
            integer_arrays |= {(exercise, role) for k in arrays if k.startswith("int")}
            scalars |= {(aid, k) for k in kinds[role] if k.startswith("np.") and k != "np.float64"}
    assert integer_arrays == named  # each exception 00 names is one the checks make
    assert scalars == {("01_relu_sign_cases", "np.float32"), ("01_relu_sign_cases", "np.int64")}


def test_the_tolerances_00_states_are_the_checks_tolerances():
    text = " ".join(_start_here_text().split())
    assert "Most checks compare with the reference to a relative $10^{-7}$" in text
    assert checks.DEFAULT_RTOL == 1e-7
    compared = [kinds["rtol"] for kinds in what_the_checks_do().values() if kinds["rtol"]]
    assert 2 * sum(1e-7 in rtols for rtols in compared) > len(compared)  # most test cells that compare numbers
    stated = {
        "$10^{-9}$ in 03 and 04": _rtols("03_residual_layernorm") == _rtols("04_activations") == {1e-9},
        "$10^{-10}$ in 08": _rtols("08_limiting_behaviour") == {1e-10},
        "from $10^{-12}$ to $4 \\times 10^{-3}$ (float16 results) in 12":
            (min(_rtols("12_low_precision")), max(_rtols("12_low_precision"))) == (1e-12, 4e-3)
            and 4e-3 in _rtols("12_low_precision", "ffn_forward_float16"),
        "to $10^{-2}$ for the spread of 09's random weights":
            max(r for rtols in compared for r in rtols) == 1e-2 and 1e-2 in _rtols("09_ffn_module", "xavier_init"),
        "none at all where no rounding enters (ReLU's outputs in 01, the experts 11's router picks)":
            0.0 in _rtols("01_relu_sign_cases", "relu") and 0.0 in _rtols("11_mixture_of_experts", "router_topk"),
    }
    assert {claim: claim in text and holds for claim, holds in stated.items()} == dict.fromkeys(stated, True)


def test_the_failure_00_quotes_is_the_message_a_forward_pass_without_b1_gets():
    from ffn_helpers import ffn_forward, mistakes
    from ffn_helpers.examples import W_2

    def without_b1(x, W1, b1, W2, b2):
        return np.maximum(x @ W1, 0.0) @ W2 + b2

    with pytest.raises(AssertionError) as failure:
        checks.check(without_b1, (W_2.x, *W_2.params), ffn_forward(W_2.x, *W_2.params),
                     mistakes=mistakes.for_exercise("ffn_forward"))
    line = next(line for line in str(failure.value).splitlines() if line.startswith("Likely mistake"))
    assert f"`{line}`" in _start_here_text()


def _markdown(aid):
    return [" ".join(c.source.split()) for c in nbtools.source(aid).cells if c.cell_type == "markdown"]


def _code_cell_run(aid, marker, namespace):
    """Run `aid`'s setup cell, then its one code cell that holds `marker`, in `namespace`; return what it printed."""
    import contextlib
    import io

    cells = [c for c in nbtools.source(aid).cells if c.cell_type == "code" and marker in c.source]
    assert len(cells) == 1, (aid, marker, len(cells))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(nbtools.cells_by_id(nbtools.source(aid))["setup"].source, namespace)
        namespace.update(namespace.pop("_replace", {}))
        exec(cells[0].source, namespace)
    return out.getvalue()


def test_11_gives_mixtrals_counts_without_quotation_marks_and_derives_them():
    """The announcement's words are not "46.7B total, 12.9B active": the notebook states the figures, unquoted."""
    from ffn_helpers import moe

    cells = [re.sub(r"`[^`]*`", "", cell) for cell in _markdown("11_mixture_of_experts")]  # code is no quote
    quoted = [q for cell in cells for q in re.findall(r'"[^"]*"', cell)]
    assert '"8x7B"' in quoted  # the pairing finds quotes...
    assert [q for q in quoted if re.search(r"\b(?:46\.7|12\.9|47|13)B", q)] == []  # ...and none of the counts
    text = " ".join(cells)
    total, active = moe.model_param_counts(moe.MIXTRAL_8X7B)["all"]
    assert (f"{total / 1e9:.1f}B", f"{active / 1e9:.1f}B", f"{total / 1e9:.0f}B", f"{active / 1e9:.0f}B") == (
        "46.7B", "12.9B", "47B", "13B")
    assert "gives it 46.7B parameters in all, of which 12.9B are used per token" in text
    assert "its paper rounds these to 47B and 13B" in text


def test_11_answers_its_forecast_on_the_loss_with_the_losses_it_prints():
    namespace = {}
    printed = _code_cell_run("11_mixture_of_experts", "for beta in (0.0, 1.0, 2.0, 4.0):", namespace)
    losses = {beta: f"{loss:.2f}" for beta, loss in namespace["losses"].items()}
    assert all(f"loss {value}" in printed for value in losses.values())  # the figure's labels print them
    why = next(m for m in _markdown("11_mixture_of_experts") if "**Why.** A random router" in m)
    forecast = next(m for m in _markdown("11_mixture_of_experts") if "what does the loss say then?" in m)
    assert "How large must $\\beta$ be for expert 0 to take half the tokens" in forecast
    shares = {beta: share[0] for beta, share in zip(namespace["losses"], namespace["loads"].values(), strict=True)}
    assert shares[1.0] < 0.5 < shares[2.0]  # half the tokens: between β = 1 and β = 2, so the loss is between
    assert (f"the loss lies between the printed {losses[1.0]} ($\\beta = 1$) and {losses[2.0]} ($\\beta = 2$), "
            f"up from {losses[0.0]} at $\\beta = 0$") in why
    assert f"to {losses[4.0]} at $\\beta = 4$" in why


def test_10_ties_upper_layers_to_the_values_and_gives_the_keys_both_kinds_of_pattern():
    """Geva et al. (2021): keys catch shallow patterns in lower layers and semantic ones in upper layers; the
    values' next-word distributions agree with the keys' patterns more in the upper layers."""
    intro = _markdown("10_key_value_memory")[0]
    sentences = re.split(r"(?<=\.) ", intro[intro.index("Geva et al."):])
    keys = next(s for s in sentences if s.startswith("The keys respond"))
    assert "shallow ones" in keys and "in the lower layers" in keys
    assert "semantic ones" in keys and "in the upper layers" in keys
    assert keys.index("shallow") < keys.index("lower layers") < keys.index("semantic") < keys.index("upper layers")
    values = next(s for s in sentences if s.startswith("Each value"))
    assert "in the upper layers" in values and "follow its key's pattern" in values
    assert [s for s in sentences if "upper layers" in s] == [keys, values]


class _FakeTimeit:
    """timeit for 05's section 6: the loop's and the product's times per call are set by the test."""

    def __init__(self, loop, batched):
        self.loop, self.batched = loop, batched

    def repeat(self, fn, number, repeat):
        return [self.loop * number if number == 1 else self.batched * number] * repeat


@pytest.mark.parametrize("loop_per_call, gemm_per_call, expected", [
    (32 * 5e-6, 256 * 1e-6, "one product was 5.0× as fast as the loop"),
    (32 * 1e-6, 256 * 4e-6, "the loop was 4.0× as fast as one product"),
])
def test_05_says_what_its_timing_measured_whichever_way_it_went(loop_per_call, gemm_per_call, expected):
    """The ratio depends on the machine and its load (0.2× and 29.8× were both seen): the notebook reads the
    direction off its own measurement, and its text names what varies instead of a fixed direction."""
    namespace = {"_replace": {"timeit": _FakeTimeit(loop_per_call, gemm_per_call)}}
    printed = _code_cell_run("05_position_wise", "def loop_ffn(", namespace)
    assert f"here, at 256/1024: {expected}" in printed and f"here, at 512/2048: {expected}" in printed
    section = " ".join(m for m in _markdown("05_position_wise") if "loop" in m and ("ratio" in m or "GEMM" in m))
    for varies in ("caches and cores", "the BLAS library numpy calls", "what else the machine is doing",
                   "the loop can even come out ahead"):
        assert varies in section, varies
    for fixed in ("How many times faster", "on most machines", "far larger"):
        assert fixed not in section, fixed
    assert "**Forecast.** Which is faster at each size" in section


# ---------------------------------------------------------------- 10's recall contract: no 0/0


def _run_cells(aid, grade_ids, answer):
    """Run a notebook's setup cell, the learner's `answer` source, then the named test cells; stderr captured."""
    import contextlib
    import io
    import warnings

    cells = nbtools.cells_by_id(nbtools.source(aid))
    namespace, err = {}, io.StringIO()
    with contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("default")  # as in a kernel: a RuntimeWarning is printed, not raised
        exec(cells["setup"].source, namespace)
        exec(answer, namespace)
        for grade_id in grade_ids:
            exec(cells[grade_id].source, namespace)
    return err.getvalue()


# The variant the grading tests use too (tests/submissions/), from its one definition.
RECALL_ZERO_OVER_ZERO = importlib.import_module("submissions.10_key_value_memory").RECALL_ZERO_OVER_ZERO


def test_a_recall_that_divides_0_by_0_fails_its_check_saying_why():
    """The right share with a RuntimeWarning: nbgrader would give the cell 0 for its stderr, after a ✔.

    The check fails instead, and its message states the contract; nothing reaches stderr."""
    with pytest.raises(AssertionError) as failure:
        _run_cells("10_key_value_memory", ["test_recall"], RECALL_ZERO_OVER_ZERO)
    assert "Skip outputs of length 0" in str(failure.value) and "RuntimeWarning" in str(failure.value)
    text = "\n".join(c.source for c in nbtools.source("10_key_value_memory").cells)
    assert "**skip outputs of length 0**" in text


def test_a_recall_that_skips_silent_outputs_passes_quietly():
    answer = RECALL_ZERO_OVER_ZERO.replace(
        "    cos = (Y @ V.T) / np.outer(",
        "    Y = np.where((np.linalg.norm(Y, axis=1) > 0)[:, None], Y, np.nan)\n"
        "    with np.errstate(invalid='ignore'):\n        cos = (Y @ V.T) / np.outer(")
    assert _run_cells("10_key_value_memory", ["test_recall", "test_recall_hidden"], answer) == ""


# ---------------------------------------------------------------- make lab: refuse root before installing


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() != 0,
                    reason="the refusal is for root; CI and this suite run as root")
def test_make_lab_as_root_refuses_before_installing_anything(tmp_path):
    """The refusal used to come after the 70 s install. A `python` that reports any venv it is asked to make
    shows that nothing was set up."""
    import shutil
    import sys

    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(nbtools.REPO_ROOT / name, tmp_path / name)
    shutil.copytree(nbtools.REPO_ROOT / "autograder", tmp_path / "autograder",
                    ignore=shutil.ignore_patterns("__pycache__", "course"))
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\ncase "$*" in *"-m venv"*) echo "SETUP STARTED"; exit 1;; esac\n'
                      f'exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    run = subprocess.run(["make", "lab", f"PYTHON={python}"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode != 0
    assert "should not run as root" in run.stderr and "--allow-root" in run.stderr
    assert "SETUP STARTED" not in run.stdout + run.stderr and not (tmp_path / ".venv").exists()
    assert "make lab ARGS=--allow-root" in lab.refuse_root()


def test_the_first_setup_says_what_it_is_doing():
    """Each step of the first `make lab` prints a line before it starts (`make -n` lists the recipe)."""
    run = subprocess.run(["make", "-n", "-B", "setup"], cwd=nbtools.REPO_ROOT, capture_output=True, text=True,
                         timeout=60)
    steps = [line for line in run.stdout.splitlines() if line.startswith("echo ")]
    assert len(steps) >= 4, run.stdout
    assert any("creating .venv/" in s for s in steps) and any("about a minute" in s for s in steps)


# ---------------------------------------------------------------- without make: python lab.py (Windows, macOS)


def _lab_py():
    spec = importlib.util.spec_from_file_location("lab_py", nbtools.REPO_ROOT / "lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_and_00_give_a_learner_without_make_python_lab_py_and_its_steps(tmp_path):
    """The command README and 00 give Windows and macOS learners exists, and does what `make lab` does."""
    import sys

    readme = (nbtools.REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells)
    for text in (readme, start):
        assert "python lab.py" in text and ".venv\\Scripts\\python -m autograder check" in text
    venv = tmp_path / "v"
    run = subprocess.run([sys.executable, "lab.py", "--dry-run", "--allow-root", "--venv", str(venv)],
                         cwd=nbtools.REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    python = str(_lab_py().venv_python(venv))
    lines = run.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["1/3 creating v/", "2/3 updating pip"]
    assert lines[0].endswith(f"-m venv {venv}") and all(python in line for line in lines[1:])
    assert "pip install --quiet -e" in lines[2] and lines[3] == f"then: {python} -m autograder lab --allow-root"
    assert not venv.exists()  # a dry run


def test_lab_py_first_step_makes_the_environment_its_later_steps_use(tmp_path):
    lab_py = _lab_py()
    venv = tmp_path / "v"
    what, command = lab_py.set_up_steps(venv)[0]
    subprocess.run(command + ["--without-pip"], check=True, timeout=300)
    run = subprocess.run([str(lab_py.venv_python(venv)), "-c", "import sys; print(sys.prefix)"], capture_output=True,
                         text=True, timeout=60, check=True)
    assert run.stdout.strip() == str(venv)


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() != 0,
                    reason="the refusal is for root; CI and this suite run as root")
def test_lab_py_as_root_refuses_before_installing_anything(tmp_path):
    import sys

    venv = tmp_path / "v"
    run = subprocess.run([sys.executable, "lab.py", "--venv", str(venv)], cwd=nbtools.REPO_ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "should not run as root" in run.stderr
    assert "python lab.py --allow-root" in run.stderr and not venv.exists()


# ---------------------------------------------------------------- a failed check reads message first


def _kernel_errors(*cells):
    """Run the cells in a real kernel (nbclient, as a notebook runs them); the text each error output shows."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        nbformat.write(nb, Path(tmp) / "probe.ipynb")
        run = nbtools.execute(Path(tmp) / "probe.ipynb", cwd=nbtools.REPO_ROOT)
    return [(e.evalue, nbtools.ANSI.sub("", "\n".join(e.traceback))) for c in run.nb.cells for e in nbtools.errors(c)]


SETUP = "import numpy as np\nfrom ffn_helpers import checks"


def test_in_a_kernel_a_failed_check_shows_its_message_first_and_only_the_learners_frames():
    wrong, crash, helper = _kernel_errors(
        SETUP,
        "def f(x):\n    return x + 1",
        "checks.check(f, (np.array([1.0]),), np.array([1.0]))",
        "def g(x):\n    return x + W",
        "checks.check(g, (np.array([1.0]),), np.array([1.0]))",
        "def check_shape(y):\n    if np.shape(y) != (2,):\n        raise checks.failure(f'y has shape {np.shape(y)}')",
        "check_shape(np.zeros(3))",
    )
    evalue, shown = wrong
    assert shown.splitlines()[0] == "f(...) is not close to the expected value: 1 of 1 entries differ " \
                                    "(tolerance: |got - expected| <= 1e-12 + 1e-07·|expected|)."
    assert shown == evalue  # the message, and nothing else: no frame of the learner's is involved
    evalue, shown = crash
    assert shown.splitlines()[0] == "g raised NameError: name 'W' is not defined"
    assert shown.count("Traceback") == 1 and "During handling" not in shown and "direct cause" not in shown
    assert "return x + W" in shown and "skipping hidden" not in shown
    assert "checks.py" not in shown and "_checks" not in shown  # no frame of the checks or their parts
    assert helper[1] == "y has shape (3,)"


def test_the_course_checks_raise_through_checks_failure():
    """A notebook's own check helper raises checks.failure(...), so its message too comes first."""
    plain = [aid for aid in nbtools.graded_assignments() + [nbtools.ORIENTATION]
             if "raise AssertionError(" in "\n".join(c.source for c in nbtools.source(aid).cells)]
    assert not plain, f"raise checks.failure(...) instead of AssertionError in {plain}"
