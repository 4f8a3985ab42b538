"""The references of notebook 09: xavier_init, count_parameters, ffn_backward (against centred
differences), the FeedForwardNetwork class that assembles them, and numerical_gradient."""

import math
import warnings
import zlib

import numpy as np
import pytest

from ffn_helpers import examples, ffn_forward, gelu, mistakes, silu
from ffn_helpers import module as M

ACTIVATIONS = ("relu", "gelu", "silu")


def with_params(model, params):
    model.W1, model.b1, model.W2, model.b2 = (None if p is None else np.array(p, dtype=float) for p in params)
    return model


def random_params(rng, d_model, d_ff, use_bias=True):
    W1, W2 = rng.normal(size=(d_model, d_ff)), rng.normal(size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    return W1, rng.normal(size=d_ff), W2, rng.normal(size=d_model)


def away_from_kinks(model, x, h=1e-5):
    """True when no ReLU pre-activation is within 100 h of 0 (the centred difference straddles no kink)."""
    return model.activation != "relu" or np.abs(model.trace(x).z).min() > 100 * h


# --- initialisation ------------------------------------------------------------------------------

def test_init_shapes_zero_biases_and_float64():
    model = M.FeedForwardNetwork(3, 5, seed=0)
    assert model.W1.shape == (3, 5) and model.W2.shape == (5, 3)
    assert model.W1.dtype == model.W2.dtype == np.float64
    assert np.array_equal(model.b1, np.zeros(5)) and np.array_equal(model.b2, np.zeros(3))
    no_bias = M.FeedForwardNetwork(3, 5, use_bias=False, seed=0)
    assert no_bias.b1 is None and no_bias.b2 is None
    assert np.array_equal(no_bias.W1, model.W1)  # the biases draw nothing


def test_init_draw_order_is_the_documented_one():
    d_model, d_ff, seed = 4, 6, 17
    std = math.sqrt(2 / (d_model + d_ff))
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    model = M.FeedForwardNetwork(d_model, d_ff, activation="gelu", seed=seed)
    assert np.array_equal(model.W1, W1) and np.array_equal(model.W2, W2)


def test_init_is_reproducible_with_a_seed_and_fresh_without():
    a, b = M.FeedForwardNetwork(4, 8, seed=3), M.FeedForwardNetwork(4, 8, seed=3)
    assert np.array_equal(a.W1, b.W1) and np.array_equal(a.W2, b.W2)
    assert not np.array_equal(a.W1, M.FeedForwardNetwork(4, 8, seed=4).W1)
    assert not np.array_equal(M.FeedForwardNetwork(4, 8).W1, M.FeedForwardNetwork(4, 8).W1)


def test_xavier_std_and_the_sample_std_of_a_large_layer():
    assert M.xavier_std(512, 2048) == pytest.approx(math.sqrt(2 / 2560), rel=1e-15)
    model = M.FeedForwardNetwork(512, 2048, seed=2024)
    n = model.W1.size
    for W in (model.W1, model.W2):
        # the sample std misses the true one by about std/√(2n) = 0.07 %; 1 % is 14 standard errors
        assert W.std() == pytest.approx(M.xavier_std(512, 2048), rel=0.01)
        assert abs(W.mean()) < 5 * M.xavier_std(512, 2048) / math.sqrt(n)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "4", None])
def test_init_rejects_sizes_that_are_not_positive_integers(bad):
    with pytest.raises(ValueError, match="d_model should be a positive integer"):
        M.FeedForwardNetwork(bad, 4)
    with pytest.raises(ValueError, match="d_ff should be a positive integer"):
        M.FeedForwardNetwork(4, bad)


def test_init_rejects_unknown_activation_and_non_boolean_use_bias():
    with pytest.raises(ValueError, match="activation should be one of 'relu', 'gelu', 'silu', got 'tanh'"):
        M.FeedForwardNetwork(2, 3, activation="tanh")
    with pytest.raises(ValueError, match="use_bias should be True or False"):
        M.FeedForwardNetwork(2, 3, use_bias="yes")


# --- counting ------------------------------------------------------------------------------------

@pytest.mark.parametrize("d_model, d_ff, use_bias, expected", [
    (512, 2048, True, examples.W_6["transformer_base"]["per_layer"]),  # 2,099,712
    (512, 2048, False, 2 * 512 * 2048),
    (768, 3072, True, examples.W_6["bert_base"]["per_layer"]),  # 4,722,432
    (256, 1024, True, examples.W_6["libtorch_example"]["with_bias"]),  # 525,568
    (256, 1024, False, examples.W_6["libtorch_example"]["without_bias"]),  # 524,288
    (1, 1, True, 4),
    (1, 1, False, 2),
])
def test_num_parameters(d_model, d_ff, use_bias, expected):
    count = M.FeedForwardNetwork(d_model, d_ff, use_bias=use_bias, seed=0).num_parameters()
    assert type(count) is int and count == expected


def test_num_parameters_is_not_the_published_wrong_sum():
    assert M.FeedForwardNetwork(512, 2048).num_parameters() == 2_099_712
    assert examples.W_6["transformer_base"]["published_wrong_sum"] - 2_099_712 == 2048


# --- forward -------------------------------------------------------------------------------------

@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(5,), (7, 5), (2, 3, 5)])
def test_forward_matches_ffn_forward_for_any_batch_shape(activation, shape):
    rng = np.random.default_rng(1)
    params = random_params(rng, 5, 9)
    model = with_params(M.FeedForwardNetwork(5, 9, activation=activation), params)
    x = rng.normal(size=shape)
    y = model(x)
    assert y.shape == shape
    assert np.array_equal(y, ffn_forward(x, *params, activation=activation))
    assert np.array_equal(model.trace(x).y, y)


def test_forward_reproduces_worked_examples_W2_and_W4():
    W2 = examples.W_2
    model = with_params(M.FeedForwardNetwork(3, 4), W2.params)
    assert np.allclose(model(W2.x), W2.y, rtol=0, atol=1e-15)
    W4 = examples.W_4
    model = with_params(M.FeedForwardNetwork(2, 3), W4.params)
    assert np.allclose(model(W4.extra["tokens"]), W4.extra["tokens_out"], rtol=0, atol=1e-15)


# --- backward against centred differences ---------------------------------------------------------

@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("shape", [(4,), (6, 4), (2, 3, 4)])
@pytest.mark.parametrize("use_bias", [True, False])
def test_backward_passes_the_gradient_check(activation, shape, use_bias):
    rng = np.random.default_rng(zlib.crc32(repr((activation, shape, use_bias)).encode()))
    model = with_params(M.FeedForwardNetwork(4, 7, activation=activation, use_bias=use_bias),
                        random_params(rng, 4, 7, use_bias))
    x, grad_out = rng.normal(size=shape), rng.normal(size=shape)
    assert away_from_kinks(model, x)
    grads = model.backward(x, grad_out)
    assert set(grads) == {"W1", "b1", "W2", "b2", "x"}
    assert grads["x"].shape == shape and grads["W1"].shape == (4, 7) and grads["W2"].shape == (7, 4)
    if use_bias:
        assert grads["b1"].shape == (7,) and grads["b2"].shape == (4,)
    else:
        assert grads["b1"] is None and grads["b2"] is None
    errors = M.gradient_check(model, x, grad_out)
    assert set(errors) == ({"W1", "b1", "W2", "b2", "x"} if use_bias else {"W1", "W2", "x"})
    assert max(errors.values()) <= M.GRAD_CHECK_GOOD, errors


def test_backward_bias_gradients_are_sums_over_tokens():
    rng = np.random.default_rng(5)
    model = with_params(M.FeedForwardNetwork(3, 4), random_params(rng, 3, 4))
    x, G = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3))
    grads = model.backward(x, G)
    assert np.allclose(grads["b2"], G.sum(axis=(0, 1)), rtol=1e-14, atol=1e-14)
    per_token = [model.backward(x[i, j], G[i, j]) for i in range(2) for j in range(5)]
    for name in ("W1", "b1", "W2", "b2"):
        assert np.allclose(grads[name], sum(g[name] for g in per_token), rtol=1e-12, atol=1e-12), name
    assert np.allclose(grads["x"][1, 2], per_token[7]["x"], rtol=1e-14, atol=1e-14)


def test_a_dead_unit_gets_exactly_zero_gradient_both_ways():
    W2 = examples.W_2
    model = with_params(M.FeedForwardNetwork(3, 4), W2.params)
    G = np.array([1.0, -2.0, 0.5])
    assert model.trace(W2.x).z[1] == pytest.approx(-0.62)
    analytic, numeric = model.backward(W2.x, G), M.numerical_gradients(model, W2.x, G)
    for grads in (analytic, numeric):
        assert np.array_equal(grads["W1"][:, 1], np.zeros(3)) and grads["b1"][1] == 0.0
        assert np.array_equal(grads["W2"][1], np.zeros(3))
    assert max(M.gradient_check(model, W2.x, G).values()) <= M.GRAD_CHECK_GOOD


def test_at_an_exact_zero_the_centred_difference_gives_half_the_slope():
    W3 = examples.W_3
    model = with_params(M.FeedForwardNetwork(2, 4), W3.params)
    G = np.array([1.0, 1.0])
    z = model.trace(W3.x).z
    assert z.tolist() == [2.0, 0.0, 0.0, 5.0]
    a, n = model.backward(W3.x, G)["b1"], M.numerical_gradients(model, W3.x, G)["b1"]
    slope = W3.W2 @ G  # ∂L/∂h
    assert np.array_equal(a, np.where(z > 0, slope, 0.0))  # ReLU'(0) = 0
    assert np.allclose(n, np.where(z > 0, slope, np.where(z == 0, slope / 2, 0.0)), rtol=0, atol=1e-9)
    assert np.array_equal(M.relative_error(a, n, elementwise=True)[z == 0], [1.0, 1.0])
    assert M.relative_error(a, n) > M.GRAD_CHECK_WRONG


def test_a_backward_without_the_mask_fails_the_check_by_far():
    rng = np.random.default_rng(8)
    model = with_params(M.FeedForwardNetwork(3, 5), random_params(rng, 3, 5))
    x, G = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    assert away_from_kinks(model, x) and np.any(model.trace(x).z < 0)
    numeric = M.numerical_gradients(model, x, G)
    maskless = mistakes.by_key("missing_activation_grad")[0]
    for name in ("W1", "b1", "x"):
        wrong = maskless.compute(name, x, G, model.W1, model.b1, model.W2, model.b2, "relu")
        assert M.relative_error(wrong, numeric[name]) > M.GRAD_CHECK_WRONG, name


def test_backward_rejects_a_grad_out_of_the_wrong_shape():
    model = M.FeedForwardNetwork(3, 4, seed=0)
    with pytest.raises(ValueError, match=r"grad_out should have the shape of FFN\(x\), \(2, 3\), got \(2, 4\)"):
        model.backward(np.ones((2, 3)), np.ones((2, 4)))


@pytest.mark.parametrize("name, grad", [("gelu", M.gelu_grad), ("silu", M.silu_grad)])
def test_activation_derivatives_match_centred_differences_and_never_warn(name, grad):
    f = {"gelu": gelu, "silu": silu}[name]
    z = np.linspace(-12.0, 12.0, 97)
    numeric = (f(z + 1e-6) - f(z - 1e-6)) / 2e-6
    assert np.allclose(grad(z), numeric, rtol=1e-7, atol=1e-9)
    extremes = np.array([-np.finfo(float).max, -1e308, -745.0, -40.0, 0.0, 40.0, 745.0, 1e308, np.finfo(float).max])
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        values = grad(extremes)
    assert np.all(np.isfinite(values))
    assert values[0] == 0.0 and values[-1] == 1.0


# --- numerical_gradient ----------------------------------------------------------------------------

def test_numerical_gradient_of_a_cubic_is_3x2_plus_h2():
    x = np.array([1.0, -2.0, 0.5])
    for h in (1e-5, 1e-2):
        assert np.allclose(M.numerical_gradient(lambda v: np.sum(v**3), x, h), 3 * x**2 + h**2, rtol=1e-9, atol=1e-9)


def test_numerical_gradient_keeps_shapes_and_leaves_x_alone():
    rng = np.random.default_rng(2)
    A, W = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    W_before = W.copy()
    shapes_seen = set()

    def f(M_):
        shapes_seen.add(M_.shape)
        return float(np.sum((A @ M_) ** 2))

    grad = M.numerical_gradient(f, W)
    assert grad.shape == (4, 2) and shapes_seen == {(4, 2)}
    assert np.allclose(grad, 2 * A.T @ (A @ W), rtol=1e-7, atol=1e-8)
    assert np.array_equal(W, W_before)
    assert M.numerical_gradient(lambda v: float(v) ** 3, np.array(2.0)).shape == ()
    assert M.numerical_gradient(lambda v: float(v) ** 3, np.array(2.0)) == pytest.approx(12.0, rel=1e-8)


def test_numerical_gradient_rejects_bad_steps_and_non_scalar_functions():
    for h in (0.0, -1e-5, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="h should be a positive finite step"):
            M.numerical_gradient(np.sum, np.ones(2), h)
    with pytest.raises(ValueError, match=r"f should return a single number, got an array of shape \(2,\)"):
        M.numerical_gradient(lambda v: v * 2, np.ones(2))


def test_relative_error_is_zero_for_two_zeros_symmetric_and_at_most_one():
    a, n = np.array([0.0, 1.0, -1.0, 3.0]), np.array([0.0, 1.0, 1.0, 0.0])
    rel = M.relative_error(a, n, elementwise=True)
    assert rel.tolist() == [0.0, 0.0, 1.0, 1.0]
    assert np.array_equal(rel, M.relative_error(n, a, elementwise=True))
    assert M.relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert M.relative_error(a, n) == pytest.approx(math.sqrt(13) / (math.sqrt(11) + math.sqrt(2)), rel=1e-15)
    with pytest.raises(ValueError, match=r"same shape, got \(4,\) and \(3,\)"):
        M.relative_error(a, n[:3])


def test_a_tiny_gradient_entry_defeats_the_elementwise_error_but_not_the_norm():
    # GELU(-6.4) ≈ -4e-10: that unit's W2 gradient is far below what a step of 1e-5 can resolve in L.
    rng = np.random.default_rng(296)
    model = with_params(M.FeedForwardNetwork(4, 7, activation="gelu"), random_params(rng, 4, 7))
    x, G = rng.normal(size=4), rng.normal(size=4)
    a, n = model.backward(x, G)["W2"], M.numerical_gradients(model, x, G)["W2"]
    assert M.relative_error(a, n, elementwise=True).max() == 1.0
    assert M.relative_error(a, n) <= M.GRAD_CHECK_GOOD


# --- the module's mistakes: each one differs from the truth where the notebook tests it ------------

def test_module_mistakes_differ_from_the_reference():
    rng = np.random.default_rng(9)
    params = random_params(rng, 4, 4)  # square, so that transposed gradients can be computed too
    x, G = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    for activation in ("relu", "gelu"):
        ref = with_params(M.FeedForwardNetwork(4, 4, activation=activation), params)
        right = ref.backward(x, G)
        for mistake in mistakes.for_exercise("ffn_module_backward"):
            if mistake.key == "relu_mask_at_zero":
                continue  # it only shows at an exact zero: below
            differs = []
            for name in right:
                try:
                    wrong = mistake.compute(name, x, G, *params, activation)
                except ValueError:  # a mistake about the other activation, or an impossible shape
                    continue
                differs.append(np.shape(wrong) != np.shape(right[name]) or not np.allclose(wrong, right[name]))
            applies = not ((mistake.key == "gelu_grad_missing_density" and activation != "gelu")
                           or (mistake.key == "relu_grads_for_any_activation" and activation == "relu"))
            assert any(differs) == applies, (activation, mistake.key)
    W3 = examples.W_3
    ref = with_params(M.FeedForwardNetwork(2, 4), W3.params)
    wrong = mistakes.by_key("relu_mask_at_zero")[0].compute("b1", W3.x, np.ones(2), *W3.params, "relu")
    assert not np.allclose(wrong, ref.backward(W3.x, np.ones(2))["b1"])
    ref_init = M.FeedForwardNetwork(3, 5, seed=0)
    for mistake in mistakes.for_exercise("xavier_init", "weights"):
        assert not np.allclose(mistake.compute("W1", 3, 5, 0), ref_init.W1), mistake.key
    for mistake in mistakes.for_exercise("xavier_init", "std"):
        assert abs(mistake.compute(512, 2048) / M.xavier_std(512, 2048) - 1) > 0.1, mistake.key


def test_class_mistakes_differ_from_the_reference():
    rng = np.random.default_rng(10)
    initial = M.xavier_init(3, 5, seed=0)
    params = random_params(rng, 3, 5)
    x = rng.normal(size=(4, 3))
    class_mistakes = mistakes.for_exercise("FeedForwardNetwork", "__call__")
    for activation in ACTIVATIONS:
        right = ffn_forward(x, *params, activation)
        stale, relu_only = (m.compute(x, params, initial, activation) for m in class_mistakes[:2])
        assert not np.allclose(stale, right) and np.allclose(stale, ffn_forward(x, *initial, activation))
        assert np.allclose(relu_only, right) == (activation == "relu")
    tanh_gelu = class_mistakes[2].compute(x, params, initial, "gelu")  # 04's mistake, in the class's forward pass
    assert class_mistakes[2].key == "gelu_tanh_for_exact"
    np.testing.assert_allclose(tanh_gelu, ffn_forward(x, *params, "gelu_tanh"), rtol=1e-12)
    assert not np.allclose(tanh_gelu, ffn_forward(x, *params, "gelu"), rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match="about GELU"):
        class_mistakes[2].compute(x, params, initial, "relu")
    with pytest.raises(ValueError, match="no initial parameters"):
        class_mistakes[0].compute(x, params, None, "relu")


# --- the functions the class is assembled from -----------------------------------------------------

def test_xavier_init_is_the_class_initialisation():
    for d_model, d_ff, use_bias, seed in [(3, 5, True, 0), (4, 2, False, 9), (1, 1, True, 1)]:
        W1, b1, W2, b2 = M.xavier_init(d_model, d_ff, use_bias, seed)
        model = M.FeedForwardNetwork(d_model, d_ff, use_bias=use_bias, seed=seed)
        assert np.array_equal(W1, model.W1) and np.array_equal(W2, model.W2)
        assert W1.shape == (d_model, d_ff) and W2.shape == (d_ff, d_model)
        if use_bias:
            assert np.array_equal(b1, np.zeros(d_ff)) and np.array_equal(b2, np.zeros(d_model))
        else:
            assert b1 is None and b2 is None
    with pytest.raises(ValueError, match="use_bias should be True or False"):
        M.xavier_init(2, 3, use_bias=1)


def test_count_parameters_counts_what_is_there():
    assert M.count_parameters(*M.xavier_init(512, 2048)) == examples.W_6["transformer_base"]["per_layer"]
    assert M.count_parameters(np.ones((2, 3)), None, np.ones((3, 2)), np.ones(2)) == 14
    assert type(M.count_parameters(*M.xavier_init(1, 1))) is int
    with pytest.raises(ValueError, match="W2 should be arrays, got None"):
        M.count_parameters(np.ones((2, 3)), None, None, None)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_ffn_backward_is_the_class_backward(activation):
    rng = np.random.default_rng(11)
    params = random_params(rng, 3, 4)
    model = with_params(M.FeedForwardNetwork(3, 4, activation=activation), params)
    x, G = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3))
    grads = M.ffn_backward(x, G, *params, activation)
    for name, value in model.backward(x, G).items():
        assert np.array_equal(value, grads[name]), name
    with pytest.raises(ValueError, match="activation should be one of 'relu', 'gelu', 'silu', got 'tanh'"):
        M.ffn_backward(x, G, *params, "tanh")
