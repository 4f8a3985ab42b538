# %% [markdown]
# # 04 · Activations: ReLU, GELU and SiLU on the same inputs (scenario F)
#
# The activation $\sigma$ in $\mathrm{FFN}(x) = \sigma(x W_1 + b_1) W_2 + b_2$
# acts on each pre-activation $z$ (one entry of $x W_1 + b_1$) separately.
# Notebook 01 used ReLU. Transformers mostly use smooth alternatives, and this
# notebook puts them side by side on the same inputs.
#
# All three below have the form $z \cdot g(z)$: the input times a **gate**
# $g(z)$ between 0 and 1 that says how much of $z$ passes.
#
# | name | $g(z)$ | formula |
# |---|---|---|
# | ReLU | step: 0 for $z \le 0$, 1 for $z > 0$ | $\max(0, z)$ |
# | GELU (exact) | $\Phi(z)$, the standard normal CDF | $z\,\Phi(z)$ |
# | SiLU (also called swish) | $\operatorname{sigmoid}(z)$ $= 1/(1 + e^{-z})$ | $z \operatorname{sigmoid}(z)$ |
#
# Here $\Phi(z)$ is the probability that a standard normal variable is at most
# $z$,
#
# $$\Phi(z) = \tfrac12\big(1 + \operatorname{erf}(z/\sqrt2)\big),$$
#
# where $\operatorname{erf}$ is the error function. GELU also has a
# widely used **tanh approximation**:
#
# $$\begin{array}{l} \mathrm{GELU}_{\tanh}(z) = \tfrac12\, z \Big(1 + {} \\
#   \qquad \tanh\!\big(\sqrt{2/\pi}\,(z + 0.044715\, z^3)\big)\Big). \end{array}$$
#
# The last section builds **SwiGLU**, a gated FFN with three weight matrices.
#
# **Exercises** (10 points): `gelu` (3), `gelu_tanh` (2), `silu` (2), `swiglu_ffn` (3).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np
from scipy import special

from ffn_helpers import activations, budgets, checks, mistakes, plots
from ffn_helpers.examples import W_4, W_5, W_6
from ffn_helpers.ffn import swiglu_forward

# %% [markdown]
# ## 1. Four activations, four inputs (worked example W-5)
#
# **Forecast.** For $z = -0.5$, $2$, $10$ and $-10$: which of ReLU, SiLU and
# GELU gives the most negative output at $z = -0.5$? At $z = 10$, which ones
# return exactly 10? At $z = -10$, how small are SiLU and GELU?
#
# **Step.** The table of W-5, then the same values recomputed by the course's
# reference functions in `ffn_helpers.activations`.

# %%
reference = {"relu": activations.relu, "silu": activations.silu,
             "gelu": activations.gelu, "gelu_tanh": activations.gelu_tanh}
columns = W_5["columns"]
print(f"{'z':>6} | " + " | ".join(f"{c:>18}" for c in columns))
for z, row in W_5["table"].items():
    recomputed = [float(reference[c](z)) for c in columns]
    print(f"{z:>6} | " + " | ".join(f"{v:>18.10g}" for v in recomputed))
    # W-5 prints 8 decimals, and more significant digits for the tiny values at z = -10.
    tolerance = dict(rtol=1e-10, atol=0.0) if z == -10 else dict(rtol=0.0, atol=5e-9)
    checks.assert_close(recomputed, row, name=f"W-5 row z = {z}", **tolerance)
for z in (-0.5, 2.0):
    checks.assert_close(activations.sigmoid(z), W_5["sigmoid"][z], name=f"sigmoid({z})", rtol=0.0, atol=5e-9)
    checks.assert_close(special.ndtr(z), W_5["Phi"][z], name=f"Phi({z})", rtol=0.0, atol=5e-9)
    print(f"z = {z}: sigmoid(z) = {activations.sigmoid(z):.8f}, Phi(z) = {special.ndtr(z):.8f}")
print(f"z = 10: Phi(z) = {special.ndtr(10.0)!r}, 1 - sigmoid(z) = {1 - activations.sigmoid(10.0):.2e}")
assert special.ndtr(10.0) == 1.0 and f"{1 - activations.sigmoid(10.0):.1e}" == "4.5e-05"

# %% [markdown]
# **Why.** Each output is $z$ times its gate. At $z = -0.5$ the gates are
# $\operatorname{sigmoid}(-0.5) \approx 0.378$ and $\Phi(-0.5) \approx 0.309$,
# so SiLU lets more of the negative input through than GELU, and ReLU none.
# At $z = 10$ the normal gate $\Phi(10)$ rounds to exactly 1 in float64 while
# $\operatorname{sigmoid}(10)$ is still $1 - 4.5 \times 10^{-5}$. At $z = -10$
# SiLU is about $-4.5 \times 10^{-4}$ but GELU about $-7.6 \times 10^{-23}$:
# a Gaussian tail falls far faster than an exponential one.
#
# That last value needs care: the textbook form $\tfrac12 z (1 + \operatorname{erf}(z/\sqrt2))$
# returns `-0.0` at $z = -10$, because $1 + \operatorname{erf}$ cancels in float64:

# %%
def gelu_textbook(z):
    """0.5 z (1 + erf(z / sqrt 2)): exact in theory, cancels in float64 far left."""
    return 0.5 * z * (1.0 + special.erf(z / np.sqrt(2.0)))


print("z = -10, textbook erf form:", gelu_textbook(-10.0))
print("z = -10, reference (ndtr): ", activations.gelu(-10.0))
wide = np.linspace(-6.0, 6.0, 120_001)
apart = np.abs(gelu_textbook(wide) - activations.gelu(wide)).max()
print(f"largest gap between the two on [-6, 6]: {apart:.1e}")
assert gelu_textbook(-10.0) == 0.0 and apart < 2e-15

# %% [markdown]
# Notebook 08 is about such tails. Here the exercises are checked on
# $-6 \le z \le 6$ (plus the W-5 inputs $-0.5$, $2$, $10$), where both forms agree
# to about $10^{-15}$ in absolute terms, so either is accepted.
#
# **Verify.** The asserts above recompute every entry of W-5 to its printed
# digits, and the agreement of the two exact forms on $[-6, 6]$.
#
# ## 2. Where the curves agree and where they differ
#
# **Forecast.** All three pass large positive $z$ almost unchanged. Which one
# dips lowest below zero, and where? What is each one's slope at $z = 0$?
#
# **Step.** The curves on one axis, and a zoom on the negative side.

# %%
plots.activation_curves(("relu", "gelu", "gelu_tanh", "silu"), z_range=(-4, 4), zoom=(-6, -0.5))

# %% [markdown]
# *Figure: ReLU, exact GELU, tanh-approximate GELU (dashed, on top of the exact
# curve at this scale) and SiLU for $-4 \le z \le 4$ (left) and zoomed on
# $-6 \le z \le -0.5$ (right), where only GELU and SiLU are non-zero.*
#
# The numbers behind the picture:

# %%
grid = np.linspace(-3.0, 0.0, 300_001)  # step 1e-5
for name in ("gelu", "silu"):
    values = reference[name](grid)
    print(f"{name:4}: minimum {values.min():.4f} at z = {grid[values.argmin()]:.3f}")
h = 1e-6
for name in ("gelu", "silu"):
    slope = (reference[name](h) - reference[name](-h)) / (2 * h)
    print(f"{name:4}: slope at 0 = {slope:.6f}")
    checks.assert_close(slope, 0.5, name=f"{name}'(0)", rtol=1e-8)
for name in ("gelu", "silu"):
    print(f"{name:4}: 4 - {name}(4) = {4 - reference[name](4.0):.2e}")
wide = np.linspace(-6.0, 6.0, 120_001)
gap = np.abs(activations.gelu(wide) - activations.silu(wide))
sharper = np.abs(activations.gelu(wide) - wide * activations.sigmoid(1.702 * wide))
print(f"largest |GELU - SiLU| on [-6, 6]: {gap.max():.3f} at |z| = {abs(wide[gap.argmax()]):.2f}")
print(f"largest |GELU(z) - z sigmoid(1.702 z)| on [-6, 6]: {sharper.max():.3f}")
# the numbers quoted below
for name, low, where in (("gelu", -0.17, -0.75), ("silu", -0.28, -1.28)):
    values = reference[name](grid)
    assert round(values.min(), 2) == low and round(grid[values.argmin()], 2) == where
assert f"{4 - activations.gelu(4.0):.1e}" == "1.3e-04" and round(4 - activations.silu(4.0), 3) == 0.072
assert round(gap.max(), 2) == 0.19 and round(abs(wide[gap.argmax()])) == 2 and sharper.max() < 0.021

# %% [markdown]
# **Why.**
#
# - *Agree:* for large positive $z$ every gate tends to 1 and the output to
#   $z$, GELU far sooner than SiLU ($4 - \mathrm{GELU}(4) \approx 1.3 \times 10^{-4}$,
#   $4 - \mathrm{SiLU}(4) \approx 0.072$). Near 0, GELU and SiLU both behave
#   like $z/2$: each gate is $\tfrac12$ at $z = 0$.
# - *Differ:* below zero, ReLU is exactly 0 and its gradient too, so a unit
#   with $z < 0$ passes nothing back (notebook 01's dead unit). GELU and SiLU
#   are smooth, dip to a minimum (about $-0.17$ at $z \approx -0.75$ and
#   $-0.28$ at $z \approx -1.28$) and return to 0 from below, so small
#   negative inputs still pass a signal and a gradient. The largest gap between
#   GELU and SiLU is about $0.19$, near $|z| \approx 2$.
# - GELU is close to a *sharper* SiLU: $z \operatorname{sigmoid}(1.702\,z)$
#   stays within $0.021$ of it on $[-6, 6]$.
#
# **Verify.** The asserts above check every number quoted here: the slopes,
# the minima and where they are, the distances from $z$ at $z = 4$, and the
# two largest gaps.
#
# ## 3. Exercise: `gelu` (3 points)
#
# **Forecast.** Since $\Phi(-z) = 1 - \Phi(z)$, what is
# $\mathrm{GELU}(z) - \mathrm{GELU}(-z)$? (Section 4 uses the answer.)
#
# **Step.** Write the exact `gelu(z)` $= z\,\Phi(z)$ for `z` of any shape,
# including a plain number. numpy has no $\operatorname{erf}$: use
# `special.erf` (scipy, imported in the setup cell), or `special.ndtr`, which
# is $\Phi$ itself. Any exact form is accepted here; notebook 08 asks for one
# that keeps the far tail.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-9}$.

# %% nbgrader={"grade": false, "grade_id": "gelu", "locked": false, "schema_version": 3, "solution": true, "task": false}
def gelu(z):
    """Exact GELU, z * Phi(z), elementwise. z: any shape."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    return z * special.ndtr(z)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for gelu</summary>
#
# GELU weighs its input by the chance that a standard normal variable lies below
# it: $z\,\Phi(z)$, with $\Phi$ the normal CDF.
#
# <details><summary>Hint 2 of 2 for gelu</summary>
#
# `scipy.special` (imported as `special`) has $\Phi$ itself as `special.ndtr`;
# or use $\Phi(z) = \tfrac12\,(1 + \operatorname{erf}(z/\sqrt2))$ with
# `special.erf`. Convert `z` to a float array first, so that a plain number
# works too.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** The W-5 inputs $-0.5$, $2$, $10$, and $z = 0$. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_gelu", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
GELU_MISTAKES = mistakes.for_exercise("gelu")
z = np.array([-0.5, 2.0, 10.0])
checks.check(gelu, (z,), activations.gelu(z), rtol=1e-9, mistakes=GELU_MISTAKES)
checks.check(gelu, (np.zeros(3),), np.zeros(3), rtol=1e-9, mistakes=GELU_MISTAKES)
checks.ok("gelu matches W-5: GELU(-0.5) = -0.15426877, GELU(2) = 1.95449974, GELU(10) = 10.")

# %% [markdown]
# The grader also checks other shapes and inputs (2 points):

# %% nbgrader={"grade": true, "grade_id": "test_gelu_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: seeded random z in [-6, 6] in shapes (n,), (n, d) and (b, s, d); a dense grid on [-6, 6];
# a plain Python number, a 0-d array, and exact zeros.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("04_activations", "test_gelu_hidden")
cases = [rng.uniform(-6.0, 6.0, size=50), np.clip(rng.normal(0.0, 2.0, size=(8, 5)), -6.0, 6.0),
         np.clip(rng.normal(0.0, 1.5, size=(2, 3, 4)), -6.0, 6.0), np.linspace(-6.0, 6.0, 241),
         -1.3, np.array(0.7), np.zeros((2, 3))]
for z in cases:
    checks.check(gelu, (z,), activations.gelu(z), rtol=1e-9, mistakes=GELU_MISTAKES)
checks.ok("gelu agrees with the reference on [-6, 6], for any shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. The tanh approximation, and how far off it is
#
# The tanh formula in the introduction comes from the paper that introduced
# GELU, as a cheaper stand-in for $\operatorname{erf}$; GPT-2 used it, and
# PyTorch offers it as `nn.GELU(approximate="tanh")`.
#
# **Forecast.** On $-6 \le z \le 6$, how large is the largest gap
# $|\mathrm{GELU}_{\tanh}(z) - \mathrm{GELU}(z)|$: $10^{-2}$, $10^{-4}$,
# $10^{-8}$? Where is it largest?
#
# **Step.** Both references on a grid of step $10^{-4}$.

# %%
wide = np.linspace(-6.0, 6.0, 120_001)
error = activations.gelu_tanh(wide) - activations.gelu(wide)
worst = np.abs(error).argmax()
print(f"largest |tanh approximation - exact| on [-6, 6]: {abs(error[worst]):.2e} at z = {wide[worst]:.2f}")
print(f"the error is even, error(-z) = error(z): {np.allclose(error, error[::-1], rtol=0.0, atol=1e-14)}")
assert f"{np.abs(error).max():.1e}" == "4.7e-04" and round(abs(wide[worst]), 1) == 2.7
assert np.allclose(error, error[::-1], rtol=0.0, atol=1e-14)
crossing = wide[(wide > 1.0) & (wide < 2.5)][np.flatnonzero(np.diff(np.sign(error[(wide > 1.0) & (wide < 2.5)])))[0]]
error_at_2 = float(activations.gelu_tanh(2.0) - activations.gelu(2.0))
assert round(crossing, 2) == 1.88 and f"{error_at_2:.1e}" == "9.8e-05"  # section 5's forecast, answered there


# %%
def tanh_error_figure():
    """The tanh approximation's error against the exact GELU on [-6, 6]."""
    largest, z_star = np.abs(error).max(), abs(wide[worst])
    title = f"tanh-approximate GELU minus exact GELU: at most {largest:.1e} on [-6, 6]"

    def draw_on(fig):
        ax = fig.subplots()
        ax.plot(wide, error, color=plots.REDDISH_PURPLE, linewidth=2, label="GELU_tanh(z) - GELU(z)")
        ax.axhline(0.0, color=plots.GREY, linewidth=0.8)
        for at in (-z_star, z_star):
            ax.axvline(at, color=plots.GREY, linestyle=":", linewidth=1.2)
        ax.set_xlabel("pre-activation z")
        ax.set_ylabel("error of the tanh approximation")
        ax.set_title(title)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
        ax.grid(color="#E6E6E6", linewidth=0.8)
        ax.legend(frameon=False, loc="upper center")

    return plots.custom_figure(draw_on, size=(7.5, 3.8), alt=(
        f"Line plot: {title}. The error GELU_tanh(z) - GELU(z) for z from -6 to 6, the same on both sides of 0; "
        f"its largest size, {largest:.1e}, is at z = ±{z_star:.1f} (dotted lines), and it shrinks towards 0 at "
        "z = 0 and at both ends."))


tanh_error_figure()

# %% [markdown]
# *Figure: the approximation's error on $[-6, 6]$; it is the same at $z$ and $-z$, largest
# (about $4.7 \times 10^{-4}$) at $|z| \approx 2.7$ (dotted lines), and fades in both tails.*
#
# **Why.** Both forms satisfy $f(z) - f(-z) = z$ (check it: $\Phi(z) + \Phi(-z) = 1$,
# and $\tanh$ is odd), so their difference is the same at $z$ and $-z$. An
# error of $5 \times 10^{-4}$ is harmless in a network, but it is far above
# a test tolerance: a model trained with one form and run with the other
# gives slightly different numbers, and a check with `rtol=1e-9` tells them
# apart. In the far negative tail the two differ completely in relative terms
# (at $z = -10$ the approximation is `-0.0`); notebook 08 returns to that.
#
# **Verify.** The asserts above: the largest error and where it is, and the symmetry.
#
# ## 5. Exercise: `gelu_tanh` (2 points)
#
# **Forecast.** Is the approximation at $z = 2$ above or below the exact
# $\mathrm{GELU}(2) = 1.95449974$? (The figure cannot tell: its error crosses 0
# near $z = 1.88$, and at $z = 2$ it is about $10^{-4}$ on an axis that spans
# $\pm 5 \times 10^{-4}$. The check below computes it with your function.)
#
# **Step.** Write `gelu_tanh(z)`, the formula from the introduction, for any
# shape. The constant is $\sqrt{2/\pi}$ (`np.sqrt(2 / np.pi)`).
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-9}$.

# %% nbgrader={"grade": false, "grade_id": "gelu_tanh", "locked": false, "schema_version": 3, "solution": true, "task": false}
def gelu_tanh(z):
    """The tanh approximation of GELU, elementwise. z: any shape."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    return 0.5 * z * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (z + 0.044715 * z**3)))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for gelu_tanh</summary>
#
# Write the formula of the introduction as it reads:
# $\tfrac12 z\,(1 + \tanh(\sqrt{2/\pi}\,(z + 0.044715\, z^3)))$.
#
# <details><summary>Hint 2 of 2 for gelu_tanh</summary>
#
# Build it from the inside out, on a float array: the cubic term
# `z + 0.044715 * z**3`, times the constant `np.sqrt(2 / np.pi)`, through
# `np.tanh`, plus 1, times `0.5 * z`. Mind the brackets: the $\tfrac12 z$
# multiplies the whole sum.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** The W-5 inputs $-0.5$, $2$, $10$. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_gelu_tanh", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
TANH_MISTAKES = mistakes.for_exercise("gelu_tanh")
z = np.array([-0.5, 2.0, 10.0])
checks.check(gelu_tanh, (z,), activations.gelu_tanh(z), rtol=1e-9, mistakes=TANH_MISTAKES)
checks.ok("gelu_tanh matches W-5: -0.15428599 at z = -0.5, 1.95459769 at z = 2.")

# %% [markdown]
# **Why** (the forecast's answer). Above: $\mathrm{GELU}_{\tanh}(2) = 1.95459769$ is
# $9.8 \times 10^{-5}$ more than the exact $1.95449974$, just past the zero crossing
# at $z \approx 1.88$.
#
# The grader also checks other shapes and inputs (1 point):

# %% nbgrader={"grade": true, "grade_id": "test_gelu_tanh_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: seeded random z in [-6, 6] in shapes (n,), (n, d) and (b, s, d); a dense grid on [-6, 6];
# a plain Python number, a 0-d array, and exact zeros.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("04_activations", "test_gelu_tanh_hidden")
cases = [rng.uniform(-6.0, 6.0, size=50), np.clip(rng.normal(0.0, 2.0, size=(8, 5)), -6.0, 6.0),
         np.clip(rng.normal(0.0, 1.5, size=(2, 3, 4)), -6.0, 6.0), np.linspace(-6.0, 6.0, 241),
         2.7, np.array(-0.3), np.zeros(4)]
for z in cases:
    checks.check(gelu_tanh, (z,), activations.gelu_tanh(z), rtol=1e-9, mistakes=TANH_MISTAKES)
checks.ok("gelu_tanh agrees with the reference on [-6, 6], for any shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Exercise: `silu` (2 points)
#
# **Forecast.** SiLU's gate is the sigmoid. What is $\mathrm{SiLU}(0)$, and
# what is the sign of $\mathrm{SiLU}(z)$ for $z < 0$?
#
# **Step.** Write `silu(z)` $= z \operatorname{sigmoid}(z)$ for any shape. The
# direct $z / (1 + e^{-z})$ is fine for the inputs here; for $z \lesssim -710$
# the exponential overflows, which notebook 08 deals with (`special.expit` is
# a sigmoid that never overflows).
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-9}$.

# %% nbgrader={"grade": false, "grade_id": "silu", "locked": false, "schema_version": 3, "solution": true, "task": false}
def silu(z):
    """SiLU, z * sigmoid(z), elementwise. z: any shape."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    return z * special.expit(z)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for silu</summary>
#
# SiLU gates $z$ by the sigmoid: $z \cdot s(z)$ with $s(z) = 1/(1 + e^{-z})$.
#
# <details><summary>Hint 2 of 2 for silu</summary>
#
# Multiply `z` (as a float array) by its sigmoid. `special.expit` is the sigmoid
# and never overflows; `1 / (1 + np.exp(-z))` is also fine for the inputs of
# this notebook.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** All four W-5 inputs. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_silu", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
SILU_MISTAKES = mistakes.for_exercise("silu")
z = np.array(list(W_5["table"]))
checks.check(silu, (z,), activations.silu(z), rtol=1e-9, mistakes=SILU_MISTAKES)
checks.ok("silu matches W-5, down to SiLU(-10) = -4.5397868702e-04.")

# %% [markdown]
# The grader also checks other shapes and inputs (1 point):

# %% nbgrader={"grade": true, "grade_id": "test_silu_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: seeded random z in [-6, 6] in shapes (n,), (n, d) and (b, s, d); a dense grid on [-10, 10];
# a plain Python number, a 0-d array, and exact zeros.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("04_activations", "test_silu_hidden")
cases = [rng.uniform(-6.0, 6.0, size=50), np.clip(rng.normal(0.0, 2.0, size=(8, 5)), -6.0, 6.0),
         np.clip(rng.normal(0.0, 1.5, size=(2, 3, 4)), -6.0, 6.0), np.linspace(-10.0, 10.0, 401),
         -2.5, np.array(1.25), np.zeros((3, 2))]
for z in cases:
    checks.check(silu, (z,), activations.silu(z), rtol=1e-9, mistakes=SILU_MISTAKES)
checks.ok("silu agrees with the reference, for any shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 7. SwiGLU: a gated FFN with three matrices
#
# Many recent models (LLaMA among them) replace the FFN by a **gated** one:
#
# $$\begin{array}{l} \mathrm{SwiGLU}(x) = {} \\
#   \qquad \big(\mathrm{SiLU}(x W_\text{gate}) \odot (x W_\text{up})\big)\, W_\text{down}, \end{array}$$
#
# with $W_\text{gate}$ and $W_\text{up}$ of shape $(d_\text{model}, d_\text{ff})$,
# $W_\text{down}$ of shape $(d_\text{ff}, d_\text{model})$, $\odot$ the entrywise
# product, and no biases. Hidden unit $j$ is now $\mathrm{SiLU}(g_j)\, u_j$: a
# **gate** $g = x W_\text{gate}$ decides how much of a separate **value**
# $u = x W_\text{up}$ passes.
#
# **Forecast.** For W-4's $x = [1, -1]$, with $W_\text{gate} = W_1$ and
# $W_\text{down} = W_2$ of W-4 and the $W_\text{up}$ below: which hidden unit
# contributes most, and with which sign?
#
# **Step.** Every stage, with the reference `swiglu_forward`.

# %% nbgrader={"grade": false, "grade_id": "swiglu_example", "locked": true, "schema_version": 3, "solution": false, "task": false}
x = W_4.x
W_gate, W_down = W_4.W1, W_4.W2  # (2, 3) and (3, 2)
W_up = np.array([[0.5, 1.0, -1.0], [1.0, 0.0, 0.5]])  # (2, 3)
g, u = x @ W_gate, x @ W_up
print("gate  g = x W_gate      =", g)
print("SiLU(g)                 =", np.round(activations.silu(g), 6))
print("value u = x W_up        =", u)
print("hidden  = SiLU(g) * u   =", np.round(activations.silu(g) * u, 6))
y = swiglu_forward(x, W_gate, W_up, W_down)
print("output  = hidden W_down =", np.round(y, 6))
checks.assert_close(y, (activations.silu(g) * u) @ W_down, name="SwiGLU, stage by stage")

# %% [markdown]
# **Why three matrices.** The gate and the value are two *different* linear
# views of the same token; their product lets a hidden unit respond to one
# direction of $x$ only when another direction is active, which a plain FFN's
# single $\sigma(x W_1)$ cannot express in one unit (each of its units sees one
# direction of $x$, through one column of $W_1$). With $W_\text{up} = W_\text{gate}$
# the unit would compute $\mathrm{SiLU}(g)\,g$, just another fixed activation
# of one projection. The price is a third $d_\text{model} \times d_\text{ff}$
# matrix, so gated models shrink $d_\text{ff}$ to keep the budget: LLaMA-7B
# ($d_\text{model} = 4096$) takes $\tfrac23 \cdot 4\,d_\text{model}$ rounded up
# to a multiple of 256, that is $d_\text{ff} = 11008$:

# %%
d_model = W_6["llama_7b"]["d_model"]
d_ff = 256 * int(np.ceil(2 / 3 * 4 * d_model / 256))
gated = budgets.ffn_param_count(d_model, d_ff, bias=False, gated=True)
plain = budgets.ffn_param_count(d_model, 4 * d_model, bias=False)
print(f"d_ff = {d_ff}; SwiGLU: 3 x {d_model} x {d_ff} = {gated:,} parameters per layer")
print(f"plain FFN with d_ff = 4 d_model = {4 * d_model}: {plain:,} parameters per layer")
assert d_ff == W_6["llama_7b"]["d_ff"] and gated == W_6["llama_7b"]["per_layer"]
assert plain == 134_217_728 and abs(gated / plain - 1) < 0.01

# %% [markdown]
# **Verify.** The stage-by-stage result equals the reference, and the
# parameter count is W-6's 135,266,304 per layer, within 1 % of the plain
# FFN's 134,217,728 (notebook 06 counts budgets in detail).
#
# ## 8. Exercise: `swiglu_ffn` (3 points)
#
# **Forecast.** For `x` of shape $(b, s, d_\text{model})$, what are the
# shapes of `x @ W_gate`, of the gated product, and of the output?
#
# **Step.** Write `swiglu_ffn(x, W_gate, W_up, W_down)` for `x` of shape
# $(\dots, d_\text{model})$, using your `silu`. Inside the checks'
# `with checks.substitute(silu=activations.silu):` the name `silu` stands for the
# course's reference (yours is put back when the block ends, in your notebook and in
# the grader's own re-run alike), so `swiglu_ffn` is graded on its own and a slip
# in `silu` costs points only in section 6.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-9}$.

# %% nbgrader={"grade": false, "grade_id": "swiglu_ffn", "locked": false, "schema_version": 3, "solution": true, "task": false}
def swiglu_ffn(x, W_gate, W_up, W_down):
    """Gated FFN (SiLU(x W_gate) * (x W_up)) W_down, no biases.

    x: (..., d_model); W_gate, W_up: (d_model, d_ff); W_down: (d_ff, d_model).
    """
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    return (silu(x @ W_gate) * (x @ W_up)) @ W_down
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for swiglu_ffn</summary>
#
# Two projections of the same input, one through SiLU (the gate) and one left as
# it is (the value), multiplied entry by entry, then projected back down.
#
# <details><summary>Hint 2 of 3 for swiglu_ffn</summary>
#
# `x @ W_gate` and `x @ W_up` both have shape $(\dots, d_\text{ff})$. Apply your
# `silu` to the first only, multiply the two with `*` (elementwise, not `@`),
# and multiply the product by `W_down` with `@`.
#
# <details><summary>Hint 3 of 3 for swiglu_ffn</summary>
#
# The whole answer is one expression after converting `x` to floats: the `silu`
# of `x` times `W_gate`, elementwise-times `x` times `W_up`, the product
# matrix-multiplied by `W_down`. Call it by the name `silu`, so that the check
# can put the course's in its place.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The example above, for one token and for a batch of two. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_swiglu_ffn", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
SWIGLU_MISTAKES = mistakes.for_exercise("swiglu_ffn")
with checks.substitute(silu=activations.silu):  # grade swiglu_ffn on its own
    args = (W_4.x, W_gate, W_up, W_down)
    checks.check(swiglu_ffn, args, swiglu_forward(*args), rtol=1e-9, mistakes=SWIGLU_MISTAKES)
    two = np.array([[1.0, -1.0], [0.5, 2.0]])
    args = (two, W_gate, W_up, W_down)
    checks.check(swiglu_ffn, args, swiglu_forward(*args), rtol=1e-9, mistakes=SWIGLU_MISTAKES)
checks.ok("swiglu_ffn gates x W_up by SiLU(x W_gate), then projects down.")

# %% [markdown]
# The grader also checks other shapes and inputs (2 points):

# %% nbgrader={"grade": true, "grade_id": "test_swiglu_ffn_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: seeded random weights (d_model = 6, d_ff = 16) on batches of shape (n, d_model) and
# (b, s, d_model), one token, and all-zero tokens; a rectangular case with d_ff < d_model.
### BEGIN HIDDEN TESTS
with checks.substitute(silu=activations.silu):  # grade swiglu_ffn on its own
    rng = checks.hidden_rng("04_activations", "test_swiglu_ffn_hidden")
    for d_model, d_ff in ((6, 16), (5, 3)):
        Wg, Wu = rng.normal(0.0, 0.6, size=(2, d_model, d_ff))
        Wd = rng.normal(0.0, 0.6, size=(d_ff, d_model))
        for x in (rng.normal(size=(7, d_model)), rng.normal(size=(2, 3, d_model)), rng.normal(size=d_model),
                  np.zeros((2, d_model))):
            checks.check(swiglu_ffn, (x, Wg, Wu, Wd), swiglu_forward(x, Wg, Wu, Wd), rtol=1e-9,
                         mistakes=SWIGLU_MISTAKES)
checks.ok("swiglu_ffn works for any batch shape and any d_ff.")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - ReLU, GELU and SiLU are $z$ times a gate: a step, $\Phi(z)$, $\operatorname{sigmoid}(z)$.
#   They agree for large positive $z$; below zero only GELU and SiLU pass
#   a small, smooth signal (W-5: $-0.154$ and $-0.189$ at $z = -0.5$).
# - The tanh approximation of GELU is off by at most about $4.7 \times 10^{-4}$
#   on $[-6, 6]$: invisible in a plot, obvious to a tight check.
# - SwiGLU multiplies a SiLU gate by a second projection: three matrices,
#   $3\, d_\text{model} d_\text{ff}$ parameters, with $d_\text{ff}$ shrunk to compensate.
#
# Next: [05 · Position-wise](05_position_wise.ipynb).
