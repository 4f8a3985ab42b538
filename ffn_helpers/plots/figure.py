r"""What every figure function returns, and the checks and number formats they share.

A function works out its text alternative from the data, then hands `_figure` a `draw_on(fig)`: outside a graded
run that draws a fresh `CourseFigure` (`ffn_helpers._course_figure`, the only module that imports matplotlib); in
one (FIGURES_ENV) it returns a `DescribedFigure`, which displays the text alternative and draws only if code asks
the figure for more. A notebook's own figure goes the same way through `custom_figure`.
"""

import math

import numpy as np

from .._arrays import as_float
from .._display import MAX_ALT_CHARS, as_text, drawn_as_text


class DescribedFigure:
    """A course figure built in text mode: its text alternative, and the figure itself only if code asks for it.

    Displayed, it is its text alternative (`as_text`), without matplotlib. Any public attribute (`fig.axes`,
    `fig.savefig`, ...) draws the `CourseFigure` once and is that figure's; `figure` is the figure itself.
    """

    def __init__(self, alt, build):
        self.alt = alt
        self._build, self._drawn = build, None

    @property
    def figure(self):
        if self._drawn is None:
            self._drawn = self._build()
        return self._drawn

    def __getattr__(self, name):
        # IPython probes _repr_png_, _repr_html_ ... and a canary name: none of them may draw the figure.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.figure, name)

    def _repr_mimebundle_(self, include=None, exclude=None):
        if drawn_as_text():
            return as_text(self.alt)
        return self.figure._repr_mimebundle_(include=include, exclude=exclude)


def _figure(size, kind, title, text, draw_on):
    """What every function returns: a CourseFigure of `size` (inches) drawn by `draw_on(fig)`, or in text mode a
    DescribedFigure; either way with the text alternative "kind: title. text"."""
    return _described(size, f"{kind}: {title}. {text}" if title else f"{kind}. {text}", draw_on)


def _described(size, alt, draw_on):
    alt = alt[:MAX_ALT_CHARS]

    def build():
        from .._course_figure import draw

        return draw(size, alt, draw_on)

    return DescribedFigure(alt, build) if drawn_as_text() else build()


def custom_figure(draw_on, size, alt):
    """A notebook's own figure: `draw_on(fig)` draws it on a fresh CourseFigure of `size` (width, height in inches)
    in the course's style, and `alt` says in words what it shows.

    Work `alt` out from the data, as every function here does, not from the drawing: in a graded run the figure is
    a DescribedFigure, shown by `alt`, and `draw_on` (with any matplotlib import inside it) never runs.
    """
    if not callable(draw_on):
        raise TypeError(f"draw_on: expected a function that draws on the figure it is given, "
                        f"got {type(draw_on).__name__}")
    if not isinstance(alt, str) or not alt.strip():
        raise ValueError(f"alt: expected the figure's text alternative, a sentence saying what it shows, got {alt!r}")
    try:
        width, height = (float(v) for v in size)
    except (TypeError, ValueError):
        raise ValueError(f"size: expected (width, height) in inches, got {size!r}") from None
    if not (0 < width <= 30 and 0 < height <= 30):
        raise ValueError(f"size: expected a width and height between 0 and 30 inches, got {size!r}")
    return _described((width, height), alt, draw_on)


def _values(a, limit=12):
    """Up to `limit` values as the figures print them, in brackets; '…' when there are more."""
    a = np.ravel(a)
    shown = ", ".join(fmt(v) for v in a[:limit])
    return f"[{shown}{', …' if a.size > limit else ''}]"


def fmt(v):
    """A value as the figures print it: 3 significant digits, and 0 (never -0) for zero."""
    v = float(v)
    return "0" if v == 0 else f"{v:.3g}"


def _vector(a, name):
    a = as_float(a, name)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} should be a non-empty 1-D array (one token's units), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} should hold finite numbers, got {a.tolist()}")
    return a


def _finite(a, name):
    a = as_float(a, name)
    if a.size == 0:
        raise ValueError(f"{name} is empty; there is nothing to plot")
    if not np.all(np.isfinite(a)):
        bad = np.ravel(a)[~np.isfinite(np.ravel(a))][:3].tolist()
        raise ValueError(f"{name} should hold finite numbers, got non-finite values such as {bad}")
    return a


def _interval(pair, name):
    try:
        lo, hi = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise ValueError(f"{name} should be a pair of numbers (low, high), got {pair!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} should be finite with low < high, got {pair!r}")
    return lo, hi
