"""Low-precision formats and the FFN: bfloat16 rounding, int8 quantisation, float16 forward passes.

Every rounding here is exact and the same on every machine: bfloat16 by integer
arithmetic on float32's bits, int8 by `np.rint` (round half to even). The float16
and bfloat16 forward passes state their arithmetic: operands rounded to the format,
products and sums in float32 (`@` on float32 arrays), and each result stored as
stated. Only those float32 matrix products depend on the BLAS kernel (last bits).
"""

import numpy as np

from ._arrays import as_float, check_matrix

FLOAT16 = np.finfo(np.float16)
BF16_MAX = float(np.uint32(0x7F7F0000).view(np.float32))  # 3.3895314e38: exponent 254, mantissa all ones
BF16_EPS = 2.0**-7  # 7 stored mantissa bits
INT8_MAX = 127  # symmetric: -128 is never used, so q and -q are both representable


def to_bfloat16(x):
    """x rounded to bfloat16 (round to nearest, ties to even), as float32; x is converted to float32 first.

    Keeps the upper 16 bits of float32 after adding 0x7FFF plus the lowest kept bit
    (PyTorch's rule); a NaN stays NaN (the addition could carry it into ±inf or 0).
    """
    x = np.asarray(x, dtype=np.float32)
    bits = np.ascontiguousarray(x).view(np.uint32).astype(np.uint64)  # uint64: the carry cannot wrap
    kept_lsb = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + kept_lsb) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), rounded).astype(np.float32).reshape(x.shape)


def _weight_matrix(W):
    W = as_float(W, "W")
    check_matrix(W, "W")
    if not np.all(np.isfinite(W)):
        raise ValueError("W should hold finite numbers: an infinite weight has no int8 scale")
    return W


def int8_scale(W):
    """Per output column: max_i |W[i, j]| / 127, and 1.0 for a column of zeros; W: (d_in, d_out) -> (d_out,)."""
    amax = np.abs(_weight_matrix(W)).max(axis=0)
    return np.where(amax > 0, amax / INT8_MAX, 1.0)


def quantize_int8(W):
    """Symmetric per-column int8: (q, scale), q = round(W / scale) (ties to even) clipped to ±127.

    W: (d_in, d_out) float64 -> q: (d_in, d_out) int8, scale: (d_out,) float64.
    """
    W = _weight_matrix(W)
    scale = int8_scale(W)
    q = np.clip(np.rint(W / scale), -INT8_MAX, INT8_MAX).astype(np.int8)
    return q, scale


def _quantized_pair(q, scale, name="q", scale_name="scale"):
    """(q as float64, scale as float64), after checking q is an integer matrix with one scale per column."""
    q = np.asarray(q)
    if q.dtype.kind not in "iu":
        raise TypeError(f"{name} should hold integers (int8), got dtype {q.dtype}")
    check_matrix(q, name)
    scale = as_float(scale, scale_name)
    if scale.shape != (q.shape[1],):
        raise ValueError(f"{scale_name} should have one entry per column of {name}, shape {(q.shape[1],)}, "
                         f"got {scale.shape}")
    return q.astype(np.float64), scale


def dequantize(q, scale):
    """q · scale, column by column: q: (d_in, d_out) int8, scale: (d_out,) -> float64 (d_in, d_out)."""
    q, scale = _quantized_pair(q, scale)
    return q * scale


def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN with int8 weights, in float64: the per-column scale comes out of the sum, x (q s) = (x q) s.

    x: (..., d_model); q1: (d_model, d_ff), s1, b1: (d_ff,); q2: (d_ff, d_model), s2, b2: (d_model,).
    """
    x = as_float(x, "x")
    q1, s1 = _quantized_pair(q1, s1, "q1", "s1")
    q2, s2 = _quantized_pair(q2, s2, "q2", "s2")
    if x.shape[-1:] != q1.shape[:1] or q1.shape[1] != q2.shape[0]:
        raise ValueError(f"shapes do not chain: x {x.shape}, q1 {q1.shape}, q2 {q2.shape}; expected "
                         "x (..., d_model), q1 (d_model, d_ff), q2 (d_ff, d_model)")
    h = np.maximum((x @ q1) * s1 + as_float(b1, "b1"), 0.0)
    return (h @ q2) * s2 + as_float(b2, "b2")


def _matmul32(a, b):
    """a @ b with both operands cast to float32: products and sums in float32."""
    return np.asarray(a).astype(np.float32) @ np.asarray(b).astype(np.float32)


def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True).

    Every input is rounded to float16; each matmul multiplies and sums in float32.
    fix=False stores z, h and y in float16 (z overflows to inf beyond 65504);
    fix=True keeps z, h and y in float32.
    """
    # Rounding to float16 overflows to inf, and inf in a matmul gives NaN: the lesson, not a bug.
    with np.errstate(over="ignore", invalid="ignore"):
        x, W1, b1, W2, b2 = (as_float(a, name).astype(np.float16)
                             for a, name in ((x, "x"), (W1, "W1"), (b1, "b1"), (W2, "W2"), (b2, "b2")))
        if fix:
            h = np.maximum(_matmul32(x, W1) + b1.astype(np.float32), np.float32(0))
            return _matmul32(h, W2) + b2.astype(np.float32)
        z = _matmul32(x, W1).astype(np.float16) + b1
        h = np.maximum(z, np.float16(0))
        return _matmul32(h, W2).astype(np.float16) + b2


def ffn_forward_bfloat16(x, W1, b1, W2, b2):
    """ReLU FFN on bfloat16 storage (as float32 values): operands, z, h and y rounded to bfloat16, sums in float32."""
    x, W1, b1, W2, b2 = (to_bfloat16(as_float(a, name))
                         for a, name in ((x, "x"), (W1, "W1"), (b1, "b1"), (W2, "W2"), (b2, "b2")))
    h = to_bfloat16(np.maximum(to_bfloat16(x @ W1 + b1), np.float32(0)))
    return to_bfloat16(h @ W2 + b2)


def ffn_forward_float32(x, W1, b1, W2, b2):
    """ReLU FFN with every array in float32."""
    x, W1, b1, W2, b2 = (as_float(a, name).astype(np.float32)
                         for a, name in ((x, "x"), (W1, "W1"), (b1, "b1"), (W2, "W2"), (b2, "b2")))
    return np.maximum(x @ W1 + b1, np.float32(0)) @ W2 + b2


FORMATS = ("float32", "float16", "bfloat16", "int8")


def forward_in(fmt, x, W1, b1, W2, b2):
    """The FFN output computed in one of FORMATS (float16 with the fix; int8: weights only)."""
    if fmt == "float32":
        return ffn_forward_float32(x, W1, b1, W2, b2)
    if fmt == "float16":
        return ffn_forward_float16(x, W1, b1, W2, b2, fix=True)
    if fmt == "bfloat16":
        return ffn_forward_bfloat16(x, W1, b1, W2, b2)
    if fmt == "int8":
        q1, s1 = quantize_int8(W1)
        q2, s2 = quantize_int8(W2)
        return ffn_forward_int8(x, q1, s1, b1, q2, s2, b2)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def relative_error(y, y_ref):
    """‖y - y_ref‖ / ‖y_ref‖ (Frobenius norms), in float64."""
    y, y_ref = np.asarray(y, dtype=np.float64), np.asarray(y_ref, dtype=np.float64)
    return float(np.linalg.norm(y - y_ref) / np.linalg.norm(y_ref))


def random_ffn(d_model, d_ff, n_tokens=64, seed=0):
    """(x, W1, b1, W2, b2), float64: x ~ N(0, 1), W ~ N(0, 1/fan_in), b ~ N(0, 0.1²)."""
    rng = np.random.default_rng([seed, d_model, d_ff])
    x = rng.standard_normal((n_tokens, d_model))
    W1 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)
    W2 = rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff)
    return x, W1, 0.1 * rng.standard_normal(d_ff), W2, 0.1 * rng.standard_normal(d_model)


def error_over_width(widths, formats=FORMATS, n_tokens=64, seed=0):
    """{format: relative error against float64 at each width}, d_ff = 4·d_model, random_ffn's weights."""
    errors = {fmt: [] for fmt in formats}
    for d_model in widths:
        args = random_ffn(int(d_model), 4 * int(d_model), n_tokens, seed)
        y64 = np.maximum(args[0] @ args[1] + args[2], 0.0) @ args[3] + args[4]
        for fmt in formats:
            errors[fmt].append(relative_error(forward_in(fmt, *args), y64))
    return {fmt: np.array(e) for fmt, e in errors.items()}
