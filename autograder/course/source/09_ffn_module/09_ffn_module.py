# %% [markdown]
# # 09 · The FFN module: parameters, forward, backward, gradient check
#
# The capstone. You build the feed-forward sublayer as a module, in the shape a
# deep-learning library gives its layers: a class that owns its parameters,
# initialises them (with the course's rule; section 1 compares it with what
# libraries actually use), counts them, runs the forward pass on any batch, and
# computes its own gradients. Then you check those gradients against numerical
# differentiation.
#
# $$\mathrm{FFN}(x) = \sigma(x W_1 + b_1)\, W_2 + b_2,$$
#
# $$z = x W_1 + b_1, \qquad h = \sigma(z),$$
#
# $$y = h W_2 + b_2$$
#
# You build it in steps. Each of sections 1 to 4 explains one part and has you
# write it as a function of the parameters, checked right below it; section 5
# assembles the class from those functions in a few lines; section 6 writes the
# numerical gradient that checks a backward pass.
#
# What you write, section by section, and what it must return:
#
# 1. `xavier_init(d_model, d_ff, use_bias=True, seed=None)`: `(W1, b1, W2, b2)`,
#    of shapes $(d_\text{model}, d_\text{ff})$, $(d_\text{ff},)$,
#    $(d_\text{ff}, d_\text{model})$, $(d_\text{model},)$; `b1`, `b2` are `None`
#    without biases.
# 2. `count_parameters(W1, b1, W2, b2)`: how many numbers training adjusts, an integer.
# 3. `ffn_module_forward(x, W1, b1, W2, b2, activation="relu")`: $\mathrm{FFN}(x)$
#    for `x` of shape $(\dots, d_\text{model})$; `activation` is `"relu"`,
#    `"gelu"` or `"silu"`.
# 4. `ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu")`: the
#    gradients of $L = \sum$ `grad_out` $\odot\, \mathrm{FFN}(x)$, a dict with keys
#    `"W1" "b1" "W2" "b2" "x"`.
# 5. `FeedForwardNetwork(d_model, d_ff, activation="relu", use_bias=True, seed=None)`:
#    attributes `W1, b1, W2, b2`; `model(x)`, `model.num_parameters()`,
#    `model.backward(x, grad_out)`, each with the *current* attributes.
# 6. `numerical_gradient(f, x, h=1e-5)`: centred differences of a scalar function
#    `f` at `x`.
#
# Parameters, outputs and gradients are float64 arrays; the checks compare them
# with the reference to a relative $10^{-7}$.
#
# `ffn_module_backward` must support ReLU and GELU (SiLU is optional: no test
# uses its gradient). The reference implementation is `ffn_helpers.module`,
# imported below as `reference`; the demonstrations use it, so this notebook runs
# before you have written anything. (23 points.)
#
# *Where to run it:* in the browser through the **launch binder** badge of the
# repository's README, or locally with `make lab`. How the checks and the
# feedback work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from scipy import special

from ffn_helpers import checks, examples, ffn_forward, mistakes, plots
from ffn_helpers import module as reference

W2_EX, W3_EX, W4_EX, W6 = examples.W_2, examples.W_3, examples.W_4, examples.W_6


def with_params(model, params):
    """Set a model's W1, b1, W2, b2 to copies of `params` (None stays None); return the model."""
    model.W1, model.b1, model.W2, model.b2 = (None if p is None else np.array(p, dtype=float) for p in params)
    return model


def random_params(rng, d_model, d_ff, use_bias=True):
    """(W1, b1, W2, b2) with standard normal entries; the biases None without use_bias."""
    W1, b1 = rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff)
    W2, b2 = rng.normal(size=(d_ff, d_model)), rng.normal(size=d_model)
    return (W1, b1, W2, b2) if use_bias else (W1, None, W2, None)


def check_init(fn, d_model, d_ff, use_bias=True, seed=0, name="xavier_init"):
    """Test cells' helper: fn(d_model, d_ff, use_bias, seed) must give the reference's (W1, b1, W2, b2)."""
    params = checks.call(fn, d_model, d_ff, use_bias, seed, name=name)
    call = f"{name}({d_model}, {d_ff}, use_bias={use_bias}, seed={seed})"
    if not isinstance(params, (tuple, list)) or len(params) != 4:
        raise checks.wrong_result(call, "the tuple (W1, b1, W2, b2)", params)
    expected = reference.xavier_init(d_model, d_ff, use_bias, seed)
    for key, value, want in zip(("W1", "b1", "W2", "b2"), params, expected, strict=True):
        if want is None:
            if value is not None:
                raise checks.failure(f"{call}: with use_bias=False, {key} should be None, got {value!r:.200}",
                                     public=f"{call}: with use_bias=False, {key} should be None, got "
                                            f"{checks.describe(value)}")
            continue
        if value is None:
            raise checks.failure(f"{call}: {key} is None although use_bias=True: it should be np.zeros({want.size})",
                                 public=True)
        if key in ("W1", "W2"):
            checks.assert_close(value, want, name=f"{call}'s {key}",
                                mistakes=mistakes.for_exercise("xavier_init", "weights"),
                                args=(key, d_model, d_ff, seed))
        else:
            checks.assert_close(value, want, name=f"{call}'s {key} (zeros at the start)")
        if np.asarray(value).dtype != np.float64:
            raise checks.failure(f"{call}'s {key} should be float64, got {np.asarray(value).dtype}", public=True)
    return params


def check_x_kept(x, before):
    """Test cells' helper: numerical_gradient must leave the caller's x as it was, to the last bit."""
    if np.array_equal(x, before):
        return
    if np.allclose(x, before, rtol=1e-12, atol=0):  # only the last digits moved: the steps were undone by arithmetic
        raise checks.failure("numerical_gradient changed the caller's x in its last digits: x + h - 2h + h is not "
                             "exactly x in floating point (rounding). Put each entry back from a saved value "
                             "(old = x[i], ..., x[i] = old), or perturb a copy of x.", public=True)
    raise checks.failure("numerical_gradient changed the caller's x: perturb a copy, or restore every entry",
                         public=True)


def check_gradients(grads, expected, call, args, catalogue, names=("W1", "b1", "W2", "b2", "x")):
    """Test cells' helper: grads (a dict from a learner) must hold expected[name] for each name."""
    if not isinstance(grads, dict):
        raise checks.wrong_result(call, "a dict with keys 'W1' 'b1' 'W2' 'b2' 'x'", grads)
    for name in names:
        if name not in grads:
            raise checks.failure(f"{call}'s dict has no key {name!r} (its keys: {sorted(map(str, grads))})",
                                 public=True)
        if expected[name] is None:
            if grads[name] is not None:
                raise checks.failure(f"without biases, {call}[{name!r}] should be None, got {grads[name]!r:.200}",
                                     public=f"without biases, {call}[{name!r}] should be None, got "
                                            f"{checks.describe(grads[name])}")
            continue
        checks.assert_close(grads[name], expected[name], name=f"{call}[{name!r}]",
                            mistakes=catalogue, args=(name, *args))


def check_backward(fn, x, grad_out, params, activation="relu", names=("W1", "b1", "W2", "b2", "x")):
    """Test cells' helper: fn(x, grad_out, W1, b1, W2, b2, activation) against reference.ffn_backward."""
    expected = reference.ffn_backward(x, grad_out, *params, activation)  # first, from the untouched inputs
    grads = checks.call(fn, x, grad_out, *params, activation, name="ffn_module_backward")
    check_gradients(grads, expected, f"ffn_module_backward(x, grad_out, W1, b1, W2, b2, {activation!r})",
                    (x, grad_out, *params, activation), mistakes.for_exercise("ffn_module_backward"), names)


def build(cls, d_model, d_ff, activation="relu", use_bias=True, seed=0, params=None):
    """Test cells' helper: cls(d_model, d_ff, ...) (the learner's class), then (optionally) given parameters."""
    model = checks.call(lambda: cls(d_model, d_ff, activation=activation, use_bias=use_bias, seed=seed),
                        name=getattr(cls, "__name__", "the class"))
    return model if params is None else with_params(model, params)


def attribute(model, name):
    """Test cells' helper: model.<name>, or a clear failure if the attribute is missing."""
    if not hasattr(model, name):
        raise checks.failure(f"the model has no attribute {name!r}: __init__ should set W1, b1, W2 and b2", public=True)
    return getattr(model, name)


def check_model(model, d_model, d_ff, activation, use_bias, seed, x, grad_out):
    """Test cells' helper: the learner's model against the reference, built alike, then with new parameters."""
    ref = reference.FeedForwardNetwork(d_model, d_ff, activation=activation, use_bias=use_bias, seed=seed)
    about = f"FeedForwardNetwork({d_model}, {d_ff}, activation={activation!r}, use_bias={use_bias}, seed={seed})"
    for name in ("W1", "b1", "W2", "b2"):
        value, want = attribute(model, name), getattr(ref, name)
        if want is None or value is None:
            if value is not want:
                raise checks.failure(f"{about}.{name} should be {want!r:.60}, got {value!r:.60}: "
                                     "pass use_bias on to xavier_init",
                                     public=f"{about}.{name} should be {checks.describe(want)}, got "
                                            f"{checks.describe(value)}: pass use_bias on to xavier_init")
            continue
        checks.assert_close(value, want, name=f"{about}.{name}")
    count = checks.call(model.num_parameters, name="num_parameters")
    checks.check_equal(count, ref.num_parameters(), name=f"{about}.num_parameters()")
    initial = tuple(getattr(ref, name) for name in ("W1", "b1", "W2", "b2"))
    params = random_params(np.random.default_rng(d_model * 100 + d_ff), d_model, d_ff, use_bias)
    with_params(model, params)
    with_params(ref, params)
    y = checks.call(model, x, name="FeedForwardNetwork.__call__")
    checks.assert_close(y, ref(x), name=f"{about}(x) with new W1, b1, W2, b2",
                        mistakes=mistakes.for_exercise("FeedForwardNetwork", "__call__"),
                        args=(x, params, initial, activation))
    grads = checks.call(model.backward, x, grad_out, name="FeedForwardNetwork.backward")
    check_gradients(grads, ref.backward(x, grad_out), "model.backward(x, grad_out)", (x, grad_out, *params, activation),
                    mistakes.for_exercise("FeedForwardNetwork", "backward"))


# %% [markdown]
# ## 1. Initialisation: Xavier-normal, with a seed
#
# A weight matrix $W$ that maps $n_\text{in}$ features to $n_\text{out}$ sums
# $n_\text{in}$ products per output, so with independent entries of variance
# $v$ it multiplies the variance of the signal by about $n_\text{in} v$ on the
# way forward, and that of the gradient by about $n_\text{out} v$ on the way
# back. Xavier (Glorot) initialisation compromises between keeping both near 1:
#
# $$W_{ij} \sim \mathcal N\!\left(0,\ \mathrm{std}^2\right),$$
#
# $$\mathrm{std} = \sqrt{\frac{2}{n_\text{in} + n_\text{out}}} = \sqrt{\frac{2}{d_\text{model} + d_\text{ff}}}$$
#
# for both $W_1$ ($d_\text{model} \to d_\text{ff}$) and $W_2$ ($d_\text{ff} \to
# d_\text{model}$). Biases start at 0. A seed makes the draws reproducible; the
# *order* of the draws (first $W_1$, then $W_2$, from one generator) is part of
# the contract, so that your code and the reference agree number for number.
#
# **Forecast.** For $d_\text{model} = 512$, $d_\text{ff} = 2048$, what is the std?
# Will the entries of $W_1$ have exactly that sample standard deviation?
#
# **Step.** The reference, seeded.

# %%
big_W1, _, big_W2, _ = reference.xavier_init(512, 2048, seed=0)
print(f"std = √(2 / (512 + 2048)) = {reference.xavier_std(512, 2048):.6f}")
print(f"sample std of W1: {big_W1.std():.6f}   of W2: {big_W2.std():.6f}   (n = {big_W1.size:,} each)")
same_W1, _, same_W2, _ = reference.xavier_init(512, 2048, seed=0)
print("same seed, same weights:", np.array_equal(big_W1, same_W1) and np.array_equal(big_W2, same_W2))
standard_error = 1 / np.sqrt(2 * big_W1.size)  # of a sample std, relative
print(f"relative standard error of a sample std: {standard_error:.2%}")
for W in (big_W1, big_W2):
    assert abs(W.std() / reference.xavier_std(512, 2048) - 1) < 4 * standard_error

# %% [markdown]
# **Why.** A sample of $n$ normal numbers has a standard deviation that misses
# the true one by about $\mathrm{std}/\sqrt{2n}$, here 0.07 %: close, never
# exact. A fixed seed reproduces every digit, which is what lets a test compare
# two implementations exactly.
#
# **Step.** Write `xavier_init`: draw from one generator,
# `rng = np.random.default_rng(seed)`, first $W_1$ then $W_2$, each with
# `rng.normal(0.0, std, size=...)`; the biases are zeros, or `None` (and nothing
# drawn for them) when `use_bias` is False.

# %% nbgrader={"grade": false, "grade_id": "xavier_init", "locked": false, "schema_version": 3, "solution": true, "task": false}
def xavier_init(d_model, d_ff, use_bias=True, seed=None):
    """(W1, b1, W2, b2): Xavier-normal weights, std = √(2 / (d_model + d_ff)), W1 drawn first; zero biases.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,); b1 and b2 are None
    if not use_bias. All drawn from np.random.default_rng(seed).
    """
    ### BEGIN SOLUTION
    std = np.sqrt(2.0 / (d_model + d_ff))
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0.0, std, size=(d_model, d_ff))
    W2 = rng.normal(0.0, std, size=(d_ff, d_model))
    if not use_bias:
        return W1, None, W2, None
    return W1, np.zeros(d_ff), W2, np.zeros(d_model)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for xavier_init</summary>
#
# Two draws from one generator, in a fixed order: $W_1$, then $W_2$, both normal
# with mean 0 and the Xavier standard deviation
# $\sqrt{2/(d_\text{model} + d_\text{ff})}$. The biases are zeros, or `None`
# without biases.
#
# <details><summary>Hint 2 of 3 for xavier_init</summary>
#
# Make the generator once from the seed, `np.random.default_rng(seed)`, and draw
# with `rng.normal(0.0, std, size=(rows, columns))`: first the
# $(d_\text{model}, d_\text{ff})$ matrix, then the
# $(d_\text{ff}, d_\text{model})$ one. Without biases, return `None` in their
# places and draw nothing for them: the weights then stay the same as with
# biases.
#
# <details><summary>Hint 3 of 3 for xavier_init</summary>
#
# Return a tuple of four: the first matrix, zeros of length $d_\text{ff}$, the
# second matrix, zeros of length $d_\text{model}$ (or the two matrices with
# `None` in the bias places). The std is the square root of 2 over the sum of
# the two sizes.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The draws for $3 \to 4$ with seed 0, the biases, the seed's effect,
# and the sample std of a $512 \times 2048$ layer. (2 points here, 2 more from
# the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_xavier_init", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
W1, b1, W2, b2 = check_init(xavier_init, 3, 4, seed=0)
W1_again = check_init(xavier_init, 3, 4, seed=0)[0]
if not np.array_equal(W1_again, W1):
    raise checks.failure("two calls with seed=0 give different W1: draw from np.random.default_rng(seed)", public=True)
if np.array_equal(checks.call(xavier_init, 3, 4, True, 1)[0], W1):
    raise checks.failure("seed=1 gives the same W1 as seed=0: the seed should change the draws", public=True)
check_init(xavier_init, 3, 4, use_bias=False, seed=0)
big_W1, _, big_W2, _ = checks.call(xavier_init, 512, 2048, True, 2024)
std = reference.xavier_std(512, 2048)
for name, W in (("W1", big_W1), ("W2", big_W2)):
    checks.assert_close(float(np.std(W)), std, name=f"sample std of {name} for 512/2048", rtol=0.01,
                        mistakes=mistakes.for_exercise("xavier_init", "std"), args=(512, 2048))
checks.ok("W1 and W2 are Xavier-normal, seeded, in the reference's order; biases start at 0 or are None.")

# %% [markdown]
# The grader also checks (2 points): the exact draws for other sizes and seeds
# ($d_\text{model} \ne d_\text{ff}$, $d_\text{ff} = 1$, no biases), float64
# arrays, the std of a $768 \times 3072$ layer, and that `seed=None` gives
# different weights each time.

# %% nbgrader={"grade": true, "grade_id": "test_xavier_init_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
for d_model, d_ff, use_bias, seed in [(1, 1, True, 0), (5, 2, True, 7), (2, 7, False, 123), (6, 6, True, 99)]:
    check_init(xavier_init, d_model, d_ff, use_bias=use_bias, seed=seed)
big_W1, _, big_W2, _ = checks.call(xavier_init, 768, 3072, True, 5)
for name, W in (("W1", big_W1), ("W2", big_W2)):
    checks.assert_close(float(np.std(W)), reference.xavier_std(768, 3072), name=f"sample std of {name} for 768/3072",
                        rtol=0.01, mistakes=mistakes.for_exercise("xavier_init", "std"), args=(768, 3072))
if np.array_equal(checks.call(xavier_init, 4, 8, True, None)[0], checks.call(xavier_init, 4, 8, True, None)[0]):
    raise checks.failure("two calls with seed=None give identical weights: seed=None should mean fresh randomness",
                         public=True)
checks.ok("xavier_init matches the reference for every size, seed and option.")
### END HIDDEN TESTS

# %% [markdown]
# ### What libraries do instead
#
# Xavier-normal is this course's graded contract, not a library's default. What
# you will meet in practice:
#
# - PyTorch's `nn.Linear` draws its weight **and its bias** uniformly from
#   $U(-1/\sqrt{n_\text{in}},\ 1/\sqrt{n_\text{in}})$, with $n_\text{in}$ the
#   layer's fan-in ($d_\text{model}$ for the first layer, $d_\text{ff}$ for the
#   second), so its biases do not start at 0.
# - GPT-2 (and nanoGPT, which follows it) draws every weight from
#   $\mathcal N(0, 0.02^2)$, a fixed std whatever the width, with zero biases;
#   the projections that write into the residual stream, the FFN's $W_2$
#   among them, get $0.02/\sqrt{2 n_\text{layer}}$ instead.
# - He (Kaiming) initialisation, $\mathrm{std} = \sqrt{2/n_\text{in}}$, is made
#   for ReLU: ReLU zeroes about half of a symmetric pre-activation, and the factor
#   2 makes up for the lost half of the second moment.
#
# **Forecast.** Feed tokens with unit-variance features (what LayerNorm hands
# the FFN) through $W_1$ drawn each way, for $d_\text{model}$ from 64 to 1024
# with $d_\text{ff} = 4 d_\text{model}$. Which rules keep the spread of
# $h = \mathrm{ReLU}(x W_1 + b_1)$ the same at every width?
#
# **Step.** Draw, compute $h$, measure its standard deviation.

# %%
def first_layer(rule, d_model, d_ff, rng):
    """(W1, b1) drawn by one of the initialisation rules above."""
    if rule == "Xavier-normal (this course)":
        return rng.normal(0.0, reference.xavier_std(d_model, d_ff), size=(d_model, d_ff)), np.zeros(d_ff)
    if rule == "He-normal":
        return rng.normal(0.0, np.sqrt(2.0 / d_model), size=(d_model, d_ff)), np.zeros(d_ff)
    if rule == "PyTorch nn.Linear":
        bound = 1.0 / np.sqrt(d_model)
        return rng.uniform(-bound, bound, size=(d_model, d_ff)), rng.uniform(-bound, bound, size=d_ff)
    return rng.normal(0.0, 0.02, size=(d_model, d_ff)), np.zeros(d_ff)  # GPT-2


RULES = ("Xavier-normal (this course)", "He-normal", "PyTorch nn.Linear", "GPT-2 N(0, 0.02²)")
init_widths = (64, 128, 256, 512, 1024)
rng = np.random.default_rng(9)
h_spread = {rule: [] for rule in RULES}
for rule in RULES:
    for d_model in init_widths:
        x_tokens = rng.normal(size=(64, d_model))
        W1_draw, b1_draw = first_layer(rule, d_model, 4 * d_model, rng)
        h_spread[rule].append(float(np.maximum(x_tokens @ W1_draw + b1_draw, 0.0).std()))
print(f"{'d_model':>28}" + "".join(f"{d:>7}" for d in init_widths))
for rule, spreads in h_spread.items():
    print(f"{rule:>28}" + "".join(f"{s:7.3f}" for s in spreads))
gpt2_small_layers = 12
print(f"\nGPT-2 small ({gpt2_small_layers} layers): W2's std 0.02/√(2·{gpt2_small_layers}) = "
      f"{0.02 / np.sqrt(2 * gpt2_small_layers):.5f}; Xavier's for 768/3072: {reference.xavier_std(768, 3072):.5f}")
plots.loss_curves(h_spread, title="Spread of the hidden activations h at initialisation", xticks=init_widths,
                  xlabel="d_model (d_ff = 4·d_model)", ylabel="std of h = ReLU(x W1 + b1) (log scale)")

# %% [markdown]
# *Figure: standard deviation of the hidden activations $h$ for 64 tokens with
# unit-variance features, for four ways of drawing $W_1$ (and $b_1$), as the
# width grows. He and PyTorch scale by the fan-in $d_\text{model}$, Xavier by fan-in
# plus fan-out, $d_\text{model} + d_\text{ff}$, which is a fixed $5\,d_\text{model}$
# here because $d_\text{ff} = 4\,d_\text{model}$ at every width: the three lines are
# flat. GPT-2's fixed 0.02 rises.*
#
# **Why.** Each entry of $z = x W_1 + b_1$ sums $d_\text{model}$ products, so its
# variance is $d_\text{model}$ times the weights' variance (plus the bias's).
# Rules whose variance falls like $1/d_\text{model}$ cancel that factor: He and
# PyTorch divide by the fan-in, and Xavier by $d_\text{model} + d_\text{ff} =
# 5\,d_\text{model}$, since the ratio $d_\text{ff}/d_\text{model}$ is fixed here (at
# another ratio Xavier's line sits at another height, flat still). Xavier gives
# $\mathrm{var}(z) = 2/5$, He 2, PyTorch $1/3 + 1/(3 d_\text{model})$, whatever
# the width; a fixed std of 0.02 gives $0.0004\, d_\text{model}$, which grows with
# the width (GPT-2 picked 0.02 for its own widths). For a normal $z$ with std
# $s$, $\mathrm{ReLU}(z)$ has std $s\sqrt{1/2 - 1/(2\pi)} \approx 0.584\,s$,
# which is what the table shows.
#
# **Verify.**

# %%
relu_std_factor = np.sqrt(0.5 - 1 / (2 * np.pi))
predicted_z_var = {RULES[0]: lambda d: 2 / 5, RULES[1]: lambda d: 2.0,
                   RULES[2]: lambda d: 1 / 3 + 1 / (3 * d), RULES[3]: lambda d: 0.02**2 * d}
for rule in RULES:
    for d_model, measured in zip(init_widths, h_spread[rule], strict=True):
        predicted = relu_std_factor * np.sqrt(predicted_z_var[rule](d_model))
        assert abs(measured / predicted - 1) < 0.1, (rule, d_model, measured, predicted)
assert round(relu_std_factor, 3) == 0.584
for rule in RULES[:3]:
    assert max(h_spread[rule]) / min(h_spread[rule]) < 1.1  # flat in the width
assert h_spread[RULES[3]][-1] / h_spread[RULES[3]][0] > 3  # √(1024 / 64) = 4 in theory
assert round(0.02 / np.sqrt(2 * gpt2_small_layers), 5) == 0.00408 and round(reference.xavier_std(768, 3072), 5) == 0.02282
print("The rules scaled by the width keep h's spread flat; a fixed std 0.02 lets it grow like √d_model.")


# %% [markdown]
# ## 2. Counting the parameters
#
# $W_1$ and $W_2$ hold $d_\text{model} d_\text{ff}$ numbers each; $b_1$ adds
# $d_\text{ff}$ and $b_2$ adds $d_\text{model}$:
#
# $$N = 2\, d_\text{model} d_\text{ff} + d_\text{ff} + d_\text{model}.$$
#
# **Forecast.** $N$ for the original Transformer's $d_\text{model} = 512$,
# $d_\text{ff} = 2048$? (A widely read text prints 2,101,760.)
#
# **Step.**

# %%
print(f"512/2048 with biases:    {reference.count_parameters(*reference.xavier_init(512, 2048)):>10,}")
print(f"512/2048 without biases: {reference.count_parameters(*reference.xavier_init(512, 2048, False)):>10,}")
print(f"768/3072 (BERT-base):    {reference.count_parameters(*reference.xavier_init(768, 3072)):>10,}")
n_biases = 2048 + 512
print(f"biases: {n_biases:,} of {W6['transformer_base']['per_layer']:,} = "
      f"{n_biases / W6['transformer_base']['per_layer']:.2%}")
assert round(n_biases / W6["transformer_base"]["per_layer"], 4) == 0.0012  # "about 0.12 %"
assert 2 * 512 * 2048 == 2_097_152 and 2_097_152 + n_biases == W6["transformer_base"]["per_layer"]
assert W6["transformer_base"]["published_wrong_sum"] - n_biases == 2_099_200  # the text's wrong product

# %% [markdown]
# **Why.** $2 \cdot 512 \cdot 2048 = 2{,}097{,}152$ weights plus $2048 + 512 =
# 2560$ biases make **2,099,712**. The printed 2,101,760 comes from a wrong
# product: that text writes $2 \cdot 512 \cdot 2048$ as 2,099,200 and then adds
# the (right) 2,560 biases; its own program output shows 2,099,712. Biases are
# about 0.12 % of the layer. Notebook 06 has the full budget, in bytes and FLOPs.
#
# **Step.** Write `count_parameters`: the number of entries of the arrays it is
# given, a bias that is `None` counting 0. Return an integer (a Python `int`; a numpy integer such as `np.int64` passes too).

# %% nbgrader={"grade": false, "grade_id": "count_parameters", "locked": false, "schema_version": 3, "solution": true, "task": false}
def count_parameters(W1, b1, W2, b2):
    """How many numbers training adjusts: the entries of W1 and W2, and of b1, b2 unless None (an int)."""
    ### BEGIN SOLUTION
    return sum(int(np.size(p)) for p in (W1, b1, W2, b2) if p is not None)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for count_parameters</summary>
#
# The number of parameters is the number of entries of the arrays, added up; a
# bias that is `None` has none.
#
# <details><summary>Hint 2 of 2 for count_parameters</summary>
#
# `np.size(a)` counts the entries of an array of any shape. Add it up over the
# four arguments, skipping those that are `None`, and make the total a Python
# `int` (`int(...)`).
#
# </details>
# </details>

# %% [markdown]
# **Verify.** 512/2048 with and without biases. (1 point here, 1 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_count_parameters", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
for use_bias, expected in ((True, W6["transformer_base"]["per_layer"]), (False, 2 * 512 * 2048)):
    params = reference.xavier_init(512, 2048, use_bias, seed=0)
    count = checks.call(count_parameters, *params, name="count_parameters")
    checks.assert_close(count, expected, name=f"count_parameters(...) for 512/2048, use_bias={use_bias}",
                        mistakes=mistakes.for_exercise("count_parameters"), args=(512, 2048, use_bias))
    checks.check_equal(count, expected, name="count_parameters(...)")
checks.ok("count_parameters gives 2,099,712 for 512/2048 with biases, 2,097,152 without.")

# %% [markdown]
# The grader also checks (1 point): BERT-base's 768/3072 (4,722,432), the
# 256/1024 example with and without biases (525,568 and 524,288), and the
# smallest network, $1 \to 1 \to 1$.

# %% nbgrader={"grade": true, "grade_id": "test_count_parameters_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
cases = [(768, 3072, True, W6["bert_base"]["per_layer"]),
         (256, 1024, True, W6["libtorch_example"]["with_bias"]),
         (256, 1024, False, W6["libtorch_example"]["without_bias"]),
         (1, 1, True, 4), (1, 1, False, 2), (3, 5, True, 38)]
for d_model, d_ff, use_bias, expected in cases:
    params = reference.xavier_init(d_model, d_ff, use_bias, seed=1)
    count = checks.call(count_parameters, *params, name="count_parameters")
    checks.assert_close(count, expected, name=f"count_parameters(...) for {d_model}/{d_ff}, use_bias={use_bias}",
                        mistakes=mistakes.for_exercise("count_parameters"), args=(d_model, d_ff, use_bias))
    checks.check_equal(count, expected, name="count_parameters(...)")
checks.ok("count_parameters is right for every size, with and without biases.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3. Forward, for any batch shape
#
# `x @ W1` multiplies the last axis of `x` by $W_1$ whatever the leading axes
# are, and the biases broadcast over them, so one expression serves a single
# token $(d_\text{model},)$, a sequence $(n, d_\text{model})$ and a batch of
# sequences $(b, s, d_\text{model})$.
#
# **Forecast.** W-2's network ($3 \to 4 \to 3$) on $x = [1, -0.5, 0.8]$: which
# hidden unit is off, and what is the output?
#
# **Step.** The reference with W-2's parameters.

# %%
w2_net = with_params(reference.FeedForwardNetwork(3, 4), W2_EX.params)
print("z =", w2_net.trace(W2_EX.x).z, "  y =", w2_net(W2_EX.x))
batch = np.stack([W2_EX.x, -W2_EX.x, 2 * W2_EX.x]).reshape(3, 1, 3)
print("batch of shape", batch.shape, "->", w2_net(batch).shape)

# %% [markdown]
# **Why.** Unit 1 has $z_1 = -0.62 < 0$, so ReLU switches it off and
# $y = [0.453, -0.512, 0.698]$ (W-2). The batch keeps its leading axes: each
# token goes through the same weights on its own.
#
# **Step.** Write `ffn_module_forward`. A bias that is `None` is left out.
# $\sigma$ is chosen by name: ReLU $\max(z, 0)$, GELU $z\,\Phi(z)$, SiLU
# $z\,s(z)$; `scipy.special` is imported as `special`, with `ndtr` ($\Phi$) and
# `expit` (the sigmoid $s$) from notebooks 04 and 08. Leave `x` unchanged.

# %% nbgrader={"grade": false, "grade_id": "ffn_module_forward", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_module_forward(x, W1, b1, W2, b2, activation="relu"):
    """FFN(x) = σ(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model).

    b1, b2 may be None (no bias); activation: "relu", "gelu" or "silu".
    """
    ### BEGIN SOLUTION
    z = np.asarray(x, dtype=float) @ W1
    if b1 is not None:
        z = z + b1
    if activation == "relu":
        h = np.maximum(z, 0.0)
    elif activation == "gelu":
        h = z * special.ndtr(z)
    elif activation == "silu":
        h = z * special.expit(z)
    else:
        raise ValueError(f"activation should be 'relu', 'gelu' or 'silu', got {activation!r}")
    y = h @ W2
    return y if b2 is None else y + b2
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for ffn_module_forward</summary>
#
# The same three stages as 02's forward pass, with two choices to make: whether
# each bias is there (`None` means leave it out), and which $\sigma$ the
# `activation` names.
#
# <details><summary>Hint 2 of 3 for ffn_module_forward</summary>
#
# Compute $z = x W_1$, and add `b1` only if it is not `None`. Then pick $h$ by
# the name: ReLU is the maximum of $z$ and 0, GELU is $z\,\Phi(z)$ with
# `special.ndtr`, SiLU is $z\,s(z)$ with `special.expit`. Finish with $h W_2$,
# plus `b2` if it is not `None`.
#
# <details><summary>Hint 3 of 3 for ffn_module_forward</summary>
#
# Use an `if`/`elif` chain on the activation's name, and raise a `ValueError`
# for any other name rather than falling through to one of the three. Never
# assign into `x`: a matrix product makes a new array, and so does adding a bias
# with `+`.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-2's token and W-4's two tokens. (2 points here, 2 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_forward", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
checks.check(ffn_module_forward, (W2_EX.x, *W2_EX.params), W2_EX.y,
             mistakes=mistakes.for_exercise("ffn_module_forward"))
checks.check(ffn_module_forward, (W4_EX.extra["tokens"], *W4_EX.params), W4_EX.extra["tokens_out"],
             mistakes=mistakes.for_exercise("ffn_module_forward"))
checks.ok("the forward pass reproduces W-2 and W-4's two tokens.")

# %% [markdown]
# The grader also checks (2 points): random weights, inputs of shapes
# $(d_\text{model},)$, $(n, d_\text{model})$ and $(b, s, d_\text{model})$, GELU
# and SiLU, no biases, and that `x` is not modified.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_forward_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("09_ffn_module", "test_ffn_module_forward_hidden")
d_model, d_ff = 5, 11
params = random_params(rng, d_model, d_ff)
for activation in ("relu", "gelu", "silu"):
    for shape in [(7, d_model), (d_model,), (2, 3, d_model)]:
        x = rng.normal(size=shape)
        x_before = x.copy()
        checks.check(ffn_module_forward, (x, *params, activation), ffn_forward(x, *params, activation=activation),
                     name=f"ffn_module_forward(x, W1, b1, W2, b2, activation={activation!r})",
                     mistakes=mistakes.for_exercise("ffn_module_forward"))
        if not np.array_equal(x, x_before):
            raise checks.failure("ffn_module_forward changed x in place: the forward pass must not modify its input",
                                 public=True)
W1, _, W2, _ = params
x = rng.normal(size=(4, d_model))
checks.check(ffn_module_forward, (x, W1, None, W2, None), ffn_forward(x, W1, None, W2, None),
             name="ffn_module_forward(x, W1, None, W2, None)")
checks.ok("the forward pass is right for every batch shape, activation and bias option.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. The backward pass, by hand
#
# Training needs the gradient of a scalar loss with respect to every parameter.
# A layer does not know the loss; it receives $G = \partial L / \partial y$,
# called `grad_out`, of the same shape as its output, and returns the gradients
# of $L$ with respect to its parameters and its input. Equivalently, the
# backward pass differentiates $L = \sum G \odot \mathrm{FFN}(x)$ with $G$ held
# fixed.
#
# Work backwards through $y = h W_2 + b_2$, $h = \sigma(z)$, $z = x W_1 + b_1$.
# For one token (row vectors):
#
# $$\frac{\partial L}{\partial W_2} = h^\top G, \quad
# \frac{\partial L}{\partial b_2} = G, \quad
# \frac{\partial L}{\partial h} = G\, W_2^\top,$$
#
# $$\frac{\partial L}{\partial z} = \frac{\partial L}{\partial h} \odot \sigma'(z),$$
#
# $$\frac{\partial L}{\partial W_1} = x^\top \frac{\partial L}{\partial z}, \quad
# \frac{\partial L}{\partial b_1} = \frac{\partial L}{\partial z},$$
#
# $$\frac{\partial L}{\partial x} = \frac{\partial L}{\partial z}\, W_1^\top.$$
#
# Here $h^\top G$ is an outer product, $(d_\text{ff}, 1) \times (1, d_\text{model})$:
# each gradient has the shape of what it differentiates. With many tokens the
# parameters are shared, so their gradients **add up over tokens**: stack the
# tokens as rows ($X$ of shape $(N, d_\text{model})$, where $N$ counts all leading
# axes together) and $X^\top (\partial L/\partial Z)$ sums them in one product;
# a bias gradient is a sum over rows. The input gradient stays per token, shaped
# like $x$.
#
# The activation's derivative $\sigma'(z)$ is where the cells of the course meet:
# ReLU's is 1 for $z > 0$ and 0 for $z < 0$ (cases A and B); at $z = 0$ it does
# not exist and frameworks use 0 (case C). GELU's is
# $\Phi(z) + z\,\varphi(z)$, with $\varphi(z) = e^{-z^2/2}/\sqrt{2\pi}$.
#
# **Forecast.** In W-2, unit 1 is off ($z_1 = -0.62$). Which entries of
# $\partial L/\partial W_1$, $\partial L/\partial b_1$ and $\partial L/\partial W_2$
# must be exactly 0, whatever $G$ is?
#
# **Step.** The reference's gradients for W-2's token and $G = [1, -2, 0.5]$.

# %%
G_ex = np.array([1.0, -2.0, 0.5])
grads = reference.ffn_backward(W2_EX.x, G_ex, *W2_EX.params)
for name, value in grads.items():
    print(f"∂L/∂{name} =\n{np.round(value, 6)}\n")

# %% [markdown]
# **Why.** Column 1 of $\partial L/\partial W_1$, entry 1 of
# $\partial L/\partial b_1$ and row 1 of $\partial L/\partial W_2$ are all 0: a
# unit that is off for an input passes no signal forward ($h_1 = 0$) and no
# gradient back ($\mathrm{ReLU}'(z_1) = 0$). Its weights do not learn from that
# input; if it is off for *every* input, it never learns again: a **dead** unit.
#
# **Step.** Write `ffn_module_backward`: run the forward pass again to get $z$
# and $h$, then the formulas above, summing over every leading axis of `x`. A
# bias that is `None` gets the gradient `None`. For $\varphi$ in float64,
# `np.exp(-z**2 / 2)` warns of an overflow for $|z|$ above about $1.3 \times
# 10^{154}$: cap $|z|$ at 40 first, where $\varphi$ is 0 anyway.

# %% nbgrader={"grade": false, "grade_id": "ffn_module_backward", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_module_backward(x, grad_out, W1, b1, W2, b2, activation="relu"):
    """Gradients of L = Σ grad_out ⊙ FFN(x); x, grad_out: (..., d_model).

    Returns {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,),
    "x": x's shape}; "b1", "b2" are None when b1, b2 are. Tokens (every leading axis) add up.
    ReLU'(z) is 1 where z > 0, else 0; GELU'(z) = Φ(z) + z φ(z).
    """
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


# %% [markdown]
# <details><summary>Hint 1 of 3 for ffn_module_backward</summary>
#
# Redo the forward pass to get $z$ and $h$, then apply the chain rule backwards
# through $y = h W_2 + b_2$, $h = \sigma(z)$, $z = x W_1 + b_1$: the formulas
# are in the cell above the exercise.
#
# <details><summary>Hint 2 of 3 for ffn_module_backward</summary>
#
# The one new quantity is
# $\partial L/\partial z = (G\, W_2^\top) \odot \sigma'(z)$, with $\sigma'(z)$
# the mask `z > 0` as floats for ReLU and $\Phi(z) + z\,\varphi(z)$ for GELU.
# Every parameter gradient sums over tokens: flatten the leading axes first
# (reshape `x` and $G$ to $(-1, d_\text{model})$, $h$ and
# $\partial L/\partial z$ to $(-1, d_\text{ff})$), so that one matrix product
# adds them all.
#
# <details><summary>Hint 3 of 3 for ffn_module_backward</summary>
#
# With the flattened arrays: $\partial L/\partial W_1$ is the flattened `x`
# transposed, times the flattened $\partial L/\partial z$;
# $\partial L/\partial W_2$ is the flattened `h` transposed, times the flattened
# `G`; each bias gradient is the sum over axis 0 of the matching flattened array
# (or `None` without that bias); $\partial L/\partial x$ is the unflattened
# $\partial L/\partial z$ times $W_1^\top$, so it keeps `x`'s shape. Return them
# in a dict under `"W1" "b1" "W2" "b2" "x"`.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The checks compare each gradient with the reference, in three
# parts that score separately: the output layer, the hidden layer and input with
# ReLU, and GELU (3 points here, 4 more from the grader). First the output
# layer, $\partial L/\partial W_2$ and $\partial L/\partial b_2$, for W-2's token
# and for two tokens. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_backward_layer2", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x_two, G_two = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]]), np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
check_backward(ffn_module_backward, W2_EX.x, np.array([1.0, -2.0, 0.5]), W2_EX.params, names=("W2", "b2"))
check_backward(ffn_module_backward, x_two, G_two, W2_EX.params, names=("W2", "b2"))
checks.ok("the output layer's gradients ∂L/∂W2 and ∂L/∂b2 match the reference for W-2.")

# %% [markdown]
# The grader also checks (1 point): $\partial L/\partial W_2$ and $\partial L/\partial b_2$
# for random weights with $d_\text{model} \ne d_\text{ff}$ and batches of shapes
# $(n, d_\text{model})$ and $(b, s, d_\text{model})$.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_backward_layer2_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("09_ffn_module", "test_ffn_module_backward_layer2_hidden")
d_model, d_ff = 4, 7
params = random_params(rng, d_model, d_ff)
for shape in [(6, d_model), (2, 3, d_model)]:
    check_backward(ffn_module_backward, rng.normal(size=shape), rng.normal(size=shape), params, names=("W2", "b2"))
checks.ok("the output layer's gradients are right for batched inputs.")
### END HIDDEN TESTS

# %% [markdown]
# Next, through the activation: $\partial L/\partial W_1$, $\partial L/\partial b_1$
# and $\partial L/\partial x$ for the same two cases. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_backward_layer1", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x_two, G_two = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]]), np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
check_backward(ffn_module_backward, W2_EX.x, np.array([1.0, -2.0, 0.5]), W2_EX.params, names=("W1", "b1", "x"))
check_backward(ffn_module_backward, x_two, G_two, W2_EX.params, names=("W1", "b1", "x"))
checks.ok("∂L/∂W1, ∂L/∂b1 and ∂L/∂x match the reference for W-2, dead unit included.")

# %% [markdown]
# The grader also checks (2 points): the same three gradients for random weights
# and batches $(d_\text{model},)$, $(n, d_\text{model})$, $(b, s, d_\text{model})$, a
# unit that is dead for every input, W-3's exact zeros ($\mathrm{ReLU}'(0) = 0$), and
# no biases (then `"b1"` and `"b2"` are `None`).

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_backward_layer1_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("09_ffn_module", "test_ffn_module_backward_layer1_hidden")
d_model, d_ff = 4, 7
params = list(random_params(rng, d_model, d_ff))
params[1][2] = -50.0  # unit 2 is dead for every input below
for shape in [(d_model,), (6, d_model), (2, 3, d_model)]:
    check_backward(ffn_module_backward, rng.normal(size=shape), rng.normal(size=shape), params,
                   names=("W1", "b1", "x"))
# W-3: two pre-activations are exactly 0, where ReLU's derivative is taken as 0.
check_backward(ffn_module_backward, W3_EX.x, np.array([1.0, -3.0]), W3_EX.params)
check_backward(ffn_module_backward, np.stack([W3_EX.x, [1.0, 2.0]]), np.array([[1.0, 1.0], [2.0, -1.0]]),
               W3_EX.params)
# Without biases: "b1" and "b2" are None, the rest as before.
W1, _, W2, _ = params
check_backward(ffn_module_backward, rng.normal(size=(5, d_model)), rng.normal(size=(5, d_model)),
               (W1, None, W2, None))
checks.ok("the ReLU gradients through the hidden layer are right, dead units and exact zeros included.")
### END HIDDEN TESTS

# %% [markdown]
# Last, GELU: W-2's weights with `activation="gelu"`, all five gradients. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_backward_gelu", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_backward(ffn_module_backward, W2_EX.x, np.array([1.0, -2.0, 0.5]), W2_EX.params, activation="gelu")
checks.ok("ffn_module_backward gives the reference's GELU gradients for W-2.")

# %% [markdown]
# The grader also checks (1 point): all five GELU gradients for random weights
# and pre-activations, on batches of every shape.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_module_backward_gelu_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("09_ffn_module", "test_ffn_module_backward_gelu_hidden")
d_model, d_ff = 3, 6
params = random_params(rng, d_model, d_ff)
for shape in [(d_model,), (5, d_model), (2, 2, d_model)]:
    check_backward(ffn_module_backward, 2.0 * rng.normal(size=shape), rng.normal(size=shape), params,
                   activation="gelu")
checks.ok("the GELU gradients are right.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. The module: one class, four calls
#
# A library layer keeps its parameters as attributes and offers the steps
# above as methods. With your four functions, each method is one line:
# `__init__` stores what `xavier_init` returns (and the activation),
# `num_parameters` counts, `__call__` runs the forward pass and `backward` the
# backward pass, each with the model's **current** `W1`, `b1`, `W2`, `b2`, so
# that a model whose parameters were changed (by training, or by a test) uses
# the new ones.
#
# **Forecast.** A test builds a model, sets `model.W1`, `model.b1`, `model.W2`,
# `model.b2` to new arrays, then calls `model(x)`. What does it get if `__init__`
# kept its own copy of the parameters and `__call__` used that copy?
#
# **Step.** Write the class; each method calls one of your functions.
#
# **How this is graded.** The class is graded on its own: its checks run inside
# `with checks.substitute(xavier_init=..., count_parameters=...,
# ffn_module_forward=..., ffn_module_backward=...)`, which puts the course's
# reference functions under your four names while the checks run (your own are
# put back afterwards, in your notebook and in the grader's re-run alike). So,
# as long as the class calls the four functions by these names, with its own
# attributes and its activation, a slip in one of them costs points in its own
# section only.

# %% nbgrader={"grade": false, "grade_id": "FeedForwardNetwork", "locked": false, "schema_version": 3, "solution": true, "task": false}
class FeedForwardNetwork:
    """FFN(x) = σ(x W1 + b1) W2 + b2 with its own parameters W1, b1, W2, b2; x: (..., d_model)."""

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
        """FFN(x) with the current W1, b1, W2, b2; x: (..., d_model) -> (..., d_model)."""
        ### BEGIN SOLUTION
        return ffn_module_forward(x, self.W1, self.b1, self.W2, self.b2, self.activation)
        ### END SOLUTION

    def backward(self, x, grad_out):
        """Gradients of L = Σ grad_out ⊙ FFN(x) with the current parameters: keys "W1" "b1" "W2" "b2" "x"."""
        ### BEGIN SOLUTION
        return ffn_module_backward(x, grad_out, self.W1, self.b1, self.W2, self.b2, self.activation)
        ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for FeedForwardNetwork</summary>
#
# The class only keeps state and passes it on: each method is a call of one of
# your four functions with the model's own attributes.
#
# <details><summary>Hint 2 of 3 for FeedForwardNetwork</summary>
#
# In `__init__`, unpack what `xavier_init` returns for the four arguments
# straight into the four attributes, `self.W1` to `self.b2`, and keep
# `activation` as an attribute too. The methods read `self.W1` and the others
# every time they run, never copies made in `__init__`.
#
# <details><summary>Hint 3 of 3 for FeedForwardNetwork</summary>
#
# `num_parameters` returns `count_parameters` of the four attributes; `__call__`
# returns `ffn_module_forward` of `x`, the four attributes and the kept
# activation; `backward` returns `ffn_module_backward` of `x`, `grad_out`, the
# four attributes and the activation. Call the functions by these names, so that
# the checks can put the course's in their place.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Why.** The copy still holds the parameters drawn at construction, so the
# model would compute the FFN of the old weights and ignore every update: a
# network that never learns, with no error anywhere. Reading `self.W1` and the
# others at every call keeps one source of truth.
#
# **Verify.** A ReLU model and a GELU model, $3 \to 4$ with seed 0: the
# parameters, the count, then the output and the gradients after new `W1`, `b1`,
# `W2`, `b2` are set on the model. (1 point here, 2 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_FeedForwardNetwork", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x_two, G_two = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]]), np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
with checks.substitute(xavier_init=reference.xavier_init, count_parameters=reference.count_parameters,
                       ffn_module_forward=ffn_forward, ffn_module_backward=reference.ffn_backward):
    for activation in ("relu", "gelu"):
        model = build(FeedForwardNetwork, 3, 4, activation=activation, seed=0)
        check_model(model, 3, 4, activation, True, 0, x_two, G_two)
checks.ok("the class keeps its parameters and uses the current ones, for ReLU and GELU.")

# %% [markdown]
# The grader also checks (2 points): other sizes and seeds, a model without
# biases (whose `b1`, `b2` and their gradients are `None`), a SiLU model's
# output, and batches of shape $(b, s, d_\text{model})$.

# %% nbgrader={"grade": true, "grade_id": "test_FeedForwardNetwork_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("09_ffn_module", "test_FeedForwardNetwork_hidden")
with checks.substitute(xavier_init=reference.xavier_init, count_parameters=reference.count_parameters,
                       ffn_module_forward=ffn_forward, ffn_module_backward=reference.ffn_backward):
    for d_model, d_ff, activation, use_bias, seed in [(5, 2, "relu", False, 7), (2, 7, "gelu", False, 123),
                                                      (4, 6, "gelu", True, 99), (1, 1, "relu", True, 3)]:
        model = build(FeedForwardNetwork, d_model, d_ff, activation=activation, use_bias=use_bias, seed=seed)
        shape = (2, 3, d_model)
        check_model(model, d_model, d_ff, activation, use_bias, seed, rng.normal(size=shape), rng.normal(size=shape))
    model = build(FeedForwardNetwork, 3, 5, activation="silu", seed=11)
    ref = reference.FeedForwardNetwork(3, 5, activation="silu", seed=11)
    x = rng.normal(size=(4, 3))
    checks.assert_close(checks.call(model, x, name="FeedForwardNetwork.__call__"), ref(x),
                        name="FeedForwardNetwork(3, 5, activation='silu', seed=11)(x)",
                        mistakes=mistakes.for_exercise("FeedForwardNetwork", "__call__"),
                        args=(x, (ref.W1, ref.b1, ref.W2, ref.b2), None, "silu"))
checks.ok("the class is right for every size, seed, activation and bias option.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Exercise: numerical gradients
#
# How do you know a backward pass is right? Compare it with the definition of
# the derivative. For a scalar function $f$ of an array $x$ and a small step
# $h$, the **centred difference** in entry $i$ is
#
# $$\frac{\partial f}{\partial x_i} \approx \frac{f(x + h\,e_i) - f(x - h\,e_i)}{2h},$$
#
# where $e_i$ is 1 in entry $i$ and 0 elsewhere. Its error shrinks like $h^2$
# (the one-sided $(f(x + h e_i) - f(x))/h$ only like $h$); rounding, which grows
# like $\varepsilon |f| / h$ with $\varepsilon \approx 2.2 \times 10^{-16}$, stops
# $h$ from going much below $10^{-5}$.
#
# **Forecast.** For $f(x) = \sum_i x_i^3$, the centred difference is exactly
# $3x_i^2 + h^2$. How far from $3x_i^2$ is it for $h = 10^{-5}$?
#
# **Step.** Implement `numerical_gradient(f, x, h=1e-5)`: one pair of
# evaluations per entry of `x`, whatever its shape (`np.ndindex(x.shape)` or a
# flat view of a copy). Call `f` with arrays of `x`'s shape, and leave the
# caller's `x` unchanged.

# %% nbgrader={"grade": false, "grade_id": "numerical_gradient", "locked": false, "schema_version": 3, "solution": true, "task": false}
def numerical_gradient(f, x, h=1e-5):
    """Centred differences (f(x + h e_i) - f(x - h e_i)) / 2h for every entry i of x.

    f: maps an array shaped like x to a number. Returns an array shaped like x.
    """
    ### BEGIN SOLUTION
    x = np.array(x, dtype=float)  # our own copy: the caller's x stays as it is
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
# <details><summary>Hint 1 of 3 for numerical_gradient</summary>
#
# Nudge one entry at a time, up by $h$ and down by $h$, call `f` each time, and
# divide the difference of the two values by $2h$. Do this for every entry,
# whatever the shape.
#
# <details><summary>Hint 2 of 3 for numerical_gradient</summary>
#
# Work on your own float copy of `x` (`np.array(x, dtype=float)` copies), so
# that the caller's array is left as it was, and make a result of zeros of the
# same shape. `np.ndindex(x.shape)` yields every index of an array of any shape,
# a 0-d one included.
#
# <details><summary>Hint 3 of 3 for numerical_gradient</summary>
#
# For each index: remember the old value, set the entry to old + h, call `f` on
# the whole copy, set it to old - h, call `f` again, put the old value back, and
# store the difference over `2 * h` at that index of the result. Use the `h` you
# are given, not `1e-5`.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** $f(x) = \sum_i x_i^3$ at $x = [1, -2, 0.5]$ against $3x^2$.
# (1 point here, 2 from the grader.)

# %% nbgrader={"grade": true, "grade_id": "test_numerical_gradient", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x = np.array([1.0, -2.0, 0.5])
x_before = x.copy()
checks.check(numerical_gradient, (lambda v: np.sum(v**3), x), 3 * x**2, rtol=1e-6, atol=1e-8,
             mistakes=mistakes.for_exercise("numerical_gradient"))
check_x_kept(x, x_before)
checks.ok("numerical_gradient gives 3x² for Σ x³.")

# %% [markdown]
# The grader also checks (2 points): a matrix argument (`f` must receive the
# matrix, not a flattened copy), a 0-d array, the step `h` you are given, a
# network's loss as `f`, and that `x` is left unchanged; against the reference
# `numerical_gradient` and the exact derivatives.

# %% nbgrader={"grade": true, "grade_id": "test_numerical_gradient_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("09_ffn_module", "test_numerical_gradient_hidden")
A = rng.normal(size=(3, 4))
W = rng.normal(size=(4, 2))
W_before = W.copy()


def f_matrix(M):
    return float(np.sum((A @ M) ** 2))  # needs M with its shape (4, 2)


checks.check(numerical_gradient, (f_matrix, W), 2 * A.T @ (A @ W), rtol=1e-6, atol=1e-8,
             mistakes=mistakes.for_exercise("numerical_gradient"))
checks.check(numerical_gradient, (f_matrix, W), reference.numerical_gradient(f_matrix, W), rtol=1e-7, atol=1e-9,
             mistakes=mistakes.for_exercise("numerical_gradient"))
check_x_kept(W, W_before)
checks.check(numerical_gradient, (lambda u: float(np.sum(u**3)), np.array(2.0)), np.array(12.0), rtol=1e-6, atol=1e-8,
             mistakes=mistakes.for_exercise("numerical_gradient"))
v = np.array([0.5, 1.0, -1.5])


def f_exp(u):
    return float(np.sum(np.exp(u)))


for h in (1e-2, 1e-3):  # the h² error of a larger step is visible: the result must follow h
    checks.check(numerical_gradient, (f_exp, v, h), reference.numerical_gradient(f_exp, v, h), rtol=1e-8,
                 atol=1e-10, mistakes=mistakes.for_exercise("numerical_gradient"))
net = with_params(reference.FeedForwardNetwork(3, 4), W2_EX.params)
G = np.array([1.0, -2.0, 0.5])
checks.check(numerical_gradient, (lambda x_: float(np.sum(G * net(x_))), W2_EX.x), net.backward(W2_EX.x, G)["x"],
             rtol=1e-6, atol=1e-8, mistakes=mistakes.for_exercise("numerical_gradient"))
checks.ok("numerical_gradient works for any shape and step.")
### END HIDDEN TESTS

# %% [markdown]
# ## 7. The gradient check
#
# A **gradient check** compares an analytic gradient $a$ (from `backward`) with a
# numerical one $n$, one parameter at a time, by the relative error
#
# $$\mathrm{rel}(a, n) = \frac{|a - n|}{\max(|a| + |n|,\ \texttt{tiny})},$$
#
# where $|\cdot|$ is the Euclidean norm of the whole array (`reference.relative_error`).
# It is 0 when both are 0 (`tiny` $\approx 2.2 \times 10^{-308}$ only prevents $0/0$)
# and at most 1. Taking it entry by entry is tempting but fragile: an entry far
# below the centred difference's noise floor, about $\varepsilon |L| / h \approx
# 10^{-11} |L|$, comes out as 0 numerically and scores 1 though it is right. With
# $h = 10^{-5}$ in float64:
#
# | rel | verdict |
# |---|---|
# | $\le 10^{-7}$ | the gradient is right |
# | between $10^{-7}$ and $10^{-2}$ | look closer: often a kink, such as a ReLU input within $h$ of 0 |
# | $> 10^{-2}$ | the gradient is wrong |
#
# **Forecast.** Run on W-2's network with two tokens, will the check pass? And
# for a backward pass that forgot ReLU's mask?
#
# **Step.** First yours: your model's `backward` against your own
# `numerical_gradient` of $L = \sum G \odot \mathrm{model}(x)$, parameter by
# parameter, on W-2's network with two tokens. (Until both are written, the cell
# says which one is missing.)

# %%
from ffn_helpers import yours

x_yours = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]])
G_yours = np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
with yours.attempt("The gradient check of your module"):
    your_model = with_params(FeedForwardNetwork(3, 4), W2_EX.params)
    at = {"W1": your_model.W1, "b1": your_model.b1, "W2": your_model.W2, "b2": your_model.b2, "x": x_yours}
    print("your backward against your numerical gradient, W-2 with two tokens:")
    yours.print_check(yours.gradient_check(your_model.backward(x_yours, G_yours),
                                           yours.model_loss_at(your_model, x_yours, G_yours), numerical_gradient, at))

# %% [markdown]
# **Step.** The same check with the course's `backward` and
# `reference.numerical_gradients`, whose numbers the text below quotes, then a
# backward pass without the mask, written out.

# %%
def verdict(rel):
    if rel <= reference.GRAD_CHECK_GOOD:
        return "right"
    return "WRONG" if rel > reference.GRAD_CHECK_WRONG else "look closer"


x_check = np.stack([W2_EX.x, [-0.6, 0.2, 0.9]])
G_check = np.array([[1.0, -2.0, 0.5], [0.5, 1.0, -1.0]])
print("pre-activations (none within h of 0):\n", w2_net.trace(x_check).z)
numeric = reference.numerical_gradients(w2_net, x_check, G_check)
analytic = w2_net.backward(x_check, G_check)
print("\nreference backward:")
for name in analytic:
    rel = reference.relative_error(analytic[name], numeric[name])
    print(f"  {name:>2}: rel = {rel:.1e}  -> {verdict(rel)}")
worst_rel = max(reference.relative_error(analytic[k], numeric[k]) for k in analytic)
print(f"  largest: {worst_rel:.1e}")


def backward_without_mask(model, x, G):
    """A broken backward pass: ∂L/∂z = G W2ᵀ, with ReLU's derivative left out."""
    h = np.maximum(x @ model.W1 + model.b1, 0.0)
    dz = G @ model.W2.T  # should be multiplied by (z > 0)
    return {"W1": x.T @ dz, "b1": dz.sum(axis=0), "W2": h.T @ G, "b2": G.sum(axis=0), "x": dz @ model.W1.T}


broken = backward_without_mask(w2_net, x_check, G_check)
print("\nbackward without the mask:")
for name in broken:
    rel = reference.relative_error(broken[name], numeric[name])
    print(f"  {name:>2}: rel = {rel:.1e}  -> {verdict(rel)}")

# %% [markdown]
# **Why.** The reference agrees with the centred differences to the largest
# relative error printed above, of the size of the $h^2$ and rounding errors;
# its last digits depend on the machine's rounding, so the check below asserts
# only a bound, $10^{-10}$, far inside the $10^{-7}$ of a right gradient. Without the mask, the gradient flows
# back through the unit that is off, so $\partial L/\partial W_1$,
# $\partial L/\partial b_1$ and $\partial L/\partial x$ are wrong while the output
# layer's gradients, which do not involve $\sigma'$, still pass: a gradient
# check tells you *which* parameter to look at.
#
# Your table, the first above, ran the same check on your class with your own
# numerical gradient. Where it reads WRONG, the check cannot say which of your
# two functions is wrong, only that they disagree: each has its own checks
# (sections 4 and 6), and the course's pair here shows what two right ones give.
#
# **Verify.**

# %%
assert worst_rel < 1e-10 and reference.GRAD_CHECK_GOOD == 1e-7
assert all(reference.relative_error(broken[k], numeric[k]) > reference.GRAD_CHECK_WRONG for k in ("W1", "b1", "x"))
assert all(reference.relative_error(broken[k], numeric[k]) <= reference.GRAD_CHECK_GOOD for k in ("W2", "b2"))
print("The reference passes; the maskless backward fails on W1, b1 and x only.")

# %% [markdown]
# ### A dead unit, and a kink
#
# **Forecast.** For W-2's single token, unit 1 is off. What do the *numerical*
# gradients of its weights show? And at W-3's input, where two pre-activations
# are exactly 0 (case C), what does the centred difference give for $b_1$?
#
# **Step.** The figure shows the dead unit; the cell below computes both cases.

# %%
plots.ffn_dataflow(W2_EX.x, *W2_EX.params, title="W-2: unit 1 is off (z = -0.62) for this input")

# %% [markdown]
# *Figure: W-2's token flowing through the $3 \to 4 \to 3$ network; the grey
# hidden unit has $z_1 = -0.62$, so $h_1 = 0$: it passes nothing forward and,
# as the numbers below show, receives no gradient.*

# %%
numeric_one = reference.numerical_gradients(w2_net, W2_EX.x, G_ex)
print("dead unit 1, numerically:  ∂L/∂W1[:, 1] =", numeric_one["W1"][:, 1], "  ∂L/∂b1[1] =", numeric_one["b1"][1],
      "  ∂L/∂W2[1] =", numeric_one["W2"][1])

w3_net = with_params(reference.FeedForwardNetwork(2, 4), W3_EX.params)
G3 = np.array([1.0, 1.0])
print("\nW-3: z =", w3_net.trace(W3_EX.x).z)
a3, n3 = w3_net.backward(W3_EX.x, G3)["b1"], reference.numerical_gradients(w3_net, W3_EX.x, G3)["b1"]
print("∂L/∂b1 analytic  =", a3)
print("∂L/∂b1 numerical =", n3)
print("rel, per entry   =", reference.relative_error(a3, n3, elementwise=True))
print(f"rel, whole b1    = {reference.relative_error(a3, n3):.2f}")

# %% [markdown]
# **Why.** Nudging the weights of a unit that sits at $z = -0.62$ by $\pm 10^{-5}$
# leaves it off, so $L$ does not change at all: the numerical gradient is exactly
# 0, like the analytic one. At an exact zero the two disagree: the centred
# difference averages the one-sided slopes, 0 on the left and $\partial L/\partial h$
# on the right, and gets half of $\partial L/\partial h$, while `backward` uses
# ReLU's convention $\mathrm{ReLU}'(0) = 0$. Entry by entry the relative error is 1,
# and for the whole of $b_1$ it is far above $10^{-2}$, yet neither is a bug: the
# derivative does not exist there. A failed check at a point of
# non-differentiability says "move the test point", not "fix the code".
#
# **Verify.**

# %%
assert np.array_equal(numeric_one["W1"][:, 1], np.zeros(3)) and numeric_one["b1"][1] == 0.0
assert np.array_equal(numeric_one["W2"][1], np.zeros(3))
zero_units = w3_net.trace(W3_EX.x).z == 0
assert zero_units.tolist() == [False, True, True, False]
assert np.all(a3[zero_units] == 0) and np.allclose(n3[zero_units], 0.5 * (W3_EX.W2 @ G3)[zero_units], atol=1e-9)
assert np.all(reference.relative_error(a3, n3, elementwise=True)[zero_units] == 1.0)
assert reference.relative_error(a3, n3) > reference.GRAD_CHECK_WRONG
print("The dead unit's gradients are exactly 0 both ways; at z = 0 the centred difference gives half the slope.")

# %% [markdown]
# ### Optional: PyTorch's autograd, as a second opinion
#
# If PyTorch is installed where this notebook runs, the cell below computes the
# gradients of $L = \sum G \odot \mathrm{FFN}(x)$ with autograd, in float64,
# for W-2's network with the two tokens above, with ReLU and with GELU, and
# compares them with your model's `backward`. torch is not part of the course's
# environment; without it the cell says so in one line and moves on.

# %%
from ffn_helpers import torch_check

torch, why_not = torch_check.load()
if torch is None:
    print(torch_check.skipped(why_not))
else:
    with yours.attempt("The PyTorch cross-check"):
        print(f"PyTorch {torch.__version__}: autograd's gradients against your model's backward (float64)")
        agreed = []
        for activation in ("relu", "gelu"):
            model_torch = with_params(FeedForwardNetwork(3, 4, activation=activation), W2_EX.params)
            agreed += torch_check.compare(model_torch.backward(x_check, G_check), torch_check.autograd_ffn(
                torch, x_check, G_check, *W2_EX.params, activation), f"{activation} ").values()
        print("all agree" if all(agreed) else "some differ: see the lines above")

# %% [markdown]
# ## Summary
#
# - A module owns its parameters: Xavier-normal weights with
#   $\mathrm{std} = \sqrt{2/(d_\text{model} + d_\text{ff})}$, drawn from a seeded generator
#   in a fixed order; zero biases or none. Libraries differ (PyTorch's uniform
#   fan-in rule, GPT-2's fixed 0.02, He for ReLU); the rules scaled by the width
#   (the fan-in, or for Xavier the fan-in plus the fan-out, which moves with it
#   while $d_\text{ff}/d_\text{model}$ is fixed) keep the hidden spread the same at every width. 512/2048 has 2,099,712 parameters.
# - The forward pass is two matrix products and an activation, for any batch shape.
# - The backward pass runs the chain rule in reverse; parameter gradients sum over
#   tokens, $\sigma'(z)$ gates what reaches $W_1$, $b_1$ and $x$, and a unit that is
#   off receives nothing.
# - The class is a thin shell: it keeps the parameters and the activation, and each
#   method applies one of those functions to the current parameters.
# - A centred-difference gradient check catches wrong gradients (rel $> 10^{-2}$)
#   and points at the parameter; at a ReLU kink it disagrees by design.
#
# That completes the ten scenarios. Three notebooks go beyond them, starting with
# [10 · The FFN as a key-value memory](10_key_value_memory.ipynb): what an FFN's weights can store.
# Or back to the map: [00 · Start here](00_start_here.ipynb).
