"""ffn_helpers.precision against independent computations: bfloat16 by exact rational rounding (and
PyTorch's values), int8 by a per-column loop with Python's round, the forward passes by float64."""

import math
from fractions import Fraction

import numpy as np
import pytest

import ffn_helpers as fh
from ffn_helpers import examples, precision

P = examples.PRECISION


def bits_to_f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def bfloat16_by_fractions(value):
    """Round a finite float32 value to 8 significant bits (ties to even), exactly, without its bits.

    bfloat16 spaces its numbers 2^(e - 8) apart for x = m·2^e, m in [0.5, 1), and 2^-133 apart below
    2^-126 (subnormals); a result of 2^128 or more is infinite.
    """
    x = Fraction(float(value))
    if x == 0:
        return float(value)  # keeps the sign of zero
    _, e = math.frexp(float(value))
    spacing = Fraction(2) ** (max(e, -125) - 8)
    n = round(x / spacing)  # Fraction.__round__: ties to even
    r = n * spacing
    if abs(r) >= 2**128:
        return math.copysign(math.inf, float(value))
    return math.copysign(float(r), float(value))  # a subnormal that rounds to 0 keeps its sign


# --- bfloat16 -----------------------------------------------------------------------------------------


def test_bfloat16_worked_examples_are_pytorchs_values():
    # Spec values; each one also checked with PyTorch 2.13.0 (CPU), tensor.to(torch.bfloat16).
    rounding = P["bfloat16_rounding"]
    x = np.array(list(rounding), dtype=np.float32)
    np.testing.assert_array_equal(precision.to_bfloat16(x), np.array(list(rounding.values()), dtype=np.float32))
    assert rounding[3.14159265] == 3.140625 and rounding[65504.0] == 65536.0 and rounding[70000.0] == 70144.0
    assert rounding[1.0 + 2.0**-8] == 1.0 and rounding[1.0 + 3 * 2.0**-9] == 1.0078125


# Bit patterns in, bit patterns out, from PyTorch 2.13.0 (CPU): x.view(float32).to(torch.bfloat16).
PYTORCH_BITS = {
    0x7F7F7FFF: 0x7F7F0000,  # just below the tie under float32's max: down to bfloat16's max
    0x7F7F8000: 0x7F800000,  # the tie above bfloat16's max, odd kept bit: up, to inf
    0x7F7E8000: 0x7F7E0000,  # a tie with an even kept bit: down
    0x7F7FFFFF: 0x7F800000,  # float32's max rounds to inf
    0x00008000: 0x00000000,  # a subnormal tie, even: to +0
    0x00018000: 0x00020000,  # a subnormal tie, odd: up
    0x00008001: 0x00010000,  # just above a subnormal tie: up to the smallest bfloat16 subnormal
    0x80018000: 0x80020000,  # negative subnormal tie, odd: away from zero (to even)
    0x3F808000: 0x3F800000,  # 1 + 2^-8: a tie, to even (1.0)
    0x3F818000: 0x3F820000,  # 1 + 3·2^-8: a tie, to even (up)
    0xBF808000: 0xBF800000,  # -(1 + 2^-8): to -1.0
    0x00000001: 0x00000000,  # float32's smallest subnormal: to +0
    0x807FFFFF: 0x80800000,  # the largest negative subnormal: up to -2^-126
}


def test_bfloat16_bit_patterns_match_pytorch():
    got = precision.to_bfloat16(bits_to_f32(list(PYTORCH_BITS))).view(np.uint32)
    assert [hex(int(b)) for b in got] == [hex(b) for b in PYTORCH_BITS.values()]


def test_bfloat16_matches_exact_rounding_on_random_bit_patterns():
    rng = np.random.default_rng(12)
    bits = rng.integers(0, 2**32, size=20_000, dtype=np.uint64).astype(np.uint32)
    bits[:2000] = (bits[:2000] & 0xFFFF0000) | 0x8000  # exact ties
    bits[2000:3000] &= 0x807FFFFF  # subnormals
    x = bits.view(np.float32)
    x = x[np.isfinite(x)]
    got = precision.to_bfloat16(x)
    expected = np.array([bfloat16_by_fractions(v) for v in x], dtype=np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_bfloat16_keeps_inf_nan_zero_signs_and_shape():
    nan_payloads = bits_to_f32([0x7F800001, 0xFFFFFFFF, 0x7FC00000, 0xFF80FFFF])  # the carry would spill
    assert np.isnan(precision.to_bfloat16(nan_payloads)).all()
    special = np.array([np.inf, -np.inf, 0.0, -0.0], dtype=np.float32)
    got = precision.to_bfloat16(special)
    np.testing.assert_array_equal(got, special)
    assert np.signbit(got[3]) and not np.signbit(got[2])
    batch = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    out = precision.to_bfloat16(batch)
    assert out.shape == (2, 3, 4) and out.dtype == np.float32
    assert precision.to_bfloat16(np.float32(3.14159265)).shape == ()
    assert (out.view(np.uint32) & 0xFFFF == 0).all()  # the low 16 bits are clear
    assert np.all(np.abs(out - batch) <= np.abs(batch) * 2.0**-8)  # half of eps, relative


def test_format_facts():
    assert P["float16"]["max"] == float(precision.FLOAT16.max) == 65504.0
    assert P["float16"]["tiny"] == float(precision.FLOAT16.tiny) and f"{P['float16']['tiny']:.2e}" == "6.10e-05"
    assert P["float16"]["eps"] == float(precision.FLOAT16.eps) == 2**-10 and f"{2**-10:.2e}" == "9.77e-04"
    with np.errstate(over="ignore"):
        assert np.isinf(np.float16(P["float16"]["overflows"]))
    assert P["bfloat16"]["max"] == precision.BF16_MAX == float((2 - 2**-7) * Fraction(2) ** 127)
    assert f"{precision.BF16_MAX:.2e}" == "3.39e+38" and precision.BF16_EPS == P["bfloat16"]["eps"] == 0.0078125
    assert precision.to_bfloat16(np.float32(1 + 2**-7)) == 1 + precision.BF16_EPS  # the next number after 1


# --- int8 ---------------------------------------------------------------------------------------------


def quantize_by_loop(W):
    W = np.asarray(W, dtype=float)
    d_in, d_out = W.shape
    q, scale = np.zeros((d_in, d_out), dtype=np.int8), np.zeros(d_out)
    for j in range(d_out):
        amax = max(abs(float(W[i, j])) for i in range(d_in))
        scale[j] = amax / 127 if amax > 0 else 1.0
        for i in range(d_in):
            q[i, j] = max(-127, min(127, round(float(W[i, j]) / scale[j])))  # round: ties to even
    return q, scale


def test_int8_worked_example():
    e = P["int8"]
    q, scale = precision.quantize_int8(e["W"])
    assert q.dtype == np.int8 and scale.dtype == np.float64
    np.testing.assert_array_equal(q, e["q"])
    np.testing.assert_allclose(scale, e["scale"], rtol=1e-15, atol=0)
    np.testing.assert_allclose(scale, [0.00590551, 0.01574803], rtol=0, atol=5e-9)  # as the notebook prints it
    assert q.tolist() == [[85, -64], [42, 127], [-127, 6]]


@pytest.mark.parametrize("shape", [(3, 2), (16, 8), (64, 256)])
def test_int8_matches_a_per_column_loop(shape):
    W = np.random.default_rng(shape[0]).standard_normal(shape) * np.geomspace(1e-3, 10.0, shape[1])
    q, scale = precision.quantize_int8(W)
    q_loop, scale_loop = quantize_by_loop(W)
    np.testing.assert_array_equal(q, q_loop)
    np.testing.assert_array_equal(scale, scale_loop)
    assert np.abs(q).max(axis=0).tolist() == [127] * shape[1]  # every column uses the whole range
    assert np.all(np.abs(precision.dequantize(q, scale) - W) <= scale / 2 * (1 + 1e-12))


def test_int8_ties_to_even_and_zero_column():
    W = np.array([[127.0, 0.0], [2.5, 0.0], [-2.5, 0.0], [0.5, 0.0], [-1.5, 0.0]])
    q, scale = precision.quantize_int8(W)
    assert scale.tolist() == [1.0, 1.0] and q[:, 0].tolist() == [127, 2, -2, 0, -2] and not q[:, 1].any()
    np.testing.assert_array_equal((q, scale)[0], quantize_by_loop(W)[0])


def test_int8_rejects_bad_weights():
    with pytest.raises(ValueError, match="2-D matrix"):
        precision.quantize_int8(np.ones(3))
    with pytest.raises(ValueError, match="finite"):
        precision.quantize_int8(np.array([[1.0, np.inf]]))


def test_int8_functions_reject_mismatched_inputs():
    q, scale = precision.quantize_int8(P["int8"]["W"])
    with pytest.raises(ValueError, match=r"scale should have one entry per column of q, shape \(2,\), got \(3,\)"):
        precision.dequantize(q, np.ones(3))
    with pytest.raises(TypeError, match="q should hold integers"):
        precision.dequantize(q.astype(float), scale)
    with pytest.raises(ValueError, match="shapes do not chain"):
        precision.ffn_forward_int8(np.ones(2), q, scale, np.zeros(2), q.T.copy(), np.ones(3), np.zeros(3))


def test_ffn_forward_int8_is_the_ffn_on_dequantized_weights():
    x, W1, b1, W2, b2 = precision.random_ffn(16, 64, n_tokens=5, seed=3)
    q1, s1 = precision.quantize_int8(W1)
    q2, s2 = precision.quantize_int8(W2)
    got = precision.ffn_forward_int8(x, q1, s1, b1, q2, s2, b2)
    expected = fh.ffn_forward(x, precision.dequantize(q1, s1), b1, precision.dequantize(q2, s2), b2)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert got.dtype == np.float64 and got.shape == (5, 16)
    batched = precision.ffn_forward_int8(x.reshape(5, 1, 16), q1, s1, b1, q2, s2, b2)
    np.testing.assert_allclose(batched.reshape(5, 16), got, rtol=1e-12, atol=0)


# --- float16 and bfloat16 forward passes --------------------------------------------------------------


def test_float16_overflow_example_is_exact():
    o = P["float16_overflow"]
    args = (o["x"], o["W1"], o["b1"], o["W2"], o["b2"])
    assert o["z"] == 4 * 256 * 80 == 81920 > P["float16"]["max"] and o["y"] == 8 * 81920 / 1024
    naive = precision.ffn_forward_float16(*args)
    fixed = precision.ffn_forward_float16(*args, fix=True)
    assert naive.dtype == np.float16 and np.isinf(naive).all()
    assert fixed.dtype == np.float32 and fixed.tolist() == [o["y"]] * 4
    assert fh.ffn_forward(*args).tolist() == [o["y"]] * 4


def float16_by_hand(x, W1, b1, W2, b2, fix):
    """Token by token, unit by unit: float16 inputs, float64 dot products (exact for float16 products up to
    the float64 rounding of the sum), z, h, y stored as stated."""
    with np.errstate(over="ignore"):
        x, W1, b1, W2, b2 = (np.asarray(a).astype(np.float16).astype(np.float64) for a in (x, W1, b1, W2, b2))
        store = np.float32 if fix else np.float16
        out = []
        for token in x:
            z = [np.float64(store(store(np.dot(token, W1[:, j])) + store(b1[j]))) for j in range(W1.shape[1])]
            h = np.maximum(z, 0.0)
            out.append([store(store(np.dot(h, W2[:, k])) + store(b2[k])) for k in range(W2.shape[1])])
        return np.array(out, dtype=store)


@pytest.mark.parametrize("fix", [False, True])
def test_float16_forward_against_a_loop(fix):
    x, W1, b1, W2, b2 = precision.random_ffn(8, 32, n_tokens=4, seed=5)
    got = precision.ffn_forward_float16(x, W1, b1, W2, b2, fix=fix)
    expected = float16_by_hand(x, W1, b1, W2, b2, fix)
    assert got.dtype == expected.dtype == (np.float32 if fix else np.float16)
    # float32 sums in another order may flip the last bit of a float16 z; the outputs are ~1 in size.
    tol = 1e-6 if fix else 4e-3
    np.testing.assert_allclose(got.astype(float), expected.astype(float), rtol=tol, atol=tol)


def test_float16_fix_survives_a_large_hidden_layer_and_the_naive_pass_does_not():
    x, W1, b1, W2, b2 = precision.random_ffn(32, 128, n_tokens=8, seed=7)
    x = x.copy()
    x[:, 0] = 3000.0  # an outlier feature, as in large language models' activations
    W1 = W1.copy()
    W1[0] = 40.0  # z of every unit about 120,000, far beyond 65504: no rounding decides it
    naive = precision.ffn_forward_float16(x, W1, b1, W2, b2)
    fixed = precision.ffn_forward_float16(x, W1, b1, W2, b2, fix=True)
    y64 = fh.ffn_forward(x, W1, b1, W2, b2)
    assert not np.isfinite(naive).any()
    assert np.isfinite(fixed).all() and precision.relative_error(fixed, y64) < 1e-2


def test_bfloat16_forward_rounds_every_stage_and_stays_close():
    x, W1, b1, W2, b2 = precision.random_ffn(16, 64, n_tokens=6, seed=9)
    y = precision.ffn_forward_bfloat16(x, W1, b1, W2, b2)
    assert y.dtype == np.float32 and (y.view(np.uint32) & 0xFFFF == 0).all()
    assert precision.relative_error(y, fh.ffn_forward(x, W1, b1, W2, b2)) < 2e-2


def test_forward_in_rejects_an_unknown_format():
    with pytest.raises(ValueError, match="unknown format 'fp8'"):
        precision.forward_in("fp8", *precision.random_ffn(4, 8, n_tokens=1))


def test_error_over_width_claims_hold_with_margins():
    # What notebook 12 states about its figure; every ratio has room for any BLAS's last bits.
    widths = (16, 32, 64, 128, 256)
    e = precision.error_over_width(widths)
    assert set(e) == set(precision.FORMATS) and all(v.shape == (len(widths),) for v in e.values())
    assert np.all(e["float32"] < 1e-6)
    assert np.all(e["float16"] > 100 * e["float32"])
    assert np.all((5 < e["bfloat16"] / e["float16"]) & (e["bfloat16"] / e["float16"] < 20))
    assert np.all(e["int8"] > 1.5 * e["bfloat16"]) and np.all(e["int8"] < 3e-2)
    assert e["int8"][-1] > 1.2 * e["int8"][0]  # the column maxima grow with d_model, and so does the scale
    for flat in ("float16", "bfloat16"):  # flat: within a factor √2
        assert np.all(np.abs(np.log2(e[flat] / e[flat][0])) < 0.5)
