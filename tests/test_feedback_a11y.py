"""The feedback page reads aloud: the course's formulas as MathML, one row per test, figures described.

The MathML is made from the course's own markdown only, and passes a whitelist of its
own (autograder/mathml.py): even hostile course text yields no script-capable markup.
The page in a browser (landmarks, contrast, axe-core) is tests/browser/test_a11y.py.
"""

import re
from html.parser import HTMLParser

import nbformat
import pytest
from test_feedback_safety import HOSTILE_MARKDOWN, PNG, audit  # tests/ is on sys.path (tests/conftest.py)

from autograder import NOTEBOOKS_DIR, mathml
from autograder.grading.gate_out import feedback

COURSE = nbformat.read(NOTEBOOKS_DIR / "02_forward_pass.ipynb", as_version=4)
FORMULA = next(c.source for c in COURSE.cells if c.cell_type == "markdown" and r"$d_\text{ff}$" in c.source)


class _MathAudit(HTMLParser):
    """Every element inside <math> that is not MathML's presentation markup the whitelist admits."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.outside = 0, []

    def handle_starttag(self, tag, attrs):
        if self.depth and tag not in mathml._TAGS:
            self.outside.append(tag)
        self.depth += tag == "math" or (self.depth > 0 and tag != "mspace")

    def handle_endtag(self, tag):
        self.depth -= self.depth > 0 and tag != "mspace"


def assert_safe(page):
    """test_feedback_safety's audit, where <math> is allowed if all inside it is whitelisted MathML."""
    problems = [p for p in audit(page).problems if p != "<math>"]
    assert not problems and "<script" not in page.lower(), problems[:20]
    found = _MathAudit()
    found.feed(page)
    assert not found.outside, found.outside


def result(points):
    """A notebook result with two tests: `points` of 2 on the first, full marks on the second."""
    return {"notebook": "02_forward_pass", "status": "graded", "score": points + 1.0, "max_score": 3.0, "flags": [],
            "cells": [{"grade_id": "test_ffn_forward", "points": points, "max_points": 2.0, "status": "failed",
                       "message": "ffn_forward(x) " + "is far from the reference " * 12, "diagnosis": []},
                      {"grade_id": "test_shapes", "points": 1.0, "max_points": 1.0, "status": "passed",
                       "message": "", "diagnosis": []}]}


def page_of(cells, points=0.0, course_text=frozenset()):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    return feedback.render(nb, result(points), "learner", course_text)


def test_the_courses_formulas_become_mathml_and_a_learners_stay_text():
    course = nbformat.v4.new_markdown_cell(FORMULA)
    learner = nbformat.v4.new_markdown_cell(FORMULA + " (edited)")
    page = page_of([course, learner], course_text=feedback.course_markdown(COURSE))
    course_html, learner_html = re.findall(r'<div class="cell md">(.*?)</div>', page, re.S)
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in course_html
    assert "<msub><mi>d</mi><mtext>ff</mtext></msub>" in course_html and "$" not in course_html
    assert "<math" not in learner_html and r"$d_\text{ff}$" in learner_html
    assert_safe(page)


def test_display_math_is_a_block_and_code_keeps_its_dollars():
    html = mathml.with_math("Before $$z = x W_1 + b_1$$ and `cost = $5` after.", feedback.markdown_html)
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in html
    assert "<code>cost = $5</code>" in html


def test_inline_math_may_wrap_a_line_but_not_a_paragraph():
    wrapped = mathml.with_math("The path $x \\to z\n  \\to y$: one line.", feedback.markdown_html)
    assert wrapped.count("<math") == 1 and "$" not in wrapped
    apart = mathml.with_math("costs $5\n\nand $6 more", feedback.markdown_html)
    assert "<math" not in apart and apart.count("$") == 2


def test_every_formula_of_the_course_becomes_mathml():
    """No formula of any notebook falls back to LaTeX, and the whitelist drops no element latex2mathml made."""
    from latex2mathml.converter import convert

    for path in sorted(NOTEBOOKS_DIR.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            html = mathml.with_math(cell.source, feedback.markdown_html)
            assert "$" not in re.sub(r"<code>.*?</code>", "", html, flags=re.S), (path.name, cell.source[:200])
            for m in mathml._MATH.finditer(cell.source):
                if m.group(1) is None:
                    latex = m.group(2) or m.group(3)
                    made = convert(latex, display="block" if m.group(2) else "inline")
                    tags = re.compile(r"<([a-z]+)")
                    assert tags.findall(mathml.clean_mathml(made)) == tags.findall(made), latex


def test_a_formula_latex2mathml_cannot_read_stays_latex_as_code():
    assert mathml.to_mathml(r"\frac{1}{") == r"<code>\frac{1}{</code>"


HOSTILE_MATH = [
    r"$\href{javascript:alert(1)}{x}$",
    r"$\style{background:url(javascript:alert(1))}{x}$",
    r"$\text{<script>alert(1)</script>}$",
    r"$x<img src=x onerror=alert(1)>$",
    r"$$\unicode{<svg onload=alert(1)>}$$",
    r"$\mathrm{\"onmouseover=alert(1)}$",
]


@pytest.mark.parametrize("markup", [
    '<math><maction actiontype="statusline" href="javascript:alert(1)"><mi>x</mi></maction></math>',
    '<math><mi onclick="alert(1)" style="x" href="javascript:alert(1)">x</mi></math>',
    '<math><semantics><mi>x</mi><annotation-xml encoding="text/html"><img src=x onerror=alert(1)>'
    "</annotation-xml></semantics></math>",
    '<math><mtext><script>alert(1)</script></mtext><mi mathvariant="normal&quot; onload=&quot;x">y</mi></math>',
])
def test_the_mathml_whitelist_keeps_nothing_that_links_or_runs(markup):
    clean = mathml.clean_mathml(markup)
    assert not re.search(r"script|href|on\w+=|style|annotation|img|semantics|maction", clean, re.I), clean


def test_hostile_course_text_still_gives_a_safe_page():
    """The worst case: the course's own markdown is hostile. Its MathML and its HTML both pass their whitelists."""
    sources = HOSTILE_MARKDOWN + HOSTILE_MATH
    page = page_of([nbformat.v4.new_markdown_cell(s) for s in sources], course_text=frozenset(sources))
    assert_safe(page)
    assert "<math" in page and not re.search(r"<m\w+[^>]*\s(on\w+|href|style)=", page)


def test_the_summary_has_a_row_for_every_test_passed_or_not():
    page = page_of([], points=1.0)
    rows = re.findall(r"<tr>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*<td>(.*?)</td>\s*</tr>", page, re.S)
    assert [(re.sub("<.*?>", "", a), b) for a, b, _ in rows] == [("test_ffn_forward", "1 / 2"),
                                                                   ("test_shapes", "1 / 1")]
    assert rows[0][2].startswith("✘ ffn_forward(x) is far") and rows[1][2] == "✔ passed"


def test_a_figure_on_the_page_keeps_the_alt_text_its_output_carries():
    alt = "Histogram: 40 pre-activations z from -2 to 2, split at 0"
    cell = nbformat.v4.new_code_cell("plots.preactivation_histogram(z)")
    cell.outputs = [nbformat.from_dict({"output_type": "display_data", "data": {"image/png": PNG},
                                        "metadata": {"image/png": {"alt": alt + '" onerror="alert(1)'}}})]
    page = page_of([cell])
    # Quotes and markup characters become spaces (sanitise.image_alt): safe in any template's attribute.
    assert f'<img alt="{alt} onerror= alert(1)" src="data:image/png' in page
    assert_safe(page)
    cell.outputs[0]["metadata"] = {}
    assert '<img alt="a figure from this cell (it came without a description)"' in page_of([cell])
