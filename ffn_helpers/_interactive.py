"""The interactive FFN's ipywidgets view (see `widgets`, which imports this module when a view is made).

It takes the stage table from `_stage_table`, not from `widgets`, so that the import goes one way only.
"""

import base64
import html
import io

import ipywidgets as widgets
import numpy as np

from ._display import as_text, drawn_as_text, image_bundle
from ._stage_table import STAGES, stage_table_html
from .ffn import ffn_trace
from .plots import ffn_dataflow


def _static_png(x, params):
    """The data-flow figure of the final stage as base64 PNG, as Jupyter's image/png wants, and its alt text."""
    buffer = io.BytesIO()
    figure = ffn_dataflow(x, *params)
    figure.savefig(buffer, format="png", dpi=80)
    return base64.b64encode(buffer.getvalue()).decode("ascii"), figure.alt


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
        png, alt = _static_png(self.x, self.params)
        image, metadata = image_bundle(png, alt)
        data.update(image)
        return data, metadata

