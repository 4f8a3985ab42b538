"""ffn_helpers.memory, the FFN as a key-value memory, against independent computations.

The references here are written differently from the module: Python loops over
pairs, `sorted` with an explicit key, numerical integration of a density. The
numbers notebook 10 states (W-9, the capacity experiment, the fire probability)
are asserted here too.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

from ffn_helpers import checks, ffn_forward, memory, mistakes
from ffn_helpers.examples import W_9


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _recall_by_loops(W1, b1, W2, b2, keys, values):
    """Closest value by cosine, ties to the lower index, a silent output recalls nothing."""
    hits = 0
    for i, key in enumerate(keys):
        y = ffn_forward(key, W1, b1, W2, b2)
        size = math.sqrt(sum(v * v for v in y))
        if size == 0:
            continue
        best, best_cos = None, -math.inf
        for j, value in enumerate(values):
            cos = sum(a * b for a, b in zip(y, value, strict=True)) / (size * math.sqrt(sum(v * v for v in value)))
            if cos > best_cos:  # strictly greater: an equal cosine later keeps the earlier index
                best, best_cos = j, cos
        hits += best == i
    return hits / len(keys)


def _top_by_sort(x, W1, b1, k):
    x = np.asarray(x, dtype=float)
    out = np.empty(x.shape[:-1] + (k,), dtype=int)
    for index in np.ndindex(x.shape[:-1]):
        h = [max(0.0, float(sum(x[index][i] * W1[i, j] for i in range(W1.shape[0])) + b1[j]))
             for j in range(W1.shape[1])]
        out[index] = sorted(range(len(h)), key=lambda j: (-h[j], j))[:k]
    return out


# --- W-9 --------------------------------------------------------------------------------------


def test_w9_construction_and_numbers():
    K, V, theta = W_9.extra["keys"], W_9.extra["values"], W_9.extra["threshold"]
    W1, b1, W2, b2 = memory.kv_ffn(K, V, theta)
    np.testing.assert_array_equal(W1, np.eye(3))
    np.testing.assert_array_equal(b1, [-0.5, -0.5, -0.5])
    np.testing.assert_array_equal(W2, [[2, 4, 0], [0, -2, 6], [4, 0, 2]])
    np.testing.assert_array_equal(b2, [0, 0, 0])
    for p, q in zip((W1, b1, W2, b2), W_9.params, strict=True):
        np.testing.assert_array_equal(p, q)
    # Key i: h = 0.5 e_i and the output is V[i] exactly.
    np.testing.assert_array_equal(memory.coefficients(K, W1, b1), 0.5 * np.eye(3))
    np.testing.assert_array_equal(ffn_forward(K, W1, b1, W2, b2), V)
    np.testing.assert_array_equal(W_9.extra["key_y"], V)
    # The noisy key [0.9, 0.3, 0]: z = [0.4, -0.2, -0.5], h = [0.4, 0, 0], y = [0.8, 1.6, 0] = 0.8 V[0].
    np.testing.assert_array_equal(W_9.x, [0.9, 0.3, 0])
    np.testing.assert_allclose(W_9.x @ W1 + b1, [0.4, -0.2, -0.5], rtol=0, atol=1e-15)
    np.testing.assert_allclose(W_9.z, [0.4, -0.2, -0.5], rtol=0, atol=0)
    np.testing.assert_allclose(memory.coefficients(W_9.x, W1, b1), W_9.h, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ffn_forward(W_9.x, W1, b1, W2, b2), [0.8, 1.6, 0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(W_9.y, 0.8 * V[0], rtol=0, atol=1e-15)
    # Without a threshold key 1 leaks in: 0.9 V[0] + 0.3 V[1] = [0.9, 1.5, 0.9].
    np.testing.assert_allclose(ffn_forward(W_9.x, *memory.kv_ffn(K, V, 0.0)), [0.9, 1.5, 0.9], rtol=0, atol=1e-15)
    np.testing.assert_allclose(W_9.extra["y_without_threshold"], 0.9 * V[0] + 0.3 * V[1], rtol=0, atol=1e-15)
    # At θ = 0.95 the noisy key fires nothing.
    assert W_9.extra["high_threshold"] == 0.95
    np.testing.assert_array_equal(ffn_forward(W_9.x, *memory.kv_ffn(K, V, 0.95)), [0, 0, 0])


def test_w9_recall_and_top_memories():
    K, V = W_9.extra["keys"], W_9.extra["values"]
    noisy = np.array([[0.9, 0.3, 0.0], [0.3, 0.9, 0.0], [0.0, 0.3, 0.9]])
    assert memory.recall(*W_9.params, K, V) == 1.0
    assert memory.recall(*W_9.params, noisy, V) == 1.0
    assert memory.recall(*memory.kv_ffn(K, V, 0.95), noisy, V) == 0.0
    np.testing.assert_array_equal(memory.top_memories(W_9.x, W_9.W1, W_9.b1, 1), [0])
    np.testing.assert_array_equal(memory.top_memories(W_9.x, W_9.W1, W_9.b1, 3), [0, 1, 2])
    np.testing.assert_array_equal(memory.top_memories(K, W_9.W1, W_9.b1, 1), [[0], [1], [2]])
    np.testing.assert_array_equal(memory.top_memories([0.3, 0.9, 0.0], W_9.W1, np.zeros(3), 3), [1, 0, 2])


# --- keys, values, coefficients, kv_ffn --------------------------------------------------------


def test_keys_and_values_are_the_columns_of_W1_and_rows_of_W2():
    rng = np.random.default_rng(0)
    W1, b1, W2, b2 = rng.normal(size=(4, 6)), rng.normal(size=6), rng.normal(size=(6, 4)), rng.normal(size=4)
    K, V = memory.keys(W1), memory.values(W2)
    x = rng.normal(size=(3, 4))
    for t in range(3):
        total = b2.copy()
        for j in range(6):
            assert np.array_equal(K[j], W1[:, j]) and np.array_equal(V[j], W2[j])
            total += max(0.0, float(x[t] @ K[j]) + b1[j]) * V[j]
        np.testing.assert_allclose(total, ffn_forward(x[t], W1, b1, W2, b2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(memory.coefficients(x, W1, b1), np.maximum(x @ W1 + b1, 0), rtol=1e-15, atol=0)


@pytest.mark.parametrize("n, d_model, theta", [(5, 3, 0.2), (3, 5, 0.0), (4, 4, 0.9)])
def test_kv_ffn_normalises_keys_and_rescales_values(n, d_model, theta):
    rng = np.random.default_rng(n * 10 + d_model)
    K = rng.normal(size=(n, d_model)) * rng.uniform(0.3, 3, size=(n, 1))
    V = rng.normal(size=(n, d_model))
    W1, b1, W2, b2 = memory.kv_ffn(K, V, theta)
    assert W1.shape == (d_model, n) and b1.shape == (n,) and W2.shape == (n, d_model) and b2.shape == (d_model,)
    for j in range(n):
        np.testing.assert_allclose(W1[:, j] * np.sqrt(K[j] @ K[j]), K[j], rtol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(W1, axis=0), 1, rtol=1e-14)
    np.testing.assert_array_equal(b1, -theta)
    np.testing.assert_allclose(W2 * (1 - theta), V, rtol=1e-15)
    np.testing.assert_array_equal(b2, 0)


def test_orthonormal_keys_recall_every_value_exactly():
    rng = np.random.default_rng(1)
    Q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    V = rng.normal(size=(6, 6))
    for theta in (0.0, 0.3, 0.8):
        params = memory.kv_ffn(Q, V, theta)
        np.testing.assert_allclose(ffn_forward(Q, *params), V, rtol=1e-9, atol=1e-12)
        assert memory.recall(*params, Q, V) == 1.0


def test_kv_ffn_rejects_bad_input():
    K, V = np.eye(3), np.ones((3, 3))
    with pytest.raises(ValueError, match=r"threshold should be in \[0, 1\).*got 1"):
        memory.kv_ffn(K, V, 1.0)
    with pytest.raises(ValueError, match=r"threshold should be in \[0, 1\).*got -0.1"):
        memory.kv_ffn(K, V, -0.1)
    with pytest.raises(ValueError, match="zero key at row 1"):
        memory.kv_ffn([[1, 0], [0, 0]], [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match=r"keys \(3, 3\) and values \(2, 3\)"):
        memory.kv_ffn(K, V[:2])
    with pytest.raises(ValueError, match="keys should be a 2-D matrix"):
        memory.kv_ffn([1.0, 0.0], [1.0, 0.0])


# --- recall and top_memories against loops ---------------------------------------------------------


@pytest.mark.parametrize("n, d_model, theta, cosine", [(24, 8, 0.0, 1.0), (40, 6, 0.3, 1.0), (24, 8, 0.0, 0.8),
                                                        (30, 5, 0.5, 0.7), (12, 16, 0.0, 0.9)])
def test_recall_matches_a_loop(n, d_model, theta, cosine):
    rng = np.random.default_rng(n + d_model)
    K = memory.random_unit_vectors(n, d_model, rng)
    V = memory.random_unit_vectors(n, d_model, rng) * rng.uniform(0.2, 5, size=(n, 1))
    queries = K if cosine == 1 else memory.noisy_queries(K, cosine, rng)
    params = memory.kv_ffn(K, V, theta)
    expected = _recall_by_loops(*params, queries, V)
    assert memory.recall(*params, queries, V) == expected
    assert 0 < expected < 1 or (n, cosine) == (12, 0.9)  # crosstalk loses some pairs: the loop is tested


def test_recall_tie_goes_to_the_lower_index_and_silent_outputs_recall_nothing():
    K = np.eye(4)
    V_tie = np.array([[1.0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 2, 0]])
    params = memory.kv_ffn(K, V_tie, 0.5)
    assert memory.recall(*params, K, V_tie) == _recall_by_loops(*params, K, V_tie) == 0.75
    np.testing.assert_array_equal(memory.recalled(*params, K, V_tie), [True, True, False, True])
    queries = np.diag([1.0, 0.4, 0.8, 0.4])  # 0.4 < θ = 0.5: queries 1 and 3 fire nothing
    assert memory.recall(*params, queries, V_tie) == _recall_by_loops(*params, queries, V_tie) == 0.25  # 2 ties
    V_long = np.array([[0.1, 0, 0, 0.1], [3.0, 1, 0, 0], [0, 0.2, 0.1, 0], [0, 0, 4.0, 1]])
    params = memory.kv_ffn(K, V_long, 0.5)
    assert memory.recall(*params, queries, V_long) == _recall_by_loops(*params, queries, V_long) == 0.5
    with pytest.raises(ValueError, match="every value should be non-zero"):
        memory.recall(*params, K, np.zeros((4, 4)))


@pytest.mark.parametrize("shape", [(6,), (5, 6), (2, 3, 6)])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_top_memories_matches_sorted(shape, k):
    rng = np.random.default_rng(len(shape) * 100 + k)
    W1, b1 = rng.normal(size=(6, 10)), rng.normal(size=10) - 0.5
    x = rng.normal(size=shape)
    got = memory.top_memories(x, W1, b1, k)
    assert got.shape == shape[:-1] + (k,) and got.dtype.kind == "i"
    np.testing.assert_array_equal(got, _top_by_sort(x, W1, b1, k))


def test_top_memories_ties_and_silent_units_in_index_order():
    W1 = np.array([[1.0, 0.0, 2.0, -1.0, 0.5, 0.0, -3.0, 2.0], [0.0, 1.0, 1.0, 0.0, -0.5, -2.0, 1.0, 1.0]])
    b1 = np.array([0.0, -1.0, -0.5, -4.0, 0.0, -1.0, -6.0, -0.5])
    np.testing.assert_array_equal(memory.top_memories([1.0, 1.0], W1, b1, 8), [2, 7, 0, 1, 3, 4, 5, 6])
    np.testing.assert_array_equal(memory.top_memories([-1.0, 0.0], W1, b1, 8), np.arange(8))
    for k in (0, 9, 2.0, True):
        with pytest.raises(ValueError, match="k should be a whole number from 1 to d_ff = 8"):
            memory.top_memories([1.0, 1.0], W1, b1, k)


def test_noisy_queries_are_unit_vectors_at_the_given_cosine():
    rng = np.random.default_rng(3)
    K = memory.random_unit_vectors(50, 12, rng)
    np.testing.assert_allclose(np.linalg.norm(K, axis=1), 1, rtol=1e-14)
    Q = memory.noisy_queries(K, 0.75, rng)
    np.testing.assert_allclose(np.linalg.norm(Q, axis=1), 1, rtol=1e-14)
    np.testing.assert_allclose(np.sum(Q * K, axis=1), 0.75, rtol=1e-14)


# --- crosstalk: the fire probability and the capacity experiment -----------------------------------


@pytest.mark.parametrize("d_model", [3, 16, 32, 64])
@pytest.mark.parametrize("theta", [0.0, 0.25, 0.5])
def test_fire_probability_integrates_the_density_of_k_dot_k(d_model, theta):
    # The cosine t of two random unit vectors in d dimensions has density ∝ (1 - t²)^((d - 3) / 2).
    def density(t):
        return (1 - t * t) ** ((d_model - 3) / 2)

    tail = integrate.quad(density, theta, 1, epsabs=0, epsrel=1e-12)[0]
    whole = integrate.quad(density, -1, 1, epsabs=0, epsrel=1e-12)[0]
    assert memory.fire_probability(d_model, theta) == pytest.approx(tail / whole, rel=1e-9, abs=1e-15)


def test_fire_probability_numbers_the_notebook_states():
    assert memory.fire_probability(16, 0.0) == pytest.approx(0.5, abs=1e-12)
    assert 0.020 < memory.fire_probability(16, 0.5) < 0.021  # "about 2%"
    rng = np.random.default_rng(5)
    K = memory.random_unit_vectors(256, 16, rng)
    overlaps = (K @ K.T)[~np.eye(256, dtype=bool)]
    for theta in (0.0, 0.25, 0.5):
        assert abs(np.mean(overlaps > theta) - memory.fire_probability(16, theta)) < 0.01
    # Crosstalk at θ = 0: E[ReLU(t)²] = E[t²] / 2 = 1 / (2d), so Σ_j≠i ReLU(k_i · k_j)² ≈ (n - 1) / (2d).
    crosstalk = np.sum(np.maximum(overlaps.reshape(256, 255), 0) ** 2, axis=1)
    assert abs(crosstalk.mean() / (255 / 32) - 1) < 0.1
    second_moment = integrate.quad(lambda t: t * t * (1 - t * t) ** 6.5, 0, 1)[0] / integrate.quad(
        lambda t: (1 - t * t) ** 6.5, -1, 1)[0]
    assert second_moment == pytest.approx(1 / 32, rel=1e-9)  # E[ReLU(t)²] for d = 16


def test_capacity_experiment_as_the_notebook_states_it():
    n_pairs = [8, 16, 32, 64, 128, 256, 512]
    cap = {d: {t: memory.capacity_curve(d, n_pairs, t) for t in (0.0, 0.25, 0.5)} for d in (16, 32, 64)}
    assert cap[16][0.0][n_pairs.index(32)] < 0.9 and cap[16][0.0][n_pairs.index(16)] > 0.95
    assert 0.4 < cap[16][0.0][n_pairs.index(64)] < 0.6  # "only about half of 64"
    assert cap[16][0.5][n_pairs.index(256)] > 0.99
    for small, large in [(cap[16], cap[32]), (cap[32], cap[64])]:
        worse = small[0.0][:-1] < 1
        assert np.all(large[0.0][1:][worse] > small[0.0][:-1][worse])
    for curves in cap.values():
        assert np.all(curves[0.5] >= curves[0.25]) and np.all(curves[0.25] >= curves[0.0])
    assert cap[16][0.0][0] == 1.0 and cap[16][0.0][-1] < 0.1  # from all pairs to almost none


def test_threshold_sweep_as_the_notebook_states_it():
    thetas = np.round(np.arange(0.0, 0.95, 0.1), 1)
    sweep = {c: np.array([memory.mean_recall(32, 128, t, query_cosine=c) for t in thetas]) for c in (1.0, 0.95, 0.75)}
    i_08 = list(thetas).index(0.8)
    assert sweep[1.0][0] < 0.9 and sweep[0.75][0] < 0.5
    assert sweep[1.0][i_08] == 1.0 and sweep[0.95][i_08] == 1.0
    assert sweep[0.75][i_08] <= 0.01
    good = thetas[sweep[0.75] >= 0.99]
    assert good.min() <= 0.4 and good.max() == 0.7


# --- the notebook's mistakes: each differs from the truth on the inputs its tests use --------------


def test_every_memory_mistake_shows_on_the_notebook_inputs():
    K9, V9 = W_9.extra["keys"], W_9.extra["values"]
    rng = np.random.default_rng(2010)
    K, V = rng.normal(size=(5, 3)) * 2, rng.normal(size=(5, 3))
    for part, position in (("W1", 0), ("b1", 1), ("W2", 2)):
        for m in mistakes.for_exercise("kv_ffn", part):
            args = (K[:3], V[:3], 0.2)  # square and non-symmetric, keys of length != 1, θ != 0.5
            truth = memory.kv_ffn(*args)[position]
            assert not checks.compare(m.compute(*args), truth).ok, m.key
    recall_mistakes = mistakes.for_exercise("recall")
    assert {m.key for m in recall_mistakes} == {"silent_memory_recalls", "dot_not_cosine", "euclidean_not_cosine",
                                                "tie_counts_as_recalled", "count_not_share"}
    V_tie = np.array([[1.0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 2, 0]])
    V_long = np.array([[0.1, 0, 0, 0.1], [3.0, 1, 0, 0], [0, 0.2, 0.1, 0], [0, 0, 4.0, 1]])
    noisy = np.array([[0.9, 0.3, 0.0], [0.3, 0.9, 0.0], [0.0, 0.3, 0.9]])
    cases = {
        "silent_memory_recalls": (*memory.kv_ffn(K9, V9, 0.95), noisy, V9),
        "dot_not_cosine": (*memory.kv_ffn(np.eye(4), V_long, 0.4), 0.6 * np.eye(4), V_long),
        "euclidean_not_cosine": (*memory.kv_ffn(np.eye(4), V_long, 0.4), 0.6 * np.eye(4), V_long),
        "tie_counts_as_recalled": (*memory.kv_ffn(np.eye(4), V_tie, 0.5), np.eye(4), V_tie),
        "count_not_share": (*memory.kv_ffn(np.eye(4), V_tie, 0.5), np.eye(4), V_tie),
    }
    every = list(cases.values())  # as the hidden test does: a share is named only where every case confirms it
    for m in recall_mistakes:
        found = checks.diagnose_cases([m.compute(*args) for args in every], recall_mistakes, every,
                                      expected=[memory.recall(*args) for args in every])
        assert m.key in [f.key for f in found], m.key
    W1 = np.array([[1.0, 0.0, 2.0, -1.0, 0.5, 0.0, -3.0, 2.0], [0.0, 1.0, 1.0, 0.0, -0.5, -2.0, 1.0, 1.0]])
    b1 = np.array([0.0, -1.0, -0.5, -4.0, 0.0, -1.0, -6.0, -0.5])
    x = np.array([[1.0, 1.0], [-1.0, 0.0], [0.5, -2.0]])
    for m in mistakes.for_exercise("top_memories"):
        assert not np.array_equal(m.compute(x, W1, b1, 8), memory.top_memories(x, W1, b1, 8)), m.key
