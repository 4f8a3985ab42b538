"""Notebook 01's mistakes: the pre-activation, ReLU, its derivative, the sign cases."""

import numpy as np

from .. import activations as act
from .mistake import Mistake


def _dot(x, w):
    return np.asarray(x, float) @ np.asarray(w, float)


def _zero_grad_as(z, value):
    z = np.asarray(z, float)
    return np.where(z == 0, value, (z > 0).astype(float))


PREACTIVATION = (
    Mistake("missing_b", "your z equals x · w without b: add the bias after the dot product.",
            lambda x, w, b: _dot(x, w)),
    Mistake("relu_in_preactivation", "your z already went through ReLU: the pre-activation is x · w + b, before σ.",
            lambda x, w, b: act.relu(_dot(x, w) + b)),
    Mistake("bias_in_every_term", "you added b to every product x_i·w_i before summing, which adds d·b: add b once.",
            lambda x, w, b: (np.asarray(x, float) * np.asarray(w, float) + b).sum(axis=-1)),
    Mistake("not_summed", "you returned the products x_i·w_i (+ b) without summing over the last axis: "
            "z is one number per token.", lambda x, w, b: np.asarray(x, float) * np.asarray(w, float) + b),
)

RELU = (
    Mistake("min_for_max", "you kept the negative part, min(0, z): ReLU is max(0, z).",
            lambda z: np.minimum(np.asarray(z, float), 0.0)),
    Mistake("abs_for_relu", "you returned |z|: ReLU sends a negative z to 0, not to -z.",
            lambda z: np.abs(np.asarray(z, float))),
    Mistake("step_for_relu", "you returned 1 where z > 0, which is ReLU's derivative: ReLU passes z itself.",
            lambda z: _zero_grad_as(z, 0.0)),
)

RELU_GRAD = (
    Mistake("grad_one_at_zero", "you returned 1 at z = 0 (z >= 0): the convention here, as in PyTorch, is 0 "
            "(test z > 0).", lambda z: _zero_grad_as(z, 1.0)),
    Mistake("grad_half_at_zero", "you returned 0.5 at z = 0: a valid subgradient, but the convention here, as in "
            "PyTorch, is 0.", lambda z: _zero_grad_as(z, 0.5)),
    Mistake("relu_for_grad", "you returned ReLU(z) itself: its derivative is 1 where z > 0 and 0 elsewhere.",
            lambda z: act.relu(z)),
    Mistake("sign_for_grad", "you returned sign(z), which is -1 for z < 0: ReLU is flat there, so its slope is 0.",
            lambda z: np.sign(np.asarray(z, float))),
)

# sign_case returns a label, not an array: each compute gives the label the mistake would.
SIGN_CASE = (
    Mistake("zero_as_b", "you put z = 0 in case B (z <= 0, or an else branch): B is z < 0, C is z == 0 exactly.",
            lambda z: "A" if float(z) > 0 else "B"),
    Mistake("zero_as_a", "you put z = 0 in case A (z >= 0): A is z > 0, C is z == 0 exactly.",
            lambda z: "A" if float(z) >= 0 else "B"),
    Mistake("zero_by_tolerance", "you called a tiny nonzero z case C (a tolerance such as np.isclose(z, 0)): "
            "C means exactly 0.0; a tiny z < 0 is case B, a tiny z > 0 case A.",
            lambda z: "C" if abs(float(z)) <= 1e-8 else "A" if float(z) > 0 else "B"),
    Mistake("zero_output_as_c", "you decided by ReLU's output (0 means C): a negative z gives 0 too, and is case B.",
            lambda z: "A" if float(z) > 0 else "C"),
    Mistake("a_b_swapped", "A and B are swapped: A is z > 0 (ReLU passes z), B is z < 0 (ReLU gives 0).",
            lambda z: "B" if float(z) > 0 else "A" if float(z) < 0 else "C"),
    Mistake("negative_zero_as_b", "you put -0.0 in case B (np.signbit or math.copysign reads its sign bit): -0.0 == 0 "
            "is True, so it is case C; compare z with 0 instead.",
            lambda z: "B" if np.signbit(float(z)) else "A" if float(z) > 0 else "C"),
)

CATALOGUE = {"preactivation": PREACTIVATION, "sign_case": SIGN_CASE, "relu": RELU, "relu_grad": RELU_GRAD}
