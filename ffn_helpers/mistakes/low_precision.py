"""Notebook 12's mistakes: bfloat16 rounding, int8 quantisation, float16 forward passes.

quantize_int8's mistakes return (q, scale), as the exercise does; the notebook compares both.
"""

import numpy as np

from .mistake import Mistake


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


FFN_FORWARD_INT8 = (
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


FFN_FORWARD_FLOAT16 = (
    Mistake("float16_hidden_in_fix", "with fix=True z and h must stay float32; you rounded them to float16, so "
            "anything beyond 65504 still overflows to inf.",
            lambda x, W1, b1, W2, b2, fix=False: _f16_forward(x, W1, b1, W2, b2, fix=fix)),
    Mistake("float32_without_fix", "with fix=False z, h and y are stored in float16 (and overflow beyond 65504); "
            "you kept them in float32.",
            lambda x, W1, b1, W2, b2, fix=False: _f16_forward(x, W1, b1, W2, b2, fix=fix, hidden=np.float32)),
    Mistake("inputs_not_float16", "the inputs were not rounded to float16 first: x, W1, b1, W2 and b2 are stored "
            "in float16 (values below about 3e-8 become 0, beyond 65504 inf) before any product.",
            lambda x, W1, b1, W2, b2, fix=False: _f16_forward(x, W1, b1, W2, b2, fix=fix,
                                                              hidden=np.float32 if fix else np.float16,
                                                              inputs=np.float32)),
)

CATALOGUE = {
    "ffn_forward_float16": FFN_FORWARD_FLOAT16, "to_bfloat16": TO_BFLOAT16, "quantize_int8": QUANTIZE_INT8,
    "dequantize": DEQUANTIZE, "ffn_forward_int8": FFN_FORWARD_INT8,
}
