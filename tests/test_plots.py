"""The course's figures: each renders headless to PNG, and shows what it claims.

The assertions read the figures' artists (bar colours, node face colours, line
data, legend text), so a figure that draws the wrong thing fails here.
Any warning while building or rendering a figure is an error.
"""

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from course_figures import FIGURES, random_z  # tests/ is on sys.path (tests/conftest.py)
from matplotlib.colors import same_color, to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch
from matplotlib.text import Text

from ffn_helpers import examples as ex
from ffn_helpers import ffn_param_count, ffn_trace, get_activation, plots

pytestmark = pytest.mark.filterwarnings("error")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _render(fig, tmp_path, name):
    path = tmp_path / (re.sub(r"\W+", "_", name) + ".png")
    fig.savefig(path)
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE), f"{path.name} is not a PNG"
    return data


def _legend_texts(fig):
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [t.get_text() for legend in legends for t in legend.get_texts()]


def _by_gid(fig, kind):
    return {a.get_gid(): a for ax in fig.axes for a in ax.findobj(kind) if a.get_gid()}


# --- every figure -----------------------------------------------------------


@pytest.mark.parametrize("name", FIGURES)
def test_figure_renders_to_png_with_title_and_labelled_axes(name, tmp_path):
    fig = FIGURES[name]()
    assert isinstance(fig, Figure)
    _render(fig, tmp_path, name)
    assert fig.axes, f"{name} has no axes"
    for ax in fig.axes:
        assert ax.get_title().strip(), f"{name}: an axes has no title"
        if ax.axison:  # a table's axes is switched off: its column headers label it
            assert ax.get_xlabel().strip(), f"{name}: axes {ax.get_title()!r} has no x label"
            assert ax.get_ylabel().strip(), f"{name}: axes {ax.get_title()!r} has no y label"


def _png_of(fig):
    """The PNG a course figure shows in a notebook: inside the <img> of its HTML output."""
    import base64

    data, _ = fig._repr_mimebundle_()
    return base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', data["text/html"])[1])


def test_figure_shows_itself_as_png_in_jupyter():
    # IPython asks a cell's last value for its bundle; this works even when pyplot was never imported.
    fig = plots.preactivation_bars(ex.W_2.z)
    png = _png_of(fig)
    assert png.startswith(PNG_SIGNATURE)
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert 400 < width < 1400 and 200 < height < 900, (width, height)  # readable, and fits a notebook column


def test_building_a_figure_leaves_rcparams_alone():
    # "backend" is left out: reading it makes matplotlib resolve (and record) a backend.
    def settings():
        return {k: matplotlib.rcParams[k] for k in matplotlib.rcParams if k != "backend"}

    before = settings()
    plots.preactivation_bars(ex.W_2.z)
    plots.tails_plot()
    assert settings() == before


def test_import_ffn_helpers_does_not_import_matplotlib():
    code = "import sys, ffn_helpers; assert 'matplotlib' not in sys.modules, 'matplotlib was imported'"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)


def test_figures_never_touch_pyplot_so_nothing_is_shown():
    # pyplot owns show() and the global figure list; if it is never imported, neither can be used.
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import ffn_helpers\n"
        "from tests.course_figures import FIGURES\n"
        "figs = [build() for build in FIGURES.values()]\n"
        "figs[0]._repr_mimebundle_()  # rendering takes the same path for every figure\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot was imported'\n"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


# --- preactivation_bars -----------------------------------------------------


def test_preactivation_bars_colour_by_sign():
    z = np.array([1.5, -0.7, 0.0, -0.0, 2.0, -3.0])
    fig = plots.preactivation_bars(z)
    ax_z, ax_h = fig.axes
    expected_z = [plots.POSITIVE, plots.NEGATIVE, plots.ZERO, plots.ZERO, plots.POSITIVE, plots.NEGATIVE]
    expected_h = [plots.POSITIVE, plots.ZERO, plots.ZERO, plots.ZERO, plots.POSITIVE, plots.ZERO]
    for ax, values, colours in ((ax_z, z, expected_z), (ax_h, np.maximum(z, 0), expected_h)):
        bars = ax.containers[0]
        assert [b.get_height() for b in bars] == values.tolist()
        for j, (bar, colour) in enumerate(zip(bars, colours, strict=True)):
            assert same_color(bar.get_facecolor(), colour), f"{ax.get_title()}: bar {j} ({values[j]})"
    assert len({plots.POSITIVE, plots.NEGATIVE, plots.ZERO}) == 3


def test_preactivation_bars_w2_labels_values():
    fig = plots.preactivation_bars(ex.W_2.z)
    ax_z, ax_h = fig.axes
    assert same_color(ax_z.containers[0][1].get_facecolor(), plots.NEGATIVE)
    assert same_color(ax_h.containers[0][1].get_facecolor(), plots.ZERO)
    texts_z = [t.get_text() for t in ax_z.texts]
    texts_h = [t.get_text() for t in ax_h.texts]
    assert texts_z == ["0.94", "-0.62", "0.55", "0.96"]
    assert texts_h == ["0.94", "0", "0.55", "0.96"]


def test_preactivation_bars_rejects_mismatched_h():
    with pytest.raises(ValueError, match=r"h should have the shape of z, \(4,\), got \(3,\)"):
        plots.preactivation_bars(ex.W_2.z, h=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="1-D"):
        plots.preactivation_bars(np.ones((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        plots.preactivation_bars([1.0, np.nan])


# --- ffn_dataflow -----------------------------------------------------------


def _hidden_nodes(fig):
    patches = _by_gid(fig, FancyBboxPatch)
    texts = _by_gid(fig, Text)
    d_ff = sum(1 for gid in patches if gid.startswith("hidden-"))
    return [patches[f"hidden-{j}"] for j in range(d_ff)], [texts[f"hidden-{j}"] for j in range(d_ff)]


@pytest.mark.parametrize(("example", "inactive"), [(ex.W_2, {1}), (ex.W_3, {1, 2})])
def test_ffn_dataflow_greys_inactive_hidden_units(example, inactive):
    trace = ffn_trace(example.x, *example.params)
    assert set(np.flatnonzero(trace.h == 0)) == inactive  # the example is what the test assumes
    fig = plots.ffn_dataflow(example.x, *example.params)
    boxes, labels = _hidden_nodes(fig)
    assert len(boxes) == example.W1.shape[1]
    for j, (box, label) in enumerate(zip(boxes, labels, strict=True)):
        face, text = (plots.INACTIVE_FACE, plots.INACTIVE_TEXT) if j in inactive else (plots.ACTIVE_FACE,
                                                                                       plots.NODE_TEXT)
        assert same_color(box.get_facecolor(), face), f"hidden unit {j}: face {box.get_facecolor()}"
        assert same_color(label.get_color(), text), f"hidden unit {j}: label colour {label.get_color()}"
        assert label.get_text() == f"z[{j}] = {plots.fmt(example.z[j])}\nh[{j}] = {plots.fmt(example.h[j])}"
    assert not same_color(plots.INACTIVE_FACE, plots.ACTIVE_FACE)
    # Edges leaving an inactive unit are grey; the others carry their weight's sign.
    lines = _by_gid(fig, Line2D)
    for (j, k), w in np.ndenumerate(example.W2):
        gid = f"W2[{j},{k}]"
        if w == 0:
            assert gid not in lines
        else:
            colour = plots.GREY if j in inactive else (plots.POSITIVE if w > 0 else plots.NEGATIVE)
            assert same_color(lines[gid].get_color(), colour), gid


@pytest.mark.parametrize("example", [ex.W_2, ex.W_3])
def test_ffn_dataflow_prints_the_worked_example(example):
    fig = plots.ffn_dataflow(example.x, *example.params)
    texts = _by_gid(fig, Text)
    d_model = example.x.size
    assert [texts[f"x-{i}"].get_text() for i in range(d_model)] == [
        f"x[{i}] = {plots.fmt(v)}" for i, v in enumerate(example.x)]
    shown_y = [float(texts[f"y-{k}"].get_text().split("= ")[1]) for k in range(example.y.size)]
    np.testing.assert_allclose(shown_y, example.y, rtol=0, atol=5e-4)  # 3 significant digits
    n_off = int(np.sum(example.h == 0))
    assert f"{n_off} of {example.W1.shape[1]} hidden units inactive" in fig.axes[0].get_title()


@pytest.mark.parametrize("example", [ex.W_2, ex.W_3])
def test_ffn_dataflow_shows_the_biases_so_every_value_can_be_rebuilt(example):
    """02's diagrams left b1 and b2 out (issue 52, point 7): z[0] = 0.94 could not be rebuilt from the drawn edges."""
    fig = plots.ffn_dataflow(example.x, *example.params)
    texts = _by_gid(fig, Text)
    for name, bias in (("b1", example.b1), ("b2", example.b2)):
        assert [texts[f"{name}-{j}"].get_text() for j in range(bias.size)] == [
            f"+ {name}[{j}] = {plots.fmt(v)}" for j, v in enumerate(bias)]
        assert f"bias {name} = " in fig.alt
    shown = {j: float(texts[f"b1-{j}"].get_text().split("= ")[1]) for j in range(example.b1.size)}
    z0 = float(example.x @ example.W1[:, 0]) + shown[0]  # the drawn edges into unit 0, plus its drawn bias
    assert abs(z0 - example.z[0]) < 5e-3


def test_ffn_dataflow_with_gelu_has_no_inactive_unit():
    fig = plots.ffn_dataflow(ex.W_2.x, *ex.W_2.params, activation="gelu")
    boxes, _ = _hidden_nodes(fig)
    assert all(same_color(b.get_facecolor(), plots.ACTIVE_FACE) for b in boxes)
    assert "h = GELU(z)" in fig.axes[0].get_xticklabels()[1].get_text()


def test_ffn_dataflow_rejects_batches_and_big_layers():
    with pytest.raises(ValueError, match=r"one token: x should have shape \(d_model,\), got \(2, 3\)"):
        plots.ffn_dataflow(np.ones((2, 3)), *ex.W_2.params)
    d_model, d_ff = 4, plots.MAX_DATAFLOW_D_FF + 1
    with pytest.raises(ValueError, match=f"got d_model = 4, d_ff = {d_ff}"):
        plots.ffn_dataflow(np.ones(d_model), np.ones((d_model, d_ff)), None, np.ones((d_ff, d_model)), None)
    with pytest.raises(ValueError, match="W1 looks transposed"):
        plots.ffn_dataflow(ex.W_2.x, ex.W_2.W1.T, ex.W_2.b1, ex.W_2.W2, ex.W_2.b2)


# --- activation_curves and tails_plot ---------------------------------------


def test_activation_curves_draw_the_reference_functions():
    names = ("relu", "gelu", "gelu_tanh", "silu")
    fig = plots.activation_curves(names, z_range=(-4, 4), zoom=(-6, -0.5))
    ax_all, ax_zoom = fig.axes
    for ax, (lo, hi) in ((ax_all, (-4, 4)), (ax_zoom, (-6, -0.5))):
        lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
        assert set(lines) == set(names)
        for name, line in lines.items():
            z, y = line.get_xdata(), line.get_ydata()
            assert (z[0], z[-1]) == (lo, hi)
            np.testing.assert_array_equal(y, get_activation(name)(z), err_msg=name)
        assert ax.get_xlim() == (lo, hi)
    np.testing.assert_array_equal(_line(ax_all, "relu").get_ydata(), np.maximum(_line(ax_all, "relu").get_xdata(), 0))
    assert "zoom" in ax_zoom.get_title()
    assert {"ReLU", "GELU (exact)", "GELU (tanh approx.)", "SiLU"} <= set(_legend_texts(fig))


def _line(ax, gid):
    return next(line for line in ax.get_lines() if line.get_gid() == gid)


def test_activation_curves_reject_bad_input():
    with pytest.raises(ValueError, match="unknown activation 'swish'"):
        plots.activation_curves(["relu", "swish"])
    with pytest.raises(ValueError, match="z_range should be finite with low < high"):
        plots.activation_curves(z_range=(4, -4))


def test_tails_plot_masks_exact_zeros_and_says_so():
    z = np.linspace(-40, -0.1, 400)
    fig = plots.tails_plot(["relu", "silu", "gelu", "gelu_tanh"], z)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    for name in ("silu", "gelu", "gelu_tanh"):
        line = _line(ax, name)
        mag = np.abs(get_activation(name)(line.get_xdata()))
        y = line.get_ydata()
        np.testing.assert_array_equal(np.isnan(y), mag == 0, err_msg=name)
        np.testing.assert_array_equal(y[mag > 0], mag[mag > 0], err_msg=name)
    assert _line(ax, "relu").get_xdata().size == 0  # nothing drawable, but still in the legend
    legend = _legend_texts(fig)
    assert "ReLU: exactly 0 everywhere here, not drawable on a log axis" in legend
    assert "SiLU" in legend  # never 0 here, so no note
    last_zero = z[get_activation("gelu_tanh")(z) == 0].max()
    assert f"GELU (tanh approx.): exactly 0 for z ≤ {plots.fmt(last_zero)}, not shown" in legend
    assert ax.get_ylim()[0] > 0


def test_tails_plot_keeps_only_negative_z():
    fig = plots.tails_plot(["silu"], [-2.0, 3.0, -1.0, 0.0])
    np.testing.assert_array_equal(_line(fig.axes[0], "silu").get_xdata(), [-2.0, -1.0])
    with pytest.raises(ValueError, match="at least one value < 0"):
        plots.tails_plot(["silu"], [0.0, 1.0])


# --- preactivation_histogram ------------------------------------------------


def _inactive_share_text(fig):
    (text,) = [t for t in _legend_texts(fig) if t.startswith("inactive")]
    return re.search(r"([\d.]+)%", text).group(1)


@pytest.mark.parametrize("shift", [0.0, 0.3, -1.0])
def test_histogram_reports_the_inactive_share(shift):
    z = random_z(seed=1, shift=shift)
    share = float(np.mean(z <= 0))
    fig = plots.preactivation_histogram(z)
    assert _inactive_share_text(fig) == f"{100 * share:.1f}"
    assert f"{100 * share:.1f}%" in fig.axes[0].get_title()
    bars = [b for c in fig.axes[0].containers for b in c]
    assert sum(b.get_height() for b in bars) == z.size
    for b in bars:  # no bar mixes active and inactive units
        if same_color(b.get_facecolor(), plots.NEGATIVE):
            assert b.get_x() + b.get_width() <= 1e-12
        else:
            assert same_color(b.get_facecolor(), plots.POSITIVE) and b.get_x() >= -1e-12


def test_histogram_counts_exact_zeros_as_inactive():
    z = np.r_[ex.W_3.z, -1.5, 0.25]  # [2, 0, 0, 5, -1.5, 0.25]: 3 of 6 inactive
    fig = plots.preactivation_histogram(z)
    assert _inactive_share_text(fig) == "50.0"
    (zero_bar,) = [b for c in fig.axes[0].containers for b in c if same_color(b.get_facecolor(), plots.ZERO)]
    assert zero_bar.get_height() == 2
    assert "z = 0 exactly: 2 of 6" in _legend_texts(fig)


def test_histogram_rejects_nan():
    with pytest.raises(ValueError, match="finite"):
        plots.preactivation_histogram([0.5, np.nan])


# --- shape_trace and its table ----------------------------------------------


def test_shape_trace_w2_and_batched():
    assert plots.shape_trace(ex.W_2.x, *ex.W_2.params) == [
        ("x", (3,)), ("x @ W1", (4,)), ("z = x @ W1 + b1", (4,)), ("h = σ(z)", (4,)), ("y = h @ W2 + b2", (3,))]
    shapes = [s for _, s in plots.shape_trace(np.ones((2, 5, 3)), *ex.W_2.params)]
    assert shapes == [(2, 5, 3), (2, 5, 4), (2, 5, 4), (2, 5, 4), (2, 5, 3)]


def test_shape_trace_table_shows_each_stage():
    stages = plots.shape_trace(np.ones((5, 3)), *ex.W_2.params)
    stages.append(("an array", np.zeros((7, 2))))
    fig = plots.shape_trace_table(stages)
    (table,) = fig.axes[0].tables
    cells = table.get_celld()
    assert (cells[0, 0].get_text().get_text(), cells[0, 1].get_text().get_text()) == ("stage", "shape")
    shown = [(cells[r, 0].get_text().get_text(), cells[r, 1].get_text().get_text()) for r in range(1, len(stages) + 1)]
    assert shown == [("x", "(5, 3)"), ("x @ W1", "(5, 4)"), ("z = x @ W1 + b1", "(5, 4)"), ("h = σ(z)", "(5, 4)"),
                     ("y = h @ W2 + b2", "(5, 3)"), ("an array", "(7, 2)")]


def test_shape_trace_table_rejects_bad_rows():
    with pytest.raises(ValueError, match=r"stages\[0\] should be a pair"):
        plots.shape_trace_table(["x"])
    with pytest.raises(ValueError, match=r"stages\[0\] \('x'\): expected a shape tuple or an array"):
        plots.shape_trace_table([("x", "three")])


# --- params_bar and loss_curves ---------------------------------------------


def test_params_bar_bert_base_layer():
    d_model, d_ff = ex.W_6["bert_base"]["d_model"], ex.W_6["bert_base"]["d_ff"]
    items = {"W1": d_model * d_ff, "b1": d_ff, "W2": d_ff * d_model, "b2": d_model}
    fig = plots.params_bar(items)
    ax = fig.axes[0]
    assert [b.get_width() for b in ax.containers[0]] == list(items.values())
    assert [t.get_text() for t in ax.get_yticklabels()] == list(items)
    total = ffn_param_count(d_model, d_ff)
    assert total == ex.W_6["bert_base"]["per_layer"] == sum(items.values())
    assert f"{total:,}" in ax.get_title()
    # 3,072 / 4,722,432 = 0.065%, 768 / 4,722,432 = 0.016%: small shares keep two significant digits.
    assert [t.get_text() for t in ax.texts] == ["2,359,296 (50.0%)", "3,072 (0.065%)", "2,359,296 (50.0%)",
                                                "768 (0.016%)"]


def test_params_bar_writes_billions_short(tmp_path):
    fig = plots.params_bar({"experts": 45_097_156_608, "attention": 1_342_177_280})
    _render(fig, tmp_path, "params_bar billions")  # draws the ticks
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert labels[:3] == ["0", "10B", "20B"], labels
    assert [t.get_text() for t in fig.axes[0].texts] == ["45,097,156,608 (97.1%)", "1,342,177,280 (2.9%)"]


def test_params_bar_rejects_bad_counts():
    with pytest.raises(ValueError, match=r"items\['W1'\] should be a non-negative whole number"):
        plots.params_bar({"W1": -3})
    with pytest.raises(ValueError, match="non-empty mapping"):
        plots.params_bar([("W1", 3)])


def test_loss_curves_log_scale_and_masked_zeros():
    losses = {"a": [1.0, 0.5, 0.0, 0.25], "b": np.geomspace(2, 0.01, 4)}
    fig = plots.loss_curves(losses)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    a, b = ax.get_lines()
    np.testing.assert_array_equal(a.get_ydata(), [1.0, 0.5, np.nan, 0.25])
    np.testing.assert_array_equal(b.get_ydata(), losses["b"])
    assert _legend_texts(fig) == ["a (1 exact zeros not shown on the log axis)", "b"]
    assert not same_color(a.get_color(), b.get_color())
    with pytest.raises(ValueError, match=r"curves\['a'\] should hold finite losses >= 0, got -1.0 at step 1"):
        plots.loss_curves({"a": [1.0, -1.0]})


def test_a_log_axis_is_labelled_in_plain_numbers():
    """09's figure of the hidden spread showed 6×10⁻¹, 4×10⁻¹, ... on main: now 0.2, 0.5, 1 and the like."""
    fig = plots.loss_curves({"Xavier": [0.37, 0.37, 0.38], "GPT-2": [0.04, 0.06, 0.09]}, xticks=(64, 128, 256))
    fig.canvas.draw()
    axis = fig.axes[0].yaxis
    labels = [t.get_text() for t in axis.get_ticklabels(which="both") if t.get_text()]
    assert labels and all(re.fullmatch(r"\d+(\.\d+)?", label) for label in labels), labels
    assert {"0.05", "0.1", "0.2"} <= set(labels), labels


def test_loss_curves_can_name_their_steps():
    """Notebook 09 plots one value per width: the ticks and the text alternative give the widths."""
    spread = {"Xavier": [0.58, 0.58, 0.59], "GPT-2": [0.16, 0.23, 0.32]}
    fig = plots.loss_curves(spread, title="Spread", xlabel="d_model", ylabel="std", xticks=(64, 128, 256))
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["64", "128", "256"]
    assert fig.alt.endswith("Xavier: 0.58 at 64, 0.59 at 256; GPT-2: 0.16 at 64, 0.32 at 256.")
    with pytest.raises(ValueError, match=r"xticks should name each of the 3 steps, got 2 labels"):
        plots.loss_curves(spread, xticks=(64, 128))


# --- expert_load (notebook 11) ------------------------------------------------


def test_expert_load_bars_are_the_shares_with_the_uniform_line():
    from ffn_helpers import moe

    loads = {"a": moe.expert_shares(np.array([0, 0, 1, 3]), 4), "b": np.full(4, 0.25)}
    fig = plots.expert_load(loads)
    ax = fig.axes[0]
    bars = _by_gid(fig, matplotlib.patches.Rectangle)
    assert {gid for gid in bars} == {"load-0", "load-1"}
    heights = [[p.get_height() for p in c] for c in ax.containers]
    assert heights == [[0.5, 0.25, 0.0, 0.25], [0.25] * 4]
    assert not same_color(ax.containers[0][0].get_facecolor(), ax.containers[1][0].get_facecolor())
    for container in ax.containers:
        assert any(same_color(container[0].get_facecolor(), c) for c in plots.OKABE_ITO)
    (uniform,) = [line for line in ax.get_lines() if line.get_gid() == "uniform"]
    assert list(uniform.get_ydata()) == [0.25, 0.25]
    assert _legend_texts(fig) == ["uniform, 1/E = 0.25", "a", "b"]


def test_expert_load_rejects_bad_shares():
    with pytest.raises(ValueError, match=r"loads\['a'\] should be shares >= 0 that sum to 1"):
        plots.expert_load({"a": [0.5, 0.6]})
    with pytest.raises(ValueError, match="one share per expert, got lengths \\[2, 3\\]"):
        plots.expert_load({"a": [0.5, 0.5], "b": [0.2, 0.3, 0.5]})
    with pytest.raises(ValueError, match="non-empty mapping"):
        plots.expert_load({})


def test_palette_is_okabe_ito():
    assert len(set(plots.OKABE_ITO)) == 8
    for colour in (plots.POSITIVE, plots.NEGATIVE):
        assert colour in plots.OKABE_ITO
    assert to_rgba(plots.ZERO)[:3] == to_rgba(plots.GREY)[:3]


# --- precision_error_plot (notebook 12) ----------------------------------------


def test_precision_error_plot_draws_each_format_on_log_axes():
    widths = [16, 32, 64]
    errors = {"float32": [1e-7, 2e-7, 3e-7], "float16": [3e-4, 3e-4, 4e-4], "bfloat16": [4e-3, 4e-3, 4e-3],
              "int8": [7e-3, 9e-3, 1e-2], "fp8": [2e-2, 2e-2, 2e-2]}
    fig = plots.precision_error_plot(widths, errors)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    lines = {line.get_gid(): line for line in ax.get_lines()}
    assert list(lines) == list(errors)
    for name, values in errors.items():
        np.testing.assert_array_equal(lines[name].get_xdata(), widths)
        np.testing.assert_array_equal(lines[name].get_ydata(), values)
    colours = [to_rgba(line.get_color()) for line in lines.values()]
    assert len(set(colours)) == len(colours)  # one colour per format
    assert all(any(same_color(c, o) for o in plots.OKABE_ITO) for c in colours)
    assert _legend_texts(fig)[:2] == ["float32", "float16 (hidden layer in float32)"] and "fp8" in _legend_texts(fig)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16", "32", "64"]


def test_precision_error_plot_rejects_bad_input():
    with pytest.raises(ValueError, match=r"errors\['int8'\] should hold 2 positive errors"):
        plots.precision_error_plot([16, 32], {"int8": [1e-2, 0.0]})
    with pytest.raises(ValueError, match=r"errors\['int8'\] should hold 2 positive errors"):
        plots.precision_error_plot([16, 32], {"int8": [1e-2]})
    with pytest.raises(ValueError, match="widths should be positive"):
        plots.precision_error_plot([0, 32], {"int8": [1e-2, 1e-2]})
    with pytest.raises(ValueError, match="non-empty mapping"):
        plots.precision_error_plot([16], {})


# --- recall_curves (notebook 10) ---------------------------------------------


def test_recall_curves_one_style_per_label_in_every_panel():
    x = [8, 16, 32, 64]
    panels = {"d = 16": {"θ = 0": [1, 0.8, 0.5, 0.2], "θ = 0.5": [1, 1, 1, 0.9]},
              "d = 32": {"θ = 0": [1, 1, 0.8, 0.5], "θ = 0.5": [1, 1, 1, 1]}}
    fig = plots.recall_curves(x, panels, xlabel="n", title="Capacity", log_x=True)
    assert [ax.get_title() for ax in fig.axes] == ["d = 16", "d = 32"]
    assert fig.get_suptitle() == "Capacity"
    styles = {}
    for ax, curves in zip(fig.axes, panels.values(), strict=True):
        assert ax.get_xscale() == "log" and ax.get_xlabel() == "n" and ax.get_ylabel() == "recall"
        lines = ax.get_lines()
        assert [line.get_label() for line in lines] == list(curves)
        for line, (label, y) in zip(lines, curves.items(), strict=True):
            np.testing.assert_array_equal(line.get_xdata(), x)
            np.testing.assert_array_equal(line.get_ydata(), y)
            style = (to_rgba(line.get_color()), line.get_marker(), line.get_linestyle())
            assert styles.setdefault(label, style) == style  # the same look in every panel
            assert line.get_color() in plots.OKABE_ITO
    assert len(set(styles.values())) == 2  # two labels, told apart by colour, marker and line style
    assert _legend_texts(fig) == ["θ = 0", "θ = 0.5"]
    fig.canvas.draw()
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["8", "16", "32", "64"]


def test_recall_curves_rejects_bad_input():
    with pytest.raises(ValueError, match=r"panels\['a'\]\['b'\] should hold 2 values in \[0, 1\], got shape \(2,\) "
                                         r"with range \[0, 1.5\]"):
        plots.recall_curves([1, 2], {"a": {"b": [0, 1.5]}}, xlabel="n", title="t")
    with pytest.raises(ValueError, match=r"should hold 2 values in \[0, 1\], got shape \(3,\)"):
        plots.recall_curves([1, 2], {"a": {"b": [0, 1, 1]}}, xlabel="n", title="t")
    with pytest.raises(ValueError, match="panels should be a non-empty mapping"):
        plots.recall_curves([1, 2], {"a": {}}, xlabel="n", title="t")
    with pytest.raises(ValueError, match="finite numbers"):
        plots.recall_curves([1, np.nan], {"a": {"b": [0, 1]}}, xlabel="n", title="t")


# --- text alternatives ------------------------------------------------------------------------------------------

GENERIC_ALT = re.compile(r"^(a )?(figure|image|plot|chart)( \d+)?\.?$", re.I)


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_says_what_it_shows_in_its_alt_text(name, monkeypatch):
    """Jupyter gets an <img> that carries the figure's alt text, the PNG inside it: the alt text names the kind of
    figure and its title, and gives the numbers it shows. Where the grader draws the figures, the output also holds
    the PNG as image/png with the alt text in its metadata, the form of an output the grader keeps."""
    import base64
    import html

    fig = FIGURES[name]()
    data, metadata = fig._repr_mimebundle_()
    alt = fig.alt
    assert len(alt) > 80 and not GENERIC_ALT.match(alt), alt
    title = fig.get_suptitle() or fig.axes[0].get_title()
    assert title in alt and re.search(r"\d", alt), alt
    png = re.fullmatch(f'<img alt="{re.escape(html.escape(alt))}" src="data:image/png;base64,([^"]+)">',
                       data["text/html"])[1]
    assert base64.b64decode(png).startswith(PNG_SIGNATURE) and set(data) == {"text/html"} and metadata == {}
    monkeypatch.setenv(plots.FIGURES_ENV, "png")
    data, metadata = fig._repr_mimebundle_()
    assert metadata == {"image/png": {"alt": alt}} and base64.b64decode(data["image/png"]).startswith(PNG_SIGNATURE)
    assert data["text/html"] == f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data["image/png"]}">'


def test_a_saved_notebook_stores_each_figure_once():
    """Issue 52, point 8: every figure was stored twice, as image/png and as the <img> of its alt text, the same
    base64 in both; a saved 02 was 1.4 MB. In a person's notebook only the <img> holds it now."""
    from IPython.core.formatters import DisplayFormatter

    fig = plots.ffn_dataflow(ex.W_2.x, *ex.W_2.params)
    data, metadata = DisplayFormatter().format(fig)
    png = re.search(r'base64,([^"]+)"', data["text/html"])[1]
    assert len(png) > 10_000 and sum(str(v).count(png) for v in data.values()) == 1, sorted(data)
    assert "image/png" not in data and metadata == {}


def test_the_dataflow_alt_text_reads_out_the_forward_pass():
    alt = plots.ffn_dataflow(ex.W_2.x, *ex.W_2.params).alt
    assert alt == ("Diagram: One token through the FFN: 1 of 4 hidden units inactive (grey). One token through an "
                   "FFN with d_model = 3, d_ff = 4, left to right. Input x = [1, -0.5, 0.8]; bias b1 = [0.1, -0.1, "
                   "0.2, 0]; bias b2 = [0.05, -0.05, 0.1]; pre-activation z = x W1 + b1 = [0.94, -0.62, 0.55, 0.96]; "
                   "hidden h = ReLU(z) = [0.94, 0, 0.55, 0.96], unit 1 inactive; "
                   f"output y = {plots.figure._values(ex.W_2.y)}. Lines are the weights: solid blue positive, dashed "
                   "vermilion negative, thicker for larger magnitude.")


def test_a_figure_without_alt_text_is_a_bare_png():
    """What the notebooks' test refuses: no metadata, no <img> with an alt."""
    fig = plots.CourseFigure(figsize=(2, 2))
    fig.subplots()
    bundle = fig._repr_mimebundle_()
    assert isinstance(bundle, dict) and set(bundle) == {"image/png"}


@pytest.mark.parametrize("name", FIGURES)
def test_in_a_graded_run_a_figure_is_its_text_alternative_and_nothing_is_drawn(name, monkeypatch):
    """The grader's kernel sets FFN_FIGURES=text: each function then returns a DescribedFigure, which IPython's
    display shows as the alt text alone, plain text saying the figure was not drawn; no figure is made. The text is
    the very alt text the drawn figure carries."""
    from IPython.core.formatters import DisplayFormatter

    from ffn_helpers import _course_figure

    drawn = FIGURES[name]()
    monkeypatch.setenv(plots.FIGURES_ENV, "text")
    monkeypatch.setattr(_course_figure, "draw", lambda *a, **k: pytest.fail("a figure was drawn in text mode"))
    fig = FIGURES[name]()
    assert isinstance(fig, plots.DescribedFigure) and fig.alt == drawn.alt
    for shown in (fig, drawn):  # a figure made before the run (or by a notebook's own code) is not drawn either
        monkeypatch.setattr(Figure, "savefig", lambda *a, **k: pytest.fail("a figure was drawn in text mode"))
        data, metadata = DisplayFormatter().format(shown)
        assert set(data) == {"text/plain"} and not metadata, (data.keys(), metadata)
        assert data["text/plain"] == f"[Figure (not drawn while grading): {drawn.alt}]"


def test_in_a_graded_run_no_figure_imports_matplotlib():
    """Importing matplotlib costs a graded kernel 0.3-0.5 s: with FFN_FIGURES=text, making and showing every figure
    (and the interactive FFN) imports neither matplotlib nor ipywidgets."""
    code = (
        "import sys\n"
        "from IPython.core.formatters import DisplayFormatter\n"
        "from ffn_helpers import examples as ex, widgets\n"
        "from tests.course_figures import FIGURES\n"
        "shown = [DisplayFormatter().format(build())[0] for build in FIGURES.values()]\n"
        "shown.append(DisplayFormatter().format(widgets.interactive_ffn(ex.W_2.x, *ex.W_2.params))[0])\n"
        "assert all(set(data) == {'text/plain'} for data in shown), shown\n"
        "loaded = sorted(m for m in ('matplotlib', 'ipywidgets') if m in sys.modules)\n"
        "assert not loaded, f'imported {loaded}'\n"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                            env={**os.environ, plots.FIGURES_ENV: "text"})
    assert result.returncode == 0, result.stderr


def test_code_that_asks_a_described_figure_for_more_gets_the_drawn_figure(monkeypatch, tmp_path):
    """A notebook may change the figure a function returned (notebook 09 sets its x ticks): in a graded run
    that draws it, once, and the cell still shows the text alternative."""
    from IPython.core.formatters import DisplayFormatter

    monkeypatch.setenv(plots.FIGURES_ENV, "text")
    fig = plots.loss_curves({"wide": np.geomspace(1, 1e-3, 50)}, title="Loss")
    fig.axes[0].set_xticks([0, 49], ["first", "last"])
    assert isinstance(fig.figure, plots.CourseFigure) and fig.figure.alt == fig.alt
    assert [t.get_text() for t in fig.figure.axes[0].get_xticklabels()] == ["first", "last"]
    fig.savefig(tmp_path / "loss.png")
    assert (tmp_path / "loss.png").read_bytes().startswith(PNG_SIGNATURE)
    assert DisplayFormatter().format(fig)[0] == {"text/plain": f"[Figure (not drawn while grading): {fig.alt}]"}
    monkeypatch.delenv(plots.FIGURES_ENV)  # shown again outside a graded run: the PNG of that same figure
    data, metadata = DisplayFormatter().format(fig)
    assert set(data) == {"text/html", "text/plain"} and f'alt="{html.escape(fig.alt)}"' in data["text/html"]
    assert not hasattr(fig, "_repr_png_")  # IPython probes each format: none of them draws


def test_a_notebooks_own_figure_is_drawn_on_a_course_figure_of_its_size(monkeypatch):
    calls = []
    fig = plots.custom_figure(lambda f: calls.append((type(f), tuple(f.get_size_inches()))), size=(5, 2.5),
                              alt="Line plot: nothing yet. An empty figure 5 by 2.5 inches.")
    assert calls == [(plots.CourseFigure, (5.0, 2.5))]
    assert fig.alt == "Line plot: nothing yet. An empty figure 5 by 2.5 inches."
    monkeypatch.setenv(plots.FIGURES_ENV, "text")  # in a graded run: its description, and draw_on never runs
    described = plots.custom_figure(lambda f: pytest.fail("drawn in text mode"), size=(5, 2.5), alt=fig.alt)
    assert isinstance(described, plots.DescribedFigure) and described.alt == fig.alt


@pytest.mark.parametrize("draw_on, size, alt, error", [
    (None, (5, 3), "Line plot: x. Numbers 1, 2.", "draw_on: expected a function that draws on the figure it is "
                                                  "given, got NoneType"),
    (print, (5, 3), "", "alt: expected the figure's text alternative, a sentence saying what it shows, got ''"),
    (print, (5, 3), None, "alt: expected the figure's text alternative, a sentence saying what it shows, got None"),
    (print, 5, "Line plot: x. Numbers 1, 2.", "size: expected (width, height) in inches, got 5"),
    (print, (5, 3, 1), "Line plot: x. Numbers 1, 2.", "size: expected (width, height) in inches, got (5, 3, 1)"),
    (print, (0, 3), "Line plot: x. Numbers 1, 2.", "size: expected a width and height between 0 and 30 inches, "
                                                   "got (0, 3)"),
])
def test_a_notebooks_own_figure_refuses_what_it_cannot_draw_or_describe(draw_on, size, alt, error):
    with pytest.raises((TypeError, ValueError)) as raised:
        plots.custom_figure(draw_on, size=size, alt=alt)
    assert str(raised.value) == error


def test_a_figure_is_drawn_unless_the_text_mode_is_asked_for_by_name(monkeypatch):
    from IPython.core.formatters import DisplayFormatter

    fig = plots.ffn_dataflow(ex.W_2.x, *ex.W_2.params)
    for value in (None, "", "png", "TEXT", "1"):
        if value is None:
            monkeypatch.delenv(plots.FIGURES_ENV, raising=False)
        else:
            monkeypatch.setenv(plots.FIGURES_ENV, value)
        data, metadata = DisplayFormatter().format(fig)
        assert f'<img alt="{html.escape(fig.alt)}" src="data:image/png;base64,' in data["text/html"], value
        assert ("image/png" in data) == (value == "png"), value  # the grader's drawn figures keep their image/png


def test_a_figure_without_alt_text_in_text_mode_says_it_has_none(monkeypatch):
    fig = plots.CourseFigure(figsize=(2, 2))
    fig.subplots()
    monkeypatch.setenv(plots.FIGURES_ENV, "text")
    assert fig._repr_mimebundle_() == {"text/plain": "[Figure (not drawn while grading): a figure without a text "
                                                     "alternative]"}
