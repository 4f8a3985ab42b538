"""Feedback for the student: their code, outputs and failure messages, never the source of hidden tests.

nbgrader's own `generate_feedback` shows each test cell whole, hidden tests
included, and tracebacks quote the failing lines. Two fixes here:

- `HideHiddenTests`, a preprocessor the course config adds to nbgrader's
  GenerateFeedback: test cells lose their hidden region, and a test cell's
  error shows only its final "Error: message" line; the course's own markdown
  gets its formulas as MathML, for the course's template of that page
  (templates/nbconvert/course_feedback: no script, WCAG 2.1 AA);
- `render`, used by `python -m autograder grade`: the same, plus each test cell's
  verdict from the grader and a summary (score, status, flags, likely mistakes)
  at the top, as a plain self-contained page (templates/feedback.html).

Everything in a notebook the student's code ran in is hostile: outputs, their
MIME types and metadata, markdown cells, and the failure messages and flag
details built from them. Both pages apply autograder/sanitise.py's one policy
(plain text, valid PNGs, markdown through its whitelist); the page's template
escapes every value it is given except that whitelisted HTML, which `_page_cell`
alone marks as Markup. Each output and the page as a whole are also cut to a
size (`MAX_OUTPUT_CHARS`, `MAX_PAGE_CHARS`).
"""

import copy
import functools
from pathlib import Path

import markupsafe
import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from ... import limits, sanitise
from ...cells import is_grade, is_solution, role_of
from ...sanitise import ANSI as _ANSI
from ...sanitise import ID as _ID
from ...sanitise import (
    MAX_OUTPUT_CHARS,
    course_markdown_html,
    image_alt,
    markdown_html,
    md_text,
    safe_outputs,
)
from ...sanitise import joined as _text
from ..course import strip_hidden_tests


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _is_test(cell):
    return role_of(cell) == "test" and cell.get("cell_type") == "code"


MAX_PAGE_CHARS = 8_000_000  # the outputs of a whole page; later ones become a note


def hide_hidden_tests(cell):
    """Strip a test cell's hidden region, and shorten its errors to their last line (tracebacks quote code)."""
    if not _is_test(cell):
        return cell
    cell.source = strip_hidden_tests(cell.source)
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    return cell


# The cell `grade` puts first in the stand-in of a notebook it could not read (grade._stand_ins) carries this key
# in its metadata: its text is the instructor's; the student's page shows STUDENT_NOTE in its place.
INSTRUCTOR_NOTE = "ffn_instructor_note"
STUDENT_NOTE = ("**Your notebook `{name}` could not be read by the grader.** The cells below are the released "
                "notebook, not your work: your instructor gave the points and comments here by hand.")
NO_ALT = "a figure from this cell (it came without a description)"
# The template of nbgrader's generate_feedback page (nbgrader_config.py): nbconvert's lab template made accessible.
NBCONVERT_TEMPLATES = Path(__file__).parent / "templates" / "nbconvert"
NBCONVERT_TEMPLATE = "course_feedback"


def course_markdown_block(source):
    """The course's own markdown as one line of HTML, formulas as MathML, that nbconvert's markdown renderer passes
    on as it is (as sanitise.markdown_as_html_block does a learner's)."""
    from ... import mathml

    body = mathml.with_math(source, course_markdown_html)
    return '<div class="course-markdown">' + body.replace("\r", "").replace("\n", "&#10;").replace("$", "&#36;") + \
        "</div>"


def course_source_markdown(config, assignment, notebook):
    """The markdown of the course's source notebook source/<assignment>/<notebook>.ipynb (the instructor's, which no
    submission can write); empty when there is none or the names could stand in no path."""
    from nbgrader.coursedir import CourseDirectory

    if not (_ID.match(str(assignment)) and _ID.match(str(notebook))):
        return frozenset()
    coursedir = CourseDirectory(config=config)
    path = Path(coursedir.format_path(coursedir.source_directory, ".", assignment)) / f"{notebook}.ipynb"
    try:
        return course_markdown(nbformat.read(path, as_version=4))
    except (OSError, ValueError):
        return frozenset()


def private_feedback(course_root):
    """generate_feedback's post_convert_hook (the course's nbgrader_config.py): after each student, the folders of
    feedback/ readable by their owner only, as the pages are (c.GenerateFeedback.permissions = 600)."""
    from ... import private

    def hook(assignment=None, student=None, notebooks=None):
        private.tighten(Path(course_root) / "feedback")

    return hook


class HideHiddenTests(NbGraderPreprocessor):
    """For nbgrader's GenerateFeedback: feedback without hidden test source, nothing that can run script, and the
    course's formulas as MathML.

    nbconvert's HTML template shows text/html and SVG outputs raw and passes raw HTML in markdown through:
    outputs are reduced to text and valid PNGs (`safe_outputs`), and each markdown cell is replaced by its
    cleaned HTML on one line (a single raw HTML block that nbconvert's markdown renderer passes on as is); a cell
    with exactly the text of one in the course's source notebook gets its formulas as MathML (mathml.with_math).
    The course's template (`NBCONVERT_TEMPLATE`) reads `course_css`, `course_csp` and `course_no_alt` from the
    resources.
    """

    def preprocess(self, nb, resources):
        from ... import pages

        # Notebook metadata reaches the template too (widget state goes into a <script>): keep what it needs.
        nb.metadata = sanitise.notebook_metadata()
        names = resources.get("nbgrader", {})
        self.course_text = course_source_markdown(self.config, names.get("assignment"), names.get("notebook"))
        resources.update(course_css=pages.NOTEBOOK_CSS, course_csp=CSP, course_no_alt=NO_ALT)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        course_text = getattr(self, "course_text", frozenset())
        if INSTRUCTOR_NOTE in cell.get("metadata", {}):  # grade's note on a stand-in: the instructor's, not the page's
            notebook = resources.get("nbgrader", {}).get("notebook", "the notebook")
            cell = nbformat.v4.new_markdown_cell(STUDENT_NOTE.format(name=f"{notebook}.ipynb"))
        cell = sanitise.notebook_cell(hide_hidden_tests(cell), cell_index, course_text)
        if cell.get("cell_type") == "markdown" and cell.source in course_text:
            cell.source = course_markdown_block(cell.source)
        return cell, resources


def _md_id(value):
    value = str(value)
    return f"`{value}`" if _ID.match(value) else md_text(value, 100)


def _summary(result, notebook_result):
    lines = [f"## Grader's report: {notebook_result['score']:g} / {notebook_result['max_score']:g} points",
             "", f"Status: **{md_text(notebook_result['status'], 100)}**.", ""]
    if notebook_result["flags"]:
        lines += ["**Flagged** (an exercise with a flag earns no points; your instructor will review it):", ""]
        for flag in notebook_result["flags"]:
            where = f" ({md_text(flag['exercise'], 100)})" if flag.get("exercise") else ""
            lines.append(f"- {md_text(flag['kind'], 100)}{where}: {md_text(flag['detail'])}")
        lines.append("")
    mistakes = [(c["grade_id"], d) for c in notebook_result["cells"] for d in c["diagnosis"]]
    if mistakes:
        lines += ["**Likely mistakes:**", ""]
        lines += [f"- {_md_id(gid)}: {md_text(d['explanation'])} ({_md_id(d['key'])})" for gid, d in mistakes]
        lines.append("")
    if notebook_result["cells"] and all(c["points"] >= c["max_points"] for c in notebook_result["cells"]):
        lines += ["Every test passed.", ""]
    if notebook_result["cells"]:  # one row per test, passed ones too
        lines += ["| test | points | result |", "|---|---|---|"]
        for c in notebook_result["cells"]:
            why = ("✔ passed" if c["points"] >= c["max_points"]
                   else "✘ " + md_text((str(c["message"]).splitlines() or [""])[0], 200))
            lines.append(f"| {_md_id(c['grade_id'])} | {c['points']:g} / {c['max_points']:g} | {why} |")
    return "\n".join(lines)


def _copy(notebook):
    """A copy deep enough to edit sources, metadata and the list of outputs (outputs themselves are shared)."""
    nb = nbformat.from_dict({"nbformat": 4, "nbformat_minor": notebook.get("nbformat_minor", 5),
                             "metadata": copy.deepcopy(notebook.get("metadata", {})), "cells": []})
    for cell in notebook.cells:
        clone = nbformat.from_dict({k: v for k, v in cell.items() if k not in ("metadata", "outputs")})
        clone["metadata"] = copy.deepcopy(cell.get("metadata", {}))
        if "outputs" in cell:
            clone["outputs"] = [nbformat.from_dict(dict(out)) for out in cell["outputs"]]
        nb.cells.append(clone)
    return nb


def feedback_notebook(notebook, notebook_result, student):
    """The notebook the student gets back, and nbgrader's feedback-template resources."""
    nb = _copy(notebook)
    verdicts = {c["grade_id"]: c for c in notebook_result["cells"]}
    for cell in nb.cells:
        meta = _nbgrader(cell)
        hide_hidden_tests(cell)
        if _is_test(cell) and meta.get("grade_id") in verdicts:
            v = verdicts[meta["grade_id"]]
            meta["score"], meta["points"] = v["points"], v["max_points"]
            text = (f"✔ passed ({v['points']:g} / {v['max_points']:g})" if v["points"] >= v["max_points"]
                    else f"✘ {v['status']} ({v['points']:g} / {v['max_points']:g}): {v['message']}")
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
        elif is_grade(cell):
            meta.setdefault("score", 0.0)
        if is_solution(cell):
            notes = [f"{f['kind']}: {str(f['detail'])[:limits.MAX_MESSAGE_CHARS]}" for f in notebook_result["flags"]
                     if f.get("exercise") == meta.get("grade_id")]
            meta["comment"] = "\n\n".join(notes) or None
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(_summary(None, notebook_result)))
    resources = {"nbgrader": {"notebook": notebook_result["notebook"], "student": student,
                              "score": notebook_result["score"], "max_score": notebook_result["max_score"],
                              "late_penalty": 0}}
    return nb, resources


# A second line of defence: should markup ever slip through, the browser runs no script, loads nothing
# from elsewhere and submits no form.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
_MARKUP = 100  # the tags around one part of the page, counted with its text against MAX_PAGE_CHARS



def _outputs(cell, budget):
    """A cell's outputs for the page, and whether the page was full before the last; `budget` (a one-item list)
    counts down the characters the page may still hold."""
    parts = []
    for out in safe_outputs(cell.get("outputs", [])):
        if budget[0] <= 0:
            return parts, True
        kind, data = out.get("output_type"), out.get("data", {})
        if kind == "stream":
            text = _text(out.get("text", ""))
            stderr = out.get("name") == "stderr"
            css = "ok" if text.startswith("✔") else "err" if text.startswith("✘") or stderr else "out"
            part = {"css": css, "text": _ANSI.sub("", text), "png": None}
        elif kind == "error":
            text = _ANSI.sub("", "\n".join(out.get("traceback") or [f"{out.get('ename')}: {out.get('evalue')}"]))
            part = {"css": "err", "text": text[:MAX_OUTPUT_CHARS], "png": None}
        elif "image/png" in data:  # checked by safe_outputs: strict base64 of a PNG
            part = {"css": None, "text": None, "png": data["image/png"],
                    "alt": image_alt(out) or NO_ALT}
        else:
            part = {"css": "out", "text": _ANSI.sub("", data.get("text/plain", "")), "png": None}
        budget[0] -= _MARKUP + len(part["png"] or markupsafe.escape(part["text"]))
        parts.append(part)
    return parts, False


def _markdown_cell_html(source, course_markdown):
    """A markdown cell as safe HTML: the course's own text (a cell the course's notebook has, word for word) with
    its formulas as MathML (mathml.with_math, whose MathML has its own whitelist); any other as a learner's."""
    if source in course_markdown:
        return _course_cell_html(source)
    return markdown_html(source)


@functools.cache  # only ever called with the course's own cells: the same few dozen texts for every student
def _course_cell_html(source):
    from ... import mathml

    return mathml.with_math(source, course_markdown_html)


def _page_cell(cell, first, budget, course_markdown=frozenset()):
    """What the page shows of one cell (None: nothing); counts its characters off `budget`."""
    source = _text(cell.get("source", ""))
    if cell.get("cell_type") == "markdown":
        # The one HTML from the notebook the page takes as is: markdown_html's, which the whitelist (clean_html)
        # made, with the course's formulas as the MathML whitelist (mathml.clean_mathml) made it.
        view = {"kind": "markdown", "css": "summary" if first else "md",
                "html": markupsafe.Markup(_markdown_cell_html(source, () if first else course_markdown))}
        budget[0] -= _MARKUP + len(view["html"])
        return view
    if cell.get("cell_type") not in ("code", "raw"):
        return None
    meta = _nbgrader(cell) if cell.get("cell_type") == "code" else {}
    view = {"kind": "code", "source": source[:MAX_OUTPUT_CHARS], "answer": None, "comment": None, "test": None,
            "points": None, "outputs": [], "outputs_cut": False}
    if is_solution(cell) and cell.get("cell_type") == "code":
        view["answer"], view["comment"] = str(meta.get("grade_id")), meta.get("comment")
    elif _is_test(cell):
        view["test"] = str(meta.get("grade_id"))
        view["points"] = f"{meta.get('score', 0):g} / {meta.get('points', 0):g}"
    budget[0] -= _MARKUP + sum(len(markupsafe.escape(view[k] or "")) for k in ("source", "answer", "comment", "test"))
    if cell.get("cell_type") == "code":
        view["outputs"], view["outputs_cut"] = _outputs(cell, budget)
    return view


@functools.cache
def _template():
    from ...pages import environment

    pages = environment(Path(__file__).parent / "templates")
    return pages.get_template("feedback.html")


GRADE_BLOCK = '<section class="ffn-grade"'  # right after the page's <main>: the parent writes it, never a worker


def grade_block(row):
    """The page's first lines: the grade the gradebook gives (classbook.Row: hand scores and the late penalty in),
    the same that grades.csv and the exports give; '' for a student with no submission."""
    if row.score is None:
        return ""
    details = []
    if row.late_penalty:
        details.append(f"{row.score:g} less {row.late_penalty:g} for lateness: submitted {row.late_text()}")
    elif row.seconds_late > 0:
        details.append(f"submitted {row.late_text().replace(' charged', '')}, no penalty")
    shown = f"Your grade: {row.points_text()} points" + (f" ({'; '.join(details)})" if details else "")
    return (f'{GRADE_BLOCK} aria-label="your grade"><p><strong>{markupsafe.escape(shown)}</strong>. '
            "It counts the points your instructor gave by hand and any penalty for lateness; the report below is "
            "the tests'.</p></section>\n")


def set_grade(page, row):
    """Write (or replace) the grade block of the page `page` (a <student>.html `render` made) for `row`; readable by
    its owner only. A missing page, or one without the template's <main>, is left as it is."""
    from ... import private

    page = Path(page)
    if page.is_symlink() or not page.is_file():
        return
    head, main, rest = page.read_text(encoding="utf-8").partition("<main>\n")
    if not main:
        return
    if rest.startswith(GRADE_BLOCK):
        rest = rest.split("</section>\n", 1)[-1]
    private.write_text(page, head + main + grade_block(row) + rest)


def course_markdown(notebook):
    """The sources of a course notebook's markdown cells: the text `render` may show with its formulas as MathML."""
    return frozenset(_text(c.get("source", "")) for c in notebook.get("cells", []) if c.get("cell_type") == "markdown")


def render(notebook, notebook_result, student, course_text=frozenset()):
    """The feedback page (HTML) of one notebook: every cell escaped, no script, images inline.

    `course_text`: the course's own markdown (`course_markdown` of its notebook); a cell with exactly that text
    shows its formulas as MathML. Every other markdown cell is the learner's.
    """
    nb, _ = feedback_notebook(notebook, notebook_result, student)
    cells, cut = [], False
    budget = [MAX_PAGE_CHARS]  # counted down by every cell, and by _outputs for each output
    for i, cell in enumerate(nb.cells):
        if budget[0] <= 0:
            cut = True
            break
        view = _page_cell(cell, i == 0, budget, course_text)
        if view is not None:
            cells.append(view)
    return _template().render(title=f"{notebook_result['notebook']}: feedback for {student}", csp=CSP, cells=cells,
                              cut=cut)


def student_page(result, notebooks=None, course_text=None):
    """The student's page: each notebook of `result` (a StudentResult) rendered, one after the other, as the text
    to write (readable.clean_text: no lone surrogate). The one builder of it, whichever process grades (a worker,
    the parent from a cluster's validated reply, or the parent when the worker wrote none).

    `notebooks`: {name: the graded notebook} (absent: the page shows the result alone); `course_text`: {name: its
    course_markdown}."""
    from ... import readable

    notebooks, course_text = notebooks or {}, course_text or {}
    pages = [render(nbformat.v4.new_notebook() if notebooks.get(nb.notebook) is None else notebooks[nb.notebook],
                    nb.to_dict(), result.student, course_text.get(nb.notebook, frozenset()))
             for nb in result.notebooks]
    return readable.clean_text("\n<hr>\n".join(pages))
