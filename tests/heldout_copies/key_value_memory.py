"""Held-out pairs for 10_key_value_memory."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "10_key_value_memory"

CLASSMATE_RECALL = '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    outputs = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    values = np.asarray(values, dtype=float)
    values_unit = values / np.linalg.norm(values, axis=1, keepdims=True)
    correct = 0
    for i in range(len(outputs)):
        length = np.linalg.norm(outputs[i])
        if length > 0:
            correct += np.argmax(values_unit @ (outputs[i] / length)) == i
    return correct / len(outputs)
'''

PAIRS = [
    Pair("renamed", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    Ks = np.asarray(keys, dtype=float)
    Vs = np.asarray(values, dtype=float)
    normed = Ks / np.linalg.norm(Ks, axis=1, keepdims=True)
    count, dim = Ks.shape
    return normed.T, np.full(count, -float(threshold)), Vs / (1.0 - threshold), np.zeros(dim)
'''),
    Pair("reordered", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    V = np.asarray(values, dtype=float)
    K = np.asarray(keys, dtype=float)
    n, d_model = K.shape
    unit_keys = K / np.linalg.norm(K, axis=1, keepdims=True)
    return unit_keys.T, np.full(n, -float(threshold)), V / (1.0 - threshold), np.zeros(d_model)
'''),
    Pair("temporaries", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    K = np.asarray(keys, dtype=float)
    V = np.asarray(values, dtype=float)
    norms = np.linalg.norm(K, axis=1, keepdims=True)
    unit_keys = K / norms
    n, d_model = K.shape
    W1 = unit_keys.T
    b1 = np.full(n, -float(threshold))
    W2 = V / (1.0 - threshold)
    b2 = np.zeros(d_model)
    return W1, b1, W2, b2
'''),
    Pair("dead_code", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    K = np.asarray(keys, dtype=float)
    V = np.asarray(values, dtype=float)
    unit_keys = K / np.linalg.norm(K, axis=1, keepdims=True)
    similarity = unit_keys @ unit_keys.T
    n, d_model = K.shape
    return unit_keys.T, np.full(n, -float(threshold)), V / (1.0 - threshold), np.zeros(d_model)
'''),
    Pair("independent", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    W1 = np.stack([k / np.sqrt(np.dot(k, k)) for k in np.asarray(keys, float)], axis=1)
    n = W1.shape[1]
    b1 = -threshold * np.ones(n)
    W2 = np.asarray(values, float) * (1 / (1 - threshold))
    return W1, b1, W2, np.zeros(W2.shape[1])
'''),
    Pair("commented", "recall", SOLUTION, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    # run every key through the FFN
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    hits = 0
    for i, y in enumerate(Y):
        size = np.linalg.norm(y)
        if size == 0:
            continue  # zero output has no direction
        # cosine with every value
        cos = (V @ y) / (np.linalg.norm(V, axis=1) * size)
        hits += int(np.argmax(cos) == i)
    return hits / len(Y)
'''),
    Pair("dead_code", "recall", SOLUTION, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    hits = 0
    misses = []
    for i, y in enumerate(Y):
        size = np.linalg.norm(y)
        if size == 0:
            continue
        cos = (V @ y) / (np.linalg.norm(V, axis=1) * size)
        if np.argmax(cos) != i:
            misses.append(i)
        hits += int(np.argmax(cos) == i)
    return hits / len(Y)
'''),
    Pair("reordered", "recall", SOLUTION, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    V = np.asarray(values, dtype=float)
    hits = 0
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    for i, y in enumerate(Y):
        size = np.linalg.norm(y)
        if size == 0:
            continue
        cos = (V @ y) / (np.linalg.norm(V, axis=1) * size)
        hits += int(np.argmax(cos) == i)
    return hits / len(Y)
'''),
    Pair("renamed", "recall", CLASSMATE_RECALL, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    ys = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    vals = np.asarray(values, dtype=float)
    unit_vals = vals / np.linalg.norm(vals, axis=1, keepdims=True)
    good = 0
    for j in range(len(ys)):
        nrm = np.linalg.norm(ys[j])
        if nrm > 0:
            good += np.argmax(unit_vals @ (ys[j] / nrm)) == j
    return good / len(ys)
'''),
    Pair("temporaries", "recall", CLASSMATE_RECALL, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    hidden = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0)
    outputs = hidden @ W2 + b2
    values = np.asarray(values, dtype=float)
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    values_unit = values / norms
    correct = 0
    for i in range(len(outputs)):
        out = outputs[i]
        length = np.linalg.norm(out)
        if length > 0:
            direction = out / length
            best = np.argmax(values_unit @ direction)
            correct += best == i
    return correct / len(outputs)
'''),
    Pair("independent", "recall", SOLUTION, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    out = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    out_len = np.linalg.norm(out, axis=1)
    vals = np.asarray(values, dtype=float)
    vals = vals / np.linalg.norm(vals, axis=1)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        sims = (out / out_len[:, None]) @ vals.T
    best = np.argmax(np.nan_to_num(sims, nan=-np.inf), axis=1)
    return float(np.mean((best == np.arange(len(out))) & (out_len > 0)))
'''),
    Pair("renamed", "top_memories", SOLUTION, '''def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    act = np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0)
    return np.argsort(-act, axis=-1, kind="stable")[..., :k]
'''),
    Pair("temporaries", "top_memories", SOLUTION, '''def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    z = np.asarray(x, dtype=float) @ W1 + b1
    h = np.maximum(z, 0.0)
    order = np.argsort(-h, axis=-1, kind="stable")
    return order[..., :k]
'''),
    Pair("free_cell", "top_memories", SOLUTION, '''def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    return top_k_units(x, W1, b1, k)
''', free='''def top_k_units(x, W1, b1, k):
    h = np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0)
    return np.argsort(-h, axis=-1, kind="stable")[..., :k]
'''),
    Pair("independent", "top_memories", SOLUTION, '''def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    h = np.clip(np.asarray(x, dtype=float) @ W1 + b1, 0.0, None)
    idx = np.arange(h.shape[-1])
    order = np.lexsort((np.broadcast_to(idx, h.shape), -h), axis=-1)
    return order[..., :k]
'''),
    Pair("reformatted", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    K = np.asarray(keys, dtype=float); V = np.asarray(values, dtype=float)
    unit_keys = K/np.linalg.norm(K, axis=1, keepdims=True)
    n, d_model = K.shape
    return (unit_keys.T,
            np.full(n, -float(threshold)),
            V/(1.0 - threshold),
            np.zeros(d_model))
'''),
    Pair("commented", "kv_ffn", SOLUTION, '''def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    K = np.asarray(keys, dtype=float)
    V = np.asarray(values, dtype=float)
    # unit-length keys so the dot product is a cosine
    unit_keys = K / np.linalg.norm(K, axis=1, keepdims=True)
    n, d_model = K.shape
    # bias -threshold: a unit fires only for its own key; W2 rescales so the output is the value
    return unit_keys.T, np.full(n, -float(threshold)), V / (1.0 - threshold), np.zeros(d_model)
'''),
    Pair("parentheses", "top_memories", SOLUTION, '''def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    h = np.maximum(((np.asarray(x, dtype=float) @ W1) + b1), 0.0)
    return (np.argsort((-h), axis=-1, kind="stable"))[..., :k]
'''),
    Pair("reformatted", "recall", SOLUTION, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    Y = np.maximum(np.asarray(keys, dtype=float)@W1 + b1, 0.0)@W2 + b2
    V = np.asarray(values, dtype=float)
    hits = 0
    for i, y in enumerate(Y):
        size = np.linalg.norm(y)
        if size == 0: continue
        cos = (V@y)/(np.linalg.norm(V, axis=1)*size)
        hits += int(np.argmax(cos) == i)
    return hits/len(Y)
'''),
    Pair("free_cell", "recall", CLASSMATE_RECALL, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    return my_recall(W1, b1, W2, b2, keys, values)
''', free='''def my_recall(W1, b1, W2, b2, keys, values):
    outputs = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    values = np.asarray(values, dtype=float)
    values_unit = values / np.linalg.norm(values, axis=1, keepdims=True)
    correct = 0
    for i in range(len(outputs)):
        length = np.linalg.norm(outputs[i])
        if length > 0:
            correct += np.argmax(values_unit @ (outputs[i] / length)) == i
    return correct / len(outputs)
'''),
    Pair("reordered", "recall", CLASSMATE_RECALL, '''def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    values = np.asarray(values, dtype=float)
    values_unit = values / np.linalg.norm(values, axis=1, keepdims=True)
    outputs = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0) @ W2 + b2
    correct = 0
    for i in range(len(outputs)):
        length = np.linalg.norm(outputs[i])
        if length > 0:
            correct += np.argmax(values_unit @ (outputs[i] / length)) == i
    return correct / len(outputs)
'''),
    Pair("dead_code", "top_memories", SOLUTION, '''def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    h = np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0)
    if k <= 0:
        print("warning: k should be positive")
    return np.argsort(-h, axis=-1, kind="stable")[..., :k]
'''),
]
