"""One call of each of the course's figure functions, by name (test_plots, test_palettes).

Importing this module imports no matplotlib: a test can build every figure in text mode
and check that nothing loaded it.
"""

import numpy as np

from ffn_helpers import examples as ex
from ffn_helpers import plots


def random_z(seed=0, shape=(64, 32), shift=0.3):
    return np.random.default_rng(seed).standard_normal(shape) + shift


def custom_relu_figure():
    """A notebook's own figure, as 03, 04, 05 and 07 make theirs: drawn by a function, described by its data."""
    z = np.linspace(-3, 3, 61)
    title = "ReLU and its slope"

    def draw_on(fig):
        ax = fig.subplots()
        ax.plot(z, np.maximum(z, 0.0), color=plots.BLUE, label="ReLU(z)")
        ax.plot(z, (z > 0).astype(float), color=plots.ORANGE, linestyle="--", label="slope of ReLU")
        ax.set_title(title)
        ax.set_xlabel("pre-activation z")
        ax.set_ylabel("value")
        ax.legend(frameon=False)

    return plots.custom_figure(draw_on, size=(6, 3.5), alt=(
        f"Line plot: {title}. For z from {z[0]:g} to {z[-1]:g}, ReLU(z) (solid) is 0 up to z = 0 and z after it; "
        "its slope (dashed) is 0, then 1."))


FIGURES = {
    "preactivation_bars W-2": lambda: plots.preactivation_bars(ex.W_2.z),
    "preactivation_bars W-3": lambda: plots.preactivation_bars(ex.W_3.z, labels=["a", "b", "c", "d"]),
    "activation_curves": lambda: plots.activation_curves(),
    "ffn_dataflow W-2": lambda: plots.ffn_dataflow(ex.W_2.x, *ex.W_2.params),
    "ffn_dataflow W-3": lambda: plots.ffn_dataflow(ex.W_3.x, *ex.W_3.params),
    "ffn_dataflow W-4 gelu": lambda: plots.ffn_dataflow(ex.W_4.x, *ex.W_4.params, activation="gelu"),
    "shape_trace_table": lambda: plots.shape_trace_table(plots.shape_trace(np.ones((5, 3)), *ex.W_2.params)),
    "preactivation_histogram": lambda: plots.preactivation_histogram(random_z()),
    "preactivation_histogram zeros": lambda: plots.preactivation_histogram(np.r_[ex.W_3.z, -1.5, 0.25]),
    "params_bar": lambda: plots.params_bar({"W1": 2_359_296, "b1": 3_072, "W2": 2_359_296, "b2": 768}),
    "loss_curves": lambda: plots.loss_curves({"wide": np.geomspace(1, 1e-3, 50), "narrow": np.geomspace(1, 0.1, 50)}),
    "loss_curves named steps": lambda: plots.loss_curves({"std": [0.58, 0.58, 0.59]}, title="Spread", xlabel="d_model",
                                                         ylabel="std of h", xticks=(64, 128, 256)),
    "tails_plot": lambda: plots.tails_plot(),
    "tails_plot relu only": lambda: plots.tails_plot(["relu"]),
    "precision_error_plot": lambda: plots.precision_error_plot(
        [16, 32, 64], {"float32": [1e-7, 2e-7, 3e-7], "bfloat16": [4e-3, 4e-3, 4e-3], "int8": [7e-3, 9e-3, 1e-2]}),
    "expert_load": lambda: plots.expert_load({"even": np.full(8, 1 / 8), "one expert": np.eye(8)[0]}),
    "recall_curves capacity": lambda: plots.recall_curves(
        [8, 16, 32], {"d_model = 16": {"θ = 0": [1, 0.9, 0.6], "θ = 0.5": [1, 1, 1]},
                      "d_model = 32": {"θ = 0": [1, 1, 0.9], "θ = 0.5": [1, 1, 1]}},
        xlabel="stored pairs n", title="Recall", log_x=True),
    "recall_curves one panel": lambda: plots.recall_curves(
        [0.0, 0.5, 0.9], {"n = 128": {"keys": [0.7, 1, 1], "noisy": [0.4, 1, 0]}}, xlabel="threshold θ",
        title="Threshold"),
    "custom_figure": custom_relu_figure,
}
