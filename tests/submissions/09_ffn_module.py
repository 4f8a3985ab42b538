"""Alternative answers for 09_ffn_module (the capstone).

The module is built in steps: xavier_init, count_parameters, ffn_module_forward and
ffn_module_backward, then the FeedForwardNetwork class that calls them, and
numerical_gradient. A correct variant replaces every answer cell; each wrong variant
is a correct cell with exactly one mistake in it. The class's checks run with the
course's four functions substituted, so a wrong function costs its own cells only.
"""

from . import Wrong

# --- variant "tensordot-flat": standard_normal draws, counting by shapes, matrix products, tensordot

_INIT_STANDARD_NORMAL = '''import numpy as np


def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    std = (2.0 / (d_model + d_ff)) ** 0.5
    rng = np.random.default_rng(seed)
    W1 = std * rng.standard_normal((d_model, d_ff))
    W2 = std * rng.standard_normal((d_ff, d_model))
    b1 = np.zeros(d_ff) if use_bias else None
    b2 = np.zeros(d_model) if use_bias else None
    return W1, b1, W2, b2
'''

_COUNT_BY_SHAPES = '''def count_parameters(W1, b1, W2, b2):
    d_model, d_ff = W1.shape
    n = 2 * d_model * d_ff
    if b1 is not None:
        n += d_ff
    if b2 is not None:
        n += d_model
    return n
'''

_FORWARD_MATMUL = '''import numpy as np
from scipy import special


def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    z = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h = np.maximum(z, 0.0)
    elif activation == "gelu":
        h = 0.5 * z * special.erfc(-z / np.sqrt(2.0))
    else:
        h = z * special.expit(z)
    y = h @ W2
    return y if b2 is None else y + b2
'''

_BACKWARD_TENSORDOT = '''import numpy as np
from scipy import special


def _sigma_and_grad(z, activation):
    if activation == "relu":
        return np.maximum(z, 0.0), np.where(z > 0, 1.0, 0.0)
    if activation == "gelu":
        pdf = np.exp(-0.5 * np.minimum(np.abs(z), 40.0) ** 2) / np.sqrt(2.0 * np.pi)
        return z * special.ndtr(z), special.ndtr(z) + z * pdf
    s = special.expit(z)
    return z * s, s + z * s * (1.0 - s)


def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    x = np.asarray(x, dtype=float)
    G = np.asarray(grad_out, dtype=float)
    z = x @ W1 if b1 is None else x @ W1 + b1
    h, dsigma = _sigma_and_grad(z, activation)
    dz = (G @ W2.T) * dsigma
    tokens = tuple(range(x.ndim - 1))
    return {
        "W1": np.tensordot(x, dz, axes=(tokens, tokens)),
        "b1": None if b1 is None else dz.sum(axis=tokens),
        "W2": np.tensordot(h, G, axes=(tokens, tokens)),
        "b2": None if b2 is None else G.sum(axis=tokens),
        "x": dz @ W1.T,
    }
'''

_CLASS_KEYWORDS = '''class FeedForwardNetwork:
    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        self.activation = activation
        self.W1, self.b1, self.W2, self.b2 = xavier_init(d_model, d_ff, use_bias=use_bias, seed=seed)

    def num_parameters(self):
        return count_parameters(W1=self.W1, b1=self.b1, W2=self.W2, b2=self.b2)

    def __call__(self, x):
        return ffn_module_forward(x, W1=self.W1, b1=self.b1, W2=self.W2, b2=self.b2, activation=self.activation)

    def backward(self, x, grad_out):
        return ffn_module_backward(x, grad_out, W1=self.W1, b1=self.b1, W2=self.W2, b2=self.b2,
                                   activation=self.activation)
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

# --- variant "loop-unit-vectors": rng.normal(size=...) * std, sizes summed, einsum, one token at a time

_INIT_SCALED = '''import math

import numpy as np


def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    rng = np.random.default_rng(seed)
    std = math.sqrt(2 / (d_model + d_ff))
    W1 = rng.normal(size=(d_model, d_ff)) * std
    W2 = rng.normal(size=(d_ff, d_model)) * std
    if use_bias:
        return W1, np.zeros(d_ff), W2, np.zeros(d_model)
    return W1, None, W2, None
'''

_COUNT_SIZES = '''def count_parameters(W1, b1, W2, b2):
    return sum(p.size for p in (W1, b1, W2, b2) if p is not None)
'''

_FORWARD_EINSUM = '''import numpy as np
from scipy import special


def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    x = np.asarray(x, dtype=float)
    z = np.einsum("...i,ij->...j", x, W1)
    if b1 is not None:
        z = z + b1
    sigma = {"relu": lambda v: np.where(v > 0, v, 0.0), "gelu": lambda v: v * special.ndtr(v),
             "silu": lambda v: v / (1.0 + np.exp(-np.clip(v, -700.0, None)))}[activation]
    y = np.einsum("...j,jk->...k", sigma(z), W2)
    if b2 is not None:
        y = y + b2
    return y
'''

_BACKWARD_LOOP = '''import math

import numpy as np
from scipy import special


def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    x = np.asarray(x, dtype=float)
    G = np.asarray(grad_out, dtype=float)
    d_model, d_ff = W1.shape
    gW1, gW2 = np.zeros_like(W1), np.zeros_like(W2)
    gb1, gb2 = np.zeros(d_ff), np.zeros(d_model)
    gx = np.zeros_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        z = x[idx] @ W1 + (0.0 if b1 is None else b1)
        if activation == "relu":
            h, dsigma = np.where(z > 0, z, 0.0), (z > 0) * 1.0
        elif activation == "gelu":
            h = z * special.ndtr(z)
            dsigma = special.ndtr(z) + z * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        else:
            s = special.expit(z)
            h, dsigma = z * s, s * (1 + z * (1 - s))
        dz = (W2 @ G[idx]) * dsigma
        gW2 += np.outer(h, G[idx])
        gb2 += G[idx]
        gW1 += np.outer(x[idx], dz)
        gb1 += dz
        gx[idx] = W1 @ dz
    return {"W1": gW1, "b1": None if b1 is None else gb1, "W2": gW2, "b2": None if b2 is None else gb2, "x": gx}
'''

_CLASS_PARAMS_METHOD = '''class FeedForwardNetwork:
    """Keeps W1, b1, W2, b2 and reads them afresh at every call."""

    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        if activation not in ("relu", "gelu", "silu"):
            raise ValueError(f"unknown activation {activation!r}")
        params = xavier_init(d_model, d_ff, use_bias, seed)
        for name, value in zip(("W1", "b1", "W2", "b2"), params):
            setattr(self, name, value)
        self.activation = activation

    def params(self):
        return self.W1, self.b1, self.W2, self.b2

    def num_parameters(self):
        return int(count_parameters(*self.params()))

    def __call__(self, x):
        return ffn_module_forward(x, *self.params(), self.activation)

    def backward(self, x, grad_out):
        return ffn_module_backward(x, grad_out, *self.params(), self.activation)
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
    "tensordot-flat": {"xavier_init": _INIT_STANDARD_NORMAL, "count_parameters": _COUNT_BY_SHAPES,
                       "ffn_module_forward": _FORWARD_MATMUL, "ffn_module_backward": _BACKWARD_TENSORDOT,
                       "FeedForwardNetwork": _CLASS_KEYWORDS, "numerical_gradient": _NUMGRAD_FLAT},
    "loop-unit-vectors": {"xavier_init": _INIT_SCALED, "count_parameters": _COUNT_SIZES,
                          "ffn_module_forward": _FORWARD_EINSUM, "ffn_module_backward": _BACKWARD_LOOP,
                          "FeedForwardNetwork": _CLASS_PARAMS_METHOD, "numerical_gradient": _NUMGRAD_UNIT_VECTORS},
}

_INIT = ("test_xavier_init", "test_xavier_init_hidden")
_COUNT = ("test_count_parameters", "test_count_parameters_hidden")
_FORWARD = ("test_ffn_module_forward", "test_ffn_module_forward_hidden")
_B = "test_ffn_module_backward_"
_LAYER2 = (_B + "layer2", _B + "layer2_hidden")
_LAYER1 = (_B + "layer1", _B + "layer1_hidden")
_GELU = (_B + "gelu", _B + "gelu_hidden")
_CLASS = ("test_FeedForwardNetwork", "test_FeedForwardNetwork_hidden")
_NUMGRAD = ("test_numerical_gradient", "test_numerical_gradient_hidden")
_BW = _BACKWARD_TENSORDOT

WRONG = [
    Wrong("init-fan-in-only", "xavier_init",
          _swap(_INIT_STANDARD_NORMAL, "std = (2.0 / (d_model + d_ff)) ** 0.5", "std = (1.0 / d_model) ** 0.5"),
          loses=_INIT, diagnosis="xavier_fan_in_only"),
    Wrong("init-variance-as-std", "xavier_init",
          _swap(_INIT_STANDARD_NORMAL, "std = (2.0 / (d_model + d_ff)) ** 0.5", "std = 2.0 / (d_model + d_ff)"),
          loses=_INIT, diagnosis="variance_as_std"),
    Wrong("init-draw-order", "xavier_init",
          _swap(_INIT_STANDARD_NORMAL, "    W1 = std * rng.standard_normal((d_model, d_ff))\n"
                                       "    W2 = std * rng.standard_normal((d_ff, d_model))\n",
                "    W2 = std * rng.standard_normal((d_ff, d_model))\n"
                "    W1 = std * rng.standard_normal((d_model, d_ff))\n"),
          loses=_INIT, diagnosis="draw_order_swapped"),
    Wrong("count-without-biases", "count_parameters",
          _swap(_COUNT_BY_SHAPES,
                "    if b1 is not None:\n        n += d_ff\n    if b2 is not None:\n        n += d_model\n", ""),
          loses=_COUNT, diagnosis="forgot_biases"),
    Wrong("count-one-matrix", "count_parameters",
          _swap(_COUNT_BY_SHAPES, "n = 2 * d_model * d_ff", "n = d_model * d_ff"),
          loses=_COUNT, diagnosis="one_matrix"),
    Wrong("forward-ignores-activation", "ffn_module_forward",
          _swap(_FORWARD_MATMUL, 'if activation == "relu":', 'if True:  # every model is a ReLU one'),
          loses=("test_ffn_module_forward_hidden",), diagnosis="activation_ignored"),
    Wrong("forward-activation-on-output", "ffn_module_forward",
          _swap(_FORWARD_MATMUL, "    return y if b2 is None else y + b2\n",
                "    y = y if b2 is None else y + b2\n    return np.maximum(y, 0.0) if activation == 'relu' else y\n"),
          loses=_FORWARD, diagnosis="activation_on_output"),
    Wrong("forward-activation-after-W2-only", "ffn_module_forward",  # σ((x W1 + b1) W2 + b2), for every σ
          _swap(_swap(_FORWARD_MATMUL, "        z = z + b1\n", "        z = z + b1\n    z = z @ W2 if b2 is None else "
                      "z @ W2 + b2\n"), "    y = h @ W2\n    return y if b2 is None else y + b2\n", "    return h\n"),
          loses=_FORWARD, diagnosis="activation_after_W2_only"),
    Wrong("backward-no-mask", "ffn_module_backward", _swap(_BW, "dz = (G @ W2.T) * dsigma", "dz = G @ W2.T"),
          loses=_LAYER1 + _GELU, diagnosis="missing_activation_grad"),
    Wrong("backward-mask-at-zero", "ffn_module_backward",
          _swap(_BW, "np.where(z > 0, 1.0, 0.0)", "np.where(z >= 0, 1.0, 0.0)"),
          loses=(_B + "layer1_hidden",), diagnosis="relu_mask_at_zero"),
    Wrong("backward-gelu-no-density", "ffn_module_backward",
          _swap(_BW, "special.ndtr(z) + z * pdf", "special.ndtr(z)"),
          loses=_GELU, diagnosis="gelu_grad_missing_density"),
    Wrong("backward-relu-only", "ffn_module_backward",
          _swap(_BW, "h, dsigma = _sigma_and_grad(z, activation)", "h, dsigma = _sigma_and_grad(z, \"relu\")"),
          loses=_GELU, diagnosis="relu_grads_for_any_activation"),
    Wrong("backward-bias-wrong-axis", "ffn_module_backward",
          _swap(_swap(_BW, "dz.sum(axis=tokens)", "dz.sum(axis=-1)"), "G.sum(axis=tokens)", "G.sum(axis=-1)"),
          loses=_LAYER2 + _LAYER1 + _GELU, diagnosis="bias_grad_wrong_axis"),
    Wrong("backward-bias-mean", "ffn_module_backward",
          _swap(_swap(_BW, "dz.sum(axis=tokens)", "dz.mean(axis=tokens)"), "G.sum(axis=tokens)",
                "G.mean(axis=tokens)"),
          loses=_LAYER2 + _LAYER1 + (_B + "gelu_hidden",), diagnosis="bias_grad_mean"),  # one token: mean = sum
    Wrong("backward-weights-transposed", "ffn_module_backward",
          _swap(_swap(_BW, "np.tensordot(x, dz, axes=(tokens, tokens))", "np.tensordot(dz, x, axes=(tokens, tokens))"),
                "np.tensordot(h, G, axes=(tokens, tokens))", "np.tensordot(G, h, axes=(tokens, tokens))"),
          loses=_LAYER2 + _LAYER1 + _GELU, diagnosis="weight_grad_transposed"),
    Wrong("backward-W2-from-z", "ffn_module_backward",
          _swap(_BW, "np.tensordot(h, G, axes=(tokens, tokens))", "np.tensordot(z, G, axes=(tokens, tokens))"),
          loses=_LAYER2 + (_B + "layer1_hidden",) + _GELU, diagnosis="W2_grad_uses_z"),  # checks of all five
    Wrong("class-ignores-activation", "FeedForwardNetwork",
          _swap(_swap(_CLASS_KEYWORDS, "b2=self.b2, activation=self.activation)", "b2=self.b2)"),
                "b2=self.b2,\n                                   activation=self.activation)", "b2=self.b2)"),
          loses=_CLASS, diagnosis="activation_ignored"),
    Wrong("class-stale-parameters", "FeedForwardNetwork",
          _swap(_swap(_CLASS_PARAMS_METHOD, "        self.activation = activation\n",
                      "        self.activation = activation\n        self.initial = params\n"),
                "return ffn_module_forward(x, *self.params(), self.activation)",
                "return ffn_module_forward(x, *self.initial, self.activation)"),
          loses=_CLASS, diagnosis="stale_parameters"),
    Wrong("class-always-biases", "FeedForwardNetwork",
          _swap(_CLASS_KEYWORDS, "xavier_init(d_model, d_ff, use_bias=use_bias, seed=seed)",
                "xavier_init(d_model, d_ff, use_bias=True, seed=seed)"),
          loses=("test_FeedForwardNetwork_hidden",)),
    Wrong("class-backward-drops-activation", "FeedForwardNetwork",
          _swap(_CLASS_PARAMS_METHOD, "return ffn_module_backward(x, grad_out, *self.params(), self.activation)",
                "return ffn_module_backward(x, grad_out, *self.params())"),
          loses=_CLASS, diagnosis="relu_grads_for_any_activation"),
    Wrong("numgrad-forward-difference", "numerical_gradient",
          _swap(_NUMGRAD_FLAT, "flat[i] = saved - h\n", "flat[i] = saved\n").replace("/ (2 * h)", "/ h"),
          loses=_NUMGRAD, diagnosis="forward_difference"),
    Wrong("numgrad-over-h", "numerical_gradient", _swap(_NUMGRAD_FLAT, "/ (2 * h)", "/ h"),
          loses=_NUMGRAD, diagnosis="divided_by_h"),
    Wrong("numgrad-fixed-h", "numerical_gradient",
          _swap(_NUMGRAD_FLAT, "    x = np.array(x, dtype=float, order=\"C\")\n",
                "    h = 1e-5  # the step, fixed\n    x = np.array(x, dtype=float, order=\"C\")\n"),
          loses=("test_numerical_gradient_hidden",), diagnosis="ignored_h"),
    Wrong("numgrad-no-restore", "numerical_gradient",
          _swap(_swap(_NUMGRAD_FLAT, "x = np.array(x, dtype=float, order=\"C\")", "x = np.asarray(x, dtype=float)"),
                "        flat[i] = saved\n", ""),
          loses=_NUMGRAD),
]
