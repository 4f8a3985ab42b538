"""The hints in a real Chromium: folded, opened one at a time with the keyboard alone, in JupyterLab and in
nbconvert's HTML, and WCAG 2.1 AA with every hint open (tests/test_hints.py checks the sources)."""

import re

from autograder import pages

from . import axe
from .jlab import notebook, open_notebook
from .test_a11y import LAB_ACCEPTED, LAB_CONTEXT, NBCONVERT_ACCEPTED

PATH = "notebooks/13_training.ipynb"
FIRST = "Hint 1 of 3 for mse_loss"


def _open_in_order(page, scope, prefix, n):
    """Hint k + 1 is hidden until hint k is opened, by Tab to its summary and Enter; Space folds it again."""
    summaries = [scope.locator("summary", has_text=re.compile(f"^{prefix} {k} of {n} ")) for k in range(1, n + 1)]
    for k, summary in enumerate(summaries):
        assert summary.first.is_visible(), f"hint {k + 1} should show once hint {k} is open"
        if k + 1 < n:
            assert not summaries[k + 1].first.is_visible(), f"hint {k + 2} shows before hint {k + 1} is open"
        summary.first.focus()
        assert summary.first.evaluate("s => s === document.activeElement"), "a summary takes the keyboard's focus"
        page.keyboard.press("Enter")
        summary.first.locator("xpath=..").wait_for(state="attached")
        page.wait_for_function("s => s.parentElement.open", arg=summary.first.element_handle())
    text = summaries[-1].first.locator("xpath=..").inner_text()
    assert len(text.split()) > 12, text
    summaries[0].first.focus()
    page.keyboard.press("Space")
    page.wait_for_function("s => !s.parentElement.open", arg=summaries[0].first.element_handle())
    assert not summaries[1].first.is_visible()


def test_hints_open_one_at_a_time_by_keyboard_in_jupyterlab(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, PATH)
    cell = notebook(page).locator(".jp-MarkdownCell", has=page.locator("summary", has_text=FIRST))
    cell.scroll_into_view_if_needed()
    assert cell.locator("details").count() == 3
    _open_in_order(page, cell, "Hint", 3)
    for summary in cell.locator("summary").all():  # every hint open, then WCAG 2.1 AA on the page
        if not summary.evaluate("s => s.parentElement.open"):
            summary.click()
    page.screenshot(path=str(artifacts / "13-hints-open.png"))
    axe.check(page, LAB_ACCEPTED, context=LAB_CONTEXT)


def test_hints_open_one_at_a_time_by_keyboard_in_nbconvert_html(page, learner_lab, tmp_path):
    html = pages.notebook_html(learner_lab.root / PATH)
    target = tmp_path / "13_training.html"
    target.write_text(html, encoding="utf-8")
    page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())  # no network
    page.goto(target.as_uri())
    assert page.locator("details").count() >= 3 * 2  # every exercise's, at least two each
    scope = page.locator(".jp-MarkdownCell, .jp-Cell", has=page.locator("summary", has_text=FIRST)).last
    _open_in_order(page, scope, "Hint", 3)
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    axe.check(page, NBCONVERT_ACCEPTED)
