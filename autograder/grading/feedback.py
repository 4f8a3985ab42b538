"""Feedback for the student: their code, outputs and failure messages, never the source of hidden tests.

nbgrader's own `generate_feedback` shows each test cell whole, hidden tests
included, and tracebacks quote the failing lines. Two fixes here:

- `HideHiddenTests`, a preprocessor the course config adds to nbgrader's
  GenerateFeedback: test cells lose their hidden region, and a test cell's
  error shows only its final "Error: message" line;
- `render`, used by `python -m autograder grade`: the same, plus each test cell's
  verdict from the grader and a summary (score, status, flags, likely mistakes)
  at the top, as a plain self-contained page (templates/feedback.html).

Everything in a notebook the student's code ran in is hostile: outputs, their
MIME types and metadata, markdown cells, and the failure messages and flag
details built from them. So both pages keep only text (escaped), and PNG images
whose value is valid base64 of a real PNG; every other MIME type (HTML,
JavaScript, SVG, ...) is dropped with a note. Markdown becomes HTML through
mistune with raw HTML escaped, and that HTML goes through a whitelist (`clean_html`)
that keeps only plain formatting tags, no `on*` or style attributes and only
http(s), mailto and relative links. The page's template escapes every value it
is given except that whitelisted HTML, which `_page_cell` alone marks as Markup.
Each output and the page as a whole are also cut to a size (`MAX_OUTPUT_CHARS`,
`MAX_PAGE_CHARS`).
"""

import base64
import binascii
import copy
import functools
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import markupsafe
import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from .integrity import strip_hidden_tests


def _nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def _is_test(cell):
    meta = _nbgrader(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.get("cell_type") == "code"


MAX_OUTPUT_CHARS = 100_000  # one output's text on a feedback page
MAX_MARKDOWN_CHARS = 20_000  # one markdown cell (mistune takes about a second for 100,000 pathological ones)
MAX_IMAGE_CHARS = 2_000_000  # one PNG (base64) on a feedback page
MAX_PAGE_CHARS = 8_000_000  # the outputs of a whole page; later ones become a note
MAX_MESSAGE_CHARS = 2_000  # a failure message, a flag's detail, a diagnosis in the summary
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SPACE = re.compile(r"\s+")


def _text(value):
    return "".join(value) if isinstance(value, list) else str(value)


def safe_png(value):
    """The base64 text of a PNG output if it is strictly valid base64 of bytes that start like a PNG, else None."""
    if not isinstance(value, (str, list)):
        return None
    text = _text(value)
    if len(text) > 2 * MAX_IMAGE_CHARS:
        return None
    text = _SPACE.sub("", text)
    if not text or len(text) > MAX_IMAGE_CHARS:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return text if raw.startswith(PNG_SIGNATURE) else None


def _note(why):
    return {"text/plain": f"[{why}]"}


def safe_data(data):
    """A display's data reduced to what is safe to show: text/plain and a valid image/png, nothing else."""
    data = data if isinstance(data, dict) else {}
    kept = {}
    if "image/png" in data:
        png = safe_png(data["image/png"])
        if png is not None:
            kept["image/png"] = png
    if "text/plain" in data and isinstance(data["text/plain"], (str, list)):
        kept["text/plain"] = _text(data["text/plain"])[:MAX_OUTPUT_CHARS]
    if not kept and data:
        kept = _note("an output the grader does not show (" +
                     ", ".join(sorted(str(k)[:40] for k in data)[:5]) + ")")
    elif "image/png" in data and "image/png" not in kept:
        kept["text/plain"] = kept.get("text/plain", "") + "\n[an image that is not a valid PNG was left out]"
    return kept


MAX_ALT_CHARS = 1_500  # an image's text alternative


def image_alt(output):
    """An image output's text alternative from its metadata (Jupyter's image/png "alt"), as plain text, or None."""
    meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
    alt = meta.get("image/png", {}).get("alt") if isinstance(meta.get("image/png"), dict) else None
    if not isinstance(alt, str):
        return None
    return _SPACE.sub(" ", _CONTROL.sub("", _ANSI.sub("", alt[:4 * MAX_ALT_CHARS]))).strip()[:MAX_ALT_CHARS] or None


def safe_outputs(outputs):
    """The outputs of a cell, each reduced to plain text, a valid PNG or an error's name, message and traceback."""
    kept = []
    for out in outputs or []:
        kind = out.get("output_type")
        if kind == "stream":
            kept.append(nbformat.v4.new_output("stream", name="stderr" if out.get("name") == "stderr" else "stdout",
                                               text=_text(out.get("text", ""))[:MAX_OUTPUT_CHARS]))
        elif kind == "error":
            tb = out.get("traceback") if isinstance(out.get("traceback"), list) else []
            kept.append(nbformat.v4.new_output("error", ename=str(out.get("ename", "Error"))[:MAX_MESSAGE_CHARS],
                                               evalue=str(out.get("evalue", ""))[:MAX_OUTPUT_CHARS],
                                               traceback=[str(t)[:MAX_OUTPUT_CHARS] for t in tb[:200]]))
        elif kind in ("execute_result", "display_data"):
            new = nbformat.v4.new_output(kind, data=safe_data(out.get("data")))
            alt = image_alt(out)
            if alt and "image/png" in new["data"]:
                new["metadata"] = {"image/png": {"alt": alt}}
            if kind == "execute_result":
                new["execution_count"] = out.get("execution_count") if isinstance(out.get("execution_count"),
                                                                                   int) else None
            kept.append(new)
    return kept


def hide_hidden_tests(cell):
    """Strip a test cell's hidden region, and shorten its errors to their last line (tracebacks quote code)."""
    if not _is_test(cell):
        return cell
    cell.source = strip_hidden_tests(cell.source)
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            out["traceback"] = [f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"]
    return cell


class HideHiddenTests(NbGraderPreprocessor):
    """For nbgrader's GenerateFeedback: feedback without hidden test source, and nothing that can run script.

    nbconvert's HTML template shows text/html and SVG outputs raw and passes raw HTML in markdown through:
    outputs are reduced to text and valid PNGs (`safe_outputs`), and each markdown cell is replaced by its
    cleaned HTML on one line (a single raw HTML block that nbconvert's markdown renderer passes on as is).
    """

    def preprocess(self, nb, resources):
        # Notebook metadata reaches the template too (widget state goes into a <script>): keep what it needs.
        nb.metadata = nbformat.from_dict({k: v for k, v in nb.get("metadata", {}).items()
                                          if k in ("kernelspec", "language_info")})
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        cell = hide_hidden_tests(cell)
        # Tags, ids and other metadata end up in attributes: keep only nbgrader's, with a plain grade id.
        meta = _nbgrader(cell)
        cell.metadata = nbformat.from_dict({"nbgrader": meta} if meta and _ID.match(str(meta.get("grade_id")))
                                           else {})
        if "id" in cell and not _ID.match(str(cell["id"])):
            cell["id"] = f"cell-{cell_index}"
        if cell.get("cell_type") == "code":
            cell.outputs = safe_outputs(cell.get("outputs"))
        elif cell.get("cell_type") == "markdown":
            cell.source = markdown_as_html_block(_text(cell.get("source", "")))
            cell.pop("attachments", None)
        elif cell.get("cell_type") == "raw":
            cell.source = markdown_as_html_block(f"```\n{_text(cell.get('source', ''))}\n```")
            cell.cell_type = "markdown"
            cell.pop("attachments", None)
        return cell, resources


_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def md_text(value, limit=MAX_MESSAGE_CHARS):
    """A learner-controlled string as markdown that shows it literally: one line, every punctuation escaped,
    so no link, image, HTML, emphasis or table syntax can come from it."""
    text = _CONTROL.sub("", _ANSI.sub("", str(value)[:4 * limit]))
    text = _SPACE.sub(" ", text).strip()
    if len(text) > limit:
        text = text[:limit] + " …"
    return _MD_SPECIAL.sub(r"\\\1", text)


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
        elif meta.get("grade"):
            meta.setdefault("score", 0.0)
        if meta.get("solution"):
            notes = [f"{f['kind']}: {str(f['detail'])[:MAX_MESSAGE_CHARS]}" for f in notebook_result["flags"]
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
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")


@functools.cache
def _markdown():
    import mistune

    return mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])


# ------------------------------------------------------------------ the whitelist every markdown cell goes through

_ALLOWED = {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "code", "pre", "blockquote",
            "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "span", "div", "sup", "sub"}
_VOID = {"br", "hr", "img"}
_DROP_WITH_CONTENT = {"script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math",
                      "textarea", "select", "title", "head", "xmp", "noembed", "noframes", "plaintext"}
_SAFE_SCHEMES = ("http", "https", "mailto")
_ALIGN = re.compile(r"^text-align:\s*(left|right|center)$")
_CLASS = re.compile(r"^[A-Za-z0-9_ -]{1,60}$")


def safe_url(url, image=False):
    """The URL if it is http(s), mailto or relative (for an image: http(s) or a valid PNG data URL), else None."""
    url = str(url or "")
    squashed = re.sub(r"[\x00-\x20\x7f-\x9f]", "", url)
    if image and squashed.lower().startswith("data:image/png;base64,"):
        return url if safe_png(squashed[len("data:image/png;base64,"):]) else None
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", squashed)
    if scheme is None:
        return None if ":" in squashed.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0] else url
    return url if scheme.group(1).lower() in (("http", "https") if image else _SAFE_SCHEMES) else None


class _Cleaner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.skip = 0  # inside a tag dropped with its content
        self.open = []

    def handle_starttag(self, tag, attrs):
        if tag in _DROP_WITH_CONTENT:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip or tag not in _ALLOWED:
            return
        kept = []
        for name, value in attrs:
            value = value or ""
            if tag == "a" and name == "href":
                value = safe_url(value)
            elif tag == "img" and name == "src":
                value = safe_url(value, image=True)
            elif name in ("alt", "title") and tag in ("a", "img"):
                pass
            elif name == "style" and tag in ("th", "td"):
                value = value if _ALIGN.match(value.strip().rstrip(";")) else None
            elif name == "class" and tag in ("code", "pre", "span", "div"):
                value = value if _CLASS.match(value) else None
            elif name == "start" and tag == "ol":
                value = value if value.isdigit() and len(value) < 8 else None
            else:
                value = None
            if value is not None:
                kept.append(f' {name}="{html.escape(value, quote=True)}"')
        if tag == "img" and not any(k.startswith(" src=") for k in kept):
            alt = dict(attrs).get("alt") or "an image"
            self.out.append(html.escape(f"[{alt}]", quote=False))
            return
        self.out.append(f"<{tag}{''.join(kept)}>")
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID and tag in _ALLOWED and not self.skip and self.open and self.open[-1] == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in _DROP_WITH_CONTENT:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip or tag not in self.open:
            return
        while self.open:
            top = self.open.pop()
            self.out.append(f"</{top}>")
            if top == tag:
                break

    def handle_data(self, data):
        if not self.skip:
            self.out.append(html.escape(data, quote=False))

    def close(self):
        super().close()
        while self.open:
            self.out.append(f"</{self.open.pop()}>")
        return "".join(self.out)


def clean_html(fragment):
    """HTML reduced to a whitelist of formatting tags and safe attributes; every text escaped again."""
    cleaner = _Cleaner()
    cleaner.feed(fragment)
    return cleaner.close()


def markdown_html(source):
    """A learner's markdown as safe HTML."""
    return clean_html(_markdown()(_CONTROL.sub("", str(source))[:MAX_MARKDOWN_CHARS]))


def markdown_as_html_block(source):
    """Safe HTML of a markdown cell on one line in a div: nbconvert's markdown renderer passes it on unchanged."""
    body = markdown_html(source).replace("\r", "").replace("\n", "&#10;").replace("$", "&#36;")
    return f'<div class="learner-markdown">{body}</div>'


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
                    "alt": image_alt(out) or "a figure from this cell (it came without a description)"}
        else:
            part = {"css": "out", "text": _ANSI.sub("", data.get("text/plain", "")), "png": None}
        budget[0] -= _MARKUP + len(part["png"] or markupsafe.escape(part["text"]))
        parts.append(part)
    return parts, False


def _markdown_cell_html(source, course_markdown):
    """A markdown cell as safe HTML: the course's own text (a cell the course's notebook has, word for word) with
    its formulas as MathML (mathml.with_math, whose MathML has its own whitelist); any other as a learner's."""
    if source in course_markdown:
        from .. import mathml

        return mathml.with_math(source, markdown_html)
    return markdown_html(source)


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
    if meta.get("solution"):
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
    from ..pages import environment

    pages = environment(Path(__file__).parent / "templates")
    return pages.get_template("feedback.html")


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
