"""Formgrader's own page for each attack's autograded notebook runs no script (issue 23, gate 2).

formgrader (in the grading account's Jupyter server) renders `autograded/<student>/<id>/<id>.ipynb`
with nbconvert's HTMLExporter and nbgrader's `formgrade` template (its SubmissionHandler). Here the
page is made the same way, served in Chromium at a made-up origin with formgrader's own static files
(jQuery, Backbone, formgrade.js run as they do there) and nothing else, and every attack's payload
sets `window.pwned` or the title when it runs. A control page, the attack notebook before the
sanitiser, shows that the payloads do run when they reach the page.
"""

import mimetypes
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import nbtools
import pytest
from adversarial import ASSIGNMENT, EXERCISES, Context, out_gate

from autograder import sanitise

ORIGIN = "http://formgrader.test"
PAGE = f"{ORIGIN}/formgrader/submissions/one/"


def formgrader_html(path):
    """The HTML formgrader's SubmissionHandler answers for the notebook at `path`."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.template_name = "formgrade"  # FormgradeExtension.build_extra_config's two settings
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": ASSIGNMENT, "notebook_id": ASSIGNMENT, "submission_id": "one", "index": 0,
                 "total": 1, "base_url": "", "student": "someone", "last_name": None, "first_name": None,
                 "notebook_path": f"/autograded/someone/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"}
    html, _ = HTMLExporter(config=config).from_filename(str(path), resources=resources)
    return html


def _static():
    from nbgrader.server_extensions.formgrader import handlers

    return Path(handlers.__file__).parent / "static"


def ran(page, html):
    """Load `html` as formgrader's page; what the payloads left behind (None: nothing ran)."""
    static, dialogs = _static(), []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    def serve(route):
        url = urlparse(route.request.url)
        if route.request.url == PAGE:
            return route.fulfill(status=200, content_type="text/html", body=html)
        if url.netloc == "formgrader.test" and url.path.startswith("/formgrader/static/"):
            file = (static / url.path[len("/formgrader/static/"):]).resolve()
            if file.is_relative_to(static) and file.is_file():
                kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                return route.fulfill(status=200, content_type=kind, body=file.read_bytes())
        return route.abort()  # the API, MathJax's CDN, anything an attack points at

    page.route("**/*", serve)
    page.goto(PAGE)
    page.wait_for_load_state("load")
    page.wait_for_timeout(1500)  # image errors, toggles and loads have fired by now
    assert page.evaluate("typeof jQuery") == "function"  # formgrader's own scripts do run on the page
    found = page.evaluate("window.pwned || (document.title === 'pwned' ? 'title' : null)")
    return found or (dialogs[0] if dialogs else None)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    course_root, _, graded = out_gate.graded(tmp_path_factory.mktemp("formgrader"))
    return {"course": course_root, "graded": graded}


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("student", [out_gate.HONEST_TWIN, "fake-diagnosis", "markup"])
def test_formgraders_page_of_an_autograded_notebook_runs_no_script(batch, page, student):
    assert student in batch["graded"]
    path = batch["course"] / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert ran(page, formgrader_html(path)) is None


def _unsanitised_markup(tmp_path):
    solution = nbtools.cells_by_id(nbtools.solution(ASSIGNMENT))
    ctx = Context(learner=nbtools.learner(ASSIGNMENT), course="", results="",
                  answers={gid: solution[gid].source for gid in EXERCISES}, port=0)
    nb = out_gate.markup(ctx)
    show = next(c for c in nb.cells if c.cell_type == "code" and "display(HTML" in c.source)
    show.outputs = [nbformat.v4.new_output("display_data", data={"text/html": out_gate.HANDLER.format("html")})]
    path = tmp_path / "raw.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return nb, path


def test_the_control_page_runs_the_payloads_and_the_sanitised_one_does_not(page, tmp_path, browser):
    nb, path = _unsanitised_markup(tmp_path)
    assert ran(page, formgrader_html(path)) is not None  # the detection works: unsanitised, a payload runs
    clean = tmp_path / "clean.ipynb"
    clean.write_text(nbformat.writes(sanitise.notebook(nb)), encoding="utf-8")
    fresh = browser.new_context().new_page()
    try:
        assert ran(fresh, formgrader_html(clean)) is None
    finally:
        fresh.context.close()


def test_the_feedback_tests_hostile_notebook_runs_no_script_in_formgrader(page, tmp_path):
    """Every payload of tests/test_feedback_safety.py (outputs, MIME types, markdown, PNGs), as formgrader shows it."""
    from test_feedback_safety import hostile_notebook

    path = tmp_path / "hostile.ipynb"
    path.write_text(nbformat.writes(sanitise.notebook(hostile_notebook())), encoding="utf-8")
    assert ran(page, formgrader_html(path)) is None  # its payloads call alert(1): a dialog counts as a run
