# %% [markdown]
# # 13 · Training the FFN, and reading what it learned
#
# Every FFN so far had its weights written by hand (10's memory), taken from a
# worked example, or drawn at random (09). Here one learns its weights. You
# bring your module from 09, check its backward pass with your own numerical
# gradient, then write the loss, one step of gradient descent and the loop, and
# train the FFN to memorise 32 key-value pairs. Then you read the trained FFN as
# 10 taught you to read a memory: which units fire for which key, and what each
# of them writes. Last, you give it more pairs than it can hold.
#
# The task: 32 keys $k_i$ and 32 values $t_i$ (the *targets*), random unit
# vectors in $d_\text{model} = 8$ dimensions, the kind of pairs 10 stored by
# hand. The FFN, with $d_\text{ff} = 64$ hidden units, maps each key to an
# output $y_i = \mathrm{FFN}(k_i)$, and training moves $W_1, b_1, W_2, b_2$
# until $y_i \approx t_i$ for every pair. How far off the outputs are is the
# loss, half the squared distance averaged over the $N$ tokens (here the keys):
#
# $$L = \frac{1}{2N} \sum_{i=1}^{N} \lVert y_i - t_i \rVert^2 .$$
#
# What you write, section by section:
#
# 1. `FeedForwardNetwork`: your class from 09, with the four functions it calls.
# 2. `numerical_gradient(f, x, h=1e-5)`: yours from 09.
# 3. `mse_loss(y, target)`: the pair $(L, \partial L/\partial y)$.
# 4. `sgd_step(params, grads, lr)`: the parameters after one step of gradient descent.
# 5. `train(params, x, target, lr, steps)`: the loop; the trained parameters and the losses.
# 6. `fit(params, x, target)`: your choice of learning rate and number of steps.
#
# The parameters travel as a dict `{"W1": ..., "b1": ..., "W2": ..., "b2": ...}`
# of float64 arrays (a bias may be `None`); $\sigma$ is ReLU throughout. Each
# exercise is worth 1 point here and 1 from the grader. (12 points.)
#
# Every exercise has hints under its answer cell: open **Hint 1** when you are
# stuck, and the next one only if you need it.
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from scipy import special

from ffn_helpers import checks, examples, ffn_forward, memory, mistakes, plots, torch_check, training, yours
from ffn_helpers import module as reference

W2_EX = examples.W_2
PARAMS = training.PARAMS  # ("W1", "b1", "W2", "b2")
KEYS, VALUES, START = training.the_task()  # 32 unit keys and values in 8 dimensions; 64 units, Xavier-normal
# 13's worked example of the loss: four tokens of three features (N = 4, L = 7/8).
Y_EX = np.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [0.0, 1.0, 2.0], [2.0, 2.0, 2.0]])
T_EX = np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 1.0], [0.0, 1.0, 2.0], [3.0, 1.0, 2.0]])


def with_params(model, params):
    """Set a model's W1, b1, W2, b2 to copies of `params` (a tuple; None stays None); return the model."""
    model.W1, model.b1, model.W2, model.b2 = (None if p is None else np.array(p, dtype=float) for p in params)
    return model


def copied(params):
    """A copy of a parameter dict, so that a learner's function cannot change the test's own."""
    return {name: None if params[name] is None else np.array(params[name], dtype=float) for name in PARAMS}


def random_params(rng, d_model, d_ff, use_bias=True):
    """A parameter dict with standard normal entries scaled like Xavier's; the biases None without use_bias."""
    W1, b1, W2, b2 = reference.xavier_init(d_model, d_ff, use_bias, seed=int(rng.integers(2**31)))
    if use_bias:
        b1, b2 = 0.1 * rng.normal(size=d_ff), 0.1 * rng.normal(size=d_model)
    return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}


def check_module(cls, params, x, G, activation="relu"):
    """Test cells' helper: the learner's class, built and given `params` (a tuple), against the reference."""
    d_model, d_ff = np.shape(params[0])
    about = f"FeedForwardNetwork({d_model}, {d_ff}, activation={activation!r}) with W1, b1, W2, b2 set"
    initial = reference.xavier_init(d_model, d_ff, params[1] is not None, 0)  # what a right __init__ draws
    model = checks.call(lambda: cls(d_model, d_ff, activation=activation, use_bias=params[1] is not None, seed=0),
                        name="FeedForwardNetwork")
    with_params(model, params)
    y = checks.call(model, x, name="FeedForwardNetwork.__call__")
    checks.assert_close(y, ffn_forward(x, *params, activation=activation), name=f"{about}: model(x)",
                        mistakes=mistakes.for_exercise("FeedForwardNetwork", "__call__"),
                        args=(x, params, initial, activation))
    grads = checks.call(model.backward, x, G, name="FeedForwardNetwork.backward")
    expected = reference.ffn_backward(x, G, *params, activation)
    if not isinstance(grads, dict):
        raise checks.wrong_result("model.backward(x, G)", "a dict with keys 'W1' 'b1' 'W2' 'b2' 'x'", grads)
    for name, want in expected.items():
        if want is None or grads.get(name) is None:
            if grads.get(name) is not want:
                raise checks.failure(f"{about}: backward's {name!r} should be {checks.describe(want)}, got "
                                     f"{checks.describe(grads.get(name))}", public=True)
            continue
        checks.assert_close(grads[name], want, name=f"{about}: model.backward(x, G)[{name!r}]",
                            mistakes=mistakes.for_exercise("FeedForwardNetwork", "backward"),
                            args=(name, x, G, *params, activation))


def pair(result, call, what):
    """A learner's result that should be a pair, unpacked, or a clear failure."""
    if not isinstance(result, tuple | list) or len(result) != 2:
        raise checks.wrong_result(call, what, result)
    return result


def same_result(a, b):
    """Whether two results agree within the checks' tolerances: arrays, numbers, None, or parameter dicts."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and all(same_result(a.get(n), b.get(n)) for n in PARAMS)
    if a is None or b is None:
        return a is None and b is None
    return np.shape(a) == np.shape(b) and checks.compare(a, b).ok


def check_params(got, expected, call):
    """Test cells' helper: a learner's parameter dict against the reference's, name by name."""
    if not isinstance(got, dict):
        raise checks.wrong_result(call, "a dict with keys 'W1' 'b1' 'W2' 'b2'", got)
    for name in PARAMS:
        if name not in got:
            raise checks.failure(f"{call} has no key {name!r} (its keys: {sorted(map(str, got))})", public=True)
        if expected[name] is None or got[name] is None:
            if got[name] is not expected[name]:
                raise checks.failure(f"{call}[{name!r}] should be {checks.describe(expected[name])}, got "
                                     f"{checks.describe(got[name])}", public=True)
            continue
        checks.assert_close(got[name], expected[name], name=f"{call}[{name!r}]")


def as_dicts(catalogue):
    """Mistakes computed one parameter at a time (args (name, *args)), as computing the whole dict (args (*args))."""
    return [m.computing(lambda *args, m=m: {name: m.compute(name, *args) for name in PARAMS}) for m in catalogue]


def in_part(part, check):
    """Run `check`; a failure it raises is marked as one of the result's `part` (checks.check_judged reads it)."""
    try:
        check()
    except AssertionError as failure:
        failure.part = part
        raise


def check_loss(fn, cases):
    """Test cells' helper: fn(y, target) must give the reference's (L, ∂L/∂y), each compared on its own, for each
    (y, target) of `cases`."""
    def judge(got, want):
        loss, grad = pair(got, "mse_loss(y, target)", "a pair (L, ∂L/∂y)")
        in_part("loss", lambda: checks.assert_close(loss, want[0], name="mse_loss(y, target)'s L"))
        in_part("grad", lambda: checks.assert_close(grad, want[1], name="mse_loss(y, target)'s ∂L/∂y"))

    runs, wanted = [], []
    for y, target in cases:
        want = training.mse_loss(y, target)
        runs.append(((y, target), lambda got, want=want: judge(got, want)))
        wanted.append(want)
    checks.check_judged(lambda y, target: checks.call(fn, y, target, name="mse_loss"), runs,
                        lambda part: mistakes.for_exercise("mse_loss", part), parts=("loss", "grad"),
                        expected=wanted, comparison={"same": same_result})


def check_step(fn, cases):
    """Test cells' helper: fn(params, grads, lr) against the reference's step, for each (params, grads, lr) of
    `cases`; fn gets copies, and grads with a key "x" as a backward pass gives it."""
    def run(params, grads, lr):
        given = copied(grads) | {"x": np.array(grads.get("x", np.ones((3, np.shape(params["W1"])[0]))), dtype=float)}
        return checks.call(fn, copied(params), given, lr, name="sgd_step")

    runs, wanted = [], []
    for params, grads, lr in cases:
        want = training.sgd_step(params, grads, lr)
        runs.append(((params, grads, lr),
                     lambda got, want=want, lr=lr: check_params(got, want, f"sgd_step(params, grads, lr={lr:g})")))
        wanted.append(want)
    checks.check_judged(run, runs, lambda part: as_dicts(mistakes.for_exercise("sgd_step")), expected=wanted,
                        comparison={"same": same_result})


def check_train(fn, cases):
    """Test cells' helper: fn(params, x, target, lr, steps) against the reference's loop, for each such tuple of
    `cases`, with the course's forward, backward, loss and step in place of the learner's, so that only the loop
    is graded here."""
    def run(params, x, target, lr, steps):
        with checks.substitute(ffn_module_forward=ffn_forward, ffn_module_backward=reference.ffn_backward,
                               mse_loss=training.mse_loss, sgd_step=training.sgd_step):
            return checks.call(fn, copied(params), x, target, lr, steps, name="train")

    def judge(got, want, call):
        trained, losses = pair(got, call, "a pair (params, losses)")
        in_part("params", lambda: check_params(trained, want[0], f"{call}'s params"))
        in_part("losses", lambda: checks.assert_close(losses, want[1], name=f"{call}'s losses"))

    runs, wanted = [], []
    for params, x, target, lr, steps in cases:
        want, call = training.train(params, x, target, lr, steps), f"train(params, x, target, lr={lr:g}, steps={steps})"
        runs.append(((params, x, target, lr, steps), lambda got, want=want, call=call: judge(got, want, call)))
        wanted.append(want)

    def catalogue(part):
        found = mistakes.for_exercise("train", part)
        return as_dicts(found) if part == "params" else found

    checks.check_judged(run, runs, catalogue, parts=("params", "losses"), expected=wanted,
                        comparison={"same": same_result})


def check_fit(fn, params, x, target, case):
    """Test cells' helper: fn(params, x, target), with the course's `train`, must leave L below the bound within
    the step limit; a run that misses names the likely reason from its losses."""
    with checks.substitute(train=training.train):
        result = checks.call(fn, copied(params), x, target, name="fit")
    trained, losses = pair(result, "fit(params, x, target)", "a pair (params, losses), as train returns")
    if not isinstance(trained, dict):
        raise checks.wrong_result("fit(...)'s params", "a dict with keys 'W1' 'b1' 'W2' 'b2'", trained)
    losses = np.asarray(losses, dtype=float).ravel()
    if losses.size > training.FIT_MAX_STEPS:
        raise checks.failure(f"fit took {losses.size} steps on {case}; at most {training.FIT_MAX_STEPS} are allowed",
                             public=True)
    try:
        final = training.loss_of(trained, x, target)
    except (KeyError, TypeError, ValueError) as exc:
        raise checks.failure(f"fit(...)'s params cannot be used as the FFN's parameters: {exc}", public=True) from None
    if not final < training.FIT_LOSS_BOUND:
        found = [m for m in mistakes.for_exercise("fit") if (m.key == "lr_diverges") == training.rises(losses)]
        raise checks.failure(f"after fit, L = {final:.3g} on {case}; it should be below {training.FIT_LOSS_BOUND:g} "
                             f"(it started at {training.loss_of(params, x, target):.3g})", found,
                             public=f"after fit, L is not below {training.FIT_LOSS_BOUND:g} on {case}")


# %% [markdown]
# ## 1. Your module, brought over
#
# Training needs a forward pass, to see how far off the outputs are, and a
# backward pass, to know which way to move each parameter. Both are yours, from
# 09: copy your answers to 09's five exercises (`xavier_init`,
# `count_parameters`, `ffn_module_forward`, `ffn_module_backward` and the class
# `FeedForwardNetwork`) into the cell below, each into its place. This notebook
# uses ReLU only; your GELU and SiLU can come along.
#
# **Forecast.** A training loop changes $W_1, b_1, W_2, b_2$ thousands of times.
# What must `model(x)` and `model.backward(x, G)` do with the parameters at
# every call, for the loop to learn anything?
#
# **Step.** Paste your code from 09.

# %% nbgrader={"grade": false, "grade_id": "FeedForwardNetwork", "locked": false, "schema_version": 3, "solution": true, "task": false}
def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases (None
    if not use_bias). All drawn from np.random.default_rng(seed). Yours, from 09."""
    ### BEGIN SOLUTION
    std = np.sqrt(2.0 / (d_model + d_ff))
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    return W1, np.zeros(d_ff), W2, np.zeros(d_model)
    ### END SOLUTION


def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts (an int). Yours, from 09."""
    ### BEGIN SOLUTION
    return sum(int(np.size(p)) for p in (W1, b1, W2, b2) if p is not None)
    ### END SOLUTION


def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model); b1, b2 may be None. Yours, from 09."""
    ### BEGIN SOLUTION
    z = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h = np.maximum(z, 0.0)
    elif activation == "gelu":
        h = z * special.ndtr(z)
    else:
        h = z * special.expit(z)
    y = h @ W2
    return y if b2 is None else y + b2
    ### END SOLUTION


def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x): {"W1", "b1", "W2", "b2", "x"}; tokens add up. Yours, from 09."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    G = np.asarray(grad_out, dtype=float)
    z = x @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h, dsigma = np.maximum(z, 0.0), (z > 0).astype(float)
    elif activation == "gelu":
        pdf = np.exp(-0.5 * np.minimum(np.abs(z), 40.0) ** 2) / np.sqrt(2.0 * np.pi)
        h, dsigma = z * special.ndtr(z), special.ndtr(z) + z * pdf
    else:
        s = special.expit(z)
        h, dsigma = z * s, s * (1.0 + z * (1.0 - s))
    dz = (G @ W2.T) * dsigma
    d_model, d_ff = W1.shape
    x2, h2 = x.reshape(-1, d_model), h.reshape(-1, d_ff)
    G2, dz2 = G.reshape(-1, d_model), dz.reshape(-1, d_ff)
    return {
        "W1": x2.T @ dz2,
        "b1": None if b1 is None else dz2.sum(axis=0),
        "W2": h2.T @ G2,
        "b2": None if b2 is None else G2.sum(axis=0),
        "x": dz @ W1.T,
    }
    ### END SOLUTION


class FeedForwardNetwork:
    """FFN(x) = σ(x W1 + b1) W2 + b2 with its own parameters W1, b1, W2, b2; x: (..., d_model). Yours, from 09."""

    def __init__(self, d_model, d_ff, activation="relu", use_bias=True, seed=None):
        """Parameters from xavier_init (biases None if not use_bias); keep the activation too."""
        ### BEGIN SOLUTION
        self.W1, self.b1, self.W2, self.b2 = xavier_init(d_model, d_ff, use_bias, seed)
        self.activation = activation
        ### END SOLUTION

    def num_parameters(self):
        """How many numbers training adjusts (an int)."""
        ### BEGIN SOLUTION
        return count_parameters(self.W1, self.b1, self.W2, self.b2)
        ### END SOLUTION

    def __call__(self, x):
        """FFN(x) with the current W1, b1, W2, b2."""
        ### BEGIN SOLUTION
        return ffn_module_forward(x, self.W1, self.b1, self.W2, self.b2, self.activation)
        ### END SOLUTION

    def backward(self, x, grad_out):
        """Gradients of L = Σ grad_out ⊙ FFN(x) with the current parameters: keys "W1" "b1" "W2" "b2" "x"."""
        ### BEGIN SOLUTION
        return ffn_module_backward(x, grad_out, self.W1, self.b1, self.W2, self.b2, self.activation)
        ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for FeedForwardNetwork</summary>
#
# Nothing here is new: open your own `09_ffn_module.ipynb` and copy the body of
# each of its five answers into the same place here. If 09 is not finished,
# finish it there first: its checks say more about each part than this one does.
#
# <details><summary>Hint 2 of 2 for FeedForwardNetwork</summary>
#
# The check builds `FeedForwardNetwork(3, 4)`, then sets `model.W1`, `model.b1`,
# `model.W2`, `model.b2` to W-2's values before it calls `model(x)` and
# `model.backward(x, G)`: each method must read the attributes at the moment it
# is called, not arrays kept aside in `__init__`.
#
# </details>
# </details>

# %% [markdown]
# **Why.** Each method must read `self.W1` and the others when it is called:
# the loop replaces them after every step, and a method that kept its own copy
# would go on computing with the first ones.
#
# **Verify.** W-2's network, its parameters set on your model: the output and
# the five gradients for two tokens. (1 point here, 1 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_FeedForwardNetwork", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x_two, G_two = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]]), np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
check_module(FeedForwardNetwork, W2_EX.params, x_two, G_two)
checks.ok("your module gives W-2's output and gradients.")

# %% [markdown]
# The grader also checks (1 point): random weights with $d_\text{model} \ne
# d_\text{ff}$, batches of shape $(b, s, d_\text{model})$, a model without
# biases, and a GELU model.

# %% nbgrader={"grade": true, "grade_id": "test_FeedForwardNetwork_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("13_training", "test_FeedForwardNetwork_hidden")
for d_model, d_ff, use_bias, activation in [(5, 2, True, "relu"), (2, 7, False, "relu"), (4, 6, True, "gelu")]:
    params = random_params(rng, d_model, d_ff, use_bias)
    shape = (2, 3, d_model)
    check_module(FeedForwardNetwork, tuple(params[name] for name in PARAMS), rng.normal(size=shape),
                 rng.normal(size=shape), activation)
checks.ok("your module is right for every size, batch shape, bias option and activation.")
### END HIDDEN TESTS

# %% [markdown]
# ## 2. Your numerical gradient, brought over
#
# The check of a backward pass is the centred difference of 09:
#
# $$\frac{\partial f}{\partial x_i} \approx \frac{f(x + h\,e_i) - f(x - h\,e_i)}{2h}.$$
#
# **Forecast.** Your `numerical_gradient` perturbs one entry at a time. How many
# times does it call `f` for the 64 × 8 matrix $W_2$ of this notebook's FFN?
#
# **Step.** Paste your `numerical_gradient` from 09.

# %% nbgrader={"grade": false, "grade_id": "numerical_gradient", "locked": false, "schema_version": 3, "solution": true, "task": false}
def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x. Yours, from 09.

    f: maps an array shaped like x to a number. Returns an array shaped like x; x is left unchanged.
    """
    ### BEGIN SOLUTION
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        old = x[index]
        x[index] = old + h
        f_plus = f(x)
        x[index] = old - h
        f_minus = f(x)
        x[index] = old
        grad[index] = (f_plus - f_minus) / (2.0 * h)
    return grad
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for numerical_gradient</summary>
#
# This is your answer to 09's section 6: copy it over as it is.
#
# <details><summary>Hint 2 of 2 for numerical_gradient</summary>
#
# If you are writing it afresh: make your own float copy of `x`, and visit every
# index of it (`np.ndindex` of the copy's shape gives them all, whatever the
# shape). At each one, set the entry to old + h, call `f`, set it to old - h,
# call `f` again, put the old value back, and store the difference of the two
# calls over 2h.
#
# </details>
# </details>

# %% [markdown]
# **Why.** Two calls per entry: $2 \times 64 \times 8 = 1024$ forward passes for
# $W_2$ alone. That is why a numerical gradient checks a backward pass on a small
# example and never replaces it in training.
#
# **Verify.** $f(x) = \sum_i x_i^3$ at $x = [1, -2, 0.5]$, against $3x^2$.
# (1 point here, 1 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_numerical_gradient", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x = np.array([1.0, -2.0, 0.5])
checks.check(numerical_gradient, (lambda v: np.sum(v**3), x), 3 * x**2, rtol=1e-6, atol=1e-8,
             mistakes=mistakes.for_exercise("numerical_gradient"))
checks.ok("numerical_gradient gives 3x² for Σ x³.")

# %% [markdown]
# The grader also checks (1 point): a matrix argument, the step `h` you are
# given, and a network's loss as `f`, against the reference `numerical_gradient`.

# %% nbgrader={"grade": true, "grade_id": "test_numerical_gradient_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("13_training", "test_numerical_gradient_hidden")
A = rng.normal(size=(3, 4))


def f_matrix(M):
    return float(np.sum((A @ M) ** 2))


W = rng.normal(size=(4, 2))
checks.check(numerical_gradient, (f_matrix, W), 2 * A.T @ (A @ W), rtol=1e-6, atol=1e-8,
             mistakes=mistakes.for_exercise("numerical_gradient"))
v = rng.normal(size=3)
for h in (1e-2, 1e-3):
    checks.check(numerical_gradient, (lambda u: float(np.sum(np.exp(u))), v, h),
                 reference.numerical_gradient(lambda u: float(np.sum(np.exp(u))), v, h), rtol=1e-8, atol=1e-10,
                 mistakes=mistakes.for_exercise("numerical_gradient"))
G = np.array([1.0, -2.0, 0.5])
checks.check(numerical_gradient, (lambda x_: float(np.sum(G * ffn_forward(x_, *W2_EX.params))), W2_EX.x),
             reference.ffn_backward(W2_EX.x, G, *W2_EX.params)["x"], rtol=1e-6, atol=1e-8,
             mistakes=mistakes.for_exercise("numerical_gradient"))
checks.ok("numerical_gradient works for any shape and step.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3. Your backward pass, checked with your numerical gradient
#
# Before you train with a gradient, check it. The check of 09, section 7, now
# runs your own two functions against each other: your `model.backward(x, G)`
# on one side, your `numerical_gradient` of $\sum G \odot \mathrm{model}(x)$ on
# the other, parameter by parameter, with the relative error
# $\lvert a - n \rvert / (\lvert a \rvert + \lvert n \rvert)$ of 09.
#
# **Forecast.** If your backward pass passed its checks in section 1, what
# relative errors do you expect here? And if your `numerical_gradient` divided by
# $h$ instead of $2h$?
#
# **Step.** Your two functions on W-2's network with two tokens. (Until both
# are written, the cell says which one is missing.)

# %%
x_check, G_check = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]]), np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
with yours.attempt("The gradient check of your module"):
    model_check = with_params(FeedForwardNetwork(3, 4), W2_EX.params)
    at = {"W1": model_check.W1, "b1": model_check.b1, "W2": model_check.W2, "b2": model_check.b2, "x": x_check}
    print("your backward against your numerical gradient, W-2 with two tokens:")
    yours.print_check(yours.gradient_check(model_check.backward(x_check, G_check),
                                           yours.model_loss_at(model_check, x_check, G_check), numerical_gradient, at))

# %% [markdown]
# **Why.** Two right functions agree to about $10^{-10}$ or better: the
# centred difference is off by terms of order $h^2$ and by rounding, nothing
# more. A numerical gradient that divides by $h$ comes out twice as large, and
# every parameter then reads as WRONG: the check cannot tell which of the two
# functions is wrong, only that they disagree. That is why each was checked
# on its own first, in sections 1 and 2.
#
# **Verify.** The course's two functions, the same check: below $10^{-10}$ for
# every parameter. (Not graded: a reference point for your table above.)

# %%
reference_net = with_params(reference.FeedForwardNetwork(3, 4), W2_EX.params)
reference_errors = reference.gradient_check(reference_net, x_check, G_check)
yours.print_check(reference_errors, "the course's backward pass")
assert max(reference_errors.values()) < 1e-10
print("The course's backward pass and numerical gradient agree to better than 1e-10 on W-2.")

# %% [markdown]
# ## 4. The loss and its gradient
#
# With $N$ tokens, outputs $y$ and targets $t$, both of shape
# $(N, d_\text{model})$ (or any leading axes, all of them counted in $N$):
#
# $$L = \frac{1}{2N} \sum_{i} \lVert y_i - t_i \rVert^2,
# \qquad \frac{\partial L}{\partial y} = \frac{y - t}{N}.$$
#
# The gradient has the shape of $y$: it is the `grad_out` your backward pass
# takes. The $\frac12$ is there so that the 2 of the square's derivative cancels.
#
# **Forecast.** For the four tokens (rows) of three features
#
# $$y = \begin{bmatrix} 1 & 2 & 0 \\ 3 & 4 & 1 \\ 0 & 1 & 2 \\ 2 & 2 & 2 \end{bmatrix},
# \quad t = \begin{bmatrix} 1 & 0 & 0 \\ 2 & 4 & 1 \\ 0 & 1 & 2 \\ 3 & 1 & 2 \end{bmatrix},$$
#
# what are $L$ and $\partial L/\partial y$? And for the same four tokens given
# twice, a batch of eight?
#
# **Step.** The course's `training.mse_loss`, on both batches.

# %%
loss_ex, grad_ex = training.mse_loss(Y_EX, T_EX)
loss_twice, grad_twice = training.mse_loss(np.vstack([Y_EX, Y_EX]), np.vstack([T_EX, T_EX]))
print(f"four tokens:  L = {loss_ex}, ∂L/∂y =\n{grad_ex}")
print(f"eight tokens: L = {loss_twice}, ∂L/∂y, first four rows =\n{grad_twice[:4]}")

# %% [markdown]
# **Why.** The differences $y_i - t_i$ are $[0, 2, 0]$, $[1, 0, 0]$, $[0, 0, 0]$
# and $[-1, 1, 0]$, of squared lengths 4, 1, 0 and 2, so
# $L = \frac{1}{2 \cdot 4}(4 + 1 + 0 + 2) = 0.875$, and $\partial L/\partial y$ is
# the differences divided by 4: its first row is $[0, 0.5, 0]$.
# The same tokens twice give the same $L$, and a gradient half as large per
# token: it is shared among twice as many. (With $N = 4$ and three features,
# each slip of a factor gives another number: the sum instead of the mean
# gives 3.5, a missing $\frac12$ gives 1.75, a mean over all 12 entries 0.29.) Because the loss is a mean, its size
# and its gradient's do not grow with the batch, and one learning rate suits
# any batch size; a gradient left as the sum $y - t$ would grow with $N$.
#
# **Step.** Write `mse_loss(y, target)`: return the pair $(L, \partial L/\partial
# y)$, $L$ a float, for `y` and `target` of shape $(\dots, d_\text{model})$;
# $N$ is the number of tokens, the product of every axis but the last.

# %% nbgrader={"grade": false, "grade_id": "mse_loss", "locked": false, "schema_version": 3, "solution": true, "task": false}
def mse_loss(y, target):
    """(L, ∂L/∂y) for L = ½ · (1/N) Σ_tokens ‖y - target‖²; y, target: (..., d_model), N tokens."""
    ### BEGIN SOLUTION
    y = np.asarray(y, dtype=float)
    diff = y - np.asarray(target, dtype=float)
    n_tokens = diff.size // diff.shape[-1]
    return 0.5 * float(np.sum(diff**2)) / n_tokens, diff / n_tokens
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for mse_loss</summary>
#
# Everything comes from one array, the difference $y - t$: the loss squares and
# adds it up, the gradient is that same difference, scaled. Both divide by the
# number of tokens $N$, not by the number of entries.
#
# <details><summary>Hint 2 of 3 for mse_loss</summary>
#
# $N$ counts tokens whatever the leading axes are: for `y` of shape
# $(b, s, d_\text{model})$ it is $b \cdot s$, which is the array's size over the
# length of its last axis. Check yours on the worked example above: $N = 4$,
# $L = 0.875$.
#
# <details><summary>Hint 3 of 3 for mse_loss</summary>
#
# With `d` the difference: $L$ is half the sum of `d` squared (over every
# entry), divided by $N$, turned into a Python float; $\partial L / \partial y$
# is `d` divided by $N$, an array shaped like `y`. Return them as a tuple, loss
# first.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The worked example, and the same four tokens as a batch of shape
# $(2, 2, 3)$. (1 point here, 1 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_mse_loss", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_loss(mse_loss, [(Y_EX, T_EX), (Y_EX.reshape(2, 2, 3), T_EX.reshape(2, 2, 3))])
checks.ok("mse_loss gives L = 0.875 and ∂L/∂y = (y - t)/4 for the worked example.")

# %% [markdown]
# The grader also checks (1 point): random outputs and targets of shapes
# $(d_\text{model},)$ (one token), $(n, d_\text{model})$ and $(b, s,
# d_\text{model})$, and an output equal to its target ($L = 0$).

# %% nbgrader={"grade": true, "grade_id": "test_mse_loss_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("13_training", "test_mse_loss_hidden")
cases = [(rng.normal(size=shape), rng.normal(size=shape)) for shape in [(5,), (7, 3), (2, 4, 6)]]
same = rng.normal(size=(4, 3))
check_loss(mse_loss, [*cases, (same, same.copy())])
checks.ok("mse_loss is right for every batch shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. One step downhill
#
# The gradient points in the direction in which $L$ grows fastest. A step of
# **gradient descent** moves every parameter a little the other way:
#
# $$W \leftarrow W - \eta\, \frac{\partial L}{\partial W},$$
#
# with the **learning rate** $\eta$ (`lr`) setting how far. For a small enough
# $\eta$ the loss goes down: to first order it changes by
# $-\eta \lVert \partial L / \partial W \rVert^2$ summed over the parameters, never positive.
#
# **Forecast.** Take the task's starting parameters and one step with $\eta = 1$.
# Does the loss go down? And with the sign of the step flipped?
#
# **Step.** The course's functions, one step each way.

# %%
y_start = ffn_forward(KEYS, *START.values())
loss_start, grad_y = training.mse_loss(y_start, VALUES)
grads_start = reference.ffn_backward(KEYS, grad_y, *START.values())
downhill = training.sgd_step(START, grads_start, 1.0)
uphill = training.sgd_step(START, grads_start, -1.0)
loss_down, loss_up = training.loss_of(downhill, KEYS, VALUES), training.loss_of(uphill, KEYS, VALUES)
print(f"L at the start:              {loss_start:.4f}")
print(f"after one step downhill:     {loss_down:.4f}")
print(f"after one step the wrong way: {loss_up:.4f}")

# %% [markdown]
# **Why.** Downhill the loss falls; the same step with its sign flipped makes
# it climb, here by far more than the other step lowered it. A sign slip in the update does not crash anything: the loss
# just grows, step after step.
#
# **Verify.**

# %%
assert loss_down < loss_start < loss_up
print("One step against the gradient lowers L; one along it raises L.")

# %% [markdown]
# **Step.** Write `sgd_step(params, grads, lr)`: return a **new** dict with
# `params[name] - lr * grads[name]` for each of `"W1" "b1" "W2" "b2"`, where a
# parameter that is `None` (a missing bias) stays `None`. `grads` is what a
# backward pass returns, so it may hold more keys (`"x"`): use only the four.

# %% nbgrader={"grade": false, "grade_id": "sgd_step", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sgd_step(params, grads, lr):
    """New parameters {"W1", "b1", "W2", "b2"}: each p - lr · grads[name]; None stays None."""
    ### BEGIN SOLUTION
    new = {}
    for name in ("W1", "b1", "W2", "b2"):
        new[name] = None if params[name] is None else params[name] - lr * grads[name]
    return new
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for sgd_step</summary>
#
# Each parameter moves against its own gradient, by `lr` times it: the four
# names are handled alike, and the result is a new dict with the same four keys.
#
# <details><summary>Hint 2 of 2 for sgd_step</summary>
#
# Go through the names `"W1"`, `"b1"`, `"W2"`, `"b2"` (not through `grads`,
# which also has `"x"`). For each, if the parameter is `None`, store `None`;
# otherwise store the parameter minus `lr` times the gradient of that name.
# Check the sign: minus.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** A step with $\eta = 0.1$ on a small $1 \to 2 \to 1$ network, and
# the same step without biases. (1 point here, 1 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_sgd_step", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
tiny = {"W1": np.array([[1.0, -2.0]]), "b1": np.array([0.5, 0.0]), "W2": np.array([[1.0], [3.0]]),
        "b2": np.array([0.0])}
tiny_grads = {"W1": np.array([[0.5, 1.0]]), "b1": np.array([1.0, -2.0]), "W2": np.array([[2.0], [0.0]]),
              "b2": np.array([-1.0]), "x": np.array([[0.25]])}
no_biases = {"b1": None, "b2": None}
check_step(sgd_step, [(tiny, tiny_grads, 0.1), (tiny | no_biases, tiny_grads | no_biases, 0.1)])
checks.ok("sgd_step moves each parameter by -lr times its gradient.")

# %% [markdown]
# The grader also checks (1 point): random parameters and gradients of the
# task's sizes, learning rates from 0.01 to 3, and an integer learning rate.

# %% nbgrader={"grade": true, "grade_id": "test_sgd_step_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("13_training", "test_sgd_step_hidden")
check_step(sgd_step, [(random_params(rng, 8, 16), random_params(rng, 8, 16), lr) for lr in (0.01, 0.5, 3.0, 2)])
checks.ok("sgd_step is right for every size and learning rate.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. The training loop
#
# One step of training is four things, always in this order:
#
# 1. the forward pass with the parameters as they are now: $y = \mathrm{FFN}(x)$;
# 2. the loss and its gradient: $L, \partial L/\partial y$ (`mse_loss`);
# 3. the backward pass with that gradient as `grad_out`: $\partial L / \partial W_1, \dots$;
# 4. the step: new parameters (`sgd_step`).
#
# The loop repeats them and records $L$ at each step, **before** the update, so
# that `losses[0]` is where training starts.
#
# **Forecast.** In the loop, what goes wrong if the forward pass runs once,
# before the loop, instead of at every step? What if the loop calls
# `sgd_step(params, grads, lr)` but does not keep what it returns?
#
# **Step.** The course's loop, 2000 steps with $\eta = 1$ on the task.

# %%
trained, losses_run = training.train(START, KEYS, VALUES, training.LR_RUN, training.FIT_MAX_STEPS)
for step in (0, 1, 10, 100, 1000, 1999):
    print(f"step {step:4d}: L = {losses_run[step]:.3g}")
print(f"after the last step: L = {training.loss_of(trained, KEYS, VALUES):.3g}")

# %% [markdown]
# **Why.** The loss falls by more than four orders of magnitude, unevenly: fast
# at first, then in bursts, with small bumps on the way. A loop that computes
# $y$ once keeps using the first step's outputs: its recorded loss never moves,
# and its gradient keeps pointing the way the first step wanted. A loop that
# drops what `sgd_step` returns never changes the parameters at all. Neither
# raises an error; the flat loss curve is the only sign.
#
# **Verify.** Below $10^{-3}$ after 1000 steps, below $10^{-5}$ after 2000.

# %%
assert losses_run[1000] < 1e-3 and training.loss_of(trained, KEYS, VALUES) < 1e-5 < losses_run[0]
print("The course's loop memorises the 32 pairs.")

# %% [markdown]
# **Step.** Write `train(params, x, target, lr, steps)`: run `steps` steps of
# the loop above from `params`, with your `ffn_module_forward`,
# `ffn_module_backward` (ReLU), `mse_loss` and `sgd_step`, and return the pair
# `(params, losses)`: the parameters after the last step, and the `steps` losses,
# each recorded before its step.
#
# **How this is graded.** `train` is graded on its own: its checks run it with
# the course's four functions under your four names (`checks.substitute`, as in
# 09's section 5), so call them by these names.

# %% nbgrader={"grade": false, "grade_id": "train", "locked": false, "schema_version": 3, "solution": true, "task": false}
def train(params, x, target, lr, steps):
    """`steps` steps of gradient descent on L from params: (the final params, the losses, each before its step)."""
    ### BEGIN SOLUTION
    losses = []
    for _ in range(steps):
        y = ffn_module_forward(x, params["W1"], params["b1"], params["W2"], params["b2"])
        loss, grad_y = mse_loss(y, target)
        grads = ffn_module_backward(x, grad_y, params["W1"], params["b1"], params["W2"], params["b2"])
        params = sgd_step(params, grads, lr)
        losses.append(loss)
    return params, np.array(losses)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for train</summary>
#
# One pass of the loop is the four numbered steps above, each a call of one of
# your functions; the output of each is the input of the next. Keep a list of
# the losses and return it with the parameters at the end.
#
# <details><summary>Hint 2 of 3 for train</summary>
#
# Inside the loop, the forward pass and the backward pass both take the
# parameters one by one: `params["W1"]`, `params["b1"]`, `params["W2"]`,
# `params["b2"]`. The backward pass takes the gradient that `mse_loss` gave as
# its `grad_out`, and `sgd_step` takes the dict the backward pass returns.
#
# <details><summary>Hint 3 of 3 for train</summary>
#
# Two things make a loop learn: the forward pass runs inside the loop, with the
# current parameters, and the name `params` is bound to what `sgd_step` returns,
# so that the next pass uses it. Append each loss before that assignment; after
# the loop, return `params` and the losses (as a list or an array).
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-2's network trained for 5 steps on two tokens, with
# $\eta = 0.1$. (1 point here, 1 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_train", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
w2_params = dict(zip(PARAMS, W2_EX.params, strict=True))
x_two = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]])
check_train(train, [(w2_params, x_two, np.array([[0.0, 1.0, 0.0], [1.0, 0.0, -1.0]]), 0.1, 5)])
checks.ok("train runs the loop: forward, loss, backward, step, with the losses before each step.")

# %% [markdown]
# The grader also checks (1 point): a network of the task's sizes for 20
# steps, batches of shape $(b, s, d_\text{model})$, a network without biases,
# and a single step.

# %% nbgrader={"grade": true, "grade_id": "test_train_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("13_training", "test_train_hidden")
check_train(train, [
    (random_params(rng, 8, 16), rng.normal(size=(12, 8)), rng.normal(size=(12, 8)), 0.5, 20),
    (random_params(rng, 3, 5), rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3, 3)), 0.2, 4),
    (random_params(rng, 4, 6, use_bias=False), rng.normal(size=(5, 4)), rng.normal(size=(5, 4)), 0.3, 3),
    (random_params(rng, 2, 3), rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), 1.0, 1),
])
checks.ok("train is right for every size, batch shape and bias option.")
### END HIDDEN TESTS

# %% [markdown]
# ## 7. The learning rate
#
# **Forecast.** The run above used $\eta = 1$. What happens with $\eta = 0.1$,
# ten times smaller, in the same 2000 steps? And with $\eta = 2$?
#
# **Step.** Three runs of the course's loop from the same start.

# %%
ended, runs = {}, {}
for lr in (0.1, training.LR_RUN, training.LR_DIVERGES):
    ended[lr], runs[f"η = {lr:g}"] = training.train(START, KEYS, VALUES, lr, training.FIT_MAX_STEPS)
for (label, losses), params in zip(runs.items(), ended.values(), strict=True):
    off = int((memory.coefficients(KEYS, params["W1"], params["b1"]).max(axis=0) == 0).sum())
    print(f"{label:>7}: L from {losses[0]:.3g} to {losses[-1]:.3g}, highest {losses.max():.3g}; "
          f"{off} of 64 units fire for no key")
plots.loss_curves(runs, title="Training the memory with three learning rates", xlabel="step")

# %% [markdown]
# *Figure: the loss of the 32-pair memory over 2000 steps of gradient descent
# from the same start, for three learning rates, on a log scale.*
#
# **Why.** A small step is safe but slow: after 2000 steps at $\eta = 0.1$ the
# loss is still above $10^{-3}$. At $\eta = 2$ the first step already
# overshoots: the loss jumps above where it started and stays high, with almost
# every unit switched off for good by the jumps (its ReLU input pushed below 0
# for every key, so it gets no gradient again). Too large a learning rate does not
# learn slowly; it does not learn. The usable range is found by trying:
# halve the rate until the loss falls, then see how large it can be.
#
# **Verify.**

# %%
slow, good, wild = runs.values()
assert slow[-1] > 1e-3 and good[-1] < 1e-5 and wild.max() > 10 * wild[0] and training.rises(wild)
assert not training.rises(slow)
assert (memory.coefficients(KEYS, ended[training.LR_DIVERGES]["W1"], ended[training.LR_DIVERGES]["b1"]).max(axis=0)
        == 0).sum() >= 48  # at least three quarters of the units are off for every key
print("η = 0.1 is slow, η = 1 memorises, η = 2 climbs above its start.")

# %% [markdown]
# **Step.** Write `fit(params, x, target)`: choose a learning rate and a number
# of steps (at most 2000), call your `train` with them, and return what it
# returns. The check runs it on the task, and on two other draws of 32 random
# pairs with other starting weights of the same sizes: after `fit`, $L$ must be
# below $10^{-2}$ on each. (The loss starts near 0.6.)
#
# **How this is graded.** `fit` is graded on its own: the checks run it with the
# course's `train` in place of yours.

# %% nbgrader={"grade": false, "grade_id": "fit", "locked": false, "schema_version": 3, "solution": true, "task": false}
def fit(params, x, target):
    """Your training run: train(params, x, target, lr, steps) with your lr and steps (at most 2000)."""
    ### BEGIN SOLUTION
    return train(params, x, target, 1.0, 2000)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for fit</summary>
#
# The three runs above tell you most of it: one rate was too slow for the bound,
# one too large to learn at all. Your `fit` is one line: a call of `train` with
# the numbers you chose.
#
# <details><summary>Hint 2 of 2 for fit</summary>
#
# Use the whole budget of steps: 2000. For the rate, somewhere between the slow
# run's and the one that climbed: try a few values in a scratch cell with
# `training.train(START, KEYS, VALUES, lr, 2000)` and look at the last loss and
# at `training.rises(losses)`. Leave some room on both sides: the check also
# uses two other draws.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** The task's 32 pairs from the task's start. (1 point here, 1 from
# the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_fit", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_fit(fit, START, KEYS, VALUES, "the task")
checks.ok("fit memorises the task's 32 pairs to L < 0.01.")

# %% [markdown]
# The grader also checks (1 point): the same with two other draws of 32
# pairs and other starting weights.

# %% nbgrader={"grade": true, "grade_id": "test_fit_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
for draw in (1, 2):
    keys_draw, values_draw = training.memory_task(32, 8, checks.hidden_seed("13_training", "test_fit_hidden", "task", draw))
    start_draw = training.initial_params(8, 64, checks.hidden_seed("13_training", "test_fit_hidden", "init", draw))
    check_fit(fit, start_draw, keys_draw, values_draw, f"another draw of 32 pairs (number {draw})")
checks.ok("fit memorises other draws of 32 pairs too.")
### END HIDDEN TESTS

# %% [markdown]
# ### Your run
#
# **Step.** Your `fit`, with your `train`, `mse_loss`, `sgd_step` and module
# all your own this time, on the task, next to the course's run. (Until they
# are written, the cell says what is missing.)

# %%
with yours.attempt("Your training run"):
    your_params, your_losses = fit(training.params_of(*START.values()), KEYS, VALUES)
    your_losses = np.asarray(your_losses, dtype=float)
    print(f"your run: {your_losses.size} steps, L from {your_losses[0]:.3g} to "
          f"{training.loss_of(your_params, KEYS, VALUES):.3g} after the last step")
    display(plots.loss_curves({"your run": your_losses, "the course's (η = 1)": losses_run},
                              title="Your training run and the course's", xlabel="step"))

# %% [markdown]
# *Figure (once your functions are written): your loss curve and the course's
# over the steps of training, on a log scale.*
#
# With your own functions, your curve may differ from the course's in its last
# digits (the order of the sums), and far more where your learning rate
# differs; what matters is where it ends.
#
# ## 8. Reading what it learned
#
# Notebook 10 read an FFN unit by unit: unit $j$ has a key, column $j$ of $W_1$,
# and a value, row $j$ of $W_2$; for an input $x$ it fires with coefficient
# $h_j = \mathrm{ReLU}(x \cdot k_j + b_{1,j})$ and adds $h_j v_j$ to the
# output. 10's memory, written by hand, gave each pair one unit of its own.
# Training was told nothing of the kind.
#
# **Forecast.** In the trained memory (the course's run of section 6), how many
# of the 64 units fire for one key? Is there one unit per key?
#
# **Step.** The coefficients $h_j$ of every unit for every key, and what
# `memory.top_memories` (your exercise in 10) says about keys 0 and 1.

# %%
h_trained = memory.coefficients(KEYS, trained["W1"], trained["b1"])  # (32 keys, 64 units)
firing = (h_trained > 0).sum(axis=1)
print(f"units that fire for a key: from {firing.min()} to {firing.max()} of 64 (median {np.median(firing):g})")
print(f"units that fire for no key at all: {int((h_trained.max(axis=0) == 0).sum())}")
for key in (0, 1):
    top = memory.top_memories(KEYS[key], trained["W1"], trained["b1"], 3)
    print(f"key {key}: the strongest units are {top.tolist()}, with h = {np.round(h_trained[key, top], 3).tolist()}")


def draw_coefficients(fig):
    ax = fig.subplots()
    image = ax.imshow(h_trained, cmap="cividis", aspect="auto", interpolation="nearest")
    ax.set_xlabel("hidden unit j")
    ax.set_ylabel("key i")
    ax.set_title("How strongly each unit fires for each key, after training")
    fig.colorbar(image, ax=ax, label="h_ij = ReLU(k_i · w_j + b1_j)")


plots.custom_figure(draw_coefficients, size=(8.0, 4.6), alt=(
    f"Heat map: how strongly each of the 64 hidden units (columns) fires for each of the 32 keys (rows) after "
    f"training; dark is 0 (the unit is off), light is strong. Between {firing.min()} and {firing.max()} units fire "
    f"for each key, and {int((h_trained.max(axis=0) == 0).sum())} units fire for none; the largest coefficient is "
    f"{plots.fmt(h_trained.max())}."))

# %% [markdown]
# *Figure: the coefficient $h_{ij}$ of each hidden unit (columns) for each key
# (rows) in the trained memory; dark means the unit is off for that key.*
#
# **Why.** A key sets off many units, between a sixth and almost half of them,
# and every unit that fires at all fires for three keys or more. Nothing asked the
# training for one unit per pair, and it found none: each unit is shared by a
# group of keys, and each key by a group of units. The ranking still reads as
# in 10: for key 1, one unit stands out clearly ahead of the next.
#
# **Verify.**

# %%
assert 8 <= firing.min() and firing.max() <= 32  # an eighth to a half of the 64 units, for every key
keys_per_unit = (h_trained > 0).sum(axis=0)
assert keys_per_unit[keys_per_unit > 0].min() >= 3 and keys_per_unit.max() >= 8  # shared: 3 keys or more each
top_key1 = memory.top_memories(KEYS[1], trained["W1"], trained["b1"], 2)
assert top_key1[0] == 47 and h_trained[1, 47] - h_trained[1, top_key1[1]] > 0.2
print("Many units fire for each key; key 1's strongest unit, 47, leads the next by more than 0.2.")

# %% [markdown]
# ### What each unit writes
#
# Unit $j$ adds $h_{ij} v_j$ to key $i$'s output. The part of it that points
# along the key's own target, $h_{ij}\, (v_j \cdot t_i) / \lVert t_i \rVert^2$,
# says how much of the answer that unit writes (`training.writers`); summed over
# the units, with $b_2$'s share, it is about 1 once $y_i \approx t_i$.
#
# **Forecast.** For key 0, does the unit that fires most also write most of
# the answer? How many units does it take to write 90 % of it?
#
# **Step.**

# %%
written = training.writers(trained, KEYS, VALUES)  # (32, 64): unit j's share of key i's answer
order = np.argsort(-written[0])
print("key 0: the units writing most along its target, and their shares:")
for j in order[:5]:
    print(f"  unit {j:2d}: h = {h_trained[0, j]:.3f}, share {written[0, j]:+.3f}")
strongest_share = written.max(axis=1) / written.sum(axis=1)
needed = np.array([np.searchsorted(np.cumsum(np.sort(w)[::-1]) / w.sum(), 0.9) + 1 for w in written])
print(f"the strongest writer's part of each key's answer: from {strongest_share.min():.0%} to "
      f"{strongest_share.max():.0%}")
print(f"units needed for 90 % of a key's answer: from {needed.min()} to {needed.max()}")
print(f"units writing against a key's target: from {(written < 0).sum(axis=1).min()} to "
      f"{(written < 0).sum(axis=1).max()} per key")
same_unit = np.mean(np.argmax(written, axis=1) == np.argmax(h_trained, axis=1))
print(f"keys whose strongest writer is also the unit that fires most: {same_unit:.0%}")

# %% [markdown]
# **Why.** No key's answer comes from one unit: the strongest writer gives
# less than three quarters of it, often far less, and a handful of units
# share the rest, while a few others write against the target and are
# outweighed. For key 0 the unit that fires most also writes most, but for
# only about half of the keys is that so: a unit can fire hard and have a value
# that points elsewhere. So the
# trained FFN is a key-value memory in 10's sense, read unit by unit, but its
# memories are shared and overlapping, as Geva et al. found in trained
# transformers, where a prediction is built from many memories at once.
#
# **Verify.**

# %%
assert strongest_share.max() < 0.9 and needed.min() >= 2  # no key is answered by one unit
assert 0.6 < written.sum(axis=1).min() and written.sum(axis=1).max() < 1.4
assert np.argmax(written[0]) == np.argmax(h_trained[0]) == 52 and 0.25 < same_unit < 0.75
print("Every key's answer is written by several units.")

# %% [markdown]
# ## 9. More pairs than it can hold
#
# A memory of $d_\text{ff}$ units adjusts $2 \cdot 8 \cdot d_\text{ff} +
# d_\text{ff} + 8$ numbers (for $d_\text{ff} = 8, 32, 128$: 144, 552 and
# 2184), and $n$ pairs in 8 dimensions ask it to get $8n$ numbers right. 10's
# hand-written memory needed one unit per pair and, in 8 dimensions, lost
# pairs to crosstalk long before that.
#
# **Forecast.** Train memories of 8, 32 and 128 units on 16 to 128 pairs, 2000
# steps each. Which of them hold 32 pairs? What happens to each at 128 pairs,
# 1024 numbers to get right?
#
# **Step.** The sweep (the mean of two draws for each size), with 10's
# hand-written memory at its best threshold of the three in 10, $\theta = 0.5$,
# beside it. (About two seconds.)

# %%
n_sweep, widths = (16, 32, 64, 128), (8, 32, 128)
swept = training.capacity(8, widths, n_sweep)
for d_ff, (final, recalled) in swept.items():
    print(f"d_ff = {d_ff:3d} ({training.parameter_count(8, d_ff):4d} numbers): L after 2000 steps "
          + " ".join(f"{v:8.2g}" for v in final) + "   recall " + " ".join(f"{r:4.2f}" for r in recalled))
written_memory = np.array([memory.mean_recall(8, n, 0.5, seeds=(0, 1)) for n in n_sweep])
print("10's written memory, θ = 0.5, d_ff = n: recall " + " ".join(f"{r:4.2f}" for r in written_memory))
curves = {f"trained, d_ff = {d_ff}": recalled for d_ff, (_, recalled) in swept.items()}
curves["written as in 10 (d_ff = n, θ = 0.5)"] = written_memory
plots.recall_curves(n_sweep, {"d_model = 8": curves}, xlabel="stored pairs n (log scale)",
                    title="Recall after training, against the number of pairs", log_x=True)

# %% [markdown]
# *Figure: the share of pairs recalled (the output closest to its own value)
# against the number of pairs, for trained memories of 8, 32 and 128 units and
# for 10's hand-written memory with one unit per pair (mean of two draws).*
#
# **Why.** With 32 pairs, the trained memories of 32 and 128 units recall
# every pair, which 10's recipe, with one unit per pair, does not: training
# finds weights where the pairs interfere least. The 8-unit memory loses pairs
# already at 16: its 144 numbers are, on paper, more than the 128 to get right,
# but a unit that is off for a key does nothing for it. For every width, more
# pairs leave a higher loss after 2000 steps. At 128 pairs (1024 numbers) the
# memories of 8 and 32 units recall fewer than a third, and even 128 units lose
# some. Past its capacity a memory does not break at once: the loss stops near a
# floor, and the pairs it cannot keep apart come back closer to some other
# pair's value.
#
# **Verify.**

# %%
for d_ff, (final, recalled) in swept.items():
    assert np.all(np.diff(final) > 0), d_ff  # more pairs, a higher loss, for every width
    assert recalled[-1] < 1.0, d_ff  # at 128 pairs every memory loses some
for d_ff in (32, 128):
    assert swept[d_ff][1][0] == swept[d_ff][1][1] == 1.0  # 16 and 32 pairs, all recalled
assert swept[8][1][0] < 0.9 and swept[8][1][1] < 0.7  # 8 units: pairs lost at 16 already
assert swept[8][1][-1] < 1 / 3 and swept[32][1][-1] < 1 / 3
assert written_memory[1] < 0.95  # 10's recipe, 32 units for 32 pairs: some lost
print("32 and 128 trained units hold 32 pairs, better than 10's recipe; at 128 pairs every memory loses pairs.")

# %% [markdown]
# ## 10. Optional: PyTorch's autograd, as a second opinion
#
# If PyTorch is installed where this notebook runs, this cell computes the loss
# and its gradients for the task's starting parameters with autograd, in float64,
# and compares them with yours: your `mse_loss` and your backward pass, chained
# as `train` chains them. torch is not part of the course's environment; without
# it the cell says so in one line and moves on.

# %%
torch, why_not = torch_check.load()
if torch is None:
    print(torch_check.skipped(why_not))
else:
    with yours.attempt("The PyTorch cross-check"):
        start = tuple(START[name] for name in PARAMS)
        your_loss, your_grad_y = mse_loss(ffn_module_forward(KEYS, *start), VALUES)
        your_grads = ffn_module_backward(KEYS, your_grad_y, *start)
        print(f"PyTorch {torch.__version__}: autograd's loss and gradients against yours (float64)")
        agreed = torch_check.compare({"loss": your_loss, **your_grads}, torch_check.autograd_loss(torch, KEYS, VALUES,
                                                                                                  *start))
        print("all agree" if all(agreed.values()) else "some differ: see the lines above")

# %% [markdown]
# ## Summary
#
# - Training is a loop of four steps: forward pass, loss, backward pass, update
#   $W \leftarrow W - \eta\, \partial L/\partial W$. The loss is a mean over the
#   tokens, so its gradient, $(y - t)/N$, is too.
# - Check the gradient before you train: your backward pass against your
#   numerical gradient, each checked on its own first.
# - The learning rate decides everything: too small is slow, too large climbs
#   and never comes down. A flat loss curve means the loop is not updating or
#   not recomputing; a climbing one, a wrong sign or too large a step.
# - The trained FFN is a key-value memory read unit by unit, as in 10, but a
#   shared one: each key sets off many units, each unit serves many keys, and
#   several units write each answer.
# - Trained, a memory holds more pairs than a written one with as many units;
#   past what its parameters can fit, the loss stops falling and pairs are lost.
#
# Back to the map: [00 · Start here](00_start_here.ipynb).
