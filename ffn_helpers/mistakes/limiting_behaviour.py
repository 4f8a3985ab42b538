"""Notebook 08's mistakes: sigmoid, SiLU and GELU that survive every finite float64.

These formulas are right on paper; they fail in float64 by overflowing (with a
warning) or cancelling.
"""

import numpy as np

from .._lazy import special
from .activations import GELU, SIGMOID_SIGN, SILU_CONFUSED_WITH
from .mistake import Mistake


def _as_f64(z):
    return np.asarray(z, float)


def _naive_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-_as_f64(z)))


def _exp_ratio_sigmoid(z):
    e = np.exp(_as_f64(z))
    return e / (1.0 + e)


def _where_sigmoid(z):
    z = _as_f64(z)
    return np.where(z >= 0, 1.0 / (1.0 + np.exp(-z)), np.exp(z) / (1.0 + np.exp(z)))


def _tanh_sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * _as_f64(z)))


# The two mistakes sigmoid and silu_stable share: one explanation, each exercise's own wrong result.
_WHERE_BOTH = ("where_evaluates_both_branches", "np.where(condition, a, b) computes a and b for every z, so the "
               "branch it discards still overflows and warns: compute each branch only on its own entries (boolean "
               "masks), or use scipy.special.expit.")
_TANH_CANCELLATION = ("tanh_cancellation", "σ(z) = (1 + tanh(z/2)) / 2 cancels for very negative z (1 + tanh(z/2) "
                      "is the difference of two numbers near 1) and gives 0 below about z = -38, where σ(z), and so "
                      "SiLU, is still a normal number.")

SIGMOID = (
    Mistake("naive_sigmoid_overflow", "1 / (1 + exp(-z)) overflows in exp(-z) for z below about -709.78 "
            "(with a RuntimeWarning): use exp(z) / (1 + exp(z)) for negative z, or scipy.special.expit.",
            _naive_sigmoid),
    Mistake("exp_ratio_overflow", "exp(z) / (1 + exp(z)) overflows for z above about 709.78 and gives "
            "inf / inf = NaN: use 1 / (1 + exp(-z)) for z >= 0.", _exp_ratio_sigmoid),
    Mistake(*_WHERE_BOTH, _where_sigmoid),
    Mistake(*_TANH_CANCELLATION, _tanh_sigmoid),
    SIGMOID_SIGN.computing(lambda z: _naive_sigmoid(-_as_f64(z))),
)

SILU_STABLE = (
    Mistake("naive_silu_overflow", "z / (1 + exp(-z)) overflows in exp(-z) for z below about -709.78 "
            "(with a RuntimeWarning): multiply z by a stable sigmoid instead.",
            lambda z: _as_f64(z) / (1.0 + np.exp(-_as_f64(z)))),
    Mistake("silu_exp_ratio_overflow", "z·exp(z) / (1 + exp(z)) overflows for z above about 709.78 and gives "
            "NaN: use a sigmoid that picks its formula by the sign of z.",
            lambda z: _as_f64(z) * _exp_ratio_sigmoid(z)),
    Mistake(*_WHERE_BOTH, lambda z: _as_f64(z) * _where_sigmoid(z)),
    Mistake(*_TANH_CANCELLATION, lambda z: _as_f64(z) * _tanh_sigmoid(z)),
) + SILU_CONFUSED_WITH


def _erfc_sign_gelu(z):
    return 0.5 * _as_f64(z) * special().erfc(_as_f64(z) / np.sqrt(2.0))


GELU_EXACT = GELU + (
    Mistake("erfc_sign", "erfc(z/√2)/2 is Φ(-z) = 1 - Φ(z); the normal CDF is Φ(z) = erfc(-z/√2)/2.",
            _erfc_sign_gelu),
)

CATALOGUE = {"sigmoid": SIGMOID, "silu_stable": SILU_STABLE, "gelu_exact": GELU_EXACT}
