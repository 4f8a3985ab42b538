"""What a person sees in the learner's and the instructor's JupyterLab, in a real Chromium."""

import re
import urllib.error
import urllib.request

import pytest

from autograder import assignments
from ffn_helpers import examples as ex

from .jlab import (
    cell_by_text,
    error_outputs,
    menu_items,
    notebook,
    open_notebook,
    replace_cell_source,
    run_all,
    run_cell,
)
from .test_a11y import check_notebook


def test_start_here_runs_all_without_errors(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "notebooks/00_start_here.ipynb")
    run_all(page)
    page.screenshot(path=str(artifacts / "00_start_here-run-all.png"), full_page=False)
    assert error_outputs(page) == []
    # the demonstration of a failing check printed its message, and the real check passed
    text = notebook(page).inner_text()
    assert "The check failed, as it should" in text and "✔" in text
    check_notebook(page, learner_lab, "notebooks/00_start_here.ipynb", artifacts)  # WCAG 2.1 AA (test_a11y.py)


@pytest.mark.parametrize("assignment", assignments())
def test_solution_runs_all_and_renders_every_figure(page, learner_lab, artifacts, assignment):
    open_notebook(page, learner_lab, f"solutions/{assignment}.ipynb")
    run_all(page)
    page.screenshot(path=str(artifacts / f"solution-{assignment}.png"))
    assert error_outputs(page) == []
    prompts = notebook(page).locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
    assert prompts and all(re.search(r"\[\d+\]", p) for p in prompts), f"cells not all executed: {prompts}"
    # A course figure is shown as an <img> with its alt text in an HTML output (ffn_helpers.plots.CourseFigure).
    figures = notebook(page).locator(".jp-OutputArea-output img")
    expected = notebook(page).locator(".jp-CodeCell").filter(has=page.locator(".jp-OutputArea-output img")).count()
    assert figures.count() >= expected and (expected > 0 or assignment == "00_start_here"), "no figure shown"
    for i in range(figures.count()):
        assert figures.nth(i).evaluate("img => img.complete && img.naturalWidth > 0"), f"figure {i} did not render"
    check_notebook(page, learner_lab, f"solutions/{assignment}.ipynb", artifacts)  # WCAG 2.1 AA (test_a11y.py)


CORRECT_FFN = ("def ffn_forward(x, W1, b1, W2, b2):\n"
               "    return np.maximum(np.asarray(x) @ W1 + b1, 0) @ W2 + b2\n")
FORGOT_B1 = ("def ffn_forward(x, W1, b1, W2, b2):\n"
             "    return np.maximum(np.asarray(x) @ W1, 0) @ W2 + b2\n")


def test_typing_an_answer_runs_its_check_and_names_a_mistake(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "notebooks/02_forward_pass.ipynb")
    run_cell(page, cell_by_text(page, "import numpy as np"))  # the setup cell
    answer = cell_by_text(page, "def ffn_forward(")
    check = cell_by_text(page, "checks.check(ffn_forward")

    replace_cell_source(page, answer, FORGOT_B1)
    run_cell(page, answer)
    run_cell(page, check)
    failure = check.locator(".jp-OutputArea").inner_text()
    page.screenshot(path=str(artifacts / "02-wrong-answer-diagnosis.png"))
    assert "Likely mistake (missing_b1)" in failure and "b1" in failure

    replace_cell_source(page, answer, CORRECT_FFN)
    run_cell(page, answer)
    run_cell(page, check)
    passed = check.locator(".jp-OutputArea").inner_text()
    page.screenshot(path=str(artifacts / "02-correct-answer-passes.png"))
    assert "✔" in passed and "Error" not in passed


def test_validate_button_reports_the_unfinished_exercises(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "notebooks/01_relu_sign_cases.ipynb")
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar").get_by_text("Validate").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=120_000)
    dialog.locator(".jp-Dialog-body").filter(has_not_text="Validating").first.wait_for(timeout=120_000)
    page.screenshot(path=str(artifacts / "validate-dialog.png"))
    body = dialog.inner_text()
    assert "failed" in body.lower() and "NotImplementedError" in body


def test_interactive_ffn_steps_to_the_w2_output(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "solutions/02_forward_pass.ipynb")
    run_all(page)
    view = notebook(page).locator(".ffn-interactive").first
    view.scroll_into_view_if_needed()
    step = view.get_by_role("button", name="Step")
    for _ in range(3):
        step.click()
    view.locator('td[data-stage="3"]').first.wait_for()
    page.screenshot(path=str(artifacts / "interactive-ffn-output-stage.png"))
    shown = [float(t.replace("−", "-")) for t in view.locator('td[data-stage="3"]').all_inner_texts()]
    assert shown == pytest.approx(list(ex.W_2.y), abs=5e-7)
    inactive = view.locator("td.ffn-inactive[data-stage='2']").all_inner_texts()
    assert inactive == ["0"]  # hidden unit 1 of W-2 is off, and shown greyed


def test_learner_lab_hides_formgrader_and_create_assignment(page, learner_lab, artifacts):
    open_notebook(page, learner_lab, "notebooks/00_start_here.ipynb")
    page.screenshot(path=str(artifacts / "learner-lab.png"))
    nbgrader_items = " ".join(menu_items(page, "Nbgrader")).lower()
    assert "formgrader" not in nbgrader_items and "course" not in nbgrader_items
    assert page.get_by_title("Create Assignment").count() == 0
    assert page.locator(".jp-SideBar").get_by_text("Create Assignment").count() == 0
    assert page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate").count() == 1
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(learner_lab.url("formgrader"))
    assert refused.value.code == 404


def test_instructor_lab_has_formgrader_and_create_assignment(page, instructor_lab, artifacts):
    page.goto(instructor_lab.url("lab"))
    page.locator(".jp-LabShell").wait_for()
    page.locator(".jp-SideBar").get_by_text("Create Assignment").wait_for()
    items = menu_items(page, "Nbgrader")
    page.screenshot(path=str(artifacts / "instructor-lab.png"))
    assert any("Formgrader" in i for i in items), items
    with urllib.request.urlopen(instructor_lab.url("formgrader/manage_assignments")) as r:
        assert r.status == 200 and b"Manage Assignments" in r.read()


def test_the_server_refuses_requests_without_the_token(learner_lab):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(learner_lab.url("api/contents", token=False))
    assert refused.value.code == 403
    with pytest.raises(urllib.error.HTTPError) as wrong:
        urllib.request.urlopen(learner_lab.url("api/contents", token=False) + "?token=not-the-token")
    assert wrong.value.code == 403
    with urllib.request.urlopen(learner_lab.url("api/contents")) as r:
        assert r.status == 200
