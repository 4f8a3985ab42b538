r"""Mixture of experts: how the tokens spread over the experts, against the uniform share 1/E."""

from collections.abc import Mapping

import numpy as np

from .._palette import BLACK, OKABE_ITO
from .figure import _figure, _values, _vector, fmt

BAR_HATCHES = ("", "///", "xxx", "...", "\\\\\\", "+++", "ooo", "---")  # a second cue beside each bar's colour


def expert_load(loads, title="How the tokens spread over the experts", xlabel="expert i",
                ylabel="share of tokens f_i"):
    """Grouped bars of the share of tokens each expert receives; `loads` maps label -> shares (E,).

    A dashed line marks the uniform share 1/E. Each label's shares must be >= 0 and sum to 1.
    """
    if not isinstance(loads, Mapping) or not loads:
        raise ValueError(f"loads should be a non-empty mapping label -> shares per expert, got {loads!r}")
    shares = {}
    for label, values in loads.items():
        f = _vector(values, f"loads[{label!r}]")
        if (f < 0).any() or abs(f.sum() - 1.0) > 1e-9:
            raise ValueError(f"loads[{label!r}] should be shares >= 0 that sum to 1, got {f.tolist()}")
        shares[str(label)] = f
    sizes = {f.size for f in shares.values()}
    if len(sizes) != 1:
        raise ValueError(f"every label should give one share per expert, got lengths {sorted(sizes)}")
    (E,) = sizes

    def draw_on(fig):
        ax = fig.subplots()
        width = 0.8 / len(shares)
        for n, (label, f) in enumerate(shares.items()):
            ax.bar(np.arange(E) + (n - (len(shares) - 1) / 2) * width, f, width=width * 0.95,
                   color=OKABE_ITO[n % len(OKABE_ITO)], hatch=BAR_HATCHES[n % len(BAR_HATCHES)], edgecolor="white",
                   linewidth=0.5, label=label, gid=f"load-{n}")
        ax.axhline(1.0 / E, color=BLACK, linestyle="--", linewidth=1.2, label=f"uniform, 1/E = {fmt(1.0 / E)}",
                   gid="uniform")
        ax.set_xticks(np.arange(E))
        ax.set_ylim(0, 1.05)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(axis="y", color="#E6E6E6", linewidth=0.8)
        ax.set_axisbelow(True)
        ax.legend(frameon=False, loc="upper right")

    each = "; ".join(f"{label}: {_values(f)}" for label, f in shares.items())
    return _figure((8.0, 4.0), "Grouped bar chart", title,
                   f"{ylabel} for each of {E} experts, one bar per label (colour and pattern differ); a dashed "
                   f"line marks the uniform share 1/E = {fmt(1.0 / E)}. {each}.", draw_on)
