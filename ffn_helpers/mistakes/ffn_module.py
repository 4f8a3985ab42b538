"""Notebook 09's mistakes: xavier_init, count_parameters, ffn_module_forward, ffn_module_backward,
the FeedForwardNetwork class that calls them, and numerical_gradient."""

import numpy as np

from .. import activations as act
from .._lazy import special
from ..module import ACTIVATION_GRADS
from .activations import GELU
from .forward_pass import FFN_FORWARD, ffn_variant
from .mistake import Mistake, in_part
from .parameter_budget import FFN_PARAM_COUNT


def _as_f64(z):
    return np.asarray(z, float)


def _init_draws(d_model, d_ff, seed, std, w2_first=False):
    rng = np.random.default_rng(seed)
    if w2_first:
        W2 = rng.normal(0.0, std, size=(d_ff, d_model))
        return {"W1": rng.normal(0.0, std, size=(d_model, d_ff)), "W2": W2}
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    return {"W1": W1, "W2": rng.normal(0.0, std, size=(d_ff, d_model))}


_WRONG_STDS = (
    ("xavier_fan_in_only", "the std uses d_model only, √(1/d_model) (LeCun's rule); Xavier-normal averages "
     "fan-in and fan-out: √(2/(d_model + d_ff)).", lambda d_model, d_ff: np.sqrt(1.0 / d_model)),
    ("he_std", "√(2/d_model) is He's std for ReLU layers; the exercise asks for Xavier-normal, "
     "√(2/(d_model + d_ff)).", lambda d_model, d_ff: np.sqrt(2.0 / d_model)),
    ("variance_as_std", "2/(d_model + d_ff) is the variance; the std is its square root.",
     lambda d_model, d_ff: 2.0 / (d_model + d_ff)),
    ("xavier_precedence", "every entry is off by one factor: √(2 / d_model + d_ff) divides first and adds d_ff "
     "after (operator precedence); the std is √(2 / (d_model + d_ff)), the sum in parentheses.",
     lambda d_model, d_ff: np.sqrt(2.0 / d_model + d_ff)),
)

MODULE_INIT_STD = tuple(Mistake(key, text, std) for key, text, std in _WRONG_STDS)

MODULE_INIT = tuple(
    Mistake(key, text,
            lambda name, d_model, d_ff, seed, std=std: _init_draws(d_model, d_ff, seed, std(d_model, d_ff))[name])
    for key, text, std in _WRONG_STDS
) + (
    Mistake("draw_order_swapped", "W2 was drawn before W1: with one generator the order matters; draw W1 first, "
            "then W2.", lambda name, d_model, d_ff, seed: _init_draws(
                d_model, d_ff, seed, np.sqrt(2.0 / (d_model + d_ff)), w2_first=True)[name]),
)


# xavier_init's checks compare the draws, args (name, d_model, d_ff, seed), and a sample's std, args (d_model, d_ff).
XAVIER_INIT = in_part("weights", MODULE_INIT) + in_part("std", MODULE_INIT_STD)

ACTIVATION_IGNORED = Mistake(
    "activation_ignored", "your output is the ReLU FFN whatever `activation` says: use the activation given (a class "
    "keeps it from __init__ and passes it on).",
    lambda x, W1, b1, W2, b2, activation: ffn_variant(x, W1, b1, W2, b2, "relu"))

def _tanh_gelu_ffn(x, W1, b1, W2, b2, activation="relu"):
    if activation != "gelu":
        raise ValueError("this mistake is about GELU")
    return ffn_variant(x, W1, b1, W2, b2, "gelu_tanh")


# 04's gelu_tanh_for_exact, made in a whole forward pass: σ is the tanh approximation where the exact GELU is asked.
TANH_GELU_FOR_EXACT = GELU[0].computing(_tanh_gelu_ffn)

FFN_MODULE_FORWARD = FFN_FORWARD + (ACTIVATION_IGNORED, TANH_GELU_FOR_EXACT)


def _module_grad(name, x, G, W1, b1, W2, b2, activation, *, dsigma=None, bias_sum=None, transpose=False,
                 W2_from_z=False, x_grad_untransposed=False):
    """One gradient of L = Σ G ⊙ FFN(x), computed the way a particular mistake does."""
    x, G = _as_f64(x), _as_f64(G)
    z = x @ W1 + (0 if b1 is None else b1)
    h = act.get_activation(activation)(z)
    dz = (G @ W2.T) * (ACTIVATION_GRADS[activation](z) if dsigma is None else dsigma(z))
    d_model, d_ff = W1.shape
    x2, h2, z2 = x.reshape(-1, d_model), h.reshape(-1, d_ff), z.reshape(-1, d_ff)
    G2, dz2 = G.reshape(-1, d_model), dz.reshape(-1, d_ff)
    bias_sum = bias_sum or _flat_sum
    grads = {
        "W1": dz2.T @ x2 if transpose else x2.T @ dz2,
        "b1": None if b1 is None else bias_sum(dz),
        "W2": G2.T @ h2 if transpose else (z2 if W2_from_z else h2).T @ G2,
        "b2": None if b2 is None else bias_sum(G),
        "x": dz @ W1 if x_grad_untransposed else dz @ W1.T,
    }
    return grads[name]


def _flat_sum(g):
    return g.reshape(-1, g.shape[-1]).sum(axis=0)


def _flat_mean(g):
    return g.reshape(-1, g.shape[-1]).mean(axis=0)


def _relu_mask_at_zero(name, x, G, W1, b1, W2, b2, activation):
    if activation != "relu":
        raise ValueError("this mistake is about ReLU's mask")
    return _module_grad(name, x, G, W1, b1, W2, b2, activation, dsigma=lambda z: (z >= 0).astype(float))


def _gelu_grad_missing_density(name, x, G, W1, b1, W2, b2, activation):
    if activation != "gelu":
        raise ValueError("this mistake is about GELU's derivative")
    return _module_grad(name, x, G, W1, b1, W2, b2, activation, dsigma=special().ndtr)


FFN_MODULE_BACKWARD = (
    Mistake("missing_activation_grad", "∂L/∂z = ∂L/∂h ⊙ σ'(z): you left out σ'(z) (for ReLU, the mask z > 0), "
            "so gradient flows back through units that were off.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, dsigma=lambda z: 1.0)),
    Mistake("relu_mask_at_zero", "your mask is z >= 0; ReLU's derivative at z = 0 is taken as 0 (as in PyTorch): "
            "use z > 0.",
            _relu_mask_at_zero),
    Mistake("gelu_grad_missing_density", "GELU'(z) = Φ(z) + z·φ(z): the term z·φ(z) (φ the normal density) "
            "is missing.",
            _gelu_grad_missing_density),
    Mistake("bias_grad_mean", "a bias is shared by every token, so its gradient is the sum over tokens, "
            "not the mean.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, bias_sum=_flat_mean)),
    Mistake("bias_grad_wrong_axis", "you summed the bias gradient over the feature axis; sum over the tokens "
            "(every axis but the last), so it has the bias's shape.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, bias_sum=lambda g: g.sum(axis=-1))),
    Mistake("weight_grad_transposed", "a weight's gradient has the weight's shape: ∂L/∂W1 = xᵀ ∂L/∂z is "
            "(d_model, d_ff) and ∂L/∂W2 = hᵀ G is (d_ff, d_model); yours is transposed.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, transpose=True)),
    Mistake("W2_grad_uses_z", "∂L/∂W2 = hᵀ G uses the hidden values h = σ(z), not the pre-activation z.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, W2_from_z=True)),
    Mistake("x_grad_untransposed", "∂L/∂x = ∂L/∂z W1ᵀ: W1 needs its transpose here.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, x_grad_untransposed=True)),
    Mistake("relu_grads_for_any_activation", "these are ReLU's gradients whatever `activation` says: pass the "
            "activation on, and use its σ and σ'.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(name, x, G, W1, b1, W2, b2, "relu")),
)

def _initial_ffn(x, params, initial, activation):
    if initial is None:
        raise ValueError("no initial parameters to compare with")
    return ffn_variant(x, *initial, activation)


# The class's forward pass, args (x, params, initial, activation): `params` are the model's current
# W1, b1, W2, b2 (set by the test), `initial` the ones it was built with (or None). Its backward
# pass has ffn_module_backward's mistakes.
FEED_FORWARD_NETWORK = in_part("__call__", (
    Mistake("stale_parameters", "the output is the FFN with the parameters the model was built with: "
            "__call__ should use the current self.W1, self.b1, self.W2, self.b2, not copies kept from __init__.",
            _initial_ffn),
    ACTIVATION_IGNORED.computing(lambda x, params, initial, activation: ffn_variant(x, *params, "relu")),
    TANH_GELU_FOR_EXACT.computing(lambda x, params, initial, activation: _tanh_gelu_ffn(x, *params, activation)),
)) + in_part("backward", FFN_MODULE_BACKWARD)


def _difference_quotient(f, x, h, kind):
    x = _as_f64(x).copy()
    grad = np.empty_like(x)
    flat, out = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        f_plus = float(np.asarray(f(x)))
        flat[i] = old - h if kind != "forward" else old
        f_other = float(np.asarray(f(x)))
        flat[i] = old
        out[i] = (f_plus - f_other) / (h if kind in ("forward", "over_h") else 2.0 * h)
    return grad


NUMERICAL_GRADIENT = (
    Mistake("forward_difference", "this is the forward difference (f(x + h) - f(x)) / h, whose error "
            "shrinks like h; the centred one, (f(x + h) - f(x - h)) / 2h, is accurate to h².",
            lambda f, x, h=1e-5: _difference_quotient(f, x, h, "forward")),
    Mistake("divided_by_h", "the two evaluations are 2h apart: divide f(x + h) - f(x - h) by 2h, not h.",
            lambda f, x, h=1e-5: _difference_quotient(f, x, h, "over_h")),
    Mistake("ignored_h", "your result uses h = 1e-5 whatever h is passed: use the argument.",
            lambda f, x, h=1e-5: _difference_quotient(f, x, 1e-5, "centred")),
)


CATALOGUE = {
    "xavier_init": XAVIER_INIT, "count_parameters": FFN_PARAM_COUNT, "ffn_module_forward": FFN_MODULE_FORWARD,
    "ffn_module_backward": FFN_MODULE_BACKWARD, "FeedForwardNetwork": FEED_FORWARD_NETWORK,
    "numerical_gradient": NUMERICAL_GRADIENT,
}
