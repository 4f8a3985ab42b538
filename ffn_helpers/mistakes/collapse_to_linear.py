"""Notebook 07's mistakes: collapsing two linear layers into one, and testing whether a map is affine."""

import numpy as np

from .forward_pass import MISSING_B2
from .mistake import Mistake, in_part

# collapse_linear returns (W, b); the notebook compares each on its own.
COLLAPSE_LINEAR = in_part("W", (
    Mistake("wrong_order", "W = W2 W1 is the wrong order: x W1 comes first, then · W2, so W = W1 W2.",
            lambda W1, b1, W2, b2: np.asarray(W2, float) @ np.asarray(W1, float)),
    Mistake("elementwise_product", "W1 * W2 multiplies entry by entry; composing the maps needs the matrix "
            "product W1 @ W2.", lambda W1, b1, W2, b2: np.asarray(W1, float) * np.asarray(W2, float)),
)) + in_part("b", (
    Mistake("bias_sum", "b1 passes through W2 as well: b = b1 W2 + b2, not b1 + b2.",
            lambda W1, b1, W2, b2: np.asarray(b1, float) + np.asarray(b2, float)),
    MISSING_B2.computing(lambda W1, b1, W2, b2: np.asarray(b1, float) @ np.asarray(W2, float)),
    Mistake("b2_only", "b1 is missing: it reaches the output through W2, so b = b1 W2 + b2.",
            lambda W1, b1, W2, b2: np.asarray(b2, float).copy()),
    Mistake("column_convention", "you multiplied W2 @ b1 (column vectors); with row vectors b1 is on the left: "
            "b1 @ W2.", lambda W1, b1, W2, b2: np.asarray(W2, float) @ np.asarray(b1, float) + b2),
))



def _affine_combination_detector(f, d_in, n_trials, seed, scale):
    """The usual test, f(a x + (1 - a) y) = a f(x) + (1 - a) f(y), at one fixed scale."""
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        lhs = np.asarray(f(a * x + (1 - a) * y), float)
        rhs = a * np.asarray(f(x), float) + (1 - a) * np.asarray(f(y), float)
        if not np.allclose(lhs, rhs, rtol=1e-8, atol=1e-8 * (1 + np.abs(rhs).max(initial=0))):
            return False
    return True


def _linearity_detector(f, d_in, n_trials=20, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(size=(2, d_in))
        c = rng.normal()
        fx, fy = np.asarray(f(x), float), np.asarray(f(y), float)
        if not (np.allclose(f(x + y), fx + fy) and np.allclose(f(c * x), c * fx)):
            return False
    return True


IS_AFFINE = (
    Mistake("tests_linearity", "you tested linearity, f(x + y) = f(x) + f(y): an affine map x W + b with b ≠ 0 fails "
            "that. Test f(x) - f(0) instead, or affine combinations f(a x + (1 - a) y) = a f(x) + (1 - a) f(y).",
            _linearity_detector),
    Mistake("narrow_sampling", "all your test points are near the origin, where this function is affine; it bends "
            "further out. Sample on several scales (say up to norm 1000).",
            lambda f, d_in, n_trials=20, seed=0: _affine_combination_detector(f, d_in, n_trials, seed, 1.0)),
)


CATALOGUE = {"collapse_linear": COLLAPSE_LINEAR, "is_affine": IS_AFFINE}
