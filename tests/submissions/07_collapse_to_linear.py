"""Alternative answers for 07_collapse_to_linear."""

from . import Wrong

_COLLAPSE_MATMUL = '''import numpy as np

def collapse_linear(W1, b1, W2, b2):
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    return W1 @ W2, b1 @ W2 + b2
'''

# Probe the two-step map: its value at 0 is b, and the basis vectors give the rows of W.
_COLLAPSE_PROBE = '''import numpy as np

def collapse_linear(W1, b1, W2, b2):
    def two_steps(x):
        return (x @ W1 + b1) @ W2 + b2
    d_model = np.shape(W1)[0]
    b = two_steps(np.zeros(d_model))
    W = two_steps(np.eye(d_model)) - b
    return W, b
'''

_AFFINE_COMBINATIONS = '''import numpy as np

def is_affine(f, d_in, n_trials=20, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        scale = 10.0 ** rng.uniform(-2, 3)
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        rhs = a * fx + (1 - a) * fy
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + size)):
            return False
    return True
'''

# g(x) = f(x) - f(0) must be additive and homogeneous; points on fixed scales 0.01 ... 1000.
_AFFINE_OFFSET = '''import numpy as np

def is_affine(f, d_in, n_trials=20, seed=0):
    rng = np.random.default_rng(seed)
    f0 = np.asarray(f(np.zeros(d_in)), dtype=float)

    def g(v):
        return np.asarray(f(v), dtype=float) - f0

    scales = [0.01, 1.0, 30.0, 1000.0]
    for trial in range(n_trials):
        s = scales[trial % len(scales)]
        x, y = rng.uniform(-s, s, size=(2, d_in))
        c = rng.uniform(-3, 3)
        gx, gy = g(x), g(y)
        tol = 1e-8 * (1 + np.abs(f0).max() + np.abs(gx).max() + np.abs(gy).max())
        if np.abs(g(x + y) - gx - gy).max() > tol or np.abs(g(c * x) - c * gx).max() > 3 * tol:
            return False
    return True
'''

CORRECT = {
    "matmul-combinations": {"collapse_linear": _COLLAPSE_MATMUL, "is_affine": _AFFINE_COMBINATIONS},
    "probe-offset": {"collapse_linear": _COLLAPSE_PROBE, "is_affine": _AFFINE_OFFSET},
}

WRONG = [
    Wrong("collapse-wrong-order", "collapse_linear", _COLLAPSE_MATMUL.replace("W1 @ W2,", "W2 @ W1,"),
          loses=("test_collapse_linear", "test_collapse_linear_hidden"), diagnosis="wrong_order"),
    # W-7 cannot see this one (there b1 + b2 = b1 W2 + b2); the hidden tests can.
    Wrong("collapse-bias-sum", "collapse_linear", _COLLAPSE_MATMUL.replace("b1 @ W2 + b2", "b1 + b2"),
          loses=("test_collapse_linear_hidden",), diagnosis="bias_sum"),
    Wrong("collapse-missing-b2", "collapse_linear", _COLLAPSE_MATMUL.replace("b1 @ W2 + b2", "b1 @ W2"),
          loses=("test_collapse_linear", "test_collapse_linear_hidden"), diagnosis="missing_b2"),
    # PyTorch's default dtype: exact on W-7's small integers, rounded on the hidden random weights.
    Wrong("collapse-float32", "collapse_linear", _COLLAPSE_MATMUL.replace("dtype=float", "dtype=np.float32"),
          loses=("test_collapse_linear_hidden",)),
    Wrong("affine-tests-linearity", "is_affine", '''import numpy as np

def is_affine(f, d_in, n_trials=20, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(size=(2, d_in))
        if not np.allclose(f(x + y), np.asarray(f(x)) + np.asarray(f(y))):
            return False
    return True
''', loses=("test_is_affine", "test_is_affine_hidden"), diagnosis="tests_linearity"),
    # Right near the origin; the hidden function that bends at x_0 = 20 slips through.
    Wrong("affine-narrow-sampling", "is_affine",
          _AFFINE_COMBINATIONS.replace("scale = 10.0 ** rng.uniform(-2, 3)", "scale = 1.0"),
          loses=("test_is_affine_hidden",), diagnosis="narrow_sampling"),
    # Exact equality: rounding makes even an affine map look bent.
    Wrong("affine-exact-equality", "is_affine", '''import numpy as np

def is_affine(f, d_in, n_trials=20, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(size=(2, d_in))
        a = rng.uniform()
        if not np.array_equal(f(a * x + (1 - a) * y), a * np.asarray(f(x)) + (1 - a) * np.asarray(f(y))):
            return False
    return True
''', loses=("test_is_affine", "test_is_affine_hidden")),
]
