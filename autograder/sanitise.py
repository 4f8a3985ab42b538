"""The one gate for what learner-made content becomes on its way to a person.

Everything a submission produced (outputs, markdown, messages, names) is hostile
until it passes through here, on every way out: the feedback pages, the notebook
the course's autograded/ folder keeps for formgrader, the JSON results, the class
report and every CSV. The policy is one:

- text stays plain text: terminal escapes other than colours, control and
  bidirectional-override characters and lone surrogates are taken out (`plain`);
- an image is kept only as strictly valid base64 of a real PNG (`safe_png`); every
  other MIME type (HTML, JavaScript, SVG, LaTeX, widgets...) is left out with a note;
- markdown becomes HTML through mistune with raw HTML escaped, then a whitelist of
  plain formatting tags (`clean_html`): no `on*` or style attributes, links only to
  http(s), mailto or relative addresses;
- a CSV cell that a spreadsheet would read as a formula gets a leading apostrophe
  (`csv_cell`, OWASP's rule).

The pages that show these (templates rendered by autograder.pages) escape every
value besides; formgrader shows the sanitised notebook through nbconvert (`notebook`).
"""

import base64
import binascii
import csv
import functools
import html
import io
import re
from html.parser import HTMLParser

from . import limits

# nbformat is imported by the functions that build notebook nodes: the class report and the CLI load this module
# with the standard library only (a learner's `check` outside the course's environment must say so in a line).

# Every C0/C1 control character and DEL but newline and tab, and the bidi controls (they reorder what a
# terminal shows): written as visible escapes, so text that holds a student's cannot drive the terminal of
# whoever reads it (window title, clipboard, clearing the screen, overwriting a line).
_TERMINAL_ESCAPES = {c: f"\\x{c:02x}" for c in [*range(0x20), *range(0x7F, 0xA0)] if chr(c) not in "\n\t"}
_TERMINAL_ESCAPES.update({c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]})


def for_terminal(text):
    """`text` as a terminal or a log may show it: its control characters as visible escapes."""
    return str(text).translate(_TERMINAL_ESCAPES)


# OWASP's rule for CSV injection: a spreadsheet reads a cell that starts with one of these as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A value safe for a spreadsheet: text that would start a formula gets a leading apostrophe.

    Numbers stay numbers (a negative score is not a formula); only strings are changed.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(rows, columns):
    """rows (dicts) -> CSV text with a header line, every cell through csv_cell."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    writer.writerows({key: csv_cell(value) for key, value in row.items()} for row in rows)
    return buf.getvalue()


# ------------------------------------------------------------------ plain text

MAX_OUTPUT_CHARS = 100_000  # one output's text
MAX_MARKDOWN_CHARS = 20_000  # one markdown cell (mistune takes about a second for 100,000 pathological ones)
MAX_IMAGE_CHARS = 2_000_000  # one PNG (base64)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")  # a grade id or cell id that may stand in an attribute
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_SPACE = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CONTROL_BUT_ESCAPE = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
_STRAY_ESCAPE = re.compile(r"\x1b(?!\[[0-9;]*m)")
# C1 controls, and the bidirectional overrides and isolates that make text read otherwise than it is stored.
_INVISIBLE = re.compile(r"[\x80-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def joined(value):
    """A notebook's text field (a string, or a list of lines) as one string."""
    return "".join(map(str, value)) if isinstance(value, list) else str(value)


def plain(value, limit=None, colours=False):
    """Learner text as plain text: no terminal escapes (but colours, if `colours`: nbconvert renders those
    itself), no control or bidirectional-override characters (newlines and tabs stay), no lone surrogates
    (which no UTF-8 file can hold); at most `limit` characters."""
    text = joined(value)
    if limit is not None:
        text = text[:4 * limit]
    if colours:
        text = ANSI.sub(lambda m: m.group() if _COLOUR.fullmatch(m.group()) else "", text)
        text = _STRAY_ESCAPE.sub("", _CONTROL_BUT_ESCAPE.sub("", text))
    else:
        text = _CONTROL.sub("", ANSI.sub("", text))
    text = _SURROGATE.sub("\ufffd", _INVISIBLE.sub("", text))
    return text if limit is None else text[:limit]


def plain_record(value):
    """A JSON-able record (dicts, lists, strings, numbers) with every string, keys too, made `plain`."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, dict):
        return {plain_record(k): plain_record(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_record(v) for v in value]
    return value


def md_text(value, limit=limits.MAX_MESSAGE_CHARS):
    """A learner-controlled string as markdown that shows it literally: one line, every punctuation escaped,
    so no link, image, HTML, emphasis or table syntax can come from it."""
    text = _SPACE.sub(" ", plain(str(value)[:4 * limit])).strip()
    if len(text) > limit:
        text = text[:limit] + " …"
    return _MD_SPECIAL.sub(r"\\\1", text)


# ------------------------------------------------------------------ outputs: plain text and valid PNGs


def safe_png(value):
    """The base64 text of a PNG output if it is strictly valid base64 of bytes that start like a PNG, else None."""
    if not isinstance(value, (str, list)):
        return None
    text = joined(value)
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
        kept["text/plain"] = plain(data["text/plain"], MAX_OUTPUT_CHARS, colours=True)
    if not kept and data:
        kept = _note("an output the grader does not show (" +
                     ", ".join(sorted(plain(k, 40) for k in data)[:5]) + ")")
    elif "image/png" in data and "image/png" not in kept:
        kept["text/plain"] = kept.get("text/plain", "") + "\n[an image that is not a valid PNG was left out]"
    return kept


_MARKUP = re.compile(r"[<>\"'&`]")


def image_alt(output):
    """An image output's text alternative (Jupyter's image/png "alt" metadata) as one line of plain text with no
    character that could close an attribute or start markup, whatever template puts it in one; or None."""
    meta = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
    alt = meta.get("image/png", {}).get("alt") if isinstance(meta.get("image/png"), dict) else None
    if not isinstance(alt, str):
        return None
    return _SPACE.sub(" ", _MARKUP.sub(" ", plain(alt, limits.MAX_ALT_CHARS))).strip() or None


def safe_outputs(outputs):
    """The outputs of a cell, each reduced to plain text, a valid PNG or an error's name, message and traceback;
    of output metadata only an image's text alternative (nbconvert puts width and height into attributes)."""
    import nbformat

    kept = []
    for out in outputs if isinstance(outputs, list) else []:
        kind = out.get("output_type") if isinstance(out, dict) else None
        if kind == "stream":
            kept.append(nbformat.v4.new_output("stream", name="stderr" if out.get("name") == "stderr" else "stdout",
                                               text=plain(out.get("text", ""), MAX_OUTPUT_CHARS, colours=True)))
        elif kind == "error":
            tb = out.get("traceback") if isinstance(out.get("traceback"), list) else []
            ename = plain(out.get("ename", "Error"), limits.MAX_MESSAGE_CHARS)
            kept.append(nbformat.v4.new_output("error", ename=ename,
                                               evalue=plain(out.get("evalue", ""), MAX_OUTPUT_CHARS),
                                               traceback=[plain(t, MAX_OUTPUT_CHARS, colours=True)
                                                          for t in tb[:200]]))
        elif kind in ("execute_result", "display_data"):
            new = nbformat.v4.new_output(kind, data=safe_data(out.get("data")))
            alt = image_alt(out)
            if alt and "image/png" in new["data"]:
                new["metadata"] = {"image/png": {"alt": alt}}
            if kind == "execute_result":
                count = out.get("execution_count")
                new["execution_count"] = count if type(count) is int else None
            kept.append(new)
    return kept


# ------------------------------------------------------------------ the whitelist every markdown cell goes through


@functools.cache
def _markdown():
    import mistune

    return mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])


_ALLOWED = {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "code", "pre", "blockquote",
            "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "span", "div", "sup", "sub",
            "details", "summary"}  # the course's hints: a learner's markdown never brings raw tags this far
_VOID = {"br", "hr", "img"}
_DROP_WITH_CONTENT = {"script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math",
                      "textarea", "select", "title", "head", "xmp", "noembed", "noframes", "plaintext"}
_SAFE_SCHEMES = ("http", "https", "mailto")
_ALIGN = re.compile(r"^text-align:\s*(left|right|center)$")
_CLASS = re.compile(r"^[A-Za-z0-9_ -]{1,60}$")


def safe_url(url, image=False):
    """The URL if it is http(s), mailto or relative; for an image, only a valid PNG data URL (else None).

    A browser fetches an image as the page loads, with no click: from the grader's own origin (a relative
    `/hub/logout`) it would carry the instructor's cookies, and from another host it tells that host who looked."""
    url = str(url or "")
    squashed = re.sub(r"[\x00-\x20\x7f-\x9f]", "", url)
    if image:
        if squashed.lower().startswith("data:image/png;base64,"):
            return url if safe_png(squashed[len("data:image/png;base64,"):]) else None
        return None
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", squashed)
    if scheme is None:
        return None if ":" in squashed.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0] else url
    return url if scheme.group(1).lower() in _SAFE_SCHEMES else None


def _attributes(kept):
    return "".join(f' {name}="{html.escape(value, quote=True)}"' for name, value in kept)


class TagCleaner(HTMLParser):
    """HTML (or MathML) rebuilt from a whitelist: kept elements with kept attributes, every text escaped again,
    every element closed in order.

    A subclass says what is kept: `ELEMENTS` (the tags), `VOID` (those without content), `attribute` (an
    attribute's value, or None to leave it out), and `drops_content` (an element whose content goes with it;
    any other tag outside `ELEMENTS` is left out and its text kept). `start` may write a kept tag otherwise.
    """

    ELEMENTS = frozenset()
    VOID = frozenset()

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out = []
        self.open = []
        self.skip = 0  # depth inside elements dropped with their content

    def drops_content(self, tag):
        return True

    def attribute(self, tag, name, value):
        return None

    def start(self, tag, attrs, kept):
        """The markup of a kept start tag (`kept`: its kept attributes, (name, value)), or None for no element."""
        return f"<{tag}{_attributes(kept)}>"

    def handle_starttag(self, tag, attrs):
        if tag not in self.ELEMENTS and self.drops_content(tag):
            self.skip += 1
            return
        if self.skip or tag not in self.ELEMENTS:
            return
        kept = [(name, value) for name, value in ((n, self.attribute(tag, n, v or "")) for n, v in attrs)
                if value is not None]
        markup = self.start(tag, attrs, kept)
        if markup is None:
            return
        self.out.append(markup)
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.ELEMENTS and self.drops_content(tag):
            self.skip = max(0, self.skip - 1)  # `<x/>` has no content to drop
        elif tag not in self.VOID and not self.skip and self.open and self.open[-1] == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag not in self.ELEMENTS and self.drops_content(tag):
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
        self.out += [f"</{tag}>" for tag in reversed(self.open)]
        self.open = []
        return "".join(self.out)


class _Cleaner(TagCleaner):
    """The markdown whitelist: plain formatting, safe links and images; script-like elements go with their content,
    any other unknown tag keeps its text."""

    ELEMENTS = frozenset(_ALLOWED)
    VOID = frozenset(_VOID)

    def drops_content(self, tag):
        return tag in _DROP_WITH_CONTENT

    def attribute(self, tag, name, value):
        if tag == "a" and name == "href":
            return safe_url(value)
        if tag == "img" and name == "src":
            return safe_url(value, image=True)
        if name in ("alt", "title") and tag in ("a", "img"):
            return value
        if name == "style" and tag in ("th", "td"):
            return value if _ALIGN.match(value.strip().rstrip(";")) else None
        if name == "class" and tag in ("code", "pre", "span", "div"):
            return value if _CLASS.match(value) else None
        if name == "start" and tag == "ol":
            return value if value.isdigit() and len(value) < 8 else None
        return None

    def start(self, tag, attrs, kept):
        if tag == "img" and "src" not in dict(kept):  # an image whose address was refused: its alt as text
            alt = dict(attrs).get("alt") or "an image"
            self.out.append(html.escape(f"[{alt}]", quote=False))
            return None
        return super().start(tag, attrs, kept)


def clean_html(fragment):
    """HTML reduced to a whitelist of formatting tags and safe attributes; every text escaped again."""
    cleaner = _Cleaner()
    cleaner.feed(fragment)
    return cleaner.close()


def markdown_html(source):
    """A learner's markdown as safe HTML."""
    return clean_html(_markdown()(plain(source, MAX_MARKDOWN_CHARS)))


@functools.cache
def _course_markdown():
    import mistune

    return mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])


def course_markdown_html(source):
    """The course's own markdown (a cell of the course's notebook, word for word) as safe HTML. Unlike a learner's,
    whose raw HTML is escaped into text, its raw tags reach the whitelist, which keeps the hints' <details> and
    <summary> (and no attribute of theirs)."""
    return clean_html(_course_markdown()(plain(source, MAX_MARKDOWN_CHARS)))


_BLOCK = ('<div class="learner-markdown">', "</div>")


def _html_block(fragment):
    body = clean_html(fragment).replace("\r", "").replace("\n", "&#10;").replace("$", "&#36;")
    return f"{_BLOCK[0]}{body}{_BLOCK[1]}"


def markdown_as_html_block(source):
    """Safe HTML of a markdown cell on one line in a div: nbconvert's markdown renderer passes it on unchanged.

    A cell that is such a block already (a notebook sanitised before) stays one, cleaned again."""
    source = joined(source)
    if source.startswith(_BLOCK[0]) and source.endswith(_BLOCK[1]) and "\n" not in source:
        return _html_block(source[len(_BLOCK[0]):-len(_BLOCK[1])])
    return _html_block(_markdown()(plain(source, MAX_MARKDOWN_CHARS)))


# ------------------------------------------------------------------ notebooks rendered by nbconvert

# nbgrader's cell metadata as formgrader and generate_feedback read it; the template puts grade ids into attributes.
_NBGRADER_FLAGS = ("grade", "solution", "locked", "task")
_KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
           "language_info": {"name": "python"}}


def _nbgrader_metadata(meta):
    """nbgrader's fields of a cell, each of its own type; {} when the grade id could stand in no attribute."""
    if not isinstance(meta, dict) or not meta or not ID.match(str(meta.get("grade_id", ""))):
        return {}
    kept = {"grade_id": meta["grade_id"]}
    kept.update({k: meta[k] for k in _NBGRADER_FLAGS if type(meta.get(k)) is bool})
    for key in ("points", "score"):
        if type(meta.get(key)) in (int, float):
            kept[key] = meta[key]
    if type(meta.get("schema_version")) is int:
        kept["schema_version"] = meta["schema_version"]
    for key in ("checksum", "cell_type"):
        if isinstance(meta.get(key), str) and ID.match(meta[key]):
            kept[key] = meta[key]
    if isinstance(meta.get("comment"), str):
        kept["comment"] = plain(meta["comment"], limits.MAX_MESSAGE_CHARS)
    return kept


def notebook_cell(cell, index, trusted_markdown=frozenset()):
    """One cell as nbconvert may render it: nbgrader's metadata only, outputs through `safe_outputs`, markdown
    through the whitelist (unless it is the course's own, in `trusted_markdown`), a raw cell as a code block."""
    import nbformat

    meta = _nbgrader_metadata(cell.get("metadata", {}).get("nbgrader"))
    cell.metadata = nbformat.from_dict({"nbgrader": meta} if meta else {})
    if "id" in cell and not ID.match(str(cell["id"])):
        cell["id"] = f"cell-{index}"
    kind = cell.get("cell_type")
    if kind == "code":
        cell.source = plain(cell.get("source", ""))
        cell.outputs = safe_outputs(cell.get("outputs"))
        if type(cell.get("execution_count")) is not int:
            cell["execution_count"] = None
    elif kind == "markdown":
        source = joined(cell.get("source", ""))
        cell.source = source if source in trusted_markdown else markdown_as_html_block(source)
    else:  # raw: nbconvert's HTML export passes a raw cell's text on as HTML
        cell.source = markdown_as_html_block(f"```\n{joined(cell.get('source', ''))}\n```")
        cell.cell_type = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    cell.pop("attachments", None)
    return cell


def notebook_metadata():
    """The only notebook metadata a rendered notebook keeps (the rest, widget state included, reaches the page)."""
    import nbformat

    return nbformat.from_dict(_KERNEL)


def notebook(nb, trusted_markdown=()):
    """A copy of notebook `nb` that nbconvert renders (formgrader, generate_feedback) without running anything
    a learner wrote; `trusted_markdown`: the course's own markdown cells, kept as written."""
    import nbformat

    trusted = frozenset(trusted_markdown)
    out = nbformat.v4.new_notebook(metadata=notebook_metadata())
    for index, cell in enumerate(nb.get("cells", []) if isinstance(nb.get("cells"), list) else []):
        if isinstance(cell, dict) and cell.get("cell_type") in ("code", "markdown", "raw"):
            out.cells.append(notebook_cell(nbformat.from_dict(dict(cell)), index, trusted))
    return out
