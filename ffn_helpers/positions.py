"""Does a function of a sequence mix positions? The reference detector of notebook 05."""

import numpy as np


def mixes_positions(f, X, seed=0):
    """True when changing some token j of X changes some output row i != j of f(X).

    X: (n, d_model), one token per row; f maps it to (n, d_out). Every token is moved in turn
    by a random step, and the other rows are compared with a tight tolerance.
    """
    X = np.array(X, dtype=float)
    if X.ndim < 2:
        raise ValueError(f"X should have shape (n, d_model), one token per row, got {X.shape}")
    rng = np.random.default_rng(seed)
    before = np.asarray(f(X), dtype=float)
    if before.shape[:1] != X.shape[:1]:
        raise ValueError(f"f should return one row per token ({len(X)}), got shape {before.shape}")
    for j in range(len(X)):
        moved = X.copy()
        moved[j] += rng.normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        others = np.arange(len(X)) != j
        if not np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12):
            return True
    return False
