"""Feedback pages built from hostile notebooks hold no script-capable markup, and stay bounded.

Everything the student's kernel sent (outputs, MIME types, metadata), every markdown cell and every
failure message is learner-controlled. Each page is parsed, not searched: no <script>, no on*
attribute, no javascript:/vbscript:/data: URL other than a valid PNG, no iframe, object, embed, form,
base or meta refresh; and the benign content (a real PNG, printed text) is still shown.
"""

import base64
import html
import re
import struct
import zlib
from html.parser import HTMLParser

import nbformat
import page_audit
import pytest

from autograder import sanitise
from autograder.grading.gate_out import feedback

pytestmark = pytest.mark.xdist_group("feedback_safety")


def _png():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"\x00\xff\x00\x00"  # one red pixel
    return (sanitise.PNG_SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


PNG = base64.b64encode(_png()).decode()
JS = "javascript:alert(1)"

HOSTILE_PNG = [
    'AAAA" onerror="alert(1)',
    'x" onerror=alert(1) x="',
    "iVBORw0KGgo=' onerror='alert(1)",
    PNG + '" onerror="alert(1)',
    PNG[:20] + "<script>alert(1)</script>" + PNG[20:],
    base64.b64encode(b"<svg onload=alert(1)>").decode(),  # valid base64, not a PNG
    base64.b64encode(b"GIF89a<script>").decode(),
    ["iVBOR", '" onerror="alert(1)'],
    {"nested": "x"},
    12345,
    "",
    PNG.replace("A", "-"),  # urlsafe / invalid characters
]

HOSTILE_DATA = [
    {"text/html": "<script>alert(1)</script>"},
    {"text/html": "<img src=x onerror=alert(1)>", "text/plain": "<img src=x onerror=alert(1)>"},
    {"text/html": f'<iframe src="{JS}"></iframe><object data="x"></object><embed src="x">'},
    {"text/html": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><base href="javascript:/">'},
    {"text/html": f'<form action="{JS}"><button formaction="{JS}">go</button></form>'},
    {"application/javascript": "alert(1)"},
    {"application/vnd.jupyter.widget-view+json": {"model_id": "x"}},
    {"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'><script>alert(1)</script></svg>"},
    {"image/svg+xml": ["<svg><a xlink:href='javascript:alert(1)'>", "<text>x</text></a></svg>"]},
    {"text/markdown": f"[click]({JS}) <script>alert(1)</script>"},
    {"text/latex": "\\href{javascript:alert(1)}{x}"},
    {"image/jpeg": '/9j/" onerror="alert(1)'},
    {"image/gif": "R0lGOD\" onerror=\"alert(1)"},
    {"text/plain": "</pre><script>alert(1)</script><pre>"},
    {"text/plain": "\x1b[31mred\x1b[0m \x1b]8;;javascript:alert(1)\x1b\\link\x1b]8;;\x1b\\ \x00\x07\x1b[?25l"},
]

HOSTILE_MARKDOWN = [
    f"[click]({JS})",
    "[click](JaVaScRiPt:alert(1))",
    "[click](jav&#x61;script:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](<java\tscript:alert(1)>)",
    "[click]( javascript:alert(1) )",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    f"![img]({JS})",
    "![img](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    '![img](data:image/png;base64,"onerror=alert(1))',
    f"[ref][x]\n\n[x]: {JS}",
    f"<{JS}>",
    "<vbscript:msgbox(1)>",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<div onmouseover="alert(1)">hover</div>',
    f'<iframe src="{JS}"></iframe>',
    '<object data="x.swf"></object><embed src="x.swf">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    f'<form action="{JS}"><input type="submit"></form>',
    '<base href="javascript:/">',
    "<svg><script>alert(1)</script></svg>",
    "<!--><script>alert(1)</script>-->",
    "<details open ontoggle=alert(1)>",
    "```html\n<script>alert(1)</script>\n```",
    "| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |",
    '<style>body{background:url("javascript:alert(1)")}</style>',
    "$<script>alert(1)</script>$",
]

HOSTILE_MESSAGES = [
    f"AssertionError: [click]({JS})",
    "AssertionError: <script>alert(1)</script>",
    "ValueError: <img src=x onerror=alert(1)>",
    f"x | [y]({JS}) | z",
    f"![x]({JS})",
    f"<{JS}>",
    f"[a](jav&#x61;script:alert(1)) `code` **bold** \\[x\\]({JS})",
    f"[a]\n\n[a]: {JS}",
]

BAD_TAGS = {"script", "iframe", "object", "embed", "form", "base", "frame", "frameset", "applet", "svg",
            "link", "button", "input", "textarea", "select", "template", "portal"}


class _Audit(HTMLParser):
    """Everything in a page that could run script or navigate away."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.images = []
        self.scripts = []
        self.styles = 0
        self.in_script = False
        self.csp = None
        self.math = page_audit.MathDepth()  # the course's formulas, as inert MathML

    def handle_starttag(self, tag, attrs):
        self.problems += self.math.start(tag, attrs)
        if tag == "script":
            self.in_script = True
            self.scripts.append(dict(attrs).get("src") or "")
        if tag == "style":
            self.styles += 1
        if tag in BAD_TAGS:
            self.problems.append(f"<{tag}>")
        if tag == "meta" and any(n == "http-equiv" for n, _ in attrs):
            if dict(attrs).get("http-equiv", "").lower() == "content-security-policy" and not self.csp:
                self.csp = dict(attrs).get("content")  # the page's own, first: allowed
            else:
                self.problems.append(f"meta {attrs}")
        for name, value in attrs:
            value = value or ""
            squashed = "".join(ch for ch in value if ord(ch) > 32 and ord(ch) != 127).lower()
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}=...>")
            if name in ("srcdoc", "formaction", "action", "xlink:href", "data", "background", "poster", "lowsrc"):
                self.problems.append(f"<{tag} {name}=...>")
            if name == "style" and ("url(" in squashed or "expression(" in squashed):
                self.problems.append(f"<{tag} style={value!r}>")
            if squashed.startswith(("javascript:", "vbscript:", "livescript:")) or "javascript:" in squashed:
                self.problems.append(f"<{tag} {name}={value[:60]!r}>")
            if squashed.startswith("data:"):
                payload = value.split(",", 1)[-1]
                if not (squashed.startswith("data:image/png;base64,") and sanitise.safe_png(payload)):
                    self.problems.append(f"<{tag} {name}={value[:60]!r}>")
                elif tag == "img":
                    self.images.append(payload)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.math.end(tag)

    def handle_endtag(self, tag):
        self.math.end(tag)
        if tag == "script":
            self.in_script = False

    def handle_data(self, data):
        if self.in_script:
            self.scripts.append(data.strip()[:200])


def audit(page):
    parser = _Audit()
    parser.feed(page)
    parser.close()
    return parser


def _cell(source, outputs=(), **nbgrader):
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = list(outputs)
    if nbgrader:
        cell.metadata["nbgrader"] = {"locked": False, "schema_version": 3, **nbgrader}
    return cell


def hostile_notebook():
    outs = []
    for value in HOSTILE_PNG:
        outs.append(nbformat.from_dict({"output_type": "display_data", "data": {"image/png": value, "text/plain":
                                        "<Figure size 640x480 with 1 Axes>"}, "metadata": {}}))
    for data in HOSTILE_DATA:
        outs.append(nbformat.from_dict({"output_type": "display_data", "data": data, "metadata": {
            "image/png": {"width": '1" onload="alert(1)', "height": "1 onerror=alert(1)"},
            "text/html": {"isolated": False}}}))
    outs.append(nbformat.from_dict({"output_type": "execute_result", "execution_count": 3, "metadata": {
        "image/png": {"width": "1 onerror=alert(1)"}}, "data": {"image/png": PNG, "text/plain": "a figure"}}))
    outs.append(nbformat.v4.new_output("stream", name="stdout", text="benign printed text 12345\n"))
    outs.append(nbformat.v4.new_output("stream", name="stderr", text="</pre><script>alert(1)</script>"))
    outs.append(nbformat.from_dict({"output_type": "error", "ename": "<script>alert(1)</script>",
                                    "evalue": f"[x]({JS}) <img src=x onerror=alert(1)>",
                                    "traceback": ["\x1b[31m<iframe src=javascript:alert(1)>\x1b[0m",
                                                  '<a href="javascript:alert(1)">x</a>']}))
    good = nbformat.from_dict({"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "fig"},
                               "metadata": {}})
    wrapped = nbformat.from_dict({"output_type": "display_data", "metadata": {},
                                  "data": {"image/png": "\n".join(PNG[i:i + 76] for i in range(0, len(PNG), 76))}})
    cells = [nbformat.v4.new_markdown_cell("# Exercise\nA *benign* [link](https://example.org/docs).")]
    cells += [nbformat.v4.new_markdown_cell(md) for md in HOSTILE_MARKDOWN]
    attach = nbformat.v4.new_markdown_cell("![a](attachment:x.svg)")
    attach["attachments"] = {"x.svg": {"image/svg+xml": "<svg onload=alert(1)></svg>"}}
    cells.append(attach)
    raw = nbformat.v4.new_raw_cell("<script>alert(1)</script><img src=x onerror=alert(1)>")
    raw.metadata["format"] = raw.metadata["raw_mimetype"] = "text/html"
    cells.append(raw)
    cells.append(_cell("def ffn_forward(x):\n    return x", outs + [good, wrapped], grade=False, solution=True,
                       grade_id="ffn_forward"))
    cells.append(_cell("assert ffn_forward(1) == 2", [nbformat.from_dict(dict(o)) for o in outs[:5]], grade=True,
                       solution=False, grade_id="test_ffn_forward", points=2, locked=True))
    tagged = _cell("x = 1", [], grade=False, solution=True, grade_id='x" onmouseover="alert(1)')
    tagged.metadata["tags"] = ['" onmouseover="alert(1)', "<script>alert(1)</script>"]
    tagged["id"] = 'a" onfocus="alert(1)'
    cells.append(tagged)
    md = nbformat.v4.new_markdown_cell("tagged markdown")
    md.metadata["tags"] = ['x" onclick="alert(1)']
    cells.append(md)
    nb = _notebook(cells)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {
        "state": {"</script><script>alert(1)</script>": {"model_name": "<script>alert(1)</script>"}},
        "version_major": 2, "version_minor": 0}}
    return nb


def _notebook(cells):
    return nbformat.from_dict({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


def hostile_result():
    cells = [{"grade_id": "test_ffn_forward", "points": 0.0, "max_points": 2.0, "status": "failed",
              "message": message, "diagnosis": [{"key": "x<script>", "explanation": message}]}
             for message in HOSTILE_MESSAGES[:1]]
    cells += [{"grade_id": f"t{i}", "points": 0.0, "max_points": 1.0, "status": "failed", "message": message,
               "diagnosis": [{"key": "k", "explanation": message}]} for i, message in enumerate(HOSTILE_MESSAGES)]
    flags = [{"kind": "review", "exercise": "ffn_forward", "detail": m} for m in HOSTILE_MESSAGES]
    flags.append({"kind": f"<b onmouseover=alert(1)>[k]({JS})", "exercise": f"[e]({JS})", "detail": "x"})
    return {"notebook": "02_forward_pass", "status": "flagged", "score": 0.0, "max_score": 10.0,
            "flags": flags, "cells": cells}


def assert_safe(page):
    found = audit(page)
    assert not found.problems, found.problems[:20]
    assert "<script" not in page.lower()
    return found


def test_autograder_feedback_page_has_no_script_capable_markup():
    page = feedback.render(hostile_notebook(), hostile_result(), 'student" onload="alert(1)')
    found = assert_safe(page)
    assert found.styles == 1  # the page's own stylesheet only
    assert found.csp == feedback.CSP and "script-src" not in found.csp  # default-src 'none': no script at all
    assert PNG in found.images and len(found.images) == 3  # the good PNG, the line-wrapped one, the figure
    assert "benign printed text 12345" in page
    assert '<a href="https://example.org/docs">link</a>' in page
    assert "[an image that is not a valid PNG was left out]" in page
    assert "an output the grader does not show" in page
    # learner text is still shown, as text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("markdown", HOSTILE_MARKDOWN)
def test_each_markdown_variant_is_safe(markdown):
    assert_safe(sanitise.markdown_html(markdown))
    assert_safe(sanitise.markdown_as_html_block(markdown))


@pytest.mark.parametrize("message", HOSTILE_MESSAGES)
def test_messages_cannot_make_links(message):
    result = hostile_result()
    result["cells"] = [{"grade_id": "t", "points": 0.0, "max_points": 1.0, "status": "failed", "message": message,
                        "diagnosis": [{"key": "k", "explanation": message}]}]
    result["flags"] = [{"kind": "review", "exercise": "e", "detail": message}]
    summary = sanitise.markdown_html(feedback._summary(None, result))
    assert_safe(summary)
    assert "<a " not in summary and "<img" not in summary and "<strong>bold" not in summary
    assert html.escape(message.splitlines()[0][:30], quote=False) in summary  # shown, as text


@pytest.mark.parametrize("value", HOSTILE_PNG)
def test_png_must_be_valid_base64_of_a_png(value):
    assert sanitise.safe_png(value) is None
    assert sanitise.safe_png(PNG) == PNG
    assert sanitise.safe_png(PNG[:40] + "\n" + PNG[40:]) == PNG


@pytest.mark.parametrize("url", ["javascript:alert(1)", " javascript:alert(1)", "java\nscript:x", "JAVASCRIPT:x",
                                 "vbscript:x", "data:text/html,<script>", "file:///etc/passwd", "jav\x00ascript:x",
                                 "\x01javascript:x", "x:y", "data:image/png;base64,\"onerror"])
def test_unsafe_urls_are_refused(url):
    assert sanitise.safe_url(url) is None and sanitise.safe_url(url, image=True) is None


def test_safe_urls_are_kept():
    for url in ("https://example.org/a?b=c#d", "http://x", "mailto:a@b.c", "#anchor", "page.html", "/abs/path"):
        assert sanitise.safe_url(url) == url
    assert sanitise.safe_url("data:image/png;base64," + PNG, image=True)


@pytest.mark.parametrize("src", ["/hub/logout", "//attacker.example/t.png", "https://attacker.example/t.png",
                                 "t.png", "../../api/contents", "HTTP://x/y.png", "mailto:a@b.c"])
def test_a_learners_image_loads_nothing_from_anywhere(src):
    """The browser fetches an image with no click: from the grader's origin with the instructor's cookies (a GET
    to /hub/logout), or from a host that learns who looked. Only a checked PNG inside the page is kept."""
    assert sanitise.safe_url(src, image=True) is None
    cleaned = sanitise.markdown_html(f"![x]({src}) <img src=\"{src}\" alt=\"y\">")
    assert re.search(r"<img[^>]*\ssrc=", cleaned) is None, cleaned  # markup written as text shows, and loads nothing


def test_nbgraders_own_feedback_page_is_safe_too():
    """nbgrader's generate_feedback renders text/html outputs and raw HTML in markdown as they are:
    HideHiddenTests (in the course's GenerateFeedback preprocessors) must leave nothing that can run."""
    import os

    import nbgrader
    from nbconvert.exporters import HTMLExporter

    formgrader = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions", "formgrader")
    css = os.path.join(formgrader, "static", "node_modules", "bootstrap", "dist", "css")

    def export(nb):  # as nbgrader's GenerateFeedback sets up its exporter
        exporter = HTMLExporter(template_name="feedback", extra_template_basedirs=[os.path.join(formgrader,
                                                                                                "templates")],
                                extra_template_paths=[css])
        for cell in nb.cells:  # what nbgrader's GetGrades adds before
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") or meta.get("solution"):
                meta.update(score=0.0, points=meta.get("points", 0), comment=None)
        pre = feedback.HideHiddenTests()
        nb, resources = pre.preprocess(nb, {"nbgrader": {"notebook": "02_forward_pass", "score": 0,
                                                         "max_score": 2, "late_penalty": 0}})
        body, _ = exporter.from_notebook_node(nb, resources=resources)
        return body

    plain = audit(export(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("hello")])))
    page = export(hostile_notebook())
    found = audit(page)
    # nbgrader's template brings its own scripts (MathJax, jQuery...); none may come from the notebook
    assert found.scripts == plain.scripts
    problems = [p for p in found.problems if p != "<script>"]
    assert not problems, problems[:20]
    assert PNG in found.images
    assert "benign printed text 12345" in page


def test_page_stays_bounded_whatever_the_outputs():
    big = "x" * 3_000_000
    outs = [nbformat.v4.new_output("stream", name="stdout", text=big) for _ in range(20)]
    outs += [nbformat.from_dict({"output_type": "error", "ename": big, "evalue": big, "traceback": [big] * 50})]
    outs += [nbformat.from_dict({"output_type": "display_data", "data": {"text/plain": big,
                                                                         "image/png": "A" * 30_000_000},
                                 "metadata": {"big": big}}) for _ in range(5)]
    nb = _notebook([_cell("print('x')", outs) for _ in range(5)] + [nbformat.v4.new_markdown_cell(big)])
    result = hostile_result()
    result["flags"] = [{"kind": "review", "exercise": "e", "detail": big}] * 20
    page = feedback.render(nb, result, "someone")
    assert len(page) < feedback.MAX_PAGE_CHARS + 2 * feedback.MAX_OUTPUT_CHARS + 500_000
    assert "the page is full" in page
    assert_safe(page)


def test_page_stays_bounded_whatever_the_number_of_cells():
    cells = [nbformat.v4.new_markdown_cell("m" * 50_000) for _ in range(300)]
    cells += [_cell("c" * 200_000, [nbformat.v4.new_output("stream", name="stdout", text="o")]) for _ in range(300)]
    page = feedback.render(_notebook(cells), hostile_result(), "someone")
    assert len(page) < feedback.MAX_PAGE_CHARS + 2 * feedback.MAX_OUTPUT_CHARS + 500_000
    assert "the rest of the notebook is left out" in page


# ---------------------------------------------------------------- what the kernel sends is bounded


def _executor(cells=10):
    from autograder.grading.execute import Recorder, SandboxExecute

    ex = SandboxExecute(recorder=Recorder())
    ex.nb = _notebook([_cell(f"x = {i}") for i in range(cells)])
    ex.reset_execution_trackers()
    ex.clear_before_next_output = False  # as nbclient sets it before each cell
    ex._start("unit")
    return ex


def _send(ex, cell_index, msg_type, content, header=None):
    msg = {"msg_type": msg_type, "header": header or {"msg_type": msg_type, "msg_id": "m"},
           "parent_header": {"msg_id": "p"}, "metadata": {}, "content": content}
    return ex.process_message(msg, ex.nb.cells[cell_index], cell_index)


def _written(ex):
    text = nbformat.writes(ex.nb)
    nbformat.validate(nbformat.reads(text, as_version=4))
    return text


def test_errors_are_kept_but_bounded():
    """Five 40 MB exceptions per cell, in every cell: each cell still has its error (it decides the score),
    and the notebook stays within its total."""
    ex = _executor(10)
    huge = "E" * 40_000_000
    for i in range(10):
        for _ in range(5):
            _send(ex, i, "error", {"ename": huge, "evalue": huge, "traceback": [huge] * 3 + ["x"] * 100_000})
    for cell in ex.nb.cells:
        assert [o for o in cell.outputs if o.output_type == "error"]
    size = len(_written(ex))
    assert size < ex.max_notebook_output_bytes + 200_000, size
    first = [o for o in ex.nb.cells[0].outputs if o.output_type == "error"][0]
    assert len(first.ename) < 300 and len(first.evalue) < 5_000
    assert len(first.traceback) <= ex.max_traceback_lines + 1 and sum(map(len, first.traceback)) < 25_000


def test_outputs_are_capped_per_cell_and_per_notebook():
    ex = _executor(20)
    chunk = "x" * 400_000
    for i in range(20):
        for _ in range(10):
            _send(ex, i, "stream", {"name": "stdout", "text": chunk})
            _send(ex, i, "display_data", {"data": {"text/plain": chunk, "image/png": chunk},
                                          "metadata": {"image/png": {"width": chunk}}})
            _send(ex, i, "execute_result", {"data": {"text/plain": chunk}, "metadata": {"x": chunk},
                                            "execution_count": 1})
    kept = [sum(len(o.get("text", "")) + sum(len(str(v)) for v in o.get("data", {}).values())
                for o in cell.outputs) for cell in ex.nb.cells]
    assert max(kept) <= ex.max_output_bytes + 1_000
    assert sum(kept) <= ex.max_notebook_output_bytes + 20 * 1_000
    assert all(o.get("metadata", {}) == {} for c in ex.nb.cells for o in c.outputs if "data" in o)
    assert "output cut by the grader" in "".join(o.get("text", "") for o in ex.nb.cells[0].outputs)
    assert ex.recorder.runs["unit"]["truncated"]
    assert len(_written(ex)) < ex.max_notebook_output_bytes + 200_000


def test_display_updates_cannot_multiply_output():
    ex = _executor(2)
    for _ in range(5_000):
        _send(ex, 0, "display_data", {"data": {"text/plain": "."}, "metadata": {},
                                      "transient": {"display_id": "same"}})
    for _ in range(50):
        _send(ex, 0, "update_display_data", {"data": {"text/plain": "u" * 90_000}, "metadata": {},
                                             "transient": {"display_id": "same"}})
        _send(ex, 1, "display_data", {"data": {"text/plain": "d" * 50_000}, "metadata": {},
                                      "transient": {"display_id": "same"}})
    assert len(_written(ex)) < ex.max_notebook_output_bytes + 500_000


def test_malformed_messages_are_dropped_not_fatal():
    ex = _executor(3)
    big = "z" * 5_000_000
    junk = [
        ("stream", {"name": "<script>", "text": ["a", 1, None]}),
        ("stream", {"text": {"not": "text"}}),
        ("display_data", {"data": {"image/png": {"nested": big}, "text/plain": 5}, "metadata": big}),
        ("display_data", {"data": "not a dict", "metadata": None, "transient": "nope"}),
        ("display_data", {"data": {"x" * 500 + "/y": "a", "application/json": {"a": [1, 2]}}}),
        ("execute_result", {"data": {"text/plain": "1"}, "execution_count": big}),
        ("execute_result", {"data": {"text/plain": "1"}}),
        ("error", {"ename": None, "evalue": ["x"], "traceback": "not a list"}),
        ("error", {}),
        ("clear_output", {"wait": big}),
        ("comm_open", {"comm_id": "c", "target_name": "jupyter.widget", "data": {"state": {"v": big}}}),
        ("comm_msg", {"comm_id": "c", "data": {"state": {"v": big}, "buffer_paths": [["v"]]}}),
        ("unknown_type", {"text": big}),
        ("update_display_data", {"data": {"text/plain": big}, "transient": {"display_id": ["list"]}}),
    ]
    for msg_type, content in junk:
        _send(ex, 0, msg_type, content)
    _send(ex, 1, "stream", {"name": "stdout", "text": "still fine"})
    _send(ex, 2, "stream", "content that is not a dict")
    text = _written(ex)
    assert len(text) < 100_000 and "still fine" in text
    assert "widgets" not in ex.nb.metadata
    assert ex.nb.cells[0].get("execution_count") is None


# ---------------------------------------------------------------- the hard per-cell deadline


class _FakeKernel:
    """Stands for the kernel manager: a real process in its own session (as jupyter_client starts the sandbox)."""

    def __init__(self):
        import subprocess
        import types

        self.process = subprocess.Popen(["sleep", "120"], start_new_session=True)
        self.provisioner = types.SimpleNamespace(process=self.process)

    async def shutdown_kernel(self, now=False):
        pass


@pytest.mark.parametrize("stuck", ["blocking call", "awaits forever"])
def test_a_stuck_cell_is_ended_at_its_hard_deadline(monkeypatch, stuck):
    """nbclient stuck (a blocking zmq call in the event loop, or an await that never returns):
    the watchdog kills the kernel's process group, the cell and every later one end as a timeout."""
    import asyncio
    import time

    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    async def blocking(self, cell, *args, **kwargs):
        while self.km.process.poll() is None:  # the event loop itself is stuck here
            time.sleep(0.05)
        raise DeadKernelError("Kernel died")

    async def forever(self, cell, *args, **kwargs):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise DeadKernelError("Kernel died") from None  # what nbclient turns a cancellation into

    monkeypatch.setattr(NotebookClient, "async_execute_cell", blocking if stuck == "blocking call" else forever)
    ex = _executor(3)
    ex.timeout, ex.hard_grace, ex.iopub_timeout = 1, 1, 0
    ex.km = _FakeKernel()
    try:
        started = time.monotonic()
        ex.execute_cell(ex.nb.cells[0], 0)
        elapsed = time.monotonic() - started
        assert ex.km.process.wait(timeout=5) is not None  # killed
        assert elapsed < 10, elapsed
        run = ex.recorder.runs["unit"]
        assert run["timeouts"] == [0] and run["dead"]["why"].startswith("the kernel did not")
        assert ex.nb.cells[0].outputs[-1]["ename"] == "CellTimeoutError"
        ex.execute_cell(ex.nb.cells[1], 1)
        assert ex.nb.cells[1].outputs[0]["ename"] == "NotRun"
    finally:
        ex.km.process.kill()
        ex.km.process.wait()


# ---------------------------------------------------------------- real runs in the sandbox

JUNK_TO_SOCKETS = ("import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'\\x00' * 65536)\n"
                   "    except Exception:\n        pass\n")
JUNK_REVERSED = ("import os\nfor fd in range(63, 2, -1):\n    try:\n        os.write(fd, b'\\xff' * 65536)\n"
                 "    except Exception:\n        pass\n")
IGNORES_INTERRUPTS = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    try:\n"
                      "        while True:\n            pass\n    except BaseException:\n        pass\n")


CELL_TIMEOUT = 6


def _check(tmp_path, edit=None):
    """`python -m autograder check` (graded exactly as `grade` does) of 02's learner notebook, its x_try cell replaced
    by `edit`: (the run, its wall seconds)."""
    import subprocess
    import sys
    import time

    import nbtools

    nb = nbformat.read(nbtools.NOTEBOOKS_DIR / "02_forward_pass.ipynb", as_version=4)
    if edit is not None:
        edited = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.startswith("x_try"))
        nb.cells[edited].source = edit
    path = tmp_path / "02_forward_pass.ipynb"
    nbformat.write(nb, path)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "autograder", "check", str(path), "--cell-timeout", str(CELL_TIMEOUT),
                          "--json", "--feedback", str(tmp_path / "feedback.html")], capture_output=True, text=True,
                         env=nbtools.nbgrader_env(), timeout=600)
    return run, time.monotonic() - started


@pytest.fixture(scope="module")
def unedited_seconds(tmp_path_factory):
    """How long `check` takes here, now, on the notebook with no cell edited: the machine's own pace."""
    import json

    run, seconds = _check(tmp_path_factory.mktemp("unedited"))
    assert run.returncode == 1 and json.loads(run.stdout)["status"] == "graded", run.stderr[-3000:]
    return seconds


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("attack", [JUNK_TO_SOCKETS, JUNK_REVERSED, IGNORES_INTERRUPTS],
                         ids=["junk to the sockets", "junk reversed", "ignores interrupts"])
def test_cell_timeout_holds_in_a_real_sandboxed_run(tmp_path, attack, unedited_seconds):
    """A learner notebook with one cell edited ends as a timeout, with a safe feedback page, within 2 x the cell
    timeout + 30 s more than the same notebook unedited takes on this machine now (a loaded machine slows both)."""
    import json

    run, elapsed = _check(tmp_path, attack)
    assert run.returncode == 1, run.stderr[-3000:]  # graded, and not full marks
    result = json.loads(run.stdout)
    assert result["status"] == "timeout", (result["status"], run.stderr[-3000:])
    assert result["score"] == 0
    assert elapsed < unedited_seconds + 2 * CELL_TIMEOUT + 30, (elapsed, unedited_seconds)
    assert_safe((tmp_path / "feedback.html").read_text())


# ---------------------------------------------------------------- in a real browser


@pytest.mark.browser
def test_no_script_runs_when_the_pages_are_opened_in_chromium(tmp_path, browser):
    """Both pages, opened in Chromium: no dialog, no script-made change. A control page with one unescaped
    onerror shows that the check would see it."""
    ours = tmp_path / "ours.html"
    ours.write_text(feedback.render(hostile_notebook(), hostile_result(), "someone"), encoding="utf-8")
    nbgraders = tmp_path / "nbgrader.html"
    nb, _ = feedback.HideHiddenTests().preprocess(hostile_notebook(), {})
    from nbconvert.exporters import HTMLExporter

    nbgraders.write_text(HTMLExporter(template_name="lab").from_notebook_node(nb)[0], encoding="utf-8")
    control = tmp_path / "control.html"
    control.write_text('<img src="data:image/png;base64,AAAA" onerror="alert(1)">', encoding="utf-8")
    seen = {}
    for path in (ours, nbgraders, control):
        page = browser.new_page()
        try:
            dialogs = []
            page.on("dialog", lambda d, dialogs=dialogs: (dialogs.append(d.message), d.dismiss()))
            page.goto(path.as_uri(), wait_until="load", timeout=30_000)
            page.wait_for_timeout(1500)
            for link in page.query_selector_all("a[href]")[:50]:  # clicking a link runs no script either
                href = link.get_attribute("href") or ""
                assert not href.strip().lower().startswith(("javascript:", "vbscript:", "data:")), href
            seen[path.stem] = dialogs
        finally:
            page.close()
    assert seen["control"], "the control page should have run its script"
    assert seen["ours"] == [] and seen["nbgrader"] == [], seen
