r"""The FFN as a key-value memory: recall against a size or threshold, one panel per setting."""

from collections.abc import Mapping

import numpy as np

from .._palette import OKABE_ITO
from .figure import _figure, _finite, _values


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
