"""The FFN forward pass: shapes, the per-token definition, layouts, SwiGLU, collapse, errors."""

import numpy as np
import pytest

import ffn_helpers as fh
from ffn_helpers import _fast
from ffn_helpers.activations import ACTIVATIONS

RTOL = 1e-12  # batched GEMMs may sum in another order than a per-token product
ATOL = 1e-12


def params(d_model=5, d_ff=7, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((d_model, d_ff)), rng.standard_normal(d_ff),
            rng.standard_normal((d_ff, d_model)), rng.standard_normal(d_model))


def per_token(x, W1, b1, W2, b2, sigma):
    """The definition, one token (row vector) at a time, with plain Python loops over tokens."""
    x = np.asarray(x, dtype=np.float64)
    flat = x.reshape(-1, x.shape[-1])
    out = np.empty((flat.shape[0], W2.shape[1]))
    for t, token in enumerate(flat):
        z = token @ W1 + (0 if b1 is None else b1)
        out[t] = sigma(z) @ W2 + (0 if b2 is None else b2)
    return out.reshape(*x.shape[:-1], W2.shape[1])


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)], ids=["(d,)", "(n,d)", "(b,s,d)"])
def test_every_shape_agrees_with_a_per_token_loop(shape, activation):
    W1, b1, W2, b2 = params()
    x = np.random.default_rng(1).standard_normal(shape)
    y = fh.ffn_forward(x, W1, b1, W2, b2, activation=activation)
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_allclose(y, per_token(x, W1, b1, W2, b2, ACTIVATIONS[activation]), rtol=RTOL, atol=ATOL)


def test_relu_is_the_default_activation():
    x = np.random.default_rng(2).standard_normal((3, 5))
    np.testing.assert_array_equal(fh.ffn_forward(x, *params()), fh.ffn_forward(x, *params(), activation="relu"))


def test_callable_activation():
    x = np.random.default_rng(2).standard_normal((3, 5))
    np.testing.assert_allclose(fh.ffn_forward(x, *params(), activation=np.tanh),
                               per_token(x, *params(), np.tanh), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("which", ["b1", "b2", "both"])
def test_none_biases_mean_no_bias(which):
    W1, b1, W2, b2 = params()
    x = np.random.default_rng(3).standard_normal((4, 5))
    nb1 = None if which in ("b1", "both") else b1
    nb2 = None if which in ("b2", "both") else b2
    zb1 = np.zeros_like(b1) if nb1 is None else b1
    zb2 = np.zeros_like(b2) if nb2 is None else b2
    np.testing.assert_array_equal(fh.ffn_forward(x, W1, nb1, W2, nb2), fh.ffn_forward(x, W1, zb1, W2, zb2))
    trace = fh.ffn_trace(x, W1, nb1, W2, nb2)
    np.testing.assert_array_equal(trace.y, fh.ffn_forward(x, W1, zb1, W2, zb2))


def test_inputs_are_not_modified():
    W1, b1, W2, b2 = params()
    x = np.random.default_rng(4).standard_normal((3, 5))
    copies = [a.copy() for a in (x, W1, b1, W2, b2)]
    fh.ffn_forward(x, W1, b1, W2, b2, activation="gelu")
    fh.ffn_forward(x[0], W1, b1, W2, b2)
    for a, c in zip((x, W1, b1, W2, b2), copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_accepts_lists_and_ints():
    out = fh.ffn_forward([1, -1], [[1, 0, 2], [0, 1, -1]], [0, 0, 0.5], [[1, -1], [0, 1], [1, 0]], [0, 1])
    np.testing.assert_array_equal(out, [4.5, 0])  # W-4
    assert out.dtype == np.float64


# --- ffn_trace --------------------------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_trace_stages(activation):
    W1, b1, W2, b2 = params(4, 6)
    x = np.random.default_rng(5).standard_normal((2, 3, 4))
    t = fh.ffn_trace(x, W1, b1, W2, b2, activation=activation)
    assert isinstance(t, fh.FFNTrace) and t._fields == ("x", "z", "h", "y")
    assert (t.x.shape, t.z.shape, t.h.shape, t.y.shape) == ((2, 3, 4), (2, 3, 6), (2, 3, 6), (2, 3, 4))
    np.testing.assert_array_equal(t.x, x)
    np.testing.assert_allclose(t.z, x @ W1 + b1, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(t.h, ACTIVATIONS[activation](t.z))
    np.testing.assert_allclose(t.y, t.h @ W2 + b2, rtol=1e-15, atol=0)
    np.testing.assert_allclose(t.y, fh.ffn_forward(x, W1, b1, W2, b2, activation=activation), rtol=RTOL, atol=ATOL)


# --- ffn._fast: exact GELU and SiLU split by rows across threads ------------------------------------

@pytest.fixture(params=[2, 3])
def threads(request, monkeypatch):
    """Force the row split whatever the machine's core count (3: blocks of unequal size)."""
    monkeypatch.setattr(_fast, "_N_THREADS", request.param)
    return request.param


@pytest.mark.parametrize("activation", ["gelu", "silu"])
@pytest.mark.parametrize("batch", [(300,), (3, 100)])
@pytest.mark.parametrize("bias", [True, False])
def test_row_split_ffn_forward_equals_the_plain_one(activation, batch, bias, threads):
    d_model, d_ff = 32, 256  # 300 tokens: 76,800 hidden values, above the 65,536 threshold
    assert 300 * d_ff >= _fast._MIN_PARALLEL and _fast.splits(np.empty((300, d_model)), d_ff, activation)
    W1, b1, W2, b2 = params(d_model, d_ff, seed=6)
    if not bias:
        b1 = b2 = None
    x = 3 * np.random.default_rng(7).standard_normal((*batch, d_model))
    y = fh.ffn_forward(x, W1, b1, W2, b2, activation=activation)
    # ffn_trace: one unsplit GEMM per layer and the public activation. A BLAS may sum a row's products
    # in another order when it runs on one thread, hence a tolerance of a few float64 roundings.
    expected = fh.ffn_trace(x, W1, b1, W2, b2, activation=activation).y
    assert y.shape == expected.shape == (*batch, d_model)
    # An output that cancels (terms of ~100 summing to ~0.3) is compared at the scale of the terms.
    np.testing.assert_allclose(y, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())


@pytest.mark.parametrize("profiler", ["function", "cProfile"])
def test_the_row_split_runs_under_the_callers_profile_function_and_beside_cprofile(profiler, threads):
    """A profile function (the grader's watch for a reference) sees the activation run in the rows' threads;
    cProfile (%prun), which is not a function, keeps to the caller's thread, and the result is the same."""
    import cProfile
    import sys

    W1, b1, W2, b2 = params(32, 256, seed=6)
    x = np.random.default_rng(7).standard_normal((300, 32))
    seen, profile = set(), cProfile.Profile()

    def watch(frame, event, arg):
        if event == "call":
            seen.add(frame.f_code)

    if profiler == "function":
        sys.setprofile(watch)
    else:
        profile.enable()
    try:
        y = fh.ffn_forward(x, W1, b1, W2, b2, activation="gelu")
    finally:
        sys.setprofile(None)
        profile.disable()
    np.testing.assert_array_equal(y, fh.ffn_forward(x, W1, b1, W2, b2, activation="gelu"))
    assert (fh.activations.gelu.__code__ in seen) == (profiler == "function")


@pytest.mark.parametrize("n_threads", [1, 2])
def test_row_split_keeps_the_callers_errstate(n_threads, monkeypatch):
    monkeypatch.setattr(_fast, "_N_THREADS", n_threads)  # 1: the plain path, which must raise as well
    d_model, d_ff = 4, 20_000
    x, W1, b1 = np.ones((4, d_model)), np.ones((d_model, d_ff)), np.zeros(d_ff)
    W2, b2 = np.full((d_ff, d_model), 1e303), np.full(d_model, 1.7e308)  # h W2 ≈ 8e307: + b2 overflows
    assert _fast.splits(x, d_ff, "gelu") == (n_threads > 1)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        fh.ffn_forward(x, W1, b1, W2, b2, activation="gelu")


def test_relu_small_inputs_and_one_token_do_not_split(threads):
    assert not _fast.splits(np.empty((300, 32)), 256, "relu")
    assert not _fast.splits(np.empty((300, 32)), 128, "gelu")  # 38,400 hidden values: too few
    assert not _fast.splits(np.empty((1, 32)), 100_000, "gelu")  # one token: no rows to share
    assert not _fast.splits(np.empty((300, 32)), 256, fh.gelu)  # a callable: we do not know its kernel


@pytest.mark.parametrize("activation", ["gelu", "silu"])
def test_activate_inplace_is_exactly_the_public_function(activation):
    rng = np.random.default_rng(8)
    z = 10 * rng.standard_normal((3, 101, 233))
    z.flat[:4] = [-np.inf, np.inf, np.nan, -1e308]  # the limits and NaN
    expected = ACTIVATIONS[activation](z)
    out = _fast.activate_inplace(z, activation)
    assert out is z  # in place
    np.testing.assert_array_equal(out, expected)
    assert np.signbit(out.flat[0])  # -0.0 at -inf


def test_activate_inplace_on_a_non_contiguous_array_still_writes_into_it():
    base = np.random.default_rng(9).standard_normal((400, 400))
    z = base.T
    expected = fh.gelu(z)
    out = _fast.activate_inplace(z, "gelu")
    assert out is z
    np.testing.assert_array_equal(base.T, expected)


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
@pytest.mark.parametrize("bias", [True, False])
def test_the_fast_path_gives_the_formulas_values_bit_for_bit(activation, bias):
    """Below the row split, ffn_forward's in-place path is the formula σ(x W1 + b1) W2 + b2 (ffn_trace) exactly."""
    W1, b1, W2, b2 = params(32, 64, seed=6)
    if not bias:
        b1 = b2 = None
    x = 3 * np.random.default_rng(7).standard_normal((2, 50, 32))
    x.flat[:3] = [np.nan, -np.inf, np.inf]
    assert _fast.computes(activation) and not _fast.splits(x.reshape(-1, 32), 64, activation)
    y = fh.ffn_forward(x, W1, b1, W2, b2, activation=activation)
    np.testing.assert_array_equal(y, fh.ffn_trace(x, W1, b1, W2, b2, activation=activation).y)


def test_other_activations_take_the_formula():
    """An activation _fast has no kernel for (another name, a callable) runs σ(x W1 + b1) W2 + b2 as written."""
    assert not _fast.computes("gelu_tanh") and not _fast.computes(np.tanh) and not _fast.computes(fh.gelu)
    W1, b1, W2, b2 = params(4, 8, seed=6)
    x = np.random.default_rng(7).standard_normal((3, 4))
    np.testing.assert_array_equal(fh.ffn_forward(x, W1, b1, W2, b2, activation=np.tanh),
                                  np.tanh(x @ W1 + b1) @ W2 + b2)
    np.testing.assert_array_equal(fh.ffn_forward(x, W1, b1, W2, b2, activation="gelu_tanh"),
                                  fh.gelu_tanh(x @ W1 + b1) @ W2 + b2)


# --- NaN (documented: it propagates, position-wise) -------------------------------------------------

@pytest.mark.parametrize("activation", ["relu", "gelu", "silu", "gelu_tanh"])
def test_nan_in_one_token_propagates_to_that_token_only(activation):
    W1, b1, W2, b2 = params()
    x = np.random.default_rng(10).standard_normal((3, 5))
    x[1, 2] = np.nan
    y = fh.ffn_forward(x, W1, b1, W2, b2, activation=activation)
    assert np.isnan(y[1]).all()
    assert np.isfinite(y[[0, 2]]).all()
    np.testing.assert_allclose(y[[0, 2]], fh.ffn_forward(x[[0, 2]], W1, b1, W2, b2, activation=activation),
                               rtol=RTOL, atol=ATOL)


def test_nan_in_a_weight_reaches_every_token():
    W1, b1, W2, b2 = params()
    W1 = W1.copy()
    W1[0, 0] = np.nan
    y = fh.ffn_forward(np.ones((2, 5)), W1, b1, W2, b2, activation="gelu")
    assert np.isnan(y).all()


# --- PyTorch layout ----------------------------------------------------------------------------------

def test_from_torch_layout_transposes_weights_and_matches_nn_linear_semantics():
    d_model, d_ff = 5, 7
    rng = np.random.default_rng(11)
    weight1, bias1 = rng.standard_normal((d_ff, d_model)), rng.standard_normal(d_ff)
    weight2, bias2 = rng.standard_normal((d_model, d_ff)), rng.standard_normal(d_model)
    W1, b1, W2, b2 = fh.from_torch_layout(weight1, bias1, weight2, bias2)
    assert W1.shape == (d_model, d_ff) and W2.shape == (d_ff, d_model)
    np.testing.assert_array_equal(W1, weight1.T)
    np.testing.assert_array_equal(W2, weight2.T)
    np.testing.assert_array_equal(b1, bias1)
    np.testing.assert_array_equal(b2, bias2)
    x = rng.standard_normal((3, d_model))

    def linear(x, weight, bias):  # nn.Linear: x @ weight.T + bias
        return x @ weight.T + bias

    torch_style = linear(np.maximum(linear(x, weight1, bias1), 0), weight2, bias2)
    np.testing.assert_allclose(fh.ffn_forward(x, W1, b1, W2, b2), torch_style, rtol=RTOL, atol=ATOL)
    W1[0, 0] = 99.0  # a copy: the torch weights are untouched
    assert weight1[0, 0] != 99.0


def test_from_torch_layout_keeps_none_biases():
    W1, b1, W2, b2 = fh.from_torch_layout(np.ones((4, 3)), None, np.ones((3, 4)), None)
    assert b1 is None and b2 is None and W1.shape == (3, 4)


@pytest.mark.parametrize("w1_shape, b1_shape, w2_shape, b2_shape, names", [
    ((4, 3), (4,), (4, 3), (3,), ["weight2", "(3, 4)", "(4, 3)"]),
    ((4, 3), (4,), (2, 4), (3,), ["weight2", "(3, 4)", "(2, 4)"]),
    ((4, 3), (3,), (3, 4), (3,), ["bias1", "(4,)", "(3,)"]),
    ((4, 3), (4,), (3, 4), (4,), ["bias2", "(3,)", "(4,)"]),
])
def test_from_torch_layout_shape_errors(w1_shape, b1_shape, w2_shape, b2_shape, names):
    with pytest.raises(ValueError) as info:
        fh.from_torch_layout(np.ones(w1_shape), np.ones(b1_shape), np.ones(w2_shape), np.ones(b2_shape))
    for part in names:
        assert part in str(info.value)


# --- SwiGLU ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5)])
def test_swiglu_is_silu_gate_times_up_then_down(shape):
    rng = np.random.default_rng(12)
    W_gate, W_up, W_down = rng.standard_normal((5, 8)), rng.standard_normal((5, 8)), rng.standard_normal((8, 5))
    x = rng.standard_normal(shape)
    y = fh.swiglu_forward(x, W_gate, W_up, W_down)
    assert y.shape == shape
    gate = x @ W_gate
    expected = (gate / (1 + np.exp(-gate)) * (x @ W_up)) @ W_down
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)


def test_swiglu_errors_name_its_own_parameters():
    x, W = np.ones(5), np.ones((5, 8))
    with pytest.raises(ValueError, match=r"W_gate should have shape \(d_model, d_ff\) = \(5, d_ff\).*\(8, 5\)"):
        fh.swiglu_forward(x, np.ones((8, 5)), W, np.ones((8, 5)))
    with pytest.raises(ValueError, match=r"W_down should have shape \(d_ff, d_model\) = \(8, 5\), got \(5, 8\)"):
        fh.swiglu_forward(x, W, W, np.ones((5, 8)))
    with pytest.raises(ValueError, match=r"W_up should have the shape of W_gate, \(5, 8\), got \(5, 7\)"):
        fh.swiglu_forward(x, W, np.ones((5, 7)), np.ones((8, 5)))


# --- collapse to linear ------------------------------------------------------------------------------

def test_collapse_to_linear_equals_the_ffn_without_activation():
    W1, b1, W2, b2 = params(4, 9, seed=13)
    W, b = fh.collapse_to_linear(W1, b1, W2, b2)
    assert W.shape == (4, 4) and b.shape == (4,)
    x = np.random.default_rng(14).standard_normal((6, 4))
    np.testing.assert_allclose(x @ W + b, fh.ffn_forward(x, W1, b1, W2, b2, activation="identity"),
                               rtol=1e-12, atol=1e-12)
    W0, b0 = fh.collapse_to_linear(W1, None, W2, None)
    np.testing.assert_array_equal(b0, np.zeros(4))
    np.testing.assert_allclose(x @ W0, fh.ffn_forward(x, W1, None, W2, None, activation="identity"),
                               rtol=1e-12, atol=1e-12)


def test_collapse_to_linear_shape_errors():
    with pytest.raises(ValueError, match=r"W2 should have 3 rows"):
        fh.collapse_to_linear(np.ones((2, 3)), None, np.ones((4, 2)), None)
    with pytest.raises(ValueError, match=r"b1 should have shape \(3,\).*got \(2,\)"):
        fh.collapse_to_linear(np.ones((2, 3)), np.ones(2), np.ones((3, 2)), None)
    with pytest.raises(ValueError, match=r"b2 should have shape \(2,\).*got \(3,\)"):
        fh.collapse_to_linear(np.ones((2, 3)), None, np.ones((3, 2)), np.ones(3))


# --- shape errors name what was expected and what came ------------------------------------------------

@pytest.mark.parametrize("x_shape, W1_shape, b1_shape, W2_shape, b2_shape, pattern", [
    ((3, 5), (4, 7), (7,), (7, 5), (5,), r"W1 should have shape \(d_model, d_ff\) = \(5, d_ff\).*got \(4, 7\)"),
    ((3, 5), (5, 7), (7,), (6, 5), (5,), r"W2 should have shape \(d_ff, d_model\) = \(7, 5\), got \(6, 5\)"),
    ((3, 5), (5, 7), (7,), (7, 4), (4,), r"W2 should have shape \(d_ff, d_model\) = \(7, 5\), got \(7, 4\)"),
    ((3, 5), (5, 7), (5,), (7, 5), (5,), r"b1 should have shape \(d_ff,\) = \(7,\), got \(5,\)"),
    ((3, 5), (5, 7), (1, 7), (7, 5), (5,), r"b1 should have shape \(d_ff,\) = \(7,\), got \(1, 7\)"),
    ((3, 5), (5, 7), (7,), (7, 5), (7,), r"b2 should have shape \(d_model,\) = \(5,\), got \(7,\)"),
    ((3, 5), (5,), (7,), (7, 5), (5,), r"W1 should be a 2-D matrix, got an array of shape \(5,\)"),
    ((3, 5), (5, 7), (7,), (2, 7, 5), (5,), r"W2 should be a 2-D matrix.*\(2, 7, 5\)"),
    ((), (5, 7), (7,), (7, 5), (5,), r"x should have shape \(\.\.\., d_model\).*scalar"),
])
def test_wrong_shapes_raise_value_error_naming_expected_and_received(x_shape, W1_shape, b1_shape, W2_shape,
                                                                     b2_shape, pattern):
    args = [np.ones(s) for s in (x_shape, W1_shape, b1_shape, W2_shape, b2_shape)]
    for f in (fh.ffn_forward, fh.ffn_trace):
        with pytest.raises(ValueError, match=pattern):
            f(*args)


def test_torch_layout_W1_gets_the_hint_to_use_from_torch_layout():
    d_model, d_ff = 5, 7
    W1, b1, W2, b2 = params(d_model, d_ff)
    with pytest.raises(ValueError, match=r"got \(7, 5\)\. W1 looks transposed.*from_torch_layout") as info:
        fh.ffn_forward(np.ones(d_model), W1.T, b1, W2, b2)
    assert "(out_features, in_features)" in str(info.value)
    with pytest.raises(ValueError, match=r"W2 looks transposed.*from_torch_layout"):
        fh.ffn_forward(np.ones(d_model), W1, b1, W2.T, b2)


@pytest.mark.parametrize("bad", ["abc", ["1", "2"], None, [1 + 2j, 0], [[1, 2], [3]], {"a": 1}])
def test_non_numeric_x_is_a_type_error(bad):
    with pytest.raises(TypeError, match="x must"):
        fh.ffn_forward(bad, *params(2, 3))


def test_non_numeric_weights_are_type_errors_naming_the_parameter():
    W1, b1, W2, b2 = params(2, 3)
    for i, name in enumerate(["W1", "b1", "W2", "b2"]):
        args = [W1, b1, W2, b2]
        args[i] = "oops"
        with pytest.raises(TypeError, match=rf"^{name} must hold real numbers, got dtype <U4"):
            fh.ffn_forward(np.ones(2), *args)
