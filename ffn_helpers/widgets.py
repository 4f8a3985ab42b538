"""An interactive FFN: one token through a small network, one stage at a time.

    view = interactive_ffn(ex.W_2.x, *ex.W_2.params)

In JupyterLab it is an ipywidgets view with Step / Back / Reset buttons and a
labelled number box per input value (arrow keys step it); each stage (input → pre-activation z → ReLU h →
output y) shows its numbers, inactive hidden units greyed. Where no widget
front end renders it (nbconvert, a console), the same output carries a static
figure of the final stage, so nothing fails. `ffn_helpers` imports this
module (and so ipywidgets and matplotlib) on first use only.
"""

import base64
import html
import io

import ipywidgets as widgets
import numpy as np

from .ffn import ffn_trace
from .plots import INACTIVE_FACE, INACTIVE_TEXT, as_text, drawn_as_text, ffn_dataflow, image_html

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


def _static_png(x, params):
    """The data-flow figure of the final stage as base64 PNG, as Jupyter's image/png wants, and its alt text."""
    buffer = io.BytesIO()
    figure = ffn_dataflow(x, *params)
    figure.savefig(buffer, format="png", dpi=80)
    return base64.b64encode(buffer.getvalue()).decode("ascii"), figure.alt


def interactive_ffn(x, W1, b1, W2, b2, value_range=(-2.0, 2.0), step=0.05):
    """An interactive view of one token x: (d_model,) through the ReLU FFN (W1, b1, W2, b2).

    Returns the ipywidgets view, an `InteractiveFFN`.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"interactive_ffn shows one token: x should have shape (d_model,), got {x.shape}")
    ffn_trace(x, W1, b1, W2, b2)  # validate shapes now, with the usual messages
    return InteractiveFFN(x, (W1, b1, W2, b2), value_range, step)


class InteractiveFFN(widgets.VBox):
    """The widget; `trace` and `stage` hold exactly what is shown."""

    def __init__(self, x, params, value_range, step):
        super().__init__()
        self.params, self.x0, self.stage = params, x.copy(), 0
        # Number boxes, not sliders: ipywidgets ties a number box's description to it as its <label>, while a
        # slider's handle has no accessible name a screen reader could read (axe: aria-input-field-name).
        self.inputs = [
            widgets.BoundedFloatText(value=float(v), min=min(value_range[0], float(v)),
                                     max=max(value_range[1], float(v)), step=step, description=f"x[{i}]",
                                     continuous_update=False, layout={"width": "11em"})
            for i, v in enumerate(x)
        ]
        self.step_button = widgets.Button(description="Step", icon="forward", tooltip="show the next stage")
        self.back_button = widgets.Button(description="Back", icon="backward", tooltip="hide the last stage")
        self.reset_button = widgets.Button(description="Reset", icon="undo", tooltip="first stage, inputs as given")
        self.stage_label = widgets.HTML()
        self.table = widgets.HTML()
        self.step_button.on_click(lambda _: self.go(self.stage + 1))
        self.back_button.on_click(lambda _: self.go(self.stage - 1))
        self.reset_button.on_click(lambda _: self.reset())
        for s in self.inputs:
            s.observe(lambda _: self.refresh(), names="value")
        buttons = widgets.HBox([self.back_button, self.step_button, self.reset_button])
        self.children = [widgets.HBox(self.inputs, layout={"flex_flow": "row wrap"}),
                         buttons, self.stage_label, self.table]
        self.add_class("ffn-interactive")
        self.refresh()

    @property
    def x(self):
        return np.array([s.value for s in self.inputs], dtype=np.float64)

    def go(self, stage):
        self.stage = int(np.clip(stage, 0, len(STAGES) - 1))
        self.refresh()

    def reset(self):
        with self.hold_trait_notifications():
            for s, v in zip(self.inputs, self.x0, strict=True):
                s.value = float(v)
        self.go(0)

    def refresh(self):
        self.trace = ffn_trace(self.x, *self.params)
        self.stage_label.value = (f'<b class="ffn-stage-name">Stage {self.stage + 1} of {len(STAGES)}: '
                                  f"{html.escape(STAGES[self.stage])}</b>")
        self.table.value = stage_table_html(self.trace, self.stage)
        self.back_button.disabled = self.stage == 0
        self.step_button.disabled = self.stage == len(STAGES) - 1

    def _repr_mimebundle_(self, **kwargs):
        # Add a static picture of the final stage: front ends without the
        # widget renderer (nbconvert's HTML, a console) show that instead.
        data = super()._repr_mimebundle_(**kwargs)
        if drawn_as_text():
            return {**data, **as_text(ffn_dataflow(self.x, *self.params).alt)}
        data["image/png"], alt = _static_png(self.x, self.params)
        data["text/html"] = image_html(data["image/png"], alt)
        return data, {"image/png": {"alt": alt}}

