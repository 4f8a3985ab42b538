"""Notebook 04's mistakes: exact GELU, its tanh approximation, SiLU and the SwiGLU FFN."""

import numpy as np

from .. import activations as act
from .._lazy import special
from .mistake import Mistake


def _naive_gelu(z):
    z = np.asarray(z, float)
    return 0.5 * z * (1.0 + special().erf(z / np.sqrt(2.0)))


def _erf_gelu_without_sqrt2(z):
    z = np.asarray(z, float)
    return 0.5 * z * (1.0 + special().erf(z))


def _erf_gelu_over_two(z):
    z = np.asarray(z, float)
    return 0.5 * z * (1.0 + special().erf(z / 2.0))


def _normal_cdf(z):
    return special().ndtr(np.asarray(z, float))


# erf_cancellation differs from the exact GELU by less than 1e-15 in absolute terms
# (only the far tail, where GELU itself is tiny, is lost): a check names it only
# with an absolute tolerance below that, e.g. check(..., atol=0), on inputs like z = -10.
GELU = (
    Mistake("gelu_tanh_for_exact", "this is the tanh approximation of GELU; the exercise asks for the exact z·Φ(z).",
            lambda z: act.gelu_tanh(z)),
    Mistake("gelu_sigmoid_approx",
            "this is the sigmoid approximation z·σ(1.702 z); the exercise asks for the exact z·Φ(z).",
            lambda z: np.asarray(z, float) * act.sigmoid(1.702 * np.asarray(z, float))),
    Mistake("silu_for_gelu", "this is SiLU, z·σ(z), not GELU: GELU weights z by the normal CDF Φ(z).",
            lambda z: act.silu(z)),
    Mistake("sigmoid_for_gelu", "this is the sigmoid σ(z) itself; GELU is z·Φ(z).",
            lambda z: act.sigmoid(z)),
    Mistake("erf_cancellation", "0.5·z·(1 + erf(z/√2)) cancels to -0.0 in the far negative tail: use erfc or ndtr.",
            _naive_gelu),
    Mistake("erf_without_sqrt2", "Φ(z) = (1 + erf(z/√2))/2: you used erf(z) without dividing z by √2.",
            _erf_gelu_without_sqrt2),
    Mistake("cdf_for_gelu", "this is Φ(z) alone; GELU multiplies it by z: z·Φ(z).", _normal_cdf),
    Mistake("erf_over_two", "Φ(z) = (1 + erf(z/√2))/2: you divided z by 2, not by √2 ≈ 1.414.", _erf_gelu_over_two),
)


def _tanh_gelu(z, c=None, a=0.044715, half=0.5):
    z = np.asarray(z, float)
    c = np.sqrt(2.0 / np.pi) if c is None else c
    return half * z * (1.0 + np.tanh(c * (z + a * z**3)))


GELU_TANH = (
    Mistake("missing_cubic_term", "the 0.044715·z³ term is missing: tanh(√(2/π)·(z + 0.044715·z³)).",
            lambda z: _tanh_gelu(z, a=0.0)),
    Mistake("sqrt2_over_pi", "the constant is √(2/π) ≈ 0.7979, not √2/π ≈ 0.4502.",
            lambda z: _tanh_gelu(z, c=np.sqrt(2.0) / np.pi)),
    Mistake("sqrt_2pi", "the constant is √(2/π) ≈ 0.7979, the square root of 2 divided by π, not √(2π) ≈ 2.5066.",
            lambda z: _tanh_gelu(z, c=np.sqrt(2.0 * np.pi))),
    Mistake("missing_half", "your result is twice the approximation: it starts with 0.5·z·(1 + tanh(...)).",
            lambda z: _tanh_gelu(z, half=1.0)),
    Mistake("exact_for_tanh", "this is the exact GELU z·Φ(z); the exercise asks for the tanh approximation.",
            lambda z: act.gelu(z)),
)

SILU_CONFUSED_WITH = (  # another function returned for SiLU (notebook 08's silu_stable shares them)
    Mistake("sigmoid_for_silu", "this is σ(z) itself; SiLU multiplies by z: z·σ(z).", lambda z: act.sigmoid(z)),
    Mistake("gelu_for_silu", "this is GELU, z·Φ(z); SiLU is z·σ(z).", lambda z: act.gelu(z)),
)

SIGMOID_SIGN = Mistake("sigmoid_sign", "the sign in the sigmoid is flipped: 1 / (1 + e^z) is σ(-z); the sigmoid is "
                       "σ(z) = 1 / (1 + e^(-z)).", lambda z: act.silu(-np.asarray(z, float)) * -1.0)

SILU = SILU_CONFUSED_WITH + (SIGMOID_SIGN,)


def _swiglu(x, W_gate, W_up, W_down, gate=act.silu, combine=np.multiply, after=None):
    x = np.asarray(x, float)
    h = combine(gate(x @ W_gate), x @ W_up) if after is None else after((x @ W_gate) * (x @ W_up))
    return h @ W_down


SWIGLU_FFN = (
    Mistake("gate_up_swapped", "SiLU went on x W_up: it belongs on the gate, SiLU(x W_gate) ⊙ (x W_up).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_up, W_gate, W_down)),
    Mistake("missing_silu", "there is no SiLU: the gate is SiLU(x W_gate), not x W_gate.",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, gate=lambda a: a)),
    Mistake("sum_for_product", "you added the two branches; SwiGLU multiplies them elementwise (⊙).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, combine=np.add)),
    Mistake("silu_after_product", "SiLU was applied to the product; it applies to the gate only: "
            "SiLU(x W_gate) ⊙ (x W_up).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, after=act.silu)),
    Mistake("relu_for_silu", "the gate uses ReLU (that is ReGLU); SwiGLU's gate is SiLU(x W_gate).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, gate=act.relu)),
)

CATALOGUE = {"gelu": GELU, "gelu_tanh": GELU_TANH, "silu": SILU, "swiglu_ffn": SWIGLU_FFN}
