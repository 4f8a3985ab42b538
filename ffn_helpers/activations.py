r"""Activation functions σ, elementwise on float64 arrays of any shape.

All are written so that every finite input gives a finite output with no
floating-point warning, even under `np.errstate(all="raise")` (the textbook
formulas overflow or cancel; see notebook 08). At ±inf they return their limits
(-0.0 for the smooth ones at -inf). NaN propagates.
"""

import math

import numpy as np

from ._arrays import as_float
from ._lazy import special

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def relu(z):
    r"""ReLU(z) = max(0, z)."""
    return np.maximum(as_float(z, "z"), 0.0)


def relu_grad(z):
    r"""dReLU/dz: 1 where z > 0, else 0 (the convention at z = 0 is 0, as in PyTorch)."""
    z = as_float(z, "z")
    return np.where(np.isnan(z), np.nan, (z > 0).astype(np.float64))


def sigmoid(z):
    r"""σ(z) = 1 / (1 + e^{-z}), via scipy's expit, which never overflows."""
    return special().expit(as_float(z, "z"))


def has_neg_inf(z):
    """Does float64 array z hold -inf? (fmin skips NaN; one pass, several times cheaper than isneginf.)"""
    return z.size > 0 and np.fmin.reduce(z, axis=None) == -np.inf


def _times_weight(z, weight):
    """z · weight where weight → 0 as z → -inf; at z = -inf give the limit -0.0, not -inf · 0 = NaN."""
    with np.errstate(invalid="ignore", under="ignore"):
        out = z * weight
    if has_neg_inf(z):
        out = np.where(np.isneginf(z), -0.0, out)
    return out


def silu(z):
    r"""SiLU(z) = z · sigmoid(z) (also called swish)."""
    z = as_float(z, "z")
    return _times_weight(z, special().expit(z))


def gelu(z):
    r"""Exact GELU(z) = z · Φ(z), Φ the standard normal CDF.

    `ndtr` computes Φ through erfc for negative z, so the Gaussian tail survives:
    GELU(-10) ≈ -7.62e-23, where 0.5·z·(1 + erf(z/√2)) cancels to -0.0.
    """
    z = as_float(z, "z")
    return _times_weight(z, special().ndtr(z))


def gelu_tanh(z):
    r"""The tanh approximation 0.5·z·(1 + tanh(√(2/π)(z + 0.044715 z³))).

    Kept in the published form, so it cancels to -0.0 for z ≲ -7.19 (1 + tanh rounds to 0), as
    frameworks' versions do; z³ may overflow to ±inf for |z| > 1e102, and
    underflow for tiny |z|, harmlessly.
    """
    z = as_float(z, "z")
    with np.errstate(over="ignore", under="ignore"):
        inner = _SQRT_2_OVER_PI * (z + 0.044715 * z**3)
        return _times_weight(z, 0.5 * (1.0 + np.tanh(inner)))


def identity(z):
    """No activation: σ(z) = z (used to show the collapse to a linear map)."""
    return as_float(z, "z")


ACTIVATIONS = {
    "relu": relu,
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "silu": silu,
    "sigmoid": sigmoid,
    "identity": identity,
}


def get_activation(name_or_fn):
    """Look up an activation by name (see `ACTIVATIONS`); callables pass through."""
    if callable(name_or_fn):
        return name_or_fn
    try:
        return ACTIVATIONS[name_or_fn]
    except (KeyError, TypeError):
        valid = ", ".join(repr(k) for k in ACTIVATIONS)
        raise ValueError(f"unknown activation {name_or_fn!r}; expected one of {valid}") from None
