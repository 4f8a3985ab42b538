"""Alternative answers for 09_ffn_module (the capstone).

A correct variant replaces the whole class cell and the numerical_gradient cell;
each wrong variant is a correct one with exactly one mistake in it.
"""

from . import Wrong

# Tensordot over the token axes; init through standard_normal (the same draws as rng.normal(0, std)).
_CLASS_TENSORDOT = '''import numpy as np
from scipy import special


class FeedForwardNetwork:
    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        self.activation = activation
        std = (2.0 / (d_model + d_ff)) ** 0.5
        rng = np.random.default_rng(seed)
        self.W1 = std * rng.standard_normal((d_model, d_ff))
        self.W2 = std * rng.standard_normal((d_ff, d_model))
        self.b1 = np.zeros(d_ff) if use_bias else None
        self.b2 = np.zeros(d_model) if use_bias else None

    def num_parameters(self):
        d_model, d_ff = self.W1.shape
        return 2 * d_model * d_ff + (d_ff + d_model if self.b1 is not None else 0)

    def _sigma(self, z):
        if self.activation == "relu":
            return np.maximum(z, 0.0)
        if self.activation == "gelu":
            return 0.5 * z * special.erfc(-z / np.sqrt(2.0))
        return z * special.expit(z)

    def _sigma_grad(self, z):
        if self.activation == "relu":
            return np.where(z > 0, 1.0, 0.0)
        if self.activation == "gelu":
            pdf = np.exp(-0.5 * np.minimum(np.abs(z), 40.0) ** 2) / np.sqrt(2.0 * np.pi)
            return special.ndtr(z) + z * pdf
        s = special.expit(z)
        return s + z * s * (1.0 - s)

    def _pre(self, x):
        z = x @ self.W1
        return z if self.b1 is None else z + self.b1

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        h = self._sigma(self._pre(x))
        y = h @ self.W2
        return y if self.b2 is None else y + self.b2

    def backward(self, x, grad_out):
        x = np.asarray(x, dtype=float)
        G = np.asarray(grad_out, dtype=float)
        z = self._pre(x)
        h = self._sigma(z)
        dz = (G @ self.W2.T) * self._sigma_grad(z)
        tokens = tuple(range(x.ndim - 1))
        return {
            "W1": np.tensordot(x, dz, axes=(tokens, tokens)),
            "b1": None if self.b1 is None else dz.sum(axis=tokens),
            "W2": np.tensordot(h, G, axes=(tokens, tokens)),
            "b2": None if self.b2 is None else G.sum(axis=tokens),
            "x": dz @ self.W1.T,
        }
'''

# One token at a time, outer products accumulated; einsum forward; rng.normal(size=...) * std.
_CLASS_LOOP = '''import math

import numpy as np
from scipy import special


class FeedForwardNetwork:
    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        if activation not in ("relu", "gelu", "silu"):
            raise ValueError(f"unknown activation {activation!r}")
        self.d_model, self.d_ff, self.activation = d_model, d_ff, activation
        rng = np.random.default_rng(seed)
        std = math.sqrt(2 / (d_model + d_ff))
        self.W1 = rng.normal(size=(d_model, d_ff)) * std
        self.W2 = rng.normal(size=(d_ff, d_model)) * std
        self.b1, self.b2 = (np.zeros(d_ff), np.zeros(d_model)) if use_bias else (None, None)

    def num_parameters(self):
        return sum(p.size for p in (self.W1, self.b1, self.W2, self.b2) if p is not None)

    def sigma(self, z):
        if self.activation == "relu":
            return np.where(z > 0, z, 0.0)
        if self.activation == "gelu":
            return z * special.ndtr(z)
        return z / (1.0 + np.exp(-np.clip(z, -700.0, None)))

    def sigma_prime(self, z):
        if self.activation == "relu":
            return (z > 0) * 1.0
        if self.activation == "gelu":
            return special.ndtr(z) + z * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        s = special.expit(z)
        return s * (1 + z * (1 - s))

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        z = np.einsum("...i,ij->...j", x, self.W1)
        if self.b1 is not None:
            z = z + self.b1
        y = np.einsum("...j,jk->...k", self.sigma(z), self.W2)
        if self.b2 is not None:
            y = y + self.b2
        return y

    def backward(self, x, grad_out):
        x = np.asarray(x, dtype=float)
        G = np.asarray(grad_out, dtype=float)
        gW1, gW2 = np.zeros_like(self.W1), np.zeros_like(self.W2)
        gb1, gb2 = np.zeros(self.d_ff), np.zeros(self.d_model)
        gx = np.zeros_like(x)
        for idx in np.ndindex(x.shape[:-1]):
            z = x[idx] @ self.W1 + (0.0 if self.b1 is None else self.b1)
            dz = (self.W2 @ G[idx]) * self.sigma_prime(z)
            gW2 += np.outer(self.sigma(z), G[idx])
            gb2 += G[idx]
            gW1 += np.outer(x[idx], dz)
            gb1 += dz
            gx[idx] = self.W1 @ dz
        use_bias = self.b1 is not None
        return {"W1": gW1, "b1": gb1 if use_bias else None, "W2": gW2, "b2": gb2 if use_bias else None, "x": gx}
'''

_NUMGRAD_FLAT = '''import numpy as np


def numerical_gradient(f, x, h=1e-5):
    x = np.array(x, dtype=float, order="C")
    flat = x.reshape(-1)
    grad = np.empty(x.size)
    for i in range(x.size):
        saved = flat[i]
        flat[i] = saved + h
        up = f(x)
        flat[i] = saved - h
        down = f(x)
        flat[i] = saved
        grad[i] = (up - down) / (2 * h)
    return grad.reshape(x.shape)
'''

_NUMGRAD_UNIT_VECTORS = '''import numpy as np


def numerical_gradient(f, x, h=1e-5):
    x = np.asarray(x, dtype=float)
    grad = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[index] = h
        grad[index] = (f(x + step) - f(x - step)) / (2 * h)
    return grad
'''


def _swap(source, old, new):
    """`source` with the one occurrence of `old` replaced (fails loudly if the template changed)."""
    if source.count(old) != 1:
        raise ValueError(f"expected exactly one {old!r} in the template")
    return source.replace(old, new)


CORRECT = {
    "tensordot-flat": {"FeedForwardNetwork": _CLASS_TENSORDOT, "numerical_gradient": _NUMGRAD_FLAT},
    "loop-unit-vectors": {"FeedForwardNetwork": _CLASS_LOOP, "numerical_gradient": _NUMGRAD_UNIT_VECTORS},
}

_C = _CLASS_TENSORDOT
_T = "test_FeedForwardNetwork_"
_LAYER2 = (_T + "backward_layer2", _T + "backward_layer2_hidden")
_LAYER1 = (_T + "backward_layer1", _T + "backward_layer1_hidden")
_GELU = (_T + "backward_gelu", _T + "backward_gelu_hidden")

WRONG = [
    Wrong("init-fan-in-only", "FeedForwardNetwork",
          _swap(_C, "std = (2.0 / (d_model + d_ff)) ** 0.5", "std = (1.0 / d_model) ** 0.5"),
          loses=(_T + "init", _T + "init_hidden"), diagnosis="xavier_fan_in_only"),
    Wrong("init-variance-as-std", "FeedForwardNetwork",
          _swap(_C, "std = (2.0 / (d_model + d_ff)) ** 0.5", "std = 2.0 / (d_model + d_ff)"),
          loses=(_T + "init", _T + "init_hidden"), diagnosis="variance_as_std"),
    Wrong("init-draw-order", "FeedForwardNetwork",
          _swap(_C, "        self.W1 = std * rng.standard_normal((d_model, d_ff))\n"
                    "        self.W2 = std * rng.standard_normal((d_ff, d_model))\n",
                "        self.W2 = std * rng.standard_normal((d_ff, d_model))\n"
                "        self.W1 = std * rng.standard_normal((d_model, d_ff))\n"),
          loses=(_T + "init", _T + "init_hidden"), diagnosis="draw_order_swapped"),
    Wrong("count-without-biases", "FeedForwardNetwork",
          _swap(_C, "return 2 * d_model * d_ff + (d_ff + d_model if self.b1 is not None else 0)",
                "return 2 * d_model * d_ff"),
          loses=(_T + "num_parameters", _T + "num_parameters_hidden"), diagnosis="forgot_biases"),
    Wrong("forward-ignores-activation", "FeedForwardNetwork",
          _swap(_C, "h = self._sigma(self._pre(x))", "h = np.maximum(self._pre(x), 0.0)"),
          loses=(_T + "forward_hidden",), diagnosis="activation_ignored"),
    Wrong("backward-no-mask", "FeedForwardNetwork",
          _swap(_C, "dz = (G @ self.W2.T) * self._sigma_grad(z)", "dz = G @ self.W2.T"),
          loses=_LAYER1 + _GELU, diagnosis="missing_activation_grad"),
    Wrong("backward-mask-at-zero", "FeedForwardNetwork",
          _swap(_C, "return np.where(z > 0, 1.0, 0.0)", "return np.where(z >= 0, 1.0, 0.0)"),
          loses=(_T + "backward_layer1_hidden",), diagnosis="relu_mask_at_zero"),
    Wrong("backward-gelu-no-density", "FeedForwardNetwork",
          _swap(_C, "return special.ndtr(z) + z * pdf", "return special.ndtr(z)"),
          loses=_GELU, diagnosis="gelu_grad_missing_density"),
    Wrong("backward-bias-wrong-axis", "FeedForwardNetwork",
          _swap(_swap(_C, "dz.sum(axis=tokens)", "dz.sum(axis=-1)"), "G.sum(axis=tokens)", "G.sum(axis=-1)"),
          loses=_LAYER2 + _LAYER1, diagnosis="bias_grad_wrong_axis"),
    Wrong("backward-bias-mean", "FeedForwardNetwork",
          _swap(_swap(_C, "dz.sum(axis=tokens)", "dz.mean(axis=tokens)"), "G.sum(axis=tokens)",
                "G.mean(axis=tokens)"),
          loses=_LAYER2 + _LAYER1, diagnosis="bias_grad_mean"),
    Wrong("backward-weights-transposed", "FeedForwardNetwork",
          _swap(_swap(_C, "np.tensordot(x, dz, axes=(tokens, tokens))", "np.tensordot(dz, x, axes=(tokens, tokens))"),
                "np.tensordot(h, G, axes=(tokens, tokens))", "np.tensordot(G, h, axes=(tokens, tokens))"),
          loses=_LAYER2 + _LAYER1 + _GELU, diagnosis="weight_grad_transposed"),
    Wrong("backward-W2-from-z", "FeedForwardNetwork",
          _swap(_C, "np.tensordot(h, G, axes=(tokens, tokens))", "np.tensordot(z, G, axes=(tokens, tokens))"),
          loses=_LAYER2, diagnosis="W2_grad_uses_z"),
    Wrong("numgrad-forward-difference", "numerical_gradient",
          _swap(_NUMGRAD_FLAT, "flat[i] = saved - h\n", "flat[i] = saved\n").replace("/ (2 * h)", "/ h"),
          loses=("test_numerical_gradient", "test_numerical_gradient_hidden"), diagnosis="forward_difference"),
    Wrong("numgrad-over-h", "numerical_gradient", _swap(_NUMGRAD_FLAT, "/ (2 * h)", "/ h"),
          loses=("test_numerical_gradient", "test_numerical_gradient_hidden"), diagnosis="divided_by_h"),
    Wrong("numgrad-fixed-h", "numerical_gradient",
          _swap(_NUMGRAD_FLAT, "    x = np.array(x, dtype=float, order=\"C\")\n",
                "    h = 1e-5  # the step, fixed\n    x = np.array(x, dtype=float, order=\"C\")\n"),
          loses=("test_numerical_gradient_hidden",), diagnosis="ignored_h"),
    Wrong("numgrad-no-restore", "numerical_gradient",
          _swap(_swap(_NUMGRAD_FLAT, "x = np.array(x, dtype=float, order=\"C\")", "x = np.asarray(x, dtype=float)"),
                "        flat[i] = saved\n", ""),
          loses=("test_numerical_gradient", "test_numerical_gradient_hidden")),
]
