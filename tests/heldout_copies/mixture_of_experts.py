"""Held-out pairs for 11_mixture_of_experts."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "11_mixture_of_experts"

CLASSMATE_LOSS = '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    chosen = np.asarray(expert_index).ravel()
    loss = 0.0
    for i in range(n_experts):
        f_i = np.mean(chosen == i)
        P_i = np.mean(probs[:, i])
        loss += f_i * P_i
    return float(n_experts * loss)
'''

PAIRS = [
    Pair("renamed", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    logits = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    top = np.argsort(-logits, axis=-1, kind="stable")[..., :k]
    picked = np.take_along_axis(logits, top, axis=-1)
    ex = np.exp(picked - picked[..., :1])
    return top, ex / ex.sum(axis=-1, keepdims=True)
'''),
    Pair("commented", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    r = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)  # router logits
    # stable sort of the negated logits: largest first, ties keep the lower index
    indices = np.argsort(-r, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(r, indices, axis=-1)
    # softmax over the chosen ones only, shifted by the max for safety
    e = np.exp(chosen - chosen[..., :1])
    return indices, e / e.sum(axis=-1, keepdims=True)
'''),
    Pair("temporaries", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    x = np.asarray(x, dtype=float)
    W = np.asarray(W_r, dtype=float)
    r = x @ W
    order = np.argsort(-r, axis=-1, kind="stable")
    indices = order[..., :k]
    chosen = np.take_along_axis(r, indices, axis=-1)
    top = chosen[..., :1]
    e = np.exp(chosen - top)
    total = e.sum(axis=-1, keepdims=True)
    gates = e / total
    return indices, gates
'''),
    Pair("dead_code", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    r = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    n_experts = r.shape[-1]
    if k > n_experts:
        k = n_experts
    indices = np.argsort(-r, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(r, indices, axis=-1)
    e = np.exp(chosen - chosen[..., :1])
    probs_all = np.exp(r) / np.exp(r).sum(axis=-1, keepdims=True)
    return indices, e / e.sum(axis=-1, keepdims=True)
'''),
    Pair("independent", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    logits = np.einsum("...d,de->...e", np.asarray(x, float), np.asarray(W_r, float))
    flat = logits.reshape(-1, logits.shape[-1])
    idx = np.empty((len(flat), k), dtype=int)
    for row, values in enumerate(flat):
        ranked = sorted(range(len(values)), key=lambda e: (-values[e], e))
        idx[row] = ranked[:k]
    idx = idx.reshape(logits.shape[:-1] + (k,))
    top = np.take_along_axis(logits, idx, axis=-1)
    return idx, special.softmax(top, axis=-1)
'''),
    Pair("renamed", "moe_param_count", SOLUTION, '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    per_expert = (3 if gated else 2) * d_model * d_ff
    routing = d_model * n_experts
    return n_experts * per_expert + routing, k * per_expert + routing
'''),
    Pair("reordered", "moe_param_count", SOLUTION, '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    router = d_model * n_experts
    expert = (3 if gated else 2) * d_model * d_ff
    return n_experts * expert + router, k * expert + router
'''),
    Pair("parentheses", "moe_param_count", SOLUTION, '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    expert = ((3 if gated else 2) * d_model) * d_ff
    router = (d_model * n_experts)
    return ((n_experts * expert) + router, (k * expert) + router)
'''),
    Pair("independent", "moe_param_count", SOLUTION, '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    matrices = 3 if gated else 2
    total = d_model * n_experts
    active = total
    for i in range(n_experts):
        size = matrices * d_ff * d_model
        total += size
        if i < k:
            active += size
    return total, active
'''),
    Pair("renamed", "load_balancing_loss", SOLUTION, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    p = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    idx = np.asarray(expert_index).reshape(-1)
    frac = np.bincount(idx, minlength=n_experts) / idx.size
    mean_p = p.mean(axis=0)
    return float(n_experts * np.sum(frac * mean_p))
'''),
    Pair("reordered", "load_balancing_loss", SOLUTION, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    index = np.asarray(expert_index).reshape(-1)
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    P = probs.mean(axis=0)
    f = np.bincount(index, minlength=n_experts) / index.size
    return float(n_experts * np.sum(f * P))
'''),
    Pair("free_cell", "load_balancing_loss", SOLUTION, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    return aux_loss(router_probs, expert_index, n_experts)
''', free='''def aux_loss(probs, idx, N):
    probs = np.asarray(probs, dtype=float).reshape(-1, N)
    idx = np.asarray(idx).reshape(-1)
    f = np.bincount(idx, minlength=N) / idx.size
    P = probs.mean(axis=0)
    return float(N * np.sum(f * P))
'''),
    Pair("dead_code", "load_balancing_loss", CLASSMATE_LOSS, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    chosen = np.asarray(expert_index).ravel()
    loss = 0.0
    alpha = 0.01
    for i in range(n_experts):
        f_i = np.mean(chosen == i)
        P_i = np.mean(probs[:, i])
        loss += f_i * P_i
    scaled = alpha * loss
    return float(n_experts * loss)
'''),
    Pair("renamed", "load_balancing_loss", CLASSMATE_LOSS, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    pr = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    sel = np.asarray(expert_index).ravel()
    acc = 0.0
    for e in range(n_experts):
        frac = np.mean(sel == e)
        prob = np.mean(pr[:, e])
        acc += frac * prob
    return float(n_experts * acc)
'''),
    Pair("independent", "load_balancing_loss", SOLUTION, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    one_hot = np.eye(n_experts)[np.asarray(expert_index).ravel()]
    f = one_hot.mean(axis=0)
    P = np.asarray(router_probs, dtype=float).reshape(-1, n_experts).mean(axis=0)
    return float(n_experts * (f @ P))
'''),
    Pair("independent", "load_balancing_loss", CLASSMATE_LOSS, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    P = np.asarray(router_probs, dtype=float)
    P = P.reshape(-1, P.shape[-1]).sum(axis=0) / P.reshape(-1, P.shape[-1]).shape[0]
    counts = collections.Counter(int(i) for i in np.ravel(expert_index))
    tokens = sum(counts.values())
    return n_experts * sum(counts[e] / tokens * P[e] for e in range(n_experts))
'''),
    Pair("reformatted", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    r = np.asarray(x, dtype=float)@np.asarray(W_r, dtype=float)
    indices = np.argsort(-r, axis=-1, kind="stable")[..., :k]; chosen = np.take_along_axis(r, indices, axis=-1)
    e = np.exp(chosen - chosen[..., :1])
    return indices, e/e.sum(axis=-1, keepdims=True)
'''),
    Pair("free_cell", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    return route(x, W_r, k)
''', free='''def route(x, W_r, k):
    r = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    indices = np.argsort(-r, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(r, indices, axis=-1)
    e = np.exp(chosen - chosen[..., :1])
    return indices, e / e.sum(axis=-1, keepdims=True)
'''),
    Pair("commented", "moe_param_count", SOLUTION, '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    expert = (3 if gated else 2) * d_model * d_ff  # gated experts have three matrices
    router = d_model * n_experts  # the router is always active
    # all experts are stored, only k run per token
    return n_experts * expert + router, k * expert + router
'''),
    Pair("free_cell", "moe_param_count", SOLUTION, '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    return moe_counts(d_model, d_ff, n_experts, k, gated)
''', free='''def moe_counts(d_model, d_ff, E, k, gated):
    expert = (3 if gated else 2) * d_model * d_ff
    router = d_model * E
    return E * expert + router, k * expert + router

moe_counts(4096, 14336, 8, 2, True)
'''),
    Pair("parentheses", "load_balancing_loss", SOLUTION, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    probs = (np.asarray(router_probs, dtype=float)).reshape((-1, n_experts))
    index = (np.asarray(expert_index)).reshape((-1))
    f = (np.bincount(index, minlength=n_experts)) / (index.size)
    P = probs.mean(axis=(0))
    return float((n_experts * np.sum((f * P))))
'''),
    Pair("reordered", "load_balancing_loss", CLASSMATE_LOSS, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    chosen = np.asarray(expert_index).ravel()
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    loss = 0.0
    for i in range(n_experts):
        P_i = np.mean(probs[:, i])
        f_i = np.mean(chosen == i)
        loss += f_i * P_i
    return float(n_experts * loss)
'''),
    Pair("commented", "load_balancing_loss", CLASSMATE_LOSS, '''def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's N · Σ_i f_i · P_i (before α).

    router_probs: (..., N) probabilities, expert_index: (...) ints, n_experts: N -> float.
    """
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)  # (tokens, N)
    chosen = np.asarray(expert_index).ravel()  # (tokens,)
    loss = 0.0
    for i in range(n_experts):
        f_i = np.mean(chosen == i)  # fraction of tokens sent to expert i
        P_i = np.mean(probs[:, i])  # mean router probability of expert i
        loss += f_i * P_i
    return float(n_experts * loss)
'''),
    Pair("reordered", "moe_forward", SOLUTION, '''def moe_forward(x, W_r, experts, k):
    """Mixture of experts: each token through its k chosen ReLU FFNs, weighted by the gates.

    x: (..., d_model), W_r: (d_model, E), experts: E tuples (W1, b1, W2, b2) -> (..., d_model).
    """
    x = np.asarray(x, dtype=float)
    tokens = x.reshape(-1, x.shape[-1])
    y = np.zeros(tokens.shape)
    indices, gates = router_topk(x, W_r, k)
    indices, gates = np.reshape(indices, (len(tokens), k)), np.reshape(gates, (len(tokens), k))
    for e, expert in enumerate(experts):
        rows, slots = np.nonzero(indices == e)
        if rows.size:
            y[rows] += gates[rows, slots, None] * ffn_forward(tokens[rows], *expert)
    return y.reshape(x.shape)
'''),
    Pair("dead_code", "moe_forward", SOLUTION, '''def moe_forward(x, W_r, experts, k):
    """Mixture of experts: each token through its k chosen ReLU FFNs, weighted by the gates.

    x: (..., d_model), W_r: (d_model, E), experts: E tuples (W1, b1, W2, b2) -> (..., d_model).
    """
    x = np.asarray(x, dtype=float)
    indices, gates = router_topk(x, W_r, k)
    tokens = x.reshape(-1, x.shape[-1])
    indices, gates = np.reshape(indices, (len(tokens), k)), np.reshape(gates, (len(tokens), k))
    y = np.zeros(tokens.shape)
    load = np.zeros(len(experts))
    for e, expert in enumerate(experts):
        rows, slots = np.nonzero(indices == e)
        load[e] = rows.size
        if rows.size:
            y[rows] += gates[rows, slots, None] * ffn_forward(tokens[rows], *expert)
        else:
            pass
    return y.reshape(x.shape)
'''),
    Pair("renamed", "moe_forward", SOLUTION, '''def moe_forward(x, W_r, experts, k):
    """Mixture of experts: each token through its k chosen ReLU FFNs, weighted by the gates.

    x: (..., d_model), W_r: (d_model, E), experts: E tuples (W1, b1, W2, b2) -> (..., d_model).
    """
    x = np.asarray(x, dtype=float)
    idx, g = router_topk(x, W_r, k)
    flat = x.reshape(-1, x.shape[-1])
    idx, g = np.reshape(idx, (len(flat), k)), np.reshape(g, (len(flat), k))
    acc = np.zeros(flat.shape)
    for j, params in enumerate(experts):
        who, where = np.nonzero(idx == j)
        if who.size:
            acc[who] += g[who, where, None] * ffn_forward(flat[who], *params)
    return acc.reshape(x.shape)
'''),
    Pair("parentheses", "router_topk", SOLUTION, '''def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    r = (np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float))
    indices = (np.argsort((-r), axis=-1, kind="stable"))[..., :k]
    chosen = np.take_along_axis(r, indices, axis=(-1))
    e = np.exp((chosen - (chosen[..., :1])))
    return (indices, (e / (e.sum(axis=-1, keepdims=True))))
'''),
    Pair("independent", "moe_forward", SOLUTION, '''def moe_forward(x, W_r, experts, k):
    """Mixture of experts: each token through its k chosen ReLU FFNs, weighted by the gates.

    x: (..., d_model), W_r: (d_model, E), experts: E tuples (W1, b1, W2, b2) -> (..., d_model).
    """
    x = np.asarray(x, dtype=float)
    chosen, weights = router_topk(x, W_r, k)
    out = np.zeros_like(x)
    for pos in np.ndindex(x.shape[:-1]):
        for slot in range(k):
            W1, b1, W2, b2 = experts[chosen[pos][slot]]
            out[pos] += weights[pos][slot] * (np.maximum(x[pos] @ W1 + b1, 0) @ W2 + b2)
    return out
'''),
]
