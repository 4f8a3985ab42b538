"""Hints in layers: every exercise of 01-13 has two or three, shown one at a time, and none gives its answer away.

A hint cell is the markdown cell right after an exercise's answer cell, authored in the
notebook's source: nested `<details>` elements, `<summary>Hint k of n for <exercise></summary>`,
each hint inside the one before it, so that JupyterLab, nbconvert's HTML and GitHub show hint
k + 1 only once hint k is open (tests/browser/test_hints_browser.py opens them there, with the
keyboard). A hint is course text: it carries no nbgrader metadata, and the graded cells around
it are what they were.
"""

import re
from html.parser import HTMLParser

import nbtools
import pytest
from test_course_build import SOLUTION_MARKERS, significant

from autograder import assignments

GRADED = [aid for aid in assignments() if aid != nbtools.ORIENTATION]
SUMMARY = re.compile(r"Hint (\d) of (\d) for (\w+)")
SPAN = re.compile(r"`([^`]+)`")
MIN_SPAN = 16  # characters, blanks left out: a shorter span is an idiom (`z > 0`, `.astype(float)`), not an answer
CONVERSION = re.compile(r"^(np\.(asarray|array|ascontiguousarray)|float|int)\(")  # setting up an input
NAME = re.compile(r"^[\w.]+$")  # a function's name (`np.take_along_axis`) points the way; it is no code


class _Layers(HTMLParser):
    """The nesting of a hint cell's <details>: for each, its depth, its summary's text and the text of its hint."""

    def __init__(self):
        super().__init__()
        self.depth, self.found, self.in_summary = 0, [], False

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.depth += 1
            self.found.append({"depth": self.depth, "summary": "", "text": ""})
        elif tag == "summary":
            self.in_summary = True

    def handle_endtag(self, tag):
        if tag == "details":
            self.depth -= 1
        elif tag == "summary":
            self.in_summary = False

    def handle_data(self, data):
        if self.found:
            self.found[-1]["summary" if self.in_summary else "text"] += data


def hint_cells(aid):
    """{exercise: the source of the markdown cell right after its answer cell} (None where there is none)."""
    nb = nbtools.source(aid)
    return {nbtools.grade_id(cell): (nxt.source if nxt.cell_type == "markdown" else None)
            for cell, nxt in zip(nb.cells, nb.cells[1:], strict=False) if nbtools.is_answer(cell)}


def layers(source):
    parser = _Layers()
    parser.feed(source)
    parser.close()
    return parser.found, parser.depth


@pytest.mark.parametrize("aid", GRADED)
def test_every_exercise_has_two_or_three_hints_shown_one_inside_the_other(aid):
    problems = []
    for exercise, source in hint_cells(aid).items():
        if source is None or "<details>" not in source:
            problems.append(f"{exercise}: the cell after its answer cell holds no hints")
            continue
        found, left_open = layers(source)
        shown = [SUMMARY.fullmatch(h["summary"].strip()) for h in found]
        if left_open or any(m is None for m in shown) or not 2 <= len(found) <= 3:
            problems.append(f"{exercise}: {len(found)} hints, summaries {[h['summary'] for h in found]}, "
                            f"{left_open} left open; expected 2 or 3 closed <details>, 'Hint k of n for {exercise}'")
            continue
        expected = [(str(k), str(len(found)), exercise) for k in range(1, len(found) + 1)]
        if [m.groups() for m in shown] != expected:
            problems.append(f"{exercise}: summaries {[m.group(0) for m in shown]}, expected Hint 1 of n, 2 of n ...")
        if [h["depth"] for h in found] != list(range(1, len(found) + 1)):
            problems.append(f"{exercise}: hint k + 1 must sit inside hint k (depths {[h['depth'] for h in found]})")
        if any(len(h["text"].split()) < 8 for h in found):
            problems.append(f"{exercise}: a hint of fewer than 8 words")
    assert not problems, f"{aid}:\n" + "\n".join(problems)


def _squashed(text):
    return re.sub(r"\s+", "", text)


def _shown_without_hints(aid):
    """Everything the learner version shows outside its hint cells, blanks left out."""
    hints = set(hint_cells(aid).values())
    return _squashed("\n".join(c.source for c in nbtools.learner(aid).cells if c.source not in hints))


@pytest.mark.parametrize("aid", GRADED)
def test_no_hint_contains_its_solutions_code(aid):
    """No line of an answer that says something (test_course_build.significant) is in its hints, and no code span
    of a hint copies a piece of the answer that the notebook does not already show outside its hints."""
    nb, cells, shown = nbtools.source(aid), None, _shown_without_hints(aid)
    cells = nbtools.cells_by_id(nb)
    leaks = []
    for exercise, source in hint_cells(aid).items():
        hint = _squashed((source or "").replace("`", ""))
        solution = [line.strip() for line in nbtools.between_markers(cells[exercise].source, *SOLUTION_MARKERS)]
        for line in solution:
            if significant(line) and _squashed(line) in hint:
                leaks.append(f"{exercise}: its hints hold the answer's line {line!r}")
        answer = _squashed("\n".join(solution))
        for span in SPAN.findall(source or ""):
            code = _squashed(span)
            if len(code) >= MIN_SPAN and not (CONVERSION.match(code) or NAME.match(code)) and code in answer \
                    and code not in shown:
                leaks.append(f"{exercise}: its hint quotes `{span}`, a piece of the answer shown nowhere else")
    assert not leaks, f"{aid}:\n" + "\n".join(leaks)


@pytest.mark.parametrize("aid", GRADED)
def test_hints_change_nothing_in_grading(aid):
    """A hint cell is plain course markdown, in the learner version and the worked solution alike: no nbgrader
    metadata, so nbgrader grades, locks and checksums the same cells as without it."""
    for form in (nbtools.learner(aid), nbtools.solution(aid)):
        sources = {c.source for c in form.cells}
        for exercise, source in hint_cells(aid).items():
            assert source in sources, f"{aid}: {exercise}'s hints are not in every form"
            cell = next(c for c in form.cells if c.source == source)
            assert cell.cell_type == "markdown" and "nbgrader" not in cell.metadata, (aid, exercise)


def test_the_hints_check_finds_a_copied_answer_line():
    """The check itself: a hint holding a line of its answer, or quoting a piece of it, is caught."""
    solution = "    z = np.asarray(x, dtype=float) @ W1 + b1\n    return np.maximum(z, 0.0) @ W2 + b2"
    assert significant("return np.maximum(z, 0.0) @ W2 + b2")
    hint = "Write `return np.maximum(z, 0.0) @ W2 + b2` at the end."
    assert _squashed("return np.maximum(z, 0.0) @ W2 + b2") in _squashed(hint.replace("`", ""))
    quoted = "Use `np.maximum(z, 0.0) @ W2` for the second layer."
    code = _squashed(SPAN.findall(quoted)[0])
    assert len(code) >= MIN_SPAN and code in _squashed(solution) and not CONVERSION.match(code)
    found, left_open = layers("<details><summary>Hint 1 of 2 for f</summary>\n\none\n\n"
                              "<details><summary>Hint 2 of 2 for f</summary>\n\ntwo\n\n</details>\n</details>")
    assert [(h["depth"], h["summary"]) for h in found] == [(1, "Hint 1 of 2 for f"), (2, "Hint 2 of 2 for f")]
    assert left_open == 0


def test_the_feedback_page_shows_the_course_hints_folded_and_a_learners_tags_as_text():
    """The course's hints reach the student's feedback page as <details> (sanitise.course_markdown_html, for text
    the course's notebook has word for word); the same tags in a learner's markdown stay escaped text."""
    from autograder import mathml, sanitise
    from autograder.grading.gate_out import feedback

    hint = hint_cells("02_forward_pass")["ffn_forward"]
    page = feedback._course_cell_html(hint)
    assert page.count("<details>") == page.count("</details>") == 3
    assert "<summary>Hint 1 of 3 for ffn_forward</summary>" in page and "&lt;details" not in page
    assert page == mathml.with_math(hint, sanitise.course_markdown_html)
    learner = sanitise.markdown_html(hint)
    assert "<details>" not in learner and "&lt;details&gt;" in learner
    assert sanitise.course_markdown_html('<details open onclick="x()"><summary>s</summary></details>').strip() == \
        "<details><summary>s</summary></details>"  # no attribute passes
    for aid in GRADED:  # every other cell of the course reads as before
        for cell in nbtools.solution(aid).cells:
            if cell.cell_type == "markdown" and cell.source not in set(hint_cells(aid).values()):
                assert sanitise.course_markdown_html(cell.source) == sanitise.markdown_html(cell.source), aid
