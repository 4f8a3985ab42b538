r"""Loss curves: loss against step on a log axis labelled in plain numbers, one line per run."""

from collections.abc import Mapping

import numpy as np

from .._arrays import as_float
from .._palette import OKABE_ITO
from .figure import _figure, fmt


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
