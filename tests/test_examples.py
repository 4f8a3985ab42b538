"""Every number in the course spec's worked examples (W-1 ... W-8) and corrected claims.

Each test recomputes a stated number with the reference code and checks it against
both the spec's value and the copy stored in `ffn_helpers.examples`, so the notebooks
(which read the stored copy) cannot drift from the code. float64 throughout; the
tolerances are explicit: `EXACT` where float64 is exact, else the stated digits.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import special, stats

import ffn_helpers as fh
from ffn_helpers import rounding
from ffn_helpers.examples import EXAMPLES, W_1, W_2, W_3, W_4, W_5, W_6, W_7, W_8

TIGHT = 1e-12  # absolute, for sums of a handful of one-decimal numbers


def half_ulp_of_last_digit(value_text):
    """Tolerance for a number quoted to the digits of `value_text` ("0.37754067" -> 5e-9).

    Whole numbers ("0", "10", "10.0") are exact in float64 and the code gives them exactly: 0.
    """
    if float(value_text) == int(float(value_text)):
        return 0.0
    mantissa = value_text.lower().split("e")[0]
    exponent = int(value_text.lower().split("e")[1]) if "e" in value_text.lower() else 0
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (exponent - decimals)


def test_stored_examples_are_read_only_float64():
    arrays = [W_1.w, W_1.exact_zero_x, W_1.exact_zero_w, *(c.x for c in W_1.cases.values())]
    for ex in (W_2, W_3, W_4, W_7):
        arrays += [ex.x, ex.W1, ex.b1, ex.W2, ex.b2, ex.xW1, ex.z, ex.h, ex.y]
    for a in arrays:
        assert a.dtype == np.float64
        with pytest.raises(ValueError):
            a[...] = 0
    assert sorted(EXAMPLES) == sorted(f"W-{i}" for i in range(1, 11))


# --- W-1: one neuron, w = [0.5, 0.2, -0.3, 0.4], b = 0.1 -----------------------------------

def test_W1_weights_and_bias():
    np.testing.assert_array_equal(W_1.w, [0.5, 0.2, -0.3, 0.4])
    assert W_1.b == 0.1


@pytest.mark.parametrize("case, x, dot, z, relu", [
    ("A", [1, 0, -1, 2], 1.6, 1.7, 1.7),  # positive: ReLU passes it unchanged
    ("B", [-2, 0, 1, 0], -1.3, -1.2, 0.0),  # negative: ReLU gives 0
    ("C", [0.2, -1, -0.3, 0], -0.01, 0.09, 0.09),  # dot -0.01, so z = 0.09 with b = 0.1
])
def test_W1_sign_cases_dot_z_and_relu(case, x, dot, z, relu):
    stored = W_1.cases[case]
    np.testing.assert_array_equal(stored.x, x)
    got_dot = float(np.dot(x, W_1.w))
    got_z = got_dot + W_1.b
    got_relu = float(fh.relu(got_z))
    for got, spec, kept in ((got_dot, dot, stored.dot), (got_z, z, stored.z), (got_relu, relu, stored.relu)):
        assert got == pytest.approx(spec, abs=TIGHT)
        assert kept == spec
    if case == "B":
        assert got_relu == 0.0 and fh.relu_grad(got_z) == 0.0  # a dead unit for this input


def test_W1_case_C_bias_0_01_makes_z_zero_the_published_minus_0_09_gives_minus_0_1():
    dot_C = float(np.dot(W_1.cases["C"].x, W_1.w))
    assert -dot_C == pytest.approx(0.01, abs=TIGHT) == W_1.b_for_zero_z_C
    # The right bias: z is zero up to rounding, and (BLAS's dot, then + 0.01) is one of the orders.
    assert dot_C + 0.01 in _case_C_every_rounding() and abs(dot_C + 0.01) < 1e-16
    z_published = dot_C + W_1.published_b_C
    assert W_1.published_b_C == -0.09
    assert z_published == pytest.approx(-0.1, abs=TIGHT) == W_1.z_C_with_published_b
    assert abs(z_published) > 0.09  # the published bias is nowhere near making z zero


def test_W1_case_C_in_float64_left_to_right_is_about_minus_8_7e_minus_18_not_zero():
    # The spec's sum, in its order, as Python floats: one rounding per operation, so these
    # bits are the same on every IEEE-754 machine and the equality is exact.
    residue = 0.2 * 0.5 + (-1) * 0.2 + (-0.3) * (-0.3) + 0 * 0.4 + 0.01
    assert residue == rounding.dot_in_order(W_1.cases["C"].x, W_1.w, W_1.b_for_zero_z_C)
    assert residue == W_1.float_residue_z_C == -5 * 2.0**-59
    assert residue < 0.0 and f"{residue:.1e}" == "-8.7e-18"  # the spec's "about -8.7e-18"
    assert fh.relu(residue) == 0.0  # ReLU still outputs 0, but not because z is 0


def _case_C_every_rounding():
    return rounding.every_rounding(W_1.cases["C"].x, W_1.w, W_1.b_for_zero_z_C)


def test_W1_case_C_every_order_is_at_most_0_and_within_the_error_bound_one_order_gives_0():
    x, w, b = W_1.cases["C"].x, W_1.w, W_1.b_for_zero_z_C
    every = _case_C_every_rounding()
    exact, bound = rounding.exact_value(x, w, b), rounding.error_bound(x, w, b)
    assert len(every) == 7 and max(every) == 0.0 and min(every) < 0
    assert W_1.float_residue_z_C in every and W_1.fma_residue_z_C in every
    assert all(abs(v - exact) <= bound for v in every)
    assert exact == pytest.approx(-1.2e-17, rel=0.01, abs=0) and bound == pytest.approx(2.2e-16, rel=0.01, abs=0)
    assert f"{W_1.fma_residue_z_C:.3g}" == "-1.21e-17"  # the spec's other machine


def test_W1_case_C_through_numpy_is_one_of_the_values_some_order_gives():
    """`@` and `np.dot` go through BLAS, whose kernel (chosen for the CPU, or by OPENBLAS_CORETYPE)
    fixes the order and the use of FMAs: assert only what holds for every order."""
    x, w, b = W_1.cases["C"].x, W_1.w, W_1.b_for_zero_z_C
    every = _case_C_every_rounding()
    for got in (float(x @ w + b), float(np.dot(x, w) + b), float((np.stack([x, x]) @ w + b)[1])):
        assert got in every and got <= 0.0 and fh.relu(got) == 0.0


# The kernels the notebook names, and the value `@` gives for case C with each.
BLAS_KERNEL_RESIDUE = {"SkylakeX": W_1.fma_residue_z_C, "Haswell": W_1.float_residue_z_C,
                       "Sandybridge": W_1.float_residue_z_C}


def test_W1_case_C_through_openblas_gives_what_the_notebook_says_for_its_kernel():
    from threadpoolctl import threadpool_info

    kernels = {i.get("architecture") for i in threadpool_info() if i.get("internal_api") == "openblas"}
    named = kernels & set(BLAS_KERNEL_RESIDUE)
    if len(named) != 1:
        pytest.skip(f"numpy's BLAS kernel here is {sorted(map(str, kernels)) or 'not OpenBLAS'}; "
                    f"the notebook names {sorted(BLAS_KERNEL_RESIDUE)}")
    x, w, b = W_1.cases["C"].x, W_1.w, W_1.b_for_zero_z_C
    assert float(x @ w + b) == BLAS_KERNEL_RESIDUE[named.pop()]


def test_rounding_every_order_of_an_exact_sum_is_exact_and_dot_in_order_is_not_python_sum():
    assert list(rounding.every_rounding(W_1.exact_zero_x, W_1.exact_zero_w, W_1.exact_zero_b)) == [0.0]
    # Ten times 0.1 added one by one is 0.9999999999999999; Python >= 3.12's sum() says 1.0.
    assert rounding.dot_in_order([0.1] * 10, [1.0] * 10) == 0.9999999999999999
    assert rounding.exact_value([0.1] * 10, [1.0] * 10) == 1.0


def test_W1_exact_zero_built_from_representable_numbers_is_exactly_0():
    x, w, b = W_1.exact_zero_x, W_1.exact_zero_w, W_1.exact_zero_b
    np.testing.assert_array_equal(x, [0.5, 0, 0, 0])
    np.testing.assert_array_equal(w, [2, 1, 1, 1])
    assert b == -1.0
    z = float(np.dot(x, w) + b)
    assert z == 0.0  # exactly, not approximately
    assert fh.relu(z) == 0.0 and fh.relu_grad(z) == 0.0  # cell C: the convention at 0 is 0


def test_W1_sanity_bound_norms_2_449_times_0_735_is_1_8_at_least_1_6():
    x_A = W_1.cases["A"].x
    norm_x, norm_w = float(np.linalg.norm(x_A)), float(np.linalg.norm(W_1.w))
    assert norm_x == pytest.approx(math.sqrt(6), rel=1e-15, abs=0) == W_1.norm_x_A
    assert norm_w == pytest.approx(math.sqrt(0.54), rel=1e-15, abs=0) == W_1.norm_w
    assert round(norm_x, 3) == 2.449 and round(norm_w, 3) == 0.735
    assert norm_x * norm_w == pytest.approx(1.8, abs=TIGHT)
    assert abs(np.dot(x_A, W_1.w)) <= norm_x * norm_w
    assert 1.8 >= 1.6


# --- W-2, W-3, W-4: small forward passes ------------------------------------------------------

def _assert_trace(ex, xW1, z, h, y, atol):
    trace = fh.ffn_trace(ex.x, *ex.params)
    for got, spec, kept in ((ex.x @ ex.W1, xW1, ex.xW1), (trace.z, z, ex.z), (trace.h, h, ex.h),
                            (trace.y, y, ex.y)):
        np.testing.assert_allclose(got, spec, rtol=0, atol=atol)
        np.testing.assert_array_equal(kept, spec)
    np.testing.assert_array_equal(fh.ffn_forward(ex.x, *ex.params), trace.y)
    return trace


def test_W2_3_to_4_to_3_preactivation_0_94_m0_62_0_55_0_96_output_0_453_m0_512_0_698():
    np.testing.assert_array_equal(W_2.W1, [[0.5, -0.3, 0.8, 0.2], [-0.2, 0.6, 0.1, -0.4], [0.3, 0.1, -0.5, 0.7]])
    np.testing.assert_array_equal(W_2.b1, [0.1, -0.1, 0.2, 0.0])
    np.testing.assert_array_equal(W_2.W2, [[0.4, -0.2, 0.3], [0.1, 0.5, -0.1], [-0.3, 0.2, 0.4], [0.2, -0.4, 0.1]])
    np.testing.assert_array_equal(W_2.b2, [0.05, -0.05, 0.1])
    np.testing.assert_array_equal(W_2.x, [1.0, -0.5, 0.8])
    trace = _assert_trace(W_2, xW1=[0.84, -0.52, 0.35, 0.96], z=[0.94, -0.62, 0.55, 0.96],
                          h=[0.94, 0, 0.55, 0.96], y=[0.453, -0.512, 0.698], atol=TIGHT)
    assert trace.z.shape == (4,) and trace.y.shape == (3,)


@pytest.mark.parametrize("ex, x, W1, b1, W2, b2", [
    (W_3, [2, -1], [[1, 0, -1, 2], [0, 1, 1, -1]], [0, 1, 3, 0], [[1, 0], [0, 1], [1, 1], [0.5, 0]], [0, 1]),
    (W_4, [1, -1], [[1, 0, 2], [0, 1, -1]], [0, 0, 0.5], [[1, -1], [0, 1], [1, 0]], [0, 1]),
    (W_7, [3, -1], [[1, 2], [0, 1]], [1, 0], [[1, 0], [1, 1]], [0, 1]),
], ids=["W-3", "W-4", "W-7"])
def test_stored_inputs_are_the_spec_s(ex, x, W1, b1, W2, b2):
    for kept, spec in zip((ex.x, *ex.params), (x, W1, b1, W2, b2), strict=True):
        np.testing.assert_array_equal(kept, spec)
        assert kept.shape == np.shape(spec)


def test_W3_xW1_2_m1_m3_5_two_exact_zeros_output_4_5_1_0():
    trace = _assert_trace(W_3, xW1=[2, -1, -3, 5], z=[2, 0, 0, 5], h=[2, 0, 0, 5], y=[4.5, 1.0], atol=0)
    # Cell C: with these representable numbers the two zeros are exact, not rounding residue.
    assert trace.z[1] == 0.0 and trace.z[2] == 0.0
    np.testing.assert_array_equal(W_3.x @ W_3.W1, [2, -1, -3, 5])


def test_W4_forward_preactivation_1_m1_3_5_hidden_1_0_3_5_output_4_5_0():
    _assert_trace(W_4, xW1=[1, -1, 3], z=[1, -1, 3.5], h=[1, 0, 3.5], y=[4.5, 0], atol=0)


def test_W4_residual_5_5_m1_mean_2_25_std_3_25():
    residual = W_4.x + fh.ffn_forward(W_4.x, *W_4.params)
    np.testing.assert_array_equal(residual, [5.5, -1])
    np.testing.assert_array_equal(W_4.extra["residual"], residual)
    assert residual.mean() == 2.25 == W_4.extra["residual_mean"]
    assert residual.std() == 3.25 == W_4.extra["residual_std"]  # biased: divides by d = 2


def _ffn4(x):
    return fh.ffn_forward(x, *W_4.params)


def test_W4_post_ln_with_eps_0_is_1_m1():
    out = fh.layer_norm(W_4.x + _ffn4(W_4.x), eps=0.0)
    np.testing.assert_allclose(out, [1, -1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(fh.post_ln(W_4.x, _ffn4, eps=0.0), W_4.extra["post_ln_eps0"], rtol=0, atol=1e-15)


def test_W4_post_ln_with_eps_1e_5_is_0_9999995266():
    assert W_4.extra["eps"] == 1e-5
    out = fh.post_ln(W_4.x, _ffn4, eps=1e-5)
    np.testing.assert_allclose(out, [0.9999995266, -0.9999995266], rtol=0, atol=1e-10)
    np.testing.assert_allclose(out, W_4.extra["post_ln_eps"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(out, [3.25 / math.sqrt(3.25**2 + 1e-5), -3.25 / math.sqrt(3.25**2 + 1e-5)],
                               rtol=1e-15, atol=0)
    np.testing.assert_array_equal(fh.post_ln(W_4.x, _ffn4), out)  # 1e-5 is the default


def test_W4_position_wise_rows_1_0_to_3_5_0_and_0_2_to_0_3_and_swapped_order():
    tokens = np.array([[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_array_equal(W_4.extra["tokens"], tokens)
    out = _ffn4(tokens)
    np.testing.assert_array_equal(out, [[3.5, 0], [0, 3]])
    np.testing.assert_array_equal(W_4.extra["tokens_out"], out)
    np.testing.assert_array_equal(_ffn4(tokens[::-1]), out[::-1])
    for row, expected in zip(tokens, out, strict=True):
        np.testing.assert_array_equal(_ffn4(row), expected)


# --- W-5: the activation table, sigmoid and Φ, and the tails ---------------------------------

W5_TABLE = [  # z, ReLU, SiLU, exact GELU, tanh GELU, as printed in the spec
    ("-0.5", "0", "-0.18877033", "-0.15426877", "-0.15428599"),
    ("2", "2", "1.76159416", "1.95449974", "1.95459769"),
    ("10", "10", "9.99954602", "10.0", "10.0"),
    ("-10", "0", "-4.5397868702e-04", "-7.61985302416e-23", None),  # tanh GELU: -0.0, below
]


@pytest.mark.parametrize("row", W5_TABLE, ids=[r[0] for r in W5_TABLE])
def test_W5_table_row_to_the_stated_digits(row):
    z = float(row[0])
    stored = W_5["table"][z]
    assert W_5["columns"] == ("relu", "silu", "gelu", "gelu_tanh")
    for name, text, kept in zip(W_5["columns"], row[1:], stored, strict=True):
        got = float(fh.get_activation(name)(z))
        if text is None:
            continue
        spec = float(text)
        assert kept == spec
        if text == "-7.61985302416e-23":
            assert got == pytest.approx(spec, rel=1e-10, abs=0)  # the brief's tolerance for the tail
        else:
            assert got == pytest.approx(spec, rel=0, abs=half_ulp_of_last_digit(text)), (name, z, got)


def test_W5_relu_and_gelu_at_10_are_exactly_10_0():
    assert fh.relu(10.0) == 10.0
    assert fh.gelu(10.0) == 10.0  # Φ(10) rounds to 1 in float64
    assert fh.gelu_tanh(10.0) == 10.0


def test_W5_gelu_tanh_at_minus_10_underflows_to_minus_0_0_signbit_set():
    got = fh.gelu_tanh(-10.0)
    assert got == 0.0 and np.signbit(got)
    assert W_5["table"][-10.0][3] == 0.0 and np.signbit(W_5["table"][-10.0][3])


@pytest.mark.parametrize("z, sigmoid_text, phi_text", [(-0.5, "0.37754067", "0.30853754"),
                                                        (2.0, "0.88079708", "0.97724987")])
def test_W5_sigmoid_and_Phi_values(z, sigmoid_text, phi_text):
    assert W_5["sigmoid"][z] == float(sigmoid_text) and W_5["Phi"][z] == float(phi_text)
    assert fh.sigmoid(z) == pytest.approx(float(sigmoid_text), rel=0, abs=half_ulp_of_last_digit(sigmoid_text))
    phi = fh.gelu(z) / z  # GELU = z·Φ(z)
    assert phi == pytest.approx(float(phi_text), rel=0, abs=half_ulp_of_last_digit(phi_text))
    assert phi == pytest.approx(stats.norm.cdf(z), rel=1e-15, abs=0)
    assert fh.silu(z) / z == pytest.approx(fh.sigmoid(z), rel=1e-15, abs=0)  # SiLU = z·sigmoid(z)


def _naive_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def test_W5_naive_sigmoid_overflows_with_a_warning_below_about_minus_710():
    threshold = W_5["naive_sigmoid_overflow_below"]
    assert threshold == -710.0
    # exp(-z) overflows once -z > log(max float) = 709.78...: "about 710".
    assert abs(-np.log(np.finfo(np.float64).max) - threshold) < 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _naive_sigmoid(np.float64(-709.0)) > 0  # still fine just above
    with pytest.warns(RuntimeWarning, match="overflow"):
        assert _naive_sigmoid(np.float64(threshold)) == 0.0
    with pytest.warns(RuntimeWarning, match="overflow"):
        _naive_sigmoid(np.float64(-1000.0))


@pytest.mark.parametrize("z", [-709.0, -710.0, -1000.0, -1e308])
def test_W5_reference_sigmoid_does_not_warn_where_the_naive_one_overflows(z):
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        s = fh.sigmoid(z)
    # sigmoid(z) = e^z / (1 + e^z) ≈ e^z; below -709.78 that is subnormal or 0, and scipy's
    # expit returns 0 there: still no overflow, no warning.
    assert s == pytest.approx(math.exp(z) if z > -745 else 0.0, rel=1e-12, abs=np.finfo(np.float64).tiny)


def test_W5_textbook_erf_gelu_is_minus_0_0_at_minus_10_erfc_form_keeps_the_tail():
    z = -10.0
    textbook = 0.5 * z * (1.0 + special.erf(z / math.sqrt(2.0)))
    assert textbook == 0.0 and np.signbit(textbook)  # 1 + erf(-7.07) cancels to 0
    erfc_form = 0.5 * z * special.erfc(-z / math.sqrt(2.0))
    assert erfc_form == pytest.approx(-7.61985302416e-23, rel=1e-10, abs=0)
    assert erfc_form == pytest.approx(fh.gelu(z), rel=1e-13, abs=0)


@pytest.mark.parametrize("z", [-10.0, -20.0, -30.0])
def test_W5_tails_relu_exact_0_silu_like_z_exp_z_gelu_like_a_gaussian_tail(z):
    assert fh.relu(z) == 0.0 and not np.signbit(fh.relu(z))
    silu, gelu = float(fh.silu(z)), float(fh.gelu(z))
    assert silu < 0 and gelu < 0  # both approach 0 from below
    # SiLU(z) = z e^z / (1 + e^z): the ratio to z e^z is 1 up to e^z.
    assert silu / (z * math.exp(z)) == pytest.approx(1.0, rel=0, abs=2 * math.exp(z) + 1e-15)
    # GELU(z) = z Φ(z), and the Mills-ratio bounds for x = -z > 0 give
    # -φ(x) <= GELU(z) <= -(x² / (1 + x²)) φ(x): a Gaussian tail.
    x = -z
    phi = math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    assert -phi * (1 + 1e-14) <= gelu <= -(x * x / (1 + x * x)) * phi * (1 - 1e-14)
    assert abs(gelu) < 1e-18 * abs(silu)  # far faster than SiLU


# --- W-6: parameter budgets ------------------------------------------------------------------

def test_W6_bert_base_layer_4_722_432_from_its_four_parts():
    kept = W_6["bert_base"]
    d_model, d_ff = 768, 3072
    assert (kept["d_model"], kept["d_ff"]) == (d_model, d_ff)
    with_bias, without_bias = fh.ffn_param_count(d_model, d_ff), fh.ffn_param_count(d_model, d_ff, bias=False)
    assert d_model * d_ff == 2_359_296 == kept["W1"] == kept["W2"]
    assert without_bias == 2 * 2_359_296
    assert with_bias - without_bias == 3_072 + 768 == kept["b1"] + kept["b2"]
    assert (kept["b1"], kept["b2"]) == (d_ff, d_model) == (3_072, 768)
    assert 2_359_296 + 3_072 + 2_359_296 + 768 == 4_722_432 == with_bias == kept["per_layer"]
    assert fh.preset("bert-base").ffn_params_per_layer == with_bias


def test_W6_bert_base_is_about_8_d_model_squared_4_718_592():
    assert 8 * 768**2 == 4_718_592 == W_6["bert_base"]["approx_8_d_model_sq"]
    assert fh.ffn_param_count(768, 3072) / 4_718_592 == pytest.approx(1, abs=1e-3)  # biases: 0.08 %


def test_W6_bert_base_12_layers_56_669_184_params_226_676_736_bytes_216_18_MiB():
    kept = W_6["bert_base"]
    p = fh.preset("bert-base")
    assert p.n_layers == 12 == kept["n_layers"]
    assert p.ffn_params_total == 12 * 4_722_432 == 56_669_184 == kept["total"]
    n_bytes = fh.param_bytes(p.ffn_params_total, "float32")
    assert n_bytes == 226_676_736 == kept["float32_bytes"]
    assert round(n_bytes / 2**20, 2) == 216.18 == kept["float32_MiB"]
    assert fh.preset("gpt2-small").ffn_params_total == 56_669_184  # same dimensions


def test_W6_transformer_base_2_099_712_not_the_published_2_101_760():
    kept = W_6["transformer_base"]
    assert (kept["d_model"], kept["d_ff"]) == (512, 2048)
    count = fh.ffn_param_count(512, 2048)
    assert count == 2 * 512 * 2048 + 2048 + 512 == 2_099_712 == kept["per_layer"]
    assert kept["published_wrong_sum"] == 2_101_760
    assert 2_101_760 not in {count, fh.ffn_param_count(512, 2048, bias=False)}
    assert fh.preset("transformer-base").ffn_params_per_layer == 2_099_712
    gpt2 = fh.preset("gpt2-small")  # ... and GPT-2 small is 768/3072, not 512/2048
    assert (gpt2.d_model, gpt2.d_ff) == (768, 3072)


def test_W6_256_1024_is_525_568_with_bias_524_288_without_attention_263_168_ffn_two_thirds():
    kept = W_6["libtorch_example"]
    assert (kept["d_model"], kept["d_ff"]) == (256, 1024)
    assert (fh.preset("libtorch-example").d_model, fh.preset("libtorch-example").d_ff) == (256, 1024)
    with_bias, without_bias = fh.ffn_param_count(256, 1024), fh.ffn_param_count(256, 1024, bias=False)
    assert with_bias == 525_568 == kept["with_bias"]
    assert without_bias == 524_288 == kept["without_bias"]
    assert with_bias - without_bias == 1_280 == kept["bias"]
    assert (with_bias - without_bias) / with_bias < 0.003  # negligible
    attention = fh.attention_param_count(256)
    assert attention == 4 * (256 * 256 + 256) == 263_168 == kept["attention_with_bias"]
    share = with_bias / (with_bias + attention)
    assert share == pytest.approx(2 / 3, abs=0.005) and kept["ffn_share_approx"] == 2 / 3


def test_W6_llama_7b_swiglu_3_d_model_d_ff_135_266_304_per_layer_4_328_521_728_total():
    kept = W_6["llama_7b"]
    p = fh.preset("llama-7b")
    assert (p.d_model, p.d_ff, p.n_layers, p.bias, p.gated) == (4096, 11008, 32, False, True)
    assert (kept["d_model"], kept["d_ff"], kept["n_layers"]) == (4096, 11008, 32)
    per_layer = fh.ffn_param_count(4096, 11008, bias=False, gated=True)
    assert per_layer == 3 * 4096 * 11008 == 135_266_304 == kept["per_layer"] == p.ffn_params_per_layer
    assert p.ffn_params_total == 32 * per_layer == 4_328_521_728 == kept["total"]


@pytest.mark.parametrize("d_model, d_ff", [(768, 3072), (512, 2048), (256, 1024), (4096, 11008)])
def test_W6_flops_per_token_4_d_model_d_ff(d_model, d_ff):
    multiply_adds = 2 * d_model * d_ff  # one per weight of W1 and of W2
    assert fh.ffn_flops_per_token(d_model, d_ff) == 2 * multiply_adds == 4 * d_model * d_ff


# --- W-7: collapse to linear -----------------------------------------------------------------

def test_W7_without_sigma_W_3_2_1_1_b_1_1_both_paths_give_9_6():
    W, b = fh.collapse_to_linear(*W_7.params)
    np.testing.assert_array_equal(W, [[3, 2], [1, 1]])
    np.testing.assert_array_equal(b, [1, 1])
    np.testing.assert_array_equal(W_7.extra["W"], W)
    np.testing.assert_array_equal(W_7.extra["b"], b)
    x = np.array([3.0, -1.0])
    two_layers = fh.ffn_forward(x, *W_7.params, activation="identity")
    one_layer = x @ W + b
    np.testing.assert_array_equal(two_layers, [9, 6])
    np.testing.assert_array_equal(one_layer, [9, 6])
    _assert_trace(W_7, xW1=[3, 5], z=[4, 5], h=[4, 5], y=[9, 6], atol=0)  # here ReLU changes nothing


def test_W7_with_relu_the_identity_fails_for_some_input():
    W, b = fh.collapse_to_linear(*W_7.params)
    grid = np.array([[u, v] for u in np.arange(-3.0, 3.5, 0.5) for v in np.arange(-3.0, 3.5, 0.5)])
    with_relu = fh.ffn_forward(grid, *W_7.params, activation="relu")
    gap = np.abs(with_relu - (grid @ W + b)).max(axis=1)
    failing = grid[gap > 0.1]
    assert len(failing) > 0
    x = failing[0]  # e.g. x = [-3, -3]: z = [-2, -9], ReLU zeroes both units
    np.testing.assert_array_equal(fh.ffn_forward(x, *W_7.params), W_7.b2)
    assert not np.allclose(x @ W + b, W_7.b2)
    # A concrete one to quote: x = [-2, 0] gives [0, 1] with ReLU but [-5, -3] from (W, b).
    np.testing.assert_array_equal(fh.ffn_forward([-2.0, 0.0], *W_7.params), [0, 1])
    np.testing.assert_array_equal(np.array([-2.0, 0.0]) @ W + b, [-5, -3])


# --- W-8: limiting values ----------------------------------------------------------------------

def test_W8_silu_10_is_9_999546_silu_minus_10_is_minus_0_000454():
    assert fh.silu(10.0) == pytest.approx(9.999546, rel=0, abs=5e-7) and W_8["silu_10"] == 9.999546
    assert fh.silu(-10.0) == pytest.approx(-0.000454, rel=0, abs=5e-7) and W_8["silu_minus_10"] == -0.000454


def test_W8_gelu_minus_10_is_about_minus_7_62e_minus_23_far_below_silu():
    g = fh.gelu(-10.0)
    assert g == pytest.approx(-7.62e-23, rel=0, abs=0.005e-23) and W_8["gelu_minus_10"] == -7.62e-23
    assert 1e-23 < abs(g) < 1e-22  # magnitude ~1e-22
    assert 1e-4 < abs(fh.silu(-10.0)) < 1e-3  # SiLU's ~1e-4
    assert abs(g) / abs(fh.silu(-10.0)) < 1e-18


# --- Section 5: claims worth correcting -------------------------------------------------------

def test_claim_relu_regions_at_most_sum_C_d_ff_i_for_i_le_n_not_2_to_the_d_ff():
    n, d_ff = 2, 6
    bound = int(sum(special.comb(d_ff, i, exact=True) for i in range(n + 1)))
    assert bound == 1 + 6 + 15 == 22 < 2**d_ff == 64
    # A random ReLU layer on R²: count the activation patterns met on a dense grid.
    rng = np.random.default_rng(5)
    W1, b1 = rng.standard_normal((n, d_ff)), rng.standard_normal(d_ff)
    u = np.linspace(-20, 20, 201)
    grid = np.stack(np.meshgrid(u, u), axis=-1).reshape(-1, n)
    patterns = np.unique(np.packbits(grid @ W1 + b1 > 0, axis=1), axis=0)
    assert len(patterns) <= bound
    assert len(patterns) >= bound - 4  # the grid finds nearly all regions: the bound is tight here
    assert len(patterns) < 2**d_ff / 2  # while most of the 2^d_ff patterns never occur


def _zero_fraction(x, W1, b1):
    return float((fh.ffn_trace(x, W1, b1, np.zeros((W1.shape[1], W1.shape[0])), None).h == 0).mean())


def test_claim_about_half_the_hidden_units_are_zero_holds_for_symmetric_preactivations():
    rng = np.random.default_rng(0)
    d_model, d_ff, n = 64, 256, 512
    x = rng.standard_normal((n, d_model))
    W1 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)
    frac = _zero_fraction(x, W1, np.zeros(d_ff))
    assert frac == pytest.approx(0.5, abs=0.03)


def test_claim_about_half_the_hidden_units_are_zero_fails_for_shifted_preactivations():
    rng = np.random.default_rng(0)
    d_model, d_ff, n = 64, 256, 512
    x = rng.standard_normal((n, d_model))
    W1 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)  # z ~ N(b1, ≈1)
    for shift in (1.0, -1.0):
        frac = _zero_fraction(x, W1, np.full(d_ff, shift))
        assert frac == pytest.approx(stats.norm.cdf(-shift), abs=0.03)  # 0.16 or 0.84
        assert abs(frac - 0.5) > 0.25


def test_claim_layer_norm_uses_biased_variance_and_eps_inside_the_sqrt():
    x = np.array([[0.0, 0.01, 0.03], [2.0, -1.0, 5.0]])  # the first row has a tiny variance
    eps = 1e-4
    d = x.shape[-1]
    mean = x.sum(axis=-1, keepdims=True) / d
    biased_var = ((x - mean) ** 2).sum(axis=-1, keepdims=True) / d
    by_hand = (x - mean) / np.sqrt(biased_var + eps)
    np.testing.assert_allclose(fh.layer_norm(x, eps=eps), by_hand, rtol=1e-14, atol=1e-15)
    unbiased = (x - mean) / np.sqrt(biased_var * d / (d - 1) + eps)
    eps_outside = (x - mean) / (np.sqrt(biased_var) + eps)
    for wrong in (unbiased, eps_outside):
        assert np.abs(fh.layer_norm(x, eps=eps) - wrong).max() > 1e-3
