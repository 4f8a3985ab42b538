r"""Where the parameters go: one bar per part of a model, with its count and share."""

import math
from collections.abc import Mapping

import numpy as np

from .._palette import BLUE
from .figure import _figure


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
