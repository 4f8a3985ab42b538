"""Every notebook runs top to bottom: the worked solutions cleanly, the learner versions failing only their checks.

Each notebook is executed once per worker (tests of one assignment share an xdist group
and a cached execution) with nbclient, in a fresh python3 kernel, from its own folder.
Tests marked `learner_version` execute notebooks/ (the learner versions); CI's legs that only
need the solutions deselect them with `-m "not learner_version"` (.ci/run says which and why).
Wall times are recorded in `SECONDS` and reported, never asserted: the targets
(under 15 s each, the capstone under 30 s, under 90 s together) are checked by
`make bench` (benchmarks/bench_notebooks.py).
"""

import os
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import nbtools
import pytest

from autograder import assignments

SECONDS = {}  # "solutions/<id>" or "notebooks/<id>" -> wall seconds of the last execution
_EXECUTED = {}
_OFFERED = {}  # aid -> the cells a solution's run appended: the offering's seed set, then each seeded hidden test

# A private offering's own seed (AUTHORING.md): the one an instructor configured (FFN_OFFERING_SEED), else any number.
OFFERING = int(os.environ.get("FFN_OFFERING_SEED", "").strip() or 2027)
SET_OFFERING = f"import ffn_helpers.checks\nffn_helpers.checks.set_offering_seed({OFFERING})"


def _seeded_hidden_tests(nb):
    """The sources of the cells that draw a hidden test's inputs from its seed (checks.hidden_rng/hidden_seed)."""
    return [c.source for c in nb.cells if c.cell_type == "code" and "checks.hidden_" in c.source]


def executed(form, aid):
    """The executed notebook `form`/<aid> (form: "solutions" or "notebooks"), run once per worker.

    A solution with seeded hidden tests runs them twice in its one kernel: in place with the published inputs, then,
    appended after its last cell, again with an offering's own seed (as the grader's judge sets it before the hidden
    tests). The appended cells are kept apart (_OFFERED): the notebook returned is the published one, executed."""
    if (form, aid) not in _EXECUTED:
        folder = nbtools.SOLUTIONS_DIR if form == "solutions" else nbtools.NOTEBOOKS_DIR
        path, extra, scratch = folder / f"{aid}.ipynb", [], None
        if form == "solutions":
            nb = nbformat.read(path, as_version=4)
            hidden = _seeded_hidden_tests(nb)
            if hidden:
                extra = [nbformat.v4.new_code_cell(SET_OFFERING)] + [nbformat.v4.new_code_cell(s) for s in hidden]
                nb.cells += extra
                scratch = tempfile.mkdtemp(prefix=f"offering-{aid}-")
                path = Path(scratch) / f"{aid}.ipynb"
                nbformat.write(nb, path)
        try:
            # The learner version runs as Run All does: it stops at an error outside a `raises-exception` cell.
            run = nbtools.execute(path, cwd=folder, track_figures=form == "solutions", run_all=form == "notebooks")
        finally:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
        if extra:
            published = len(run.nb.cells) - len(extra)
            _OFFERED[aid] = run.nb.cells[published:]
            del run.nb.cells[published:]
            run.figures = {i: n for i, n in run.figures.items() if i < published}
        SECONDS[f"{form}/{aid}"] = run.seconds
        _EXECUTED[form, aid] = run
    return _EXECUTED[form, aid]


def per_assignment():
    return [pytest.param(aid, id=aid, marks=pytest.mark.xdist_group(f"execute-{aid}")) for aid in assignments()]


def _record(record_property, form, aid):
    record_property("notebook_seconds", {f"{form}/{aid}": SECONDS[f"{form}/{aid}"]})


@pytest.mark.parametrize("aid", per_assignment())
def test_solution_runs_without_errors(aid, record_property):
    run = executed("solutions", aid)
    _record(record_property, "solutions", aid)
    failures = [f"{nbtools.describe(c, i)}\n    {e.ename}: {e.evalue}"
                for i, c in enumerate(run.nb.cells) for e in nbtools.errors(c)]
    assert not failures, f"solutions/{aid}.ipynb raised in {len(failures)} cell(s):\n" + "\n".join(failures)


@pytest.mark.parametrize("aid", per_assignment())
def test_solution_writes_nothing_to_stderr(aid):
    """nbgrader gives 0 to a test cell with stderr output; no cell of a worked solution should have any."""
    run = executed("solutions", aid)
    noisy = [f"{nbtools.describe(c, i)}\n    {nbtools.stderr(c)[:300]!r}"
             for i, c in enumerate(run.nb.cells) if nbtools.stderr(c)]
    assert not noisy, f"solutions/{aid}.ipynb wrote to stderr in:\n" + "\n".join(noisy)


@pytest.mark.parametrize("aid", per_assignment())
def test_solution_passes_every_test_cell(aid):
    """Each graded test cell ran, raised nothing, shows no value (nbgrader would read it as the score)
    and reached its closing `checks.ok` (a ✔ line on stdout)."""
    run = executed("solutions", aid)
    tests = [(i, c) for i, c in enumerate(run.nb.cells) if nbtools.is_test(c)]
    assert tests or aid == nbtools.ORIENTATION, f"solutions/{aid}.ipynb has no graded test cell"
    bad = []
    for i, cell in tests:
        if cell.execution_count is None:
            bad.append(f"{nbtools.describe(cell, i)}: not executed")
        elif nbtools.errors(cell):
            bad.append(f"{nbtools.describe(cell, i)}: {nbtools.errors(cell)[0].evalue}")
        elif any(o.output_type == "execute_result" for o in cell.outputs):
            bad.append(f"{nbtools.describe(cell, i)}: ends with an expression whose value is shown, "
                       "which nbgrader reads as the cell's score")
        elif "✔" not in nbtools.output_text(cell):
            bad.append(f"{nbtools.describe(cell, i)}: printed no ✔ line (does it end with checks.ok(...)?)")
    assert not bad, f"solutions/{aid}.ipynb:\n" + "\n".join(bad)


@pytest.mark.parametrize("aid", per_assignment())
def test_solution_shows_every_figure(aid):
    """A cell that creates matplotlib figures displays each of them (an image/png output per figure)."""
    run = executed("solutions", aid)
    hidden = [f"{nbtools.describe(run.nb.cells[i], i)}: {n} figure(s) created, "
              f"{nbtools.images(run.nb.cells[i])} image/png output(s)"
              for i, n in sorted(run.figures.items()) if nbtools.images(run.nb.cells[i]) < n]
    assert not hidden, (f"solutions/{aid}.ipynb does not show every figure it makes (end the cell with the "
                        "figure, or display it):\n" + "\n".join(hidden))


@pytest.mark.learner_version
@pytest.mark.parametrize("aid", per_assignment())
def test_learner_version_fails_only_its_checks(aid, record_property):
    """In notebooks/, only graded test cells may fail, each saying what is not implemented; nothing else breaks."""
    run = executed("notebooks", aid)
    _record(record_property, "notebooks", aid)
    problems = []
    exercises = set(nbtools.answer_ids(run.nb))
    for i, cell in enumerate(run.nb.cells):
        errs = nbtools.errors(cell)
        if nbtools.stderr(cell):
            problems.append(f"{nbtools.describe(cell, i)}: wrote to stderr {nbtools.stderr(cell)[:200]!r}")
        if errs and not nbtools.is_test(cell):
            problems.append(f"{nbtools.describe(cell, i)}: not a test cell, yet raised "
                            f"{errs[0].ename}: {errs[0].evalue}")
        elif errs and "not implemented" not in errs[0].evalue.lower():
            problems.append(f"{nbtools.describe(cell, i)}: failed with {errs[0].ename}: {errs[0].evalue!r}, "
                            "which does not say what is not implemented")
        owner = nbtools.exercise_of(nbtools.grade_id(cell) or "", exercises)
        if nbtools.is_test(cell) and owner and not owner[2] and not errs:
            problems.append(f"{nbtools.describe(cell, i)}: the visible check of an unimplemented exercise passed")
    assert not problems, f"notebooks/{aid}.ipynb:\n" + "\n".join(problems)


@pytest.mark.learner_version
@pytest.mark.parametrize("aid", per_assignment())
def test_run_all_reaches_the_last_cell_with_nothing_implemented(aid):
    """00's promise: a failing check does not stop Run All, so every section and figure is there to see.

    Executed as `nbconvert --execute` and JupyterLab's Run All do (the test cells carry the
    `raises-exception` tag; tests/browser/test_lab.py runs the same in JupyterLab itself).
    """
    run = executed("notebooks", aid)
    assert run.stopped is None, f"notebooks/{aid}.ipynb: Run All stopped:\n{run.stopped}"
    code = [(i, c) for i, c in enumerate(run.nb.cells) if c.cell_type == "code" and c.source.strip()]
    not_run = [nbtools.describe(c, i) for i, c in code if c.execution_count is None]
    assert not not_run, f"notebooks/{aid}.ipynb: Run All left cells unrun:\n" + "\n".join(not_run)


@pytest.mark.learner_version
@pytest.mark.parametrize("aid", per_assignment())
def test_a_failed_check_shows_its_message_first(aid):
    """What a learner reads first under a failed check is its message, not a traceback through ffn_helpers."""
    run = executed("notebooks", aid)
    bad = []
    for i, cell in enumerate(run.nb.cells):
        for error in nbtools.errors(cell):
            shown = nbtools.ANSI.sub("", "\n".join(error.traceback))
            first = error.evalue.splitlines()[0] if error.evalue else ""
            if not first or shown.splitlines()[0] != first or "ffn_helpers" in shown or "Traceback" in shown:
                bad.append(f"{nbtools.describe(cell, i)} shows:\n{shown[:600]}")
    assert not bad, f"notebooks/{aid}.ipynb:\n" + "\n".join(bad)


@pytest.mark.learner_version
@pytest.mark.parametrize("aid", per_assignment())
def test_a_demonstration_of_your_own_code_says_what_is_missing(aid):
    """A `with yours.attempt(...)` cell (09's and 13's gradient check, 13's run) runs the learner's code: in the
    unfinished notebook it says in a line which function is not written yet, raising nothing. Reuses the run."""
    run = executed("notebooks", aid)
    exercises = set(nbtools.answer_ids(run.nb))
    silent = []
    for i, cell in enumerate(run.nb.cells):
        if cell.cell_type != "code" or not nbtools.attempts(cell.source):
            continue
        text = nbtools.output_text(cell)
        said = re.findall(r"skipped, `([\w.]+)` is not implemented yet", text)
        if "PyTorch cross-check skipped: " in text and not said:
            continue  # no torch here: that cell's other one line (tests/test_your_own_code.py)
        if not said or not all(name.split(".")[0] in exercises for name in said) or nbtools.errors(cell):
            silent.append(f"{nbtools.describe(cell, i)} printed {nbtools.output_text(cell)[:300]!r}")
    assert not silent, f"notebooks/{aid}.ipynb:\n" + "\n".join(silent)


# Ticks that are true in an unmodified learner notebook: 00's `add_bias` is written for the
# learner (the orientation shows what a passing check looks like), so its check really passes.
TRUE_TICKS = {nbtools.ORIENTATION: ["✔ add_bias adds b to every row."]}


@pytest.mark.learner_version
@pytest.mark.parametrize("aid", per_assignment())
def test_unmodified_learner_notebook_claims_no_success(aid):
    """Nothing is implemented in notebooks/, so no cell may print a ✔ (`checks.ok`).

    A hidden-test cell whose `checks.ok` sat after its hidden block printed "✔ ... right on
    every hidden case" once nbgrader had stripped the block. Reuses the learner execution
    of `test_learner_version_fails_only_its_checks`: no extra kernel run.
    """
    run = executed("notebooks", aid)
    printed = [(i, c, line.strip()) for i, c in enumerate(run.nb.cells) if c.cell_type == "code"
               for line in nbtools.output_text(c).splitlines() if "✔" in line]
    expected = TRUE_TICKS.get(aid, [])
    assert [line for _, _, line in printed if line in expected] == expected, (
        f"notebooks/{aid}.ipynb no longer prints {expected}: update TRUE_TICKS")
    ticks = [f"{nbtools.describe(c, i)}\n    printed {line!r}" for i, c, line in printed if line not in expected]
    assert not ticks, (f"notebooks/{aid}.ipynb claims success with nothing implemented in "
                       f"{len(ticks)} cell(s):\n" + "\n".join(ticks))


def _seeded():
    return [pytest.param(aid, id=aid, marks=pytest.mark.xdist_group(f"execute-{aid}")) for aid in assignments()
            if "checks.hidden_" in (nbtools.SOLUTIONS_DIR / f"{aid}.ipynb").read_text(encoding="utf-8")]


@pytest.mark.parametrize("aid", _seeded())
def test_solution_passes_its_hidden_tests_with_an_offerings_own_seed(aid):
    """With an offering's own seed (checks.set_offering_seed, as the grader's judge sets it), every seeded hidden test
    draws other inputs, and the worked solution still passes them all. Reuses the solution's run (executed)."""
    executed("solutions", aid)
    offered = _OFFERED[aid]
    assert len(offered) == 1 + len(_seeded_hidden_tests(nbtools.solution(aid))) > 1, len(offered)
    assert all(c.execution_count is not None for c in offered), f"solutions/{aid}.ipynb: the offering's run stopped"
    failures = [f"{nbtools.describe(c, i)}\n    {e.ename}: {e.evalue[:500]}"
                for i, c in enumerate(offered) for e in nbtools.errors(c)]
    assert not failures, f"solutions/{aid}.ipynb with the offering seed {OFFERING}:\n" + "\n".join(failures)


@pytest.mark.parametrize("aid", per_assignment())
def test_a_graded_run_of_a_solution_never_imports_matplotlib(aid, tmp_path):
    """As the grader runs it (FFN_FIGURES=text), each figure is only its text alternative: importing matplotlib
    would be a third of a second of every graded kernel. A figure of a notebook's own goes through
    plots.custom_figure, which draws it (and imports matplotlib) only when it is drawn."""
    import nbformat

    from ffn_helpers.plots import FIGURES_ENV

    nb = nbformat.read(nbtools.SOLUTIONS_DIR / f"{aid}.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import sys\nprint('matplotlib' in sys.modules)"))
    nbformat.write(nb, tmp_path / f"{aid}.ipynb")
    run = nbtools.execute(tmp_path / f"{aid}.ipynb", cwd=nbtools.SOLUTIONS_DIR, env={**os.environ, FIGURES_ENV: "text"})
    failures = [f"{nbtools.describe(c, i)}\n    {e.ename}: {e.evalue[:300]}"
                for i, c in enumerate(run.nb.cells) for e in nbtools.errors(c)]
    assert not failures, f"solutions/{aid}.ipynb with {FIGURES_ENV}=text:\n" + "\n".join(failures)
    assert nbtools.output_text(run.nb.cells[-1]).strip() == "False", \
        f"solutions/{aid}.ipynb imports matplotlib in a graded run (draw a figure of its own with plots.custom_figure)"


@pytest.mark.learner_version
def test_nbconvert_execute_runs_an_unfinished_notebook_to_the_end(tmp_path):
    """`jupyter nbconvert --execute`, which stops at the first error outside a `raises-exception` cell."""
    import subprocess
    import sys

    import nbformat

    aid = "02_forward_pass"
    run = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                          str(nbtools.NOTEBOOKS_DIR / f"{aid}.ipynb"), "--output-dir", str(tmp_path)],
                         cwd=nbtools.NOTEBOOKS_DIR, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    nb = nbformat.read(tmp_path / f"{aid}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in code)
    visible = [t for t in nbtools.test_ids(nbtools.learner(aid)) if not t.endswith("_hidden")]
    assert [nbtools.grade_id(c) for c in code if nbtools.errors(c)] == visible  # each unfinished check failed


GENERIC_ALT = ("figure", "image", "plot", "chart", "no description has been provided for this image")


def _images_without_alt(nb):
    """Each image output of an executed notebook that carries no text alternative, or only a generic one.

    A course figure is an HTML <img> with its alt text, which JupyterLab and nbconvert show (their image renderers
    read none from an image/png's metadata); an image/png output must carry one in its metadata and beside it that
    <img>.
    """
    import html
    import re

    bad = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            shown = re.match(r'<img alt="([^"]*)"', str(data.get("text/html", "")))
            if "image/png" not in data and not str(data.get("text/html", "")).startswith("<img "):
                continue
            alt = html.unescape(shown.group(1)) if shown else ""
            if "image/png" in data and (out.get("metadata", {}).get("image/png") or {}).get("alt") != alt:
                bad.append(f"{nbtools.describe(cell, i)}: an image/png whose alt text is not its <img>'s")
            elif len(alt) < 40 or alt.strip(" .").lower() in GENERIC_ALT:
                bad.append(f"{nbtools.describe(cell, i)}: alt text {alt!r}")
    return bad


def _figures_stored_twice(nb):
    """Each output of an executed notebook that holds the same image's base64 more than once."""
    import re

    twice = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            for png in re.findall(r"base64,([A-Za-z0-9+/=]{100,})", str(data.get("text/html", ""))):
                if sum(str(v).count(png) for v in data.values()) > 1:
                    twice.append(nbtools.describe(cell, i))
            if "image/png" in data and str(data.get("text/html", "")).startswith("<img "):
                twice.append(nbtools.describe(cell, i))
    return twice


@pytest.mark.parametrize("aid", per_assignment())
def test_a_saved_notebook_stores_each_figure_once(aid):
    """Issue 52, point 8: every figure was stored as image/png and again, the same base64, in the <img> that
    carries its alt text (a saved 02 was 1.4 MB). Reuses the solution's execution, as a person's kernel runs it."""
    run = executed("solutions", aid)
    assert _figures_stored_twice(run.nb) == []
    shown = sum(nbtools.images(c) for c in run.nb.cells)
    assert shown >= sum(run.figures.values()), (shown, run.figures)


@pytest.mark.parametrize("form", ["solutions", pytest.param("notebooks", marks=pytest.mark.learner_version)])
@pytest.mark.parametrize("aid", per_assignment())
def test_every_figure_has_a_text_alternative(aid, form):
    """Every image a notebook shows says in words what it shows (WCAG 1.1.1): set `fig.alt` on a figure made by
    hand; ffn_helpers.plots sets it on its own. Reuses the executions above."""
    bad = _images_without_alt(executed(form, aid).nb)
    assert not bad, f"{form}/{aid}.ipynb shows images without a text alternative:\n" + "\n".join(bad)
