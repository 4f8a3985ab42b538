"""Notebook 02's mistakes: the FFN's forward pass, nn.Linear's layout, the share of inactive hidden units.

The forward pass's mistakes take an optional `activation` (the name of σ, ReLU by
default), so that notebook 09's ffn_module_forward shares them.
"""

import numpy as np

from .. import activations as act
from .mistake import Mistake


def ffn_variant(x, W1, b1, W2, b2, activation="relu", *, on_output=False, b1_after_sigma=False):
    """σ(x W1 + b1) W2 + b2 (a bias None is left out), or the variant a mistake computes."""
    sigma = act.get_activation(activation)
    z = np.asarray(x, float) @ W1
    h = sigma(z) + b1 if b1_after_sigma else sigma(z + (0 if b1 is None else b1))
    y = h @ W2 + (0 if b2 is None else b2)
    return sigma(y) if on_output else y


FFN_FORWARD = (
    Mistake("missing_b1", "b1 is missing: the hidden units' pre-activation is x W1 + b1 (add b1 before σ).",
            lambda x, W1, b1, W2, b2, activation="relu": ffn_variant(x, W1, None, W2, b2, activation)),
    Mistake("missing_b2", "b2 is missing: it is added last, after the product with W2 (h W2 + b2; for the "
            "collapsed map, b = b1 W2 + b2).",
            lambda x, W1, b1, W2, b2, activation="relu": ffn_variant(x, W1, b1, W2, None, activation)),
    Mistake("no_activation", "your output equals (x W1 + b1) W2 + b2, with no σ between the layers: apply the "
            "activation σ to x W1 + b1.",
            lambda x, W1, b1, W2, b2, activation="relu": ffn_variant(x, W1, b1, W2, b2, "identity")),
    Mistake("activation_on_output", "σ was applied to the output as well: it goes between the layers only.",
            lambda x, W1, b1, W2, b2, activation="relu": ffn_variant(
                x, W1, b1, W2, b2, activation, on_output=True)),
    Mistake("activation_after_W2_only", "σ was applied once, after W2, to (x W1 + b1) W2 + b2: it belongs between "
            "the layers, on x W1 + b1, and the output has none: σ(x W1 + b1) W2 + b2.",
            lambda x, W1, b1, W2, b2, activation="relu": act.get_activation(activation)(
                ffn_variant(x, W1, b1, W2, b2, "identity"))),
    Mistake("bias_after_activation", "you added b1 after σ: the bias belongs inside, σ(x W1 + b1).",
            lambda x, W1, b1, W2, b2, activation="relu": ffn_variant(
                x, W1, b1, W2, b2, activation, b1_after_sigma=True)),
)

LINEAR_TORCH = (
    Mistake("torch_layout", "nn.Linear stores weight as (out_features, in_features): compute x @ weight.T + bias.",
            lambda x, weight, bias: np.asarray(x, float) @ weight + (0 if bias is None else bias)),
    Mistake("missing_bias", "your output equals x @ weight.T without the bias: add bias.",
            lambda x, weight, bias: np.asarray(x, float) @ np.asarray(weight, float).T),
)


def _z(x, W1, b1):
    return np.asarray(x, float) @ np.asarray(W1, float) + np.asarray(b1, float)


def _inactive(x, W1, b1):
    """h == 0 for every (token, unit): ReLU gives 0 exactly when z <= 0."""
    return _z(x, W1, b1) <= 0


MISSING_B1, MISSING_B2 = FFN_FORWARD[:2]  # notebooks 02, 07, 09 and 10 share them
COUNT_NOT_SHARE = Mistake("count_not_share", "you returned a count: divide it by the number of cases (the "
                          "(token, unit) pairs, or the keys) to return a share between 0 and 1.",
                          lambda x, W1, b1: float(np.sum(_inactive(x, W1, b1))))

DEAD_FRACTION = (
    Mistake("strict_negative", "you counted z < 0 only: ReLU outputs 0 at z = 0 too (case C), so count z <= 0, "
            "or h == 0.", lambda x, W1, b1: float(np.mean(_z(x, W1, b1) < 0))),
    MISSING_B1.computing(lambda x, W1, b1: float(np.mean(np.asarray(x, float) @ np.asarray(W1, float) <= 0))),
    Mistake("active_fraction", "you returned the share of active units (h > 0): the exercise asks for the "
            "inactive share (h == 0).", lambda x, W1, b1: float(np.mean(~_inactive(x, W1, b1)))),
    COUNT_NOT_SHARE,
    Mistake("per_token_share", "you returned one share per token: average over every token too, to get one number.",
            lambda x, W1, b1: np.mean(_inactive(x, W1, b1), axis=-1)),
    Mistake("always_inactive_units", "you counted the units that are 0 for every token (dead units); the exercise "
            "asks for the share of all (token, unit) outputs that are 0.",
            lambda x, W1, b1: float(np.mean(np.all(_inactive(x, W1, b1).reshape(-1, np.shape(W1)[1]), axis=0)))),
)

CATALOGUE = {"ffn_forward": FFN_FORWARD, "linear_torch": LINEAR_TORCH, "dead_fraction": DEAD_FRACTION}
