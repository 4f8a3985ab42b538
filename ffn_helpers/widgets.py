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

import numpy as np

from ._display import drawn_as_text
from ._stage_table import STAGES, stage_table_html  # noqa: F401 (widgets' API)
from .ffn import ffn_trace
from .plots import DescribedFigure, ffn_dataflow


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
