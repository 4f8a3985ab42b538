"""The interactive FFN view: its stages show exactly what ffn_forward computes (W-2)."""

import base64
import html
import re

import numpy as np
import pytest

from ffn_helpers import examples as ex
from ffn_helpers import ffn_forward, ffn_trace, plots
from ffn_helpers.widgets import STAGES, interactive_ffn, stage_table_html

W2 = ex.W_2


def shown(view, stage):
    """The numbers the table shows for one stage, parsed back from its HTML."""
    cells = re.findall(rf'data-stage="{stage}" data-index="\d+"[^>]*>([^<]+)<', view.table.value)
    return np.array([float(c.replace("−", "-")) for c in cells])


def test_step_walks_w2_from_input_to_output_with_the_spec_numbers():
    view = interactive_ffn(W2.x, *W2.params)
    assert view.stage == 0 and view.back_button.disabled
    for _ in range(len(STAGES) - 1):
        view.step_button.click()
    assert view.stage == 3 and view.step_button.disabled
    np.testing.assert_allclose(shown(view, 1), [0.94, -0.62, 0.55, 0.96], rtol=0, atol=5e-7)
    np.testing.assert_allclose(shown(view, 2), [0.94, 0, 0.55, 0.96], rtol=0, atol=5e-7)
    np.testing.assert_allclose(shown(view, 3), [0.453, -0.512, 0.698], rtol=0, atol=5e-7)
    # what the view holds is ffn_forward's result exactly, not a re-implementation
    np.testing.assert_array_equal(view.trace.y, ffn_forward(W2.x, *W2.params))


def test_inactive_hidden_unit_is_greyed_in_pre_activation_and_hidden_rows():
    html = stage_table_html(ffn_trace(W2.x, *W2.params), 3)
    inactive = re.findall(r'class="ffn-value ffn-inactive" data-stage="(\d)" data-index="(\d+)"', html)
    assert sorted(inactive) == [("1", "1"), ("2", "1")]  # unit 1: z = -0.62, ReLU gives 0


def test_back_and_reset():
    view = interactive_ffn(W2.x, *W2.params)
    view.back_button.click()
    assert view.stage == 0
    view.step_button.click()
    view.step_button.click()
    view.back_button.click()
    assert view.stage == 1 and 'data-stage="2"' not in view.table.value
    view.inputs[0].value = -1.0
    assert view.trace.x[0] == -1.0
    view.reset_button.click()
    assert view.stage == 0 and view.trace.x.tolist() == W2.x.tolist()


def test_changing_an_input_recomputes_every_stage_with_the_reference():
    view = interactive_ffn(W2.x, *W2.params)
    view.go(3)
    view.inputs[1].value = 1.5
    x = np.array([1.0, 1.5, 0.8])
    np.testing.assert_array_equal(view.trace.y, ffn_forward(x, *W2.params))
    np.testing.assert_allclose(shown(view, 3), ffn_forward(x, *W2.params), rtol=1e-5)


def test_without_a_widget_front_end_the_output_carries_a_static_png(monkeypatch):
    bundle, metadata = interactive_ffn(W2.x, *W2.params)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # its text alternative, in the <img> that JupyterLab and nbconvert show, which holds the PNG, once
    alt = plots.ffn_dataflow(W2.x, *W2.params).alt
    assert alt.startswith("Diagram: One token through the FFN") and "x = [1, -0.5, 0.8]" in alt
    png = re.match(f'<img alt="{re.escape(html.escape(alt))}" src="data:image/png;base64,([^"]+)">',
                   bundle["text/html"])[1]
    assert base64.b64decode(png).startswith(b"\x89PNG") and "image/png" not in bundle and metadata == {}
    monkeypatch.setenv(plots.FIGURES_ENV, "png")  # where the grader draws: the image/png too, its alt in metadata
    bundle, metadata = interactive_ffn(W2.x, *W2.params)._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG") and metadata["image/png"]["alt"] == alt


def test_in_a_graded_run_the_view_is_its_text_alternative(monkeypatch):
    """No widget: its model would live in the grader's kernel only, gone when anyone reads the graded notebook."""
    from IPython.core.formatters import DisplayFormatter

    from ffn_helpers import _course_figure, plots

    monkeypatch.setenv(plots.FIGURES_ENV, "text")
    monkeypatch.setattr(_course_figure, "draw", lambda *a, **k: pytest.fail("a figure was drawn in text mode"))
    view = interactive_ffn(W2.x, *W2.params)
    alt = plots.ffn_dataflow(W2.x, *W2.params).alt
    assert alt.startswith("Diagram: One token through the FFN") and "x = [1, -0.5, 0.8]" in alt
    assert DisplayFormatter().format(view) == ({"text/plain": f"[Figure (not drawn while grading): {alt}]"}, {})
    # code that uses the view gets the widget itself
    np.testing.assert_array_equal(view.trace.y, ffn_forward(W2.x, *W2.params))
    assert type(view.figure).__name__ == "InteractiveFFN"


def test_one_token_only():
    with pytest.raises(ValueError, match=r"shape \(d_model,\)"):
        interactive_ffn(np.zeros((2, 3)), *W2.params)
    with pytest.raises(ValueError, match="W1 should have shape"):
        interactive_ffn(np.zeros(4), *W2.params)
