"""ffn_helpers.training, the reference of notebook 13, and every number 13 states about it.

Training trajectories differ in their last bits from one BLAS kernel, thread count or Python to
another, so what is asserted is what holds on all of them (.ci/run runs this file under each):
bounds on the loss after a number of steps, the unit that fires most for a key when it leads by a
margin, recall shares. Each of 13's catalogued mistakes is written here as a learner would write
it, and the check names it and nothing else.
"""

import numpy as np
import pytest

from ffn_helpers import checks, ffn_forward, memory, mistakes, module, training

K, V, START = training.the_task()


@pytest.fixture(scope="module")
def course_run():
    """The course's run of 13's section 6: 2000 steps at η = 1 from the task's start."""
    return training.train(START, K, V, training.LR_RUN, training.FIT_MAX_STEPS)


# ---------------------------------------------------------------- the loss, the step, the loop


def test_mse_loss_worked_example_0_875():
    """13's worked example: differences [0, 2, 0], [1, 0, 0], [0, 0, 0], [-1, 1, 0], L = 7 / (2 · 4) = 0.875,
    ∂L/∂y = (y - t) / 4; a sum, a missing ½ and a mean over entries give 3.5, 1.75 and 7/24 ≈ 0.29."""
    y = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.0, 1.0, 2.0], [2.0, 2.0, 2.0]])
    t = np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 1.0], [0.0, 1.0, 2.0], [3.0, 1.0, 2.0]])
    loss, grad = training.mse_loss(y, t)
    assert loss == 0.875 and np.array_equal(grad, (y - t) / 4) and np.array_equal(grad[0], [0.0, 0.5, 0.0])
    loss2, grad2 = training.mse_loss(np.vstack([y, y]), np.vstack([t, t]))
    assert loss2 == 0.875 and np.array_equal(grad2, np.vstack([grad, grad]) / 2)  # the same tokens twice
    assert training.mse_loss(y.reshape(2, 2, 3), t.reshape(2, 2, 3))[0] == 0.875  # N counts every leading axis
    wrong = {m.key: m.compute(y, t) for m in mistakes.for_exercise("mse_loss", "loss")}
    assert wrong["loss_summed"] == 3.5 and wrong["no_half"] == 1.75
    assert abs(wrong["averaged_over_entries"] - 7 / 24) < 1e-15 and round(7 / 24, 2) == 0.29


def test_mse_loss_gradient_is_the_numerical_one():
    rng = np.random.default_rng(3)
    y, t = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 3, 4))
    grad = training.mse_loss(y, t)[1]
    numeric = module.numerical_gradient(lambda v: training.mse_loss(v, t)[0], y)
    assert np.allclose(grad, numeric, rtol=1e-7, atol=1e-10)


def test_sgd_step_moves_against_the_gradient_and_leaves_its_inputs():
    params = {"W1": np.array([[1.0, -2.0]]), "b1": None, "W2": np.array([[1.0], [3.0]]), "b2": np.array([0.0])}
    grads = {"W1": np.array([[0.5, 1.0]]), "b1": None, "W2": np.array([[2.0], [0.0]]), "b2": np.array([-1.0]),
             "x": np.zeros((1, 1))}
    new = training.sgd_step(params, grads, 0.5)
    assert set(new) == {"W1", "b1", "W2", "b2"} and new["b1"] is None
    assert np.array_equal(new["W1"], [[0.75, -2.5]]) and np.array_equal(new["b2"], [0.5])
    assert np.array_equal(params["W1"], [[1.0, -2.0]])  # a new dict of new arrays


def _by_hand(params, x, target, lr, steps):
    """`train`'s loop written with the course's functions, step by step: (the final parameters, the losses)."""
    hand, expected = dict(params), []
    for _ in range(steps):
        current = [hand[n] for n in training.PARAMS]
        loss, grad_y = training.mse_loss(ffn_forward(x, *current), target)
        expected.append(loss)
        hand = training.sgd_step(hand, module.ffn_backward(x, grad_y, *current), lr)
    return hand, np.array(expected)


def test_train_records_each_loss_before_its_step():
    params, losses = training.train(START, K, V, 0.5, 3)
    hand, expected = _by_hand(START, K, V, 0.5, 3)
    assert losses.tolist() == expected.tolist() and losses[0] == training.loss_of(START, K, V)
    assert all(np.array_equal(params[n], hand[n]) for n in training.PARAMS)


NO_BIASES = dict(START, b1=None, b2=None)
SMALL_K, SMALL_V = training.memory_task(16, 8, 1)


@pytest.mark.parametrize(("params", "x", "target", "lr", "steps"), [
    pytest.param(START, K, V, training.LR_RUN, 60, id="the-course-run"),
    pytest.param(START, K, V, training.LR_DIVERGES, 60, id="a-step-too-large"),
    pytest.param(START, K, V, 50.0, 200, id="overflows-to-inf-and-nan"),
    pytest.param(NO_BIASES, K, V, 0.7, 40, id="no-biases"),
    pytest.param(START, K.reshape(4, 8, 8), V.reshape(4, 8, 8), 1.0, 40, id="tokens-on-two-axes"),
    pytest.param(training.initial_params(8, 8, 11), SMALL_K, SMALL_V, 1.0, 40, id="a-capacity-memory"),
    pytest.param(START, K, V, 1, 1, id="one-step"),
])
def test_train_is_its_loop_of_the_course_functions_bit_for_bit(params, x, target, lr, steps):
    """`train` checks its inputs in its first step and makes the others without the checks (training._steps): the
    same parameters and losses, to the last bit, NaN and ±inf included, as the loop of ffn_forward, mse_loss,
    ffn_backward and sgd_step."""
    with np.errstate(all="ignore"):
        trained, losses = training.train(params, x, target, lr, steps)
        hand, expected = _by_hand(params, x, target, lr, steps)
    assert np.array_equal(losses, expected, equal_nan=True)
    for n in training.PARAMS:
        assert (trained[n] is None) == (hand[n] is None), n
        assert trained[n] is None or np.array_equal(trained[n], hand[n], equal_nan=True), n
    if lr == 50.0:
        assert np.isinf(losses).any() and np.isnan(losses).any()  # the comparison covers both


def test_train_says_what_is_wrong_with_its_inputs():
    with pytest.raises(ValueError, match="lr should be a finite number"):
        training.train(START, K, V, float("nan"), 5)
    with pytest.raises(ValueError, match="same shape"):
        training.train(START, K, V[:, :4], 1.0, 5)


# ---------------------------------------------------------------- what 13 states about its runs


def test_the_course_run_memorises_the_task(course_run):
    """13, section 6: below 1e-3 after 1000 steps and below 1e-5 after 2000; the loss starts near 0.6."""
    params, losses = course_run
    assert 0.55 < losses[0] < 0.6
    assert losses[1000] < 1e-3 and training.loss_of(params, K, V) < 1e-5
    assert memory.recall(*params.values(), K, V) == 1.0


def test_the_three_learning_rates_of_section_7(course_run):
    """η = 0.1 is still above 1e-3 after 2000 steps and never rises; η = 2 climbs at its first step, ends more
    than ten times above its start, and leaves at least 48 of the 64 units off for every key."""
    slow = training.train(START, K, V, 0.1, training.FIT_MAX_STEPS)[1]
    wild_params, wild = training.train(START, K, V, training.LR_DIVERGES, training.FIT_MAX_STEPS)
    assert slow[-1] > 1e-3 and not training.rises(slow)
    assert wild[1] > wild[0] and wild.max() > 10 * wild[0] and training.rises(wild)
    off = memory.coefficients(K, wild_params["W1"], wild_params["b1"]).max(axis=0) == 0
    assert off.sum() >= 48


@pytest.mark.parametrize("seed", range(12))
def test_fits_answer_leaves_room_on_other_draws(seed):
    """fit's answer (η = 1, 2000 steps) on draws like the grader's: far below the bound, 1e-2."""
    keys, values = training.memory_task(32, 8, 500 + seed)
    params, losses = training.fit(training.initial_params(8, 64, 900 + seed), keys, values)
    assert losses.size == training.FIT_MAX_STEPS and training.loss_of(params, keys, values) < 1e-3


def test_reading_the_trained_memory(course_run):
    """13, section 8: every key sets off 8 to 32 of the 64 units, and every unit that fires does so for 3 keys or
    more; key 1's strongest unit is 47, ahead of the next by more than 0.2; no key's answer is written by one unit,
    and key 0's strongest writer fires most for it."""
    params = course_run[0]
    h = memory.coefficients(K, params["W1"], params["b1"])
    firing = (h > 0).sum(axis=1)
    keys_per_unit = (h > 0).sum(axis=0)
    assert firing.min() >= 8 and firing.max() <= 32
    assert keys_per_unit[keys_per_unit > 0].min() >= 3 and keys_per_unit.max() >= 8
    top = memory.top_memories(K[1], params["W1"], params["b1"], 2)
    assert top[0] == 47 and h[1, 47] - h[1, top[1]] > 0.2
    written = training.writers(params, K, V)
    shares = written.max(axis=1) / written.sum(axis=1)
    needed = [np.searchsorted(np.cumsum(np.sort(w)[::-1]) / w.sum(), 0.9) + 1 for w in written]
    assert shares.max() < 0.9 and min(needed) >= 2
    assert 0.6 < written.sum(axis=1).min() and written.sum(axis=1).max() < 1.4
    same = np.mean(np.argmax(written, axis=1) == np.argmax(h, axis=1))
    assert np.argmax(written[0]) == np.argmax(h[0]) == 52 and 0.25 < same < 0.75


def test_writers_add_up_to_the_output_along_the_target():
    rng = np.random.default_rng(1)
    params = training.initial_params(4, 6, 2)
    params["b2"] = rng.normal(size=4)
    x, t = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    along = np.sum(ffn_forward(x, *params.values()) * t, axis=1) / np.sum(t * t, axis=1)
    b2_share = (t @ params["b2"]) / np.sum(t * t, axis=1)
    assert np.allclose(training.writers(params, x, t).sum(axis=1) + b2_share, along, rtol=1e-12, atol=1e-12)


def test_capacity_as_section_9_states_it():
    """More pairs, a higher loss, for every width; 32 and 128 units hold 16 and 32 pairs, 8 units lose pairs at
    16 already; at 128 pairs every width loses some, 8 and 32 units most; 10's recipe loses some of 32."""
    n_pairs = (16, 32, 64, 128)
    swept = training.capacity(8, (8, 32, 128), n_pairs)
    for final, recalled in swept.values():
        assert np.all(np.diff(final) > 0) and recalled[-1] < 1.0
    for d_ff in (32, 128):
        assert swept[d_ff][1][0] == swept[d_ff][1][1] == 1.0
    assert swept[8][1][0] < 0.9 and swept[8][1][1] < 0.7
    assert swept[8][1][-1] < 1 / 3 and swept[32][1][-1] < 1 / 3
    assert memory.mean_recall(8, 32, 0.5, seeds=(0, 1)) < 0.95
    assert [training.parameter_count(8, d) for d in (8, 32, 128)] == [144, 552, 2184]


# ---------------------------------------------------------------- the catalogue, written as a learner would


def _diff(y, t):
    return np.asarray(y, float) - np.asarray(t, float)


def _tokens(y):
    return np.size(y) // np.shape(y)[-1]


LOSSES = {  # key -> a learner's (L, ∂L/∂y)
    "loss_summed": lambda y, t: (0.5 * float(np.sum(_diff(y, t) ** 2)), _diff(y, t) / _tokens(y)),
    "no_half": lambda y, t: (float(np.sum(_diff(y, t) ** 2)) / _tokens(y), 2 * _diff(y, t) / _tokens(y)),
    "averaged_over_entries": lambda y, t: (0.5 * float(np.mean(_diff(y, t) ** 2)), _diff(y, t) / np.size(y)),
    "grad_not_averaged": lambda y, t: (0.5 * float(np.sum(_diff(y, t) ** 2)) / _tokens(y), _diff(y, t)),
    "grad_sign": lambda y, t: (0.5 * float(np.sum(_diff(y, t) ** 2)) / _tokens(y), -_diff(y, t) / _tokens(y)),
}


def named(failure):
    return set(checks.named_mistakes(failure.value))


@pytest.mark.parametrize("key", LOSSES)
def test_a_learners_mse_loss_mistake_is_named(key):
    rng = np.random.default_rng(4)
    y, t = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    loss, grad = LOSSES[key](y, t)
    want_loss, want_grad = training.mse_loss(y, t)
    with pytest.raises(AssertionError) as failure:
        checks.assert_close(loss, want_loss, mistakes=mistakes.for_exercise("mse_loss", "loss"), args=(y, t))
        checks.assert_close(grad, want_grad, mistakes=mistakes.for_exercise("mse_loss", "grad"), args=(y, t))
    assert named(failure) == {key}


STEPS = {
    "update_sign": lambda p, g, lr: {n: None if p[n] is None else p[n] + lr * g[n] for n in training.PARAMS},
    "lr_ignored": lambda p, g, lr: {n: None if p[n] is None else p[n] - g[n] for n in training.PARAMS},
    "biases_not_updated": lambda p, g, lr: {n: p[n] if n.startswith("b") else p[n] - lr * g[n]
                                            for n in training.PARAMS},
}


@pytest.mark.parametrize("key", STEPS)
def test_a_learners_sgd_step_mistake_is_named(key):
    rng = np.random.default_rng(5)
    params, grads = training.initial_params(3, 4, 1), training.initial_params(3, 4, 2)
    grads["b1"], grads["b2"] = rng.normal(size=4), rng.normal(size=3)
    # Biases of zero would leave biases_not_updated's result zeros, which an answer computing nothing gives too.
    params["b1"], params["b2"] = rng.normal(size=4), rng.normal(size=3)
    got, want = STEPS[key](params, grads, 0.3), training.sgd_step(params, grads, 0.3)
    with pytest.raises(AssertionError) as failure:
        for name in training.PARAMS:
            checks.assert_close(got[name], want[name], mistakes=mistakes.for_exercise("sgd_step"),
                                args=(name, params, grads, 0.3))
    assert named(failure) == {key}


def _loop(params, x, t, lr, steps, mistake):
    """A learner's training loop, with one of the catalogued mistakes."""
    losses = []
    y = ffn_forward(x, *params.values())
    for _ in range(steps):
        if mistake != "forward_not_recomputed":
            y = ffn_forward(x, *params.values())
        loss, grad_y = training.mse_loss(y, t)
        new = training.sgd_step(params, module.ffn_backward(x, grad_y, *params.values()), lr)
        if mistake != "updated_a_copy":
            params = new
        losses.append(training.loss_of(params, x, t) if mistake == "loss_after_step" else loss)
    return params, losses


@pytest.mark.parametrize("key", ["updated_a_copy", "forward_not_recomputed", "loss_after_step"])
def test_a_learners_training_loop_mistake_is_named(key):
    x, t = K[:8], V[:8]
    got, got_losses = _loop(dict(START), x, t, 0.5, 4, key)
    want, want_losses = training.train(START, x, t, 0.5, 4)
    with pytest.raises(AssertionError) as failure:
        for name in training.PARAMS:
            checks.assert_close(got[name], want[name], mistakes=mistakes.for_exercise("train", "params"),
                                args=(name, START, x, t, 0.5, 4))
        checks.assert_close(got_losses, want_losses, mistakes=mistakes.for_exercise("train", "losses"),
                            args=(START, x, t, 0.5, 4))
    assert named(failure) == {key}


def test_the_right_loop_is_named_nothing():
    params, losses = _loop(dict(START), K[:8], V[:8], 0.5, 4, None)
    want, want_losses = training.train(START, K[:8], V[:8], 0.5, 4)
    assert np.allclose(losses, want_losses, rtol=1e-12) and all(
        np.allclose(params[n], want[n], rtol=1e-12) for n in training.PARAMS)


def test_fits_mistakes_are_told_apart_by_whether_the_loss_rises():
    """The two runs fit's catalogue computes: one climbs (the notebook's check names lr_diverges), one does not
    (too_slow); neither reaches the bound."""
    by_key = {m.key: m.compute(START, K, V) for m in mistakes.for_exercise("fit")}
    assert training.rises(by_key["lr_diverges"][1]) and not training.rises(by_key["too_slow"][1])
    for params, _ in by_key.values():
        assert training.loss_of(params, K, V) > training.FIT_LOSS_BOUND
