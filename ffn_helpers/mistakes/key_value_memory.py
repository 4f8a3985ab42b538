"""Notebook 10's mistakes: writing key-value pairs into an FFN, recalling them, the units that fire."""

import numpy as np

from .. import activations as act
from .forward_pass import COUNT_NOT_SHARE
from .mistake import Mistake, in_part


def _kv_parts(keys, values, threshold=0.5):
    K, V = np.asarray(keys, float), np.asarray(values, float)
    return K, K / np.linalg.norm(K, axis=1, keepdims=True), V, float(threshold)


# kv_ffn returns (W1, b1, W2, b2); the notebook compares each on its own (b2 = 0 has no catalogued mistake).
KV_FFN = in_part("W1", (
    Mistake("keys_not_normalised", "W1 holds the keys as given; scale each to unit length first (k / ‖k‖), "
            "or a key of length 2 gives x · k = 4 with itself and the threshold means something else for it.",
            lambda keys, values, threshold=0.5: _kv_parts(keys, values)[0].T),
    Mistake("keys_as_rows", "W1 has the keys as rows; the FFN computes x W1, so key j is column j: W1 = Kᵀ.",
            lambda keys, values, threshold=0.5: _kv_parts(keys, values)[1]),
)) + in_part("b1", (
    Mistake("threshold_sign", "b1 = +θ makes every unit fire more easily; the threshold is subtracted: b1 = -θ.",
            lambda keys, values, threshold=0.5: np.full(len(keys), float(threshold))),
    Mistake("threshold_minus_one", "b1 = θ - 1 is where a matching key's z should end up, 1 - θ, with the sign "
            "flipped; the bias is the threshold itself, subtracted: b1 = -θ (the two agree only at θ = 0.5).",
            lambda keys, values, threshold=0.5: np.full(len(keys), float(threshold) - 1.0)),
)) + in_part("W2", (
    Mistake("values_not_rescaled", "W2 holds the values as given; a matching key leaves h = 1 - θ, so divide "
            "by 1 - θ to give the value back at full size: W2 = V / (1 - θ).",
            lambda keys, values, threshold=0.5: np.asarray(values, float).copy()),
    Mistake("divided_by_threshold", "W2 = V / θ: a matching key leaves h = 1 - θ (not θ), so divide by 1 - θ.",
            lambda keys, values, threshold=0.5: np.asarray(values, float) / float(threshold)),
))


def _memory_outputs(W1, b1, W2, b2, keys, values):
    Y = act.relu(np.asarray(keys, float) @ W1 + b1) @ W2 + b2
    V = np.asarray(values, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (Y @ V.T) / np.linalg.norm(Y, axis=1)[:, None] / np.linalg.norm(V, axis=1)[None, :]
    return Y, V, cos


def _recall_nan_argmax(*args):
    _, _, cos = _memory_outputs(*args)
    return float(np.mean(np.argmax(cos, axis=1) == np.arange(len(cos))))


def _recall_ties_count(*args):
    Y, _, cos = _memory_outputs(*args)
    fired = np.any(Y != 0, axis=1)
    own = np.diagonal(cos)
    return float(np.mean(fired & (own >= np.nanmax(np.where(fired[:, None], cos, 0.0), axis=1))))


def _recalled(*args):
    Y, _, cos = _memory_outputs(*args)
    fired = np.any(Y != 0, axis=1)
    return fired & (np.argmax(np.where(fired[:, None], cos, 0.0), axis=1) == np.arange(len(Y)))


def _recall_by(score, *args):
    """Recall with another notion of closest. It has no 0/0 to skip: an output of all zeros (no unit fired) gets
    scores too, and np.argmax picks by them as for any other."""
    Y, V, _ = _memory_outputs(*args)
    return float(np.mean(np.argmax(score(Y, V), axis=1) == np.arange(len(Y))))


RECALL = (
    Mistake("silent_memory_recalls", "an output of all zeros (no unit fired) has no direction, yet your count "
            "included one: its cosines are 0/0 = NaN, and np.argmax of NaNs says index 0. Count it as not recalled.",
            _recall_nan_argmax),
    Mistake("dot_not_cosine", "you picked the value with the largest dot product y · v, which favours long "
            "values; closest means the largest cosine, y · v / (‖y‖ ‖v‖).",
            lambda *args: _recall_by(lambda Y, V: Y @ V.T, *args)),
    Mistake("euclidean_not_cosine", "you picked the value nearest in Euclidean distance; closest here means the "
            "largest cosine, which ignores length (W-9's noisy key gives 0.8 · V[0]: the right direction).",
            lambda *args: _recall_by(lambda Y, V: -np.linalg.norm(Y[:, None, :] - V[None, :, :], axis=2), *args)),
    Mistake("tie_counts_as_recalled", "a key whose own value ties with an earlier one for the largest cosine "
            "counted as recalled; the tie goes to the lower index (np.argmax's rule), so it is not.",
            _recall_ties_count),
    COUNT_NOT_SHARE.computing(lambda *args: float(np.sum(_recalled(*args)))),
)


def _ranked(x, W1, b1, k, *, score, descending=True, ties_high=False):
    s = score(np.asarray(x, float))
    if ties_high:
        return np.argsort(s, axis=-1, kind="stable")[..., ::-1][..., :k]
    return np.argsort(-s if descending else s, axis=-1, kind="stable")[..., :k]


def _sorted_along_first_axis(x, W1, b1, k):
    h = act.relu(np.asarray(x, float) @ W1 + b1)
    if h.ndim != 2:
        raise ValueError("this mistake is about a batch of inputs")
    return np.argsort(-h, axis=0, kind="stable")[:k].T


TOP_MEMORIES = (
    Mistake("smallest_first", "these are the k smallest coefficients; the exercise asks for the largest, "
            "largest first.",
            lambda x, W1, b1, k: _ranked(x, W1, b1, k, score=lambda x: act.relu(x @ W1 + b1), descending=False)),
    Mistake("ties_by_higher_index", "equal coefficients came higher index first (np.argsort(h)[::-1] reverses "
            "ties too); ties go to the lower index: sort -h with a stable sort.",
            lambda x, W1, b1, k: _ranked(x, W1, b1, k, score=lambda x: act.relu(x @ W1 + b1), ties_high=True)),
    Mistake("ranked_by_z", "you ranked by the pre-activation z; the coefficient is h = ReLU(z), and every unit "
            "that does not fire has h = 0: those tie, and come in index order.",
            lambda x, W1, b1, k: _ranked(x, W1, b1, k, score=lambda x: x @ W1 + b1)),
    Mistake("ranked_without_b1", "you ranked by x · k_j alone; the coefficient includes the bias: "
            "ReLU(x · k_j + b1_j).",
            lambda x, W1, b1, k: _ranked(x, W1, b1, k, score=lambda x: act.relu(x @ W1))),
    Mistake("sorted_along_first_axis", "you sorted along the first axis (axis=0, then [:k] and a transpose): with a "
            "batch that ranks each unit across the inputs; rank each input's own units, along the last axis: "
            "np.argsort(-h, axis=-1, kind=\"stable\")[..., :k].", _sorted_along_first_axis),
)

CATALOGUE = {"kv_ffn": KV_FFN, "recall": RECALL, "top_memories": TOP_MEMORIES}
