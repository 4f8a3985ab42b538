r"""The FFN as a module: parameters, forward pass, backward pass, gradient check.

    FFN(x) = σ(x W1 + b1) W2 + b2,   x: (..., d_model)

The references for notebook 09, built in the notebook's steps: `xavier_init`
(Xavier-normal weights drawn in a fixed order from `np.random.default_rng(seed)`,
zero biases or none), `count_parameters`, `ffn_backward` (the gradients of the
scalar L = Σ grad_out ⊙ FFN(x); the forward pass is `ffn.ffn_forward`), and the
class `FeedForwardNetwork` that assembles them. `numerical_gradient` and
`relative_error` check such gradients.
"""

import math

import numpy as np

from ._arrays import as_float
from ._lazy import special
from .activations import relu_grad
from .ffn import ffn_forward, ffn_trace

# Relative error ‖a - n‖ / max(‖a‖ + ‖n‖, tiny) of an analytic gradient a against a centred difference n.
GRAD_CHECK_GOOD = 1e-7  # at or below: the analytic gradient is right
GRAD_CHECK_WRONG = 1e-2  # above: it is wrong (in between: look closer, e.g. a ReLU kink within h of z)

_TINY = np.finfo(np.float64).tiny
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# φ(z) = e^{-z²/2}/√(2π) is 0 in float64 beyond |z| ≈ 38.6; capping |z| keeps z² from overflowing.
_PDF_CAP = 40.0


def gelu_grad(z):
    r"""dGELU/dz = Φ(z) + z φ(z), φ the standard normal density; no warning for any finite z."""
    z = as_float(z, "z")
    with np.errstate(under="ignore"):  # φ underflows to 0 in the tails: that is its value
        pdf = _INV_SQRT_2PI * np.exp(-0.5 * np.square(np.minimum(np.abs(z), _PDF_CAP)))
        return special().ndtr(z) + z * pdf


def silu_grad(z):
    r"""dSiLU/dz = s (1 + z (1 - s)) with s = sigmoid(z); no warning for any finite z."""
    z = as_float(z, "z")
    s = special().expit(z)
    return s * (1.0 + z * (1.0 - s))


ACTIVATION_GRADS = {"relu": relu_grad, "gelu": gelu_grad, "silu": silu_grad}


def _size(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} should be a positive integer, got {value!r}")
    return int(value)


def xavier_std(d_model, d_ff):
    r"""The Xavier-normal standard deviation √(2 / (d_model + d_ff)) (fan-in plus fan-out)."""
    return math.sqrt(2.0 / (_size(d_model, "d_model") + _size(d_ff, "d_ff")))


def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): W1 then W2 from rng.normal(0, std), rng = np.random.default_rng(seed); zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    when `use_bias` is False (and then nothing is drawn for them: the weights stay the same).
    """
    d_model, d_ff = _size(d_model, "d_model"), _size(d_ff, "d_ff")
    if not isinstance(use_bias, (bool, np.bool_)):
        raise ValueError(f"use_bias should be True or False, got {use_bias!r}")
    std = xavier_std(d_model, d_ff)
    rng = np.random.default_rng(seed)
    # The draw order is part of the contract: a learner's code with the same seed matches exactly.
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    return W1, np.zeros(d_ff), W2, np.zeros(d_model)


def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts: the entries of W1, W2, and of b1, b2 unless they are None (an int)."""
    params = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
    missing = [name for name in ("W1", "W2") if params[name] is None]
    if missing:
        raise ValueError(f"{' and '.join(missing)} should be arrays, got None (only the biases may be None)")
    return int(sum(as_float(p, name).size for name, p in params.items() if p is not None))


def ffn_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    r"""Gradients of L = Σ grad_out ⊙ FFN(x); grad_out: the shape of FFN(x), (..., d_model).

    Returns {"W1", "b1", "W2", "b2", "x"}, each shaped like what it differentiates
    ("b1" and "b2" are None when those biases are None). Tokens (all leading axes of x) add up:
    ∂L/∂W2 = hᵀ G, ∂L/∂b2 = Σ G, ∂L/∂z = (G W2ᵀ) ⊙ σ'(z), ∂L/∂W1 = xᵀ ∂L/∂z,
    ∂L/∂b1 = Σ ∂L/∂z, ∂L/∂x = ∂L/∂z W1ᵀ.
    """
    if activation not in ACTIVATION_GRADS:
        valid = ", ".join(repr(k) for k in ACTIVATION_GRADS)
        raise ValueError(f"activation should be one of {valid}, got {activation!r}")
    x, z, h, y = ffn_trace(x, W1, b1, W2, b2, activation)
    G = as_float(grad_out, "grad_out")
    if G.shape != y.shape:
        raise ValueError(f"grad_out should have the shape of FFN(x), {y.shape}, got {G.shape}")
    W1, W2 = as_float(W1, "W1"), as_float(W2, "W2")
    d_model, d_ff = W1.shape
    dz = (G @ W2.T) * ACTIVATION_GRADS[activation](z)
    # Flatten the token axes so one matrix product sums over every token.
    x2, h2 = x.reshape(-1, d_model), h.reshape(-1, d_ff)
    G2, dz2 = G.reshape(-1, d_model), dz.reshape(-1, d_ff)
    return {
        "W1": x2.T @ dz2,
        "b1": None if b1 is None else dz2.sum(axis=0),
        "W2": h2.T @ G2,
        "b2": None if b2 is None else G2.sum(axis=0),
        "x": dz @ W1.T,
    }


class FeedForwardNetwork:
    """FFN(x) = σ(x W1 + b1) W2 + b2 with its parameters, a forward and a backward pass.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); the biases are
    None when `use_bias` is False. `activation` is "relu", "gelu" or "silu". Each method is
    one of the functions above applied to the model's current parameters.
    """

    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        """Parameters from `xavier_init(d_model, d_ff, use_bias, seed)`."""
        if activation not in ACTIVATION_GRADS:
            valid = ", ".join(repr(k) for k in ACTIVATION_GRADS)
            raise ValueError(f"activation should be one of {valid}, got {activation!r}")
        self.W1, self.b1, self.W2, self.b2 = xavier_init(d_model, d_ff, use_bias, seed)
        self.activation = activation

    def num_parameters(self):
        """How many numbers training adjusts: the entries of W1, W2 and of b1, b2 if present."""
        return count_parameters(self.W1, self.b1, self.W2, self.b2)

    def __call__(self, x):
        """FFN(x) with the current parameters; x: (..., d_model) -> (..., d_model)."""
        return ffn_forward(x, self.W1, self.b1, self.W2, self.b2, self.activation)

    def backward(self, x, grad_out):
        """`ffn_backward` with the current parameters: {"W1", "b1", "W2", "b2", "x"}."""
        return ffn_backward(x, grad_out, self.W1, self.b1, self.W2, self.b2, self.activation)

    def trace(self, x):
        """Every stage of the forward pass, `FFNTrace(x, z, h, y)`."""
        return ffn_trace(x, self.W1, self.b1, self.W2, self.b2, self.activation)


def numerical_gradient(f, x, h=1e-5):
    r"""Centred differences (f(x + h eᵢ) - f(x - h eᵢ)) / 2h for every entry i of x.

    f maps an array shaped like x to a number; returns an array shaped like x.
    x itself is left unchanged (f sees a float64 copy).
    """
    if not (isinstance(h, (int, float, np.floating)) and not isinstance(h, bool) and h > 0 and math.isfinite(h)):
        raise ValueError(f"h should be a positive finite step, got {h!r}")
    x = as_float(x, "x").copy()
    grad = np.empty_like(x)
    flat, grad_flat = x.reshape(-1), grad.reshape(-1)  # views: x is a fresh C-ordered copy

    def value(step):
        out = np.asarray(f(x))
        if out.size != 1:
            raise ValueError(f"f should return a single number, got an array of shape {out.shape} at step {step}")
        return float(out.reshape(()))

    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        f_plus = value(f"x[{i}] + h")
        flat[i] = old - h
        f_minus = value(f"x[{i}] - h")
        flat[i] = old
        grad_flat[i] = (f_plus - f_minus) / (2.0 * h)
    return grad


def relative_error(analytic, numeric, *, elementwise=False):
    r"""|a - n| / max(|a| + |n|, tiny): 0 when both are 0, at most 1.

    By default |·| is the Euclidean norm of the whole array (one number per parameter);
    entry by entry (`elementwise=True`), an entry far below the centred difference's
    noise floor, about ε·|L|/h, can score 1 though the gradient is right.
    """
    a, n = as_float(analytic, "analytic"), as_float(numeric, "numeric")
    if a.shape != n.shape:
        raise ValueError(f"analytic and numeric should have the same shape, got {a.shape} and {n.shape}")
    if elementwise:
        return np.abs(a - n) / np.maximum(np.abs(a) + np.abs(n), _TINY)
    return float(np.linalg.norm(a - n) / max(np.linalg.norm(a) + np.linalg.norm(n), _TINY))


def numerical_gradients(model, x, grad_out, h=1e-5):
    """Centred-difference gradients of L = Σ grad_out ⊙ model(x), keyed like `model.backward`.

    `model` is any callable with attributes W1, b1, W2, b2 (None for an absent bias),
    so a learner's own class can be checked too.
    """
    x = as_float(x, "x")
    grad_out = as_float(grad_out, "grad_out")
    grads = {}
    for name in ("W1", "b1", "W2", "b2"):
        param = getattr(model, name)
        if param is None:
            grads[name] = None
            continue

        def loss(value, name=name, param=param):
            setattr(model, name, value)
            try:
                return float(np.sum(grad_out * model(x)))
            finally:
                setattr(model, name, param)

        grads[name] = numerical_gradient(loss, param, h)
    grads["x"] = numerical_gradient(lambda v: float(np.sum(grad_out * model(v))), x, h)
    return grads


def gradient_check(model, x, grad_out, h=1e-5):
    """{name: relative error of model.backward's gradient against centred differences} (norms)."""
    analytic = model.backward(x, grad_out)
    numeric = numerical_gradients(model, x, grad_out, h)
    return {name: relative_error(analytic[name], numeric[name]) for name in analytic if analytic[name] is not None}
