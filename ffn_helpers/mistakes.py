"""A catalogue of the mistakes learners make, each as the wrong result it produces.

Each `Mistake` has a stable `key` (used in grading reports), a one-line
`explanation` a teacher can read out, and `compute`, the wrong function
applied to the same inputs as the right one. `checks.diagnose` compares a
learner's result with these to name the likely mistake.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import activations as act
from .norm import layer_norm


@dataclass(frozen=True)
class Mistake:
    key: str
    explanation: str
    compute: Callable  # takes the exercise's own arguments


def _ffn(x, W1, b1, W2, b2, sigma=act.relu, out=None):
    z = np.asarray(x, float) @ W1 + (0 if b1 is None else b1)
    y = sigma(z) @ W2 + (0 if b2 is None else b2)
    return y if out is None else out(y)


def _layer_norm(x, gamma=None, beta=None, eps=1e-5, *, ddof=0, eps_outside=False, axis=-1):
    x = np.asarray(x, float)
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)
    out = (x - mean) / (np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps))
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out


FFN = (
    Mistake("missing_b1", "your output equals the FFN without b1: did you forget to add b1 before σ?",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, None, W2, b2)),
    Mistake("missing_b2", "your output equals the FFN without b2: did you forget to add b2 at the end?",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, None)),
    Mistake("no_activation", "your output equals (x W1 + b1) W2 + b2 with no ReLU: apply σ to the hidden layer.",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, b2, sigma=lambda z: z)),
    Mistake("activation_on_output", "your output has ReLU applied to it as well: σ goes between the layers only.",
            lambda x, W1, b1, W2, b2: _ffn(x, W1, b1, W2, b2, out=act.relu)),
    Mistake("bias_after_activation", "you added b1 after the ReLU: the bias belongs inside, σ(x W1 + b1).",
            lambda x, W1, b1, W2, b2: (act.relu(np.asarray(x, float) @ W1) + b1) @ W2 + b2),
)

LINEAR_TORCH = (
    Mistake("torch_layout", "nn.Linear stores weight as (out_features, in_features): compute x @ weight.T + bias.",
            lambda x, weight, bias: np.asarray(x, float) @ weight + (0 if bias is None else bias)),
    Mistake("missing_bias", "your output equals x @ weight.T without the bias: add bias.",
            lambda x, weight, bias: np.asarray(x, float) @ np.asarray(weight, float).T),
)

# erf_cancellation differs from the exact GELU by less than 1e-15 in absolute terms
# (only the far tail, where GELU itself is tiny, is lost): a check names it only
# with an absolute tolerance below that, e.g. check(..., atol=0), on inputs like z = -10.
GELU = (
    Mistake("gelu_tanh_for_exact", "this is the tanh approximation of GELU; the exercise asks for the exact z·Φ(z).",
            lambda z: act.gelu_tanh(z)),
    Mistake("gelu_sigmoid_approx",
            "this is the sigmoid approximation z·σ(1.702 z); the exercise asks for the exact z·Φ(z).",
            lambda z: np.asarray(z, float) * act.sigmoid(1.702 * np.asarray(z, float))),
    Mistake("silu_for_gelu", "this is SiLU, z·σ(z), not GELU: GELU weights z by the normal CDF Φ(z).",
            lambda z: act.silu(z)),
    Mistake("sigmoid_for_gelu", "this is the sigmoid σ(z) itself; GELU is z·Φ(z).",
            lambda z: act.sigmoid(z)),
    Mistake("erf_cancellation", "0.5·z·(1 + erf(z/√2)) cancels to -0.0 in the far negative tail: use erfc or ndtr.",
            lambda z: _naive_gelu(z)),
)

SILU = (
    Mistake("sigmoid_for_silu", "this is σ(z) itself; SiLU multiplies by z: z·σ(z).", lambda z: act.sigmoid(z)),
    Mistake("gelu_for_silu", "this is GELU, z·Φ(z); SiLU is z·σ(z).", lambda z: act.gelu(z)),
)

LAYER_NORM = (
    Mistake("unbiased_variance", "you used the unbiased variance (divide by d - 1); LayerNorm divides by d (ddof=0).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, ddof=1)),
    Mistake("eps_outside_sqrt", "eps belongs inside the square root: (x - μ) / √(σ² + eps).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, eps_outside=True)),
    Mistake("wrong_axis",
            "you normalised over the wrong axis: LayerNorm normalises each token over its features (axis=-1).",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, eps, axis=0)),
    Mistake("no_eps", "you left out eps: it keeps the division safe when a row is constant.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, 0.0)),
    Mistake("ignored_gamma_beta", "gamma and beta were ignored: scale by gamma, then add beta.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, None, None, eps)),
    Mistake("ignored_gamma", "gamma was ignored: scale the normalised x by gamma before adding beta.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, None, beta, eps)),
    Mistake("ignored_beta", "beta was ignored: add beta after scaling by gamma.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, None, eps)),
)

POST_LN = (
    Mistake("normalised_before_add", "you normalised before the residual add; post-LN is LN(x + sublayer(x)).",
            lambda x, sublayer, eps=1e-5: layer_norm(x, eps=eps) + sublayer(x)),
    Mistake("pre_ln_for_post_ln", "this is pre-LN, x + sublayer(LN(x)); post-LN adds first, then normalises.",
            lambda x, sublayer, eps=1e-5: x + sublayer(layer_norm(x, eps=eps))),
    Mistake("missing_residual", "the residual x is missing: LN(x + sublayer(x)), not LN(sublayer(x)).",
            lambda x, sublayer, eps=1e-5: layer_norm(sublayer(x), eps=eps)),
)

PRE_LN = (
    Mistake("post_ln_for_pre_ln", "this is post-LN, LN(x + sublayer(x)); pre-LN normalises the sublayer's input only.",
            lambda x, sublayer, eps=1e-5: layer_norm(x + sublayer(x), eps=eps)),
    Mistake("normalised_residual", "you added LN(x) instead of x: the residual path carries x unchanged.",
            lambda x, sublayer, eps=1e-5: layer_norm(x, eps=eps) + sublayer(layer_norm(x, eps=eps))),
    Mistake("missing_residual", "the residual x is missing: x + sublayer(LN(x)).",
            lambda x, sublayer, eps=1e-5: sublayer(layer_norm(x, eps=eps))),
)


def _naive_gelu(z):
    from ._lazy import special

    z = np.asarray(z, float)
    return 0.5 * z * (1.0 + special().erf(z / np.sqrt(2.0)))


# --- notebook 03: more LayerNorm and block mistakes ---------------------------

def _rms_norm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, float)
    out = x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)
    return (out if gamma is None else out * gamma) + (0 if beta is None else beta)


def _not_centred(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, float)
    out = x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return (out if gamma is None else out * gamma) + (0 if beta is None else beta)


def _missing_sqrt(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x, float)
    out = (x - x.mean(axis=-1, keepdims=True)) / (x.var(axis=-1, keepdims=True) + eps)
    return (out if gamma is None else out * gamma) + (0 if beta is None else beta)


LAYER_NORM_MORE = (
    Mistake("ignored_eps", "your result uses eps = 1e-5 whatever eps is passed: use the eps argument.",
            lambda x, gamma=None, beta=None, eps=1e-5: _layer_norm(x, gamma, beta, 1e-5)),
    Mistake("missing_sqrt", "you divided by the variance σ² + eps; LayerNorm divides by its square root.",
            _missing_sqrt),
    Mistake("not_centred", "you divided x itself by the standard deviation: subtract the mean μ first.",
            _not_centred),
    Mistake("rms_norm", "this is RMSNorm, x / √(mean(x²) + eps), with no mean subtracted; LayerNorm centres "
            "first and divides by √(σ² + eps).", _rms_norm),
)

POST_LN_MORE = (
    Mistake("eps_not_passed", "your block ignores its eps: pass it on, LN(x + sublayer(x), eps=eps).",
            lambda x, sublayer, eps=1e-5: layer_norm(x + sublayer(x))),
    Mistake("missing_layer_norm", "there is no LayerNorm in your block: post-LN is LN(x + sublayer(x)).",
            lambda x, sublayer, eps=1e-5: np.asarray(x, float) + sublayer(x)),
)

PRE_LN_MORE = (
    Mistake("eps_not_passed", "your block ignores its eps: pass it on, x + sublayer(LN(x, eps=eps)).",
            lambda x, sublayer, eps=1e-5: np.asarray(x, float) + sublayer(layer_norm(x))),
    Mistake("missing_layer_norm", "there is no LayerNorm in your block: pre-LN is x + sublayer(LN(x)).",
            lambda x, sublayer, eps=1e-5: np.asarray(x, float) + sublayer(x)),
)


# --- notebook 04: more activation mistakes, and SwiGLU ------------------------

def _tanh_gelu(z, c=None, a=0.044715, half=0.5):
    z = np.asarray(z, float)
    c = np.sqrt(2.0 / np.pi) if c is None else c
    return half * z * (1.0 + np.tanh(c * (z + a * z**3)))


def _erf_gelu_without_sqrt2(z):
    from ._lazy import special

    z = np.asarray(z, float)
    return 0.5 * z * (1.0 + special().erf(z))


def _normal_cdf(z):
    from ._lazy import special

    return special().ndtr(np.asarray(z, float))


GELU_MORE = (
    Mistake("erf_without_sqrt2", "Φ(z) = (1 + erf(z/√2))/2: you used erf(z) without dividing z by √2.",
            _erf_gelu_without_sqrt2),
    Mistake("cdf_for_gelu", "this is Φ(z) alone; GELU multiplies it by z: z·Φ(z).", _normal_cdf),
)

GELU_TANH = (
    Mistake("missing_cubic_term", "the 0.044715·z³ term is missing: tanh(√(2/π)·(z + 0.044715·z³)).",
            lambda z: _tanh_gelu(z, a=0.0)),
    Mistake("sqrt2_over_pi", "the constant is √(2/π) ≈ 0.7979, not √2/π ≈ 0.4502.",
            lambda z: _tanh_gelu(z, c=np.sqrt(2.0) / np.pi)),
    Mistake("missing_half", "your result is twice the approximation: it starts with 0.5·z·(1 + tanh(...)).",
            lambda z: _tanh_gelu(z, half=1.0)),
    Mistake("exact_for_tanh", "this is the exact GELU z·Φ(z); the exercise asks for the tanh approximation.",
            lambda z: act.gelu(z)),
)

SILU_MORE = (
    Mistake("sigmoid_sign", "this is z·σ(-z) = z / (1 + e^z): the sigmoid is 1 / (1 + e^(-z)).",
            lambda z: act.silu(-np.asarray(z, float)) * -1.0),
)


def _swiglu(x, W_gate, W_up, W_down, gate=act.silu, combine=np.multiply, after=None):
    x = np.asarray(x, float)
    h = combine(gate(x @ W_gate), x @ W_up) if after is None else after((x @ W_gate) * (x @ W_up))
    return h @ W_down


SWIGLU = (
    Mistake("gate_up_swapped", "SiLU went on x W_up: it belongs on the gate, SiLU(x W_gate) ⊙ (x W_up).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_up, W_gate, W_down)),
    Mistake("missing_silu", "there is no SiLU: the gate is SiLU(x W_gate), not x W_gate.",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, gate=lambda a: a)),
    Mistake("sum_for_product", "you added the two branches; SwiGLU multiplies them elementwise (⊙).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, combine=np.add)),
    Mistake("silu_after_product", "SiLU was applied to the product; it applies to the gate only: "
            "SiLU(x W_gate) ⊙ (x W_up).", lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down,
                                                                                  after=act.silu)),
    Mistake("relu_for_silu", "the gate uses ReLU (that is ReGLU); SwiGLU's gate is SiLU(x W_gate).",
            lambda x, W_gate, W_up, W_down: _swiglu(x, W_gate, W_up, W_down, gate=act.relu)),
)


# --- notebook 01: the pre-activation, ReLU, its derivative, the sign cases ----

def _dot(x, w):
    return np.asarray(x, float) @ np.asarray(w, float)


def _zero_grad_as(z, value):
    z = np.asarray(z, float)
    return np.where(z == 0, value, (z > 0).astype(float))


PREACTIVATION = (
    Mistake("missing_b", "your z equals x · w without b: add the bias after the dot product.",
            lambda x, w, b: _dot(x, w)),
    Mistake("relu_in_preactivation", "your z already went through ReLU: the pre-activation is x · w + b, before σ.",
            lambda x, w, b: act.relu(_dot(x, w) + b)),
    Mistake("bias_in_every_term", "you added b to every product x_i·w_i before summing, which adds d·b: add b once.",
            lambda x, w, b: (np.asarray(x, float) * np.asarray(w, float) + b).sum(axis=-1)),
    Mistake("not_summed", "you returned the products x_i·w_i (+ b) without summing over the last axis: "
            "z is one number per token.", lambda x, w, b: np.asarray(x, float) * np.asarray(w, float) + b),
)

RELU = (
    Mistake("min_for_max", "you kept the negative part, min(0, z): ReLU is max(0, z).",
            lambda z: np.minimum(np.asarray(z, float), 0.0)),
    Mistake("abs_for_relu", "you returned |z|: ReLU sends a negative z to 0, not to -z.",
            lambda z: np.abs(np.asarray(z, float))),
    Mistake("step_for_relu", "you returned 1 where z > 0, which is ReLU's derivative: ReLU passes z itself.",
            lambda z: _zero_grad_as(z, 0.0)),
)

RELU_GRAD = (
    Mistake("grad_one_at_zero", "you returned 1 at z = 0 (z >= 0): the convention here, as in PyTorch, is 0 "
            "(test z > 0).", lambda z: _zero_grad_as(z, 1.0)),
    Mistake("grad_half_at_zero", "you returned 0.5 at z = 0: a valid subgradient, but the convention here, as in "
            "PyTorch, is 0.", lambda z: _zero_grad_as(z, 0.5)),
    Mistake("relu_for_grad", "you returned ReLU(z) itself: its derivative is 1 where z > 0 and 0 elsewhere.",
            lambda z: act.relu(z)),
    Mistake("sign_for_grad", "you returned sign(z), which is -1 for z < 0: ReLU is flat there, so its slope is 0.",
            lambda z: np.sign(np.asarray(z, float))),
)

# sign_case returns a label, not an array: each compute gives the label the mistake would.
SIGN_CASE = (
    Mistake("zero_as_b", "you put z = 0 in case B (z <= 0, or an else branch): B is z < 0, C is z == 0 exactly.",
            lambda z: "A" if float(z) > 0 else "B"),
    Mistake("zero_as_a", "you put z = 0 in case A (z >= 0): A is z > 0, C is z == 0 exactly.",
            lambda z: "A" if float(z) >= 0 else "B"),
    Mistake("zero_by_tolerance", "you called a tiny nonzero z case C (a tolerance such as np.isclose(z, 0)): "
            "C means exactly 0.0; a tiny z < 0 is case B, a tiny z > 0 case A.",
            lambda z: "C" if abs(float(z)) <= 1e-8 else "A" if float(z) > 0 else "B"),
    Mistake("zero_output_as_c", "you decided by ReLU's output (0 means C): a negative z gives 0 too, and is case B.",
            lambda z: "A" if float(z) > 0 else "C"),
    Mistake("a_b_swapped", "A and B are swapped: A is z > 0 (ReLU passes z), B is z < 0 (ReLU gives 0).",
            lambda z: "B" if float(z) > 0 else "A" if float(z) < 0 else "C"),
)


# --- notebook 02: the share of inactive hidden units ------------------------

def _z(x, W1, b1):
    return np.asarray(x, float) @ np.asarray(W1, float) + np.asarray(b1, float)


def _inactive(x, W1, b1):
    """h == 0 for every (token, unit): ReLU gives 0 exactly when z <= 0."""
    return _z(x, W1, b1) <= 0


DEAD_FRACTION = (
    Mistake("strict_negative", "you counted z < 0 only: ReLU outputs 0 at z = 0 too (case C), so count z <= 0, "
            "or h == 0.", lambda x, W1, b1: float(np.mean(_z(x, W1, b1) < 0))),
    Mistake("missing_b1", "your share ignores b1: the hidden units' pre-activation is x W1 + b1.",
            lambda x, W1, b1: float(np.mean(_dot(x, W1) <= 0))),
    Mistake("active_fraction", "you returned the share of active units (h > 0): the exercise asks for the "
            "inactive share (h == 0).", lambda x, W1, b1: float(np.mean(~_inactive(x, W1, b1)))),
    Mistake("count_not_share", "you returned a count: divide by the number of (token, unit) pairs to get a share "
            "between 0 and 1.", lambda x, W1, b1: float(np.sum(_inactive(x, W1, b1)))),
    Mistake("per_token_share", "you returned one share per token: average over every token too, to get one number.",
            lambda x, W1, b1: np.mean(_inactive(x, W1, b1), axis=-1)),
    Mistake("always_inactive_units", "you counted the units that are 0 for every token (dead units); the exercise "
            "asks for the share of all (token, unit) outputs that are 0.",
            lambda x, W1, b1: float(np.mean(np.all(_inactive(x, W1, b1).reshape(-1, np.shape(W1)[1]), axis=0)))),
)


# --- 05_position_wise: detectors of mixing between tokens (they return a verdict, True = "mixes") ----


def _other_rows_move(f, X, tokens, delta_seed=0):
    """Do rows outside `tokens` of f(X) change when those tokens move together by a random step?"""
    X = np.asarray(X, float)
    moved = X.copy()
    moved[list(tokens)] += np.random.default_rng(delta_seed).normal(size=(len(tokens),) + X.shape[1:])
    before, after = np.asarray(f(X), float), np.asarray(f(moved), float)
    others = np.ones(len(X), dtype=bool)
    others[list(tokens)] = False
    return not np.allclose(before[others], after[others], rtol=1e-9, atol=1e-12)


def _permutation_detector(f, X):
    X = np.asarray(X, float)
    order = np.arange(len(X))[::-1]
    return not np.allclose(np.asarray(f(X[order]), float), np.asarray(f(X), float)[order], rtol=1e-9, atol=1e-12)


def _any_row_moves(f, X):
    X = np.asarray(X, float)
    moved = X + np.random.default_rng(0).normal(size=X.shape)
    return not np.allclose(np.asarray(f(moved), float), np.asarray(f(X), float), rtol=1e-9, atol=1e-12)


MIXES_POSITIONS = (
    Mistake("perturbs_first_token_only",
            "you only changed token 0: in a suffix sum (row i adds up tokens i..n-1), token 0 reaches no other "
            "row, yet every other token reaches row 0. Change every token in turn.",
            lambda f, X: len(X) > 1 and _other_rows_move(f, X, [0])),
    Mistake("perturbs_last_token_only",
            "you only changed the last token: in a prefix sum (row i adds up tokens 0..i), the last token reaches "
            "no other row, yet it depends on all of them. Change every token in turn.",
            lambda f, X: len(X) > 1 and _other_rows_move(f, X, [len(X) - 1])),
    Mistake("perturbs_ends_only",
            "you only changed the first and the last token: a function can mix tokens in the middle only. "
            "Change every token in turn.",
            lambda f, X: len(X) > 1 and (_other_rows_move(f, X, [0]) or _other_rows_move(f, X, [len(X) - 1]))),
    Mistake("permutation_test",
            "you tested whether permuting the tokens permutes the outputs. That is a different property: a mean "
            "over tokens (or attention without positions) is permutation-equivariant and still mixes, and adding "
            "a per-position vector is not equivariant yet mixes nothing. Change each token and watch the others.",
            _permutation_detector),
    Mistake("perturbs_all_at_once",
            "you changed every token at once, so you cannot tell a row's own token from the others: the "
            "position-wise FFN then looks like a mixer. Change one token at a time and watch the other rows.",
            _any_row_moves),
)


# --- 06_parameter_budget: counts, bytes and FLOPs (integers) -------------------------------------------

_BITS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8}

PARAM_COUNT = (
    Mistake("forgot_biases", "this counts W1 and W2 only: with bias=True add b1 (d_ff entries) and b2 (d_model).",
            lambda d_model, d_ff, bias=True: 2 * d_model * d_ff),
    Mistake("b1_sized_d_model", "b1 has one entry per hidden unit, d_ff of them, not d_model.",
            lambda d_model, d_ff, bias=True: 2 * d_model * d_ff + (2 * d_model if bias else 0)),
    Mistake("b2_sized_d_ff", "b2 has one entry per output feature, d_model of them, not d_ff.",
            lambda d_model, d_ff, bias=True: 2 * d_model * d_ff + (2 * d_ff if bias else 0)),
    Mistake("bias_flag_ignored", "with bias=False there are no bias vectors: count W1 and W2 only.",
            lambda d_model, d_ff, bias=True: 2 * d_model * d_ff + d_ff + d_model),
    Mistake("one_matrix", "this counts one weight matrix; the FFN has two, W1 (d_model × d_ff) "
            "and W2 (d_ff × d_model).",
            lambda d_model, d_ff, bias=True: d_model * d_ff + (d_ff + d_model if bias else 0)),
)

SWIGLU_COUNT = (
    Mistake("two_matrices", "a gated FFN has three matrices (W_gate, W_up, W_down): 3·d_model·d_ff.",
            lambda d_model, d_ff: 2 * d_model * d_ff),
    Mistake("gated_with_biases", "gated FFNs as in LLaMA have no biases: count the three matrices only.",
            lambda d_model, d_ff: 3 * d_model * d_ff + 2 * d_ff + d_model),
    Mistake("plain_ffn_count", "this is the plain FFN's count with biases; the gated one has three matrices "
            "and no biases.",
            lambda d_model, d_ff: 2 * d_model * d_ff + d_ff + d_model),
)

PARAM_BYTES = (
    Mistake("bits_not_bytes", "this is the size in bits; a byte is 8 bits (float32 is 4 bytes per parameter).",
            lambda n_params, dtype="float32": n_params * _BITS[dtype]),
    Mistake("bfloat16_as_four_bytes", "bfloat16 is a 16-bit format, 2 bytes: float32's exponent range with fewer "
            "mantissa bits.",
            lambda n_params, dtype="float32": n_params * (4 if dtype == "bfloat16" else _BITS[dtype] // 8)),
    Mistake("dtype_ignored", "the dtype was ignored (4 bytes each, as float32): use the dtype's own size.",
            lambda n_params, dtype="float32": n_params * 4),
)

FLOPS = (
    Mistake("multiply_adds_not_flops", "2·d_model·d_ff is the number of multiply-adds (or the FLOPs of one matrix); "
            "a multiply-add is 2 FLOPs and there are two matrices: 4·d_model·d_ff.",
            lambda d_model, d_ff: 2 * d_model * d_ff),
    Mistake("params_as_flops", "this is the parameter count; each weight costs one multiply-add, i.e. 2 FLOPs, "
            "per token (biases are left out by convention).",
            lambda d_model, d_ff: 2 * d_model * d_ff + d_ff + d_model),
    Mistake("training_not_forward", "this is about 3× the forward cost, as for forward plus backward in training; "
            "the exercise asks for one forward pass.", lambda d_model, d_ff: 12 * d_model * d_ff),
)


def _n_elements(shape):
    return int(np.prod(shape, dtype=np.int64))


SHAPE_COUNT = (
    Mistake("weights_only", "the 1-D entries (the biases) were left out: every tensor in the list counts.",
            lambda shapes: sum(_n_elements(s) for _, s in shapes if len(s) > 1)),
    Mistake("summed_dimensions", "you added the dimensions; a tensor of shape (a, b) holds a·b numbers.",
            lambda shapes: sum(int(sum(s)) for _, s in shapes)),
)


# --- 07_collapse_to_linear ------------------------------------------------------------------------------

COLLAPSE_W = (
    Mistake("wrong_order", "W = W2 W1 is the wrong order: x W1 comes first, then · W2, so W = W1 W2.",
            lambda W1, b1, W2, b2: np.asarray(W2, float) @ np.asarray(W1, float)),
    Mistake("elementwise_product", "W1 * W2 multiplies entry by entry; composing the maps needs the matrix "
            "product W1 @ W2.", lambda W1, b1, W2, b2: np.asarray(W1, float) * np.asarray(W2, float)),
)

COLLAPSE_B = (
    Mistake("bias_sum", "b1 passes through W2 as well: b = b1 W2 + b2, not b1 + b2.",
            lambda W1, b1, W2, b2: np.asarray(b1, float) + np.asarray(b2, float)),
    Mistake("missing_b2", "b2 is missing: b = b1 W2 + b2.",
            lambda W1, b1, W2, b2: np.asarray(b1, float) @ np.asarray(W2, float)),
    Mistake("b2_only", "b1 is missing: it reaches the output through W2, so b = b1 W2 + b2.",
            lambda W1, b1, W2, b2: np.asarray(b2, float).copy()),
    Mistake("column_convention", "you multiplied W2 @ b1 (column vectors); with row vectors b1 is on the left: "
            "b1 @ W2.", lambda W1, b1, W2, b2: np.asarray(W2, float) @ np.asarray(b1, float) + b2),
)


def _affine_combination_detector(f, d_in, n_trials, seed, scale):
    """The usual test, f(a x + (1 - a) y) = a f(x) + (1 - a) f(y), at one fixed scale."""
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        lhs = np.asarray(f(a * x + (1 - a) * y), float)
        rhs = a * np.asarray(f(x), float) + (1 - a) * np.asarray(f(y), float)
        if not np.allclose(lhs, rhs, rtol=1e-8, atol=1e-8 * (1 + np.abs(rhs).max(initial=0))):
            return False
    return True


def _linearity_detector(f, d_in, n_trials=20, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        x, y = rng.normal(size=(2, d_in))
        c = rng.normal()
        fx, fy = np.asarray(f(x), float), np.asarray(f(y), float)
        if not (np.allclose(f(x + y), fx + fy) and np.allclose(f(c * x), c * fx)):
            return False
    return True


IS_AFFINE = (
    Mistake("tests_linearity", "you tested linearity, f(x + y) = f(x) + f(y): an affine map x W + b with b ≠ 0 fails "
            "that. Test f(x) - f(0) instead, or affine combinations f(a x + (1 - a) y) = a f(x) + (1 - a) f(y).",
            _linearity_detector),
    Mistake("narrow_sampling", "all your test points are near the origin, where this function is affine; it bends "
            "further out. Sample on several scales (say up to norm 1000).",
            lambda f, d_in, n_trials=20, seed=0: _affine_combination_detector(f, d_in, n_trials, seed, 1.0)),
)


# --- 08_limiting_behaviour: sigmoid, SiLU and GELU that survive every finite float64 --------------------
# These formulas are right on paper; they fail in float64 by overflowing (with a warning) or cancelling.

def _as_f64(z):
    return np.asarray(z, float)


def _naive_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-_as_f64(z)))


def _exp_ratio_sigmoid(z):
    e = np.exp(_as_f64(z))
    return e / (1.0 + e)


def _where_sigmoid(z):
    z = _as_f64(z)
    return np.where(z >= 0, 1.0 / (1.0 + np.exp(-z)), np.exp(z) / (1.0 + np.exp(z)))


def _tanh_sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * _as_f64(z)))


_WHERE_BOTH = ("np.where(condition, a, b) computes a and b for every z, so the branch it discards still "
               "overflows and warns: compute each branch only on its own entries (boolean masks), or use "
               "scipy.special.expit.")

SIGMOID = (
    Mistake("naive_sigmoid_overflow", "1 / (1 + exp(-z)) overflows in exp(-z) for z below about -709.78 "
            "(with a RuntimeWarning): use exp(z) / (1 + exp(z)) for negative z, or scipy.special.expit.",
            _naive_sigmoid),
    Mistake("exp_ratio_overflow", "exp(z) / (1 + exp(z)) overflows for z above about 709.78 and gives "
            "inf / inf = NaN: use 1 / (1 + exp(-z)) for z >= 0.", _exp_ratio_sigmoid),
    Mistake("where_evaluates_both_branches", _WHERE_BOTH, _where_sigmoid),
    Mistake("tanh_cancellation", "(1 + tanh(z/2)) / 2 cancels for very negative z (1 + tanh(z/2) is a "
            "difference of two numbers near 1) and returns 0 below about z = -38.", _tanh_sigmoid),
    Mistake("sigmoid_sign", "this is 1 / (1 + e^z) = σ(-z): the sigmoid is 1 / (1 + e^(-z)).",
            lambda z: _naive_sigmoid(-_as_f64(z))),
)

SILU_STABLE = (
    Mistake("naive_silu_overflow", "z / (1 + exp(-z)) overflows in exp(-z) for z below about -709.78 "
            "(with a RuntimeWarning): multiply z by a stable sigmoid instead.",
            lambda z: _as_f64(z) / (1.0 + np.exp(-_as_f64(z)))),
    Mistake("silu_exp_ratio_overflow", "z·exp(z) / (1 + exp(z)) overflows for z above about 709.78 and gives "
            "NaN: use a sigmoid that picks its formula by the sign of z.",
            lambda z: _as_f64(z) * _exp_ratio_sigmoid(z)),
    Mistake("where_evaluates_both_branches", _WHERE_BOTH, lambda z: _as_f64(z) * _where_sigmoid(z)),
    Mistake("tanh_cancellation", "z·(1 + tanh(z/2)) / 2 cancels for very negative z and returns -0.0 below "
            "about z = -38, where SiLU is still a normal number.", lambda z: _as_f64(z) * _tanh_sigmoid(z)),
)

def _erfc_sign_gelu(z):
    from ._lazy import special

    return 0.5 * _as_f64(z) * special().erfc(_as_f64(z) / np.sqrt(2.0))


GELU_EXACT = (
    Mistake("erfc_sign", "erfc(z/√2)/2 is Φ(-z) = 1 - Φ(z); the normal CDF is Φ(z) = erfc(-z/√2)/2.",
            _erfc_sign_gelu),
)


# --- 09_ffn_module: xavier_init, count_parameters (PARAM_COUNT above), ffn_module_forward, ffn_module_backward,
# the FeedForwardNetwork class that calls them, and numerical_gradient --------------------------------------

def _init_draws(d_model, d_ff, seed, std, w2_first=False):
    rng = np.random.default_rng(seed)
    if w2_first:
        W2 = rng.normal(0.0, std, size=(d_ff, d_model))
        return {"W1": rng.normal(0.0, std, size=(d_model, d_ff)), "W2": W2}
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    return {"W1": W1, "W2": rng.normal(0.0, std, size=(d_ff, d_model))}


_WRONG_STDS = (
    ("xavier_fan_in_only", "the std uses d_model only, √(1/d_model) (LeCun's rule); Xavier-normal averages "
     "fan-in and fan-out: √(2/(d_model + d_ff)).", lambda d_model, d_ff: np.sqrt(1.0 / d_model)),
    ("he_std", "√(2/d_model) is He's std for ReLU layers; the exercise asks for Xavier-normal, "
     "√(2/(d_model + d_ff)).", lambda d_model, d_ff: np.sqrt(2.0 / d_model)),
    ("variance_as_std", "2/(d_model + d_ff) is the variance; the std is its square root.",
     lambda d_model, d_ff: 2.0 / (d_model + d_ff)),
)

MODULE_INIT_STD = tuple(Mistake(key, text, std) for key, text, std in _WRONG_STDS)

MODULE_INIT = tuple(
    Mistake(key, text,
            lambda name, d_model, d_ff, seed, std=std: _init_draws(d_model, d_ff, seed, std(d_model, d_ff))[name])
    for key, text, std in _WRONG_STDS
) + (
    Mistake("draw_order_swapped", "W2 was drawn before W1: with one generator the order matters; draw W1 first, "
            "then W2.", lambda name, d_model, d_ff, seed: _init_draws(
                d_model, d_ff, seed, np.sqrt(2.0 / (d_model + d_ff)), w2_first=True)[name]),
)


def _act_ffn(x, W1, b1, W2, b2, activation, *, out=None):
    sigma = act.get_activation(activation)
    z = _as_f64(x) @ W1 + (0 if b1 is None else b1)
    y = sigma(z) @ W2 + (0 if b2 is None else b2)
    return y if out is None else sigma(y)


MODULE_FORWARD = (
    Mistake("activation_ignored", "your output is the ReLU FFN whatever `activation` says: use the activation "
            "the model was built with.", lambda x, W1, b1, W2, b2, activation: _act_ffn(x, W1, b1, W2, b2, "relu")),
    Mistake("missing_b1", "your output equals the FFN without b1: add b1 before σ.",
            lambda x, W1, b1, W2, b2, activation: _act_ffn(x, W1, None, W2, b2, activation)),
    Mistake("missing_b2", "your output equals the FFN without b2: add b2 at the end.",
            lambda x, W1, b1, W2, b2, activation: _act_ffn(x, W1, b1, W2, None, activation)),
    Mistake("no_activation", "your output has no σ between the layers: (x W1 + b1) W2 + b2.",
            lambda x, W1, b1, W2, b2, activation: _act_ffn(x, W1, b1, W2, b2, "identity")),
    Mistake("activation_on_output", "σ was applied to the output as well: it goes between the layers only.",
            lambda x, W1, b1, W2, b2, activation: _act_ffn(x, W1, b1, W2, b2, activation, out=True)),
)


def _module_grad(name, x, G, W1, b1, W2, b2, activation, *, dsigma=None, bias_sum=None, transpose=False,
                 W2_from_z=False, x_grad_untransposed=False):
    """One gradient of L = Σ G ⊙ FFN(x), computed the way a particular mistake does."""
    from .module import ACTIVATION_GRADS

    x, G = _as_f64(x), _as_f64(G)
    z = x @ W1 + (0 if b1 is None else b1)
    h = act.get_activation(activation)(z)
    dz = (G @ W2.T) * (ACTIVATION_GRADS[activation](z) if dsigma is None else dsigma(z))
    d_model, d_ff = W1.shape
    x2, h2, z2 = x.reshape(-1, d_model), h.reshape(-1, d_ff), z.reshape(-1, d_ff)
    G2, dz2 = G.reshape(-1, d_model), dz.reshape(-1, d_ff)
    bias_sum = bias_sum or _flat_sum
    grads = {
        "W1": dz2.T @ x2 if transpose else x2.T @ dz2,
        "b1": None if b1 is None else bias_sum(dz),
        "W2": G2.T @ h2 if transpose else (z2 if W2_from_z else h2).T @ G2,
        "b2": None if b2 is None else bias_sum(G),
        "x": dz @ W1 if x_grad_untransposed else dz @ W1.T,
    }
    return grads[name]


def _flat_sum(g):
    return g.reshape(-1, g.shape[-1]).sum(axis=0)


def _flat_mean(g):
    return g.reshape(-1, g.shape[-1]).mean(axis=0)


def _relu_mask_at_zero(name, x, G, W1, b1, W2, b2, activation):
    if activation != "relu":
        raise ValueError("this mistake is about ReLU's mask")
    return _module_grad(name, x, G, W1, b1, W2, b2, activation, dsigma=lambda z: (z >= 0).astype(float))


def _gelu_grad_missing_density(name, x, G, W1, b1, W2, b2, activation):
    from ._lazy import special

    if activation != "gelu":
        raise ValueError("this mistake is about GELU's derivative")
    return _module_grad(name, x, G, W1, b1, W2, b2, activation, dsigma=special().ndtr)


MODULE_BACKWARD = (
    Mistake("missing_activation_grad", "∂L/∂z = ∂L/∂h ⊙ σ'(z): you left out σ'(z) (for ReLU, the mask z > 0), "
            "so gradient flows back through units that were off.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, dsigma=lambda z: 1.0)),
    Mistake("relu_mask_at_zero", "your mask is z >= 0; ReLU's derivative at z = 0 is taken as 0 (as in PyTorch): "
            "use z > 0.",
            _relu_mask_at_zero),
    Mistake("gelu_grad_missing_density", "GELU'(z) = Φ(z) + z·φ(z): the term z·φ(z) (φ the normal density) "
            "is missing.",
            _gelu_grad_missing_density),
    Mistake("bias_grad_mean", "a bias is shared by every token, so its gradient is the sum over tokens, "
            "not the mean.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, bias_sum=_flat_mean)),
    Mistake("bias_grad_wrong_axis", "you summed the bias gradient over the feature axis; sum over the tokens "
            "(every axis but the last), so it has the bias's shape.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, bias_sum=lambda g: g.sum(axis=-1))),
    Mistake("weight_grad_transposed", "a weight's gradient has the weight's shape: ∂L/∂W1 = xᵀ ∂L/∂z is "
            "(d_model, d_ff) and ∂L/∂W2 = hᵀ G is (d_ff, d_model); yours is transposed.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, transpose=True)),
    Mistake("W2_grad_uses_z", "∂L/∂W2 = hᵀ G uses the hidden values h = σ(z), not the pre-activation z.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, W2_from_z=True)),
    Mistake("x_grad_untransposed", "∂L/∂x = ∂L/∂z W1ᵀ: W1 needs its transpose here.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(
                name, x, G, W1, b1, W2, b2, activation, x_grad_untransposed=True)),
    Mistake("relu_grads_for_any_activation", "these are ReLU's gradients whatever `activation` says: pass the "
            "activation on, and use its σ and σ'.",
            lambda name, x, G, W1, b1, W2, b2, activation: _module_grad(name, x, G, W1, b1, W2, b2, "relu")),
)


def _initial_ffn(x, params, initial, activation):
    if initial is None:
        raise ValueError("no initial parameters to compare with")
    return _act_ffn(x, *initial, activation)


# The class's forward pass, args (x, params, initial, activation): `params` are the model's current
# W1, b1, W2, b2 (set by the test), `initial` the ones it was built with (or None).
MODULE_CLASS = (
    Mistake("stale_parameters", "the output is the FFN with the parameters the model was built with: "
            "__call__ should use the current self.W1, self.b1, self.W2, self.b2, not copies kept from __init__.",
            _initial_ffn),
    Mistake("activation_ignored", "your model computes the ReLU FFN whatever `activation` it was built with: "
            "keep the activation in __init__ and pass it on.",
            lambda x, params, initial, activation: _act_ffn(x, *params, "relu")),
)


def _difference_quotient(f, x, h, kind):
    x = _as_f64(x).copy()
    grad = np.empty_like(x)
    flat, out = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + h
        f_plus = float(np.asarray(f(x)))
        flat[i] = old - h if kind != "forward" else old
        f_other = float(np.asarray(f(x)))
        flat[i] = old
        out[i] = (f_plus - f_other) / (h if kind in ("forward", "over_h") else 2.0 * h)
    return grad


NUMERICAL_GRADIENT = (
    Mistake("forward_difference", "this is the forward difference (f(x + h) - f(x)) / h, whose error "
            "shrinks like h; the centred one, (f(x + h) - f(x - h)) / 2h, is accurate to h².",
            lambda f, x, h=1e-5: _difference_quotient(f, x, h, "forward")),
    Mistake("divided_by_h", "the two evaluations are 2h apart: divide f(x + h) - f(x - h) by 2h, not h.",
            lambda f, x, h=1e-5: _difference_quotient(f, x, h, "over_h")),
    Mistake("ignored_h", "your result uses h = 1e-5 whatever h is passed: use the argument.",
            lambda f, x, h=1e-5: _difference_quotient(f, x, 1e-5, "centred")),
)


CATALOGUE = {
    "ffn": FFN, "linear_torch": LINEAR_TORCH, "gelu": GELU, "silu": SILU,
    "layer_norm": LAYER_NORM, "post_ln": POST_LN, "pre_ln": PRE_LN,
    "layer_norm_more": LAYER_NORM_MORE, "post_ln_more": POST_LN_MORE, "pre_ln_more": PRE_LN_MORE,
    "gelu_more": GELU_MORE, "gelu_tanh": GELU_TANH, "silu_more": SILU_MORE, "swiglu": SWIGLU,
    "preactivation": PREACTIVATION, "relu": RELU, "relu_grad": RELU_GRAD, "sign_case": SIGN_CASE,
    "dead_fraction": DEAD_FRACTION,
    "mixes_positions": MIXES_POSITIONS, "param_count": PARAM_COUNT, "swiglu_count": SWIGLU_COUNT,
    "param_bytes": PARAM_BYTES, "flops": FLOPS, "shape_count": SHAPE_COUNT,
    "collapse_W": COLLAPSE_W, "collapse_b": COLLAPSE_B, "is_affine": IS_AFFINE,
    "sigmoid": SIGMOID, "silu_stable": SILU_STABLE, "gelu_exact": GELU_EXACT,
    "module_init": MODULE_INIT, "module_init_std": MODULE_INIT_STD, "module_forward": MODULE_FORWARD,
    "module_backward": MODULE_BACKWARD, "module_class": MODULE_CLASS, "numerical_gradient": NUMERICAL_GRADIENT,
}


# --- 12_low_precision: bfloat16 rounding, int8 quantisation, float16 forward passes -----------------------
# quantize_int8's entries return (q, scale), as the exercise does; the notebook compares both parts.

def _f32_bits(x):
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32)).view(np.uint32).astype(np.uint64)


def _from_bits(bits, shape):
    return (bits & 0xFFFF0000).astype(np.uint32).view(np.float32).reshape(shape)


def _bf16_with_nan(x, rounded):
    x = np.asarray(x, dtype=np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), rounded).astype(np.float32)


TO_BFLOAT16 = (
    Mistake("bf16_truncated", "you cleared the low 16 bits without rounding (truncation, toward zero): add "
            "0x7FFF plus the lowest kept bit first, so the value rounds to the nearest bfloat16.",
            lambda x: _bf16_with_nan(x, _from_bits(_f32_bits(x), np.shape(x)))),
    Mistake("bf16_round_half_up", "ties go to the neighbour away from zero (you added 0x8000): round half to "
            "even, adding 0x7FFF plus the lowest kept bit, so 1 + 2^-8 gives 1.0.",
            lambda x: _bf16_with_nan(x, _from_bits(_f32_bits(x) + 0x8000, np.shape(x)))),
    Mistake("bf16_nan_carry", "a NaN whose payload sits in the low 16 bits came out as ±inf or 0: the rounding "
            "carry spills into the exponent; return NaN for NaN inputs (np.isnan).",
            lambda x: _from_bits(_f32_bits(x) + 0x7FFF + ((_f32_bits(x) >> 16) & 1), np.shape(x))),
    Mistake("float16_for_bfloat16", "this is float16 (5 exponent bits, 10 mantissa bits), not bfloat16, which "
            "keeps float32's 8 exponent bits and 7 mantissa bits.",
            lambda x: np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)),
)


def _quantized(W, scale, rounding=np.rint, clip=True):
    W = np.asarray(W, dtype=float)
    v = rounding(W / scale)
    return (np.clip(v, -127, 127) if clip else v).astype(np.int8), scale


def _column_max(W, axis=0):
    """max |W| along `axis`, with 1 for all-zero lines, like the exercise (so zeros never decide a diagnosis)."""
    amax = np.abs(np.asarray(W, dtype=float)).max(axis=axis)
    return np.where(amax > 0, amax, 1.0)


QUANTIZE_INT8 = (
    Mistake("per_tensor_scale", "one scale for the whole matrix: each output column j gets its own, "
            "max_i |W[i, j]| / 127, so a column of small weights keeps its precision.",
            lambda W: _quantized(W, float(_column_max(np.ravel(W))) / 127)),
    Mistake("per_row_scale", "your scales run along the rows (one per input i): the scale is per output column "
            "j, max over i of |W[i, j]|, the axis that can be pulled out of x W.",
            lambda W: (lambda s: (_quantized(W, s[:, None])[0], s))(_column_max(W, axis=1) / 127)),
    Mistake("scale_by_128", "scale = max|W| / 128 (and clipping) saturates the largest weight at 127: the "
            "symmetric int8 range is ±127, so divide by 127.", lambda W: _quantized(W, _column_max(W) / 128)),
    Mistake("int8_wraparound", "the largest weight became -128: round(W / scale) reached 128, and astype(np.int8) "
            "wraps 128 around to -128; divide by 127 and clip to [-127, 127].",
            lambda W: _quantized(W, _column_max(W) / 128, clip=False)),
    Mistake("q_truncated", "astype(np.int8) cuts toward zero (2.7 becomes 2): round first with np.rint.",
            lambda W: _quantized(W, _column_max(W) / 127, rounding=np.trunc)),
    Mistake("q_round_half_up", "halves went up (floor(v + 0.5) makes 2.5 into 3 and -2.5 into -2): round half "
            "to even, as np.rint and np.round do.",
            lambda W: _quantized(W, _column_max(W) / 127, rounding=lambda v: np.floor(v + 0.5))),
)

DEQUANTIZE = (
    Mistake("divided_by_scale", "you divided by the scale: quantising divided W by it, so dequantising multiplies, "
            "W ≈ q · scale.", lambda q, scale: np.asarray(q, dtype=float) / scale),
    Mistake("scale_per_row", "the scales went along the rows: scale[j] belongs to column j, q[:, j] · scale[j] "
            "(plain broadcasting, q * scale).",
            lambda q, scale: np.asarray(q, dtype=float) * np.asarray(scale)[:, None]),
)


def _ffn_int8(x, q1, s1, b1, q2, s2, b2, scales=True, bias_scaled=False):
    x, q1, q2 = np.asarray(x, dtype=float), np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    s1, s2 = (s1, s2) if scales else (1.0, 1.0)
    h = np.maximum((x @ q1 + b1) * s1 if bias_scaled else (x @ q1) * s1 + b1, 0.0)
    return (h @ q2 + b2) * s2 if bias_scaled else (h @ q2) * s2 + b2


FFN_INT8 = (
    Mistake("missing_scales", "you multiplied by q1 and q2 without their scales: x W1 ≈ (x q1) · s1, column by "
            "column.", lambda *args: _ffn_int8(*args, scales=False)),
    Mistake("bias_scaled", "the biases were multiplied by the scales: b1 and b2 are float64 in the output's units; "
            "add them after scaling, (x q1) · s1 + b1.", lambda *args: _ffn_int8(*args, bias_scaled=True)),
    Mistake("no_relu_int8", "there is no ReLU between the layers: h = max((x q1) · s1 + b1, 0).",
            lambda x, q1, s1, b1, q2, s2, b2: (((np.asarray(x, float) @ np.asarray(q1, float)) * s1 + b1)
                                                @ np.asarray(q2, float)) * s2 + b2),
)


def _f16_forward(x, W1, b1, W2, b2, fix=False, hidden=np.float16, inputs=np.float16):
    with np.errstate(all="ignore"):
        x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(inputs).astype(np.float32) for a in (x, W1, b1, W2, b2))
        z = (x @ W1).astype(hidden).astype(np.float32) + b1
        h = np.maximum(z.astype(hidden), 0)
        y = (h.astype(np.float32) @ W2).astype(hidden).astype(np.float32) + b2
        return y.astype(np.float32 if fix else np.float16)


FLOAT16_FORWARD = (
    Mistake("float16_hidden_in_fix", "with fix=True z and h must stay float32; you rounded them to float16, so "
            "anything beyond 65504 still overflows to inf.",
            lambda x, W1, b1, W2, b2, fix=False: _f16_forward(x, W1, b1, W2, b2, fix=fix)),
    Mistake("float32_without_fix", "with fix=False z, h and y are stored in float16 (and overflow beyond 65504); "
            "you kept them in float32.",
            lambda x, W1, b1, W2, b2, fix=False: _f16_forward(x, W1, b1, W2, b2, fix=fix, hidden=np.float32)),
    Mistake("inputs_not_float16", "the inputs were not rounded to float16 first: x, W1, b1, W2 and b2 are stored "
            "in float16 (values below 6e-8 become 0, beyond 65504 inf) before any product.",
            lambda x, W1, b1, W2, b2, fix=False: _f16_forward(x, W1, b1, W2, b2, fix=fix,
                                                              hidden=np.float32 if fix else np.float16,
                                                              inputs=np.float32)),
)

CATALOGUE.update({
    "to_bfloat16": TO_BFLOAT16, "quantize_int8": QUANTIZE_INT8, "dequantize": DEQUANTIZE,
    "ffn_forward_int8": FFN_INT8, "ffn_forward_float16": FLOAT16_FORWARD,
})


# --- 11_mixture_of_experts: the router, the MoE forward pass, parameter counts, load balancing ----------

def _moe_logits(x, W_r):
    return np.asarray(x, float) @ np.asarray(W_r, float)


def _moe_right_indices(x, W_r, k):
    return np.argsort(-_moe_logits(x, W_r), axis=-1, kind="stable")[..., :k]


def _moe_selected(x, W_r, k):
    return np.take_along_axis(_moe_logits(x, W_r), _moe_right_indices(x, W_r, k), axis=-1)


def _moe_softmax(r):
    e = np.exp(r - r.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


ROUTER_INDICES = (
    Mistake("ties_to_higher_index", "on equal logits you put the higher index first (reversing an ascending "
            "sort does that); ties go to the lower index: np.argsort(-r, kind=\"stable\").",
            lambda x, W_r, k: np.argsort(_moe_logits(x, W_r), axis=-1, kind="stable")[..., ::-1][..., :k]),
    Mistake("smallest_logits", "you picked the k smallest logits: the router keeps the k largest.",
            lambda x, W_r, k: np.argsort(_moe_logits(x, W_r), axis=-1, kind="stable")[..., :k]),
    Mistake("indices_in_index_order", "you returned the chosen experts in index order; list them by logit, "
            "largest first (the gates follow the same order).",
            lambda x, W_r, k: np.sort(_moe_right_indices(x, W_r, k), axis=-1)),
)

ROUTER_GATES = (
    Mistake("softmax_over_all_experts", "your gates are the softmax over all E logits, read at the chosen "
            "experts, so they sum to less than 1: Mixtral's rule takes the softmax over the k selected logits only.",
            lambda x, W_r, k: np.take_along_axis(_moe_softmax(_moe_logits(x, W_r)), _moe_right_indices(x, W_r, k),
                                                 axis=-1)),
    Mistake("gates_not_normalised", "your gates are exp(logit) of the chosen experts, never divided by their sum: "
            "normalise them so that they add up to 1.", lambda x, W_r, k: np.exp(_moe_selected(x, W_r, k))),
    Mistake("logits_as_gates", "your gates are the selected logits themselves: apply the softmax to them.",
            _moe_selected),
)


def _moe_outputs(x, experts):
    return np.stack([_ffn(x, *expert) for expert in experts], axis=-2)  # (..., E, d_model)


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
    Mistake("softmax_over_all_experts", "your gates are the softmax over all E logits, read at the chosen "
            "experts: take the softmax over the k selected logits (router_topk's gates).",
            lambda x, W_r, experts, k: _moe_mix(x, W_r, experts, k, np.take_along_axis(
                _moe_softmax(_moe_logits(x, W_r)), _moe_right_indices(x, W_r, k), axis=-1))),
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


LOAD_BALANCE = (
    Mistake("missing_n_experts_factor", "you left out the factor N (the number of experts): the loss is "
            "N · Σ f_i · P_i, which is 1 for uniform routing.",
            lambda p, i, n: float(np.dot(*_balance_parts(p, i, n)[1:]))),
    Mistake("alpha_applied", "you multiplied by α = 0.01: the exercise asks for the loss before that scale, "
            "N · Σ f_i · P_i.", lambda p, i, n: 0.01 * n * float(np.dot(*_balance_parts(p, i, n)[1:]))),
    Mistake("counts_for_shares", "f_i is the share of tokens sent to expert i (count / number of tokens), "
            "not the count.", lambda p, i, n: n * float(np.dot(_balance_parts(p, i, n)[0],
                                                               _balance_parts(p, i, n)[2]))),
    Mistake("probs_for_shares", "you used the mean probability P_i in place of the share f_i (N · Σ P_i²): "
            "f_i counts where the tokens were actually sent.",
            lambda p, i, n: n * float(np.sum(_balance_parts(p, i, n)[2] ** 2))),
)

CATALOGUE.update({
    "router_indices": ROUTER_INDICES, "router_gates": ROUTER_GATES, "moe_forward": MOE_FORWARD,
    "moe_param_count": MOE_PARAM_COUNT, "load_balance": LOAD_BALANCE,
})


# --- 10_key_value_memory: writing pairs into an FFN, recalling them, the units that fire ------------------

def _kv_parts(keys, values, threshold=0.5):
    K, V = np.asarray(keys, float), np.asarray(values, float)
    return K, K / np.linalg.norm(K, axis=1, keepdims=True), V, float(threshold)


KV_W1 = (
    Mistake("keys_not_normalised", "W1 holds the keys as given; scale each to unit length first (k / ‖k‖), "
            "or a key of length 2 gives x · k = 4 with itself and the threshold means something else for it.",
            lambda keys, values, threshold=0.5: _kv_parts(keys, values)[0].T),
    Mistake("keys_as_rows", "W1 has the keys as rows; the FFN computes x W1, so key j is column j: W1 = Kᵀ.",
            lambda keys, values, threshold=0.5: _kv_parts(keys, values)[1]),
)

KV_B1 = (
    Mistake("threshold_sign", "b1 = +θ makes every unit fire more easily; the threshold is subtracted: b1 = -θ.",
            lambda keys, values, threshold=0.5: np.full(len(keys), float(threshold))),
)

KV_W2 = (
    Mistake("values_not_rescaled", "W2 holds the values as given; a matching key leaves h = 1 - θ, so divide "
            "by 1 - θ to give the value back at full size: W2 = V / (1 - θ).",
            lambda keys, values, threshold=0.5: np.asarray(values, float).copy()),
    Mistake("divided_by_threshold", "W2 = V / θ: a matching key leaves h = 1 - θ (not θ), so divide by 1 - θ.",
            lambda keys, values, threshold=0.5: np.asarray(values, float) / float(threshold)),
)


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
    """Recall with another notion of closest; silent outputs still recall nothing (that is its own mistake)."""
    Y, V, _ = _memory_outputs(*args)
    fired = np.any(Y != 0, axis=1)
    return float(np.mean(fired & (np.argmax(score(Y, V), axis=1) == np.arange(len(Y)))))


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
    Mistake("count_not_share", "this is the number of keys recalled; return the share (recalled / number of keys).",
            lambda *args: float(np.sum(_recalled(*args)))),
)


def _ranked(x, W1, b1, k, *, score, descending=True, ties_high=False):
    s = score(np.asarray(x, float))
    if ties_high:
        return np.argsort(s, axis=-1, kind="stable")[..., ::-1][..., :k]
    return np.argsort(-s if descending else s, axis=-1, kind="stable")[..., :k]


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
)

CATALOGUE.update({"kv_W1": KV_W1, "kv_b1": KV_B1, "kv_W2": KV_W2, "recall": RECALL, "top_memories": TOP_MEMORIES})


def by_key(key):
    """Every catalogue entry with this key (keys repeat across exercises, e.g. missing_residual)."""
    return [m for group in CATALOGUE.values() for m in group if m.key == key]
