# %% [markdown]
# # 01 · One neuron and ReLU's three sign cases
#
# Before a whole layer, one hidden unit. Unit $j$ of the FFN's first layer reads
# a token $x \in \mathbb{R}^{d}$ (a row, $d = d_\text{model}$) through its own
# weights $w \in \mathbb{R}^{d}$ (column $j$ of $W_1$) and bias $b$ (entry $j$ of
# $b_1$), and passes the result through ReLU:
#
# $$z = x \cdot w + b = \sum_{i=1}^{d} x_i w_i + b,$$
#
# $$h = \mathrm{ReLU}(z) = \max(0, z).$$
#
# $z$ is the unit's **pre-activation**, $h$ its **output**. What ReLU does depends
# only on the sign of $z$, which gives the course's first three scenarios:
#
# | case | pre-activation | $\mathrm{ReLU}(z)$ | slope $\mathrm{ReLU}'(z)$ |
# |---|---|---|---|
# | **A** | $z > 0$ | $z$ (passed unchanged) | $1$ |
# | **B** | $z < 0$ | $0$ | $0$ |
# | **C** | $z = 0$ exactly | $0$ | undefined; $0$ by convention |
#
# You will write four functions: `preactivation`, `sign_case`, `relu` and
# `relu_grad`. Along the way: a wrong number that circulates in print, why
# "exactly zero" is hard to hit in floating point, and what a *dead* unit is.
# (10 points.)
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import math
from decimal import Decimal

import numpy as np

import ffn_helpers as ref  # the course's reference implementations
from ffn_helpers import checks, mistakes, plots, rounding
from ffn_helpers.examples import W_1

# %% [markdown]
# ## 1 · The pre-activation
#
# Worked example W-1 fixes one neuron and three inputs:
#
# $$w = [0.5,\ 0.2,\ -0.3,\ 0.4], \qquad b = 0.1,$$
#
# $$x_A = [1,\ 0,\ -1,\ 2],$$
#
# $$x_B = [-2,\ 0,\ 1,\ 0],$$
#
# $$x_C = [0.2,\ -1,\ -0.3,\ 0].$$
#
# **Forecast.** Compute $z_A = x_A \cdot w + b$ by hand (four products, one sum,
# one bias). Then guess the signs of $z_B$ and $z_C$.
#
# **Step.** The reference computation, all three inputs at once: stacking them as
# the rows of a $(3, 4)$ matrix $X$ gives the three pre-activations as $X w + b$.

# %%
X = np.stack([W_1.cases[c].x for c in "ABC"])  # (3, 4): one input per row
z_ABC = X @ W_1.w + W_1.b  # (3,): one pre-activation per input
for case, x_row, z_row in zip("ABC", X, z_ABC, strict=True):
    print(f"x_{case} = {x_row}   x·w = {x_row @ W_1.w:+.4g}   z = {z_row:+.4g}")

# %% [markdown]
# **Why.** Each input gives one number: the dot product collapses the feature
# axis. A batch of inputs of shape $(\dots, d)$ gives pre-activations of shape
# $(\dots)$, one per input.
#
# A quick sanity bound catches arithmetic slips: by the Cauchy–Schwarz inequality
# $|x \cdot w| \le \lVert x \rVert\, \lVert w \rVert$. For $x_A$:
# $\lVert x_A \rVert = \sqrt{6} \approx 2.449$, $\lVert w \rVert = \sqrt{0.54} \approx 0.735$,
# so $|x_A \cdot w|$ can be at most about $1.8$, and $1.6$ is within it.
#
# **Verify.**

# %%
assert np.allclose(z_ABC, [W_1.cases[c].z for c in "ABC"])  # 1.7, -1.2, 0.09
assert math.isclose(X[0] @ W_1.w, W_1.cases["A"].dot)  # 1.6
norm_x_A, norm_w = np.linalg.norm(X[0]), np.linalg.norm(W_1.w)
assert math.isclose(norm_x_A, W_1.norm_x_A) and round(norm_x_A, 3) == 2.449
assert math.isclose(norm_w, W_1.norm_w) and round(norm_w, 3) == 0.735
assert round(norm_x_A * norm_w, 1) == 1.8 and abs(X[0] @ W_1.w) <= norm_x_A * norm_w
print(f"‖x_A‖·‖w‖ = {norm_x_A:.3f} · {norm_w:.3f} = {norm_x_A * norm_w:.3f} ≥ |x_A·w| = {abs(X[0] @ W_1.w):.3g}")

# %% [markdown]
# ### Exercise: `preactivation(x, w, b)`
#
# Return $z = x \cdot w + b$ for one input `x` of shape `(d,)` (a 0-d result) or
# for a batch of any shape `(..., d)` (one $z$ per input, shape `(...)`). `w` has
# shape `(d,)` and `b` is a number.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-7}$.

# %% nbgrader={"grade": false, "grade_id": "preactivation", "locked": false, "schema_version": 3, "solution": true, "task": false}
def preactivation(x, w, b):
    """z = x · w + b over the last axis; x: (..., d), w: (d,), b: scalar -> z: (...)."""
    ### BEGIN SOLUTION
    return np.asarray(x, dtype=float) @ np.asarray(w, dtype=float) + b
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for preactivation</summary>
#
# A pre-activation is a dot product over the last axis plus a number. numpy's
# matrix product `@` does that dot product for one input and for a whole batch
# at once.
#
# <details><summary>Hint 2 of 2 for preactivation</summary>
#
# With `x` of shape $(\dots, d)$ and `w` of shape $(d,)$, `x @ w` has shape
# $(\dots)$: one number per input, a 0-d array for one input. Make `x` and `w`
# float arrays first (`np.asarray(..., dtype=float)`), so that lists and
# integers work too; then add `b`, which broadcasts over every input.
#
# </details>
# </details>

# %% nbgrader={"grade": true, "grade_id": "test_preactivation", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Worked example W-1: each input alone, then all three as a (3, 4) batch.
checks.check_cases(preactivation, [((W_1.cases[c].x, W_1.w, W_1.b), W_1.cases[c].z) for c in "ABC"],
                   mistakes=mistakes.for_exercise("preactivation"))
X_W1 = np.stack([W_1.cases[c].x for c in "ABC"])
checks.check(preactivation, (X_W1, W_1.w, W_1.b), [W_1.cases[c].z for c in "ABC"],
             mistakes=mistakes.for_exercise("preactivation"))
checks.ok("preactivation reproduces W-1: z = 1.7, -1.2, 0.09.")

# %% nbgrader={"grade": true, "grade_id": "test_preactivation_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: seeded random inputs of shapes (n, d) and (b, s, d), a bias
# given as a numpy number, and d = 1; each compared with the reference x·w + b.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("01_relu_sign_cases", "test_preactivation_hidden")
for shape in [(7, 5), (2, 3, 5), (5,)]:
    x, w, b = rng.normal(size=shape), rng.normal(size=5), float(rng.normal())
    checks.check(preactivation, (x, w, b), np.einsum("...i,i->...", x, w) + b,
                 mistakes=mistakes.for_exercise("preactivation"))
x, w, b = rng.normal(size=(4, 1)), rng.normal(size=1), np.float64(-0.25)
checks.check(preactivation, (x, w, b), x[:, 0] * w[0] + b, mistakes=mistakes.for_exercise("preactivation"))
x, w = rng.integers(-3, 4, size=(3, 2, 6)).astype(float), rng.integers(-3, 4, size=6).astype(float)
checks.check(preactivation, (x, w, 2.0), np.einsum("...i,i->...", x, w) + 2.0,
             mistakes=mistakes.for_exercise("preactivation"))
checks.ok("preactivation works on batches of any shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 2 · Case C, a wrong bias, and the fragile zero
#
# Case C asks for a pre-activation that is **exactly** zero. With $b = 0.1$,
# $x_C$ does not give one: $x_C \cdot w = -0.01$, so $z_C = 0.09 > 0$, which is case A.
#
# **Forecast.** Which bias $b$ makes $z_C = 0$? A version of this example that
# circulates in print sets $b = -0.09$. Is that right?
#
# **Step.** Solve $x_C \cdot w + b = 0$ for $b$, and try the printed value.

# %%
x_C = W_1.cases["C"].x
dot_C = x_C @ W_1.w
print(f"x_C·w = {dot_C:.6g}")
print(f"bias that makes z_C = 0:  b = -(x_C·w) = {-dot_C:.6g}")
print(f"the printed bias b = {W_1.published_b_C}: z_C = {dot_C + W_1.published_b_C:.6g}")

# %% [markdown]
# **Why.** The bias must cancel the dot product, so $b = -(x_C \cdot w) = 0.01$.
# The printed $b = -0.09$ is **wrong**: it gives $z_C = -0.01 - 0.09 = -0.1$,
# a case-B input, not case C.
#
# **Verify.**

# %%
assert math.isclose(dot_C, W_1.cases["C"].dot)  # -0.01
assert math.isclose(-dot_C, W_1.b_for_zero_z_C)  # 0.01
assert math.isclose(dot_C + W_1.published_b_C, W_1.z_C_with_published_b)  # -0.1, not 0

# %% [markdown]
# ### "Exactly zero" in floating point
#
# **Forecast.** With the corrected bias, does float64 arithmetic give exactly
# `0.0` for
#
# $$\begin{array}{l} z_C = 0.2 \cdot 0.5 + (-1)(0.2) \\ \qquad + (-0.3)(-0.3) + 0 \cdot 0.4 + 0.01, \end{array}$$
#
# added from left to right?
#
# **Step.** `rounding.dot_in_order` adds the products one by one from the left,
# then the bias, rounding after every multiplication and every addition: the
# order written above, and nothing else.

# %%
z_C = rounding.dot_in_order(x_C, W_1.w, W_1.b_for_zero_z_C)
print(f"z_C = {z_C!r}   (== 0.0? {z_C == 0.0})")
print(f"ReLU(z_C) = {ref.relu(z_C)!r}")
print("what float64 actually stores for 0.01:", Decimal(0.01))
print("... and for 0.3:                      ", Decimal(0.3))

# %% [markdown]
# **Why.** $0.2$, $0.3$ and $0.01$ have no finite binary expansion, so float64
# stores the nearest representable numbers, and each product and sum rounds
# again. The errors do not cancel: $z_C \approx -8.7 \times 10^{-18}$, a tiny
# *negative* number. ReLU still outputs $0$, but by the letter of the table this
# is case B, not C. IEEE 754 fixes the result of every single operation, so this
# order gives these same bits on every computer.
#
# ### The same sum, another order
#
# **Forecast.** `x_C @ w + 0.01` adds the same five terms. Does numpy give the
# same residue on every computer?
#
# **Step.** Compute it with `@`, then list every value float64 can give for this
# sum: any grouping of the additions, with or without *fused multiply-adds*
# (FMA: $a \cdot b + c$ rounded once instead of twice).

# %%
z_C_here = float(x_C @ W_1.w + W_1.b_for_zero_z_C)
print(f"x_C @ w + 0.01 on this computer: {z_C_here!r}")
every_z_C = rounding.every_rounding(x_C, W_1.w, W_1.b_for_zero_z_C)
print(f"\nall {len(every_z_C)} values that some order gives:")
for value, order in every_z_C.items():
    print(f"  {value:+.4g}   e.g. {order}")
exact_z_C = rounding.exact_value(x_C, W_1.w, W_1.b_for_zero_z_C)
bound_z_C = rounding.error_bound(x_C, W_1.w, W_1.b_for_zero_z_C)
print(f"\nexact value of the stored numbers: {exact_z_C:+.4g}; "
      f"no order can miss it by more than {bound_z_C:.2g}")

# %% [markdown]
# **Why.** `@` hands the sum to a BLAS library (OpenBLAS, in numpy's usual
# builds), which picks a kernel for the processor it runs on. The kernel decides
# the order of the additions and whether to use FMAs. OpenBLAS's kernels for
# processors with AVX-512 (called SkylakeX) give $-1.21 \times 10^{-17}$ for this
# sum, its older kernels (Haswell, Sandybridge) the left-to-right
# $-8.67 \times 10^{-18}$; a computer may even choose its kernel through the
# `OPENBLAS_CORETYPE` setting. One order gives exactly $0$. So whether this
# input is case B or case C depends on the order of the additions: the zero is
# as fragile as it gets. A float64 residue is a fact only together with its order;
# what holds for every order is that $z_C$ is never positive (ReLU outputs $0$
# whatever the computer) and stays within the bound printed above.
#
# So an exact zero must be **engineered** from numbers that float64 represents
# exactly (integers, halves, quarters, ...), where every product and sum is exact.
# For example $x = [0.5, 0, 0, 0]$, $w = [2, 1, 1, 1]$, $b = -1$:
# $z = 0.5 \cdot 2 - 1 = 0$ with no rounding at all, in any order.
#
# **Verify.**

# %%
assert z_C == W_1.float_residue_z_C and z_C < 0  # -8.67e-18: left to right, the same on every computer
assert ref.relu(z_C) == 0.0
assert z_C in every_z_C and W_1.fma_residue_z_C in every_z_C and 0.0 in every_z_C
assert z_C_here in every_z_C  # whichever order this computer's BLAS chose
assert max(every_z_C) == 0.0  # never positive, in any order
assert all(abs(value - exact_z_C) <= bound_z_C for value in every_z_C)
z_exact = W_1.exact_zero_x @ W_1.exact_zero_w + W_1.exact_zero_b
assert z_exact == 0.0  # exactly, not approximately ...
assert list(rounding.every_rounding(W_1.exact_zero_x, W_1.exact_zero_w, W_1.exact_zero_b)) == [0.0]  # ... in any order
print(f"engineered: z = {W_1.exact_zero_x} · {W_1.exact_zero_w} + ({W_1.exact_zero_b}) = {z_exact!r}")

# %% [markdown]
# ### Exercise: `sign_case(z)`
#
# Return the case of one pre-activation as a string: `"A"` if $z > 0$, `"B"` if
# $z < 0$, `"C"` if $z$ is exactly zero. No tolerance: the cases are about
# what ReLU sees, and ReLU sees the exact float.
#
# `z` is a single number, in any of the forms numpy code produces: a Python
# `int` or `float`, a numpy scalar such as `np.float64(0.09)`, or a 0-d array
# such as `np.array(0.0)` (which is what `preactivation` returns for one input).
# Return a plain Python `str` in every case. (`-0.0` is zero: it compares equal to `0.0`.)

# %% nbgrader={"grade": false, "grade_id": "sign_case", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sign_case(z):
    """"A" if z > 0, "B" if z < 0, "C" if z == 0 exactly; z: a number or a 0-d array."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    if z.ndim != 0:
        raise ValueError(f"sign_case takes one number (a scalar or a 0-d array), got an array of shape {z.shape}")
    if np.isnan(z):
        raise ValueError("z is NaN: it has no sign case")
    if z > 0:
        return "A"
    if z < 0:
        return "B"
    return "C"
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for sign_case</summary>
#
# Three cases, told apart by two comparisons with 0, in order: greater than 0,
# smaller than 0, and what is left is exactly 0. `-0.0` lands in the last case
# by itself, since `-0.0 == 0.0`.
#
# <details><summary>Hint 2 of 2 for sign_case</summary>
#
# Turn `z` into one float first: `np.asarray(z, dtype=float)` accepts a Python
# number, a numpy scalar and a 0-d array alike. Then return the letter of the
# first comparison that holds, written as a string literal (`"A"`), so that the
# result is a plain Python `str` whatever `z` was.
#
# </details>
# </details>

# %% [markdown]
# The checks below compare labels rather than numbers. When a label is wrong,
# they also name any known mistake that gives the same labels on every input
# checked so far.

# %% nbgrader={"grade": false, "grade_id": "check_labels", "locked": true, "schema_version": 3, "solution": false, "task": false}
def check_labels(fn, cases, known_mistakes=()):
    """Assert fn(z) == expected (a str) for each (z, expected) in turn.

    fn labels every z; on the first wrong label, a catalogued mistake is named where it gives fn's label for
    every z of the list (checks.check_cases).
    """
    checks.check_cases(fn, [((z,), expected) for z, expected in cases], exact=True, mistakes=known_mistakes)


# %% nbgrader={"grade": true, "grade_id": "test_sign_case", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# W-1's inputs with b = 0.1, then x_C with the corrected bias 0.01 (float64, added left to
# right, leaves a tiny negative residue), then the engineered exact zero.
z_A, z_B, z_C01 = (float(W_1.cases[c].x @ W_1.w + W_1.b) for c in "ABC")
z_residue = rounding.dot_in_order(W_1.cases["C"].x, W_1.w, W_1.b_for_zero_z_C)
z_zero = float(W_1.exact_zero_x @ W_1.exact_zero_w + W_1.exact_zero_b)
check_labels(sign_case, [(z_A, "A"), (z_B, "B"), (z_C01, "A"), (z_residue, "B"), (z_zero, "C")],
             mistakes.for_exercise("sign_case"))
checks.ok("sign_case: 1.7 → A, -1.2 → B, 0.09 → A, -8.7e-18 → B, 0.0 → C.")

# %% nbgrader={"grade": true, "grade_id": "test_sign_case_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: -0.0; Python ints; numpy scalars (float64, float32, int64);
# 0-d arrays such as np.array(0.0); the smallest positive and negative float64 (±5e-324);
# large magnitudes; seeded random values.
### BEGIN HIDDEN TESTS
edge_cases = [
    (-0.0, "C"), (0, "C"), (3, "A"), (-2, "B"), (np.float64(0.0), "C"), (np.float64(-0.0), "C"),
    (np.float32(2.5), "A"), (np.float32(0.0), "C"), (np.int64(-7), "B"), (np.int64(0), "C"),
    (np.array(0.0), "C"), (np.array(-3.5), "B"), (np.array(1e-300), "A"), (np.array(-0.0), "C"),
    (5e-324, "A"), (-5e-324, "B"), (1e308, "A"), (-1e308, "B"),
]
check_labels(sign_case, edge_cases, mistakes.for_exercise("sign_case"))
rng = checks.hidden_rng("01_relu_sign_cases", "test_sign_case_hidden")
z_random = rng.normal(size=20)  # iterating gives numpy float64 scalars
check_labels(sign_case, [(z, "A" if z > 0 else "B") for z in z_random], mistakes.for_exercise("sign_case"))
checks.ok("sign_case handles numbers in every form, -0.0 and the tiniest floats.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3 · ReLU on the three cases
#
# **Forecast.** For the five pre-activations met so far ($z_A = 1.7$,
# $z_B = -1.2$, $z_C = 0.09$ with $b = 0.1$, the residue $-8.7 \times 10^{-18}$
# with $b = 0.01$ added left to right, and the engineered $0$), which outputs $h = \mathrm{ReLU}(z)$
# are zero?
#
# **Step.** The reference ReLU, drawn before and after.

# %%
z_five = np.array([z_ABC[0], z_ABC[1], z_ABC[2], z_C, z_exact])
h_five = ref.relu(z_five)
plots.preactivation_bars(
    z_five, h_five,
    labels=["x_A", "x_B", "x_C\nb=0.1", "x_C\nb=0.01", "exact\nzero"],
    xlabel="input (W-1's neuron)", title="W-1: pre-activation z and output h = ReLU(z)")

# %% [markdown]
# *Figure: each input's pre-activation (left) and ReLU output (right); blue is
# positive, vermilion negative, grey exactly zero. The residue's bar is far too
# small to see, yet it is negative.*
#
# **Why.** ReLU keeps the positive part and replaces everything else by 0: case A
# passes unchanged, cases B and C both give 0. The output alone cannot tell B
# from C; only the pre-activation can.
#
# **Verify.**

# %%
assert np.array_equal(h_five, [z_ABC[0], 0.0, z_ABC[2], 0.0, 0.0])
assert [W_1.cases[c].relu for c in "ABC"] == [1.7, 0.0, 0.09]

# %% [markdown]
# ### Exercise: `relu(z)`
#
# Return $\max(0, z)$ elementwise, for an array of any shape (including a 0-d
# array or a plain number), as floats. Do not change the array you are given:
# the caller may still need `z`.
#
# Return float64, numpy's default (a float32 result passes only where it is exact).
# ReLU rounds nothing, so some checks ask for exact values, for `-0.0` and the
# tiniest numbers too.

# %% nbgrader={"grade": false, "grade_id": "relu", "locked": false, "schema_version": 3, "solution": true, "task": false}
def relu(z):
    """ReLU(z) = max(0, z) elementwise; z: any shape -> same shape."""
    ### BEGIN SOLUTION
    return np.maximum(np.asarray(z, dtype=float), 0.0)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for relu</summary>
#
# ReLU keeps a positive number and replaces anything else by 0, entry by entry.
# numpy has an elementwise maximum of two arrays that does exactly that when one
# of them is 0.
#
# <details><summary>Hint 2 of 2 for relu</summary>
#
# Convert `z` with `np.asarray(z, dtype=float)` (it makes a new array for a list
# or a number, and never changes the caller's), then take the elementwise
# maximum of it and `0.0` with `np.maximum`. That returns a new array of the
# same shape, and treats the edge cases the checks try (`-0.0`, the tiniest
# numbers) as ReLU should.
#
# </details>
# </details>

# %% nbgrader={"grade": true, "grade_id": "test_relu", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# W-1's pre-activations one at a time, then together with an exact zero.
for case in "ABC":
    checks.check(relu, (W_1.cases[case].z,), W_1.cases[case].relu, mistakes=mistakes.for_exercise("relu"))
checks.check(relu, (np.array([1.7, -1.2, 0.09, 0.0]),), [1.7, 0.0, 0.09, 0.0], mistakes=mistakes.for_exercise("relu"))
checks.ok("relu: A passes, B and C give 0.")

# %% nbgrader={"grade": true, "grade_id": "test_relu_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: seeded random arrays of shapes (n, d) and (b, s, d) with exact
# zeros mixed in, a 0-d array, and that relu leaves its input unchanged.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("01_relu_sign_cases", "test_relu_hidden")
for shape in [(6, 4), (2, 3, 5)]:
    z = rng.normal(size=shape)
    z[rng.random(shape) < 0.2] = 0.0
    z_before = z.copy()
    checks.check(relu, (z,), ref.relu(z_before), mistakes=mistakes.for_exercise("relu"))
    checks.assert_close(z, z_before, name="z after calling relu(z) (relu must not modify its input)")
checks.check(relu, (np.array(-2.0),), ref.relu(-2.0), mistakes=mistakes.for_exercise("relu"))
checks.check(relu, (np.array(3.5),), ref.relu(3.5), mistakes=mistakes.for_exercise("relu"))
# ReLU is exact (no rounding), so these compare with no tolerance at all.
checks.check(relu, (np.array([-0.0, 5e-324, -5e-324]),), [0.0, 5e-324, 0.0], rtol=0, atol=0,
             mistakes=mistakes.for_exercise("relu"))
checks.ok("relu works elementwise on any shape and leaves z alone.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4 · ReLU's derivative, and the convention at 0
#
# For $z \ne 0$ ReLU is a straight line, so its slope is plain: $1$ for $z > 0$
# (case A), $0$ for $z < 0$ (case B). At $z = 0$ (case C) the graph has a corner.
#
# **Forecast.** Approach $0$ from the right and from the left: what slopes do
# the difference quotients $\frac{\mathrm{ReLU}(0 + \delta) - \mathrm{ReLU}(0)}{\delta}$
# and $\frac{\mathrm{ReLU}(0) - \mathrm{ReLU}(0 - \delta)}{\delta}$ give, for a small $\delta > 0$?
#
# **Step.**

# %%
delta = 1e-6
slope_right = (ref.relu(0.0 + delta) - ref.relu(0.0)) / delta
slope_left = (ref.relu(0.0) - ref.relu(0.0 - delta)) / delta
print(f"slope from the right: {slope_right}, from the left: {slope_left}")
print(f"reference relu_grad at -1.2, 0, 1.7: {ref.relu_grad(np.array([-1.2, 0.0, 1.7]))}")

# %% [markdown]
# **Why.** The one-sided slopes disagree (1 and 0), so ReLU has **no derivative
# at 0**; any value in $[0, 1]$ is a valid *subgradient* there. Backpropagation
# still needs a number, so frameworks pick one: PyTorch, like this course,
# uses $\mathrm{ReLU}'(0) = 0$:
#
# $$\mathrm{ReLU}'(z) = \begin{cases} 1 & z > 0 \\ 0 & z \le 0. \end{cases}$$
#
# With real-valued data an exact zero is rare (section 2), but not at
# initialisation: with $b_1 = 0$, an all-zero token (padding, say) makes every
# $z$ exactly 0, and then this choice alone decides whether that token sends
# any gradient back to $b_1$.
#
# **Verify.**

# %%
assert slope_right == 1.0 and slope_left == 0.0
assert np.array_equal(ref.relu_grad(np.array([-1.2, 0.0, 1.7])), [0.0, 0.0, 1.0])

# %% [markdown]
# ### Exercise: `relu_grad(z)`
#
# Return $\mathrm{ReLU}'(z)$ elementwise with the convention $\mathrm{ReLU}'(0) = 0$,
# as floats, for an array of any shape or a plain number.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-7}$.

# %% nbgrader={"grade": false, "grade_id": "relu_grad", "locked": false, "schema_version": 3, "solution": true, "task": false}
def relu_grad(z):
    """dReLU/dz elementwise: 1.0 where z > 0, else 0.0 (0 at z = 0); z: any shape -> same shape."""
    ### BEGIN SOLUTION
    return (np.asarray(z, dtype=float) > 0).astype(float)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for relu_grad</summary>
#
# The slope of ReLU is 1 where $z > 0$ and 0 everywhere else, including $z = 0$
# (the convention). So the answer is a comparison, turned into numbers.
#
# <details><summary>Hint 2 of 2 for relu_grad</summary>
#
# `z > 0` on a float array gives an array of booleans of the same shape;
# `.astype(float)` turns `True` into 1.0 and `False` into 0.0. Convert `z` to a
# float array first, so that a plain number works too.
#
# </details>
# </details>

# %% nbgrader={"grade": true, "grade_id": "test_relu_grad", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# W-1's pre-activations and an exact zero (case C: the slope is 0 by convention).
checks.check(relu_grad, (np.array([1.7, -1.2, 0.09, 0.0]),), [1.0, 0.0, 1.0, 0.0],
             mistakes=mistakes.for_exercise("relu_grad"))
checks.check(relu_grad, (0.0,), 0.0, mistakes=mistakes.for_exercise("relu_grad"))
checks.ok("relu_grad: 1 for z > 0, 0 for z < 0 and at z = 0.")

# %% nbgrader={"grade": true, "grade_id": "test_relu_grad_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: seeded random arrays of shapes (n, d) and (b, s, d) with exact
# zeros (and -0.0) mixed in, 0-d arrays, and the smallest nonzero floats ±5e-324.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("01_relu_sign_cases", "test_relu_grad_hidden")
for shape in [(6, 4), (2, 3, 5)]:
    z = rng.normal(size=shape)
    z[rng.random(shape) < 0.2] = 0.0
    z[rng.random(shape) < 0.1] = -0.0
    checks.check(relu_grad, (z,), ref.relu_grad(z), mistakes=mistakes.for_exercise("relu_grad"))
checks.check(relu_grad, (np.array(0.0),), 0.0, mistakes=mistakes.for_exercise("relu_grad"))
checks.check(relu_grad, (np.array(2.5),), 1.0, mistakes=mistakes.for_exercise("relu_grad"))
checks.check(relu_grad, (np.array([5e-324, -5e-324, -0.0]),), [1.0, 0.0, 0.0],
             mistakes=mistakes.for_exercise("relu_grad"))
checks.ok("relu_grad works on any shape, with 0 at z = 0.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5 · Dead units: why a zero gradient is a trap
#
# Training changes $w$ and $b$ along the gradient of a loss $L$. For one input,
# the chain rule through $h = \mathrm{ReLU}(x \cdot w + b)$ gives
#
# $$\frac{\partial h}{\partial w} = \mathrm{ReLU}'(z)\, x, \qquad \frac{\partial h}{\partial b} = \mathrm{ReLU}'(z).$$
#
# In cases B and C, $\mathrm{ReLU}'(z) = 0$: the input teaches $w$ and $b$
# nothing. That is harmless for one input. A unit whose pre-activation is
# $\le 0$ for **every** input it sees is called **dead**: its output is always 0,
# its gradient is always 0, so gradient descent never moves $w$ or $b$, and it
# stays dead.
#
# **Forecast.** Give W-1's neuron the bias $b = -5$ and feed it $N = 10\,000$
# random inputs with independent standard normal entries. Over the whole batch,
# with an arbitrary upstream gradient $g_n = \partial L / \partial h_n$, what is
# $\partial L / \partial w = \sum_n g_n\, \mathrm{ReLU}'(z_n)\, x_n$?
#
# **Step.**

# %%
rng = np.random.default_rng(1)
X_rand = rng.standard_normal((10_000, 4))  # N inputs, one per row
g = rng.standard_normal(10_000)  # dL/dh for each input: anything at all


def gradients(b):
    """dL/dw and dL/db for W-1's weights with bias b, over the batch X_rand."""
    z = X_rand @ W_1.w + b
    slope = ref.relu_grad(z)
    return (g * slope) @ X_rand, np.sum(g * slope), z


grad_w_dead, grad_b_dead, z_dead = gradients(-5.0)
grad_w_alive, grad_b_alive, z_alive = gradients(W_1.b)
print(f"b = -5:  largest z = {z_dead.max():.3f}   dL/dw = {grad_w_dead}   dL/db = {grad_b_dead}")
print(f"b = 0.1: share of inputs with z > 0 = {np.mean(z_alive > 0):.3f}   dL/dw = {np.round(grad_w_alive, 2)}")
sd_of_dot = np.linalg.norm(W_1.w)  # x·w has standard deviation ‖w‖ when x ~ N(0, I)
print(f"z > 0 needs x·w > 5, that is {5 / sd_of_dot:.1f} standard deviations of x·w")

# %% [markdown]
# **Why.** With $b = -5$, $z = x \cdot w - 5$ and $x \cdot w$ has standard deviation
# $\lVert w \rVert \approx 0.735$: reaching $z > 0$ takes a $6.8$-standard-deviation
# input, which a batch of ten thousand practically never contains. Every term of
# the gradient is multiplied by $\mathrm{ReLU}'(z_n) = 0$, so the gradient is
# exactly zero, and an update $w \leftarrow w - \eta\, \partial L / \partial w$
# leaves the unit as it was. The same neuron with $b = 0.1$ is active on about
# half the inputs and gets a nonzero gradient. Smooth activations such as GELU
# and SiLU (notebook 04) have a small nonzero slope for $z < 0$, which is one
# reason they are used.
#
# **Verify.**

# %%
assert z_dead.max() < 0
assert not grad_w_dead.any() and grad_b_dead == 0.0  # exactly zero, not just small
assert np.all(grad_w_alive != 0) and 0.4 < np.mean(z_alive > 0) < 0.6
assert round(5 / sd_of_dot, 1) == 6.8

# %% [markdown]
# ## Summary
#
# - One unit computes $z = x \cdot w + b$, then $h = \max(0, z)$; a batch `(..., d)`
#   gives one $z$ per input.
# - Case A ($z > 0$) passes $z$ with slope 1; cases B ($z < 0$) and C ($z = 0$)
#   give 0 with slope 0 (at $z = 0$ by convention).
# - In W-1, the bias that zeroes $z_C$ is $0.01$, not the printed $-0.09$; and
#   even $0.01$ leaves a float64 residue: about $-8.7 \times 10^{-18}$ added left
#   to right, other values (one of them $0$) in other orders, and `@` picks its
#   order by processor. Exact zeros must be built from exactly representable numbers.
# - A unit that is inactive on every input gets no gradient: it is dead.
#
# Next: [02 · The forward pass](02_forward_pass.ipynb), a whole layer of such units.
