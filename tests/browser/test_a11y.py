"""WCAG 2.1 AA in Chromium (axe-core, tests/browser/axe.py): the feedback page, the class report, the notebooks in
JupyterLab and as nbconvert HTML, and the FFN widget with the keyboard alone.

Zero serious or critical violations; every other rule that fires is listed below with why it is accepted.
Each notebook is checked after a Run All another test makes anyway (`check_notebook`), not run twice: the solutions
in test_lab.py's, the learner versions in test_first_hour.py's (00_start_here's in test_lab.py's).
"""

import re

import nbformat
import nbtools
import pytest
from report_fixtures import answer_cells, renamed, synthetic_class, write_class, write_notebooks

from autograder import SOLUTIONS_DIR, pages
from autograder.grading.gate_out import feedback
from autograder.report import class_report as report

from . import axe
from .jlab import cell_by_text, notebook, open_notebook, run_cell, save

AID = "02_forward_pass"

# The course's own pages: nothing is accepted.
PAGE_ACCEPTED = {}

# JupyterLab's notebook panel, from JupyterLab's own markup (the course cannot change it): moderate or minor only.
LAB_ACCEPTED = {
    "region": "JupyterLab's panels are not all inside landmarks (its shell, not the notebook's content)",
    "landmark-unique": "JupyterLab gives several of its own toolbars and panels the same landmark role",
    "heading-order": "a notebook's markdown headings follow the course's sections; JupyterLab numbers none",
    "page-has-heading-one": "JupyterLab's page has no h1 outside the notebook",
    "landmark-one-main": "JupyterLab's shell marks no main landmark",
    "empty-table-header": "minor: a markdown table of 01 and of 04 leaves one column's header empty (course text)",
}

# Parts of the notebook panel that are JupyterLab's own controls, left out of the check: the course cannot change
# them, and each has a serious or critical finding upstream. Everything the course puts in a cell (markdown,
# outputs, figures, widgets) and the cells' prompts are checked.
LAB_EXCLUDED = {
    ".jp-InputArea-editor": "CodeMirror's editor: a role=textbox without an accessible name (aria-input-field-name)",
    ".jp-collapseHeadingButton": "the collapse button of a markdown heading has no name (button-name)",
}
LAB_CONTEXT = {"include": [".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"],
               "exclude": list(LAB_EXCLUDED)}

# Serious findings NOT fixed yet, by notebook: each must still fire (axe.check), so its fix is noticed.
LAB_KNOWN = {}

# A narrow window (800 px, 200 % zoom on a laptop: the notebook's cells about 370 px wide), checked again after the
# normal one for every notebook (WCAG 1.4.10, Reflow): its wide display formulas and tables are written on shorter
# lines in the sources, and the course's custom.css keeps MathJax's assistive copy in its box and lets long inline
# code break.
NARROW_WIDTH = 800

# nbconvert's lab template (moderate or minor only).
NBCONVERT_ACCEPTED = {
    "region": "nbconvert's lab template puts the cells in no landmark",
    "landmark-one-main": "nbconvert's lab template has no <main>",
    "heading-order": "a notebook's markdown headings follow the course's sections",
    "page-has-heading-one": "a notebook without a level-1 heading (nbconvert adds none)",
    "empty-table-header": LAB_ACCEPTED["empty-table-header"],
}


# ------------------------------------------------------------------------------------------- the feedback page


@pytest.fixture(scope="module")
def solved():
    """solutions/02 executed as `grade --draw-figures` runs it (its figures, the widget's static picture, each an
    image/png with its alt text, the form the grader keeps), and its course markdown."""
    import os

    from ffn_helpers.plots import FIGURES_ENV

    run = nbtools.execute(SOLUTIONS_DIR / f"{AID}.ipynb", cwd=SOLUTIONS_DIR, env={**os.environ, FIGURES_ENV: "png"})
    return run.nb, feedback.course_markdown(nbformat.read(SOLUTIONS_DIR / f"{AID}.ipynb", as_version=4))


def _result(nb, kind):
    """The grader's result for a full-marks, a partial or a flagged student of `nb`."""
    tests = [nbtools.grade_id(c) for c in nb.cells if nbtools.is_test(c)]
    cells, flags = [], []
    for k, gid in enumerate(tests):
        failed = kind == "partial" and k % 2 == 0 or kind == "flagged" and k == 0
        message = ("ffn_forward(x) is not close to the reference: expected [[0.2, -0.034, 0.5]], got "
                   "[[0.15, -0.084, 0.45]]. Likely mistake (missing_b1): z = x W1 forgets the bias b1; "
                   "the_longest_unbroken_identifier_a_learner_could_write_" * 3) if failed else ""
        cells.append({"grade_id": gid, "points": 0.0 if failed else 1.0, "max_points": 1.0,
                      "status": "failed" if failed else "passed", "message": message, "diagnosis": [
                          {"key": "missing_b1", "explanation": "z = x W1 forgets the bias b1"}] if failed else []})
    if kind == "flagged":
        flags.append({"kind": "reference", "exercise": "ffn_forward", "detail": "calls the reference ffn_forward"})
    score = sum(c["points"] for c in cells)
    return {"notebook": AID, "status": "flagged" if flags else "graded", "score": score,
            "max_score": float(len(cells)), "flags": flags, "cells": cells}


@pytest.mark.parametrize("kind", ["full", "partial", "flagged"])
def test_feedback_page_meets_wcag_aa(browser, tmp_path, solved, kind, artifacts):
    nb, course_text = solved
    path = tmp_path / "feedback.html"
    path.write_text(feedback.render(nb, _result(nb, kind), "learner", course_text), encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)  # axe is a script
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        axe.check(page, PAGE_ACCEPTED)
        assert page.evaluate("document.documentElement.lang") == "en"
        assert page.locator("main").count() == 1 and page.locator("header h1").count() == 1
        levels = [int(t[1]) for t in page.eval_on_selector_all("h1, h2, h3, h4, h5, h6",
                                                               "hs => hs.map(h => h.tagName)")]
        assert all(b <= a + 1 for a, b in zip(levels, levels[1:], strict=False)), f"headings skip a level: {levels}"
        _assert_mathml_drawn(page)
        _assert_summary_fits(page, nb)
        alts = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.alt)")
        assert alts and all(len(a) > 40 and "without a description" not in a for a in alts), alts
        page.screenshot(path=str(artifacts / f"feedback-{kind}.png"), full_page=False)
    finally:
        context.close()


def _assert_mathml_drawn(page):
    """The course's formulas are MathML Chromium lays out, and no raw LaTeX is left in the course's text."""
    maths = page.locator("math")
    assert maths.count() > 20
    box = maths.first.bounding_box()
    assert box and box["width"] > 5 and box["height"] > 5
    text = page.locator("div.md").all_inner_texts()
    assert not [t for t in text if re.search(r"\$[^$]*\\(text|mathrm|frac)", t)], "raw LaTeX left on the page"


def _assert_summary_fits(page, nb):
    """A row for every test, passed ones too, and nothing in the summary sticks out of its box."""
    rows = page.locator(".summary tbody tr")
    assert rows.count() == sum(1 for c in nb.cells if nbtools.is_test(c))
    over = page.evaluate("""() => {
        const box = document.querySelector('.summary').getBoundingClientRect();
        return [...document.querySelectorAll('.summary *')].filter(e => {
            const r = e.getBoundingClientRect();
            return r.right > box.right + 0.5 || e.scrollWidth > e.clientWidth + 1 && e.tagName !== 'MATH';
        }).map(e => e.tagName + ': ' + e.textContent.slice(0, 60));
    }""")
    assert over == [], f"sticks out of the summary: {over}"
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


# ------------------------------------------------------------------------------------------- the class report


def test_class_report_and_answers_to_look_at_meet_wcag_aa(page, tmp_path):
    """A class with students at full marks, partial credit and flagged; the answers-to-look-at section too."""
    records, construction = synthetic_class(40, seed=9)
    statuses = {r["status"] for r in records}
    assert {"graded", "flagged"} <= statuses, statuses
    results = write_class(tmp_path / "results", records)
    copier, first, second = sorted(construction.scores)[:3]
    solution = answer_cells(SOLUTIONS_DIR / f"{AID}.ipynb")["ffn_forward"]
    notebooks = write_notebooks(tmp_path / "autograded", AID, {copier: {"ffn_forward": renamed(solution, "mine")},
                                                               first: {"ffn_forward": renamed(solution, "b")}})
    out = tmp_path / "report.html"
    assert report.main([AID, "--results", str(results), "--out", str(out), "--salt", "a11y", "--anonymise",
                        "--notebooks", str(notebooks)]) == 0
    page.goto(out.as_uri())
    axe.check(page, PAGE_ACCEPTED)
    axe.check(page, PAGE_ACCEPTED, context="#look")
    assert page.locator("#look table").count() >= 1
    assert page.evaluate("document.documentElement.lang") == "en" and page.locator("main").count() == 1
    assert page.locator("th[scope]").count() > 10

def test_a_long_answer_side_by_side_scrolls_and_is_reached_by_keyboard(page, tmp_path):
    """Two long answers alike: each scrolls in its box (axe-core: scrollable-region-focusable), reached by Tab."""
    records, construction = synthetic_class(12, seed=4)
    results = write_class(tmp_path / "results", records)
    first, second = sorted(construction.scores)[:2]
    solution = answer_cells(SOLUTIONS_DIR / f"{AID}.ipynb")["ffn_forward"]
    longer = "\n".join([solution, *(f"step_{i} = np.tanh(x @ W1 + b1) * {i} + np.sum(b2) / {i + 1}  # "
                                     + "a long line, wider than half the page " * 3 for i in range(1, 60))])
    notebooks = write_notebooks(tmp_path / "autograded", AID, {first: {"ffn_forward": renamed(longer, "a")},
                                                               second: {"ffn_forward": renamed(longer, "b")}})
    out = tmp_path / "report.html"
    assert report.main([AID, "--results", str(results), "--out", str(out), "--notebooks", str(notebooks)]) == 0
    page.goto(out.as_uri())
    scrolling = page.evaluate("[...document.querySelectorAll('#look .side pre')].filter("
                              "e => e.scrollHeight > e.clientHeight && e.scrollWidth > e.clientWidth).length")
    assert scrolling >= 2  # the two long answers (the published solution beside them is short)
    axe.check(page, PAGE_ACCEPTED)
    for _ in range(200):  # Tab through the page until the first box has the focus
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('#look .side pre') && "
                         "document.activeElement.scrollHeight > document.activeElement.clientHeight"):
            break
    else:
        raise AssertionError("Tab never reaches the answers' boxes")
    for key in ("ArrowDown", "ArrowRight"):  # the keyboard scrolls the box it is in, both ways
        page.keyboard.press(key)
    page.wait_for_function("document.activeElement.scrollTop > 0 && document.activeElement.scrollLeft > 0")


# ------------------------------------------------------------------------------------------- notebooks


def check_notebook(page, server, path, artifacts):
    """After Run All: axe on the notebook panel, then on the saved notebook as nbconvert's HTML."""
    name = path.split("/")[-1][:-len(".ipynb")]
    axe.check(page, LAB_ACCEPTED, context=LAB_CONTEXT, known=LAB_KNOWN.get(name))
    _check_narrow(page, path)
    missing = notebook(page).locator(".jp-OutputArea-output img:not([alt])").count()
    assert missing == 0, f"{path}: {missing} image(s) without alt text in JupyterLab"
    save(page, server.root / path)
    html = pages.notebook_html(server.root / path)
    target = artifacts.parent / "a11y" / (path.replace("/", "-") + ".html")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    converted = page.context.new_page()
    try:
        converted.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())  # no network
        converted.goto(target.as_uri())
        axe.check(converted, NBCONVERT_ACCEPTED)
        generic = converted.locator('img[alt="No description has been provided for this image"]').count()
        assert generic == 0, f"{path}: {generic} image(s) with nbconvert's generic alt text"
    finally:
        converted.close()


def _check_narrow(page, path):
    """axe again at NARROW_WIDTH, and no markdown (a markdown cell's, or markdown a code cell displays) wider than
    its box: every formula and table is read without scrolling."""
    size = page.viewport_size
    page.set_viewport_size({"width": NARROW_WIDTH, "height": size["height"]})
    try:
        # JupyterLab lays the panel out again, to the new width
        page.wait_for_function("""w => { const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
                                         return panel && panel.getBoundingClientRect().right <= w; }""",
                               arg=NARROW_WIDTH, polling=100)
        axe.check(page, LAB_ACCEPTED, context=LAB_CONTEXT)
        wide = notebook(page).evaluate("""n => [...n.querySelectorAll(
                '.jp-MarkdownOutput, .jp-OutputArea-output.jp-RenderedMarkdown')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60))""")
        assert wide == [], f"{path}: markdown wider than its cell at {NARROW_WIDTH} px: {wide}"
    finally:
        page.set_viewport_size(size)


# ------------------------------------------------------------------------------------------- the widget


def test_widget_works_with_the_keyboard_alone_and_meets_wcag_aa(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, f"solutions/{AID}.ipynb")
    cell = cell_by_text(page, "widgets.interactive_ffn(")
    for source in ("import numpy as np", "widgets.interactive_ffn("):
        run_cell(page, cell_by_text(page, source))
    view = cell.locator(".ffn-interactive")
    view.wait_for()
    axe.check(page, {}, context=".ffn-interactive")
    stage = view.locator(".ffn-stage-name")
    assert stage.inner_text().startswith("Stage 1 of 4")
    # Each input is a number box named by its label; ArrowUp steps it, and every stage is recomputed.
    boxes = view.get_by_role("spinbutton")
    assert boxes.count() == 3
    for i in range(3):
        assert view.get_by_role("spinbutton", name=f"x[{i}]").count() == 1, f"input x[{i}] has no accessible name"
    first = view.get_by_role("spinbutton", name="x[0]")
    first.focus()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    page.wait_for_function("""() => document.querySelector('.ffn-interactive td[data-stage="0"]')
                                          .textContent === '1.05'""")
    # Tab goes on from the inputs to the buttons; Enter and Space press them.
    step = view.get_by_role("button", name="Step")
    for _ in range(10):  # x[1], x[2], Back (disabled at the first stage: skipped), Step
        if step.evaluate("b => b === document.activeElement"):
            break
        page.keyboard.press("Tab")
    assert step.evaluate("b => b === document.activeElement"), "Tab never reached the Step button"
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('.ffn-stage-name').textContent.startsWith('Stage 2')")
    page.keyboard.press("Space")
    page.wait_for_function("() => document.querySelector('.ffn-stage-name').textContent.startsWith('Stage 3')")
    view.screenshot(path=str(artifacts / "widget-keyboard.png"))
