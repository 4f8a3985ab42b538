"""Held-out pairs for 05_position_wise."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "05_position_wise"

CLASSMATE_PER_TOKEN = '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    tokens = X.reshape(-1, X.shape[-1])
    outputs = []
    for t in tokens:
        z = t @ W1 + b1
        outputs.append(np.maximum(z, 0) @ W2 + b2)
    return np.array(outputs).reshape(X.shape[:-1] + (len(b2),))
'''

PAIRS = [
    Pair("renamed", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    arr = np.asarray(X, dtype=float)
    result = np.empty(arr.shape[:-1] + (np.shape(W2)[1],))
    for pos in np.ndindex(arr.shape[:-1]):
        hidden = np.maximum(arr[pos] @ W1 + b1, 0.0)
        result[pos] = hidden @ W2 + b2
    return result
'''),
    Pair("commented", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    # output has the same leading shape, last axis d_model from W2
    out = np.empty(X.shape[:-1] + (np.shape(W2)[1],))
    # ndindex walks over every token position
    for index in np.ndindex(X.shape[:-1]):
        h = np.maximum(X[index] @ W1 + b1, 0.0)  # one token only
        out[index] = h @ W2 + b2
    return out
'''),
    Pair("reformatted", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    out = np.empty(X.shape[:-1] + (np.shape(W2)[1], ))
    for index in np.ndindex(X.shape[:-1]): h = np.maximum(X[index]@W1+b1, 0.0); out[index] = h@W2+b2
    return out
'''),
    Pair("dead_code", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    out = np.empty(X.shape[:-1] + (np.shape(W2)[1],))
    n_tokens = 0
    for index in np.ndindex(X.shape[:-1]):
        h = np.maximum(X[index] @ W1 + b1, 0.0)
        out[index] = h @ W2 + b2
        n_tokens += 1
    return out
'''),
    Pair("temporaries", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    lead = X.shape[:-1]
    d_out = np.shape(W2)[1]
    out = np.empty(lead + (d_out,))
    for index in np.ndindex(lead):
        token = X[index]
        z = token @ W1 + b1
        h = np.maximum(z, 0.0)
        out[index] = h @ W2 + b2
    return out
'''),
    Pair("free_cell", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    return loop_ffn(X, W1, b1, W2, b2)
''', free='''def loop_ffn(X, W1, b1, W2, b2):
    X = np.asarray(X, dtype=float)
    out = np.empty(X.shape[:-1] + (np.shape(W2)[1],))
    for index in np.ndindex(X.shape[:-1]):
        h = np.maximum(X[index] @ W1 + b1, 0.0)
        out[index] = h @ W2 + b2
    return out
'''),
    Pair("renamed", "ffn_per_token", CLASSMATE_PER_TOKEN, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    rows = X.reshape(-1, X.shape[-1])
    ys = []
    for r in rows:
        pre = r @ W1 + b1
        ys.append(np.maximum(pre, 0) @ W2 + b2)
    return np.array(ys).reshape(X.shape[:-1] + (len(b2),))
'''),
    Pair("parentheses", "ffn_per_token", CLASSMATE_PER_TOKEN, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    tokens = X.reshape((-1, X.shape[-1]))
    outputs = []
    for t in tokens:
        z = (t @ W1) + b1
        outputs.append((np.maximum(z, 0) @ W2) + b2)
    return (np.array(outputs)).reshape((X.shape[:-1]) + (len(b2),))
'''),
    Pair("independent", "ffn_per_token", SOLUTION, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        return np.maximum(X @ W1 + b1, 0) @ W2 + b2
    return np.stack([ffn_per_token(X[i], W1, b1, W2, b2) for i in range(X.shape[0])])
'''),
    Pair("independent", "ffn_per_token", CLASSMATE_PER_TOKEN, '''def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    X = np.asarray(X, dtype=float)
    result = np.zeros(X.shape[:-1] + W2.shape[1:])
    it = np.nditer(np.zeros(X.shape[:-1]), flags=["multi_index"])
    while not it.finished:
        pos = it.multi_index
        result[pos] = np.maximum(X[pos].dot(W1) + b1, 0).dot(W2) + b2
        it.iternext()
    return result
'''),
    Pair("renamed", "mixes_positions", SOLUTION, '''def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    X = np.asarray(X, dtype=float)
    gen = np.random.default_rng(0)
    ref = np.asarray(f(X), dtype=float)
    for tok in range(len(X)):
        pert = X.copy()
        pert[tok] += gen.normal(size=X.shape[1:])
        new = np.asarray(f(pert), dtype=float)
        rest = np.arange(len(X)) != tok
        if not np.allclose(new[rest], ref[rest], rtol=1e-9, atol=1e-12):
            return True
    return False
'''),
    Pair("reordered", "mixes_positions", SOLUTION, '''def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    X = np.asarray(X, dtype=float)
    before = np.asarray(f(X), dtype=float)
    rng = np.random.default_rng(0)
    for j in range(len(X)):
        others = np.arange(len(X)) != j
        moved = X.copy()
        moved[j] += rng.normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        if not np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12):
            return True
    return False
'''),
    Pair("commented", "mixes_positions", SOLUTION, '''def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(0)  # fixed seed: same answer every run
    before = np.asarray(f(X), dtype=float)
    for j in range(len(X)):
        # nudge token j only
        moved = X.copy()
        moved[j] += rng.normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        # did any OTHER row change?
        others = np.arange(len(X)) != j
        if not np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12):
            return True
    return False
'''),
    Pair("dead_code", "mixes_positions", SOLUTION, '''def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(0)
    before = np.asarray(f(X), dtype=float)
    n, d = X.shape
    for j in range(len(X)):
        moved = X.copy()
        moved[j] += rng.normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        others = np.arange(len(X)) != j
        changed_own = not np.allclose(after[j], before[j])
        if not np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12):
            return True
    return False
'''),
    Pair("temporaries", "mixes_positions", SOLUTION, '''def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(0)
    before = np.asarray(f(X), dtype=float)
    n = len(X)
    for j in range(n):
        moved = X.copy()
        noise = rng.normal(size=X.shape[1:])
        moved[j] += noise
        after = np.asarray(f(moved), dtype=float)
        others = np.arange(n) != j
        same = np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12)
        if not same:
            return True
    return False
'''),
    Pair("independent", "mixes_positions", SOLUTION, '''def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    X = np.asarray(X, dtype=float)
    together = np.asarray(f(X), dtype=float)
    alone = np.concatenate([np.asarray(f(X[i:i + 1]), dtype=float) for i in range(X.shape[0])])
    shuffled = np.asarray(f(X[::-1]), dtype=float)[::-1]
    return not (np.allclose(together, alone, rtol=1e-9, atol=1e-12)
                and np.allclose(together, shuffled, rtol=1e-9, atol=1e-12))
'''),
]
