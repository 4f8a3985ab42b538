"""nbgrader's own feedback page (`nbgrader generate_feedback`, what `release_feedback` hands students), made with
the course's configuration: the same bar as the grader's pages. WCAG 2.1 AA in Chromium (axe), the course's
formulas as MathML with nothing fetched and no script, each figure's text alternative (in place of the figure, as
`grade` leaves it, or from its output metadata with `grade --draw-figures`); and, built from a hostile notebook by
the same configured exporter, the feedback pages' safety audit.
"""

import json
import re
import subprocess
import sys
import zipfile

import nbformat
import nbtools
import pytest
from adversarial import grading
from run_locks import one_batch
from test_feedback_safety import PNG, audit, hostile_notebook

from autograder.grading import course

from . import axe

AID = "02_forward_pass"
MISSING_B1 = "def ffn_forward(x, W1, b1, W2, b2):\n    return np.maximum(x @ W1, 0) @ W2 + b2\n"
pytestmark = pytest.mark.grading


def _graded(tmp, *options):
    """A scratch course where one student, with the bias b1 forgotten, was graded by `python -m autograder grade`
    (with `options`) and given nbgrader's feedback by `nbgrader generate_feedback`: (course root, the page)."""
    root = grading.make_course(tmp / "course", AID)
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write('\nc.LmsCollector.timezone = "UTC"\n')  # Blackboard's names are read once the course's zone is set
    learner = nbtools.with_answers(nbtools.completed_learner(AID), {"ffn_forward": MISSING_B1})
    with zipfile.ZipFile(tmp / "download.zip", "w") as zf:
        zf.writestr(f"FFN02_bo_attempt_2024-05-02-11-30-00_{AID}.ipynb", nbformat.writes(learner))
    with one_batch(jobs=1):  # bo alone: grade runs one sandbox
        run = subprocess.run([sys.executable, "-m", "autograder", "grade", AID, str(tmp / "download.zip"), "--out",
                              str(tmp / "results"), "--course", str(root), *options], capture_output=True, text=True,
                             env=nbtools.nbgrader_env(), timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads((tmp / "results" / "bo.json").read_text())
    assert 0 < result["score"] < result["max_score"], result["score"]
    run = nbtools.nbgrader("generate_feedback", AID, cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    return root, root / "feedback" / "bo" / AID / f"{AID}.html"


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """Graded as `grade` does by default: each figure described in words."""
    return _graded(tmp_path_factory.mktemp("nbgrader-feedback"))


@pytest.fixture(scope="module")
def graded_course_drawn(tmp_path_factory):
    return _graded(tmp_path_factory.mktemp("nbgrader-feedback-drawn"), "--draw-figures")


@pytest.mark.parametrize("figures", ["described", "drawn"])
def test_nbgraders_feedback_page_meets_wcag_aa_with_mathml_and_alt_text(browser, figures, request, artifacts):
    _, path = request.getfixturevalue("graded_course_drawn" if figures == "drawn" else "graded_course")
    page_html = path.read_text(encoding="utf-8")
    assert "<script" not in page_html.lower() and "mathjax" not in page_html.lower()
    fetched = []  # every address a page asked for, but its own file and data: URLs
    for width in (1280, 600):
        context = browser.new_context(viewport={"width": width, "height": 900}, bypass_csp=True)  # axe is a script
        page = context.new_page()
        page.on("request", lambda r: fetched.append(r.url) if not r.url.startswith(("file:", "data:")) else None)
        try:
            page.goto(path.as_uri())
            axe.check(page, {})
            assert page.evaluate("document.documentElement.lang") == "en"
            assert page.locator("main").count() == 1 and page.locator("header h1").count() == 1
            maths = page.locator("math")
            assert maths.count() > 20
            box = maths.first.bounding_box()
            assert box and box["width"] > 5 and box["height"] > 5
            course_text = page.locator(".course-markdown").all_inner_texts()
            assert course_text and not [t for t in course_text if re.search(r"\$|\\(text|mathrm|frac)", t)]
            alts = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.alt)")
            described = re.findall(r"\[Figure \(not drawn while grading\): (.{40,}?)\]$",
                                   page.locator("body").inner_text(), flags=re.M)
            if figures == "drawn":
                assert alts and not described and all(len(a) > 40 and "without a description" not in a
                                                      for a in alts), alts
            else:
                assert len(described) >= 5 and not alts, (described, alts)
            assert page.locator(".course-score").count() >= 5  # every graded cell's score beside it
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
            assert fetched == [], fetched
            page.screenshot(path=str(artifacts / f"nbgrader-feedback-{figures}-{width}.png"))
        finally:
            context.close()


def _configured_exporter(root):
    """The exporter `nbgrader generate_feedback` builds from the course's configuration, without GetGrades (which
    reads the gradebook: scores are filled in as it would)."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades

    config = course.load_config(root)
    converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    for preprocessor in converter.preprocessors:
        if preprocessor is not GetGrades:
            exporter.register_preprocessor(preprocessor)
    return exporter


def test_nbgraders_feedback_page_of_a_hostile_notebook_is_safe(graded_course):
    """Every attack of the grader's pages' audit (test_feedback_safety.hostile_notebook), and LaTeX that tries
    markup in a learner's markdown, through the course's GenerateFeedback: no script at all, nothing that runs."""
    root, _ = graded_course
    nb = hostile_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell('$<img src=x onerror="alert(1)">$ and $$\\href{javascript:x}{y}$$'))
    for cell in nb.cells:  # what GetGrades adds
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") or meta.get("solution"):
            meta.update(score=0.0, points=meta.get("points", 0), comment=None)
    resources = {"nbgrader": {"assignment": AID, "notebook": AID, "student": "bo", "score": 0, "max_score": 2,
                              "late_penalty": 0}}
    page, _ = _configured_exporter(root).from_notebook_node(nb, resources=resources)
    found = audit(page)
    assert not found.problems, found.problems[:20]
    assert not found.scripts
    assert PNG in found.images
    assert "benign printed text 12345" in page
    assert "<math" not in page  # a learner's markdown keeps its LaTeX as text
