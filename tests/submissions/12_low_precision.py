"""Alternative answers for 12_low_precision.

Each answer cell is self-contained: a submission replaces only the cells it names,
so the others keep the worked solution's answers.
"""

from . import Wrong

# --- ffn_forward_float16 ------------------------------------------------------------------------

_F16_MATMUL = '''import numpy as np

def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(np.float16) for a in (x, W1, b1, W2, b2))
    keep = np.float32 if fix else np.float16
    z = (x.astype(np.float32) @ W1.astype(np.float32)).astype(keep) + b1.astype(keep)
    h = np.maximum(z, 0)
    return (h.astype(np.float32) @ W2.astype(np.float32)).astype(keep) + b2.astype(keep)
'''

# einsum in float32, the bias added in float32 and the sum rounded once (the other order the text allows).
_F16_EINSUM = '''import numpy as np

def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    def stored(a):
        return np.asarray(a, dtype=np.float64).astype(np.float16).astype(np.float32)

    x, W1, b1, W2, b2 = map(stored, (x, W1, b1, W2, b2))
    out = np.float32 if fix else np.float16
    z = (np.einsum("...i,ij->...j", x, W1) + b1).astype(out)
    h = np.where(z > 0, z, out(0)).astype(np.float32)
    return (np.einsum("...j,jk->...k", h, W2) + b2).astype(out)
'''

# --- to_bfloat16 -------------------------------------------------------------------------------------

_BF16_UINT64 = '''import numpy as np

def to_bfloat16(x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    out = b.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)
'''

# NaNs masked out first, so uint32 cannot wrap: finite values and inf never carry past bit 31.
_BF16_MASKED = '''import numpy as np

def to_bfloat16(x):
    x = np.array(x, dtype=np.float32, order="C")
    nan = np.isnan(x)
    b = x.view(np.uint32).copy()
    b[nan] = 0
    lsb = (b >> np.uint32(16)) & np.uint32(1)
    b = (b + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    out = b.view(np.float32).copy()
    out[nan] = np.nan
    return out
'''

_BF16_TRUNCATE = '''import numpy as np

def to_bfloat16(x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = x.view(np.uint32) & np.uint32(0xFFFF0000)
    return np.where(np.isnan(x), np.float32(np.nan), b.view(np.float32))
'''

# --- quantize_int8 and dequantize ------------------------------------------------------------------

_QUANT_VECTOR = '''import numpy as np

def quantize_int8(W):
    W = np.asarray(W, dtype=float)
    amax = np.abs(W).max(axis=0)
    scale = np.where(amax > 0, amax / 127, 1.0)
    q = np.clip(np.rint(W / scale), -127, 127).astype(np.int8)
    return q, scale
'''

# Column by column with Python's round (ties to even, like np.rint).
_QUANT_LOOP = '''import numpy as np

def quantize_int8(W):
    W = np.asarray(W, dtype=float)
    d_in, d_out = W.shape
    q = np.zeros((d_in, d_out), dtype=np.int8)
    scale = np.ones(d_out)
    for j in range(d_out):
        top = max(abs(w) for w in W[:, j])
        if top > 0:
            scale[j] = top / 127
        for i in range(d_in):
            q[i, j] = min(127, max(-127, round(W[i, j] / scale[j])))
    return q, scale
'''

_DEQUANT_BROADCAST = '''import numpy as np

def dequantize(q, scale):
    return np.asarray(q, dtype=float) * np.asarray(scale, dtype=float)
'''

_DEQUANT_EINSUM = '''import numpy as np

def dequantize(q, scale):
    return np.einsum("ij,j->ij", np.asarray(q).astype(np.float64), np.asarray(scale, dtype=np.float64))
'''

# --- ffn_forward_int8 -----------------------------------------------------------------------------------

_INT8_SCALE_OUT = '''import numpy as np

def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    x = np.asarray(x, dtype=float)
    h = np.maximum((x @ q1.astype(float)) * s1 + b1, 0.0)
    return (h @ q2.astype(float)) * s2 + b2
'''

# Dequantise first, then the ordinary FFN: equal up to float64 rounding.
_INT8_DEQUANT_FIRST = '''import numpy as np

def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    W1 = np.asarray(q1, dtype=np.float64) * s1
    W2 = np.asarray(q2, dtype=np.float64) * s2
    z = np.asarray(x, dtype=np.float64) @ W1 + b1
    return np.clip(z, 0.0, None) @ W2 + b2
'''

CORRECT = {
    "vectorised": {"ffn_forward_float16": _F16_MATMUL, "to_bfloat16": _BF16_UINT64, "quantize_int8": _QUANT_VECTOR,
                   "dequantize": _DEQUANT_BROADCAST, "ffn_forward_int8": _INT8_SCALE_OUT},
    "other-routes": {"ffn_forward_float16": _F16_EINSUM, "to_bfloat16": _BF16_MASKED, "quantize_int8": _QUANT_LOOP,
                     "dequantize": _DEQUANT_EINSUM, "ffn_forward_int8": _INT8_DEQUANT_FIRST},
}

WRONG = [
    # z and h stay float16 whatever fix says; only the output is cast to float32.
    Wrong("f16-fix-hidden-float16", "ffn_forward_float16", '''import numpy as np

def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(np.float16) for a in (x, W1, b1, W2, b2))
    z = (x.astype(np.float32) @ W1.astype(np.float32)).astype(np.float16) + b1
    h = np.maximum(z, 0)
    y = (h.astype(np.float32) @ W2.astype(np.float32)).astype(np.float16) + b2
    return y.astype(np.float32 if fix else np.float16)
''', loses=("test_ffn_forward_float16", "test_ffn_forward_float16_hidden"), diagnosis="float16_hidden_in_fix"),
    # Everything in float32, rounded to float16 only at the end: no overflow without the fix either.
    Wrong("f16-float32-throughout", "ffn_forward_float16", '''import numpy as np

def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(np.float16).astype(np.float32)
                         for a in (x, W1, b1, W2, b2))
    y = np.maximum(x @ W1 + b1, 0) @ W2 + b2
    return y if fix else y.astype(np.float16)
''', loses=("test_ffn_forward_float16", "test_ffn_forward_float16_hidden"), diagnosis="float32_without_fix"),
    # The inputs go straight to float32: exact on the worked example, wrong where float16 storage bites.
    Wrong("f16-inputs-not-rounded", "ffn_forward_float16", _F16_MATMUL.replace(
        "np.asarray(a, dtype=float).astype(np.float16)", "np.asarray(a, dtype=float).astype(np.float32)"),
        loses=("test_ffn_forward_float16_hidden",), diagnosis="inputs_not_float16"),
    Wrong("bf16-truncated", "to_bfloat16", _BF16_TRUNCATE,
          loses=("test_to_bfloat16", "test_to_bfloat16_hidden"), diagnosis="bf16_truncated"),
    Wrong("bf16-round-half-up", "to_bfloat16", _BF16_UINT64.replace("0x7FFF + ((b >> 16) & 1)", "0x8000"),
          loses=("test_to_bfloat16", "test_to_bfloat16_hidden"), diagnosis="bf16_round_half_up"),
    # Right on every finite input; a NaN with its payload in the low bits carries into inf or 0.
    Wrong("bf16-nan-carry", "to_bfloat16", _BF16_UINT64.replace(
        "return np.where(np.isnan(x), np.float32(np.nan), out)", "return out"),
        loses=("test_to_bfloat16_hidden",), diagnosis="bf16_nan_carry"),
    Wrong("bf16-is-float16", "to_bfloat16", '''import numpy as np

def to_bfloat16(x):
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)
''', loses=("test_to_bfloat16", "test_to_bfloat16_hidden"), diagnosis="float16_for_bfloat16"),
    Wrong("int8-per-tensor", "quantize_int8", '''import numpy as np

def quantize_int8(W):
    W = np.asarray(W, dtype=float)
    scale = np.abs(W).max() / 127
    return np.clip(np.rint(W / scale), -127, 127).astype(np.int8), scale
''', loses=("test_quantize_int8", "test_quantize_int8_hidden"), diagnosis="per_tensor_scale"),
    Wrong("int8-per-row", "quantize_int8", _QUANT_VECTOR.replace(".max(axis=0)", ".max(axis=1)").replace(
        "W / scale", "W / scale[:, None]"), loses=("test_quantize_int8", "test_quantize_int8_hidden"),
        diagnosis="per_row_scale"),
    Wrong("int8-scale-128", "quantize_int8", _QUANT_VECTOR.replace("amax / 127", "amax / 128"),
          loses=("test_quantize_int8", "test_quantize_int8_hidden"), diagnosis="scale_by_128"),
    Wrong("int8-no-clip", "quantize_int8", '''import numpy as np

def quantize_int8(W):
    W = np.asarray(W, dtype=float)
    scale = np.abs(W).max(axis=0) / 128
    return np.rint(W / scale).astype(np.int8), scale
''', loses=("test_quantize_int8", "test_quantize_int8_hidden"), diagnosis="int8_wraparound"),
    Wrong("int8-truncated", "quantize_int8", _QUANT_VECTOR.replace("np.clip(np.rint(W / scale), -127, 127)",
                                                                   "np.clip(W / scale, -127, 127)"),
          loses=("test_quantize_int8", "test_quantize_int8_hidden"), diagnosis="q_truncated"),
    # Only exact ties tell floor(v + 0.5) from np.rint: the worked example has one (-63.5), the hidden tests more.
    Wrong("int8-half-up", "quantize_int8", _QUANT_VECTOR.replace("np.rint(W / scale)", "np.floor(W / scale + 0.5)"),
          loses=("test_quantize_int8", "test_quantize_int8_hidden"), diagnosis="q_round_half_up"),
    Wrong("dequant-divided", "dequantize", _DEQUANT_BROADCAST.replace("*", "/"),
          loses=("test_dequantize", "test_dequantize_hidden"), diagnosis="divided_by_scale"),
    # Crashes on the worked example's 3 x 2 q; on a square q the hidden tests name it.
    Wrong("dequant-per-row", "dequantize", '''import numpy as np

def dequantize(q, scale):
    return np.asarray(q, dtype=float) * np.asarray(scale, dtype=float)[:, None]
''', loses=("test_dequantize", "test_dequantize_hidden"), diagnosis="scale_per_row"),
    Wrong("int8-ffn-no-scales", "ffn_forward_int8", _INT8_SCALE_OUT.replace(" * s1", "").replace(" * s2", ""),
          loses=("test_ffn_forward_int8", "test_ffn_forward_int8_hidden"), diagnosis="missing_scales"),
    Wrong("int8-ffn-bias-scaled", "ffn_forward_int8", '''import numpy as np

def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    x = np.asarray(x, dtype=float)
    h = np.maximum((x @ q1.astype(float) + b1) * s1, 0.0)
    return (h @ q2.astype(float) + b2) * s2
''', loses=("test_ffn_forward_int8", "test_ffn_forward_int8_hidden"), diagnosis="bias_scaled"),
    Wrong("int8-ffn-no-relu", "ffn_forward_int8", _INT8_SCALE_OUT.replace(
        "np.maximum((x @ q1.astype(float)) * s1 + b1, 0.0)", "(x @ q1.astype(float)) * s1 + b1"),
        loses=("test_ffn_forward_int8", "test_ffn_forward_int8_hidden"), diagnosis="no_relu_int8"),
]
