r"""LayerNorm and the two ways of wrapping a sublayer with a residual connection.

LN(x) = γ ⊙ (x - μ) / √(σ² + eps) + β over the last axis, with the biased
variance σ² = mean((x - μ)²) (divide by d, not d - 1) and eps inside the
square root, as PyTorch's nn.LayerNorm does.
"""

import numpy as np

from ._arrays import as_float


def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """Normalise x: (..., d) over its last axis; gamma, beta: (d,) or None."""
    x = as_float(x, "x")
    if x.ndim == 0:
        raise ValueError("x should have shape (..., d) with at least one axis, got a scalar")
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise TypeError(f"eps should be a number >= 0, got {eps!r}")
    if not eps >= 0:  # also rejects NaN
        raise ValueError(f"eps should be a number >= 0, got {eps!r}")
    d = x.shape[-1]
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    if eps == 0 and (var == 0).any():
        raise ValueError("with eps = 0 a constant row has variance 0 and LayerNorm would divide 0 by 0: "
                         "use eps > 0 (the usual 1e-5)")
    out = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        gamma = as_float(gamma, "gamma")
        if gamma.shape != (d,):
            raise ValueError(f"gamma should have shape (d,) = ({d},), got {gamma.shape}")
        out = out * gamma
    if beta is not None:
        beta = as_float(beta, "beta")
        if beta.shape != (d,):
            raise ValueError(f"beta should have shape (d,) = ({d},), got {beta.shape}")
        out = out + beta
    return out


def _check_sublayer(sublayer):
    if not callable(sublayer):
        raise TypeError(f"sublayer should be a function of x: (..., d) -> (..., d), got {type(sublayer).__name__} "
                        f"{sublayer!r:.60}")


def _residual_input(x, sublayer_out, where):
    out = as_float(sublayer_out, "sublayer(x)")
    if out.shape != x.shape:
        raise ValueError(
            f"the residual add x + sublayer(...) needs matching shapes: x is {x.shape} "
            f"but sublayer({where}) returned {out.shape}"
        )
    return out


def post_ln(x, sublayer, eps=1e-5):
    """Post-LN (original Transformer): LN(x + sublayer(x)); x: (..., d)."""
    _check_sublayer(sublayer)
    x = as_float(x, "x")
    return layer_norm(x + _residual_input(x, sublayer(x), "x"), eps=eps)


def pre_ln(x, sublayer, eps=1e-5):
    """Pre-LN (GPT-2 and later): x + sublayer(LN(x)); x: (..., d)."""
    _check_sublayer(sublayer)
    x = as_float(x, "x")
    return x + _residual_input(x, sublayer(layer_norm(x, eps=eps)), "LN(x)")
