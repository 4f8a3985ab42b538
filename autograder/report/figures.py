"""The class report's figures: matplotlib `Figure`s turned into embedded PNGs with alt text.

Each function returns an `Image` (a base64 PNG and the alt text that says what it
shows in words, numbers included), so the HTML needs no file and no network. The
colours are the course's Okabe–Ito palette (ffn_helpers.plots); the partial and
zero bars also carry hatching, so the figure still reads in greyscale.
"""

import base64
import io
from dataclasses import dataclass, field

from matplotlib import patheffects, rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from ffn_helpers.plots import BLACK, BLUE, SKY_BLUE, VERMILION

FULL, PARTIAL, ZERO = BLUE, SKY_BLUE, VERMILION
_STYLE = {
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_DPI = 100
MAX_BARS = 40  # one bar per possible score up to this many; wider ranges are binned


@dataclass(frozen=True)
class Image:
    png_base64: str
    alt: str
    width: int  # pixels
    height: int
    figure: Figure = field(repr=False, compare=False, default=None)  # kept for tests to inspect


def _png(fig, alt):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    width, height = (round(v * _DPI) for v in fig.get_size_inches())
    return Image(base64.b64encode(buf.getvalue()).decode("ascii"), alt, width, height, fig)


def _fmt(v):
    return f"{v:.3g}" if v != int(v) else str(int(v))


def _score_bins(scores, max_score):
    """(bar centres, counts, bar width): one bar per possible score when the scores fall on a coarse grid."""
    for step in (1.0, 0.5, 0.25):
        if max_score / step <= MAX_BARS and all(abs(s / step - round(s / step)) < 1e-9 for s in scores):
            n = round(max_score / step)
            counts = [0] * (n + 1)
            for s in scores:
                counts[min(max(round(s / step), 0), n)] += 1
            return [i * step for i in range(n + 1)], counts, step * 0.8
    n = 20
    width = max_score / n
    counts = [0] * n
    for s in scores:
        counts[min(max(int(s / width), 0), n - 1)] += 1
    return [(i + 0.5) * width for i in range(n)], counts, width * 0.95


def score_histogram(assignment, scores, max_score, mean, median, full_share):
    """Histogram of total scores, with the mean and median marked."""
    centres, counts, width = _score_bins(scores, max_score)
    with rc_context(_STYLE):
        fig = Figure(figsize=(7.2, 3.6), layout="constrained")
        ax = fig.subplots()
        ax.bar(centres, counts, width=width, color=BLUE, edgecolor="white", linewidth=0.5, label="students")
        halo = [patheffects.withStroke(linewidth=4, foreground="white")]  # visible over a bar too
        ax.axvline(mean, color=BLACK, linestyle="--", linewidth=1.6, label=f"mean {mean:.2f}", path_effects=halo)
        ax.axvline(median, color=VERMILION, linestyle=":", linewidth=2.2, label=f"median {_fmt(median)}",
                   path_effects=halo)
        ax.set_xlim(-width, max_score + width)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"total score (points out of {_fmt(max_score)})")
        ax.set_ylabel("number of students")
        fig.suptitle(f"{assignment}: score distribution ({len(scores)} students, {full_share:.0%} at full marks)")
        fig.legend(loc="outside lower center", ncols=3, frameon=False)
    bars = "; ".join(f"{_fmt(c)}: {n}" for c, n in zip(centres, counts, strict=True) if n)
    alt = (f"Histogram of the total scores of {len(scores)} students in {assignment}, out of {_fmt(max_score)} "
           f"points. Mean {mean:.2f}, median {_fmt(median)}, {full_share:.0%} at full marks. "
           f"Students per score: {bars}.")
    return _png(fig, alt)


def exercise_bars(assignment, exercises):
    """Stacked horizontal bars: each exercise's share of full, partial and zero credit, hardest at the top.

    `exercises`: [(name, full, partial, zero)] counts, hardest first.
    """
    names = [e[0] for e in exercises]
    totals = [max(sum(e[1:]), 1) for e in exercises]
    shares = [[e[k] / t for e, t in zip(exercises, totals, strict=True)] for k in (1, 2, 3)]
    with rc_context(_STYLE):
        fig = Figure(figsize=(7.2, 0.9 + 0.45 * len(names)), layout="constrained")
        ax = fig.subplots()
        y = list(range(len(names)))
        left = [0.0] * len(names)
        for share, colour, hatch, label in zip(shares, (FULL, PARTIAL, ZERO), ("", "//", "xx"),
                                               ("full credit", "partial credit", "zero credit"), strict=True):
            ax.barh(y, share, left=left, color=colour, hatch=hatch, edgecolor="white", linewidth=0.5, label=label)
            for yi, (l, s) in enumerate(zip(left, share, strict=True)):
                if s >= 0.08:  # a plain patch behind the number keeps it legible on the hatching
                    ax.text(l + s / 2, yi, f"{s:.0%}", ha="center", va="center", fontsize=8.5,
                            color="white" if colour == FULL else BLACK,  # 4.5 : 1 at least (tests/test_palettes.py)
                            bbox=dict(facecolor=colour, edgecolor="none", pad=1.5))
            left = [a + b for a, b in zip(left, share, strict=True)]
        ax.set_yticks(y, names)
        ax.invert_yaxis()  # hardest first, at the top
        ax.set_xlim(0, 1)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_xlabel("share of the students with a graded notebook")
        ax.set_ylabel("exercise (hardest first)")
        fig.suptitle(f"{assignment}: credit per exercise (hardest first)")
        fig.legend(loc="outside lower center", ncols=3, frameon=False)
    parts = "; ".join(f"{e[0]}: {f:.0%} full, {p:.0%} partial, {z:.0%} zero"
                      for e, f, p, z in zip(exercises, *shares, strict=True))
    alt = (f"Stacked bar chart of the credit per exercise in {assignment}, hardest exercise first, each bar the "
           f"share of students with full, partial and zero credit. {parts}.")
    return _png(fig, alt)


def mistake_bars(assignment, rows):
    """Horizontal bars: how many students each named misconception was found in. rows: [(label, count)]."""
    with rc_context(_STYLE):
        fig = Figure(figsize=(7.2, 0.9 + 0.4 * len(rows)), layout="constrained")
        ax = fig.subplots()
        y = list(range(len(rows)))
        counts = [n for _, n in rows]
        ax.barh(y, counts, color=VERMILION, edgecolor="white")
        for yi, n in enumerate(counts):
            ax.text(n, yi, f" {n}", va="center", fontsize=9)
        ax.set_yticks(y, [label for label, _ in rows])
        ax.invert_yaxis()
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlim(0, max(counts) * 1.12 + 0.5)
        ax.set_xlabel("number of students whose failure names it")
        ax.set_ylabel("exercise: misconception")
        fig.suptitle(f"{assignment}: misconceptions named by the diagnosis")
    parts = "; ".join(f"{label}: {n}" for label, n in rows)
    alt = f"Bar chart of the misconceptions the diagnosis named in {assignment}, most common first. {parts}."
    return _png(fig, alt)
