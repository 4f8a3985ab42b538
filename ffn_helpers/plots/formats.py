r"""Low precision: the FFN's output error against float64, by number format and model width."""

from collections.abc import Mapping

import numpy as np

from .._palette import BLUE, BLUISH_GREEN, OKABE_ITO, REDDISH_PURPLE, VERMILION
from .figure import _figure, _values, _vector

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
