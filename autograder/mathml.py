"""The course's mathematics as MathML, made with the page: no script, nothing loaded, read by screen readers.

Only the course's own markdown goes through here (`with_math`): a learner's markdown
keeps its dollar signs as text. latex2mathml's output still passes a whitelist of
MathML Core's presentation elements and plain attribute values (`clean_mathml`):
nothing that links, loads or runs (no href, no style, no event handler, no
<semantics> annotation holding markup).
"""

import functools
import html
import re

from .sanitise import TagCleaner

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
MAX_LATEX_CHARS = 2_000  # one formula

_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "mfrac", "msqrt",
         "mroot", "mover", "munder", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom",
         "menclose", "merror", "mmultiscripts", "mprescripts", "none"}
_ATTRIBUTES = {"display", "mathvariant", "stretchy", "fence", "separator", "form", "lspace", "rspace", "accent",
               "accentunder", "largeop", "movablelimits", "symmetric", "minsize", "maxsize", "width", "height",
               "depth", "voffset", "linethickness", "displaystyle", "scriptlevel", "columnalign", "rowalign",
               "columnspacing", "rowspacing", "columnlines", "rowlines", "frame", "notation", "columnspan", "rowspan"}
_VALUE = re.compile(r"^[A-Za-z0-9 .%#+-]{0,60}$")  # words, numbers and lengths: no URL, no markup, no quote

# A code span or fenced block (left as is), else display math $$...$$, else inline math $...$.
# Inline math may wrap onto the next line, never across a blank one.
_MATH = re.compile(r"(```.*?```|`[^`\n]*`)|\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)((?:[^$\n]|\n(?!\s*\n))+?)(?<![\s\\])\$",
                   re.S)
# Private-use characters mark where a formula goes: markdown passes them on as text, and no course text has them.
_SLOT = "\ue000{}\ue001"
_SLOT_RE = re.compile("\ue000(\\d+)\ue001")


class _MathCleaner(TagCleaner):
    """MathML Core's presentation elements with plain attribute values; any other element goes with its content."""

    ELEMENTS = frozenset(_TAGS)

    def attribute(self, tag, name, value):
        return value if name in _ATTRIBUTES and _VALUE.match(value) else None

    def start(self, tag, attrs, kept):
        return super().start(tag, attrs, [("xmlns", MATHML_NS), *kept] if tag == "math" else kept)


def clean_mathml(markup):
    """MathML reduced to presentation elements with plain attribute values; every text escaped again.

    An element outside the whitelist is dropped with its content.
    """
    cleaner = _MathCleaner()
    cleaner.feed(markup)
    return cleaner.close()


@functools.lru_cache(maxsize=4096)
def to_mathml(latex, display=False):
    """One LaTeX formula as clean MathML; a formula latex2mathml cannot read stays LaTeX, shown as code."""
    from latex2mathml.converter import convert

    latex = str(latex)[:MAX_LATEX_CHARS]
    try:
        markup = convert(latex, display="block" if display else "inline")
    except Exception:  # latex2mathml raises many kinds of errors on LaTeX it does not know
        return f"<code>{html.escape(latex, quote=False)}</code>"
    return clean_mathml(markup)


def with_math(source, render):
    """Trusted course markdown as HTML with its $...$ and $$...$$ formulas as MathML.

    `render` turns markdown into safe HTML (the feedback page's whitelist); the formulas are taken out before
    and put back after it, each through `to_mathml`.
    """
    formulas = []

    def slot(match):
        code, block, inline = match.groups()
        if code is not None:
            return code
        formulas.append(to_mathml(block if block is not None else inline, display=block is not None))
        return _SLOT.format(len(formulas) - 1)

    page = render(_MATH.sub(slot, str(source)))
    return _SLOT_RE.sub(lambda m: formulas[int(m.group(1))] if int(m.group(1)) < len(formulas) else "", page)
