r"""Mixture of experts: a router sends each token to k of E expert FFNs.

    r = x W_r                        (logits, one per expert; W_r: (d_model, E))
    top k of r, ties to the lower index, largest first
    gates = softmax over those k logits   (Mixtral's rule)
    y = Σ_j gates_j · FFN_{indices_j}(x)

Every expert here is a ReLU FFN given as a tuple (W1, b1, W2, b2). Parameter
counts cover the experts (no biases, gated or plain) and the router; a whole
model's count is `model_param_counts(MIXTRAL_8X7B)`. The load-balancing loss is
Switch Transformer's, E · Σ_i f_i · P_i, before its scale α.
"""

from dataclasses import dataclass

import numpy as np

from ._arrays import as_float, check_matrix, positive_int
from .budgets import attention_param_count, ffn_param_count
from .ffn import ffn_forward


def _router_inputs(x, W_r):
    x, W_r = as_float(x, "x"), as_float(W_r, "W_r")
    check_matrix(W_r, "W_r")
    if x.ndim == 0 or x.shape[-1] != W_r.shape[0]:
        raise ValueError(f"x should have shape (..., d_model) with d_model = W_r.shape[0] = {W_r.shape[0]}, "
                         f"got {x.shape}")
    return x, W_r


def router_logits(x, W_r):
    """r = x W_r; x: (..., d_model), W_r: (d_model, E) -> (..., E)."""
    x, W_r = _router_inputs(x, W_r)
    return x @ W_r


def softmax(r, axis=-1):
    """exp(r) / Σ exp(r) along `axis`, with the maximum subtracted first (no overflow)."""
    r = as_float(r, "r")
    e = np.exp(r - r.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def router_probs(x, W_r):
    """Softmax over all E logits, the router probabilities p (Switch Transformer's); -> (..., E)."""
    return softmax(router_logits(x, W_r))


def top_k(r, k):
    """Indices of the k largest entries of r along the last axis, largest first, ties to the lower index."""
    r = as_float(r, "r")
    k = positive_int(k, "k")
    if k > r.shape[-1]:
        raise ValueError(f"k must be at most the number of experts E = {r.shape[-1]}, got k = {k}")
    if np.isnan(r).any():
        raise ValueError("the router logits contain NaN: no expert can be ranked")
    # A stable sort of -r keeps equal logits in index order: the lower index comes first.
    return np.argsort(-r, axis=-1, kind="stable")[..., :k]


def router_topk(x, W_r, k):
    """(indices, gates) of the k experts with the largest logits x W_r, largest first.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) int64, gates (..., k) float64.
    Ties go to the lower index; gates are the softmax over the k selected logits (they sum to 1).
    """
    r = router_logits(x, W_r)
    indices = top_k(r, k)
    gates = softmax(np.take_along_axis(r, indices, axis=-1))
    return indices.astype(np.int64), gates


def _experts(experts, E, d_model):
    try:
        experts = list(experts)
    except TypeError:
        raise TypeError(f"experts should be a sequence of (W1, b1, W2, b2) tuples, got {type(experts).__name__}") \
            from None
    if len(experts) != E:
        raise ValueError(f"experts should hold E = W_r.shape[1] = {E} experts, got {len(experts)}")
    for i, expert in enumerate(experts):
        if not isinstance(expert, tuple | list) or len(expert) != 4:
            raise TypeError(f"experts[{i}] should be a tuple (W1, b1, W2, b2), got {expert!r}")
        W1, W2 = np.shape(expert[0]), np.shape(expert[2])
        if len(W1) != 2 or W1[0] != d_model or len(W2) != 2 or W2[1] != d_model:
            raise ValueError(f"experts[{i}] should map d_model = {d_model} to d_model: W1 (d_model, d_ff) and "
                             f"W2 (d_ff, d_model), got W1 {W1} and W2 {W2}")
    return experts


def moe_forward(x, W_r, experts, k):
    """y = Σ_j gates_j · FFN_{indices_j}(x), each token routed on its own.

    x: (..., d_model), W_r: (d_model, E), experts: E tuples (W1, b1, W2, b2) of ReLU FFNs
    -> (..., d_model).
    """
    x, W_r = _router_inputs(x, W_r)
    experts = _experts(experts, W_r.shape[1], W_r.shape[0])
    indices, gates = router_topk(x, W_r, k)
    tokens = x.reshape(-1, x.shape[-1])
    indices, gates = indices.reshape(len(tokens), -1), gates.reshape(len(tokens), -1)
    y = np.zeros_like(tokens)
    for slot in range(indices.shape[1]):  # slot 0 (the largest gate) first, as the formula sums
        for e, expert in enumerate(experts):
            rows = np.flatnonzero(indices[:, slot] == e)
            if rows.size:  # an expert computes only the tokens routed to it
                y[rows] += gates[rows, slot, None] * ffn_forward(tokens[rows], *expert)
    return y.reshape(x.shape)


def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE FFN layer: n_experts experts without biases and the router.

    An expert has 3·d_model·d_ff parameters when gated (SwiGLU), 2·d_model·d_ff otherwise;
    the router W_r has d_model·n_experts. A token uses k experts and the router.
    """
    n_experts, k = positive_int(n_experts, "n_experts"), positive_int(k, "k")
    if k > n_experts:
        raise ValueError(f"k must be at most n_experts = {n_experts}, got k = {k}")
    expert = ffn_param_count(d_model, d_ff, bias=False, gated=gated)
    router = d_model * n_experts
    return n_experts * expert + router, k * expert + router


@dataclass(frozen=True)
class MoEConfig:
    """A decoder-only MoE transformer as its configuration file describes it."""

    name: str
    d_model: int
    d_ff: int
    n_layers: int
    n_experts: int
    k: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    vocab_size: int
    tied_embeddings: bool = False
    gated: bool = True


# Mixtral 8x7B's config.json: hidden_size 4096, intermediate_size 14336, num_hidden_layers 32,
# num_local_experts 8, num_experts_per_tok 2, num_attention_heads 32, num_key_value_heads 8,
# head_dim 4096 / 32 = 128, vocab_size 32000, tie_word_embeddings false; RMSNorm, no biases.
MIXTRAL_8X7B = MoEConfig("Mixtral 8x7B", d_model=4096, d_ff=14336, n_layers=32, n_experts=8, k=2,
                         n_heads=32, n_kv_heads=8, head_dim=128, vocab_size=32000)


def model_param_counts(config):
    """Per-part parameter counts of a MoE model: a dict part -> (total, active), with "all" the sums.

    Per layer: attention (Q and output d_model × n_heads·head_dim, K and V d_model × n_kv_heads·head_dim,
    no biases), two RMSNorm weights (d_model each), the router and the experts. Once: the token
    embedding, the output head (unless tied) and the final norm. "Active" is what one token uses:
    k experts instead of all of them; every other part counts in full, as model cards count.
    """
    if config.n_heads * config.head_dim != config.d_model:
        raise ValueError(f"{config.name}: n_heads · head_dim should equal d_model, got "
                         f"{config.n_heads} · {config.head_dim} and {config.d_model}")
    L = config.n_layers
    expert = ffn_param_count(config.d_model, config.d_ff, bias=False, gated=config.gated)
    router = config.d_model * config.n_experts
    attention = attention_param_count(config.d_model, bias=False, d_kv=config.n_kv_heads * config.head_dim)
    embeddings = config.vocab_size * config.d_model * (1 if config.tied_embeddings else 2)
    parts = {
        "embeddings": (embeddings, embeddings),
        "attention": (L * attention, L * attention),
        "norms": (L * 2 * config.d_model + config.d_model,) * 2,
        "router": (L * router, L * router),
        "experts": (L * config.n_experts * expert, L * config.k * expert),
    }
    parts["all"] = tuple(sum(p[i] for p in parts.values()) for i in (0, 1))
    return parts


def expert_shares(expert_index, n_experts):
    """f_i: the share of tokens whose expert is i; expert_index: (...) ints in [0, n_experts) -> (n_experts,)."""
    n_experts = positive_int(n_experts, "n_experts")
    index = np.asarray(expert_index)
    if index.size == 0 or index.dtype.kind not in "iu":
        raise TypeError(f"expert_index should be a non-empty array of integers, got dtype {index.dtype}, "
                        f"shape {index.shape}")
    if index.min() < 0 or index.max() >= n_experts:
        raise ValueError(f"expert_index should lie in [0, {n_experts}), got values from {index.min()} to "
                         f"{index.max()}")
    return np.bincount(index.ravel(), minlength=n_experts) / index.size


def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's auxiliary loss E · Σ_i f_i · P_i, before the scale α (a float).

    router_probs: (..., E) softmax over all E experts; expert_index: (...) the expert each token
    was sent to. f_i is the share of tokens sent to expert i, P_i the mean probability of expert i.
    It is 1 when routing is uniform, and E when every token goes to one expert with certainty.
    """
    probs = as_float(router_probs, "router_probs")
    n_experts = positive_int(n_experts, "n_experts")
    if probs.ndim == 0 or probs.shape[-1] != n_experts:
        raise ValueError(f"router_probs should have shape (..., n_experts) = (..., {n_experts}), got {probs.shape}")
    if np.shape(expert_index) != probs.shape[:-1]:
        raise ValueError(f"expert_index should have shape {probs.shape[:-1]} (one expert per token), got "
                         f"{np.shape(expert_index)}")
    f = expert_shares(expert_index, n_experts)
    P = probs.reshape(-1, n_experts).mean(axis=0)
    return float(n_experts * np.dot(f, P))
