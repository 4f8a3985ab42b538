"""A learner's first Run All in JupyterLab, in Chromium: every section runs, failed checks read first, and what
the learner sees meets WCAG 2.1 AA."""

import re

import pytest

from autograder import assignments

from .jlab import cell_by_text, notebook, open_notebook, replace_cell_source, run_all, run_cell
from .test_a11y import check_notebook


def _prompts(page):
    return notebook(page).locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()


@pytest.mark.parametrize("assignment", [a for a in assignments() if a != "00_start_here"])
def test_run_all_reaches_the_last_cell_with_nothing_implemented_and_meets_wcag_aa(page, learner_lab, artifacts,
                                                                                  assignment):
    """Restart & Run All on a learner notebook: the failing checks do not stop it; the last cell runs. Then what the
    learner sees meets WCAG 2.1 AA in JupyterLab and as HTML (test_a11y.check_notebook, on this same run)."""
    path = f"notebooks/{assignment}.ipynb"
    open_notebook(page, learner_lab, path)
    run_all(page)
    page.screenshot(path=str(artifacts / f"run-all-{assignment}.png"))
    prompts = _prompts(page)
    assert prompts and all(re.search(r"\[\d+\]", p) for p in prompts), f"cells not all executed: {prompts}"
    errors = notebook(page).locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
    assert errors.count() > 0  # the checks of the unfinished exercises did fail
    for i in range(errors.count()):
        lines = errors.nth(i).inner_text().strip().splitlines()
        # A check of several cases names the case first ("Case: W-4's two tokens"), then what failed.
        first = lines[1] if lines[0].startswith("Case: ") and len(lines) > 1 else lines[0]
        assert "is not implemented yet" in first, lines[:2]
    check_notebook(page, learner_lab, path, artifacts)


NAME_ERROR = ("def ffn_forward(x, W1, b1, W2, b2):\n"
              "    return np.maximum(x @ W + b1, 0) @ W2 + b2\n")


def test_a_crash_in_the_learners_code_shows_the_message_then_only_their_frame(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "notebooks/02_forward_pass.ipynb")
    run_cell(page, cell_by_text(page, "import numpy as np"))
    answer = cell_by_text(page, "def ffn_forward(")
    check = cell_by_text(page, "checks.check(ffn_forward")
    replace_cell_source(page, answer, NAME_ERROR)
    run_cell(page, answer)
    run_cell(page, check)
    shown = check.locator(".jp-OutputArea").inner_text()
    page.screenshot(path=str(artifacts / "02-name-error.png"))
    lines = [line for line in shown.splitlines() if line.strip()]
    assert lines[0] == "ffn_forward raised NameError: name 'W' is not defined", lines[:3]
    assert shown.count("Traceback") == 1 and "checks.py" not in shown and "ffn_helpers" not in shown
    assert "x @ W + b1" in shown  # the learner's own line, where it went wrong


def test_the_learner_lab_has_no_empty_nbgrader_menu_and_keeps_validate(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "notebooks/01_relu_sign_cases.ipynb")
    page.screenshot(path=str(artifacts / "learner-lab-menus.png"))
    labels = page.locator(".lm-MenuBar-itemLabel").all_text_contents()
    assert "Run" in labels and "Nbgrader" not in labels, labels
    assert page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").count() == 1
