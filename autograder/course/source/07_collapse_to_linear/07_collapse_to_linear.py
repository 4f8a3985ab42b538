# %% [markdown]
# # 07 · Collapse to linear: why the FFN needs its activation
#
# Take the activation out of the FFN and what is left,
#
# $$x \mapsto (x W_1 + b_1)\, W_2 + b_2,$$
#
# is two *affine* maps in a row. A map $f$ is **affine** when $f(x) = x W + b$
# for some matrix $W$ and vector $b$ (it is *linear* when, moreover, $b = 0$).
# Two affine maps in a row are one affine map:
#
# $$(x W_1 + b_1)\, W_2 + b_2 = x\, \underbrace{W_1 W_2}_{W} + \underbrace{b_1 W_2 + b_2}_{b}.$$
#
# So without $\sigma$, the hidden layer and its $d_\text{ff}$ units add nothing
# that a single $d_\text{model} \times d_\text{model}$ layer could not do. This
# notebook (scenario I) folds the two maps into one, shows that ReLU
# breaks the fold with a concrete input, asks you to write a test of
# affinity, and counts the linear pieces a ReLU FFN is made of.
#
# | symbol | shape | meaning |
# |---|---|---|
# | $W_1, b_1$ | $(d_\text{model}, d_\text{ff})$, $(d_\text{ff},)$ | the first layer |
# | $W_2, b_2$ | $(d_\text{ff}, d_\text{out})$, $(d_\text{out},)$ | the second layer ($d_\text{out} = d_\text{model}$ in a transformer) |
# | $W, b$ | $(d_\text{model}, d_\text{out})$, $(d_\text{out},)$ | the single affine map they collapse to |
# | $z = x W_1 + b_1$, $h = \sigma(z)$ | $(d_\text{ff},)$ | pre-activation and hidden values, as before |
#
# **Exercises** (10 points): `collapse_linear` (5), `is_affine` (5).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import itertools
import math

import numpy as np

from ffn_helpers import checks, collapse_to_linear, examples, ffn_forward, mistakes, plots

W7 = examples.W_7  # worked example W-7


def check_collapse(fn, args, expected_W, expected_b):
    """Test cells' helper: fn(*args) must return the pair (W, b); each is compared on its own."""
    result = checks.call(fn, *args)
    try:
        W, b = result
    except (TypeError, ValueError):
        raise checks.wrong_result(fn.__name__, "a pair (W, b)", result) from None
    checks.assert_close(W, expected_W, name="W", mistakes=mistakes.for_exercise("collapse_linear", "W"), args=args)
    checks.assert_close(b, expected_b, name="b", mistakes=mistakes.for_exercise("collapse_linear", "b"), args=args)
    return W, b


def check_verdicts(fn, cases, catalogue=()):
    """Test cells' helper: `fn(*args)` must answer `expected` (True or False) for each (args, expected, case).

    fn answers every case; on the first wrong verdict, a catalogued mistake is named where it gives fn's verdict
    on every case of the list (checks.check_cases): one verdict alone singles out no mistake.
    """
    checks.check_cases(fn, [(args, expected) for args, expected, _ in cases], exact=True, mistakes=catalogue,
                       about=[case for _, _, case in cases])


# %% [markdown]
# ## 1. Folding two affine maps into one
#
# Worked example W-7 has $d_\text{model} = d_\text{ff} = 2$ and
#
# $$W_1 = \begin{bmatrix} 1 & 2 \\ 0 & 1 \end{bmatrix},\quad b_1 = \begin{bmatrix} 1 & 0 \end{bmatrix},$$
#
# $$W_2 = \begin{bmatrix} 1 & 0 \\ 1 & 1 \end{bmatrix},\quad b_2 = \begin{bmatrix} 0 & 1 \end{bmatrix}.$$
#
# **Forecast.** Compute $W = W_1 W_2$ and $b = b_1 W_2 + b_2$ by hand. Then
# push $x = [3, -1]$ through both routes: two steps, and the single map $x W + b$.
#
# **Step.**

# %%
W, b = collapse_to_linear(*W7.params)
x = W7.x
two_steps = (x @ W7.W1 + W7.b1) @ W7.W2 + W7.b2
one_step = x @ W + b
print("W =\n", W, "\nb =", b)
print("two steps:", two_steps, "  one step:", one_step)

# %% [markdown]
# **Why.** Matrix multiplication is associative, $(x W_1) W_2 = x (W_1 W_2)$,
# and it distributes over the sum, so the bias $b_1$ travels through $W_2$ as
# well: it reaches the output as $b_1 W_2$, not as $b_1$.
#
# **Verify.** Against W-7, and numerically on many random inputs with random
# weights of other shapes ($d_\text{model} = 3$, $d_\text{ff} = 5$).

# %%
assert np.array_equal(W, W7.extra["W"]) and np.array_equal(b, W7.extra["b"])
assert np.array_equal(two_steps, W7.y) and np.array_equal(one_step, W7.y)  # [9, 6], exactly
rng = np.random.default_rng(7)
W1_r, b1_r = rng.normal(size=(3, 5)), rng.normal(size=5)
W2_r, b2_r = rng.normal(size=(5, 3)), rng.normal(size=3)
X_r = rng.normal(size=(1000, 3))
W_r, b_r = collapse_to_linear(W1_r, b1_r, W2_r, b2_r)
no_sigma = ffn_forward(X_r, W1_r, b1_r, W2_r, b2_r, activation="identity")
assert np.allclose(X_r @ W_r + b_r, no_sigma, rtol=1e-12, atol=1e-12)
print(f"Both routes give {one_step} for x = {x}; on 1000 random inputs they agree to "
      f"{np.abs(X_r @ W_r + b_r - no_sigma).max():.1e}.")

# %% [markdown]
# The fold also bounds what the stack can express: $W = W_1 W_2$ has rank at
# most $\min(d_\text{model}, d_\text{ff}, d_\text{out})$. Widening the hidden
# layer beyond $d_\text{model}$ buys nothing without $\sigma$, and narrowing it
# below $d_\text{model}$ squeezes every input through a $d_\text{ff}$-dimensional
# bottleneck:

# %%
W1_thin, W2_thin = rng.normal(size=(4, 2)), rng.normal(size=(2, 4))
W_thin, _ = collapse_to_linear(W1_thin, np.zeros(2), W2_thin, np.zeros(4))
assert np.linalg.matrix_rank(W_thin) == 2
print(f"d_model = 4, d_ff = 2: W is {W_thin.shape[0]}×{W_thin.shape[1]} but has rank {np.linalg.matrix_rank(W_thin)}.")

# %% [markdown]
# ### Exercise: `collapse_linear`
#
# Write `collapse_linear(W1, b1, W2, b2)`, returning the pair `(W, b)` of the
# single affine map equal to $x \mapsto (x W_1 + b_1) W_2 + b_2$. The shapes need
# not be square: $W_1$ is $(d_\text{model}, d_\text{ff})$ and $W_2$ is
# $(d_\text{ff}, d_\text{out})$. Return float64 arrays; the check compares them
# with the reference to a relative $10^{-7}$.
#
# **Forecast.** What shape does $W$ have when $d_\text{model} = 3$,
# $d_\text{ff} = 5$, $d_\text{out} = 4$?

# %% nbgrader={"grade": false, "grade_id": "collapse_linear", "locked": false, "schema_version": 3, "solution": true, "task": false}
def collapse_linear(W1, b1, W2, b2):
    """The affine map (W, b) equal to x -> (x W1 + b1) W2 + b2.

    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_out), b2: (d_out,) -> W: (d_model, d_out), b: (d_out,).
    """
    ### BEGIN SOLUTION
    W1, b1, W2, b2 = (np.asarray(a, dtype=float) for a in (W1, b1, W2, b2))
    return W1 @ W2, b1 @ W2 + b2
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for collapse_linear</summary>
#
# Substitute the first map into the second: $(x W_1 + b_1) W_2 + b_2$ and
# multiply out the brackets. What multiplies $x$ is $W$; what is left over is
# $b$.
#
# <details><summary>Hint 2 of 2 for collapse_linear</summary>
#
# Multiplying out gives $x (W_1 W_2) + (b_1 W_2 + b_2)$. With `@` for every
# matrix product, $W = W_1 W_2$ has shape $(d_\text{model}, d_\text{out})$, and
# $b_1 W_2$ is a row vector times a matrix, shape $(d_\text{out},)$. Order
# matters: $W_2 W_1$ is not the same map.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** W-7, and its input $x = [3, -1]$ through your map. (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_collapse_linear", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
W_got, b_got = check_collapse(collapse_linear, W7.params, W7.extra["W"], W7.extra["b"])
checks.assert_close(W7.x @ np.asarray(W_got) + np.asarray(b_got), W7.y, name="x W + b for x = [3, -1]")
checks.ok("collapse_linear folds W-7 into W = [[3, 2], [1, 1]], b = [1, 1].")

# %% [markdown]
# W-7 has a blind spot: there $b_1 + b_2 = [1, 1]$ happens to equal $b_1 W_2 +
# b_2$, so it cannot catch the mistake of skipping $W_2$ for the bias.
#
# The grader also checks (3 points): random square weights (where $W_2 W_1$ and
# $b_1 + b_2$ have the right shapes but the wrong values), non-square ones
# ($d_\text{model} = 3$, $d_\text{ff} = 5$, and $d_\text{out} = 3$ or $4$), zero
# biases, and that the collapsed map agrees with the two-step one on random inputs.

# %% nbgrader={"grade": true, "grade_id": "test_collapse_linear_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("07_collapse_to_linear", "test_collapse_linear_hidden")
for d_model, d_ff, d_out in [(4, 4, 4), (3, 5, 3), (3, 5, 4), (6, 2, 6), (1, 3, 1)]:
    params = (rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff),
              rng.normal(size=(d_ff, d_out)), rng.normal(size=d_out))
    W_exp, b_exp = collapse_to_linear(*params)
    W_got, b_got = check_collapse(collapse_linear, params, W_exp, b_exp)
    X_test = rng.normal(size=(20, d_model))
    W1_t, b1_t, W2_t, b2_t = params
    checks.assert_close(X_test @ np.asarray(W_got) + np.asarray(b_got), (X_test @ W1_t + b1_t) @ W2_t + b2_t,
                        name="x W + b on random inputs")
zero_b = (rng.normal(size=(3, 5)), np.zeros(5), rng.normal(size=(5, 3)), np.zeros(3))
check_collapse(collapse_linear, zero_b, zero_b[0] @ zero_b[2], np.zeros(3))
checks.ok("collapse_linear is right for every shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 2. ReLU breaks the fold
#
# Put ReLU back: $\mathrm{FFN}(x) = \mathrm{ReLU}(x W_1 + b_1) W_2 + b_2$. For
# $x = [3, -1]$ the pre-activation is $z = [4, 5]$: both entries are positive,
# ReLU changes nothing, and the FFN still gives $[9, 6]$. One input proves nothing.
#
# **Forecast.** Find an input $x$ where the FFN with ReLU and the collapsed map
# $x W + b$ disagree. (Hint: for $x = [x_0, x_1]$, $z = [x_0 + 1,\ 2 x_0 + x_1]$; you need a
# negative entry.)
#
# **Step.** Search the integer points of $[-3, 3]^2$, nearest to the origin
# first, and report the first disagreement.

# %%
grid = sorted(itertools.product(range(-3, 4), repeat=2), key=lambda p: (p[0] ** 2 + p[1] ** 2, p))
with_relu = {p: ffn_forward(np.array(p, dtype=float), *W7.params) for p in grid}
collapsed = {p: np.array(p, dtype=float) @ W + b for p in grid}
differ = [p for p in grid if not np.allclose(with_relu[p], collapsed[p])]
x_bad = np.array(differ[0], dtype=float)
z_bad = x_bad @ W7.W1 + W7.b1
print(f"{len(differ)} of {len(grid)} grid points disagree; the nearest to the origin is x = {x_bad}")
print(f"  z = x W1 + b1 = {z_bad}, ReLU(z) = {np.maximum(z_bad, 0)}")
print(f"  with ReLU: {with_relu[differ[0]]}   collapsed: {collapsed[differ[0]]}")

# %% [markdown]
# **Why.** At $x = [-1, 0]$ the pre-activation is $z = [0, -2]$. ReLU sets the
# $-2$ to 0, so the second hidden unit contributes nothing, while the collapsed
# map still adds $-2$ times the second row of $W_2$, that is $[-2, -2]$. (The
# first entry is exactly 0, where ReLU and the identity agree.) ReLU is affine
# on each side of $z_j = 0$ but not across it, and that is what lets the FFN bend.
#
# In general the collapsed map minus the FFN is the sum of what the negative
# pre-activations would have added,
#
# $$x W + b - \mathrm{FFN}(x) = \sum_{j:\ z_j < 0} z_j\, W_2[j],$$
#
# so the two disagree exactly where that sum is not zero. A negative $z_j$ alone
# is not enough: a unit whose row $W_2[j]$ is zero, or negative terms that cancel,
# leave the output unchanged. For W-7 the rows of $W_2$ are independent, so here
# any negative $z_j$ shows.
#
# **Verify.** The counterexample, and a second way to see it: an affine map
# sends the midpoint of two inputs to the midpoint of their outputs; the ReLU
# FFN does not.

# %%
assert np.array_equal(x_bad, [-1.0, 0.0]) and np.array_equal(z_bad, [0.0, -2.0])
assert np.array_equal(with_relu[differ[0]], [0.0, 1.0]) and np.array_equal(collapsed[differ[0]], [-2.0, -1.0])
assert np.array_equal(collapsed[differ[0]] - with_relu[differ[0]], z_bad[1] * W7.W2[1])
assert np.array_equal(ffn_forward(W7.x, *W7.params), W7.y)  # at x = [3, -1] ReLU changes nothing
for point in grid:  # the identity above, on every grid point
    z_point = np.array(point, dtype=float) @ W7.W1 + W7.b1
    lost = sum(z_point[j] * W7.W2[j] for j in range(len(z_point)) if z_point[j] < 0)
    assert np.allclose(collapsed[point] - with_relu[point], lost, rtol=0, atol=1e-12)
# W-7's rows of W2 are independent: the maps differ exactly where some z_j < 0.
assert set(differ) == {p for p in grid if np.any(np.array(p, dtype=float) @ W7.W1 + W7.b1 < 0)}
# Zero the second row of W2: wherever only unit 1 is negative, nothing differs any more.
W2_dead_row = W7.W2 * np.array([[1.0], [0.0]])
W_dead, b_dead = W7.W1 @ W2_dead_row, W7.b1 @ W2_dead_row + W7.b2
only_unit_1 = [np.array(p, dtype=float) for p in grid
               if ((np.array(p, dtype=float) @ W7.W1 + W7.b1) < 0).tolist() == [False, True]]
assert len(only_unit_1) == 9  # z_1 = 2 x_0 + x_1 < 0 while z_0 = x_0 + 1 >= 0
assert all(np.allclose(ffn_forward(v, W7.W1, W7.b1, W2_dead_row, W7.b2), v @ W_dead + b_dead) for v in only_unit_1)


def ffn_w7(v):
    return ffn_forward(v, *W7.params)


p, q = np.array([3.0, -1.0]), np.array([-3.0, 1.0])
print(f"FFN(midpoint) = {ffn_w7((p + q) / 2)}, midpoint of FFN(p), FFN(q) = {(ffn_w7(p) + ffn_w7(q)) / 2}")
assert not np.allclose(ffn_w7((p + q) / 2), (ffn_w7(p) + ffn_w7(q)) / 2)

# %% [markdown]
# ## 3. Exercise: a test of affinity
#
# Write `is_affine(f, d_in, n_trials=20, seed=0)`. Here `f` takes one input
# vector of shape `(d_in,)` and returns an array (or a number); return `True`
# when `f` passes `n_trials` random tests of affinity, `False` as soon as one fails.
#
# A good test uses the property above in general form: $f$ is affine exactly
# when, for all $x$, $y$ and every real $a$,
#
# $$f(a x + (1 - a) y) = a f(x) + (1 - a) f(y).$$
#
# - Draw $x$, $y$ and $a$ with `np.random.default_rng(seed)`, so the answer is reproducible.
# - **Sample on several scales**, say with norms from $10^{-2}$ to $10^{3}$: a
#   function can be affine near the origin and bend far from it.
# - Take $a$ outside $[0, 1]$ sometimes too.
# - Compare with a tolerance relative to the size of the values, e.g.
#   `np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1 + scale))`: exact `==`
#   fails on rounding, and a fixed `atol` is meaningless when outputs are large.
# - Do not test $f(x + y) = f(x) + f(y)$: that is linearity, and an affine map with
#   $b \ne 0$ fails it.
#
# **Forecast.** Is a constant function, $f(x) = c$, affine?

# %% nbgrader={"grade": false, "grade_id": "is_affine", "locked": false, "schema_version": 3, "solution": true, "task": false}
def is_affine(f, d_in, n_trials=20, seed=0):
    """Does f pass n_trials random tests of f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)?

    f: (d_in,) -> array or number. Seeded, so the answer is reproducible.
    """
    ### BEGIN SOLUTION
    rng = np.random.default_rng(seed)
    for _ in range(n_trials):
        scale = 10.0 ** rng.uniform(-2, 3)  # several scales: a bend far from 0 must not hide
        x, y = rng.normal(scale=scale, size=(2, d_in))
        a = rng.uniform(-1.0, 2.0)
        fx, fy = np.asarray(f(x), dtype=float), np.asarray(f(y), dtype=float)
        lhs = np.asarray(f(a * x + (1 - a) * y), dtype=float)
        rhs = a * fx + (1 - a) * fy
        size = max(np.abs(fx).max(), np.abs(fy).max(), np.abs(lhs).max())
        if not np.allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1.0 + size)):
            return False
    return True
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for is_affine</summary>
#
# An affine map sends a mixture of two points to the same mixture of their
# images: $f(a x + (1 - a) y) = a f(x) + (1 - a) f(y)$. Test that equation on
# random $x$, $y$ and $a$, `n_trials` times, and answer `False` as soon as it
# fails once.
#
# <details><summary>Hint 2 of 3 for is_affine</summary>
#
# Make one generator from `seed` before the loop. In each trial draw a scale
# (ten to a power drawn uniformly from $-2$ to $3$, say), two random points of
# that scale with `d_in` entries, and an $a$ that can fall outside $[0, 1]$ (say
# from $-1$ to 2). Evaluate `f` three times: at $x$, at $y$ and at the mixture,
# each turned into a float array.
#
# <details><summary>Hint 3 of 3 for is_affine</summary>
#
# Compare the value at the mixture with $a f(x) + (1 - a) f(y)$ using
# `np.allclose` with `rtol=1e-9` and an `atol` scaled by the largest absolute
# value involved, `1e-9 * (1 + size)`: outputs of size $10^6$ carry rounding far
# above a fixed `1e-9`. Return `False` on the first trial that fails, `True`
# after all of them.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-7's two layers without σ and their collapsed map (affine), and
# W-7's FFN with ReLU (not affine). (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_is_affine", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
check_verdicts(is_affine, [
    ((lambda v: (v @ W7.W1 + W7.b1) @ W7.W2 + W7.b2, 2), True, "W-7's two layers with no activation, (x W1 + b1) W2 + b2"),
    ((lambda v: v @ W7.extra["W"] + W7.extra["b"], 2), True, "W-7's collapsed map x W + b, with b = [1, 1]"),
    ((lambda v: ffn_forward(v, *W7.params), 2), False, "W-7's FFN with ReLU"),
], mistakes.for_exercise("is_affine"))
checks.ok("is_affine tells W-7 with and without ReLU apart.")

# %% [markdown]
# The grader also checks (3 points): random affine maps (also with a large
# bias, with outputs near $10^{10}$, and to a single number), a constant function, the identity, a random
# ReLU FFN, a quadratic, and a function that is affine near the origin but bends
# where $x_0 > 20$; each with a few values of `n_trials` and `seed`.

# %% nbgrader={"grade": true, "grade_id": "test_is_affine_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("07_collapse_to_linear", "test_is_affine_hidden")
A, c = rng.normal(size=(3, 4)), rng.normal(size=4)
w = rng.normal(size=3)
W1_t, b1_t = rng.normal(size=(3, 8)), rng.normal(size=8)
W2_t, b2_t = rng.normal(size=(8, 3)), rng.normal(size=3)
cases = [
    (lambda v: v @ A + c, True, "a random affine map x A + c from 3 to 4 numbers"),
    (lambda v: v @ A + 1e6 * c, True, "an affine map with a large bias, x A + 10⁶·c"),
    (lambda v: 1e7 * (v @ A) + 1e10 * c, True, "an affine map to outputs near 10¹⁰, 10⁷·x A + 10¹⁰·c, whose "
     "rounding errors alone exceed any fixed atol such as 1e-9"),
    (lambda v: float(v @ w) - 3.0, True, "an affine map to one number, x·w - 3"),
    (lambda v: np.array([2.0, -1.0]), True, "a constant function"),
    (lambda v: np.array(v, dtype=float), True, "the identity"),
    (lambda v: ffn_forward(v, W1_t, b1_t, W2_t, b2_t), False, "a random 3 → 8 → 3 ReLU FFN"),
    (lambda v: np.array([v @ v, v[0]]), False, "a quadratic, [x·x, x_0]"),
    (lambda v: v @ A + c + np.maximum(v[0] - 20.0, 0.0), False,
     "x A + c + ReLU(x_0 - 20): affine near the origin, bends where x_0 > 20"),
]
check_verdicts(is_affine, [((f, 3, n_trials, seed), truth, f"{case} (n_trials={n_trials}, seed={seed})")
                           for n_trials, seed in [(20, 0), (20, 1), (50, 7)] for f, truth, case in cases],
               mistakes.for_exercise("is_affine"))
checks.ok("is_affine is right on every hidden case.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. How many linear pieces does a ReLU FFN have?
#
# With ReLU, the FFN is no longer one affine map, but it is affine on pieces:
# fix which hidden units are active ($z_j > 0$) and which are not, and on the set
# of inputs with that *activation pattern* ReLU acts as a fixed 0/1 mask, so the
# FFN is affine there. The boundaries between pieces are where some $z_j = x
# W_{1,:j} + b_{1,j}$ crosses 0: for each hidden unit $j$, a point ($d_\text{model}
# = 1$), a line ($d_\text{model} = 2$), or a hyperplane in general.
#
# ### One input dimension
#
# **Forecast.** A 1 → 5 → 1 ReLU FFN: how many linear pieces can its graph have?
#
# **Step.** Five hidden units, each switching at its own point $x = -b_{1,j} / W_{1,j}$.

# %%
W1_1d = np.array([[1.0, -1.0, 0.5, 2.0, -1.5]])
kinks = np.array([-3.0, -1.5, 0.0, 1.0, 2.5])  # where each unit switches on or off
b1_1d = -kinks * W1_1d[0]
W2_1d = np.array([[1.0], [0.8], [-1.5], [0.7], [1.2]])
b2_1d = np.array([0.5])
x_line = np.linspace(-4.5, 4.0, 1701)[:, None]  # a step of 0.005: every kink is a grid point
y_relu = ffn_forward(x_line, W1_1d, b1_1d, W2_1d, b2_1d)[:, 0]
y_none = ffn_forward(x_line, W1_1d, b1_1d, W2_1d, b2_1d, activation="identity")[:, 0]
slopes = np.diff(y_relu) / np.diff(x_line[:, 0])
# A new piece starts wherever the slope of one grid step differs from the previous step's.
n_pieces = 1 + int(np.sum(~np.isclose(slopes[1:], slopes[:-1], rtol=1e-9, atol=1e-9)))
print(f"{len(kinks)} hidden units, {n_pieces} linear pieces on the plotted range")


def one_d_figure():
    title = f"A 1 → {len(kinks)} → 1 FFN: {n_pieces} linear pieces with ReLU, one without"

    def draw_on(fig):
        ax = fig.subplots()
        ax.plot(x_line[:, 0], y_relu, color=plots.BLUE, linewidth=2.2, label="with ReLU: piecewise linear")
        ax.plot(x_line[:, 0], y_none, color=plots.ORANGE, linewidth=2, linestyle="--",
                label="without σ: one straight line")
        for k in kinks:
            ax.axvline(k, color=plots.GREY, linewidth=1, linestyle=":")
        ax.plot(kinks, ffn_forward(kinks[:, None], W1_1d, b1_1d, W2_1d, b2_1d)[:, 0], "o", color=plots.VERMILION,
                label="a unit switches: $z_j = 0$")
        ax.set_xlabel("input x")
        ax.set_ylabel("FFN(x)")
        ax.set_title(title)
        ax.legend(frameon=False)

    return plots.custom_figure(draw_on, size=(8, 4.2), alt=(
        f"Line plot: {title}. FFN(x) for x from {plots.fmt(x_line[0, 0])} to {plots.fmt(x_line[-1, 0])}: with ReLU "
        f"a line that bends into {n_pieces} straight pieces (solid), without σ one straight line (dashed). Dots "
        "mark where a unit switches, at x = " + ", ".join(plots.fmt(k) for k in sorted(kinks)) + "."))


one_d_figure()

# %% [markdown]
# *Figure: the output of a 1 → 5 → 1 FFN over its input, with ReLU (solid) and
# with the activation removed (dashed); dotted lines and dots mark the five
# points where a hidden unit switches.*
#
# **Why.** Between two neighbouring switch points no unit changes state, so the
# graph is a straight segment; at each switch point the slope changes by $\pm
# W_{1,j} W_{2,j}$. Five points cut the line into at most six pieces: in one
# dimension, $d_\text{ff}$ units give at most $d_\text{ff} + 1$ pieces.
#
# **Verify.**

# %%
assert n_pieces == len(kinks) + 1 == 6
assert np.allclose(np.diff(y_none, 2), 0, atol=1e-12)  # no σ: a single straight line
print("Six pieces for five units; without σ, one line.")

# %% [markdown]
# ### Two input dimensions
#
# With $d_\text{model} = 2$, each hidden unit switches along a line in the input
# plane, and $d_\text{ff}$ lines cut the plane into regions. A claim found in
# many places says a ReLU layer with $d_\text{ff}$ units has $2^{d_\text{ff}}$
# linear regions. That number counts the on/off *patterns*; it is only an upper
# bound, and a loose one when the input has few dimensions. With input
# dimension $n$, $d_\text{ff}$ hyperplanes create at most
#
# $$\sum_{i=0}^{n} \binom{d_\text{ff}}{i}$$
#
# regions, with equality when the hyperplanes are in general position (as they
# are, almost surely, for random weights). For $n = 2$ and $d_\text{ff} = 6$: $1 + 6
# + 15 = 22$, against $2^6 = 64$ patterns.
#
# **Forecast.** Six random lines in the plane: how many regions do you expect to see?
#
# **Step.** Count the regions exactly. Every region of an arrangement of lines in
# general position has a corner where two lines cross; the four points just
# next to each crossing, one in each of its four corners, meet every region.
# Collect the activation patterns at those points.

# %%
rng = np.random.default_rng(203)  # a seed whose crossings spread out: every region is visible
d_ff_2d = 6
W1_2d, b1_2d = rng.normal(size=(2, d_ff_2d)), rng.normal(size=d_ff_2d)
normals = W1_2d.T  # unit j switches on the line normals[j] · x + b1[j] = 0
directions = np.stack([-normals[:, 1], normals[:, 0]], axis=1)  # along each line

crossings, patterns = [], set()
for j, k in itertools.combinations(range(d_ff_2d), 2):
    p = np.linalg.solve(normals[[j, k]], -b1_2d[[j, k]])
    crossings.append(p)
    z_p = p @ W1_2d + b1_2d
    others = [i for i in range(d_ff_2d) if i not in (j, k)]
    # A step small enough that no other line lies between p and the probe points.
    eps = 0.1 * min(abs(z_p[i]) / np.linalg.norm(normals[i]) for i in others) / np.sqrt(2)
    for s, t in itertools.product((-1, 1), repeat=2):
        probe = p + eps * (s * directions[j] / np.linalg.norm(directions[j])
                           + t * directions[k] / np.linalg.norm(directions[k]))
        patterns.add(tuple(probe @ W1_2d + b1_2d > 0))
crossings = np.array(crossings)
n_regions = len(patterns)
bound = sum(math.comb(d_ff_2d, i) for i in range(3))
print(f"{d_ff_2d} lines, {len(crossings)} crossings, {n_regions} regions; "
      f"the bound Σ C({d_ff_2d}, i), i ≤ 2, is {bound}; 2^{d_ff_2d} = {2**d_ff_2d}")

# %%
half_width = 1.25 * np.abs(crossings).max()  # every crossing, hence every region, is in the picture
grid_1d = np.linspace(-half_width, half_width, 301)
gx, gy = np.meshgrid(grid_1d, grid_1d)
active = np.stack([gx.ravel(), gy.ravel()], axis=1) @ W1_2d + b1_2d > 0
n_active = active.sum(axis=1).reshape(gx.shape)
grid_patterns = {tuple(row) for row in np.unique(active, axis=0)}


def regions_figure():
    title = f"A 2 → {d_ff_2d} ReLU layer: {n_regions} regions, not 2^{d_ff_2d} = {2**d_ff_2d}"

    def draw_on(fig):
        from matplotlib import colormaps  # drawing only: a graded run shows the figure by its `alt`
        from matplotlib.colors import BoundaryNorm
        from matplotlib.lines import Line2D

        ax = fig.subplots()
        levels = np.arange(d_ff_2d + 2) - 0.5
        cmap = colormaps["cividis"].resampled(d_ff_2d + 1)  # sequential, readable with colour-vision deficiencies
        mesh = ax.imshow(n_active, cmap=cmap, norm=BoundaryNorm(levels, cmap.N), origin="lower",
                         interpolation="nearest", extent=(-half_width, half_width, -half_width, half_width))
        t = np.linspace(-3 * half_width, 3 * half_width, 2)
        for j in range(d_ff_2d):
            p0 = -b1_2d[j] * normals[j] / (normals[j] @ normals[j])  # the point of line j nearest the origin
            u = directions[j] / np.linalg.norm(directions[j])
            ax.plot(p0[0] + t * u[0], p0[1] + t * u[1], color=plots.BLACK, linewidth=1.2)
        ax.plot(crossings[:, 0], crossings[:, 1], "o", color=plots.VERMILION, markersize=5)
        ax.set_xlim(-half_width, half_width)
        ax.set_ylim(-half_width, half_width)
        ax.set_aspect("equal")
        ax.set_xlabel("input feature $x_0$")
        ax.set_ylabel("input feature $x_1$")
        ax.set_title(title)
        bar = fig.colorbar(mesh, ax=ax, ticks=range(d_ff_2d + 1), shrink=0.8)
        bar.set_label("number of active hidden units")
        fig.legend(handles=[Line2D([], [], color=plots.BLACK, linewidth=1.2, label="a unit switches: $z_j = 0$"),
                            Line2D([], [], marker="o", linestyle="", color=plots.VERMILION, label="two lines cross")],
                   loc="outside lower center", ncols=2, frameon=False)

    return plots.custom_figure(draw_on, size=(7.2, 6.2), alt=(
        f"Map of the input plane, x_0 and x_1 from {plots.fmt(-half_width)} to {plots.fmt(half_width)}: {title}. "
        f"The shade gives the number of active hidden units, 0 to {d_ff_2d}; {d_ff_2d} black lines mark where a "
        f"unit switches and cross at {len(crossings)} points (dots). The lines cut the plane into {n_regions} "
        "regions."))


regions_figure()

# %% [markdown]
# *Figure: the input plane of a ReLU layer with 6 hidden units, coloured by how
# many units are active; each black line is where one unit switches, and the dots
# are the crossings. Neighbouring regions differ in exactly one unit, so they
# always differ in colour.*
#
# **Why.** Each new line crosses every earlier line once, so it is cut into
# (number of earlier lines + 1) pieces, and each piece splits one region in two.
# Starting from the single region of the empty plane, $d_\text{ff}$ lines give
# $1 + \sum_{m=0}^{d_\text{ff}-1} (m + 1) = 1 + d_\text{ff} + \binom{d_\text{ff}}{2}$
# regions, the $n = 2$ case of the sum. The other $64 - 22 = 42$ on/off patterns
# are realised by no input at all.
#
# **Verify.** The exact count meets the bound; the picture, which samples a grid,
# shows the same regions; and a table of the bound against $2^{d_\text{ff}}$.

# %%
assert n_regions == bound == 22 and 2**d_ff_2d == 64 and 2**d_ff_2d - n_regions == 42
assert grid_patterns <= patterns and len(grid_patterns) == n_regions
print(f"exact count {n_regions}, regions seen on the picture's grid {len(grid_patterns)}, bound {bound}")
print(f"\n{'d_ff':>5}{'n = 1':>8}{'n = 2':>8}{'n = 3':>8}{'2^d_ff':>8}")
for d in range(1, 11):
    print(f"{d:>5}" + "".join(f"{sum(math.comb(d, i) for i in range(n + 1)):>8}" for n in (1, 2, 3)) + f"{2**d:>8}")
assert all(sum(math.comb(d, i) for i in range(n + 1)) == 2**d for d in range(1, 11) for n in range(d, d + 2))

# %% [markdown]
# Only when the input dimension $n$ reaches $d_\text{ff}$ does the bound become
# $2^{d_\text{ff}}$. In a transformer $d_\text{ff} \approx 4 d_\text{model}$, so
# the patterns always outnumber the possible regions: most on/off combinations
# of the hidden units never occur for any input.
#
# ## Summary
#
# - Without an activation, $(x W_1 + b_1) W_2 + b_2 = x W + b$ with $W = W_1 W_2$
#   and $b = b_1 W_2 + b_2$: depth and width buy nothing.
# - One agreeing input proves nothing; ReLU breaks the fold where the negative
#   pre-activations' terms $\sum_{z_j < 0} z_j W_2[j]$ do not add up to zero.
# - Affinity is tested with affine combinations, on points of several scales.
# - A ReLU FFN is affine on regions; with input dimension $n$ there are at most
#   $\sum_{i \le n} \binom{d_\text{ff}}{i}$ of them, not $2^{d_\text{ff}}$.
#
# Next: [08 · Limiting behaviour](08_limiting_behaviour.ipynb).
