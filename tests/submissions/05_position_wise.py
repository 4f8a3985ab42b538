"""Alternative answers for 05_position_wise."""

from . import Wrong

_NDINDEX = '''import numpy as np

def ffn_per_token(X, W1, b1, W2, b2):
    X = np.asarray(X, dtype=float)
    out = np.empty(X.shape[:-1] + (np.shape(W2)[1],))
    for index in np.ndindex(X.shape[:-1]):
        out[index] = np.maximum(X[index] @ W1 + b1, 0) @ W2 + b2
    return out
'''

_FLATTEN = '''import numpy as np

def ffn_per_token(X, W1, b1, W2, b2):
    X = np.asarray(X, dtype=float)
    rows = X.reshape(-1, X.shape[-1])
    outputs = []
    for x in rows:
        z = x @ W1 + b1
        h = np.where(z > 0, z, 0.0)
        outputs.append(h @ W2 + b2)
    return np.array(outputs).reshape(X.shape[:-1] + (len(b2),))
'''

_EACH_TOKEN = '''import numpy as np

def mixes_positions(f, X):
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(0)
    before = np.asarray(f(X), dtype=float)
    for j in range(len(X)):
        moved = X.copy()
        moved[j] += rng.normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        others = np.arange(len(X)) != j
        if not np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12):
            return True
    return False
'''

# A finite-difference Jacobian, token by token and feature by feature: the
# dependence matrix of the notebook's figure, then a look off its diagonal.
_JACOBIAN = '''import numpy as np

def mixes_positions(f, X):
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    base = np.asarray(f(X), dtype=float)
    depends = np.zeros((n, n), dtype=bool)
    for j in range(n):
        for k in range(d):
            step = 1e-3 * max(1.0, abs(X[j, k]))
            moved = X.copy()
            moved[j, k] += step
            change = np.abs(np.asarray(f(moved), dtype=float) - base).reshape(n, -1)
            depends[:, j] |= change.max(axis=1) > 1e-9 * (1 + np.abs(base).max())
    return bool((depends & ~np.eye(n, dtype=bool)).any())
'''


def _one_token_detector(which):
    return f'''import numpy as np

def mixes_positions(f, X):
    X = np.asarray(X, dtype=float)
    before = np.asarray(f(X), dtype=float)
    for j in {which}:
        moved = X.copy()
        moved[j] += 1.0
        after = np.asarray(f(moved), dtype=float)
        others = np.arange(len(X)) != j % len(X)
        if not np.allclose(after[others], before[others]):
            return True
    return False
'''


_PERMUTATION = '''import numpy as np

def mixes_positions(f, X):
    X = np.asarray(X, dtype=float)
    order = np.arange(len(X))[::-1]
    return not np.allclose(f(X[order]), np.asarray(f(X))[order])
'''

# No loop at all: the exercise asks for a loop, but its checks compare values only,
# and the notebook says so; the batched answer earns full marks.
_BATCHED = '''import numpy as np

def ffn_per_token(X, W1, b1, W2, b2):
    return np.maximum(np.asarray(X, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
'''

CORRECT = {
    "ndindex-each-token": {"ffn_per_token": _NDINDEX, "mixes_positions": _EACH_TOKEN},
    "flatten-jacobian": {"ffn_per_token": _FLATTEN, "mixes_positions": _JACOBIAN},
    "batched-no-loop": {"ffn_per_token": _BATCHED},
}

WRONG = [
    Wrong("per-token-no-b1", "ffn_per_token", _NDINDEX.replace(" + b1, 0)", ", 0)"),
          loses=("test_ffn_per_token", "test_ffn_per_token_hidden"), diagnosis="missing_b1"),
    Wrong("per-token-no-relu", "ffn_per_token", _NDINDEX.replace("np.maximum(X[index] @ W1 + b1, 0)",
                                                                 "(X[index] @ W1 + b1)"),
          loses=("test_ffn_per_token", "test_ffn_per_token_hidden"), diagnosis="no_activation"),
    # Right on (n, d_model) input, but the output array has room for one axis of tokens only.
    Wrong("per-token-2d-only", "ffn_per_token", '''import numpy as np

def ffn_per_token(X, W1, b1, W2, b2):
    out = np.zeros((len(X), W2.shape[1]))
    for i in range(len(X)):
        out[i] = np.maximum(X[i] @ W1 + b1, 0) @ W2 + b2
    return out
''', loses=("test_ffn_per_token_hidden",)),
    Wrong("mixes-first-token-only", "mixes_positions", _one_token_detector("[0]"),
          loses=("test_mixes_positions", "test_mixes_positions_hidden"), diagnosis="perturbs_first_token_only"),
    Wrong("mixes-last-token-only", "mixes_positions", _one_token_detector("[-1]"),
          loses=("test_mixes_positions", "test_mixes_positions_hidden"), diagnosis="perturbs_last_token_only"),
    # Passes the five visible functions; the interior mean hides from it.
    Wrong("mixes-ends-only", "mixes_positions", _one_token_detector("[0, -1]"),
          loses=("test_mixes_positions_hidden",), diagnosis="perturbs_ends_only"),
    Wrong("mixes-permutation", "mixes_positions", _PERMUTATION,
          loses=("test_mixes_positions", "test_mixes_positions_hidden"), diagnosis="permutation_test"),
]
