# %% [markdown]
# # 08 · Limiting behaviour: what happens as $z \to \pm\infty$
#
# An activation $\sigma$ is applied to every pre-activation $z = x W_1 + b_1$,
# and nothing stops $z$ from being large: a big input, a badly scaled weight or
# a diverging training run all produce it. This notebook (scenario J)
# looks at the three activations of the course at both ends of the real line:
#
# $$\mathrm{ReLU}(z) = \max(0, z),$$
#
# $$\mathrm{SiLU}(z) = z\,s(z), \qquad
# \mathrm{GELU}(z) = z\,\Phi(z),$$
#
# | symbol | meaning |
# |---|---|
# | $z$ | a pre-activation: one real number (the functions act entry by entry on arrays) |
# | $s(z) = 1/(1 + e^{-z})$ | the logistic **sigmoid** (numpy code calls it `sigmoid`) |
# | $\Phi(z)$ | the standard normal cumulative distribution function, $\Phi(z) = \tfrac12\,\mathrm{erfc}(-z/\sqrt2)$ |
# | $\varphi(z) = e^{-z^2/2}/\sqrt{2\pi}$ | the standard normal density, $\Phi' = \varphi$ |
#
# First the mathematics (growth for $z \to +\infty$, the tails for
# $z \to -\infty$), then the arithmetic: float64 cannot hold every number, and
# the textbook formulas for $s$ and $\Phi$ overflow or lose every digit long
# before the inputs stop being finite. You will write versions that work for
# **every finite float64**, from $-1.8 \times 10^{308}$ to $1.8 \times 10^{308}$,
# without a single warning. (10 points.)
#
# *Where to run it:* in the browser through the **launch binder** badge of the
# repository's README, or locally with `make lab`. How the checks and the
# feedback work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import warnings

import numpy as np
from scipy import special

from ffn_helpers import checks, examples, gelu, gelu_tanh, mistakes, plots, relu, silu

W5, W8 = examples.W_5, examples.W_8
F64 = np.finfo(np.float64)


def floating_point_warnings(fn, *args):
    """Call fn(*args) with numpy's floating-point warnings switched on (underflow aside).

    Returns (result, the warnings raised, as sorted unique strings); nothing reaches stderr.
    """
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="warn", under="ignore"):
        warnings.simplefilter("always")
        result = fn(*args)
    return result, sorted({f"{w.category.__name__}: {w.message}" for w in caught})


# %% [markdown]
# ## 1. Growth: $z \to +\infty$
#
# **Forecast.** For $z = 10$, is $\mathrm{SiLU}(10)$ above or below 10? By
# roughly how much? And $\mathrm{GELU}(10)$?
#
# **Step.** Evaluate the reference activations from `ffn_helpers` at a few
# growing $z$, and the gap $z - \sigma(z)$.

# %%
z_up = np.array([1.0, 2.0, 5.0, 10.0, 20.0])
print(f"{'z':>5} {'ReLU':>10} {'SiLU':>12} {'GELU':>12} {'z - SiLU':>12} {'z - GELU':>12}")
for z, r, s_, g in zip(z_up, relu(z_up), silu(z_up), gelu(z_up), strict=True):
    print(f"{z:5.0f} {r:10.4f} {s_:12.8f} {g:12.8f} {z - s_:12.3e} {z - g:12.3e}")

# %% [markdown]
# **Why.** All three grow like $z$ itself: $s(z) \to 1$ and $\Phi(z) \to 1$, so
# $\mathrm{SiLU}(z) \approx z$ and $\mathrm{GELU}(z) \approx z$. The gap is
# itself a tail. Because $s(z) + s(-z) = 1$ and $\Phi(z) + \Phi(-z) = 1$,
#
# $$\sigma(z) - \sigma(-z) = z$$
#
# for each $\sigma \in \{\mathrm{ReLU}, \mathrm{SiLU}, \mathrm{GELU}\}$, so $z - \sigma(z) = -\sigma(-z)$: how close $\sigma$ gets to the identity at
# $+z$ is exactly how close it gets to 0 at $-z$. At $z = 10$ the SiLU gap is
# $4.54 \times 10^{-4}$ (W-8: $\mathrm{SiLU}(10) = 9.999546$), while the GELU gap,
# $7.6 \times 10^{-23}$, is far below the spacing of float64 numbers near 10
# ($\approx 1.8 \times 10^{-15}$): $\mathrm{GELU}(10)$ *is* `10.0` in float64.
#
# **Verify.** The identity, and W-5's row for $z = 10$.

# %%
z_all = np.linspace(-30.0, 30.0, 601)
for name, act in (("ReLU", relu), ("SiLU", silu), ("GELU", gelu)):
    assert np.allclose(act(z_all) - act(-z_all), z_all, rtol=1e-14, atol=1e-14), name
relu_10, silu_10, gelu_10, tanh_10 = W5["table"][10.0]
assert relu(10.0) == relu_10 and abs(silu(10.0) - silu_10) < 5e-9 and gelu(10.0) == gelu_10 == 10.0
assert abs(silu(10.0) - W8["silu_10"]) < 5e-7
assert np.isclose(10.0 - silu(10.0), -silu(-10.0), rtol=1e-9, atol=0)
assert -gelu(-10.0) < np.spacing(10.0) / 2 and 1.7e-15 < np.spacing(10.0) < 1.8e-15
print("σ(z) - σ(-z) = z holds for ReLU, SiLU and GELU; SiLU(10) =", silu(10.0), "and GELU(10) =", gelu(10.0))

# %% [markdown]
# ## 2. Tails: $z \to -\infty$
#
# **Forecast.** At $z = -10$, which is smaller in magnitude, $\mathrm{SiLU}(-10)$
# or $\mathrm{GELU}(-10)$? By a factor of 10, of $10^{5}$, or more?
#
# **Step.** Plot $|\sigma(z)|$ for negative $z$ on a logarithmic axis, where a
# straight line means exponential decay.

# %%
plots.tails_plot(("relu", "silu", "gelu", "gelu_tanh"))

# %% [markdown]
# *Figure: $|\sigma(z)|$ for $z$ from $-40$ to $-0.1$ on a log scale. ReLU is exactly 0
# (not drawable on a log axis), SiLU falls along a straight line (exponential
# decay), exact GELU along a parabola (Gaussian decay) until it leaves float64's
# range near $z = -37.7$; the tanh approximation of GELU drops to exactly 0 near
# $z = -7.2$.*
#
# **Why.** For $z \to -\infty$:
#
# - ReLU is **exactly** 0 for every $z < 0$: no signal and, in notebook 09, no gradient.
# - $s(z) = e^{z}/(1 + e^{z}) \approx e^{z}$, so $\mathrm{SiLU}(z) \approx z\,e^{z}$: an
#   exponential tail, $\log|\mathrm{SiLU}(z)| \approx z + \log|z|$.
# - $\Phi(z) \approx \varphi(z)/|z|$ (the leading term of the normal tail), so
#   $\mathrm{GELU}(z) = z\,\Phi(z) \approx -\varphi(z)$, which is $-e^{-z^2/2}/\sqrt{2\pi}$: a Gaussian
#   tail, $\log|\mathrm{GELU}(z)| \approx -z^2/2$, far faster.
#
# At $z = -10$ (W-5, W-8): $\mathrm{SiLU}(-10) = -4.5397868702 \times 10^{-4}$ and
# $\mathrm{GELU}(-10) = -7.61985302416 \times 10^{-23}$, about $6.0 \times 10^{18}$ times smaller.
# The tanh approximation returns $-0.0$ there; section 3 shows why.
#
# **Verify.** The asymptotic forms are close at $z = -10$ (their ratios to the
# exact values tend to 1; for GELU the next term of the tail is $1 - 1/z^2 = 0.99$).

# %%
z = -10.0
ratio_silu = silu(z) / (z * np.exp(z))
ratio_gelu = gelu(z) / -(np.exp(-z * z / 2) / np.sqrt(2 * np.pi))
print(f"SiLU(-10) / (z e^z) = {ratio_silu:.6f}     GELU(-10) / (-φ(z)) = {ratio_gelu:.6f}")
print(f"SiLU(-10) = {silu(z):.10e}   GELU(-10) = {gelu(z):.11e}   SiLU / GELU = {silu(z) / gelu(z):.1e}")
_, silu_m10, gelu_m10, tanh_m10 = W5["table"][-10.0]
assert abs(ratio_silu - 1) < 1e-4 and abs(ratio_gelu - (1 - 1 / z**2)) < 1e-3
assert np.isclose(silu(z), silu_m10, rtol=1e-10, atol=0) and np.isclose(gelu(z), gelu_m10, rtol=1e-11, atol=0)
assert np.isclose(gelu(z), W8["gelu_minus_10"], rtol=1e-3, atol=0)  # W-8 states it to 3 digits
assert relu(z) == 0.0 and gelu_tanh(z) == 0.0 and np.signbit(gelu_tanh(z)) and tanh_m10 == 0.0
assert f"{silu(z) / gelu(z):.1e}" == "6.0e+18"  # the ratio the text states
z_scan = np.linspace(-40.0, -5.0, 35001)
z_gelu_0, z_tanh_0 = z_scan[gelu(z_scan) == 0].max(), z_scan[gelu_tanh(z_scan) == 0].max()
assert -37.7 < z_gelu_0 < -37.6 and -7.2 < z_tanh_0 < -7.1
print(f"exactly 0: exact GELU from z = {z_gelu_0:.3f}, the tanh approximation from z = {z_tanh_0:.3f} downwards")

# %% [markdown]
# ## 3. Floating point: where the textbook formulas break
#
# float64 holds magnitudes up to `F64.max` $\approx 1.8 \times 10^{308}$;
# normal numbers go down to `F64.tiny` $\approx 2.2 \times 10^{-308}$, and
# *subnormal* numbers, with fewer and fewer significant bits, down to
# $4.9 \times 10^{-324}$. Below that a result **underflows** to 0; above the
# maximum it **overflows** to `inf`, and numpy says so with a `RuntimeWarning`.
# So $e^{t}$ overflows as soon as $t > \ln(\texttt{F64.max}) \approx 709.78$.
#
# **Forecast.** The textbook sigmoid is `1 / (1 + np.exp(-z))`. What does it
# return for $z = -710$, and what does numpy print?
#
# **Step.** `floating_point_warnings` (defined in the setup cell) runs a function
# with numpy's warnings switched on and collects them instead of letting them
# reach the screen.

# %%
print(f"largest float64 {F64.max:.6e}; exp overflows above ln(max) = {np.log(F64.max):.6f}")
print(f"smallest normal {F64.tiny:.6e}; smallest subnormal {np.nextafter(0.0, 1.0):.6e}")


def textbook_sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def exp_ratio_sigmoid(z):
    return np.exp(z) / (1.0 + np.exp(z))


z_far = np.array([-1e308, -745.0, -710.0, -709.0, 0.0, 709.0, 710.0, 1e308])
for fn in (textbook_sigmoid, exp_ratio_sigmoid, special.expit):
    values, raised = floating_point_warnings(fn, z_far)
    print(f"\n{fn.__name__}: {values}")
    print("  warnings:", raised or "none")

# %% [markdown]
# **Why.** For $z = -710$, `np.exp(-z)` $= e^{710}$ overflows to `inf`, and
# $1/(1 + \infty) = 0$. The *value* is the right limit, but the overflow warning
# is printed on stderr, and a graded cell that prints a warning scores 0. The
# mirror formula $e^{z}/(1 + e^{z})$ fails the other way: at $z = 710$ it
# computes $\infty/\infty$ = `nan`. The stable sigmoid uses each formula only
# where its exponential cannot overflow:
#
# $$s(z) = \begin{cases} \dfrac{1}{1 + e^{-z}} & z \ge 0 \quad (e^{-z} \le 1) \\[2ex]
# \dfrac{e^{z}}{1 + e^{z}} & z < 0 \quad (e^{z} < 1) \end{cases}$$
#
# This is what `scipy.special.expit` (the course's reference sigmoid) computes. Note
# that it returns 0 for $z \le -710$ instead of the subnormal $e^{z}$: both are
# correct to what float64 can hold, so the checks below treat any result smaller
# than `F64.tiny` as 0.
#
# **Verify.**

# %%
values, raised = floating_point_warnings(textbook_sigmoid, np.array([-710.0]))
assert values[0] == 0.0 and raised == ["RuntimeWarning: overflow encountered in exp"]
assert np.isnan(floating_point_warnings(exp_ratio_sigmoid, np.array([710.0]))[0][0])
assert floating_point_warnings(special.expit, z_far)[1] == []
for z, s_z in W5["sigmoid"].items():  # W-5 states s(-0.5) and s(2) to 8 decimals
    assert abs(special.expit(z) - s_z) < 5e-9
assert np.log(F64.max) < -W5["naive_sigmoid_overflow_below"] < np.log(F64.max) + 1
print("The textbook sigmoid overflows just beyond z = -709.78; expit never does.")

# %% [markdown]
# ### Cancellation: GELU's tail disappears
#
# **Forecast.** The textbook GELU is $\tfrac12 z\,(1 + \mathrm{erf}(z/\sqrt2))$.
# At $z = -10$ the true value is $-7.6 \times 10^{-23}$. What does float64 give?
#
# **Step.**

# %%
z = -10.0
erf_part = special.erf(z / np.sqrt(2))
print("erf(z/√2)         =", erf_part, "   (exactly -1.0?", erf_part == -1.0, ")")
print("1 + erf(z/√2)     =", 1 + erf_part)
print("textbook GELU     =", 0.5 * z * (1 + erf_part))
print("0.5·z·erfc(-z/√2) =", 0.5 * z * special.erfc(-z / np.sqrt(2)))
print("z·ndtr(z)         =", z * special.ndtr(z))
print("tanh approximation:", gelu_tanh(z))

# %% [markdown]
# **Why.** $\mathrm{erf}(-10/\sqrt2) = -1 + 1.5 \times 10^{-23}$, but the float64
# numbers next to $-1$ are $2^{-53} \approx 1.1 \times 10^{-16}$ apart, so
# `erf` returns exactly $-1.0$ and $1 + \mathrm{erf}$ **cancels** to 0: every
# digit of the answer was in the part that could not be stored. The complementary
# function $\mathrm{erfc}(t) = 1 - \mathrm{erf}(t)$ is computed directly, without
# the subtraction, so $\Phi(z) = \tfrac12\,\mathrm{erfc}(-z/\sqrt2)$ keeps its
# relative accuracy deep into the tail (`scipy.special.ndtr` is exactly this).
# The tanh approximation has the same problem with $1 + \tanh(\cdot)$, and
# already near $z = -7$. The result is $-0.0$: $z < 0$ times $+0.0$.
#
# The loss of accuracy starts before the value becomes 0: at $z = -8$ the
# textbook formula is already off by about 2 % (too small to see on the log
# scale below), and a little further on its curve simply stops.

# %%
def gelu_textbook(z):
    """0.5·z·(1 + erf(z/√2)): exact on paper, cancels in float64."""
    return 0.5 * z * (1.0 + special.erf(z / np.sqrt(2.0)))


plots.tails_plot(("gelu", gelu_textbook, "gelu_tanh"), z=np.linspace(-14.0, -0.1, 600),
                 title="Exact GELU against its textbook formula and the tanh approximation")

# %% [markdown]
# *Figure: $|\mathrm{GELU}(z)|$ on a log scale from $z = -14$ to $-0.1$. The erfc
# form (exact GELU) keeps falling like a Gaussian; the erf form drops to exactly
# 0 below $z \approx -8.4$, the tanh approximation below $z \approx -7.2$.*
#
# **Verify.** The textbook formula returns $-0.0$ at $z = -10$ and is 2 % off at
# $z = -8$; the erfc form matches W-5 to 11 digits.

# %%
assert gelu_textbook(-10.0) == 0.0 and np.signbit(gelu_textbook(-10.0))
assert np.isclose(0.5 * -10.0 * special.erfc(10.0 / np.sqrt(2)), W5["table"][-10.0][2], rtol=1e-11, atol=0)
rel_8 = abs(gelu_textbook(-8.0) / gelu(-8.0) - 1)
assert 0.01 < rel_8 < 0.03
z_scan = np.linspace(-12.0, -5.0, 7001)
z_zero = z_scan[gelu_textbook(z_scan) == 0].max()
assert -8.4 < z_zero < -8.35
print(f"textbook GELU: {rel_8:.1%} off at z = -8, exactly 0 from z = {z_zero:.4f} downwards")

# %% [markdown]
# ## 4. How the checks below treat warnings
#
# Each check calls your function through `check_quiet`: with numpy's warnings
# switched on (`np.errstate(all="warn")`), recorded by
# `warnings.catch_warnings(record=True)` so that none reaches the screen. A
# function that raises *any* warning fails, with the warnings and the inputs
# that cause them listed. Underflow is the exception: a result too small for
# float64 rounding to 0 (or to a subnormal) is the correct answer, and numpy
# ignores underflow by default.
#
# Values must then agree with the reference to a relative $10^{-10}$, plus an
# absolute `ATOL` $= 1000 \cdot$ `F64.tiny` $\approx 2.2 \times 10^{-305}$ for the
# last corner of float64: `expit` and `ndtr` return 0 where the true $s(z)$ or
# $\Phi(z)$ is below `F64.tiny`, while `np.exp` returns a subnormal there, and
# multiplying by $z$ ($|z| < 1000$ in that corner) turns it into a normal number:
# $-710\,e^{-710} \approx -3.2 \times 10^{-306}$ is the true SiLU(-710), and 0 is what
# `z * expit(z)` gives. Both are accepted. The cell shows the message the
# textbook sigmoid gets.

# %% nbgrader={"grade": false, "grade_id": "check_quiet", "locked": true, "schema_version": 3, "solution": false, "task": false}
RTOL = 1e-10  # correct formulas agree to a few units in the last place; wrong ones miss by far more
ATOL = 1e3 * F64.tiny  # |z|·(a σ below F64.tiny), which expit/ndtr flush to 0: either answer is fine

# Every kind of finite float64: ±max, the overflow thresholds of exp (±709.78) and of its
# subnormals (±745), the sigmoid's and GELU's tails, subnormals, ±0.
EXTREMES = np.array([
    -F64.max, -1e308, -1e300, -745.2, -745.0, -710.0, -709.79, -709.78, -709.0, -100.0, -38.5, -37.0, -20.0,
    -10.0, -1.0, -F64.tiny, -5e-324, -0.0, 0.0, 5e-324, F64.tiny, 1e-300, 1.0, 10.0, 20.0, 37.0, 38.5, 100.0,
    709.0, 709.78, 709.79, 710.0, 745.0, 745.2, 1e300, 1e308, F64.max,
])


def _warning_inputs(fn, z, limit=6):
    """The entries of z on which fn warns (tried one at a time)."""
    found = []
    for value in np.ravel(np.asarray(z, dtype=float)):
        try:
            if floating_point_warnings(fn, np.array([value]))[1]:
                found.append(float(value))
        except Exception:  # a crash here is reported by the main check, not by this hint
            continue
        if len(found) == limit:
            break
    return found


def check_quiet(fn, z, expected, catalogue=()):
    """Test cells' helper: fn(z) must be close to `expected`, leave z alone and raise no warning."""
    name = f"{fn.__name__}(z)"
    before = np.array(z, dtype=float, copy=True)
    actual, raised = floating_point_warnings(checks.call, fn, z)
    if raised:
        said = [f"{name} raised floating-point warnings (a graded cell that prints one scores 0):",
                *(f"  {w}" for w in raised)]
        culprits = _warning_inputs(fn, z)
        lines = said + [f"  for the inputs z = {culprits}"] if culprits else said
        found = []
        for mistake in catalogue:  # a known mistake that warns the same way and gives the same values
            try:
                wrong, its_warnings = floating_point_warnings(mistake.compute, z)
            except Exception:
                continue
            if its_warnings == raised and checks.compare(actual, wrong, rtol=RTOL, atol=ATOL).ok:
                found.append(mistake)
        raise checks.failure("\n".join(lines), found, public="\n".join(said))  # the inputs: not for the student
    if isinstance(z, np.ndarray) and not np.array_equal(z, before, equal_nan=True):
        text = f"{name} changed its argument z in place: work on a copy."
        raise checks.failure(text, public=text)
    checks.assert_close(actual, expected, name=name, rtol=RTOL, atol=ATOL, mistakes=catalogue, args=(z,))
    return actual


try:
    z_demo = np.array([-0.5, 2.0, -710.0, 1e308])
    check_quiet(textbook_sigmoid, z_demo, special.expit(z_demo), mistakes.for_exercise("sigmoid"))
except AssertionError as failure:
    print("The check failed, as it should:\n")
    print(failure)

# %% [markdown]
# ## 5. Exercise: a sigmoid for every finite input
#
# **Forecast.** Your function must handle $z = -10^{308}$ and $z = 10^{308}$.
# Which formula will you use for each, and why can neither of them overflow?
#
# **Step.** Implement `sigmoid(z)`: $s(z) = 1/(1 + e^{-z})$ for a number or an
# array of any shape, returning float64, with no overflow and no warning for any
# finite float64, and with **relative accuracy in the tails (|z| up to 60)**: the
# checks compare with `scipy.special.expit` to a relative $10^{-10}$, also where
# $s(z)$ is as small as $10^{-26}$.
# Use the two formulas of section 3, each only on the entries where it is safe.
# Careful: `np.where(condition, a, b)` evaluates **both** `a` and `b` on every
# entry before choosing, so the discarded branch still overflows; select entries
# with a boolean mask instead (or use `np.exp(-np.abs(z))`, which never overflows).
# (You could call `scipy.special.expit`; write it yourself first.)
#
# A formula can be exact on paper, never overflow, and still fail that last
# requirement. $s(z) = \tfrac12\,(1 + \tanh(z/2))$ is such a formula: for
# $z \ll 0$, $\tanh(z/2)$ is $-1$ plus a tiny amount, and adding 1 keeps only the
# digits of that tiny amount that survived next to the 1.
#
# **Forecast.** How many correct significant digits does the tanh form have at
# $z = -20$? At $z = -40$?

# %%
def tanh_sigmoid(z):
    return 0.5 * (1.0 + np.tanh(np.asarray(z, dtype=float) / 2.0))


z_tails = np.array([-10.0, -20.0, -30.0, -40.0, -60.0])
rel_tanh = np.abs(tanh_sigmoid(z_tails) - special.expit(z_tails)) / special.expit(z_tails)
for z_value, s_value, rel in zip(z_tails, special.expit(z_tails), rel_tanh, strict=True):
    print(f"z = {z_value:5.0f}: s(z) = {s_value:.3e}, tanh form off by a relative {rel:.1e}")

# %% [markdown]
# **Why.** float64 spaces its numbers near 1 about $1.1 \times 10^{-16}$ apart, so
# $1 + \tanh(z/2)$ is known only to that absolute precision: fine while $s(z)$ is
# large, a relative error of about $10^{-16}/s(z)$ when it is small, and all of
# it once $s(z)$ drops below that spacing (from $z \approx -38$ the tanh form
# returns exactly 0). The branch $e^{z}/(1 + e^{z})$ never adds anything to 1
# that it then needs back, so it keeps every digit.
#
# **Verify.**

# %%
assert rel_tanh[0] < 1e-10 < rel_tanh[1]  # fine at -10, already past the check's tolerance at -20
assert rel_tanh[3] == rel_tanh[4] == 1.0 and tanh_sigmoid(-40.0) == 0.0  # every digit lost
assert 1.0 - np.nextafter(1.0, 0.0) == 2.0**-53 and round(2.0**-53, 18) == 1.11e-16  # the spacing below 1
z_scan = np.linspace(-45.0, -30.0, 15001)
tanh_zero_from = z_scan[tanh_sigmoid(z_scan) == 0].max()
assert -38.1 < tanh_zero_from < -37.9
assert 1e-27 < special.expit(-60.0) < 1e-26  # the smallest s(z) in the checked tails
print("The tanh form meets 1e-10 at z = -10, misses it from z = -20 and returns 0 at z = -40.")

# %% [markdown]
# Now write `sigmoid(z)`, as the start of this section describes it.

# %% nbgrader={"grade": false, "grade_id": "sigmoid", "locked": false, "schema_version": 3, "solution": true, "task": false}
def sigmoid(z):
    """The logistic sigmoid 1 / (1 + e^(-z)), elementwise; z: a number or an array of any shape."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))  # in (0, 1]: never overflows
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for sigmoid</summary>
#
# $e^{-z}$ overflows for very negative $z$, and $e^{z}$ for very positive $z$.
# Use two formulas, each on the side where its exponential is small:
# $1/(1 + e^{-z})$ for $z \ge 0$, and $e^{z}/(1 + e^{z})$ for $z < 0$.
#
# <details><summary>Hint 2 of 2 for sigmoid</summary>
#
# Both formulas need only $e^{-|z|}$, which lies in $(0, 1]$ and never
# overflows: compute it once for the whole array, then choose per entry with
# `np.where(z >= 0, ..., ...)`. Since both branches are then finite everywhere,
# `np.where` evaluating both gives no warning.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** W-5's inputs, then the far ends of float64. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_sigmoid", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
z_test = np.array([-0.5, 2.0, 10.0, -10.0])
check_quiet(sigmoid, z_test, special.expit(z_test), mistakes.for_exercise("sigmoid"))
z_test = np.array([-1e308, -745.0, -710.0, 710.0, 745.0, 1e308])
check_quiet(sigmoid, z_test, special.expit(z_test), mistakes.for_exercise("sigmoid"))
checks.ok("sigmoid matches W-5 and survives z = ±1e308 without a warning.")

# %% [markdown]
# The grader also checks (2 points), always with warnings switched on: every
# kind of finite float64 (±`F64.max`, ±1e308, the thresholds ±709.78, ±710,
# ±745, subnormals, 0 and -0.0); a $(2, 3, 4)$ array mixing huge and ordinary
# values; a 0-d array, Python floats and a list; that `z` is not modified.

# %% nbgrader={"grade": true, "grade_id": "test_sigmoid_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
z_test = np.append(EXTREMES, 2.5)  # not symmetric about 0, so that σ(-z) cannot pass for σ(z) reversed
check_quiet(sigmoid, z_test, special.expit(z_test), mistakes.for_exercise("sigmoid"))
rng = checks.hidden_rng("08_limiting_behaviour", "test_sigmoid_hidden")
z_test = rng.normal(scale=500.0, size=(2, 3, 4))
z_test.flat[::5] = rng.choice(EXTREMES, size=z_test.flat[::5].size)
check_quiet(sigmoid, z_test, special.expit(z_test), mistakes.for_exercise("sigmoid"))
for value in (-1e308, -745.0, 0.0, 710.0, 1e308):
    check_quiet(sigmoid, value, special.expit(value), mistakes.for_exercise("sigmoid"))
check_quiet(sigmoid, np.array(-800.0), special.expit(-800.0), mistakes.for_exercise("sigmoid"))
check_quiet(sigmoid, [-1000.0, -0.0, 1000.0], special.expit([-1000.0, -0.0, 1000.0]), mistakes.for_exercise("sigmoid"))
z_test = np.linspace(-60.0, 59.5, 240)  # the tails, where cancellation would show (not symmetric: σ(-z) shows)
check_quiet(sigmoid, z_test, special.expit(z_test), mistakes.for_exercise("sigmoid"))
checks.ok("sigmoid is right, and quiet, on every kind of finite float64.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Exercise: SiLU for every finite input
#
# **Forecast.** $\mathrm{SiLU}(-10^{308}) = -10^{308} \cdot s(-10^{308})$. Is the
# product an overflow risk, or an underflow, or neither?
#
# **Step.** Implement `silu_stable(z)` $= z\,s(z)$, elementwise, returning
# float64, with no overflow and no warning for any finite float64, and with
# relative accuracy in the tails (|z| up to 60): a relative $10^{-10}$, as for
# the sigmoid, so the tanh form fails here too. Build it on a stable sigmoid
# (yours from section 5 is in scope, or write the two branches again).

# %% nbgrader={"grade": false, "grade_id": "silu_stable", "locked": false, "schema_version": 3, "solution": true, "task": false}
def silu_stable(z):
    """SiLU(z) = z · sigmoid(z), elementwise; z: a number or an array of any shape."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    e = np.exp(-np.abs(z))
    return z * np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for silu_stable</summary>
#
# SiLU is $z$ times the sigmoid, so a stable SiLU is $z$ times a stable sigmoid:
# the overflow lives in the exponential, never in the product.
#
# <details><summary>Hint 2 of 2 for silu_stable</summary>
#
# Reuse your `sigmoid` from section 5, or write its two branches again with
# $e^{-|z|}$: multiply `z` (as a float array) by it. The product cannot
# overflow: the sigmoid is at most 1, and it underflows to 0 only where the
# exact product is below every float64 anyway.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** W-5 and W-8's values, then the far ends. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_silu_stable", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
z_test = np.array([-0.5, 2.0, 10.0, -10.0])
check_quiet(silu_stable, z_test, silu(z_test), mistakes.for_exercise("silu_stable"))
z_test = np.array([-1e308, -745.0, -710.0, 710.0, 745.0, 1e308])
check_quiet(silu_stable, z_test, silu(z_test), mistakes.for_exercise("silu_stable"))
checks.ok("silu_stable matches W-5 and survives z = ±1e308 without a warning.")

# %% [markdown]
# The grader also checks (2 points), with warnings switched on: every kind of
# finite float64, a $(2, 3, 4)$ array of mixed extremes, a 0-d array, Python
# floats and a list, the tails where a cancelling formula loses digits, and
# that `z` is not modified.

# %% nbgrader={"grade": true, "grade_id": "test_silu_stable_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
catalogue = mistakes.for_exercise("silu_stable")
check_quiet(silu_stable, EXTREMES.copy(), silu(EXTREMES), catalogue)
rng = checks.hidden_rng("08_limiting_behaviour", "test_silu_stable_hidden")
z_test = rng.normal(scale=500.0, size=(2, 3, 4))
z_test.flat[1::5] = rng.choice(EXTREMES, size=z_test.flat[1::5].size)
check_quiet(silu_stable, z_test, silu(z_test), catalogue)
for value in (-1e308, -745.0, -0.0, 710.0, 1e308):
    check_quiet(silu_stable, value, silu(value), catalogue)
check_quiet(silu_stable, np.array(-800.0), silu(-800.0), catalogue)
check_quiet(silu_stable, [-1000.0, 0.0, 1000.0], silu([-1000.0, 0.0, 1000.0]), catalogue)
z_test = np.linspace(-60.0, 60.0, 241)
check_quiet(silu_stable, z_test, silu(z_test), catalogue)
checks.ok("silu_stable is right, and quiet, on every kind of finite float64.")
### END HIDDEN TESTS

# %% [markdown]
# ## 7. Exercise: GELU that keeps its tail
#
# **Forecast.** Which of these keeps $\mathrm{GELU}(-10) \approx -7.62 \times 10^{-23}$:
# `0.5 * z * (1 + erf(z / sqrt(2)))`, `0.5 * z * erfc(-z / sqrt(2))`, `z * ndtr(z)`?
#
# **Step.** Implement `gelu_exact(z)` $= z\,\Phi(z)$, elementwise, returning
# float64 accurate to a relative $10^{-10}$ wherever the result is a normal float64, with no warning
# for any finite input. `scipy.special` (imported as `special`) has `erfc` and
# `ndtr`. Watch the order of operations at $z = 1.8 \times 10^{308}$: `z * 2`
# overflows, `0.5 * z` does not.

# %% nbgrader={"grade": false, "grade_id": "gelu_exact", "locked": false, "schema_version": 3, "solution": true, "task": false}
def gelu_exact(z):
    """Exact GELU(z) = z · Φ(z), Φ the standard normal CDF, elementwise; z: a number or an array."""
    ### BEGIN SOLUTION
    z = np.asarray(z, dtype=float)
    return 0.5 * z * special.erfc(-z / np.sqrt(2.0))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for gelu_exact</summary>
#
# $1 + \operatorname{erf}(z/\sqrt2)$ cancels for very negative $z$: 1 plus
# almost $-1$ leaves nothing. The complementary error function gives the same
# quantity without that subtraction:
# $1 + \operatorname{erf}(u) = \operatorname{erfc}(-u)$.
#
# <details><summary>Hint 2 of 2 for gelu_exact</summary>
#
# Write $\mathrm{GELU}(z) = \tfrac12 z\, \operatorname{erfc}(-z/\sqrt2)$ with
# `special.erfc` on a float array. Multiply by 0.5 first (`0.5 * z`, not `z / 2`
# after a product): near the largest float64, doubling overflows, halving does
# not.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** W-5's inputs, including $\mathrm{GELU}(-10) = -7.61985302416 \times
# 10^{-23}$, then the far ends. (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_gelu_exact", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
catalogue = mistakes.for_exercise("gelu_exact")
z_test = np.array(list(W5["table"]))
check_quiet(gelu_exact, z_test, gelu(z_test), catalogue)
check_quiet(gelu_exact, -10.0, W5["table"][-10.0][2], catalogue)  # -7.61985302416e-23, to 12 digits
z_test = np.array([-1e308, -745.0, -710.0, -37.0, 710.0, 745.0, 1e308])
check_quiet(gelu_exact, z_test, gelu(z_test), catalogue)
checks.ok("gelu_exact keeps the Gaussian tail: GELU(-10) ≈ -7.62e-23.")

# %% [markdown]
# The grader also checks (2 points), with warnings switched on: the whole tail
# from $z = -37$ (where $\Phi$ is still a normal float64) to 0 and beyond, every
# kind of finite float64, a $(2, 3, 4)$ array of mixed extremes, a 0-d array,
# Python floats and a list, and that `z` is not modified; all against the
# reference `ffn_helpers.gelu` to a relative $10^{-10}$.

# %% nbgrader={"grade": true, "grade_id": "test_gelu_exact_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
catalogue = mistakes.for_exercise("gelu_exact")
z_test = np.linspace(-37.0, 5.0, 421)
check_quiet(gelu_exact, z_test, gelu(z_test), catalogue)
check_quiet(gelu_exact, EXTREMES.copy(), gelu(EXTREMES), catalogue)
rng = checks.hidden_rng("08_limiting_behaviour", "test_gelu_exact_hidden")
z_test = rng.normal(scale=20.0, size=(2, 3, 4))
z_test.flat[2::5] = rng.choice(EXTREMES, size=z_test.flat[2::5].size)
check_quiet(gelu_exact, z_test, gelu(z_test), catalogue)
for value in (-F64.max, -30.0, -0.0, 3.0, F64.max):
    check_quiet(gelu_exact, value, gelu(value), catalogue)
check_quiet(gelu_exact, np.array(-12.5), gelu(-12.5), catalogue)
check_quiet(gelu_exact, [-20.0, 0.0, 20.0], gelu([-20.0, 0.0, 20.0]), catalogue)
checks.ok("gelu_exact matches the reference across the whole float64 range.")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - As $z \to +\infty$, ReLU, SiLU and GELU all grow like $z$; the gap
#   $z - \sigma(z) = -\sigma(-z)$ is the tail at $-z$.
# - As $z \to -\infty$: ReLU is exactly 0, SiLU decays like $z\,e^{z}$, GELU like
#   $-\varphi(z)$, a Gaussian: $6.0 \times 10^{18}$ times smaller than SiLU at $z = -10$.
# - In float64, $e^{t}$ overflows for $t > 709.78$; a formula is stable when no
#   intermediate overflows (pick the branch by the sign of $z$) and no digit is
#   lost to cancellation (use $\mathrm{erfc}$, not $1 + \mathrm{erf}$).
# - `np.where` evaluates both branches; warnings count, even when the value is right.
#
# Next: [09 · The FFN module](09_ffn_module.ipynb), where all of this becomes one class.
