r"""The course's figures, as matplotlib `Figure` objects.

Every function builds a fresh `CourseFigure` (a `matplotlib.figure.Figure`) and
returns it: nothing goes through pyplot, so no global figure state leaks, nothing
is shown twice in a notebook, and it all works headless. A notebook cell that
ends with the figure displays it as a PNG; `fig.savefig(path)` writes a file.
Each function works out its text alternative (`alt`) from the data, then draws.
A notebook's own figure does the same through `custom_figure(draw_on, size, alt)`.

In a graded run (FIGURES_ENV) a function returns a `DescribedFigure` instead: it
displays the text alternative, and matplotlib (imported by `_course_figure`
only) is never loaded unless code asks the figure for more.

Colours come from the Okabe–Ito palette, which stays distinguishable under the
common colour-vision deficiencies; every colour is named once, in `_palette`.
"""

import math
import re
from collections.abc import Mapping

import numpy as np

from ._arrays import as_float
from ._display import FIGURES_ENV, MAX_ALT_CHARS, as_text, drawn_as_text, image_html  # noqa: F401 (plots' API)
from ._palette import (  # noqa: F401 (plots' API: every colour is plots.<NAME>)
    ACTIVE_FACE,
    BLACK,
    BLUE,
    BLUISH_GREEN,
    GREY,
    INACTIVE_FACE,
    INACTIVE_TEXT,
    INPUT_FACE,
    NEGATIVE,
    NODE_TEXT,
    OKABE_ITO,
    ORANGE,
    OUTPUT_FACE,
    POSITIVE,
    REDDISH_PURPLE,
    SKY_BLUE,
    VERMILION,
    YELLOW,
    ZERO,
)
from .activations import get_activation, relu
from .ffn import check_ffn_shapes, ffn_trace

# Each curve differs by line style or marker as well as by colour (tests/test_palettes.py).
ACTIVATION_STYLES = {
    "relu": dict(color=BLUE, linestyle="-", label="ReLU"),
    "gelu": dict(color=VERMILION, linestyle="-.", label="GELU (exact)"),
    "gelu_tanh": dict(color=REDDISH_PURPLE, linestyle="--", label="GELU (tanh approx.)"),
    "silu": dict(color=BLUISH_GREEN, linestyle=":", label="SiLU"),
    "sigmoid": dict(color=ORANGE, linestyle="-", marker="o", markevery=0.1, markersize=4, label="sigmoid"),
    # BLACK: GREY is too near REDDISH_PURPLE for a deuteranope
    "identity": dict(color=BLACK, linestyle="--", marker="x", markevery=0.1, markersize=5, label="identity"),
}

# The short names used in formulas such as "h = ReLU(z)".
ACTIVATION_SYMBOLS = {"relu": "ReLU", "gelu": "GELU", "gelu_tanh": "GELU_tanh", "silu": "SiLU",
                      "sigmoid": "sigmoid", "identity": "identity"}

# Subnormal floats reach 5e-324; a log axis cannot start below a positive float.
_LOG10_TINY = -320

# preactivation_bars prints each bar's value up to this many units per panel.
MAX_LABELLED_BARS = 16

# ffn_dataflow draws every unit and edge; beyond this it is a hairball.
MAX_DATAFLOW_D_MODEL = 8
MAX_DATAFLOW_D_FF = 16

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


def __getattr__(name):
    if name == "CourseFigure":  # importing it imports matplotlib: only when code asks for the class itself
        from ._course_figure import CourseFigure

        return CourseFigure
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _figure(size, kind, title, text, draw_on):
    """What every function returns: a CourseFigure of `size` (inches) drawn by `draw_on(fig)`, or in text mode a
    DescribedFigure; either way with the text alternative "kind: title. text"."""
    return _described(size, f"{kind}: {title}. {text}" if title else f"{kind}. {text}", draw_on)


def _described(size, alt, draw_on):
    alt = alt[:MAX_ALT_CHARS]

    def build():
        from ._course_figure import draw

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


def _sign_colours(values):
    return [POSITIVE if v > 0 else NEGATIVE if v < 0 else ZERO for v in values]


def _activation_style(name_or_fn):
    if isinstance(name_or_fn, str) and name_or_fn in ACTIVATION_STYLES:
        return dict(ACTIVATION_STYLES[name_or_fn])
    label = name_or_fn if isinstance(name_or_fn, str) else getattr(name_or_fn, "__name__", "σ")
    return dict(linestyle="-", label=label)


def _names(names):
    if isinstance(names, str) or callable(names):
        names = (names,)
    names = tuple(names)
    if not names:
        raise ValueError("names should list at least one activation, got an empty sequence")
    for name in names:
        get_activation(name)  # raises a ValueError naming the valid choices
    return names


# --- pre-activations and ReLU ------------------------------------------------


# Colour is not the only cue: negative bars (and the key's exact zeros) are also hatched.
NEGATIVE_HATCH = "///"
ZERO_HATCH = "..."


def _sign_legend():
    from matplotlib.patches import Patch

    return [Patch(facecolor=POSITIVE, label="positive"),
            Patch(facecolor=NEGATIVE, hatch=NEGATIVE_HATCH, edgecolor="white", label="negative"),
            Patch(facecolor=ZERO, hatch=ZERO_HATCH, edgecolor="white", label="exactly 0")]


def _value_bars(ax, values, ticks, tick_labels, ylim):
    bars = ax.bar(ticks, values, width=0.6, color=_sign_colours(values), edgecolor="none")
    for bar, v in zip(bars, values, strict=True):
        if v <= 0:
            bar.set_hatch(NEGATIVE_HATCH if v < 0 else ZERO_HATCH)
            bar.set_edgecolor("white")
    pad = 0.03 * (ylim[1] - ylim[0])
    if values.size <= MAX_LABELLED_BARS:  # beyond that the printed values would collide
        size = 10 if values.size <= 8 else 8
        for x, v in zip(ticks, values, strict=True):
            va, y = ("top", v - pad) if v < 0 else ("bottom", v + pad)
            ax.text(x, y, fmt(v), ha="center", va=va, fontsize=size, color=INACTIVE_TEXT if v == 0 else NODE_TEXT)
    ax.axhline(0.0, color=BLACK, linewidth=0.9)
    ax.set_xticks(ticks, tick_labels)
    ax.set_ylim(*ylim)
    ax.grid(axis="y", color="#E6E6E6", linewidth=0.8)
    ax.set_axisbelow(True)
    return bars


def preactivation_bars(z, h=None, labels=None, title="Pre-activation z and hidden h = ReLU(z)",
                       h_name="ReLU", xlabel="hidden unit j"):
    """Two bar panels: z and h, coloured by sign (positive, negative, exactly 0); z, h: (d_ff,).

    `h` defaults to ReLU(z); pass it with `h_name` to show another activation.
    """
    z = _vector(z, "z")
    h = relu(z) if h is None else _vector(h, "h")
    if h.shape != z.shape:
        raise ValueError(f"h should have the shape of z, {z.shape}, got {h.shape}")
    ticks = np.arange(z.size)
    if labels is None:
        labels = [str(j) for j in ticks]
    else:
        labels = [str(s) for s in labels]
        if len(labels) != z.size:
            raise ValueError(f"labels should have one entry per unit ({z.size}), got {len(labels)}")
    lo = min(0.0, z.min(), h.min())
    hi = max(0.0, z.max(), h.max())
    span = (hi - lo) or 1.0
    ylim = (lo - 0.15 * span if lo < 0 else -0.08 * span, hi + 0.15 * span)

    def draw_on(fig):
        ax_z, ax_h = fig.subplots(1, 2, sharey=True)
        _value_bars(ax_z, z, ticks, labels, ylim)
        _value_bars(ax_h, h, ticks, labels, ylim)
        ax_z.set_title("before: pre-activation z")
        ax_h.set_title(f"after: h = {h_name}(z)")
        ax_z.set_ylabel("value")
        ax_h.set_ylabel("value")
        ax_h.tick_params(labelleft=True)
        ax_z.set_xlabel(xlabel)
        ax_h.set_xlabel(xlabel)
        fig.suptitle(title)
        fig.legend(handles=_sign_legend(), loc="outside lower center", ncols=3, frameon=False)

    return _figure((min(max(7.0, 0.5 * z.size + 5.0), 14.0), 3.8), "Two bar charts", title,
                   f"Left, the pre-activation z of {z.size} hidden units ({_signs(z)}): {_values(z, 16)}; "
                   f"right, h = {h_name}(z) ({_signs(h)}): {_values(h, 16)}. Bars by {xlabel}, "
                   "coloured and patterned by sign.", draw_on)


def _signs(a):
    return f"{int(np.sum(a > 0))} positive, {int(np.sum(a < 0))} negative, {int(np.sum(a == 0))} exactly 0"


def preactivation_histogram(z, bins=40, title=None):
    """Histogram of pre-activations z (any shape, all entries), split at 0; the inactive share is z <= 0."""
    z = np.ravel(_finite(z, "z"))
    if not (isinstance(bins, int | np.integer) and bins >= 2):
        raise ValueError(f"bins should be an integer >= 2, got {bins!r}")
    n = z.size
    n_neg, n_zero = int(np.sum(z < 0)), int(np.sum(z == 0))
    share = (n_neg + n_zero) / n
    share_text = f"{100 * share:.1f}%"
    centres, counts, width = _bins_split_at_zero(z, bins)
    title = title or f"Pre-activations: {share_text} of hidden units inactive under ReLU"

    def draw_on(fig):
        from matplotlib.ticker import MaxNLocator

        ax = fig.subplots()
        ax.axvline(0.0, color=BLACK, linewidth=1.0, zorder=2)
        share_handle, = ax.plot([], [], linestyle="none", label=f"inactive (z ≤ 0, so h = 0): {share_text}")
        handles = [share_handle, *_histogram_bars(ax, z, centres, counts, width)]
        ax.set_xlabel("pre-activation z")
        ax.set_ylabel("count")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(title)
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False,
                   handlelength=1.2, columnspacing=1.0, fontsize=9.5)
        ax.margins(y=0.05)

    return _figure((8.0, 4.4), "Histogram", title,
                   f"{n} pre-activations z from {fmt(z.min())} to {fmt(z.max())}, split at 0: {n_neg} below 0, "
                   f"{n_zero} exactly 0, {int(np.sum(z > 0))} above 0; {share_text} inactive under ReLU.", draw_on)


def _bins_split_at_zero(z, bins):
    """About `bins` equal bins of the non-zero z, with an edge on 0 so that no bar mixes active and inactive
    units: (bin centres, counts, bin width)."""
    width = (z.max() - z.min()) / bins or 1.0
    k_lo = math.floor(min(z.min(), 0.0) / width)
    k_hi = math.ceil(max(z.max(), 0.0) / width)
    edges = np.arange(k_lo, max(k_hi, k_lo + 1) + 1) * width
    counts, _ = np.histogram(z[z != 0], bins=edges)
    return (edges[:-1] + edges[1:]) / 2, counts, width


def _histogram_bars(ax, z, centres, counts, width):
    """The bars below 0, at exactly 0 (if any) and above 0; returns their legend entries, in that order."""
    from matplotlib.patches import Patch

    n = z.size
    n_neg, n_zero = int(np.sum(z < 0)), int(np.sum(z == 0))
    neg = centres < 0
    # Legend entries are explicit patches: an empty bar group (no z > 0, say)
    # would otherwise get the colour cycle's default swatch.
    handles = [Patch(facecolor=NEGATIVE, hatch=NEGATIVE_HATCH, edgecolor="white", label=f"z < 0: {n_neg} of {n}")]
    ax.bar(centres[neg], counts[neg], width=width, color=NEGATIVE, edgecolor="white", linewidth=0.5,
           hatch=NEGATIVE_HATCH)
    if n_zero:
        # A separate narrow bar: an exact zero belongs to neither side's bins.
        ax.bar([0.0], [n_zero], width=0.5 * width, color=ZERO, hatch=ZERO_HATCH, edgecolor="white", zorder=3)
        handles.append(Patch(facecolor=ZERO, hatch=ZERO_HATCH, edgecolor="white",
                             label=f"z = 0 exactly: {n_zero} of {n}"))
    ax.bar(centres[~neg], counts[~neg], width=width, color=POSITIVE, edgecolor="white", linewidth=0.5)
    handles.append(Patch(facecolor=POSITIVE, label=f"z > 0: {int(np.sum(z > 0))} of {n}"))
    return handles


# --- activation functions ---------------------------------------------------


def activation_curves(names=("relu", "gelu", "gelu_tanh", "silu"), z_range=(-4, 4), zoom=(-6, -0.5),
                      n_points=801, title="Activation functions σ(z)"):
    """σ(z) for each activation over `z_range`, and a second panel zoomed (linearly) on the negative `zoom`."""
    names = _names(names)
    z_range = _interval(z_range, "z_range")
    zoom = _interval(zoom, "zoom")

    def draw_on(fig):
        ax_all, ax_zoom = fig.subplots(1, 2)
        for ax, (lo, hi) in ((ax_all, z_range), (ax_zoom, zoom)):
            z = np.linspace(lo, hi, n_points)
            for name in names:
                line, = ax.plot(z, get_activation(name)(z), linewidth=2, **_activation_style(name))
                line.set_gid(name if isinstance(name, str) else line.get_label())
            ax.axhline(0.0, color=GREY, linewidth=0.8, zorder=0)
            ax.set_xlim(lo, hi)
            ax.set_xlabel("pre-activation z")
            ax.set_ylabel("σ(z)")
            ax.grid(color="#E6E6E6", linewidth=0.8)
        if z_range[0] < 0 < z_range[1]:
            ax_all.axvline(0.0, color=GREY, linewidth=0.8, zorder=0)
        ax_all.set_title(f"z from {fmt(z_range[0])} to {fmt(z_range[1])}")
        ax_zoom.set_title(f"zoom (linear scale): z from {fmt(zoom[0])} to {fmt(zoom[1])}")
        ax_all.legend(frameon=False)
        fig.suptitle(title)

    probes = [v for v in (-3.0, -1.0, 0.0, 1.0, 3.0) if z_range[0] <= v <= z_range[1]]
    values = "; ".join(f"{_activation_style(n)['label']}: " + ", ".join(
        f"σ({fmt(v)}) = {fmt(get_activation(n)(np.array(v)))}" for v in probes) for n in names)
    return _figure((10.0, 4.2), "Two line plots", title,
                   f"Each activation's σ(z) for z from {fmt(z_range[0])} to {fmt(z_range[1])} (left) and zoomed "
                   f"on z from {fmt(zoom[0])} to {fmt(zoom[1])} (right); lines differ by colour and style. "
                   f"{values}.", draw_on)


def _zero_note(z, zero):
    """Say where |σ(z)| is exactly 0 (those points cannot sit on a log axis)."""
    if zero.all():
        return "exactly 0 everywhere here, not drawable on a log axis"
    if zero.any() and z[zero].max() < z[~zero].min():
        return f"exactly 0 for z ≤ {fmt(z[zero].max())}, not shown"
    return f"exactly 0 at {int(zero.sum())} of {z.size} points, not shown"


def tails_plot(names=("relu", "silu", "gelu", "gelu_tanh"), z=None, title="How fast σ(z) vanishes as z → -∞"):
    """|σ(z)| on a log axis for the negative entries of z (default -40 ... -0.1).

    Exact zeros (ReLU, and underflow) have no place on a log axis: they are
    masked and the legend says where they are.
    """
    names = _names(names)
    z = np.linspace(-40.0, -0.1, 800) if z is None else np.ravel(_finite(z, "z"))
    z = np.sort(z[z < 0])
    if z.size == 0:
        raise ValueError("tails_plot shows negative inputs; z should contain at least one value < 0")
    curves = _tail_curves(names, z)

    def draw_on(fig):
        ax = fig.subplots()
        ax.set_yscale("log")
        drawn = _draw_tails(ax, z, curves)
        _decade_ticks(ax, drawn)
        ax.set_xlim(z[0], z[-1])
        ax.set_xlabel("pre-activation z (negative)")
        ax.set_ylabel("|σ(z)| (log scale)")
        ax.set_title(title)
        ax.grid(color="#E6E6E6", linewidth=0.8, which="major")
        ax.legend(frameon=False, loc="lower right")

    ends = "; ".join(f"{style['label']}: |σ({fmt(z[0])})| = {fmt(abs(get_activation(name)(np.array(z[0]))))}"
                     for name, style, _, _ in curves)
    return _figure((7.5, 4.5), "Line plot on a log scale", title,
                   f"|σ(z)| for z from {fmt(z[0])} to {fmt(z[-1])}, one line per activation. {ends}.", draw_on)


def _tail_curves(names, z):
    """[(name, line style with its legend label, |σ(z)|, where it is exactly 0)], the legend saying where."""
    curves = []
    for name in names:
        mag = np.abs(get_activation(name)(z))
        zero = mag == 0
        style = _activation_style(name)
        if zero.any():
            style["label"] = f"{style['label']}: {_zero_note(z, zero)}"
        curves.append((name, style, mag, zero))
    return curves


def _draw_tails(ax, z, curves):
    """A line per curve, exact zeros masked; returns the positive magnitudes drawn, one array per drawn curve."""
    drawn = []
    for name, style, mag, zero in curves:
        if zero.all():
            # Nothing positive to draw: an empty line keeps the legend entry without
            # handing the log axis an all-zero series (which it warns about).
            line, = ax.plot([], [], linewidth=2, **style)
        else:
            line, = ax.plot(z, np.where(zero, np.nan, mag), linewidth=2, **style)
            drawn.append(mag[~zero])
        line.set_gid(name if isinstance(name, str) else line.get_label())
    return drawn


def _decade_ticks(ax, drawn):
    """Limit the log y axis to the whole decades around the `drawn` magnitudes, ticked at round decades."""
    from matplotlib.ticker import NullLocator

    if drawn:
        lo = math.floor(math.log10(min(float(m.min()) for m in drawn)))
        hi = math.ceil(math.log10(max(float(m.max()) for m in drawn)))
    else:
        lo, hi = -300, 0
    hi = max(hi, lo + 1)
    # Round decades (every 1, 2, 5, 10, 20, 50 or 100) instead of the locator's odd steps like 10^-38.
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 1000) if (hi - lo) / s <= 8)
    lo = max(step * math.floor(lo / step), _LOG10_TINY)
    ax.set_yticks([10.0**e for e in range(step * math.ceil(lo / step), hi + 1, step)])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylim(10.0**lo, 10.0**hi)


# --- the forward pass -------------------------------------------------------


def _node(ax, x, y, text, face, edge, text_colour, gid, width, height, linestyle="-"):
    from matplotlib.patches import FancyBboxPatch

    box = FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                         facecolor=face, edgecolor=edge, linewidth=1.4, linestyle=linestyle, zorder=3)
    box.set_gid(gid)
    ax.add_patch(box)
    label = ax.text(x, y, text, ha="center", va="center", fontsize=10, color=text_colour, zorder=4)
    label.set_gid(gid)
    return box


def _rows(n):
    """Vertical positions of n nodes, centred on 0, top to bottom."""
    return (n - 1) / 2 - np.arange(n)


# The columns of ffn_dataflow, left to right (input x, hidden z and h, output y), and the sizes of their boxes.
_COL_X, _COL_H, _COL_Y = 0.0, 3.2, 6.4
_W_IO, _W_H, _NODE_HEIGHT = 1.25, 1.55, 0.74  # box width of x and y, of a hidden unit; box height


def ffn_dataflow(x, W1, b1, W2, b2, activation="relu", title=None):
    """One token through a small FFN: x (d_model) → z, h (d_ff) → y (d_model).

    Values are printed in the nodes; hidden units with h == 0 are grey, and so
    are their outgoing edges, which carry nothing. Edge colour is the weight's
    sign and width its magnitude. x: (d_model,).
    """
    x, W1, b1, W2, b2 = _dataflow_inputs(x, W1, b1, W2, b2)
    d_model, d_ff = W1.shape
    d_out = W2.shape[1]
    trace = ffn_trace(x, W1, b1, W2, b2, activation=activation)
    name = activation if isinstance(activation, str) else getattr(activation, "__name__", "σ")
    sigma = ACTIVATION_SYMBOLS.get(name, name)
    ys = _dataflow_rows(d_model, d_ff, d_out)
    n_off = int(np.sum(trace.h == 0))
    title = title or f"One token through the FFN: {n_off} of {d_ff} hidden units inactive (grey)"

    def draw_on(fig):
        ax = fig.subplots()
        _dataflow_weights(ax, trace, W1, W2, ys)
        _dataflow_units(ax, trace, ys)
        _dataflow_biases(ax, b1, b2, ys)
        _dataflow_axes(ax, ys, sigma, title)
        key = _dataflow_key(n_off)
        fig.legend(handles=key, loc="outside lower center", ncols=len(key), frameon=False, fontsize=9,
                   handlelength=1.6, columnspacing=1.2)

    rows = max(d_model, d_ff, d_out)
    return _figure((8.4, 1.0 + 0.78 * rows + 1.4), "Diagram", title, _dataflow_alt(trace, sigma, b1, b2), draw_on)


def _dataflow_inputs(x, W1, b1, W2, b2):
    """The FFN's arrays, checked: one token, and a network small enough to draw every unit and edge."""
    x, W1, b1, W2, b2 = check_ffn_shapes(x, W1, b1, W2, b2)
    if x.ndim != 1:
        raise ValueError(f"ffn_dataflow draws one token: x should have shape (d_model,), got {x.shape}")
    d_model, d_ff = W1.shape
    d_out = W2.shape[1]
    if max(d_model, d_out) > MAX_DATAFLOW_D_MODEL or d_ff > MAX_DATAFLOW_D_FF:
        raise ValueError(
            f"ffn_dataflow draws small FFNs (d_model <= {MAX_DATAFLOW_D_MODEL}, d_ff <= {MAX_DATAFLOW_D_FF}), "
            f"got d_model = {d_model}, d_ff = {d_ff}; try shape_trace_table for a large one"
        )
    return x, W1, b1, W2, b2


def _dataflow_rows(d_model, d_ff, d_out):
    """The vertical positions of the input, hidden and output units (hidden ones a little further apart)."""
    return _rows(d_model), 1.08 * _rows(d_ff) if d_ff > 1 else _rows(1), _rows(d_out)


def _dataflow_weights(ax, trace, W1, W2, ys):
    """One line per non-zero weight, from box edge to box edge: colour and style its sign, width its magnitude;
    grey and dotted out of an inactive unit, which sends nothing."""
    y_in, y_hid, y_out = ys
    max_w = max(float(np.abs(W1).max()), float(np.abs(W2).max())) or 1.0
    for W, (c0, w0, ys0), (c1, w1, ys1), layer in (
        (W1, (_COL_X, _W_IO, y_in), (_COL_H, _W_H, y_hid), 1),
        (W2, (_COL_H, _W_H, y_hid), (_COL_Y, _W_IO, y_out), 2),
    ):
        for i, j in np.ndindex(W.shape):
            w = W[i, j]
            if w == 0:
                continue  # a zero weight carries nothing; leaving it out keeps the picture honest
            silent = layer == 2 and trace.h[i] == 0
            ax.plot([c0 + w0 / 2, c1 - w1 / 2], [ys0[i], ys1[j]],
                    color=GREY if silent else (POSITIVE if w > 0 else NEGATIVE),
                    linestyle=":" if silent else "-" if w > 0 else "--", alpha=0.55 if silent else 0.75,
                    linewidth=0.6 + 2.6 * abs(w) / max_w, zorder=1, solid_capstyle="round",
                    gid=f"W{layer}[{i},{j}]")


def _dataflow_units(ax, trace, ys):
    """A box per unit with its values: x, then z and h (grey when h == 0), then y."""
    y_in, y_hid, y_out = ys
    for i in range(trace.x.size):
        _node(ax, _COL_X, y_in[i], f"x[{i}] = {fmt(trace.x[i])}", INPUT_FACE, BLACK, NODE_TEXT, f"x-{i}", _W_IO,
              _NODE_HEIGHT)
    for j in range(trace.h.size):
        inactive = trace.h[j] == 0
        _node(ax, _COL_H, y_hid[j], f"z[{j}] = {fmt(trace.z[j])}\nh[{j}] = {fmt(trace.h[j])}",
              INACTIVE_FACE if inactive else ACTIVE_FACE, GREY if inactive else BLUE,
              INACTIVE_TEXT if inactive else NODE_TEXT, f"hidden-{j}", _W_H, _NODE_HEIGHT, "--" if inactive else "-")
    for k in range(trace.y.size):
        _node(ax, _COL_Y, y_out[k], f"y[{k}] = {fmt(trace.y[k])}", OUTPUT_FACE, ORANGE, NODE_TEXT, f"y-{k}", _W_IO,
              _NODE_HEIGHT)


def _dataflow_biases(ax, b1, b2, ys):
    """Each bias beside the unit it is added to, above its box's left corner: b1[j] to z[j], b2[k] to y[k] (none
    drawn for a layer without one). With them, every unit's value can be rebuilt from the picture."""
    _, y_hid, y_out = ys
    for name, bias, column, width, rows in (("b1", b1, _COL_H, _W_H, y_hid), ("b2", b2, _COL_Y, _W_IO, y_out)):
        if bias is None:
            continue
        for j, value in enumerate(np.ravel(bias)):
            label = ax.text(column - width / 2, rows[j] + _NODE_HEIGHT / 2 + 0.02, f"+ {name}[{j}] = {fmt(value)}",
                            ha="left", va="bottom", fontsize=8, color=NODE_TEXT, zorder=4)
            label.set_gid(f"{name}-{j}")


def _dataflow_axes(ax, ys, sigma, title):
    """The axes as a diagram: one labelled tick per column, no spines, room for every box."""
    y_in, y_hid, y_out = ys
    half = max(y_hid.max(), y_in.max(), y_out.max()) + _NODE_HEIGHT / 2 + 0.15
    ax.set_xlim(_COL_X - _W_IO / 2 - 0.15, _COL_Y + _W_IO / 2 + 0.15)
    ax.set_ylim(-half, half)
    ax.set_xticks([_COL_X, _COL_H, _COL_Y], [f"input x\nd_model = {y_in.size}",
                                             f"hidden: z, h = {sigma}(z)\nd_ff = {y_hid.size}",
                                             f"output y\nd_model = {y_out.size}"])
    ax.set_yticks([])
    ax.tick_params(axis="x", length=0)
    for side in ("left", "right", "top", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("stage of the forward pass: z = x W1 + b1,  h = σ(z),  y = h W2 + b2")
    ax.set_ylabel("units (index from the top)")
    ax.set_title(title)


def _dataflow_key(n_off):
    """The legend's entries; those of inactive units only when there are some."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    key = [Patch(facecolor=ACTIVE_FACE, edgecolor=BLUE, label="active unit")]
    if n_off:
        key.append(Patch(facecolor=INACTIVE_FACE, edgecolor=GREY, linestyle="--", label="inactive (h = 0)"))
    key += [Line2D([], [], color=POSITIVE, linewidth=2, label="weight > 0"),
            Line2D([], [], color=NEGATIVE, linewidth=2, linestyle="--", label="weight < 0")]
    if n_off:
        key.append(Line2D([], [], color=GREY, linewidth=1.5, linestyle=":", label="carries 0 (from h = 0)"))
    return key


def _dataflow_alt(trace, sigma, b1=None, b2=None):
    """The diagram in words: every stage's values, the biases, which units are inactive, how the weights are drawn."""
    off = [j for j in range(trace.h.size) if trace.h[j] == 0]
    biases = "".join(f"; bias {name} = {_values(np.ravel(b), 16)}" for name, b in (("b1", b1), ("b2", b2))
                     if b is not None)
    return (f"One token through an FFN with d_model = {trace.x.size}, d_ff = {trace.h.size}, left to right. "
            f"Input x = {_values(trace.x)}{biases}; pre-activation z = x W1 + b1 = {_values(trace.z, 16)}; "
            f"hidden h = {sigma}(z) = {_values(trace.h, 16)}"
            + (f", {'units' if len(off) > 1 else 'unit'} {', '.join(map(str, off))} inactive" if off
               else ", every unit active")
            + f"; output y = {_values(trace.y)}. Lines are the weights: solid blue positive, "
              "dashed vermilion negative, thicker for larger magnitude.")


def shape_trace(x, W1, b1, W2, b2, activation="relu"):
    """[(stage, shape), ...] for one forward pass: x, x W1, z, h, y; x: (..., d_model)."""
    x, W1, b1, W2, b2 = check_ffn_shapes(x, W1, b1, W2, b2)
    trace = ffn_trace(x, W1, b1, W2, b2, activation=activation)
    return [
        ("x", trace.x.shape),
        ("x @ W1", (x @ W1).shape),
        ("z = x @ W1 + b1", trace.z.shape),
        ("h = σ(z)", trace.h.shape),
        ("y = h @ W2 + b2", trace.y.shape),
    ]


_SHAPE_RE = re.compile(r"^\(\d*(, ?\d+)*,?\)$")


def shape_trace_table(stages, title="Shapes through the FFN"):
    """A table figure of (stage name, shape or array) rows, e.g. from `shape_trace`."""
    rows = []
    for k, entry in enumerate(stages):
        try:
            name, thing = entry
        except (TypeError, ValueError):
            raise ValueError(f"stages[{k}] should be a pair (stage name, shape or array), got {entry!r}") from None
        if isinstance(thing, tuple) and all(isinstance(n, int | np.integer) and n >= 0 for n in thing):
            shape = tuple(int(n) for n in thing)
        elif hasattr(thing, "shape"):
            shape = tuple(thing.shape)
        else:
            raise ValueError(f"stages[{k}] ({name!r}): expected a shape tuple or an array, got {thing!r}")
        rows.append([str(name), str(shape)])
    if not rows:
        raise ValueError("stages is empty; expected at least one (stage name, shape) pair")

    def draw_on(fig):
        ax = fig.subplots()
        ax.set_axis_off()
        table = ax.table(cellText=rows, colLabels=["stage", "shape"], colWidths=[0.62, 0.38], cellLoc="left",
                         bbox=[0.0, 0.0, 1.0, 1.0])
        table.auto_set_font_size(False)
        table.set_fontsize(11)
        for (r, _c), cell in table.get_celld().items():
            cell.set_edgecolor("#BBBBBB")
            if r == 0:
                cell.set_facecolor("#E8E8E8")
                cell.get_text().set_fontweight("bold")
            else:
                cell.get_text().set_fontfamily("monospace")
        ax.set_title(title)

    return _figure((5.6, 0.55 + 0.36 * (len(rows) + 1)), "Table", title,
                   "; ".join(f"{name}: shape {shape}" for name, shape in rows) + ".", draw_on)


# --- budgets and training ---------------------------------------------------


def params_bar(items, title=None, xlabel="parameters"):
    """Horizontal bars of a parameter count per part: `items` maps name -> count (top to bottom)."""
    if not isinstance(items, Mapping) or not items:
        raise ValueError(f"items should be a non-empty mapping name -> parameter count, got {items!r}")
    names, counts = [], []
    for name, count in items.items():
        if isinstance(count, bool) or not isinstance(count, int | np.integer | float | np.floating) \
                or not math.isfinite(count) or count < 0 or count != int(count):
            raise ValueError(f"items[{name!r}] should be a non-negative whole number of parameters, got {count!r}")
        names.append(str(name))
        counts.append(int(count))
    total = sum(counts)
    title = title or f"Where the parameters go: {total:,} in all"

    def draw_on(fig):
        ax = fig.subplots()
        ypos = np.arange(len(names))
        ax.barh(ypos, counts, height=0.6, color=BLUE)
        top = max(counts) or 1
        for yp, c in zip(ypos, counts, strict=True):
            pct = 100 * c / total if total else 0.0
            share = "" if not total else f" ({pct:.1f}%)" if pct >= 1 or pct == 0 else f" ({pct:.2g}%)"
            ax.text(c + 0.01 * top, yp, f"{c:,}{share}", va="center", ha="left", fontsize=10)
        ax.set_yticks(ypos, names)
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.35)
        if top >= 1e9:  # billions written out collide on the axis: 10B, 20B, ...
            ax.xaxis.set_major_formatter(lambda v, _pos: f"{v / 1e9:g}B" if v else "0")
        else:
            ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("part")
        ax.set_title(title)
        ax.grid(axis="x", color="#E6E6E6", linewidth=0.8)
        ax.set_axisbelow(True)

    parts = "; ".join(f"{name}: {c:,}" for name, c in zip(names, counts, strict=True))
    return _figure((8.0, 1.2 + 0.5 * len(names)), "Horizontal bar chart", title,
                   f"{xlabel} per part, {total:,} in all. {parts}.", draw_on)


def _plain_log_ticks(axis):
    """A log axis labelled in plain numbers (0.2, 0.5, 1, 10), not in powers of ten (6×10⁻¹): the powers of ten, and
    2 and 5 times them, between the major ticks."""
    from matplotlib.ticker import FuncFormatter

    def plain(value, _):
        if value <= 0:
            return ""
        mantissa = round(value / 10 ** np.floor(np.log10(value)), 6)
        return f"{value:g}" if mantissa in (1.0, 2.0, 5.0) else ""

    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_formatter(FuncFormatter(plain))


def loss_curves(curves, title="Training loss", xlabel="step", ylabel="loss (log scale)", xticks=None):
    """Loss against step on a log y axis; `curves` maps label -> sequence of losses (> 0; exact 0 is masked).

    `xticks` names the steps 0, 1, ... on the x axis, one label each (e.g. the widths a value was measured at).
    """
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError(f"curves should be a non-empty mapping label -> sequence of losses, got {curves!r}")
    lines = []  # (legend label, losses, where they are exactly 0)
    for label, losses in curves.items():
        loss = as_float(losses, f"curves[{label!r}]")
        if loss.ndim != 1 or loss.size == 0:
            raise ValueError(f"curves[{label!r}] should be a non-empty 1-D sequence of losses, got shape {loss.shape}")
        bad = ~np.isfinite(loss) | (loss < 0)
        if bad.any():
            step = int(np.argmax(bad))
            raise ValueError(f"curves[{label!r}] should hold finite losses >= 0, got {loss[step]} at step {step}")
        zero = loss == 0
        text = str(label) + (f" ({int(zero.sum())} exact zeros not shown on the log axis)" if zero.any() else "")
        lines.append((text, loss, zero))
    steps = max(loss.size for _, loss, _ in lines)
    if xticks is not None:
        xticks = [str(t) for t in xticks]
        if len(xticks) != steps:
            raise ValueError(f"xticks should name each of the {steps} steps, got {len(xticks)} labels: {xticks}")

    def draw_on(fig):
        ax = fig.subplots()
        ax.set_yscale("log")
        styles, markers = ("-", "--", "-.", ":"), "osD^v<>p"
        for k, (text, loss, zero) in enumerate(lines):
            ax.plot(np.arange(loss.size), np.where(zero, np.nan, loss), linewidth=1.8,
                    color=OKABE_ITO[k % len(OKABE_ITO)], linestyle=styles[k % len(styles)],
                    marker=markers[k % len(markers)], markevery=0.1, markersize=4, label=text)
        if xticks is not None:
            ax.set_xticks(range(steps), xticks)
        _plain_log_ticks(ax.yaxis)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(color="#E6E6E6", linewidth=0.8, which="major")
        ax.legend(frameon=False)

    if xticks is None:
        ends = "; ".join(f"{label}: from {fmt(loss[0])} to {fmt(loss[-1])} over {loss.size} {xlabel}s"
                         for label, (_, loss, _) in zip(curves, lines, strict=True))
    else:
        ends = "; ".join(f"{label}: {fmt(loss[0])} at {xticks[0]}, {fmt(loss[-1])} at {xticks[loss.size - 1]}"
                         for label, (_, loss, _) in zip(curves, lines, strict=True))
    return _figure((7.0, 4.2), "Line plot on a log scale", title, f"{ylabel} against {xlabel}, one line per curve "
                   f"(colour and line style differ). {ends}.", draw_on)


# --- low precision ------------------------------------------------------------

FORMAT_STYLES = {
    "float32": dict(color=BLUE, marker="o", linestyle="-", label="float32"),
    "float16": dict(color=BLUISH_GREEN, marker="s", linestyle="-", label="float16 (hidden layer in float32)"),
    "bfloat16": dict(color=VERMILION, marker="^", linestyle="--", label="bfloat16"),
    "int8": dict(color=REDDISH_PURPLE, marker="D", linestyle="-.", label="int8 weights (per column)"),
}


def precision_error_plot(widths, errors, title="FFN output error against float64, by format and width"):
    """Relative error (log scale) against d_model (log scale), one line per format.

    widths: (n,) model widths; errors: mapping format -> (n,) relative errors, each > 0.
    """
    widths = _vector(widths, "widths")
    if np.any(widths <= 0):
        raise ValueError(f"widths should be positive, got {widths.tolist()}")
    if not isinstance(errors, Mapping) or not errors:
        raise ValueError(f"errors should be a non-empty mapping format -> relative errors, got {errors!r}")
    spare = [c for c in OKABE_ITO if c not in {st["color"] for st in FORMAT_STYLES.values()}]
    lines, others = [], 0  # (format, relative errors, line style); formats without a style of their own
    for fmt_name, values in errors.items():
        err = _vector(values, f"errors[{fmt_name!r}]")
        if err.shape != widths.shape or np.any(err <= 0):
            raise ValueError(f"errors[{fmt_name!r}] should hold {widths.size} positive errors (one per width), "
                             f"got {err.tolist()}")
        style = FORMAT_STYLES.get(fmt_name)
        if style is None:  # another format: a colour no named format uses
            style = dict(color=spare[others % len(spare)], marker="o", linestyle=":", label=str(fmt_name))
            others += 1
        lines.append((fmt_name, err, style))

    def draw_on(fig):
        from matplotlib.ticker import NullLocator

        ax = fig.subplots()
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        for fmt_name, err, style in lines:
            line, = ax.plot(widths, err, linewidth=1.8, markersize=6, **style)
            line.set_gid(str(fmt_name))
        ax.set_xticks(widths, [f"{w:g}" for w in widths])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("model width d_model (d_ff = 4·d_model)")
        ax.set_ylabel("relative error ‖y - y₆₄‖ / ‖y₆₄‖ (log scale)")
        ax.set_title(title)
        ax.grid(color="#E6E6E6", linewidth=0.8, which="major")
        ax.legend(frameon=False, loc="center right")

    each = "; ".join(f"{name}: {_values(v)}" for name, v in errors.items())
    return _figure((7.5, 4.5), "Line plot on log scales", title,
                   f"Relative error against d_model = {_values(widths)}, one line per format, each with its own "
                   f"marker. {each}.", draw_on)


# --- mixture of experts -------------------------------------------------------

BAR_HATCHES = ("", "///", "xxx", "...", "\\\\\\", "+++", "ooo", "---")  # a second cue beside each bar's colour


def expert_load(loads, title="How the tokens spread over the experts", xlabel="expert i",
                ylabel="share of tokens f_i"):
    """Grouped bars of the share of tokens each expert receives; `loads` maps label -> shares (E,).

    A dashed line marks the uniform share 1/E. Each label's shares must be >= 0 and sum to 1.
    """
    if not isinstance(loads, Mapping) or not loads:
        raise ValueError(f"loads should be a non-empty mapping label -> shares per expert, got {loads!r}")
    shares = {}
    for label, values in loads.items():
        f = _vector(values, f"loads[{label!r}]")
        if (f < 0).any() or abs(f.sum() - 1.0) > 1e-9:
            raise ValueError(f"loads[{label!r}] should be shares >= 0 that sum to 1, got {f.tolist()}")
        shares[str(label)] = f
    sizes = {f.size for f in shares.values()}
    if len(sizes) != 1:
        raise ValueError(f"every label should give one share per expert, got lengths {sorted(sizes)}")
    (E,) = sizes

    def draw_on(fig):
        ax = fig.subplots()
        width = 0.8 / len(shares)
        for n, (label, f) in enumerate(shares.items()):
            ax.bar(np.arange(E) + (n - (len(shares) - 1) / 2) * width, f, width=width * 0.95,
                   color=OKABE_ITO[n % len(OKABE_ITO)], hatch=BAR_HATCHES[n % len(BAR_HATCHES)], edgecolor="white",
                   linewidth=0.5, label=label, gid=f"load-{n}")
        ax.axhline(1.0 / E, color=BLACK, linestyle="--", linewidth=1.2, label=f"uniform, 1/E = {fmt(1.0 / E)}",
                   gid="uniform")
        ax.set_xticks(np.arange(E))
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(axis="y", color="#E6E6E6", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.legend(frameon=False, loc="upper right")

    each = "; ".join(f"{label}: {_values(f)}" for label, f in shares.items())
    return _figure((8.0, 4.0), "Grouped bar chart", title,
                   f"{ylabel} for each of {E} experts, one bar per label (colour and pattern differ); a dashed "
                   f"line marks the uniform share 1/E = {fmt(1.0 / E)}. {each}.", draw_on)


# --- the FFN as a key-value memory ------------------------------------------


def recall_curves(x, panels, xlabel, title, ylabel="recall", log_x=False):
    """One panel per entry of `panels` (panel title -> {curve label -> recall at each x}), recall in [0, 1].

    The curves of a label keep one colour, marker and line style in every panel, so one legend serves all.
    """
    x = _finite(x, "x")
    if x.ndim != 1:
        raise ValueError(f"x should be a 1-D sequence, got shape {x.shape}")
    recall = _recall_values(x, panels)
    labels = list(dict.fromkeys(label for curves in panels.values() for label in curves))

    def draw_on(fig):
        from matplotlib.lines import Line2D

        axes = np.atleast_1d(fig.subplots(1, len(panels), sharey=True))
        for ax, (panel, curves) in zip(axes, panels.items(), strict=True):
            for label in curves:
                ax.plot(x, recall[panel, label], **_recall_style(labels.index(label)), linewidth=1.8, markersize=5,
                        label=str(label))
            _recall_axes(ax, x, log_x, str(panel), xlabel, ylabel)
        handles = [Line2D([], [], **_recall_style(k), linewidth=1.8, label=str(label))
                   for k, label in enumerate(labels)]
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(labels), 4), frameon=False)
        fig.suptitle(title)

    each = "; ".join(f"{panel}, {label}: {_values(values)}" for panel, curves in panels.items()
                     for label, values in curves.items())
    return _figure((3.6 * len(panels) + 1.0, 3.9), f"{len(panels)} line plot{'s' if len(panels) > 1 else ''}",
                   title, f"{ylabel} against {xlabel} = {_values(x)}, one line per label (colour, marker and line "
                   f"style differ). {each}.", draw_on)


def _recall_values(x, panels):
    """{(panel, label): recall at each x}, each checked to be one value in [0, 1] per x."""
    if not isinstance(panels, Mapping) or not panels or not all(
            isinstance(c, Mapping) and c for c in panels.values()):
        raise ValueError(f"panels should be a non-empty mapping panel title -> non-empty mapping "
                         f"label -> values, got {panels!r}")
    recall = {}
    for panel, curves in panels.items():
        for label, values in curves.items():
            y = _finite(values, f"panels[{panel!r}][{label!r}]")
            if y.shape != x.shape or y.min() < 0 or y.max() > 1:
                raise ValueError(f"panels[{panel!r}][{label!r}] should hold {x.size} values in [0, 1], "
                                 f"got shape {y.shape} with range [{y.min():g}, {y.max():g}]")
            recall[panel, label] = y
    return recall


def _recall_style(k):
    """The colour, marker and line style of the k-th label, the same in every panel and in the legend."""
    markers, styles = "osD^v", ("-", "--", "-.", ":")
    return dict(color=OKABE_ITO[k % len(OKABE_ITO)], marker=markers[k % len(markers)],
                linestyle=styles[k % len(styles)])


def _recall_axes(ax, x, log_x, panel, xlabel, ylabel):
    """One panel's axes: recall from 0 to 1; on a log x axis, ticks at the sizes tried only."""
    from matplotlib.ticker import NullLocator

    if log_x:
        ax.set_xscale("log", base=2)
        ax.set_xticks(x)  # the sizes tried, and only those, as plain numbers
        ax.xaxis.set_major_formatter(lambda v, _pos: f"{v:g}")
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(panel)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.tick_params(labelleft=True)
    ax.grid(color="#E6E6E6", linewidth=0.8)
