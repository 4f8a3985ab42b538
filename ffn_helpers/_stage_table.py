"""The interactive FFN's stages and their HTML table, shared by `widgets` and its ipywidgets view `_interactive`.

Below both (neither imports the other's module for it); it imports neither matplotlib nor ipywidgets.
"""

import html

import numpy as np

from ._palette import INACTIVE_FACE, INACTIVE_TEXT

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
