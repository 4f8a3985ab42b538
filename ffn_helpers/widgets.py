"""An interactive FFN: one token through a small network, one stage at a time.

    view = interactive_ffn(ex.W_2.x, *ex.W_2.params)

In JupyterLab it is an ipywidgets view with Step / Back / Reset buttons and a
labelled number box per input value (arrow keys step it); each stage (input → pre-activation z → ReLU h →
output y) shows its numbers, inactive hidden units greyed. Where no widget
front end renders it (nbconvert, a console), the same output carries a static
figure of the final stage, so nothing fails. `ffn_helpers` imports this
module on first use only, and the view (`_interactive`, with ipywidgets and
matplotlib) when one is made: in a graded run (plots.FIGURES_ENV) the view is
its text alternative, and neither is imported unless code asks the view for more.
"""

import html

import numpy as np

from .ffn import ffn_trace
from .plots import INACTIVE_FACE, INACTIVE_TEXT, DescribedFigure, drawn_as_text, ffn_dataflow

STAGES = ("input x", "pre-activation z = x W1 + b1", "hidden h = ReLU(z)", "output y = h W2 + b2")


def _fmt(v):
    return f"{v:.6g}".replace("-", "−")  # a real minus sign reads better and is what a person sees


def stage_table_html(trace, stage):
    """The HTML table of every stage up to `stage` (0..3), inactive hidden units greyed."""
    rows = []
    for k, (label, values) in enumerate(zip(STAGES, (trace.x, trace.z, trace.h, trace.y), strict=True)):
        if k > stage:
            break
        cells = []
        for i, v in enumerate(np.ravel(values)):
            inactive = k in (1, 2) and trace.h.ravel()[i] == 0.0
            cls = "ffn-value ffn-inactive" if inactive else "ffn-value"
            style = f"color:{INACTIVE_TEXT};background:{INACTIVE_FACE};" if inactive else ""
            cells.append(f'<td class="{cls}" data-stage="{k}" data-index="{i}" '
                         f'style="padding:2px 8px;text-align:right;{style}">{_fmt(v)}</td>')
        head = f'<th scope="row" style="text-align:left;padding-right:12px">{html.escape(label)}</th>'
        rows.append(f'<tr>{head}{"".join(cells)}</tr>')
    return f'<table class="ffn-stages">{"".join(rows)}</table>'


def interactive_ffn(x, W1, b1, W2, b2, value_range=(-2.0, 2.0), step=0.05):
    """An interactive view of one token x: (d_model,) through the ReLU FFN (W1, b1, W2, b2).

    Returns the ipywidgets view, an `InteractiveFFN` (in a graded run, a `plots.DescribedFigure` of it).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"interactive_ffn shows one token: x should have shape (d_model,), got {x.shape}")
    ffn_trace(x, W1, b1, W2, b2)  # validate shapes now, with the usual messages

    def build():
        from ._interactive import InteractiveFFN

        return InteractiveFFN(x, (W1, b1, W2, b2), value_range, step)

    if drawn_as_text():  # the widget's model would live only in the grader's kernel, gone when anyone reads it
        return DescribedFigure(ffn_dataflow(x, W1, b1, W2, b2).alt, build)
    return build()


def __getattr__(name):
    if name == "InteractiveFFN":
        from ._interactive import InteractiveFFN

        return InteractiveFFN
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
