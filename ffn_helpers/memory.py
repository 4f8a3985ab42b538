r"""The FFN read as a key-value memory (Geva et al., 2021).

With key k_j = W1[:, j] and value v_j = W2[j, :],

    FFN(x) = Σ_j σ(x · k_j + b1_j) v_j + b2:

unit j scores x against its key, and where x · k_j + b1_j is positive it adds its
value to the output, weighted by that amount.
Here σ is ReLU. `kv_ffn` writes n (key, value) pairs into an FFN with d_ff = n,
`recall` measures how many it gives back, `top_memories` says which units fire.
"""

import numpy as np

from ._arrays import as_float, check_matrix
from ._lazy import special
from .activations import relu
from .ffn import check_ffn_shapes


def keys(W1):
    """The keys, one per row: W1: (d_model, d_ff) -> (d_ff, d_model)."""
    W1 = as_float(W1, "W1")
    check_matrix(W1, "W1")
    return W1.T.copy()


def values(W2):
    """The values, one per row: W2: (d_ff, d_model) -> (d_ff, d_model)."""
    W2 = as_float(W2, "W2")
    check_matrix(W2, "W2")
    return W2.copy()


def coefficients(x, W1, b1):
    """How strongly each memory fires, h_j = ReLU(x · k_j + b1_j); x: (..., d_model) -> (..., d_ff)."""
    x, W1, b1 = as_float(x, "x"), as_float(W1, "W1"), as_float(b1, "b1")
    check_matrix(W1, "W1")
    if x.ndim == 0 or x.shape[-1] != W1.shape[0]:
        raise ValueError(f"x should have shape (..., d_model) = (..., {W1.shape[0]}), got {x.shape}")
    if b1.shape != (W1.shape[1],):
        raise ValueError(f"b1 should have shape (d_ff,) = ({W1.shape[1]},), got {b1.shape}")
    return relu(x @ W1 + b1)


def _pairs(keys, values):
    K, V = as_float(keys, "keys"), as_float(values, "values")
    check_matrix(K, "keys")
    check_matrix(V, "values")
    if K.shape != V.shape:
        raise ValueError(f"keys and values should both have shape (n, d_model), one pair per row; "
                         f"got keys {K.shape} and values {V.shape}")
    return K, V


def kv_ffn(keys, values, threshold=0.5):
    """An FFN that stores the pairs: W1 = unit keys as columns, b1 = -θ, W2 = values / (1 - θ), b2 = 0.

    keys, values: (n, d_model), one pair per row -> W1: (d_model, n), b1: (n,), W2: (n, d_model),
    b2: (d_model,). Each key is scaled to unit length, so it gives x · k = 1 with itself.
    """
    K, V = _pairs(keys, values)
    theta = float(threshold)
    if not 0 <= theta < 1:
        raise ValueError(f"threshold should be in [0, 1) (a unit key matches itself with x · k = 1), got {threshold}")
    norms = np.linalg.norm(K, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"every key should be non-zero, got a zero key at row {int(np.argmin(norms[:, 0]))}")
    n, d_model = K.shape
    return (K / norms).T, np.full(n, -theta), V / (1.0 - theta), np.zeros(d_model)


def cosine_matrix(Y, V):
    """cos(Y[i], V[j]) for every pair; a zero row of Y gives a row of NaN (no direction to compare)."""
    Y, V = as_float(Y, "Y"), as_float(V, "V")
    with np.errstate(invalid="ignore", divide="ignore"):
        return (Y @ V.T) / np.linalg.norm(Y, axis=1)[:, None] / np.linalg.norm(V, axis=1)[None, :]


def recalled(W1, b1, W2, b2, keys, values):
    """For each pair i: is FFN(keys[i]) closest in cosine to values[i]? -> (n,) bool.

    Closest: the largest cosine, the lower index winning a tie (np.argmax's rule). An output of
    all zeros (no memory fired) has no direction and recalls nothing.
    """
    K, V = _pairs(keys, values)
    v_norms = np.linalg.norm(V, axis=1)
    if np.any(v_norms == 0):
        raise ValueError("every value should be non-zero: a zero value has no direction to compare with")
    x, W1, b1, W2, b2 = check_ffn_shapes(K, W1, b1, W2, b2)
    Y = relu(x @ W1 + b1) @ W2 + b2
    y_norms = np.linalg.norm(Y, axis=1)
    fired = y_norms > 0
    # cos(y_i, v_j) up to the positive factor 1 / ‖y_i‖, which leaves each row's argmax alone.
    cos = Y @ (V / v_norms[:, None]).T
    return fired & (np.argmax(cos, axis=1) == np.arange(len(K)))


def recall(W1, b1, W2, b2, keys, values):
    """The share of keys whose output is closest (cosine) to their own value: a float in [0, 1]."""
    return float(np.mean(recalled(W1, b1, W2, b2, keys, values)))


def top_memories(x, W1, b1, k):
    """Indices of the k units with the largest h_j = ReLU(x · k_j + b1_j), largest first, ties by lower index.

    x: (..., d_model) -> (..., k) integers.
    """
    h = coefficients(x, W1, b1)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= h.shape[-1]:
        raise ValueError(f"k should be a whole number from 1 to d_ff = {h.shape[-1]}, got {k!r}")
    return np.argsort(-h, axis=-1, kind="stable")[..., :k]


def random_unit_vectors(n, d_model, rng):
    """n random directions in d_model dimensions, uniform on the unit sphere: (n, d_model)."""
    v = rng.standard_normal((n, d_model))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def noisy_queries(keys, cosine, rng):
    """Unit queries at exactly `cosine` to their unit keys, each tilted in a random direction: (n, d_model)."""
    K = as_float(keys, "keys")
    u = rng.standard_normal(K.shape)
    u -= np.sum(u * K, axis=1, keepdims=True) * K  # the part of the noise along the key is removed ...
    u /= np.linalg.norm(u, axis=1, keepdims=True)  # ... so the query is cos · k + sin · u, with u ⟂ k
    return cosine * K + np.sqrt(1.0 - cosine**2) * u


def mean_recall(d_model, n, threshold, query_cosine=1.0, seeds=(0, 1, 2)):
    """Recall of `kv_ffn` storing n random unit keys and values, averaged over seeds.

    Each seed draws new keys and values; the queries are the keys themselves (query_cosine = 1)
    or noisy copies at that cosine to their key.
    """
    from threadpoolctl import threadpool_limits

    shares = []
    # Matrices this small run fastest on one BLAS thread; on a busy machine, far faster.
    with threadpool_limits(1, user_api="blas"):
        for seed in seeds:
            rng = np.random.default_rng([int(d_model), int(n), int(seed)])
            K, V = random_unit_vectors(n, d_model, rng), random_unit_vectors(n, d_model, rng)
            queries = K if query_cosine == 1 else noisy_queries(K, query_cosine, rng)
            shares.append(recall(*kv_ffn(K, V, threshold), queries, V))
    return float(np.mean(shares))


def capacity_curve(d_model, n_pairs, threshold, query_cosine=1.0, seeds=(0, 1, 2)):
    """`mean_recall` for each number of stored pairs in `n_pairs`: (len(n_pairs),)."""
    return np.array([mean_recall(d_model, n, threshold, query_cosine, seeds) for n in n_pairs])


def fire_probability(d_model, threshold):
    """P(k · k' > θ) for two independent random unit vectors in d_model dimensions (d_model >= 2).

    (1 + k · k') / 2 follows Beta((d_model - 1)/2, (d_model - 1)/2), so this is that
    distribution's upper tail at (1 + θ) / 2.
    """
    if d_model < 2:
        raise ValueError(f"d_model should be at least 2, got {d_model}")
    a = (d_model - 1) / 2
    return float(special().betainc(a, a, (1 - threshold) / 2))  # by symmetry, the lower tail at (1 - θ)/2
