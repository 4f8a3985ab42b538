"""Held-out pairs for 12_low_precision."""
# ruff: noqa: E501  (the answers are kept as the students wrote them, long lines included)

from heldout_copies import SOLUTION, Pair

NOTEBOOK = "12_low_precision"

CLASSMATE_QUANT = '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=float)
    scale = np.ones(W.shape[1])
    for j in range(W.shape[1]):
        m = np.max(np.abs(W[:, j]))
        if m > 0:
            scale[j] = m / 127
    q = np.round(W / scale).clip(-127, 127).astype(np.int8)
    return q, scale
'''

PAIRS = [
    Pair("renamed", "ffn_forward_float16", SOLUTION, '''def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage, sums in float32; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True)."""
    x, W1, b1, W2, b2 = (np.asarray(t, dtype=float).astype(np.float16) for t in (x, W1, b1, W2, b2))
    out_type = np.float32 if fix else np.float16
    pre = (x.astype(np.float32) @ W1.astype(np.float32)).astype(out_type) + b1.astype(out_type)
    act = np.maximum(pre, 0)
    return (act.astype(np.float32) @ W2.astype(np.float32)).astype(out_type) + b2.astype(out_type)
'''),
    Pair("temporaries", "ffn_forward_float16", SOLUTION, '''def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage, sums in float32; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True)."""
    x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(np.float16) for a in (x, W1, b1, W2, b2))
    keep = np.float32 if fix else np.float16
    x32 = x.astype(np.float32)
    W1_32 = W1.astype(np.float32)
    z = (x32 @ W1_32).astype(keep) + b1.astype(keep)
    h = np.maximum(z, 0)
    h32 = h.astype(np.float32)
    W2_32 = W2.astype(np.float32)
    return (h32 @ W2_32).astype(keep) + b2.astype(keep)
'''),
    Pair("reformatted", "ffn_forward_float16", SOLUTION, '''def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage, sums in float32; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True)."""
    x, W1, b1, W2, b2 = (
        np.asarray(a, dtype=float).astype(np.float16)
        for a in (x, W1, b1, W2, b2)
    )
    keep = np.float32 if fix else np.float16
    z = (
        (x.astype(np.float32) @ W1.astype(np.float32)).astype(keep)
        + b1.astype(keep)
    )
    h = np.maximum(z, 0)
    return (
        (h.astype(np.float32) @ W2.astype(np.float32)).astype(keep)
        + b2.astype(keep)
    )
'''),
    Pair("independent", "ffn_forward_float16", SOLUTION, '''def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage, sums in float32; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True)."""
    def half(a):
        return np.array(a, dtype=np.float64).astype(np.float16)

    out_dtype = np.float32 if fix else np.float16
    pre = np.matmul(half(x), half(W1), dtype=np.float32).astype(out_dtype)
    pre = pre + half(b1).astype(out_dtype)
    post = np.where(pre > 0, pre, out_dtype(0))
    y = np.matmul(post.astype(np.float16), half(W2), dtype=np.float32).astype(out_dtype)
    return y + half(b2).astype(out_dtype)
'''),
    Pair("commented", "to_bfloat16", SOLUTION, '''def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    # reinterpret the bits, widen so the add cannot overflow
    b = x.view(np.uint32).astype(np.uint64)
    # round to nearest even on bit 16, then drop the low 16 bits
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    out = b.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)  # keep NaN a NaN
'''),
    Pair("renamed", "to_bfloat16", SOLUTION, '''def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    arr = np.ascontiguousarray(x, dtype=np.float32)
    bits = arr.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    rounded = bits.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(arr), np.float32(np.nan), rounded)
'''),
    Pair("temporaries", "to_bfloat16", SOLUTION, '''def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    lsb = (b >> 16) & 1
    bias = 0x7FFF + lsb
    b = (b + bias) & 0xFFFF0000
    b32 = b.astype(np.uint32)
    out = b32.view(np.float32)
    nan = np.isnan(x)
    return np.where(nan, np.float32(np.nan), out)
'''),
    Pair("parentheses", "to_bfloat16", SOLUTION, '''def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = (x.view(np.uint32)).astype(np.uint64)
    b = ((b + 0x7FFF) + ((b >> 16) & 1)) & 0xFFFF0000
    out = (b.astype(np.uint32)).view(np.float32)
    return np.where(np.isnan(x), (np.float32(np.nan)), out)
'''),
    Pair("independent", "to_bfloat16", SOLUTION, '''def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    x = np.array(x, dtype=np.float32)
    bits = x.view(np.int32).astype(np.int64) & 0xFFFFFFFF
    upper = bits >> 16
    lower = bits & 0xFFFF
    round_up = (lower > 0x8000) | ((lower == 0x8000) & (upper % 2 == 1))
    upper = upper + round_up
    result = ((upper << 16) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    result[np.isnan(x)] = np.nan
    return result
'''),
    Pair("renamed", "quantize_int8", SOLUTION, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    M = np.asarray(W, dtype=float)
    peak = np.abs(M).max(axis=0)
    s = np.where(peak > 0, peak / 127, 1.0)
    codes = np.clip(np.rint(M / s), -127, 127).astype(np.int8)
    return codes, s
'''),
    Pair("dead_code", "quantize_int8", SOLUTION, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=float)
    d_in, d_out = W.shape
    amax = np.abs(W).max(axis=0)
    scale = np.where(amax > 0, amax / 127, 1.0)
    q = np.clip(np.rint(W / scale), -127, 127).astype(np.int8)
    error = np.abs(q * scale - W).max()
    return q, scale
'''),
    Pair("free_cell", "quantize_int8", SOLUTION, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    return quant(W)
''', free='''def quant(W):
    W = np.asarray(W, dtype=float)
    amax = np.abs(W).max(axis=0)
    scale = np.where(amax > 0, amax / 127, 1.0)
    q = np.clip(np.rint(W / scale), -127, 127).astype(np.int8)
    return q, scale


def dequant(q, scale):
    return np.asarray(q, dtype=float) * np.asarray(scale, dtype=float)
'''),
    Pair("commented", "quantize_int8", CLASSMATE_QUANT, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=float)
    scale = np.ones(W.shape[1])  # a zero column keeps scale 1
    for j in range(W.shape[1]):
        m = np.max(np.abs(W[:, j]))  # largest magnitude in column j
        if m > 0:
            scale[j] = m / 127
    # round half to even, then clip to the symmetric range
    q = np.round(W / scale).clip(-127, 127).astype(np.int8)
    return q, scale
'''),
    Pair("temporaries", "quantize_int8", CLASSMATE_QUANT, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=float)
    n_cols = W.shape[1]
    scale = np.ones(n_cols)
    for j in range(n_cols):
        column = W[:, j]
        m = np.max(np.abs(column))
        if m > 0:
            scale[j] = m / 127
    scaled = W / scale
    rounded = np.round(scaled)
    q = rounded.clip(-127, 127).astype(np.int8)
    return q, scale
'''),
    Pair("independent", "quantize_int8", SOLUTION, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=np.float64)
    largest = np.max(np.abs(W), axis=0)
    largest[largest == 0] = 127.0
    scale = largest / 127.0
    q = np.empty(W.shape, dtype=np.int8)
    np.copyto(q, np.minimum(np.maximum(np.round(W / scale), -127), 127), casting="unsafe")
    return q, scale
'''),
    Pair("independent", "quantize_int8", CLASSMATE_QUANT, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=float)
    columns, scales = [], []
    for col in W.T:
        s = float(abs(col).max()) / 127 or 1.0
        columns.append(np.rint(col / s).astype(np.int8))
        scales.append(s)
    return np.stack(columns, axis=1), np.array(scales)
'''),
    Pair("renamed", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    inp = np.asarray(x, dtype=float)
    hid = np.maximum((inp @ q1.astype(float)) * s1 + b1, 0.0)
    return (hid @ q2.astype(float)) * s2 + b2
'''),
    Pair("temporaries", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    x = np.asarray(x, dtype=float)
    W1 = q1.astype(float)
    W2 = q2.astype(float)
    z = (x @ W1) * s1 + b1
    h = np.maximum(z, 0.0)
    out = (h @ W2) * s2 + b2
    return out
'''),
    Pair("dead_code", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    x = np.asarray(x, dtype=float)
    W1_approx = q1 * s1
    h = np.maximum((x @ q1.astype(float)) * s1 + b1, 0.0)
    return (h @ q2.astype(float)) * s2 + b2
    h = None
'''),
    Pair("independent", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    W1 = dequantize(q1, s1)
    W2 = dequantize(q2, s2)
    z = np.asarray(x, dtype=float) @ W1 + b1
    return np.where(z > 0, z, 0.0) @ W2 + b2
'''),
    Pair("reordered", "ffn_forward_float16", SOLUTION, '''def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage, sums in float32; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True)."""
    keep = np.float32 if fix else np.float16
    x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(np.float16) for a in (x, W1, b1, W2, b2))
    z = (x.astype(np.float32) @ W1.astype(np.float32)).astype(keep) + b1.astype(keep)
    h = np.maximum(z, 0)
    return (h.astype(np.float32) @ W2.astype(np.float32)).astype(keep) + b2.astype(keep)
'''),
    Pair("reformatted", "quantize_int8", SOLUTION, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype = float)
    amax = np.abs(W).max(axis = 0)
    scale = np.where(amax > 0, amax/127, 1.0)
    q = np.clip(np.rint(W/scale), -127, 127).astype(np.int8)
    return q, scale
'''),
    Pair("parentheses", "quantize_int8", SOLUTION, '''def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    W = np.asarray(W, dtype=float)
    amax = (np.abs(W)).max(axis=0)
    scale = np.where((amax > 0), (amax / 127), 1.0)
    q = (np.clip(np.rint((W / scale)), -127, 127)).astype(np.int8)
    return (q, scale)
'''),
    Pair("commented", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    x = np.asarray(x, dtype=float)
    # (x @ q) * s == x @ (q * s) because the scale is per output column
    h = np.maximum((x @ q1.astype(float)) * s1 + b1, 0.0)
    return (h @ q2.astype(float)) * s2 + b2  # same for the second layer
'''),
    Pair("reformatted", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    x = np.asarray(x, dtype=float)
    h = np.maximum((x@q1.astype(float))*s1 + b1,
                   0.0)
    return (h@q2.astype(float))*s2 + b2
'''),
    Pair("free_cell", "ffn_forward_int8", SOLUTION, '''def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    return int8_forward(x, q1, s1, b1, q2, s2, b2)
''', free='''def int8_forward(x, q1, s1, b1, q2, s2, b2):
    x = np.asarray(x, dtype=float)
    h = np.maximum((x @ q1.astype(float)) * s1 + b1, 0.0)
    return (h @ q2.astype(float)) * s2 + b2
'''),
    Pair("reordered", "to_bfloat16", SOLUTION, '''def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    b = (b + ((b >> 16) & 1) + 0x7FFF) & 0xFFFF0000
    out = b.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)
'''),
]
