"""Notebook 06's mistakes: parameter counts, bytes and FLOPs (integers)."""

import numpy as np

from .mistake import Mistake

_BITS = {"float64": 64, "float32": 32, "float16": 16, "bfloat16": 16, "int8": 8}

FFN_PARAM_COUNT = (
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

SWIGLU_PARAM_COUNT = (
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

FFN_FLOPS_PER_TOKEN = (
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


COUNT_FROM_SHAPES = (
    Mistake("weights_only", "the 1-D entries (the biases) were left out: every tensor in the list counts.",
            lambda shapes: sum(_n_elements(s) for _, s in shapes if len(s) > 1)),
    Mistake("summed_dimensions", "you added the dimensions; a tensor of shape (a, b) holds a·b numbers.",
            lambda shapes: sum(int(sum(s)) for _, s in shapes)),
)


CATALOGUE = {
    "ffn_param_count": FFN_PARAM_COUNT, "param_bytes": PARAM_BYTES, "ffn_flops_per_token": FFN_FLOPS_PER_TOKEN,
    "swiglu_param_count": SWIGLU_PARAM_COUNT, "count_from_shapes": COUNT_FROM_SHAPES,
    "params_by_part": (),  # a dict of four counts, compared exactly
}
