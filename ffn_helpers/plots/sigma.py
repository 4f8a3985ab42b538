r"""The activation functions σ themselves: their curves, and how fast each vanishes as z → -∞ (log scale)."""

import math

import numpy as np

from .._palette import BLACK, BLUE, BLUISH_GREEN, GREY, ORANGE, REDDISH_PURPLE, VERMILION
from ..activations import get_activation
from .figure import _figure, _finite, _interval, fmt

# Each curve differs by line style or marker as well as by colour (tests/test_palettes.py).
ACTIVATION_STYLES = {
    "relu": dict(color=BLUE, linestyle="-", label="ReLU"),
    "gelu": dict(color=VERMILION, linestyle="-.", label="GELU (exact)"),
    "gelu_tanh": dict(color=REDDISH_PURPLE, linestyle="--", label="GELU (tanh approx.)"),
    "silu": dict(color=BLUISH_GREEN, linestyle=":", label="SiLU"),
    "sigmoid": dict(color=ORANGE, linestyle="-", marker="o", markevery=0.1, markersize=4, label="sigmoid"),
    # BLACK: GREY is too near REDDISH_PURPLE for a deuteranope
    "identity": dict(color=BLACK, linestyle="--", marker="x", markevery=0.1, markersize=5, label="identity"),
}

# Subnormal floats reach 5e-324; a log axis cannot start below a positive float.
_LOG10_TINY = -320


def _activation_style(name_or_fn):
    if isinstance(name_or_fn, str) and name_or_fn in ACTIVATION_STYLES:
        return dict(ACTIVATION_STYLES[name_or_fn])
    label = name_or_fn if isinstance(name_or_fn, str) else getattr(name_or_fn, "__name__", "σ")
    return dict(linestyle="-", label=label)


def _names(names):
    if isinstance(names, str) or callable(names):
        names = (names,)
    names = tuple(names)
    if not names:
        raise ValueError("names should list at least one activation, got an empty sequence")
    for name in names:
        get_activation(name)  # raises a ValueError naming the valid choices
    return names


def activation_curves(names=("relu", "gelu", "gelu_tanh", "silu"), z_range=(-4, 4), zoom=(-6, -0.5),
                      n_points=801, title="Activation functions σ(z)"):
    """σ(z) for each activation over `z_range`, and a second panel zoomed (linearly) on the negative `zoom`."""
    names = _names(names)
    z_range = _interval(z_range, "z_range")
    zoom = _interval(zoom, "zoom")

    def draw_on(fig):
        ax_all, ax_zoom = fig.subplots(1, 2)
        for ax, (lo, hi) in ((ax_all, z_range), (ax_zoom, zoom)):
            z = np.linspace(lo, hi, n_points)
            for name in names:
                line, = ax.plot(z, get_activation(name)(z), linewidth=2, **_activation_style(name))
                line.set_gid(name if isinstance(name, str) else line.get_label())
            ax.axhline(0.0, color=GREY, linewidth=0.8, zorder=0)
            ax.set_xlim(lo, hi)
            ax.set_xlabel("pre-activation z")
            ax.set_ylabel("σ(z)")
            ax.grid(color="#E6E6E6", linewidth=0.8)
        if z_range[0] < 0 < z_range[1]:
            ax_all.axvline(0.0, color=GREY, linewidth=0.8, zorder=0)
        ax_all.set_title(f"z from {fmt(z_range[0])} to {fmt(z_range[1])}")
        ax_zoom.set_title(f"zoom (linear scale): z from {fmt(zoom[0])} to {fmt(zoom[1])}")
        ax_all.legend(frameon=False)
        fig.suptitle(title)

    probes = [v for v in (-3.0, -1.0, 0.0, 1.0, 3.0) if z_range[0] <= v <= z_range[1]]
    values = "; ".join(f"{_activation_style(n)['label']}: " + ", ".join(
        f"σ({fmt(v)}) = {fmt(get_activation(n)(np.array(v)))}" for v in probes) for n in names)
    return _figure((10.0, 4.2), "Two line plots", title,
                   f"Each activation's σ(z) for z from {fmt(z_range[0])} to {fmt(z_range[1])} (left) and zoomed "
                   f"on z from {fmt(zoom[0])} to {fmt(zoom[1])} (right); lines differ by colour and style. "
                   f"{values}.", draw_on)


def _zero_note(z, zero):
    """Say where |σ(z)| is exactly 0 (those points cannot sit on a log axis)."""
    if zero.all():
        return "exactly 0 everywhere here, not drawable on a log axis"
    if zero.any() and z[zero].max() < z[~zero].min():
        return f"exactly 0 for z ≤ {fmt(z[zero].max())}, not shown"
    return f"exactly 0 at {int(zero.sum())} of {z.size} points, not shown"


def tails_plot(names=("relu", "silu", "gelu", "gelu_tanh"), z=None, title="How fast σ(z) vanishes as z → -∞"):
    """|σ(z)| on a log axis for the negative entries of z (default -40 ... -0.1).

    Exact zeros (ReLU, and underflow) have no place on a log axis: they are
    masked and the legend says where they are.
    """
    names = _names(names)
    z = np.linspace(-40.0, -0.1, 800) if z is None else np.ravel(_finite(z, "z"))
    z = np.sort(z[z < 0])
    if z.size == 0:
        raise ValueError("tails_plot shows negative inputs; z should contain at least one value < 0")
    curves = _tail_curves(names, z)

    def draw_on(fig):
        ax = fig.subplots()
        ax.set_yscale("log")
        drawn = _draw_tails(ax, z, curves)
        _decade_ticks(ax, drawn)
        ax.set_xlim(z[0], z[-1])
        ax.set_xlabel("pre-activation z (negative)")
        ax.set_ylabel("|σ(z)| (log scale)")
        ax.set_title(title)
        ax.grid(color="#E6E6E6", linewidth=0.8, which="major")
        ax.legend(frameon=False, loc="lower right")

    ends = "; ".join(f"{style['label']}: |σ({fmt(z[0])})| = {fmt(abs(get_activation(name)(np.array(z[0]))))}"
                     for name, style, _, _ in curves)
    return _figure((7.5, 4.5), "Line plot on a log scale", title,
                   f"|σ(z)| for z from {fmt(z[0])} to {fmt(z[-1])}, one line per activation. {ends}.", draw_on)


def _tail_curves(names, z):
    """[(name, line style with its legend label, |σ(z)|, where it is exactly 0)], the legend saying where."""
    curves = []
    for name in names:
        mag = np.abs(get_activation(name)(z))
        zero = mag == 0
        style = _activation_style(name)
        if zero.any():
            style["label"] = f"{style['label']}: {_zero_note(z, zero)}"
        curves.append((name, style, mag, zero))
    return curves


def _draw_tails(ax, z, curves):
    """A line per curve, exact zeros masked; returns the positive magnitudes drawn, one array per drawn curve."""
    drawn = []
    for name, style, mag, zero in curves:
        if zero.all():
            # Nothing positive to draw: an empty line keeps the legend entry without
            # handing the log axis an all-zero series (which it warns about).
            line, = ax.plot([], [], linewidth=2, **style)
        else:
            line, = ax.plot(z, np.where(zero, np.nan, mag), linewidth=2, **style)
            drawn.append(mag[~zero])
        line.set_gid(name if isinstance(name, str) else line.get_label())
    return drawn


def _decade_ticks(ax, drawn):
    """Limit the log y axis to the whole decades around the `drawn` magnitudes, ticked at round decades."""
    from matplotlib.ticker import NullLocator

    if drawn:
        lo = math.floor(math.log10(min(float(m.min()) for m in drawn)))
        hi = math.ceil(math.log10(max(float(m.max()) for m in drawn)))
    else:
        lo, hi = -300, 0
    hi = max(hi, lo + 1)
    # Round decades (every 1, 2, 5, 10, 20, 50 or 100) instead of the locator's odd steps like 10^-38.
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 1000) if (hi - lo) / s <= 8)
    lo = max(step * math.floor(lo / step), _LOG10_TINY)
    ax.set_yticks([10.0**e for e in range(step * math.ceil(lo / step), hi + 1, step)])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylim(10.0**lo, 10.0**hi)
