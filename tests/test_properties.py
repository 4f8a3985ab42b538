"""Properties that hold for every input, checked on generated ones (hypothesis).

Sizes are small and examples few so the file runs in seconds; the examples are
derandomised so that CI sees the same inputs every run.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize, special, stats

import ffn_helpers as fh

# Applied to each test (not loaded as a profile, which would change other files' hypothesis tests too).
FAST = settings(max_examples=50, deadline=None, database=None, derandomize=True)

EPS = np.finfo(np.float64).eps
SUBNORMAL = np.finfo(np.float64).smallest_subnormal  # rounding is absolute down there


def finite(lo=-1e3, hi=1e3):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def weights(seed, d_model, d_ff):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((d_model, d_ff)), rng.standard_normal(d_ff),
            rng.standard_normal((d_ff, d_model)), rng.standard_normal(d_model))


@st.composite
def ffn_case(draw, max_tokens=8):
    n = draw(st.integers(1, max_tokens))
    d_model, d_ff = draw(st.integers(1, 6)), draw(st.integers(1, 8))
    x = draw(hnp.arrays(np.float64, (n, d_model), elements=finite(-10, 10)))
    return x, weights(draw(st.integers(0, 2**32 - 1)), d_model, d_ff)


def affine_error_bound(x, W1, b1, W2, b2):
    """A bound on the rounding error of σ-free FFN outputs: a few ulps of the sum of |terms|."""
    return 64 * EPS * ((np.abs(x) @ np.abs(W1) + np.abs(b1)) @ np.abs(W2) + np.abs(b2)) + 1e-300


# --- position-wise -----------------------------------------------------------------------------------

@FAST
@given(case=ffn_case(), activation=st.sampled_from(sorted(fh.ACTIVATIONS)), data=st.data())
def test_permuting_tokens_permutes_outputs(case, activation, data):
    x, params = case
    perm = np.array(data.draw(st.permutations(range(len(x)))))
    y = fh.ffn_forward(x, *params, activation=activation)
    bound = affine_error_bound(x, *params) + 1e-12 * (1 + np.abs(y))
    assert (np.abs(fh.ffn_forward(x[perm], *params, activation=activation) - y[perm]) <= bound[perm]).all()


@FAST
@given(case=ffn_case(), activation=st.sampled_from(["relu", "gelu", "silu"]))
def test_each_output_row_depends_on_its_own_token_only(case, activation):
    x, params = case
    y = fh.ffn_forward(x, *params, activation=activation)
    bound = affine_error_bound(x, *params) + 1e-12 * (1 + np.abs(y))
    for t in range(len(x)):
        assert (np.abs(fh.ffn_forward(x[t], *params, activation=activation) - y[t]) <= bound[t]).all()


# --- collapse ----------------------------------------------------------------------------------------

@FAST
@given(case=ffn_case())
def test_without_activation_the_ffn_is_the_collapsed_affine_map(case):
    x, (W1, b1, W2, b2) = case
    W, b = fh.collapse_to_linear(W1, b1, W2, b2)
    two_steps = fh.ffn_forward(x, W1, b1, W2, b2, activation="identity")
    one_step = x @ W + b
    assert (np.abs(two_steps - one_step) <= 2 * affine_error_bound(x, W1, b1, W2, b2)).all()


# --- LayerNorm ---------------------------------------------------------------------------------------

@FAST
@given(x=hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 12)), elements=finite()),
       eps=st.sampled_from([0.0, 1e-5, 1e-2]))
def test_layer_norm_rows_have_mean_0_and_variance_var_over_var_plus_eps(x, eps):
    var = x.var(axis=-1)
    keep = var > 1e-3  # rows that are not (nearly) constant
    if eps == 0 and (var == 0).any():
        with pytest.raises(ValueError, match="constant row"):
            fh.layer_norm(x, eps=eps)
        return
    out = fh.layer_norm(x, eps=eps)
    assert out.shape == x.shape and np.isfinite(out[keep]).all()
    # Rounding in x - μ is relative to max |x|, not to the spread: scale the tolerance by both.
    tol = 1e-12 * (1 + np.abs(x).max(axis=-1) / np.sqrt(var + 1e-300))
    assert (np.abs(out.mean(axis=-1))[keep] <= tol[keep]).all()
    assert (np.abs(out.var(axis=-1) - var / (var + eps))[keep] <= tol[keep]).all()


@FAST
@given(x=hnp.arrays(np.float64, st.integers(2, 10), elements=finite(-100, 100)),
       shift=finite(-100, 100), scale=st.floats(0.1, 10))
def test_layer_norm_ignores_shift_and_positive_scale_of_its_input(x, shift, scale):
    if x.var() <= 1e-2:
        return  # nearly constant: eps dominates
    out = fh.layer_norm(x, eps=0.0)
    np.testing.assert_allclose(fh.layer_norm(scale * x + shift, eps=0.0), out, rtol=0, atol=1e-9)


# --- activations -------------------------------------------------------------------------------------

# Where GELU and SiLU turn: the roots of their derivatives, found numerically (not hard-coded).
Z_MIN_GELU = optimize.brentq(lambda z: special.ndtr(z) + z * math.exp(-z * z / 2) / math.sqrt(2 * math.pi), -2, 0,
                             xtol=1e-15)
Z_MIN_SILU = optimize.brentq(lambda z: 1 + z * (1 - special.expit(z)), -3, 0, xtol=1e-15)


def test_turning_points_are_where_the_course_says():
    assert -0.76 < Z_MIN_GELU < -0.75  # GELU decreases below about -0.75, increases above
    assert -1.28 < Z_MIN_SILU < -1.27  # SiLU: about -1.278


def _no_decrease(f, a, b):
    """f(a) <= f(b), up to a few ulps of rounding where f is flat."""
    fa, fb = float(f(a)), float(f(b))
    return fa <= fb + 4 * EPS * max(abs(fa), abs(fb))


@FAST
@given(a=finite(), b=finite())
def test_relu_and_sigmoid_never_decrease(a, b):
    a, b = min(a, b), max(a, b)
    assert fh.relu(a) <= fh.relu(b)
    assert fh.sigmoid(a) <= fh.sigmoid(b)


@FAST
@given(a=finite(Z_MIN_GELU, 1e3), b=finite(Z_MIN_GELU, 1e3))
def test_gelu_increases_above_its_turning_point(a, b):
    a, b = min(a, b), max(a, b)
    assert _no_decrease(fh.gelu, a, b)


@FAST
@given(a=finite(-1e3, Z_MIN_GELU), b=finite(-1e3, Z_MIN_GELU))
def test_gelu_decreases_below_its_turning_point(a, b):
    a, b = min(a, b), max(a, b)
    assert _no_decrease(lambda z: -fh.gelu(z), a, b)


@FAST
@given(a=finite(Z_MIN_SILU, 1e3), b=finite(Z_MIN_SILU, 1e3))
def test_silu_increases_above_its_turning_point(a, b):
    a, b = min(a, b), max(a, b)
    assert _no_decrease(fh.silu, a, b)


@FAST
@given(a=finite(-1e3, Z_MIN_SILU), b=finite(-1e3, Z_MIN_SILU))
def test_silu_decreases_below_its_turning_point(a, b):
    a, b = min(a, b), max(a, b)
    assert _no_decrease(lambda z: -fh.silu(z), a, b)


@FAST
@given(z=hnp.arrays(np.float64, st.integers(1, 20), elements=finite(-40, 40)))
def test_exact_gelu_is_z_times_scipy_normal_cdf(z):
    np.testing.assert_allclose(fh.gelu(z), z * stats.norm.cdf(z), rtol=1e-15, atol=0)


@FAST
@given(z=hnp.arrays(np.float64, st.integers(1, 20), elements=finite(-1e300, 1e300)))
def test_odd_part_identities_relu_gelu_silu(z):
    # f(z) - f(-z) = z for ReLU, z·Φ(z) and z·σ(z), because Φ(z) + Φ(-z) = σ(z) + σ(-z) = 1.
    np.testing.assert_array_equal(fh.relu(z) - fh.relu(-z), z)
    for f in (fh.gelu, fh.silu):
        assert (np.abs(f(z) - f(-z) - z) <= 4 * EPS * np.abs(z) + 2 * SUBNORMAL).all()


@FAST
@given(z=hnp.arrays(np.float64, st.integers(1, 20), elements=finite(-1e300, 1e300)))
def test_smooth_activations_sit_between_their_minimum_and_relu(z):
    relu = fh.relu(z)
    for f, z_min in ((fh.gelu, Z_MIN_GELU), (fh.silu, Z_MIN_SILU), (fh.gelu_tanh, None)):
        out = f(z)
        assert (out <= relu).all()
        lower = -0.2 if z_min is None else float(f(z_min)) * (1 + 4 * EPS)
        assert (out >= lower).all()
    s = fh.sigmoid(z)
    assert ((0 <= s) & (s <= 1)).all()
    assert (np.abs(s + fh.sigmoid(-z) - 1) <= EPS).all()


@FAST
@given(z=finite(9, 1e300))
def test_far_right_gelu_is_z_and_sigmoid_and_silu_reach_1_and_z(z):
    assert fh.gelu(z) == z  # Φ(z) rounds to 1 from z ≈ 8.3
    if z >= 37:  # e^{-z} < ε/2: σ(z) rounds to 1
        assert fh.sigmoid(z) == 1.0 and fh.silu(z) == z


@FAST
@given(z=finite(-700, -37))
def test_far_left_sigmoid_is_exp_z_silu_is_z_exp_z(z):
    # σ(z) = e^z / (1 + e^z) and 1 + e^z rounds to 1 here.
    assert abs(fh.sigmoid(z) / math.exp(z) - 1) <= 4 * EPS
    assert abs(fh.silu(z) / (z * math.exp(z)) - 1) <= 4 * EPS
    assert fh.relu(z) == 0.0
