# %% [markdown]
# # 12 · Low precision: float16, bfloat16 and int8 in the FFN
#
# Everything so far ran in float64, 8 bytes per number. Large models are
# trained and served in 2-byte and 1-byte formats: notebook 06 counted what
# that saves ([06 · Parameter budget](06_parameter_budget.ipynb), `param_bytes`:
# BERT-base's 12 FFN layers take 216 MiB in float32 and half that in bfloat16).
# This notebook shows what the saving costs the FFN,
# $\mathrm{FFN}(x) = \mathrm{ReLU}(x W_1 + b_1) W_2 + b_2$:
#
# For each format: its bits (sign, exponent, mantissa), its largest number, its
# spacing $\varepsilon$ just above 1, and what goes wrong.
#
# - **float32**: bits 1, 8, 23; largest $3.40 \times 10^{38}$;
#   $\varepsilon = 2^{-23} \approx 1.19 \times 10^{-7}$. Little goes wrong.
# - **float16**: bits 1, 5, 10; largest 65504;
#   $\varepsilon = 2^{-10} \approx 9.77 \times 10^{-4}$. Range: the hidden layer
#   overflows, each of its pre-activations a sum of $d_\text{model}$ products.
# - **bfloat16**: bits 1, 8, 7; largest $3.39 \times 10^{38}$;
#   $\varepsilon = 2^{-7} = 0.0078125$. Precision: about 2 to 3 significant digits.
# - **int8 (+ a scale)**: 8-bit integers $-127 \dots 127$; the largest number and
#   the spacing are set by the scale. One scale per column must fit all of its
#   weights.
#
# You will write the float16 forward pass that overflows and its fix, bfloat16
# rounding bit by bit, int8 quantisation of $W_1$ and $W_2$, and an FFN that
# runs on the int8 weights; then compare the formats' errors over model width.
# Each exercise states what goes in and out (dtype included) and how closely
# the checks compare. (10 points.)
#
# *Where to run it:* in the browser through the **launch binder** badge of the
# repository's README, or locally with `make lab`. How the checks and the
# feedback work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import warnings

import numpy as np

from ffn_helpers import checks, examples, ffn_forward, mistakes, param_bytes, plots, preset
from ffn_helpers import precision as reference

P = examples.PRECISION  # the worked examples' numbers
F16 = np.finfo(np.float16)
MiB = 2**20


def quiet_call(fn, *args, name):
    """Call a learner's fn(*args) with numpy's floating-point warnings off (overflow to inf is expected here)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return checks.call(fn, *args, name=name)


def bits(a):
    """The float32 bit patterns of `a`, as hexadecimal strings."""
    return [f"0x{int(b):08X}" for b in np.ravel(np.asarray(a, dtype=np.float32)).view(np.uint32)]


def same_bits(got, expected):
    """Entrywise: the same float32 bits, or NaN for NaN (any NaN)."""
    got, expected = np.asarray(got, dtype=np.float32), np.asarray(expected, dtype=np.float32)
    return (got.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(got) & np.isnan(expected))


def check_bfloat16(fn, x):
    """Test cells' helper: fn(x) must be to_bfloat16's result bit for bit (any NaN for NaN), x unchanged."""
    before = x.copy()
    expected = reference.to_bfloat16(x)
    got = quiet_call(fn, x, name="to_bfloat16")
    if not isinstance(got, np.ndarray) or got.dtype != np.float32 or got.shape != x.shape:
        raise checks.wrong_result("to_bfloat16(x)", f"a float32 array of shape {x.shape}", got)
    if not np.array_equal(x.view(np.uint32), before.view(np.uint32)):
        raise checks.failure("to_bfloat16 changed its argument x in place: work on a copy.", public=True)
    wrong = ~same_bits(got, expected)
    if wrong.any():
        where = np.flatnonzero(wrong.ravel())[:4]
        lines = [f"to_bfloat16(x) differs from the expected bfloat16 values in {int(wrong.sum())} of {x.size} "
                 "entries (compared bit for bit; any NaN is accepted for a NaN), e.g.:"]
        for i in where:
            xi, ei, gi = x.ravel()[i], expected.ravel()[i], got.ravel()[i]
            lines.append(f"  x = {xi!r} ({bits(xi)[0]}): expected {ei!r} ({bits(ei)[0]}), got {gi!r} ({bits(gi)[0]})")
        found = []
        for mistake in mistakes.for_exercise("to_bfloat16"):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                their = mistake.compute(x)
            if np.shape(their) == got.shape and same_bits(got, their).all():
                found.append(mistake)
        raise checks.failure("\n".join(lines), found, public=lines[0].removesuffix(", e.g.:") + ".")


def _pair(result, name):
    if not isinstance(result, tuple | list) or len(result) != 2:
        raise checks.wrong_result(name, "a pair (q, scale)", result)
    return np.asarray(result[0]), np.asarray(result[1])


def check_quantized(fn, W):
    """Test cells' helper: fn(W) must return (q, scale): q the reference's int8 exactly, scale to 1e-12."""
    q_ref, s_ref = reference.quantize_int8(W)
    got = quiet_call(fn, W.copy(), name="quantize_int8")
    q, scale = _pair(got, "quantize_int8(W)")
    problems = []  # (the whole text, the text without the values: what a private offering's student reads)
    if q.dtype != np.int8:
        problems.append((f"q should have dtype int8, got {q.dtype}",) * 2)
    if q.shape != q_ref.shape or not np.array_equal(q, q_ref):
        result = checks.compare(q, q_ref, name="q", rtol=0, atol=0)
        problems.append((result.message, result.public or result.message))
    result = checks.compare(scale, s_ref, name="scale", rtol=1e-12, atol=0)
    if not result.ok:
        problems.append((result.message, result.public or result.message))
    if problems:
        found = []
        for mistake in mistakes.for_exercise("quantize_int8"):
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                q_m, s_m = mistake.compute(W)
            if (q_m.shape == q.shape and np.array_equal(q_m, q) and np.shape(s_m) == scale.shape
                    and np.allclose(s_m, scale, rtol=1e-12, atol=0)):
                found.append(mistake)
        raise checks.failure("quantize_int8(W) is not right:\n" + "\n".join(whole for whole, _ in problems), found,
                             public="quantize_int8(W) is not right:\n" + "\n".join(public for _, public in problems))


F16_TOL = {False: 4e-3, True: 1e-5}  # float16 results (fix=False) and float32 results (fix=True)


def check_float16(fn, args, fix):
    """Test cells' helper: fn(*args, fix=fix) against the reference: dtype exact, values within F16_TOL."""
    expected = reference.ffn_forward_float16(*args, fix=fix)
    got = quiet_call(lambda *a: fn(*a, fix=fix), *args, name="ffn_forward_float16")
    want = np.float32 if fix else np.float16
    if not isinstance(got, np.ndarray) or got.dtype != want:
        raise checks.wrong_result(f"ffn_forward_float16(x, W1, b1, W2, b2, fix={fix})", f"a {want.__name__} array",
                                  got)
    finite = np.abs(expected[np.isfinite(expected)].astype(float))
    size = float(finite.max()) if finite.size else 1.0
    tol = F16_TOL[fix]
    checks.assert_close(got, expected, name=f"ffn_forward_float16(x, W1, b1, W2, b2, fix={fix})", rtol=tol,
                        atol=tol * size,
                        mistakes=mistakes.for_exercise("ffn_forward_float16"), args=(*args, fix))


# %% [markdown]
# ## 1. float16's range
#
# float16 spends 5 bits on the exponent, so its numbers stop at
# $(2 - 2^{-10}) \cdot 2^{15} = 65504$; anything that rounds beyond that is
# `inf`. At the other end, normal numbers stop at $2^{-14} \approx 6.10 \times
# 10^{-5}$ (below that, subnormals with fewer and fewer digits down to $2^{-24}
# \approx 6 \times 10^{-8}$, then 0).
#
# **Forecast.** What is `np.float16(70000)`? And `np.float16(65519)`?
#
# **Step.** (The cell switches numpy's overflow warning off: overflow is what we
# want to see here.)

# %%
print(f"float16: largest {F16.max}, smallest normal {F16.tiny:.2e}, eps = 2^-10 = {F16.eps:.2e}")
with np.errstate(over="ignore"):
    for value in (65504.0, 65519.0, 65520.0, 70000.0, 1e-5, 1e-8):
        print(f"np.float16({value:g}) = {np.float16(value)}")

# %% [markdown]
# **Why.** Near 65504 float16 numbers are 32 apart, so everything below
# $65504 + 16 = 65520$ rounds down to 65504 and everything from 65520 up rounds
# to `inf`. Small numbers lose digits instead: $10^{-5}$ is a subnormal, a
# whole multiple of $2^{-24}$ (168 of them, 0.14 % too large), and $10^{-8}$,
# less than half of $2^{-24}$, is 0.
#
# **Verify.**

# %%
assert F16.max == P["float16"]["max"] == 65504 and F16.eps == P["float16"]["eps"] == 2.0**-10
assert F16.tiny == P["float16"]["tiny"] and f"{F16.tiny:.2e}" == "6.10e-05" and f"{F16.eps:.2e}" == "9.77e-04"
with np.errstate(over="ignore"):
    assert np.float16(65519.0) == 65504 and np.isinf(np.float16(65520.0))
    assert np.isinf(np.float16(P["float16"]["overflows"])) and np.float16(1e-8) == 0
assert np.float16(65504.0) - np.nextafter(np.float16(65504.0), np.float16(0)) == 32 and float(np.float16(1e-5)) == 168 * 2.0**-24
assert f"{float(np.float16(1e-5)) / 1e-5 - 1:.2%}" == "0.14%" and f"{2.0**-24:.0e}" == "6e-08"
assert np.float16(2.9e-8) == 0 < np.float16(3.0e-8)  # half of 2^-24 ≈ 2.98e-8 is where 0 ends
F32 = np.finfo(np.float32)  # the introduction's table
assert f"{F32.max:.2e}" == "3.40e+38" and F32.eps == 2.0**-23 and f"{F32.eps:.2e}" == "1.19e-07"
print("65504 is float16's largest number; 70000 becomes inf.")

# %% [markdown]
# ## 2. Overflow in the hidden layer, and the fix
#
# The FFN's widest, largest numbers are in the hidden layer: each $z_j = \sum_i
# x_i W_{1,ij} + b_{1,j}$ adds up $d_\text{model}$ products, and large
# language models are known to carry a few input features far larger than the
# rest ("outlier features"). $W_2$ then brings $y$ back down. Take $d_\text{model} = 4$, $d_\text{ff} = 8$,
# $x = (256, 256, 256, 256)$, every entry of $W_1$ equal to 80, of $W_2$ equal
# to $1/1024$, zero biases: every number here is exact in float16, and
# $y = 640$ is too.
#
# **Forecast.** $z_j = 4 \cdot 256 \cdot 80$. What does a forward pass that
# stores $z$ in float16 return?
#
# **Step.** `reference.ffn_forward_float16` rounds the inputs to float16 and
# multiplies and sums in float32 (as GPUs' matrix units usually do); with `fix=False` it stores $z$,
# $h$ and $y$ in float16, with `fix=True` it keeps them in float32.

# %%
o = P["float16_overflow"]
args_w = (o["x"], o["W1"], o["b1"], o["W2"], o["b2"])
z_value = float(o["x"] @ o["W1"][:, 0])
print(f"z_j = 4·256·80 = {z_value:g}, beyond float16's {F16.max:g}")
print("float64:            ", ffn_forward(*args_w))
print("float16:            ", reference.ffn_forward_float16(*args_w))
print("float16, fix=True:  ", reference.ffn_forward_float16(*args_w, fix=True))

# %% [markdown]
# **Why.** $z_j = 81920$ does not fit in float16, so it becomes `inf`, and
# $\mathrm{ReLU}(\infty) \cdot \tfrac{1}{1024}$ summed is `inf` again: one overflow in
# the hidden layer ruins every output. Nothing was wrong with the weights or the
# output, only with the storage of the middle. Summing in float32 is not enough
# when the sum is then stored in float16. The fix: keep storing the weights in
# 16 bits, but accumulate the products and keep $z$ and $h$ in float32, whose
# range reaches $3.4 \times 10^{38}$. (The other way out is a 16-bit format
# with float32's range: bfloat16, section 3.)
#
# **Verify.**

# %%
assert z_value == o["z"] == 81920 > float(F16.max)
assert np.isinf(reference.ffn_forward_float16(*args_w)).all()
fixed = reference.ffn_forward_float16(*args_w, fix=True)
assert fixed.dtype == np.float32 and (fixed == o["y"]).all() and (ffn_forward(*args_w) == 640).all()
print("float16 storage of z overflows to inf; z in float32 gives y = 640 exactly.")

# %% [markdown]
# ### Exercise: `ffn_forward_float16`
#
# Write `ffn_forward_float16(x, W1, b1, W2, b2, fix=False)`, the ReLU FFN on
# float16 storage, with $x$ of shape $(\dots, d_\text{model})$. The contract:
#
# 1. `x, W1, b1, W2, b2` arrive as float64. Round each to float16 first
#    (`a.astype(np.float16)`): that is how they are stored. Values from 65520
#    up (half a step beyond 65504) become `inf`, values below about
#    $3 \times 10^{-8}$ become 0.
# 2. Each matrix product multiplies and sums in float32: cast both (float16)
#    operands to float32 and use `@`.
# 3. `fix=False`: store $z = x W_1 + b_1$ in float16 (round the product to
#    float16 and add the float16 $b_1$, or add in float32 and round once: either
#    is accepted), then $h = \mathrm{ReLU}(z)$ and $y = h W_2 + b_2$ likewise in
#    float16. Return a **float16** array.
# 4. `fix=True`: keep $z$, $h$ and $y$ in float32 (biases cast to float32).
#    Return a **float32** array.
#
# The checks call your function with numpy's floating-point warnings switched
# off, check the dtype exactly, and compare with the reference
# `ffn_helpers.precision.ffn_forward_float16`: `inf` and `NaN` where it has them,
# elsewhere within $4 \times 10^{-3}$ (float16 results) or $10^{-5}$ (float32
# results) times the largest finite $|y|$, plus the same relative tolerance:
# float32 sums in another order may change a float16 result's last bit.
#
# **Forecast.** With `fix=True`, can the output still be `inf`?

# %% nbgrader={"grade": false, "grade_id": "ffn_forward_float16", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_forward_float16(x, W1, b1, W2, b2, fix=False):
    """ReLU FFN on float16 storage, sums in float32; x: (..., d_model) -> float16 (fix=False) or float32 (fix=True)."""
    ### BEGIN SOLUTION
    x, W1, b1, W2, b2 = (np.asarray(a, dtype=float).astype(np.float16) for a in (x, W1, b1, W2, b2))
    keep = np.float32 if fix else np.float16
    z = (x.astype(np.float32) @ W1.astype(np.float32)).astype(keep) + b1.astype(keep)
    h = np.maximum(z, 0)
    return (h.astype(np.float32) @ W2.astype(np.float32)).astype(keep) + b2.astype(keep)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for ffn_forward_float16</summary>
#
# Three kinds of array, one per stage: float16 for storage (every input, rounded
# first), float32 for the sums inside the matrix products, and, for what is kept
# between the stages ($z$, $h$, $y$), float16 without the fix and float32 with
# it.
#
# <details><summary>Hint 2 of 3 for ffn_forward_float16</summary>
#
# Round each of the five inputs with `.astype(np.float16)` first. For each
# matrix product, cast both float16 operands to float32 and use `@`; then cast
# the product to the dtype that is kept (float16, or float32 with `fix=True`)
# and add the bias cast to that same dtype. ReLU is `np.maximum(z, 0)`, which
# keeps the dtype.
#
# <details><summary>Hint 3 of 3 for ffn_forward_float16</summary>
#
# Choose the kept dtype once, from `fix`, and use it for both layers; the output
# is the second layer's result in that dtype, so its dtype is float16 without
# the fix and float32 with it.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The example above, without and with the fix. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_forward_float16", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_float16(ffn_forward_float16, args_w, fix=False)
check_float16(ffn_forward_float16, args_w, fix=True)
checks.ok("ffn_forward_float16 overflows in the hidden layer, and the fix keeps it in float32.")

# %% [markdown]
# **Why.** Yes, the output can still be `inf` with `fix=True`: the fix keeps
# $z$, $h$ and $y$ in float32, but the inputs are still stored in float16
# (step 1), and an input or weight of 65520 or more is already `inf` there,
# before any sum. An `inf` input meets positive weights and stays `inf` to the
# output; no later float32 can bring it back.

# %%
x_huge, ones = np.array([[7e4, 1.0]]), np.ones((2, 2))
y_huge = reference.ffn_forward_float16(x_huge, ones, np.zeros(2), ones, np.zeros(2), fix=True)
with np.errstate(over="ignore"):  # the overflow is the point here
    assert np.isinf(np.float16(65520.0)) and np.isinf(np.float16(7e4)) and np.isinf(y_huge).all()
print("fix=True with an input of 70,000:", y_huge)

# %% [markdown]
# The grader also checks (1 point): random FFNs with batched $x$ of shape
# $(2, 3, d_\text{model})$, with and without the fix; an input with one large
# feature, whose hidden layer overflows float16 only without the fix; and inputs
# beyond 65504 or below $3 \times 10^{-8}$, which rounding to float16 turns into
# `inf` or 0 with the fix too.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_forward_float16_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
seed_r = checks.hidden_seed("12_low_precision", "test_ffn_forward_float16_hidden")
x_r, W1_r, b1_r, W2_r, b2_r = reference.random_ffn(8, 32, n_tokens=6, seed=seed_r)
for fix in (False, True):
    check_float16(ffn_forward_float16, (x_r.reshape(2, 3, 8), W1_r, b1_r, W2_r, b2_r), fix=fix)
x_big, W1_big = x_r.copy(), W1_r.copy()
x_big[:, 0], W1_big[0] = 3000.0, 40.0  # z ≈ 120,000 in every unit
for fix in (False, True):
    check_float16(ffn_forward_float16, (x_big, W1_big, b1_r, W2_r, b2_r), fix=fix)
# 1e-8 rounds to 0 and 7e4 to inf; no weight that meets an inf is 0, so no inf · 0 = NaN depends on the BLAS.
edge = (np.array([[1e-8, 1.0], [7e4, 1.0]]), np.array([[3e4, 1.0], [0.0, 1.0]]), np.zeros(2),
        np.array([[1000.0, 1.0], [1.0, 1.0]]), np.zeros(2))
for fix in (False, True):
    check_float16(ffn_forward_float16, edge, fix=fix)
checks.ok("ffn_forward_float16 follows the float16 contract on every input, with and without the fix.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3. bfloat16: float32's range with fewer digits
#
# bfloat16 ("brain float") is float32 with the lower 16 bits cut off: the same
# sign bit and 8 exponent bits, and 7 of the 23 mantissa bits. It reaches
# $(2 - 2^{-7}) \cdot 2^{127} \approx 3.39 \times 10^{38}$, so the hidden layer of
# section 2 fits easily, but its numbers next to 1 are $2^{-7} = 0.0078125$ apart.
#
# Rounding float32 to bfloat16 works on the bits. Read the float32 as a 32-bit
# integer, add `0x7FFF` plus the lowest bit that is kept (bit 16), and clear
# the low 16 bits. Below the halfway point `0x8000` the addition never carries
# into the kept bits (round down); above it, it always does (round up); exactly
# at halfway it carries only when the kept part is odd, so a tie goes to the
# even neighbour (**round half to even**). This is PyTorch's conversion.
#
# **Forecast.** $1 + 2^{-8}$ lies exactly halfway between 1 and $1 + 2^{-7}$.
# Which one does it become? And 70000?
#
# **Step.**

# %%
x_ex = np.array(list(P["bfloat16_rounding"]), dtype=np.float32)
rounded = reference.to_bfloat16(x_ex)
for value, b_in, r, b_out in zip(x_ex, bits(x_ex), rounded, bits(rounded), strict=True):
    print(f"{value!r:>12} {b_in} -> {b_out} = {r!r}")
print(f"bfloat16: largest {reference.BF16_MAX:.6g}, eps = 2^-7 = {reference.BF16_EPS}")

# %% [markdown]
# **Why.** $1 + 2^{-8}$ is `0x3F808000`: the dropped half is exactly `0x8000`
# and the kept part `0x3F80` is even, so it stays 1.0. $1 + 3 \cdot 2^{-9}$ is
# past halfway and rounds up to $1.0078125$. $\pi$ becomes 3.140625, 0.03 %
# off; 65504, float16's largest, becomes 65536, and 70000, an
# overflow in float16, becomes 70144: in bfloat16 the range is no problem, the
# digits are.
#
# **Verify.** The rounding equals PyTorch's values for these inputs, and the
# largest bfloat16 is float32's bit pattern `0x7F7F0000`.

# %%
for value, expected in P["bfloat16_rounding"].items():
    assert reference.to_bfloat16(np.float32(value)) == np.float32(expected)
assert reference.BF16_MAX == P["bfloat16"]["max"] and f"{reference.BF16_MAX:.2e}" == "3.39e+38"
assert bits(reference.BF16_MAX) == ["0x7F7F0000"] and reference.BF16_EPS == 0.0078125
assert reference.to_bfloat16(np.float32(3.4028235e38)) == np.inf  # float32's max rounds beyond bfloat16's
assert f"{1 - 3.140625 / np.pi:.2%}" == "0.03%"
print("3.14159265 -> 3.140625, 65504 -> 65536, 70000 -> 70144, 1 + 2^-8 -> 1.0, 1 + 3·2^-9 -> 1.0078125")

# %% [markdown]
# ### Exercise: `to_bfloat16`
#
# Write `to_bfloat16(x)`: `x` is a float32 array of any shape (the checks pass
# only float32 arrays); return a **float32** array of the same shape holding
# each entry rounded to bfloat16 by the rule above. The checks compare with
# `ffn_helpers.precision.to_bfloat16` **bit for bit**, so:
#
# - ties go to the even neighbour, for negative numbers too (the sign bit is not touched);
# - values that round beyond $3.39 \times 10^{38}$ become $\pm\infty$ (float32's largest does);
#   $\pm\infty$ stay, and $-0.0$ stays $-0.0$;
# - subnormals (below $2^{-126}$) round by the same rule;
# - a NaN stays NaN (any NaN is accepted): with the bare rule, a NaN whose
#   payload sits in the low 16 bits would carry into $\pm\infty$ or 0, so treat
#   NaNs separately (`np.isnan`);
# - `x` itself is not changed.
#
# `x.view(np.uint32)` reads the bits, `.view(np.float32)` turns bits back. Do the
# addition in `np.uint64` (in `np.uint32`, `0xFFFFFFFF + 0x8000` wraps around),
# and make the array contiguous first (`np.ascontiguousarray`).

# %% nbgrader={"grade": false, "grade_id": "to_bfloat16", "locked": false, "schema_version": 3, "solution": true, "task": false}
def to_bfloat16(x):
    """x (float32, any shape) rounded to bfloat16, ties to even, returned as float32 of the same shape."""
    ### BEGIN SOLUTION
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    out = b.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for to_bfloat16</summary>
#
# Rounding to bfloat16 keeps the upper 16 bits of a float32. Work on the bits as
# integers: add a rounding constant (0x7FFF, plus 1 when the lowest kept bit is
# set, for ties to even), then clear the low 16 bits.
#
# <details><summary>Hint 2 of 3 for to_bfloat16</summary>
#
# `np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)` gives the bits;
# move them to `np.uint64` before adding, so that nothing wraps around. The
# lowest kept bit is bit 16: shift right by 16 and keep the last bit with a mask
# of 1. A mask with the upper 16 bits set clears the lower half.
#
# <details><summary>Hint 3 of 3 for to_bfloat16</summary>
#
# Turn the result back into 32-bit integers, view those bits as float32, then
# put NaN back wherever the input was NaN (`np.where(np.isnan(x), ...)`): the
# bare rule can carry a NaN's payload into an infinity.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The five values above. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_to_bfloat16", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_bfloat16(to_bfloat16, np.array(list(P["bfloat16_rounding"]), dtype=np.float32))
checks.ok("to_bfloat16 rounds π, 65504, 70000 and both ties near 1 like PyTorch.")

# %% [markdown]
# The grader also checks (1 point), bit for bit: 10,000 seeded random float32
# bit patterns in a $(100, 100)$ array; ties at every scale, positive and
# negative; values next to float32's largest, which round to bfloat16's largest
# or to $\pm\infty$; $\pm\infty$, NaNs with payloads in the low bits, $\pm 0$;
# subnormals; a $(2, 3, 4)$ array of ordinary values; and that `x` is unchanged.

# %% nbgrader={"grade": true, "grade_id": "test_to_bfloat16_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("12_low_precision", "test_to_bfloat16_hidden")
random_bits = rng.integers(0, 2**32, size=(100, 100), dtype=np.uint64).astype(np.uint32)
check_bfloat16(to_bfloat16, random_bits.view(np.float32))
ties = (rng.integers(0, 2**16, size=200, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
check_bfloat16(to_bfloat16, ties.view(np.float32))
edges = np.array([0x7F7F7FFF, 0x7F7F8000, 0x7F7E8000, 0x7F7FFFFF, 0xFF7FFFFF, 0xFF7F8000, 0x7F800000, 0xFF800000,
                  0x7F800001, 0xFFFFFFFF, 0x7FC00000, 0xFF80FFFF, 0x00000000, 0x80000000, 0x00000001, 0x00008000,
                  0x00018000, 0x00008001, 0x80018000, 0x807FFFFF, 0x3F808000, 0xBF808000], dtype=np.uint32)
check_bfloat16(to_bfloat16, edges.view(np.float32))
check_bfloat16(to_bfloat16, rng.standard_normal((2, 3, 4)).astype(np.float32))
checks.ok("to_bfloat16 matches PyTorch's rounding bit for bit on every kind of float32.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. int8: one scale per column
#
# int8 stores integers $-128 \dots 127$; a weight matrix becomes integers $q$
# and a scale: $W \approx q \cdot \text{scale}$. **Symmetric** quantisation uses
# $-127 \dots 127$ (so $q$ and $-q$ both exist) and, **per output column** $j$,
#
# $$\text{scale}_j = \frac{\max_i |W_{ij}|}{127},$$
#
# $$q_{ij} = \mathrm{round}\!\left(\frac{W_{ij}}{\text{scale}_j}\right) \text{ clipped to } [-127, 127].$$
#
# Why per column: in $x W$, column $j$ of $W$ makes output $j$, so its scale
# comes out of the sum, $\sum_i x_i\, q_{ij}\, \text{scale}_j = \text{scale}_j
# \sum_i x_i q_{ij}$: the products and sums can run on the integers, with one
# multiplication per output at the end. A scale per row (per input) cannot come
# out like that.
#
# **Forecast.** For $W = \begin{pmatrix} 0.5 & -1 \\ 0.25 & 2 \\ -0.75 & 0.1 \end{pmatrix}$,
# which entries of $q$ are $\pm 127$? What does 0.1 become?
#
# **Step.**

# %%
W_ex = P["int8"]["W"]
q_ex, scale_ex = reference.quantize_int8(W_ex)
print("scale =", np.round(scale_ex, 8))
print("q =", q_ex.tolist())
print("q · scale - W =\n", reference.dequantize(q_ex, scale_ex) - W_ex)

# %% [markdown]
# **Why.** Each column's largest $|W|$ maps to $\pm 127$: $-0.75$ in column 0,
# $2.0$ in column 1. The other entries are rounded, so each is off by at most
# half a scale step: $0.1 / 0.01574803 = 6.35$ becomes 6, and dequantised
# $6 \cdot 0.01574803 = 0.0945$. $-1.0$ is exactly $-63.5$ steps, a tie, which
# goes to the even $-64$. A column of small weights would have lost all
# its digits under one shared scale; with its own it keeps them.
#
# **Verify.** The worked example, and the error bound of half a step.

# %%
assert q_ex.dtype == np.int8 and q_ex.tolist() == [list(r) for r in P["int8"]["q"]]
assert np.allclose(scale_ex, P["int8"]["scale"], rtol=1e-15, atol=0)
assert np.allclose(scale_ex, [0.00590551, 0.01574803], rtol=0, atol=5e-9)
assert np.all(np.abs(reference.dequantize(q_ex, scale_ex) - W_ex) <= scale_ex / 2)
assert (W_ex / scale_ex)[0, 1] == -63.5 and q_ex[0, 1] == -64  # a tie in the worked example, to even
small = np.column_stack([W_ex[:, 0], W_ex[:, 1] / 1000])  # a second column 1000 times smaller
shared = np.abs(small).max() / 127  # one scale for the whole matrix
assert np.rint(small[:, 1] / shared).tolist() == [-0.0, 0.0, 0.0]  # every weight of column 1 lost
print("per column: error ≤ half a step; one shared scale would round the small column to zeros")

# %% [markdown]
# ### Exercise: `quantize_int8` and `dequantize`
#
# Write `quantize_int8(W)`: `W` is a float64 matrix $(d_\text{in}, d_\text{out})$
# with finite entries; return the pair `(q, scale)`: `q` an **int8** array of
# $W$'s shape, `scale` a float64 array of shape $(d_\text{out},)$, by the
# formulas above. Round with `np.rint` (halves to the even neighbour: $2.5 \to
# 2$, $-2.5 \to -2$), then clip, then cast. A column of zeros has max 0: give it
# scale 1.0 ($q$ is 0 whatever the scale, and nothing divides by zero). The
# checks compare `q` exactly and `scale` to a relative $10^{-12}$.
#
# Write `dequantize(q, scale)`: $q \cdot \text{scale}$ with `scale[j]` for
# column $j$, a float64 array of $q$'s shape, compared to a relative $10^{-12}$
# (plus $10^{-12}$ absolute).

# %% nbgrader={"grade": false, "grade_id": "quantize_int8", "locked": false, "schema_version": 3, "solution": true, "task": false}
def quantize_int8(W):
    """Symmetric per-column int8: W (d_in, d_out) float64 -> (q (d_in, d_out) int8, scale (d_out,) float64)."""
    ### BEGIN SOLUTION
    W = np.asarray(W, dtype=float)
    amax = np.abs(W).max(axis=0)
    scale = np.where(amax > 0, amax / 127, 1.0)
    q = np.clip(np.rint(W / scale), -127, 127).astype(np.int8)
    return q, scale
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for quantize_int8</summary>
#
# One scale per column: the column's largest absolute value divided by 127. Then
# each weight is divided by its column's scale, rounded to the nearest integer,
# clipped to $[-127, 127]$ and stored as int8.
#
# <details><summary>Hint 2 of 3 for quantize_int8</summary>
#
# The largest absolute value down each column (over axis 0) gives the columns'
# magnitudes; a column of zeros gets the scale 1.0 instead (`np.where`), so that
# nothing divides by zero. Dividing `W` by the scales row vector broadcasts over
# the columns.
#
# <details><summary>Hint 3 of 3 for quantize_int8</summary>
#
# Round with `np.rint` (ties to even), then clip to $[-127, 127]$ with
# `np.clip`, then cast to int8, in that order. Return the pair `(q, scale)`, the
# scales as float64.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The worked example. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_quantize_int8", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_quantized(quantize_int8, np.array(P["int8"]["W"]))
checks.ok("quantize_int8 gives W's per-column scales and q = [[85, -64], [42, 127], [-127, 6]].")

# %% [markdown]
# The grader also checks (1 point): seeded random matrices whose columns differ
# in size by up to $10^4$, square and tall; a column with exact ties ($\pm 2.5$,
# $0.5$, $-1.5$ steps); a column of zeros; a $1 \times 1$ matrix; a negative
# column maximum.

# %% nbgrader={"grade": true, "grade_id": "test_quantize_int8_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("12_low_precision", "test_quantize_int8_hidden")
for shape in ((16, 16), (64, 8)):
    check_quantized(quantize_int8, rng.standard_normal(shape) * np.geomspace(1e-2, 1e2, shape[1]))
ties_W = np.array([[127.0, 0.0, -254.0], [2.5, 0.0, 5.0], [-2.5, 0.0, -3.0], [0.5, 0.0, 1.0], [-1.5, 0.0, 7.0]])
check_quantized(quantize_int8, ties_W)
check_quantized(quantize_int8, np.array([[-0.3]]))
checks.ok("quantize_int8 is right on random, tied, zero and tiny matrices.")
### END HIDDEN TESTS

# %% [markdown]
# Now `dequantize(q, scale)`, as the exercise above describes it.

# %% nbgrader={"grade": false, "grade_id": "dequantize", "locked": false, "schema_version": 3, "solution": true, "task": false}
def dequantize(q, scale):
    """q (d_in, d_out) int8 times scale (d_out,), column by column -> float64 (d_in, d_out)."""
    ### BEGIN SOLUTION
    return np.asarray(q, dtype=float) * np.asarray(scale, dtype=float)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for dequantize</summary>
#
# Undo the division: multiply every entry of column $j$ of $q$ by `scale[j]`, in
# float64.
#
# <details><summary>Hint 2 of 2 for dequantize</summary>
#
# Convert `q` to a float64 array before multiplying (int8 arithmetic would
# overflow and round), then multiply by the scales as a row: broadcasting lines
# `scale` up with the last axis, which is the columns.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** The worked example's $q$ and scales give back $W$ to within half
# a step. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_dequantize", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
checks.check(dequantize, (q_ex, scale_ex), reference.dequantize(q_ex, scale_ex), rtol=1e-12,
             mistakes=mistakes.for_exercise("dequantize"))
checks.ok("dequantize multiplies each column by its scale.")

# %% [markdown]
# The grader also checks (1 point): square and tall random $q$ with random
# scales, where multiplying by the wrong axis or dividing shows.

# %% nbgrader={"grade": true, "grade_id": "test_dequantize_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("12_low_precision", "test_dequantize_hidden")
for shape in ((6, 6), (40, 5)):
    q_r = rng.integers(-127, 128, size=shape).astype(np.int8)
    s_r = rng.uniform(1e-3, 1.0, size=shape[1])
    checks.check(dequantize, (q_r, s_r), reference.dequantize(q_r, s_r), rtol=1e-12,
                 mistakes=mistakes.for_exercise("dequantize"))
checks.ok("dequantize is right on square and tall matrices.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. An FFN on int8 weights
#
# With $W_1 \approx q_1 \cdot s_1$ and $W_2 \approx q_2 \cdot s_2$ (per column),
#
# $$z = (x\, q_1) \odot s_1 + b_1, \qquad h = \mathrm{ReLU}(z),$$
#
# $$y = (h\, q_2) \odot s_2 + b_2 .$$
#
# The matrix products use the integer weights, each output column is then
# multiplied by its scale, and the biases (kept in float64, they are few) are
# added after the scale, in the output's units.
#
# **Forecast.** Is $(x\, q_1) \odot s_1$ the same as $x\, (q_1 \odot s_1)$,
# exactly, or only up to rounding?
#
# **Step.** A random FFN with $d_\text{model} = 64$, $d_\text{ff} = 256$, its
# weights quantised, against float64.

# %%
x_q, W1_q, b1_q, W2_q, b2_q = reference.random_ffn(64, 256, n_tokens=32, seed=12)
q1, s1 = reference.quantize_int8(W1_q)
q2, s2 = reference.quantize_int8(W2_q)
y_int8 = reference.ffn_forward_int8(x_q, q1, s1, b1_q, q2, s2, b2_q)
y_64 = ffn_forward(x_q, W1_q, b1_q, W2_q, b2_q)
y_deq = ffn_forward(x_q, reference.dequantize(q1, s1), b1_q, reference.dequantize(q2, s2), b2_q)
print(f"int8 weights against float64: relative error {reference.relative_error(y_int8, y_64):.2e}")
print(f"against the FFN on dequantised weights: largest difference {np.abs(y_int8 - y_deq).max():.1e}")
print(f"bytes for W1 and W2: float32 {param_bytes(W1_q.size + W2_q.size, 'float32'):,}, "
      f"int8 {param_bytes(W1_q.size + W2_q.size, 'int8'):,} + float32 scales {4 * (s1.size + s2.size):,}")

# %% [markdown]
# **Why.** Pulling the scale out of the sum is exact in arithmetic and equal up
# to float64 rounding here, so the int8 FFN is the FFN with dequantised weights;
# its error against float64 is the rounding of the weights, at most half a
# step of its column's scale for each weight, roughly 1 % of the output here. The memory is a quarter of
# float32's, plus one scale per column.
#
# **Verify.**

# %%
assert np.allclose(y_int8, y_deq, rtol=1e-10, atol=1e-12)
assert 0.005 < reference.relative_error(y_int8, y_64) < 0.02
assert param_bytes(W1_q.size + W2_q.size, "int8") * 4 == param_bytes(W1_q.size + W2_q.size, "float32")
print("The int8 FFN equals the FFN on dequantised weights; it is about 1 % off float64.")

# %% [markdown]
# ### Exercise: `ffn_forward_int8`
#
# Write `ffn_forward_int8(x, q1, s1, b1, q2, s2, b2)` by the three formulas
# above: `x` float64 of shape $(\dots, d_\text{model})$; `q1` int8
# $(d_\text{model}, d_\text{ff})$ with scales `s1` $(d_\text{ff},)$; `q2` int8
# $(d_\text{ff}, d_\text{model})$ with `s2` $(d_\text{model},)$; `b1`, `b2`
# float64. Compute in float64 (cast `q1`, `q2` to float64 before multiplying;
# int8 arithmetic would overflow) and return float64 of shape
# $(\dots, d_\text{model})$. The checks compare with the reference to a
# relative $10^{-10}$ (plus $10^{-12}$ absolute).

# %% nbgrader={"grade": false, "grade_id": "ffn_forward_int8", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_forward_int8(x, q1, s1, b1, q2, s2, b2):
    """ReLU FFN on int8 weights with per-column scales, in float64; x: (..., d_model) -> (..., d_model)."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    h = np.maximum((x @ q1.astype(float)) * s1 + b1, 0.0)
    return (h @ q2.astype(float)) * s2 + b2
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for ffn_forward_int8</summary>
#
# Multiplying by $q$ and then scaling each output column is the same as
# multiplying by the dequantised weights, but cheaper:
# $x W \approx (x\, q) \odot s$, column by column.
#
# <details><summary>Hint 2 of 3 for ffn_forward_int8</summary>
#
# For each layer: cast the int8 matrix to float64, multiply, then multiply the
# product elementwise by that layer's scales (they broadcast over the last
# axis), and add the bias. ReLU between the two layers, as always.
#
# <details><summary>Hint 3 of 3 for ffn_forward_int8</summary>
#
# Two lines after converting `x` to floats: $h$ is the maximum of 0 and `x`
# times `q1` as floats, times `s1`, plus `b1`; the output is `h` times `q2` as
# floats, times `s2`, plus `b2`.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The random FFN above. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_forward_int8", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
args_q = (x_q, q1, s1, b1_q, q2, s2, b2_q)
checks.check(ffn_forward_int8, args_q, reference.ffn_forward_int8(*args_q), rtol=1e-10,
             mistakes=mistakes.for_exercise("ffn_forward_int8"))
checks.ok("ffn_forward_int8 runs the FFN on int8 weights and their scales.")

# %% [markdown]
# The grader also checks (1 point): a batched $x$ of shape $(2, 3, d_\text{model})$,
# a single token of shape $(d_\text{model},)$, and another seeded random FFN
# whose scales differ widely between columns.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_forward_int8_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
seed_h = checks.hidden_seed("12_low_precision", "test_ffn_forward_int8_hidden")
x_h, W1_h, b1_h, W2_h, b2_h = reference.random_ffn(8, 32, n_tokens=6, seed=seed_h)
W1_h = W1_h * np.geomspace(0.01, 100.0, 32)
q1_h, s1_h = reference.quantize_int8(W1_h)
q2_h, s2_h = reference.quantize_int8(W2_h)
for x_in in (x_h.reshape(2, 3, 8), x_h[0]):
    args_h = (x_in, q1_h, s1_h, b1_h, q2_h, s2_h, b2_h)
    checks.check(ffn_forward_int8, args_h, reference.ffn_forward_int8(*args_h), rtol=1e-10,
                 mistakes=mistakes.for_exercise("ffn_forward_int8"))
checks.ok("ffn_forward_int8 is right on batches, single tokens and unevenly scaled weights.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. The formats side by side, over width
#
# Now every format on the same random FFNs ($x \sim N(0, 1)$, weights with
# variance $1/\text{fan-in}$, $d_\text{ff} = 4 d_\text{model}$, 64 tokens), each
# output compared with float64 by the relative error $\lVert y - y_{64} \rVert /
# \lVert y_{64} \rVert$. float16 runs with the fix (it would overflow only on
# inputs like section 2's), bfloat16 rounds the inputs, $z$, $h$ and $y$ to
# bfloat16 (sums in float32), int8 quantises the weights only.
#
# **Forecast.** Rank the four formats by error. Does widening the model make
# the errors grow, like the number of terms in each sum?
#
# **Step.**

# %%
widths = (16, 32, 64, 128, 256)
errors = reference.error_over_width(widths)
plots.precision_error_plot(widths, errors)

# %% [markdown]
# *Figure: relative error of the FFN's output against float64 (log scale) for
# float32, float16 (hidden layer in float32), bfloat16 and int8 weights, at
# $d_\text{model}$ from 16 to 256: the formats keep their order at every width;
# float16 and bfloat16 stay flat, int8 rises slowly, float32 stays below $10^{-6}$.*
#
# **Why.** Each format's error is set by its spacing: float32's $2^{-23}$ leaves
# errors of order $10^{-7}$, float16's $2^{-10}$ a few $10^{-4}$, bfloat16's $2^{-7}$,
# a spacing 8 times coarser, a few $10^{-3}$: about 10 times float16's error here. Rounding errors have random signs and
# partly cancel in a sum, so a sum of more terms is not relatively worse: the
# 16-bit lines are flat. (In float32 the rounding of the sums themselves, which
# depends on the order a BLAS adds in, counts as much as that of the inputs; its
# line may bend a little, far below the others.) int8 is coarsest, and grows slowly with width: a
# wider column holds a larger maximum, which sets its scale, so the ordinary
# weights get fewer steps.
#
# **Verify.** The claims, with margins wide enough that no BLAS's rounding
# decides them.

# %%
assert np.all(errors["float32"] < 1e-6) and np.all(errors["float16"] > 100 * errors["float32"])
assert np.all((7 < errors["bfloat16"] / errors["float16"]) & (errors["bfloat16"] / errors["float16"] < 14))
assert np.all(errors["int8"] > 1.5 * errors["bfloat16"]) and np.all(errors["int8"] < 3e-2)
assert errors["int8"][-1] > 1.2 * errors["int8"][0]
for flat in ("float16", "bfloat16"):  # within a factor √2 of the narrowest model's error
    assert np.all(np.abs(np.log2(errors[flat] / errors[flat][0])) < 0.5)
print("float32 < float16 < bfloat16 < int8 at every width; bfloat16's error is about 10 times float16's.")

# %% [markdown]
# ## 7. Back to the budget
#
# Notebook 06 counted bytes per parameter with `param_bytes`. With what you have
# seen, the table reads differently: each halving of memory costs digits (or,
# for float16, range that the hidden layer needs), and int8 adds a float32
# scale per column, $d_\text{ff} + d_\text{model}$ of them per layer.
#
# **Forecast.** How many MiB do BERT-base's 12 FFN layers take in int8,
# scales included?
#
# **Step.**

# %%
bert = preset("bert-base")
weights = bert.n_layers * 2 * bert.d_model * bert.d_ff
biases = bert.n_layers * (bert.d_ff + bert.d_model)
scales = bert.n_layers * (bert.d_ff + bert.d_model)  # one per output column of W1 and of W2
for dtype in ("float32", "float16", "bfloat16", "int8"):
    extra = param_bytes(biases, "float32") + (param_bytes(scales, "float32") if dtype == "int8" else 0)
    print(f"{dtype:<9} weights {param_bytes(weights, dtype) / MiB:7.2f} MiB, biases and scales in float32 "
          f"{extra / MiB:5.2f} MiB")

# %% [markdown]
# **Why.** The weights are almost everything: the biases, and the scales too,
# are $d_\text{ff} + d_\text{model} = 3840$ numbers each per layer against 4.7
# million weights, so int8 with its scales takes 25.1 % of float32's memory.
#
# **Verify.**

# %%
assert weights + biases == bert.ffn_params_total == examples.W_6["bert_base"]["total"]
assert round(param_bytes(weights + biases, "float32") / MiB) == 216  # the introduction's number
assert param_bytes(weights + biases, "bfloat16") * 2 == param_bytes(weights + biases, "float32")
assert param_bytes(weights, "float32") == 4 * param_bytes(weights, "int8")
int8_total = param_bytes(weights, "int8") + param_bytes(biases + scales, "float32")
assert f"{int8_total / param_bytes(weights + biases, 'float32'):.1%}" == "25.1%"
print(f"BERT-base FFNs in int8 with float32 biases and scales: {int8_total / MiB:.2f} MiB "
      f"(float32: {param_bytes(weights + biases, 'float32') / MiB:.2f} MiB)")

# %% [markdown]
# ## Summary
#
# - float16 holds numbers up to 65504 with 3 decimal digits; the hidden layer,
#   a sum of $d_\text{model}$ products, is where it overflows. The fix: 16-bit
#   storage, float32 sums and a float32 hidden layer.
# - bfloat16 keeps float32's range and 7 mantissa bits: no overflow, a spacing 8
#   times float16's, and about 10 times float16's rounding error in the FFN. Rounding is integer arithmetic on float32's
#   bits: add `0x7FFF` plus the lowest kept bit, clear the low 16; NaN apart.
# - int8 needs a scale; one per output column comes out of the matrix product
#   and protects columns of small weights. Symmetric: $\pm 127$, round half to even, clip.
# - Memory halves or quarters (notebook 06's `param_bytes`); the error grows
#   from about $10^{-7}$ (float32) to about $10^{-2}$ (int8), and changes
#   little with width.
#
# Next: [13 · Training](13_training.ipynb), where an FFN learns its weights by
# gradient descent; or back to [00 · Start here](00_start_here.ipynb) for the map of the course.
