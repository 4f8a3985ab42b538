"""A catalogue of the mistakes learners make, each as the wrong result it produces.

Each `Mistake` has a stable `key` (used in grading reports), a one-line
`explanation` a teacher can read out, and `compute`, the wrong function
applied to the same inputs as the right one. `checks.diagnose` compares a
learner's result with these to name the likely mistake.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import activations as act
from .norm import layer_norm


@dataclass(frozen=True)
class Mistake:
    key: str
    explanation: str
    compute: Callable  # takes the exercise's own arguments


def _ffn(x, W1, b1, W2, b2, sigma=act.relu, out=None):
    z = np.asarray(x, float) @ W1 + (0 if b1 is None else b1)
    y = sigma(z) @ W2 + (0 if b2 is None else b2)
    return y if out is None else out(y)


def _layer_norm(x, gamma=None, beta=None, eps=1e-5, *, ddof=0, eps_outside=False, axis=-1):
    x = np.asarray(x, float)
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)
    out = (x - mean) / (np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps))
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out


FFN = (
    Mistake("missing_b1", "your output equals the FFN without b1: did you forget to add b1 before σ?",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, None, W2, b2)),
    Mistake("missing_b2", "your output equals the FFN without b2: did you forget to add b2 at the end?",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, None)),
    Mistake("no_activation", "your output equals (x W1 + b1) W2 + b2 with no ReLU: apply σ to the hidden layer.",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, b2, sigma=lambda z: z)),
    Mistake("activation_on_output", "your output has ReLU applied to it as well: σ goes between the layers only.",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, b2, out=act.relu)),
    Mistake("bias_after_activation", "you added b1 after the ReLU: the bias belongs inside, σ(x W1 + b1).",
            lambda x, W1, b1, W2, b2: (act.relu(np.asarray(x, float) @ W1) + b1) @ W2 + b2),
)

LINEAR_TORCH = (
    Mistake("torch_layout", "nn.Linear stores weight as (out_features, in_features): compute x @ weight.T + bias.",
            lambda x, weight, bias: np.asarray(x, float) @ weight + (0 if bias is None else bias)),
    Mistake("missing_bias", "your output equals x @ weight.T without the bias: add bias.",
            lambda x, weight, bias: np.asarray(x, float) @ np.asarray(weight, float).T),
)

GELU = (
    Mistake("gelu_tanh_for_exact", "this is the tanh approximation of GELU; the exercise asks for the exact z·Φ(z).",
            lambda z: act.gelu_tanh(z)),
    Mistake("gelu_sigmoid_approx", "this is the sigmoid approximation z·σ(1.702 z); the exercise asks for the exact z·Φ(z).",
            lambda z: np.asarray(z, float) * act.sigmoid(1.702 * np.asarray(z, float))),
    Mistake("silu_for_gelu", "this is SiLU, z·σ(z), not GELU: GELU weights z by the normal CDF Φ(z).",
            lambda z: act.silu(z)),
    Mistake("sigmoid_for_gelu", "this is the sigmoid σ(z) itself; GELU is z·Φ(z).",
            lambda z: act.sigmoid(z)),
    Mistake("erf_cancellation", "0.5·z·(1 + erf(z/√2)) cancels to -0.0 in the far negative tail: use erfc or ndtr.",
            lambda z: _naive_gelu(z)),
)

SILU = (
    Mistake("sigmoid_for_silu", "this is σ(z) itself; SiLU multiplies by z: z·σ(z).", lambda z: act.sigmoid(z)),
    Mistake("gelu_for_silu", "this is GELU, z·Φ(z); SiLU is z·σ(z).", lambda z: act.gelu(z)),
)

LAYER_NORM = (
    Mistake("unbiased_variance", "you used the unbiased variance (divide by d - 1); LayerNorm divides by d (ddof=0).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, ddof=1)),
    Mistake("eps_outside_sqrt", "eps belongs inside the square root: (x - μ) / √(σ² + eps).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, eps_outside=True)),
    Mistake("wrong_axis", "you normalised over the wrong axis: LayerNorm normalises each token over its features (axis=-1).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, axis=0)),
    Mistake("no_eps", "you left out eps: it keeps the division safe when a row is constant.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, 0.0)),
    Mistake("ignored_gamma_beta", "gamma and beta were ignored: scale by gamma, then add beta.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, None, None, eps)),
)

POST_LN = (
    Mistake("normalised_before_add", "you normalised before the residual add; post-LN is LN(x + sublayer(x)).",
            lambda x, sublayer, eps=1e-5: layer_norm(x, eps=eps) + sublayer(x)),
    Mistake("pre_ln_for_post_ln", "this is pre-LN, x + sublayer(LN(x)); post-LN adds first, then normalises.",
            lambda x, sublayer, eps=1e-5: x + sublayer(layer_norm(x, eps=eps))),
    Mistake("missing_residual", "the residual x is missing: LN(x + sublayer(x)), not LN(sublayer(x)).",
            lambda x, sublayer, eps=1e-5: layer_norm(sublayer(x), eps=eps)),
)

PRE_LN = (
    Mistake("post_ln_for_pre_ln", "this is post-LN, LN(x + sublayer(x)); pre-LN normalises the sublayer's input only.",
            lambda x, sublayer, eps=1e-5: layer_norm(x + sublayer(x), eps=eps)),
    Mistake("normalised_residual", "you added LN(x) instead of x: the residual path carries x unchanged.",
            lambda x, sublayer, eps=1e-5: layer_norm(x, eps=eps) + sublayer(layer_norm(x, eps=eps))),
    Mistake("missing_residual", "the residual x is missing: x + sublayer(LN(x)).",
            lambda x, sublayer, eps=1e-5: sublayer(layer_norm(x, eps=eps))),
)


def _naive_gelu(z):
    from ._lazy import special

    z = np.asarray(z, float)
    return 0.5 * z * (1.0 + special().erf(z / np.sqrt(2.0)))


CATALOGUE = {
    "ffn": FFN, "linear_torch": LINEAR_TORCH, "gelu": GELU, "silu": SILU,
    "layer_norm": LAYER_NORM, "post_ln": POST_LN, "pre_ln": PRE_LN,
}


def by_key(key):
    """Every catalogue entry with this key (keys repeat across exercises, e.g. missing_residual)."""
    return [m for group in CATALOGUE.values() for m in group if m.key == key]
