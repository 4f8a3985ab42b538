r"""Pre-activations z and h = ReLU(z), by sign: bars of one token's units, and a histogram of many.

Colour is never the only cue: negative bars are hatched, exact zeros dotted, and every value is in the text
alternative.
"""

import math

import numpy as np

from .._palette import BLACK, INACTIVE_TEXT, NEGATIVE, NODE_TEXT, POSITIVE, ZERO
from ..activations import relu
from .figure import _figure, _finite, _values, _vector, fmt

# preactivation_bars prints each bar's value up to this many units per panel.
MAX_LABELLED_BARS = 16

# Colour is not the only cue: negative bars (and the key's exact zeros) are also hatched.
NEGATIVE_HATCH = "///"
ZERO_HATCH = "..."


def _sign_colours(values):
    return [POSITIVE if v > 0 else NEGATIVE if v < 0 else ZERO for v in values]


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
