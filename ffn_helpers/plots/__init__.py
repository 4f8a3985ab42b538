r"""The course's figures, as matplotlib `Figure` objects: `plots.<function>(...)` in a notebook.

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

One module per family of figures; this package gives their functions under one name:

    figure.py          what every function returns (DescribedFigure), custom_figure, fmt
    preactivations.py  z and ReLU(z) by sign: preactivation_bars, preactivation_histogram
    sigma.py           the activation functions: activation_curves, tails_plot
    forward.py         the forward pass: ffn_dataflow, shape_trace, shape_trace_table
    params.py          where the parameters go: params_bar
    losses.py          training: loss_curves
    formats.py         low precision: precision_error_plot
    experts.py         mixture of experts: expert_load
    recall.py          the FFN as a key-value memory: recall_curves
"""

from .._display import FIGURES_ENV, MAX_ALT_CHARS, as_text, drawn_as_text, image_html
from .._palette import (
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
from .experts import BAR_HATCHES, expert_load
from .figure import DescribedFigure, custom_figure, fmt
from .formats import FORMAT_STYLES, precision_error_plot
from .forward import (
    ACTIVATION_SYMBOLS,
    MAX_DATAFLOW_D_FF,
    MAX_DATAFLOW_D_MODEL,
    ffn_dataflow,
    shape_trace,
    shape_trace_table,
)
from .losses import loss_curves
from .params import params_bar
from .preactivations import MAX_LABELLED_BARS, NEGATIVE_HATCH, ZERO_HATCH, preactivation_bars, preactivation_histogram
from .recall import recall_curves
from .sigma import ACTIVATION_STYLES, activation_curves, tails_plot

__all__ = [
    # the figures
    "activation_curves", "custom_figure", "expert_load", "ffn_dataflow", "loss_curves", "params_bar",
    "precision_error_plot", "preactivation_bars", "preactivation_histogram", "recall_curves", "shape_trace",
    "shape_trace_table", "tails_plot",
    # what they return, how they print numbers, and how a graded run shows them
    "DescribedFigure", "fmt", "FIGURES_ENV", "MAX_ALT_CHARS", "as_text", "drawn_as_text", "image_html",
    # their styles and limits
    "ACTIVATION_STYLES", "ACTIVATION_SYMBOLS", "BAR_HATCHES", "FORMAT_STYLES", "MAX_DATAFLOW_D_FF",
    "MAX_DATAFLOW_D_MODEL", "MAX_LABELLED_BARS", "NEGATIVE_HATCH", "ZERO_HATCH",
    # the palette: every colour is plots.<NAME>
    "ACTIVE_FACE", "BLACK", "BLUE", "BLUISH_GREEN", "GREY", "INACTIVE_FACE", "INACTIVE_TEXT", "INPUT_FACE",
    "NEGATIVE", "NODE_TEXT", "OKABE_ITO", "ORANGE", "OUTPUT_FACE", "POSITIVE", "REDDISH_PURPLE", "SKY_BLUE",
    "VERMILION", "YELLOW", "ZERO",
]


def __getattr__(name):
    if name == "CourseFigure":  # importing it imports matplotlib: only when code asks for the class itself
        from .._course_figure import CourseFigure

        return CourseFigure
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
