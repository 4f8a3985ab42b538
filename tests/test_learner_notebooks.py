"""What the learner meets outside the notebooks' own cells: their working copy and the stated contracts.

- `make lab` opens the learner's own copy (`autograder.authoring.lab.sync_learner_copy`): made from
  notebooks/ on the first run; later runs add new notebooks, update copies the learner
  never changed, and never overwrite one they did.
- The float64 contract that 00_start_here states: a float32 answer fails, and its message
  names the dtype before anything else.
"""

import importlib
import importlib.util
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


def test_a_changed_notebook_is_kept_and_the_printed_command_takes_the_courses_version(tmp_path, monkeypatch):
    source, dest = tmp_path / "notebooks", tmp_path / "my-notebooks"
    source.mkdir()
    (source / "02_forward_pass.ipynb").write_text(_notebook("def f():\n    raise NotImplementedError()"))
    lab.sync_learner_copy(source, dest)
    mine = _notebook("def f():\n    return 1", outputs=True)
    (dest / "02_forward_pass.ipynb").write_text(mine)
    (source / "02_forward_pass.ipynb").write_text(_notebook("def f():\n    raise NotImplementedError()", "new"))
    report = lab.sync_learner_copy(source, dest)
    assert report.kept == ["02_forward_pass.ipynb"] and not report.updated
    command = lab.take_command("02_forward_pass.ipynb", "my-notebooks")
    assert command == ("mv my-notebooks/02_forward_pass.ipynb my-notebooks/02_forward_pass-mine.ipynb "
                       "&& make lab")
    subprocess.run(command.split(" && ")[0], shell=True, cwd=tmp_path, check=True)  # what the learner types
    report = lab.sync_learner_copy(source, dest)
    assert report.added == ["02_forward_pass.ipynb"]
    assert (dest / "02_forward_pass.ipynb").read_text() == (source / "02_forward_pass.ipynb").read_text()
    assert (dest / "02_forward_pass-mine.ipynb").read_text() == mine


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
    assert "return x + W" in shown and "checks.py" not in shown and "skipping hidden" not in shown
    assert helper[1] == "y has shape (3,)"


def test_the_course_checks_raise_through_checks_failure():
    """A notebook's own check helper raises checks.failure(...), so its message too comes first."""
    plain = [aid for aid in nbtools.graded_assignments() + [nbtools.ORIENTATION]
             if "raise AssertionError(" in "\n".join(c.source for c in nbtools.source(aid).cells)]
    assert not plain, f"raise checks.failure(...) instead of AssertionError in {plain}"
