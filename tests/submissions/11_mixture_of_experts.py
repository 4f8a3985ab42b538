"""Alternative answers for 11_mixture_of_experts."""

from . import Wrong

# Token by token, in plain Python: sort the experts by (-logit, index), then a softmax by hand.
_ROUTER_LOOP = '''import math

import numpy as np

def router_topk(x, W_r, k):
    x = np.asarray(x, dtype=float)
    r = (x @ np.asarray(W_r, dtype=float)).reshape(-1, np.shape(W_r)[1])
    indices, gates = [], []
    for row in r:
        best = sorted(range(len(row)), key=lambda e: (-row[e], e))[:k]
        weights = [math.exp(row[e] - row[best[0]]) for e in best]
        indices.append(best)
        gates.append([w / sum(weights) for w in weights])
    shape = x.shape[:-1] + (k,)
    return np.array(indices, dtype=np.int64).reshape(shape), np.array(gates).reshape(shape)
'''

# The softmax over all E logits, renormalised over the chosen k: the same gates.
_ROUTER_RENORMALISED = '''import numpy as np

def router_topk(x, W_r, k):
    r = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    p = np.exp(r - r.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    indices = np.argsort(-r, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(p, indices, axis=-1)
    return indices, chosen / chosen.sum(axis=-1, keepdims=True)
'''


def _router(index_line, gate_lines):
    return f'''import numpy as np

def router_topk(x, W_r, k):
    r = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    indices = {index_line}
    chosen = np.take_along_axis(r, indices, axis=-1)
{gate_lines}
    return indices, gates
'''


_RIGHT_GATES = '''    e = np.exp(chosen - chosen.max(axis=-1, keepdims=True))
    gates = e / e.sum(axis=-1, keepdims=True)'''
_STABLE = 'np.argsort(-r, axis=-1, kind="stable")[..., :k]'

# Every expert on every token, then the chosen outputs picked out and weighted.
_MOE_DENSE = '''import numpy as np

def moe_forward(x, W_r, experts, k):
    x = np.asarray(x, dtype=float)
    indices, gates = router_topk(x, W_r, k)
    outputs = np.stack([np.maximum(x @ W1 + b1, 0) @ W2 + b2 for W1, b1, W2, b2 in experts], axis=-2)
    chosen = np.take_along_axis(outputs, np.asarray(indices)[..., None], axis=-2)
    return np.sum(np.asarray(gates)[..., None] * chosen, axis=-2)
'''

# One token at a time, only its chosen experts.
_MOE_LOOP = '''import numpy as np

def moe_forward(x, W_r, experts, k):
    x = np.asarray(x, dtype=float)
    indices, gates = router_topk(x, W_r, k)
    y = np.zeros_like(x)
    for t in np.ndindex(x.shape[:-1]):
        for e, g in zip(np.atleast_1d(indices[t]), np.atleast_1d(gates[t])):
            W1, b1, W2, b2 = experts[e]
            y[t] += g * (np.maximum(x[t] @ W1 + b1, 0.0) @ W2 + b2)
    return y
'''

_COUNT_FORMULA = '''def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    per_expert = (3 if gated else 2) * d_model * d_ff
    router = d_model * n_experts
    return n_experts * per_expert + router, k * per_expert + router
'''

_COUNT_SHAPES = '''import math

def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    names = ("W_gate", "W_up", "W_down") if gated else ("W1", "W2")
    shapes = {name: (d_ff, d_model) if name in ("W_down", "W2") else (d_model, d_ff) for name in names}
    expert = sum(math.prod(shape) for shape in shapes.values())
    router = math.prod((d_model, n_experts))
    total = router + sum(expert for _ in range(n_experts))
    active = router + sum(expert for _ in range(k))
    return total, active
'''

_BALANCE_BINCOUNT = '''import numpy as np

def load_balancing_loss(router_probs, expert_index, n_experts):
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    index = np.asarray(expert_index).ravel()
    f = np.bincount(index, minlength=n_experts) / index.size
    return float(n_experts * f @ probs.mean(axis=0))
'''

_BALANCE_ONE_HOT = '''import numpy as np

def load_balancing_loss(router_probs, expert_index, n_experts):
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    one_hot = np.eye(n_experts)[np.asarray(expert_index).ravel()]
    f = one_hot.mean(axis=0)
    P = probs.mean(axis=0)
    return float(n_experts * sum(f[i] * P[i] for i in range(n_experts)))
'''

CORRECT = {
    "loop-shapes-onehot": {"router_topk": _ROUTER_LOOP, "moe_forward": _MOE_LOOP,
                           "moe_param_count": _COUNT_SHAPES, "load_balancing_loss": _BALANCE_ONE_HOT},
    "renormalised-dense-formula": {"router_topk": _ROUTER_RENORMALISED, "moe_forward": _MOE_DENSE,
                                   "moe_param_count": _COUNT_FORMULA, "load_balancing_loss": _BALANCE_BINCOUNT},
}

_ROUTER_BOTH = ("test_router_topk", "test_router_topk_hidden")
_MOE_BOTH = ("test_moe_forward", "test_moe_forward_hidden")
_COUNT_BOTH = ("test_moe_param_count", "test_moe_param_count_hidden")
_BALANCE_BOTH = ("test_load_balancing_loss", "test_load_balancing_loss_hidden")

WRONG = [
    # A stable ascending sort, reversed. W-10 has no ties, so only the hidden ties show it.
    Wrong("router-ties-high", "router_topk", _router('np.argsort(r, axis=-1, kind="stable")[..., ::-1][..., :k]',
                                                     _RIGHT_GATES),
          loses=("test_router_topk_hidden",), diagnosis="ties_to_higher_index"),
    Wrong("router-softmax-all", "router_topk", _router(_STABLE, '''    p = np.exp(r - r.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    gates = np.take_along_axis(p, indices, axis=-1)'''), loses=_ROUTER_BOTH, diagnosis="softmax_over_all_experts"),
    Wrong("router-not-normalised", "router_topk", _router(_STABLE, "    gates = np.exp(chosen)"),
          loses=_ROUTER_BOTH, diagnosis="gates_not_normalised"),
    Wrong("router-index-order", "router_topk", _router("np.sort(np.argsort(-r, axis=-1, kind='stable')[..., :k], "
                                                       "axis=-1)", _RIGHT_GATES),
          loses=_ROUTER_BOTH, diagnosis="indices_in_index_order"),
    Wrong("moe-ungated", "moe_forward", _MOE_DENSE.replace("np.asarray(gates)[..., None] * chosen", "chosen"),
          loses=_MOE_BOTH, diagnosis="ungated_sum"),
    Wrong("moe-mean", "moe_forward", _MOE_DENSE.replace("np.sum(np.asarray(gates)[..., None] * chosen, axis=-2)",
                                                        "np.mean(chosen, axis=-2)"),
          loses=_MOE_BOTH, diagnosis="mean_of_experts"),
    # A dense "soft" mixture: every expert, weighted by the softmax over all E logits; k is ignored.
    Wrong("moe-dense-softmax", "moe_forward", '''import numpy as np

def moe_forward(x, W_r, experts, k):
    x = np.asarray(x, dtype=float)
    r = x @ W_r
    p = np.exp(r - r.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    y = np.zeros_like(x)
    for e, (W1, b1, W2, b2) in enumerate(experts):
        y += p[..., e:e + 1] * (np.maximum(x @ W1 + b1, 0) @ W2 + b2)
    return y
''', loses=_MOE_BOTH, diagnosis="dense_mixture"),
    Wrong("count-all-active", "moe_param_count", _COUNT_FORMULA.replace("k * per_expert", "n_experts * per_expert"),
          loses=_COUNT_BOTH, diagnosis="all_experts_active"),
    Wrong("count-no-router", "moe_param_count", _COUNT_FORMULA.replace("router = d_model * n_experts", "router = 0"),
          loses=_COUNT_BOTH, diagnosis="router_left_out"),
    Wrong("count-router-not-active", "moe_param_count",
          _COUNT_FORMULA.replace("k * per_expert + router", "k * per_expert"),
          loses=_COUNT_BOTH, diagnosis="router_not_active"),
    # Always three matrices: right for Mixtral, wrong for plain experts (hidden only).
    Wrong("count-always-gated", "moe_param_count", _COUNT_FORMULA.replace("(3 if gated else 2)", "3"),
          loses=("test_moe_param_count_hidden",)),
    Wrong("balance-no-n", "load_balancing_loss", _BALANCE_BINCOUNT.replace("n_experts * f @", "f @"),
          loses=_BALANCE_BOTH, diagnosis="missing_n_experts_factor"),
    Wrong("balance-alpha", "load_balancing_loss",
          _BALANCE_BINCOUNT.replace("float(n_experts", "float(0.01 * n_experts"),
          loses=_BALANCE_BOTH, diagnosis="alpha_applied"),
    Wrong("balance-counts", "load_balancing_loss", _BALANCE_BINCOUNT.replace(" / index.size", ""),
          loses=_BALANCE_BOTH, diagnosis="counts_for_shares"),
    # np.bincount without minlength is short when the last experts get no token: a shape error (hidden only).
    Wrong("balance-no-minlength", "load_balancing_loss",
          _BALANCE_BINCOUNT.replace("np.bincount(index, minlength=n_experts)", "np.bincount(index)"),
          loses=("test_load_balancing_loss_hidden",)),
]
