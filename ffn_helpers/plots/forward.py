r"""The forward pass: one token through a small FFN, every unit and weight drawn, and the shapes through a large one.

    z = x W1 + b1,   h = σ(z),   y = h W2 + b2
"""

import re

import numpy as np

from .._palette import (
    ACTIVE_FACE,
    BLACK,
    BLUE,
    GREY,
    INACTIVE_FACE,
    INACTIVE_TEXT,
    INPUT_FACE,
    NEGATIVE,
    NODE_TEXT,
    ORANGE,
    OUTPUT_FACE,
    POSITIVE,
)
from ..ffn import check_ffn_shapes, ffn_trace
from .figure import _figure, _values, fmt

# The short names used in formulas such as "h = ReLU(z)".
ACTIVATION_SYMBOLS = {"relu": "ReLU", "gelu": "GELU", "gelu_tanh": "GELU_tanh", "silu": "SiLU",
                      "sigmoid": "sigmoid", "identity": "identity"}

# ffn_dataflow draws every unit and edge; beyond this it is a hairball.
MAX_DATAFLOW_D_MODEL = 8
MAX_DATAFLOW_D_FF = 16


def _node(ax, x, y, text, face, edge, text_colour, gid, width, height, linestyle="-"):
    from matplotlib.patches import FancyBboxPatch

    box = FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.02,rounding_size=0.12",
                         facecolor=face, edgecolor=edge, linewidth=1.4, linestyle=linestyle, zorder=3)
    box.set_gid(gid)
    ax.add_patch(box)
    label = ax.text(x, y, text, ha="center", va="center", fontsize=10, color=text_colour, zorder=4)
    label.set_gid(gid)
    return box


def _rows(n):
    """Vertical positions of n nodes, centred on 0, top to bottom."""
    return (n - 1) / 2 - np.arange(n)


# The columns of ffn_dataflow, left to right (input x, hidden z and h, output y), and the sizes of their boxes.
_COL_X, _COL_H, _COL_Y = 0.0, 3.2, 6.4
_W_IO, _W_H, _NODE_HEIGHT = 1.25, 1.55, 0.74  # box width of x and y, of a hidden unit; box height


def ffn_dataflow(x, W1, b1, W2, b2, activation="relu", title=None):
    """One token through a small FFN: x (d_model) → z, h (d_ff) → y (d_model).

    Values are printed in the nodes; hidden units with h == 0 are grey, and so
    are their outgoing edges, which carry nothing. Edge colour is the weight's
    sign and width its magnitude. x: (d_model,).
    """
    x, W1, b1, W2, b2 = _dataflow_inputs(x, W1, b1, W2, b2)
    d_model, d_ff = W1.shape
    d_out = W2.shape[1]
    trace = ffn_trace(x, W1, b1, W2, b2, activation=activation)
    name = activation if isinstance(activation, str) else getattr(activation, "__name__", "σ")
    sigma = ACTIVATION_SYMBOLS.get(name, name)
    ys = _dataflow_rows(d_model, d_ff, d_out)
    n_off = int(np.sum(trace.h == 0))
    title = title or f"One token through the FFN: {n_off} of {d_ff} hidden units inactive (grey)"

    def draw_on(fig):
        ax = fig.subplots()
        _dataflow_weights(ax, trace, W1, W2, ys)
        _dataflow_units(ax, trace, ys)
        _dataflow_biases(ax, b1, b2, ys)
        _dataflow_axes(ax, ys, sigma, title)
        key = _dataflow_key(n_off)
        fig.legend(handles=key, loc="outside lower center", ncols=len(key), frameon=False, fontsize=9,
                   handlelength=1.6, columnspacing=1.2)

    rows = max(d_model, d_ff, d_out)
    return _figure((8.4, 1.0 + 0.78 * rows + 1.4), "Diagram", title, _dataflow_alt(trace, sigma, b1, b2), draw_on)


def _dataflow_inputs(x, W1, b1, W2, b2):
    """The FFN's arrays, checked: one token, and a network small enough to draw every unit and edge."""
    x, W1, b1, W2, b2 = check_ffn_shapes(x, W1, b1, W2, b2)
    if x.ndim != 1:
        raise ValueError(f"ffn_dataflow draws one token: x should have shape (d_model,), got {x.shape}")
    d_model, d_ff = W1.shape
    d_out = W2.shape[1]
    if max(d_model, d_out) > MAX_DATAFLOW_D_MODEL or d_ff > MAX_DATAFLOW_D_FF:
        raise ValueError(
            f"ffn_dataflow draws small FFNs (d_model <= {MAX_DATAFLOW_D_MODEL}, d_ff <= {MAX_DATAFLOW_D_FF}), "
            f"got d_model = {d_model}, d_ff = {d_ff}; try shape_trace_table for a large one"
        )
    return x, W1, b1, W2, b2


def _dataflow_rows(d_model, d_ff, d_out):
    """The vertical positions of the input, hidden and output units (hidden ones a little further apart)."""
    return _rows(d_model), 1.08 * _rows(d_ff) if d_ff > 1 else _rows(1), _rows(d_out)


def _dataflow_weights(ax, trace, W1, W2, ys):
    """One line per non-zero weight, from box edge to box edge: colour and style its sign, width its magnitude;
    grey and dotted out of an inactive unit, which sends nothing."""
    y_in, y_hid, y_out = ys
    max_w = max(float(np.abs(W1).max()), float(np.abs(W2).max())) or 1.0
    for W, (c0, w0, ys0), (c1, w1, ys1), layer in (
        (W1, (_COL_X, _W_IO, y_in), (_COL_H, _W_H, y_hid), 1),
        (W2, (_COL_H, _W_H, y_hid), (_COL_Y, _W_IO, y_out), 2),
    ):
        for i, j in np.ndindex(W.shape):
            w = W[i, j]
            if w == 0:
                continue  # a zero weight carries nothing; leaving it out keeps the picture honest
            silent = layer == 2 and trace.h[i] == 0
            ax.plot([c0 + w0 / 2, c1 - w1 / 2], [ys0[i], ys1[j]],
                    color=GREY if silent else (POSITIVE if w > 0 else NEGATIVE),
                    linestyle=":" if silent else "-" if w > 0 else "--", alpha=0.55 if silent else 0.75,
                    linewidth=0.6 + 2.6 * abs(w) / max_w, zorder=1, solid_capstyle="round",
                    gid=f"W{layer}[{i},{j}]")


def _dataflow_units(ax, trace, ys):
    """A box per unit with its values: x, then z and h (grey when h == 0), then y."""
    y_in, y_hid, y_out = ys
    for i in range(trace.x.size):
        _node(ax, _COL_X, y_in[i], f"x[{i}] = {fmt(trace.x[i])}", INPUT_FACE, BLACK, NODE_TEXT, f"x-{i}", _W_IO,
              _NODE_HEIGHT)
    for j in range(trace.h.size):
        inactive = trace.h[j] == 0
        _node(ax, _COL_H, y_hid[j], f"z[{j}] = {fmt(trace.z[j])}\nh[{j}] = {fmt(trace.h[j])}",
              INACTIVE_FACE if inactive else ACTIVE_FACE, GREY if inactive else BLUE,
              INACTIVE_TEXT if inactive else NODE_TEXT, f"hidden-{j}", _W_H, _NODE_HEIGHT, "--" if inactive else "-")
    for k in range(trace.y.size):
        _node(ax, _COL_Y, y_out[k], f"y[{k}] = {fmt(trace.y[k])}", OUTPUT_FACE, ORANGE, NODE_TEXT, f"y-{k}", _W_IO,
              _NODE_HEIGHT)


def _dataflow_biases(ax, b1, b2, ys):
    """Each bias beside the unit it is added to, above its box's left corner: b1[j] to z[j], b2[k] to y[k] (none
    drawn for a layer without one). With them, every unit's value can be rebuilt from the picture."""
    _, y_hid, y_out = ys
    for name, bias, column, width, rows in (("b1", b1, _COL_H, _W_H, y_hid), ("b2", b2, _COL_Y, _W_IO, y_out)):
        if bias is None:
            continue
        for j, value in enumerate(np.ravel(bias)):
            label = ax.text(column - width / 2, rows[j] + _NODE_HEIGHT / 2 + 0.02, f"+ {name}[{j}] = {fmt(value)}",
                            ha="left", va="bottom", fontsize=8, color=NODE_TEXT, zorder=4)
            label.set_gid(f"{name}-{j}")


def _dataflow_axes(ax, ys, sigma, title):
    """The axes as a diagram: one labelled tick per column, no spines, room for every box."""
    y_in, y_hid, y_out = ys
    half = max(y_hid.max(), y_in.max(), y_out.max()) + _NODE_HEIGHT / 2 + 0.15
    ax.set_xlim(_COL_X - _W_IO / 2 - 0.15, _COL_Y + _W_IO / 2 + 0.15)
    ax.set_ylim(-half, half)
    ax.set_xticks([_COL_X, _COL_H, _COL_Y], [f"input x\nd_model = {y_in.size}",
                                             f"hidden: z, h = {sigma}(z)\nd_ff = {y_hid.size}",
                                             f"output y\nd_model = {y_out.size}"])
    ax.set_yticks([])
    ax.tick_params(axis="x", length=0)
    for side in ("left", "right", "top", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_xlabel("stage of the forward pass: z = x W1 + b1,  h = σ(z),  y = h W2 + b2")
    ax.set_ylabel("units (index from the top)")
    ax.set_title(title)


def _dataflow_key(n_off):
    """The legend's entries; those of inactive units only when there are some."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    key = [Patch(facecolor=ACTIVE_FACE, edgecolor=BLUE, label="active unit")]
    if n_off:
        key.append(Patch(facecolor=INACTIVE_FACE, edgecolor=GREY, linestyle="--", label="inactive (h = 0)"))
    key += [Line2D([], [], color=POSITIVE, linewidth=2, label="weight > 0"),
            Line2D([], [], color=NEGATIVE, linewidth=2, linestyle="--", label="weight < 0")]
    if n_off:
        key.append(Line2D([], [], color=GREY, linewidth=1.5, linestyle=":", label="carries 0 (from h = 0)"))
    return key


def _dataflow_alt(trace, sigma, b1=None, b2=None):
    """The diagram in words: every stage's values, the biases, which units are inactive, how the weights are drawn."""
    off = [j for j in range(trace.h.size) if trace.h[j] == 0]
    biases = "".join(f"; bias {name} = {_values(np.ravel(b), 16)}" for name, b in (("b1", b1), ("b2", b2))
                     if b is not None)
    return (f"One token through an FFN with d_model = {trace.x.size}, d_ff = {trace.h.size}, left to right. "
            f"Input x = {_values(trace.x)}{biases}; pre-activation z = x W1 + b1 = {_values(trace.z, 16)}; "
            f"hidden h = {sigma}(z) = {_values(trace.h, 16)}"
            + (f", {'units' if len(off) > 1 else 'unit'} {', '.join(map(str, off))} inactive" if off
               else ", every unit active")
            + f"; output y = {_values(trace.y)}. Lines are the weights: solid blue positive, "
              "dashed vermilion negative, thicker for larger magnitude.")


def shape_trace(x, W1, b1, W2, b2, activation="relu"):
    """[(stage, shape), ...] for one forward pass: x, x W1, z, h, y; x: (..., d_model)."""
    x, W1, b1, W2, b2 = check_ffn_shapes(x, W1, b1, W2, b2)
    trace = ffn_trace(x, W1, b1, W2, b2, activation=activation)
    return [
        ("x", trace.x.shape),
        ("x @ W1", (x @ W1).shape),
        ("z = x @ W1 + b1", trace.z.shape),
        ("h = σ(z)", trace.h.shape),
        ("y = h @ W2 + b2", trace.y.shape),
    ]


_SHAPE_RE = re.compile(r"^\(\d*(, ?\d+)*,?\)$")


def shape_trace_table(stages, title="Shapes through the FFN"):
    """A table figure of (stage name, shape or array) rows, e.g. from `shape_trace`."""
    rows = []
    for k, entry in enumerate(stages):
        try:
            name, thing = entry
        except (TypeError, ValueError):
            raise ValueError(f"stages[{k}] should be a pair (stage name, shape or array), got {entry!r}") from None
        if isinstance(thing, tuple) and all(isinstance(n, int | np.integer) and n >= 0 for n in thing):
            shape = tuple(int(n) for n in thing)
        elif hasattr(thing, "shape"):
            shape = tuple(thing.shape)
        else:
            raise ValueError(f"stages[{k}] ({name!r}): expected a shape tuple or an array, got {thing!r}")
        rows.append([str(name), str(shape)])
    if not rows:
        raise ValueError("stages is empty; expected at least one (stage name, shape) pair")

    def draw_on(fig):
        ax = fig.subplots()
        ax.set_axis_off()
        table = ax.table(cellText=rows, colLabels=["stage", "shape"], colWidths=[0.62, 0.38], cellLoc="left",
                         bbox=[0.0, 0.0, 1.0, 1.0])
        table.auto_set_font_size(False)
        table.set_fontsize(11)
        for (r, _c), cell in table.get_celld().items():
            cell.set_edgecolor("#BBBBBB")
            if r == 0:
                cell.set_facecolor("#E8E8E8")
                cell.get_text().set_fontweight("bold")
            else:
                cell.get_text().set_fontfamily("monospace")
        ax.set_title(title)

    return _figure((5.6, 0.55 + 0.36 * (len(rows) + 1)), "Table", title,
                   "; ".join(f"{name}: shape {shape}" for name, shape in rows) + ".", draw_on)
