"""Alternative answers for 10_key_value_memory."""

from . import Wrong

_KV_VECTORISED = '''import numpy as np

def kv_ffn(keys, values, threshold=0.5):
    K = np.asarray(keys, dtype=float)
    unit = K / np.sqrt((K**2).sum(axis=1, keepdims=True))
    W2 = np.asarray(values, dtype=float) / (1.0 - threshold)
    return unit.T, -threshold * np.ones(len(K)), W2, np.zeros(K.shape[1])
'''

# One column of W1 per key, in a loop.
_KV_LOOP = '''import numpy as np

def kv_ffn(keys, values, threshold=0.5):
    keys = np.asarray(keys, dtype=float)
    n, d_model = keys.shape
    W1 = np.zeros((d_model, n))
    for j, key in enumerate(keys):
        W1[:, j] = key / np.linalg.norm(key)
    b1 = np.full(n, -threshold, dtype=float)
    W2 = np.array(values, dtype=float) * (1.0 / (1.0 - threshold))
    return W1, b1, W2, np.zeros(d_model)
'''

# All cosines at once; rows that fired nothing are masked out.
_RECALL_MATRIX = '''import numpy as np

def recall(W1, b1, W2, b2, keys, values):
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    y_len = np.linalg.norm(Y, axis=1)
    fired = y_len > 0
    cos = (Y / np.where(fired, y_len, 1.0)[:, None]) @ (V / np.linalg.norm(V, axis=1)[:, None]).T
    best = np.argmax(cos, axis=1)
    return float(np.mean(fired & (best == np.arange(len(Y)))))
'''

# Pure Python for the cosines; ties keep the first maximum.
_RECALL_PYTHON = '''import math
import numpy as np

def recall(W1, b1, W2, b2, keys, values):
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    hits = 0
    for i, y in enumerate(Y.tolist()):
        y_len = math.sqrt(sum(a * a for a in y))
        if y_len == 0.0:
            continue
        scores = [sum(a * b for a, b in zip(y, v)) / (y_len * math.sqrt(sum(b * b for b in v)))
                  for v in np.asarray(values, dtype=float).tolist()]
        if scores.index(max(scores)) == i:
            hits += 1
    return hits / len(Y)
'''

_TOP_ARGSORT = '''import numpy as np

def top_memories(x, W1, b1, k):
    h = np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0)
    return np.argsort(-h, axis=-1, kind="stable")[..., :k]
'''

# sorted() on (-h_j, j) for every input in the batch.
_TOP_SORTED = '''import numpy as np

def top_memories(x, W1, b1, k):
    x = np.asarray(x, dtype=float)
    h = np.maximum(x @ W1 + b1, 0.0)
    out = np.zeros(h.shape[:-1] + (k,), dtype=int)
    for index in np.ndindex(h.shape[:-1]):
        row = h[index]
        out[index] = sorted(range(len(row)), key=lambda j: (-row[j], j))[:k]
    return out
'''

CORRECT = {
    "vectorised": {"kv_ffn": _KV_VECTORISED, "recall": _RECALL_MATRIX, "top_memories": _TOP_ARGSORT},
    "loops": {"kv_ffn": _KV_LOOP, "recall": _RECALL_PYTHON, "top_memories": _TOP_SORTED},
}

_RECALL_NAN = '''import numpy as np

def recall(W1, b1, W2, b2, keys, values):
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (Y @ V.T) / np.outer(np.linalg.norm(Y, axis=1), np.linalg.norm(V, axis=1))
    return float(np.mean(np.argmax(cos, axis=1) == np.arange(len(Y))))
'''

_RECALL_SCORED = '''import numpy as np

def recall(W1, b1, W2, b2, keys, values):
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    hits = 0
    for i, y in enumerate(Y):
        if not y.any():
            continue
        hits += int(np.argmax(SCORE) == i)
    return hits / len(Y)
'''

# The right share, but a silent output's cosines are computed as 0/0 first: numpy's RuntimeWarning on stderr.
# (Public: test_learner_notebooks runs it against 10's check too.)
RECALL_ZERO_OVER_ZERO = '''import numpy as np

def recall(W1, b1, W2, b2, keys, values):
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    cos = (Y @ V.T) / np.outer(np.linalg.norm(Y, axis=1), np.linalg.norm(V, axis=1))
    fired = np.linalg.norm(Y, axis=1) > 0
    return float(np.mean(fired & (np.argmax(cos, axis=1) == np.arange(len(Y)))))
'''

WRONG = [
    Wrong("kv-not-normalised", "kv_ffn", _KV_VECTORISED.replace(
        "unit = K / np.sqrt((K**2).sum(axis=1, keepdims=True))", "unit = K"),
        loses=("test_kv_ffn", "test_kv_ffn_hidden"), diagnosis="keys_not_normalised"),
    # W-9's keys form the identity, which is its own transpose: only the hidden square keys see it.
    Wrong("kv-keys-as-rows", "kv_ffn", _KV_VECTORISED.replace("return unit.T,", "return unit,"),
          loses=("test_kv_ffn_hidden",), diagnosis="keys_as_rows"),
    Wrong("kv-threshold-sign", "kv_ffn", _KV_VECTORISED.replace("-threshold * np.ones", "threshold * np.ones"),
          loses=("test_kv_ffn", "test_kv_ffn_hidden"), diagnosis="threshold_sign"),
    Wrong("kv-values-not-rescaled", "kv_ffn", _KV_VECTORISED.replace(" / (1.0 - threshold)", ""),
          loses=("test_kv_ffn", "test_kv_ffn_hidden"), diagnosis="values_not_rescaled"),
    # 1 / θ = 1 / (1 - θ) at W-9's θ = 0.5.
    Wrong("kv-divided-by-threshold", "kv_ffn", _KV_VECTORISED.replace("(1.0 - threshold)", "threshold"),
          loses=("test_kv_ffn_hidden",), diagnosis="divided_by_threshold"),
    # A silent output's NaN cosines: np.argmax says 0, so query 0 of W-9 at θ = 0.95 counts.
    Wrong("recall-nan-argmax", "recall", _RECALL_NAN, loses=("test_recall",), diagnosis="silent_memory_recalls"),
    # Plain nbgrader gives 0 to a cell with stderr output; the check fails it first, saying why.
    Wrong("recall-zero-over-zero", "recall", RECALL_ZERO_OVER_ZERO, loses=("test_recall", "test_recall_hidden")),
    Wrong("recall-dot-product", "recall", _RECALL_SCORED.replace("SCORE", "V @ y"),
          loses=("test_recall_hidden",), diagnosis="dot_not_cosine"),
    Wrong("recall-euclidean", "recall", _RECALL_SCORED.replace("SCORE", "-np.linalg.norm(V - y, axis=1)"),
          loses=("test_recall_hidden",), diagnosis="euclidean_not_cosine"),
    # Its own value counts as recalled when no cosine is larger: a tie with an earlier value too.
    Wrong("recall-ties-count", "recall", _RECALL_SCORED.replace(
        "int(np.argmax(SCORE) == i)", "int(np.all(COS <= COS[i]))").replace(
        "COS", "(V @ y / np.linalg.norm(V, axis=1))"),
        loses=("test_recall_hidden",), diagnosis="tie_counts_as_recalled"),
    Wrong("recall-count", "recall", _RECALL_MATRIX.replace("float(np.mean(", "int(np.sum("),
          loses=("test_recall", "test_recall_hidden"), diagnosis="count_not_share"),
    Wrong("top-reversed-argsort", "top_memories", _TOP_ARGSORT.replace(
        'np.argsort(-h, axis=-1, kind="stable")', "np.argsort(h, axis=-1)[..., ::-1]"),
        loses=("test_top_memories", "test_top_memories_hidden"), diagnosis="ties_by_higher_index"),
    Wrong("top-smallest-first", "top_memories", _TOP_ARGSORT.replace("np.argsort(-h,", "np.argsort(h,"),
          loses=("test_top_memories", "test_top_memories_hidden"), diagnosis="smallest_first"),
    # Ranking by z orders the silent units by how far below 0 they are: W-9's tests cannot tell.
    Wrong("top-by-z", "top_memories", _TOP_ARGSORT.replace("np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0)",
                                                           "np.asarray(x, dtype=float) @ W1 + b1"),
          loses=("test_top_memories_hidden",), diagnosis="ranked_by_z"),
    Wrong("top-without-b1", "top_memories", _TOP_ARGSORT.replace("@ W1 + b1", "@ W1"),
          loses=("test_top_memories_hidden",), diagnosis="ranked_without_b1"),
]
