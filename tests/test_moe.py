"""The mixture-of-experts reference (ffn_helpers.moe) against independent computations.

Routing is recomputed in plain Python (sort by (-logit, index), math.exp), the forward
pass by running every expert on every token, the counts from Mixtral's configuration
written out, the loss with loops. Also: worked example W-10, the catalogue of notebook
11's mistakes, and the reference detector of mixing between positions.
"""

import math
import warnings

import numpy as np
import pytest

from ffn_helpers import checks, ffn_forward, mistakes, moe, positions
from ffn_helpers.examples import W_10


@pytest.fixture(autouse=True)
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def route_by_hand(x, W_r, k):
    """Top k by (-logit, index), softmax over the kept logits, one token at a time in Python."""
    r = np.asarray(x, float) @ np.asarray(W_r, float)
    rows = r.reshape(-1, r.shape[-1])
    indices, gates = [], []
    for row in rows.tolist():
        best = sorted(range(len(row)), key=lambda e: (-row[e], e))[:k]
        weights = [math.exp(row[e] - row[best[0]]) for e in best]
        indices.append(best)
        gates.append([w / math.fsum(weights) for w in weights])
    shape = r.shape[:-1] + (k,)
    return np.array(indices).reshape(shape), np.array(gates).reshape(shape)


def moe_by_hand(x, W_r, experts, k):
    """Every expert on every token, then the gated sum of the chosen ones."""
    x = np.asarray(x, float)
    indices, gates = route_by_hand(x, W_r, k)
    out = np.zeros_like(x)
    for t in np.ndindex(x.shape[:-1]):
        for e, g in zip(np.atleast_1d(indices[t]), np.atleast_1d(gates[t]), strict=True):
            W1, b1, W2, b2 = experts[e]
            out[t] += g * (np.maximum(x[t] @ W1 + b1, 0) @ W2 + b2)
    return out


def random_moe(seed, d_model=4, E=6, widths=(3, 5, 8, 2, 7, 4)):
    rng = np.random.default_rng(seed)
    experts = tuple((rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff), rng.normal(size=(d_ff, d_model)),
                     rng.normal(size=d_model)) for d_ff in widths[:E])
    return rng, rng.normal(size=(d_model, E)), experts


# --- W-10 ----------------------------------------------------------------------------------------------

def test_w10_routing_from_the_formula():
    g0 = 1 / (1 + math.exp(-1))  # e² / (e² + e¹): only the difference of the two kept logits counts
    assert g0 == pytest.approx(0.731059, abs=5e-7) and 1 - g0 == pytest.approx(0.268941, abs=5e-7)
    assert np.array_equal(W_10.x @ W_10.W_r, W_10.logits)
    indices, gates = moe.router_topk(W_10.x, W_10.W_r, W_10.k)
    assert indices.dtype == np.int64 and indices.tolist() == W_10.indices.tolist() == [[0, 1], [2, 1]]
    assert np.allclose(gates, [[g0, 1 - g0]] * 2, rtol=1e-15, atol=0)
    assert np.allclose(gates, W_10.gates, rtol=0, atol=5e-7)


def test_w10_forward_from_the_formula():
    g0 = 1 / (1 + math.exp(-1))
    by_hand = np.array([[2 * g0, g0], [1 - g0, 4 * g0]])  # g0·[2, 1] + g1·[0, 0];  g0·[0, 4] + g1·[1, 0]
    y = moe.moe_forward(W_10.x, W_10.W_r, W_10.experts, W_10.k)
    assert np.allclose(y, by_hand, rtol=1e-15, atol=0)
    assert np.allclose(y, W_10.y, rtol=0, atol=5e-7)
    for e, (W1, b1, W2, b2) in enumerate(W_10.experts):  # the stated experts: I/I, -I/I, I/2I, no biases
        assert np.array_equal(W1, [np.eye(2), -np.eye(2), np.eye(2)][e]) and not b1.any() and not b2.any()
        assert np.array_equal(W2, [np.eye(2), np.eye(2), 2 * np.eye(2)][e])


def test_softmax_over_the_kept_logits_is_the_renormalised_full_softmax():
    rng, W_r, _ = random_moe(1)
    x = rng.normal(size=(20, 4))
    indices, gates = moe.router_topk(x, W_r, 3)
    p = moe.router_probs(x, W_r)
    kept = np.take_along_axis(p, indices, axis=-1)
    assert np.allclose(gates, kept / kept.sum(axis=-1, keepdims=True), rtol=1e-12, atol=0)
    assert (kept.sum(axis=-1) < 1).all()  # without renormalising they would not sum to 1


# --- router_topk ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4,), (9, 4), (2, 3, 4)])
@pytest.mark.parametrize("k", [1, 2, 6])
def test_router_matches_the_python_routing(shape, k):
    rng, W_r, _ = random_moe(2)
    x = rng.normal(size=shape)
    indices, gates = moe.router_topk(x, W_r, k)
    want_indices, want_gates = route_by_hand(x, W_r, k)
    assert indices.shape == gates.shape == shape[:-1] + (k,)
    assert np.array_equal(indices, want_indices)
    assert np.allclose(gates, want_gates, rtol=1e-13, atol=0)
    assert np.allclose(gates.sum(axis=-1), 1, rtol=0, atol=1e-15)
    assert (np.diff(gates, axis=-1) <= 0).all()  # largest first


def test_ties_go_to_the_lower_index():
    r = np.array([1.0, 3.0, 3.0, 0.0, 3.0])
    assert moe.top_k(r, 1).tolist() == [1] and moe.top_k(r, 2).tolist() == [1, 2]
    assert moe.top_k(r, 5).tolist() == [1, 2, 4, 0, 3]
    assert moe.top_k(np.zeros(4), 4).tolist() == [0, 1, 2, 3]
    assert moe.top_k(np.array([0.0, -0.0]), 1).tolist() == [0]  # -0.0 == 0.0: a tie
    indices, gates = moe.router_topk(np.array([1.0]), np.array([[2.0, 2.0, 2.0]]), 2)
    assert indices.tolist() == [0, 1] and gates.tolist() == [0.5, 0.5]


def test_large_logits_do_not_overflow():
    indices, gates = moe.router_topk(np.array([1.0]), np.array([[800.0, 799.0, 0.0]]), 3)
    assert indices.tolist() == [0, 1, 2]
    assert np.allclose(gates[:2], [1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))], rtol=1e-15, atol=0)
    assert gates[2] == 0.0


@pytest.mark.parametrize("args, error, pattern", [
    ((np.ones(2), np.ones((2, 3)), 0), ValueError, "k must be positive, got 0"),
    ((np.ones(2), np.ones((2, 3)), 4), ValueError, r"k must be at most the number of experts E = 3, got k = 4"),
    ((np.ones(2), np.ones((2, 3)), 1.0), TypeError, "k must be a whole number, got 1.0"),
    ((np.ones(3), np.ones((2, 3)), 1), ValueError, r"x should have shape \(\.\.\., d_model\) with d_model = "
                                                     r"W_r.shape\[0\] = 2, got \(3,\)"),
    ((np.ones(2), np.ones(3), 1), ValueError, "W_r should be a 2-D matrix"),
    ((np.array([np.nan, 1.0]), np.ones((2, 3)), 1), ValueError, "contain NaN"),
])
def test_router_rejects_bad_input(args, error, pattern):
    with pytest.raises(error, match=pattern):
        moe.router_topk(*args)


# --- moe_forward ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4,), (9, 4), (2, 3, 4)])
@pytest.mark.parametrize("k", [1, 2, 6])
def test_forward_matches_every_expert_on_every_token(shape, k):
    rng, W_r, experts = random_moe(3)
    x = rng.normal(size=shape)
    y = moe.moe_forward(x, W_r, experts, k)
    assert y.shape == shape and y.dtype == np.float64
    assert np.allclose(y, moe_by_hand(x, W_r, experts, k), rtol=1e-12, atol=1e-12)


def test_with_k_equal_to_E_it_is_the_dense_softmax_mixture():
    rng, W_r, experts = random_moe(4)
    x = rng.normal(size=(10, 4))
    p = moe.router_probs(x, W_r)
    dense = sum(p[:, e:e + 1] * ffn_forward(x, *experts[e]) for e in range(len(experts)))
    assert np.allclose(moe.moe_forward(x, W_r, experts, len(experts)), dense, rtol=1e-12, atol=1e-12)


def test_forward_is_position_wise():
    rng, W_r, experts = random_moe(5)
    X = rng.normal(size=(7, 4))
    Y = moe.moe_forward(X, W_r, experts, 2)
    order = rng.permutation(7)
    assert np.array_equal(moe.moe_forward(X[order], W_r, experts, 2), Y[order])
    for i in range(7):
        assert np.allclose(moe.moe_forward(X[i], W_r, experts, 2), Y[i], rtol=1e-14, atol=1e-14)
    assert positions.mixes_positions(lambda X: moe.moe_forward(X, W_r, experts, 2), X) is False


def test_an_expert_without_tokens_is_never_run():
    _, W_r, experts = random_moe(6)
    W_r = np.zeros_like(W_r)
    W_r[:, 0], W_r[:, 1] = 5.0, 4.0
    x = np.abs(np.random.default_rng(0).normal(size=(5, 4))) + 0.1
    broken = list(experts)
    broken[3] = (np.full((4, 2), np.nan), np.zeros(2), np.zeros((2, 4)), np.zeros(4))  # NaN would show if run
    y = moe.moe_forward(x, W_r, broken, 2)
    assert np.isfinite(y).all() and np.allclose(y, moe_by_hand(x, W_r, experts, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("experts, error, pattern", [
    (lambda ex: ex[:5], ValueError, "experts should hold E = W_r.shape.1. = 6 experts, got 5"),
    (lambda ex: ex[:5] + (ex[0][:3],), TypeError, r"experts\[5\] should be a tuple \(W1, b1, W2, b2\)"),
    (lambda ex: ex[:5] + ((np.ones((3, 2)), np.ones(2), np.ones((2, 4)), np.ones(4)),), ValueError,
     r"experts\[5\] should map d_model = 4 to d_model"),
    (lambda ex: 7, TypeError, "experts should be a sequence of"),
])
def test_forward_rejects_bad_experts(experts, error, pattern):
    _, W_r, good = random_moe(7)
    with pytest.raises(error, match=pattern):
        moe.moe_forward(np.ones(4), W_r, experts(good), 2)


# --- parameter counts ----------------------------------------------------------------------------------

def test_mixtral_from_its_configuration():
    d, d_ff, L, E, k, vocab = 4096, 14336, 32, 8, 2, 32000
    expert = 3 * d * d_ff  # W_gate, W_up, W_down, no biases
    attention = d * d + d * (8 * 128) + d * (8 * 128) + d * d  # Q, K, V (8 key/value heads of 128), O
    router = d * E
    norms = 2 * d  # two RMSNorm weights per layer
    shared = L * (attention + router + norms) + 2 * vocab * d + d  # embeddings, output head, final norm
    assert (expert, attention, router) == (176_160_768, 41_943_040, 32_768)
    counts = moe.model_param_counts(moe.MIXTRAL_8X7B)
    assert counts["all"] == (shared + L * E * expert, shared + L * k * expert) == (46_702_792_704, 12_879_925_248)
    assert moe.moe_param_count(d, d_ff, E, k) == (E * expert + router, k * expert + router)
    assert (round(counts["all"][0] / 1e9, 1), round(counts["all"][1] / 1e9, 1)) == (46.7, 12.9)
    assert sum(v[0] for p, v in counts.items() if p != "all") == counts["all"][0]


@pytest.mark.parametrize("args, expected", [
    ((768, 3072, 128, 1, False), (128 * 2 * 768 * 3072 + 768 * 128, 2 * 768 * 3072 + 768 * 128)),
    ((16, 4, 1, 1), (3 * 64 + 16, 3 * 64 + 16)),
    ((10, 3, 5, 5), (5 * 90 + 50, 5 * 90 + 50)),
])
def test_moe_param_count_small_cases(args, expected):
    got = moe.moe_param_count(*args)
    assert got == expected and all(type(v) is int for v in got)


def test_moe_param_count_rejects_bad_input():
    with pytest.raises(ValueError, match="k must be at most n_experts = 4, got k = 5"):
        moe.moe_param_count(8, 16, 4, 5)
    with pytest.raises(TypeError, match="n_experts must be a whole number"):
        moe.moe_param_count(8, 16, 4.0, 1)


# --- load-balancing loss -------------------------------------------------------------------------------

def loss_by_hand(probs, index, N):
    probs, index = np.asarray(probs).reshape(-1, N).tolist(), np.asarray(index).ravel().tolist()
    n = len(index)
    f = [sum(1 for i in index if i == e) / n for e in range(N)]
    P = [math.fsum(row[e] for row in probs) / n for e in range(N)]
    return N * math.fsum(f[e] * P[e] for e in range(N))


def test_the_spec_examples():
    assert moe.load_balancing_loss(np.tile([0.9, 0.1], (4, 1)), np.zeros(4, dtype=int), 2) == pytest.approx(
        1.8, rel=1e-15)
    for N in (2, 3, 8):
        uniform = np.full((2 * N, N), 1 / N)
        assert moe.load_balancing_loss(uniform, np.arange(2 * N) % N, N) == pytest.approx(1.0, rel=1e-14)
        certain = np.zeros((5, N))
        certain[:, 0] = 1
        assert moe.load_balancing_loss(certain, np.zeros(5, dtype=int), N) == N  # the worst case


@pytest.mark.parametrize("shape", [(50,), (3, 7), (1,)])
def test_loss_matches_the_loops(shape):
    rng = np.random.default_rng(8)
    probs = moe.softmax(rng.normal(size=shape + (8,)) * 2)
    index = probs.argmax(axis=-1)
    got = moe.load_balancing_loss(probs, index, 8)
    assert type(got) is float and got == pytest.approx(loss_by_hand(probs, index, 8), rel=1e-12)


def test_shares_count_experts_that_get_nothing():
    assert moe.expert_shares(np.array([0, 1, 0, 0]), 4).tolist() == [0.75, 0.25, 0.0, 0.0]


@pytest.mark.parametrize("probs, index, N, error, pattern", [
    (np.ones((4, 3)) / 3, np.zeros(4, dtype=int), 2, ValueError, r"router_probs should have shape \(\.\.\., "
                                                                   r"n_experts\) = \(\.\.\., 2\), got \(4, 3\)"),
    (np.ones((4, 2)) / 2, np.zeros(3, dtype=int), 2, ValueError, r"expert_index should have shape \(4,\)"),
    (np.ones((2, 2)) / 2, np.array([0, 2]), 2, ValueError, r"expert_index should lie in \[0, 2\), got values "
                                                          "from 0 to 2"),
    (np.ones((2, 2)) / 2, np.array([0.0, 1.0]), 2, TypeError, "expert_index should be a non-empty array of "
                                                              "integers"),
])
def test_loss_rejects_bad_input(probs, index, N, error, pattern):
    with pytest.raises(error, match=pattern):
        moe.load_balancing_loss(probs, index, N)


# --- the catalogue of notebook 11's mistakes: each named exactly when a learner makes it ----------------

def _learner_router(pick, gate):
    def router(x, W_r, k):
        r = x @ W_r
        indices = pick(r, k)
        return indices, gate(r, indices)
    return router


def _stable_top(r, k):
    return np.argsort(-r, axis=-1, kind="stable")[..., :k]


def _softmax_kept(r, indices):
    kept = np.take_along_axis(r, indices, axis=-1)
    e = np.exp(kept - kept.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


ROUTER_ARGS = (np.eye(3), np.array([[1.0, 3.0, 3.0, 0.0], [0.5, -1.0, 2.0, 1.5], [0.0, 0.0, 1.0, 2.0]]), 2)
LEARNER_ROUTERS = {
    "ties_to_higher_index": _learner_router(lambda r, k: np.argsort(r, axis=-1, kind="stable")[..., ::-1][..., :k],
                                            _softmax_kept),
    "smallest_logits": _learner_router(lambda r, k: np.argsort(r, axis=-1, kind="stable")[..., :k], _softmax_kept),
    "indices_in_index_order": _learner_router(lambda r, k: np.sort(_stable_top(r, k), axis=-1), _softmax_kept),
    "softmax_over_all_experts": _learner_router(_stable_top, lambda r, i: np.take_along_axis(
        np.exp(r) / np.exp(r).sum(axis=-1, keepdims=True), i, axis=-1)),
    "gates_not_normalised": _learner_router(_stable_top, lambda r, i: np.exp(np.take_along_axis(r, i, axis=-1))),
    "logits_as_gates": _learner_router(_stable_top, lambda r, i: np.take_along_axis(r, i, axis=-1)),
}


@pytest.mark.parametrize("key", LEARNER_ROUTERS)
def test_router_mistakes_are_named(key):
    indices, gates = LEARNER_ROUTERS[key](*ROUTER_ARGS)
    want_indices, want_gates = moe.router_topk(*ROUTER_ARGS)
    found = (checks.diagnose(indices, mistakes.for_exercise("router_topk", "indices"), ROUTER_ARGS,
                             expected=want_indices, rtol=0, atol=0)
             + checks.diagnose(gates, mistakes.for_exercise("router_topk", "gates"), ROUTER_ARGS, expected=want_gates))
    assert [m.key for m in found] == [key]


def _learner_moe(weights):
    def forward(x, W_r, experts, k):
        r = x @ W_r
        outputs = np.stack([ffn_forward(x, *e) for e in experts], axis=-2)
        return np.einsum("...e,...ed->...d", weights(r, k), outputs)
    return forward


def _scatter(r, k, kept_weights):
    indices = _stable_top(r, k)
    w = np.zeros_like(r)
    np.put_along_axis(w, indices, kept_weights(r, indices), axis=-1)
    return w


LEARNER_MOE = {
    "dense_mixture": _learner_moe(lambda r, k: np.exp(r) / np.exp(r).sum(axis=-1, keepdims=True)),
    "ungated_sum": _learner_moe(lambda r, k: _scatter(r, k, lambda r, i: np.ones(i.shape))),
    "mean_of_experts": _learner_moe(lambda r, k: _scatter(r, k, lambda r, i: np.full(i.shape, 1 / k))),
    "softmax_over_all_experts": _learner_moe(lambda r, k: _scatter(r, k, lambda r, i: np.take_along_axis(
        np.exp(r) / np.exp(r).sum(axis=-1, keepdims=True), i, axis=-1))),
}


@pytest.mark.parametrize("key", LEARNER_MOE)
def test_moe_forward_mistakes_are_named(key):
    rng, W_r, experts = random_moe(9)
    args = (rng.normal(size=(6, 4)), W_r, experts, 2)
    assert np.allclose(_learner_moe(lambda r, k: _scatter(r, k, _softmax_kept))(*args), moe.moe_forward(*args))
    with pytest.raises(AssertionError) as info:
        checks.check(LEARNER_MOE[key], args, moe.moe_forward(*args), mistakes=mistakes.for_exercise("moe_forward"))
    assert f"Likely mistake ({key})" in str(info.value) and str(info.value).count("Likely mistake") == 1


LEARNER_COUNTS = {
    "all_experts_active": lambda d, f, n, k, gated=True: ((3 if gated else 2) * d * f * n + d * n,) * 2,
    "router_left_out": lambda d, f, n, k, gated=True: ((3 if gated else 2) * d * f * n,
                                                       (3 if gated else 2) * d * f * k),
    "router_not_active": lambda d, f, n, k, gated=True: ((3 if gated else 2) * d * f * n + d * n,
                                                         (3 if gated else 2) * d * f * k),
    "gated_ignored": lambda d, f, n, k, gated=True: (2 * d * f * n + d * n, 2 * d * f * k + d * n),
}


@pytest.mark.parametrize("key", LEARNER_COUNTS)
def test_param_count_mistakes_are_named(key):
    args = (4096, 14336, 8, 2, True)
    found = checks.diagnose(LEARNER_COUNTS[key](*args), mistakes.for_exercise("moe_param_count"), args,
                            expected=moe.moe_param_count(*args), rtol=0, atol=0)
    assert [m.key for m in found] == [key]


def _f_and_P(probs, index, N):
    return np.bincount(index.ravel(), minlength=N) / index.size, probs.reshape(-1, N).mean(axis=0)


LEARNER_LOSSES = {
    "missing_n_experts_factor": lambda p, i, N: float(np.dot(*_f_and_P(p, i, N))),
    "alpha_applied": lambda p, i, N: 0.01 * N * float(np.dot(*_f_and_P(p, i, N))),
    "counts_for_shares": lambda p, i, N: N * float(np.dot(np.bincount(i.ravel(), minlength=N), _f_and_P(p, i, N)[1])),
    "probs_for_shares": lambda p, i, N: N * float(np.sum(_f_and_P(p, i, N)[1] ** 2)),
}


@pytest.mark.parametrize("key", LEARNER_LOSSES)
def test_load_balance_mistakes_are_named(key):
    args = (np.tile([0.9, 0.1], (4, 1)), np.zeros(4, dtype=int), 2)
    with pytest.raises(AssertionError) as info:
        checks.check(LEARNER_LOSSES[key], args, 1.8, mistakes=mistakes.for_exercise("load_balancing_loss"))
    assert f"Likely mistake ({key})" in str(info.value) and str(info.value).count("Likely mistake") == 1


# --- the reference detector of notebook 05 -------------------------------------------------------------

@pytest.mark.parametrize("f, mixes", [
    (lambda X: np.maximum(X @ np.ones((2, 3)), 0), False),
    (lambda X: X + 0.5 * np.arange(len(X))[:, None], False),  # depends on the position, not on other tokens
    (lambda X: np.broadcast_to(X.mean(axis=0), X.shape), True),
    (lambda X: np.cumsum(X, axis=0), True),
    (lambda X: np.cumsum(X[::-1], axis=0)[::-1], True),
    (lambda X: np.roll(X, 1, axis=0), True),
])
def test_mixes_positions_reference(f, mixes):
    X = np.random.default_rng(5).normal(size=(6, 2))
    assert positions.mixes_positions(f, X) is mixes
    assert positions.mixes_positions(lambda X: np.broadcast_to(X.mean(axis=0), X.shape), X[:1]) is False


def test_mixes_positions_rejects_a_single_vector():
    with pytest.raises(ValueError, match=r"X should have shape \(n, d_model\)"):
        positions.mixes_positions(lambda X: X, np.ones(3))


def test_with_one_expert_per_token_every_gate_is_exactly_one():
    """Notebook 11: with k = 1 the softmax runs over one logit, so the gate is 1 exactly."""
    rng = np.random.default_rng(11)
    _, gates = moe.router_topk(rng.normal(size=(3, 5, 4)), rng.normal(size=(4, 6)) * 50, 1)
    assert gates.shape == (3, 5, 1) and np.all(gates == 1.0)
