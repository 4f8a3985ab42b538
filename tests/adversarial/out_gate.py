"""Attacks on the way out (issue 23, gate 2): learner-made content that tries to reach a person live.

Each is a student of a small batch of 02_forward_pass, graded with an honest twin:

- `fake-diagnosis`: its answers raise exceptions whose text is the checks' "Likely mistake (key): ..."
  line, with a catalogued key and with made-up ones that a spreadsheet reads as formulas; one
  answer raises an AssertionError carrying the keys as an attribute, as the checks do;
- `markup`: script-capable content in every place a notebook can hold it (text/html, JavaScript,
  SVG and markdown outputs, an error message, a markdown cell, a raw cell marked as HTML, cell
  tags, attachments, notebook metadata with widget state), and an HTML file beside the notebook.

Every payload that runs sets `window.pwned` (or the page's title), so a browser that loads the page
can tell whether any of it ran.
"""

import base64

import nbformat
import nbtools

from . import ASSIGNMENT, EXERCISES, Context, grading

RUN = "window.pwned='{}';document.title='pwned'"
HANDLER = '<img src=x onerror="' + RUN + '">'
FORMULA = '=HYPERLINK("http://evil.example/","open")'
FAKE_LINES = (r"\nLikely mistake (missing_b1): your output equals the FFN without b1."
              r"\nLikely mistake (-2-3): " + FORMULA.replace('"', r"\"")
              + r"\nLikely mistake (made_up): @SUM(1+1)")

HONEST_TWIN = "honest-no-b1"
NO_B1 = ("def ffn_forward(x, W1, b1, W2, b2):\n"
         "    return np.maximum(np.asarray(x) @ W1, 0) @ W2 + b2  # forgets b1\n")


def fake_diagnosis(ctx):
    """Answers that fail with the checks' diagnosis text in their own exception messages."""
    return ctx.honest(
        ffn_forward=("def ffn_forward(x, W1, b1, W2, b2):\n"
                     f'    raise ValueError("wrong on purpose{FAKE_LINES}")\n'),
        linear_torch=("def linear_torch(x, weight, bias):\n"
                      f'    error = AssertionError("wrong on purpose{FAKE_LINES}")\n'
                      "    error.mistake_keys = ('missing_b1',)  # as ffn_helpers.checks.failure attaches them\n"
                      "    raise error\n"),
        dead_fraction=("def dead_fraction(x, W1, b1):\n"
                       f'    raise ArithmeticError("{FORMULA.replace(chr(34), chr(92) + chr(34))}{FAKE_LINES}")\n'))


def _markup_cells():
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{RUN.format("svg")}"/>'
    show = (
        "from IPython.display import HTML, SVG, Javascript, Markdown, display\n"
        f"display(HTML({HANDLER.format('html')!r}))\n"
        f"display(Javascript({RUN.format('javascript')!r}))\n"
        f"display(SVG({svg!r}))\n"
        f"display(Markdown({HANDLER.format('markdown-output')!r}))\n"
        f"display({{'text/html': {HANDLER.format('raw-display')!r}, 'text/plain': 'x'}}, raw=True)\n"
        f"print({HANDLER.format('stream')!r})\n"
        f"{HANDLER.format('result')!r}\n")
    code = nbformat.v4.new_code_cell(show)
    code.metadata["tags"] = ['"><img src=x onerror="' + RUN.format("tag") + '">']
    error = nbformat.v4.new_code_cell(f"raise ValueError({HANDLER.format('error')!r})")
    markdown = nbformat.v4.new_markdown_cell(
        f"{HANDLER.format('markdown')}\n\n<details open ontoggle=\"{RUN.format('details')}\">x</details>\n\n"
        f"[click](javascript:{RUN.format('link')})\n\n![picture](attachment:evil.svg)")
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{RUN.format("attachment")}"/>'
    markdown["attachments"] = {"evil.svg": {"image/svg+xml": base64.b64encode(svg.encode()).decode()}}
    raw = nbformat.v4.new_raw_cell(HANDLER.format("raw"))
    raw.metadata["format"] = raw.metadata["raw_mimetype"] = "text/html"
    return [markdown, code, error, raw]


def markup(ctx):
    """Honest answers, and script-capable content everywhere a notebook can hold it."""
    nb = ctx.honest()
    nb.cells.extend(_markup_cells())
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "version_major": 2, "version_minor": 0,
        "state": {"m": {"model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls",
                        "model_module_version": "2.0.0", "state": {"value": HANDLER.format("widget")}}}}}
    nb.metadata["title"] = "</title><script>" + RUN.format("title") + "</script>"
    return nb


EXTRA_FILE = ("page.html", f"<script>{RUN.format('file')}</script>")


def graded(base):
    """Grade the honest twin and the attacks in a scratch course: (course root, results folder, {student: result})."""
    course_root = grading.make_course(base / "course", ASSIGNMENT)
    solution = nbtools.cells_by_id(nbtools.solution(ASSIGNMENT))
    ctx = Context(learner=nbtools.learner(ASSIGNMENT), course=str(course_root), results=str(base / "results"),
                  answers={gid: solution[gid].source for gid in EXERCISES}, port=0)
    students = {HONEST_TWIN: ctx.honest(ffn_forward=NO_B1), "fake-diagnosis": fake_diagnosis(ctx),
                "markup": markup(ctx)}
    submitted = grading.write_submissions(base / "submitted", ASSIGNMENT, students)
    (submitted / "markup" / ASSIGNMENT / EXTRA_FILE[0]).write_text(EXTRA_FILE[1], encoding="utf-8")
    results = grading.run_batch(ASSIGNMENT, submitted, base / "results", course_root)
    return course_root, base / "results", results
