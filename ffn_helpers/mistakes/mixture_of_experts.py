"""Notebook 11's mistakes: the router, the mixture-of-experts forward pass, parameter counts, load balancing."""

import numpy as np

from .forward_pass import ffn_variant
from .mistake import Mistake, in_part


def _moe_logits(x, W_r):
    return np.asarray(x, float) @ np.asarray(W_r, float)


def _moe_right_indices(x, W_r, k):
    return np.argsort(-_moe_logits(x, W_r), axis=-1, kind="stable")[..., :k]


def _moe_selected(x, W_r, k):
    return np.take_along_axis(_moe_logits(x, W_r), _moe_right_indices(x, W_r, k), axis=-1)


def _moe_softmax(r):
    e = np.exp(r - r.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_over_all(x, W_r, k):
    """The softmax over all E logits, read at the k chosen experts."""
    return np.take_along_axis(_moe_softmax(_moe_logits(x, W_r)), _moe_right_indices(x, W_r, k), axis=-1)


# A mistake of router_topk's gates that moe_forward can make too.
_ALL_EXPERTS_SOFTMAX = ("softmax_over_all_experts", "your gates are the softmax over all E logits, read at the "
                        "chosen experts, so they sum to less than 1: take the softmax over the k selected logits "
                        "only (Mixtral's rule, router_topk's gates).")


# router_topk returns (indices, gates); the notebook compares each on its own.
ROUTER_TOPK = in_part("indices", (
    Mistake("ties_to_higher_index", "on equal logits you put the higher index first (reversing an ascending "
            "sort does that); ties go to the lower index: np.argsort(-r, kind=\"stable\").",
            lambda x, W_r, k: np.argsort(_moe_logits(x, W_r), axis=-1, kind="stable")[..., ::-1][..., :k]),
    Mistake("smallest_logits", "you picked the k smallest logits: the router keeps the k largest.",
            lambda x, W_r, k: np.argsort(_moe_logits(x, W_r), axis=-1, kind="stable")[..., :k]),
    Mistake("indices_in_index_order", "you returned the chosen experts in index order; list them by logit, "
            "largest first (the gates follow the same order).",
            lambda x, W_r, k: np.sort(_moe_right_indices(x, W_r, k), axis=-1)),
)) + in_part("gates", (
    Mistake(*_ALL_EXPERTS_SOFTMAX, _softmax_over_all),
    Mistake("gates_not_normalised", "your gates are exp(logit) of the chosen experts, never divided by their sum: "
            "normalise them so that they add up to 1.", lambda x, W_r, k: np.exp(_moe_selected(x, W_r, k))),
    Mistake("logits_as_gates", "your gates are the selected logits themselves: apply the softmax to them.",
            _moe_selected),
))


def _moe_outputs(x, experts):
    return np.stack([ffn_variant(x, *expert) for expert in experts], axis=-2)  # (..., E, d_model)


def _moe_mix(x, W_r, experts, k, weights):
    """Σ over the chosen experts of weights (..., k) times their outputs."""
    chosen = np.take_along_axis(_moe_outputs(x, experts), _moe_right_indices(x, W_r, k)[..., None], axis=-2)
    return (weights[..., None] * chosen).sum(axis=-2)


MOE_FORWARD = (
    Mistake("dense_mixture", "you mixed every expert's output with the softmax over all E logits: the layer "
            "runs only the k chosen experts, weighted by their gates.",
            lambda x, W_r, experts, k: (_moe_softmax(_moe_logits(x, W_r))[..., None]
                                        * _moe_outputs(x, experts)).sum(axis=-2)),
    Mistake("ungated_sum", "you added the chosen experts' outputs without their gates: y = Σ gate_j · FFN_j(x).",
            lambda x, W_r, experts, k: _moe_mix(x, W_r, experts, k, np.ones(np.shape(_moe_selected(x, W_r, k))))),
    Mistake("mean_of_experts", "you averaged the chosen experts' outputs (each weight 1/k): weight each by its "
            "gate.", lambda x, W_r, experts, k: _moe_mix(x, W_r, experts, k,
                                                          np.full(np.shape(_moe_selected(x, W_r, k)), 1.0 / k))),
    Mistake(*_ALL_EXPERTS_SOFTMAX,
            lambda x, W_r, experts, k: _moe_mix(x, W_r, experts, k, _softmax_over_all(x, W_r, k))),
)


def _moe_counts(d_model, d_ff, n_experts, k, gated=True, *, matrices=None, router=True, active_router=True,
                active=None):
    expert = (matrices or (3 if gated else 2)) * d_model * d_ff
    r = d_model * n_experts if router else 0
    total = n_experts * expert + r
    return total, (k if active is None else active) * expert + (r if active_router else 0)


MOE_PARAM_COUNT = (
    Mistake("all_experts_active", "you counted every expert as active: a token runs only k of them, so active = "
            "k experts + the router.", lambda d_model, d_ff, n_experts, k, gated=True: _moe_counts(
                d_model, d_ff, n_experts, k, gated, active=n_experts)),
    Mistake("router_left_out", "the router W_r (d_model × n_experts) is missing: it is part of the layer, and "
            "every token uses it.", lambda d_model, d_ff, n_experts, k, gated=True: _moe_counts(
                d_model, d_ff, n_experts, k, gated, router=False)),
    Mistake("router_not_active", "the router counts in the active parameters too: every token is routed.",
            lambda d_model, d_ff, n_experts, k, gated=True: _moe_counts(d_model, d_ff, n_experts, k, gated,
                                                                        active_router=False)),
    Mistake("gated_ignored", "a gated (SwiGLU) expert has three matrices, W_gate, W_up and W_down: "
            "3·d_model·d_ff, not 2·d_model·d_ff.", lambda d_model, d_ff, n_experts, k, gated=True: _moe_counts(
                d_model, d_ff, n_experts, k, gated, matrices=2)),
)


def _balance_parts(router_probs, expert_index, n_experts):
    probs = np.asarray(router_probs, float).reshape(-1, n_experts)
    counts = np.bincount(np.asarray(expert_index).ravel(), minlength=n_experts).astype(float)
    return counts, counts / counts.sum(), probs.mean(axis=0)


def _balance_without_minlength(p, i, n):
    """f from np.bincount without minlength: shorter than E when the last experts get no token, then broadcast."""
    index = np.asarray(i).ravel()
    f = np.bincount(index) / index.size
    P = np.asarray(p, float).reshape(-1, n).mean(axis=0)
    if f.size not in (1, n):
        raise ValueError("these shares do not broadcast against P: numpy raises, no silent result")
    return n * float(np.sum(f * P))


LOAD_BALANCING_LOSS = (
    Mistake("missing_n_experts_factor", "you left out the factor E (the number of experts): the loss is "
            "E · Σ f_i · P_i, which is 1 for uniform routing.",
            lambda p, i, n: float(np.dot(*_balance_parts(p, i, n)[1:]))),
    Mistake("alpha_applied", "you multiplied by α = 0.01: the exercise asks for the loss before that scale, "
            "E · Σ f_i · P_i.", lambda p, i, n: 0.01 * n * float(np.dot(*_balance_parts(p, i, n)[1:]))),
    Mistake("counts_for_shares", "f_i is the share of tokens sent to expert i (count / number of tokens), "
            "not the count.", lambda p, i, n: n * float(np.dot(_balance_parts(p, i, n)[0],
                                                               _balance_parts(p, i, n)[2]))),
    Mistake("probs_for_shares", "you used the mean probability P_i in place of the share f_i (E · Σ P_i²): "
            "f_i counts where the tokens were actually sent.",
            lambda p, i, n: n * float(np.sum(_balance_parts(p, i, n)[2] ** 2))),
    Mistake("bincount_without_minlength", "np.bincount(expert_index) stops at the highest expert that got a token: "
            "the experts after it are missing from f, whose shorter array numpy broadcasts against P without a word; "
            "pass minlength=n_experts.", _balance_without_minlength),
)

CATALOGUE = {"router_topk": ROUTER_TOPK, "moe_forward": MOE_FORWARD, "moe_param_count": MOE_PARAM_COUNT,
             "load_balancing_loss": LOAD_BALANCING_LOSS}
