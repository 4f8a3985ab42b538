# %% [markdown]
# # 03 · Residual and LayerNorm: the wrapper around the FFN (scenario E)
#
# In a transformer block the FFN's output is not used on its own. It is added
# back to the FFN's input (the **residual connection**), and a **LayerNorm**
# rescales every token, either after the add or before the FFN. This notebook
# works through both orders on the small FFN of worked example W-4 and shows
# that they give different results.
#
# | symbol | meaning |
# |---|---|
# | $x$, shape $(\dots, d)$ | the tokens entering the sublayer; $d = d_\text{model}$ features each |
# | $F$ | the sublayer: here the FFN, $F(x) = \mathrm{ReLU}(x W_1 + b_1) W_2 + b_2$ |
# | $x + F(x)$ | the residual add, feature by feature |
# | $\mu$, $\sigma^2$ | the mean and (biased) variance of one token's $d$ features |
# | $\gamma$, $\beta$, shape $(d,)$ | LayerNorm's learned scale and shift (by default $\gamma = 1$, $\beta = 0$) |
# | $\varepsilon$ (`eps`) | a small constant that keeps the division finite |
#
# For one token $x = (x_1, \dots, x_d)$:
#
# $$\mu = \frac{1}{d}\sum_{i=1}^{d} x_i,$$
#
# $$\sigma^2 = \frac{1}{d}\sum_{i=1}^{d} (x_i - \mu)^2,$$
#
# $$\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta,$$
#
# where $\odot$ multiplies entry by entry. The two ways of wrapping $F$:
#
# $$\text{post-LN: } y = \mathrm{LN}\big(x + F(x)\big),$$
#
# $$\text{pre-LN: } y = x + F\big(\mathrm{LN}(x)\big).$$
#
# Post-LN is the order of the original Transformer (2017); pre-LN is the order
# of GPT-2 and most models since.
#
# **Exercises** (10 points): `layer_norm` (4), `post_ln_block` (3), `pre_ln_block` (3).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np

from ffn_helpers import checks, mistakes, norm, plots
from ffn_helpers.examples import W_4
from ffn_helpers.ffn import ffn_forward

# %% [markdown]
# ## 1. The residual add, and why the shapes must match
#
# W-4's FFN has $d_\text{model} = 2$ and $d_\text{ff} = 3$. For $x = [1, -1]$
# its pre-activation is $[1, -1, 3.5]$, its hidden values after ReLU are
# $[1, 0, 3.5]$, and its output is $F(x) = [4.5, 0]$.
#
# **Forecast.** What is $x + F(x)$? And what should happen if the sublayer
# returned a vector of another length, say its 3 hidden values?
#
# **Step.** The residual add with the reference FFN.

# %% nbgrader={"grade": false, "grade_id": "ffn_w4", "locked": true, "schema_version": 3, "solution": false, "task": false}
def ffn_w4(x):
    """W-4's FFN, x: (..., 2) -> (..., 2)."""
    return ffn_forward(x, *W_4.params)


residual = W_4.x + ffn_w4(W_4.x)
print("x            =", W_4.x)
print("F(x)         =", ffn_w4(W_4.x))
print("x + F(x)     =", residual)

# %% [markdown]
# **Why.** The add pairs feature $i$ of $x$ with feature $i$ of $F(x)$, so
# $F$ must map $d_\text{model}$ features back to $d_\text{model}$: that is
# the job of the FFN's second layer, $W_2$ of shape $(d_\text{ff}, d_\text{model})$.
# A sublayer that forgets it returns $d_\text{ff}$ values, and the course's
# reference `post_ln` refuses it with a message naming both shapes:

# %%
def forgot_W2(x):
    """A broken sublayer: stops at the hidden layer, (..., 2) -> (..., 3)."""
    return np.maximum(x @ W_4.W1 + W_4.b1, 0.0)


try:
    norm.post_ln(W_4.x, forgot_W2)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# numpy alone would not always complain. **Broadcasting** (stretching an
# axis of length 1, or a missing leading axis, to fit the other operand)
# lets some wrong shapes through silently. Here two tokens, one per row,
# meet a broken sublayer that returns a single row, the mean over tokens
# (it mixes tokens, which an FFN never does):

# %%
tokens = W_4.extra["tokens"]  # shape (2, 2): two tokens


def one_row(x):
    """A broken sublayer: (n, 2) -> (2,), one row for all tokens."""
    return ffn_w4(x).mean(axis=0)


print("numpy's add runs without error, shape", (tokens + one_row(tokens)).shape)
try:
    norm.post_ln(tokens, one_row)
except ValueError as error:
    print("the reference refuses it:", error)

# %% [markdown]
# **Verify.** The pre-activation, $F(x)$ and the residual match W-4:
# $x + F(x) = [5.5, -1]$. When you write a block yourself, compare
# `sublayer(x).shape` with `x.shape`: broadcasting will not do it for you.

# %%
checks.assert_close(W_4.x @ W_4.W1 + W_4.b1, W_4.z, name="pre-activation")
checks.assert_close(ffn_w4(W_4.x), W_4.y, name="F(x)")
checks.assert_close(residual, W_4.extra["residual"], name="x + F(x)")
print("x + F(x) = [5.5, -1], as W-4 says.")

# %% [markdown]
# ## 2. LayerNorm by hand
#
# **Forecast.** For the token $[5.5, -1]$, what are $\mu$ and $\sigma$? What
# does LayerNorm return with $\varepsilon = 0$ and no $\gamma$, $\beta$?
#
# **Step.** The mean, the biased variance (divide by $d$), and the result.

# %%
mu = residual.mean()
var = ((residual - mu) ** 2).mean()  # divide by d = 2
sigma = np.sqrt(var)
print(f"mu = {mu}, sigma^2 = {var}, sigma = {sigma}")
print("LN(x + F(x)) with eps = 0:", norm.layer_norm(residual, eps=0.0))

# %% [markdown]
# **Why.** $\mu = (5.5 - 1)/2 = 2.25$, the deviations are $\pm 3.25$, so
# $\sigma^2 = 3.25^2$ and $\sigma = 3.25$: each deviation divided by $\sigma$
# is $\pm 1$. With $d = 2$ this always happens: any token whose two features
# differ normalises to $[1, -1]$ or $[-1, 1]$, and only the sign of
# $x_1 - x_2$ survives. Real models have $d$ in the hundreds or thousands,
# where LayerNorm keeps far more than a sign.
#
# **Verify.** W-4's numbers: $\mu = 2.25$, $\sigma = 3.25$, result $[1, -1]$.

# %%
checks.assert_close(mu, W_4.extra["residual_mean"], name="mu")
checks.assert_close(sigma, W_4.extra["residual_std"], name="sigma")
checks.assert_close(norm.layer_norm(residual, eps=0.0), W_4.extra["post_ln_eps0"], name="LN, eps = 0")
print("mu = 2.25, sigma = 3.25, LN(x + F(x)) = [1, -1], as W-4 says.")

# %% [markdown]
# ## 3. Biased or unbiased variance
#
# The **unbiased** variance divides by $d - 1$ instead of $d$. It is the
# better estimate of a population's variance from a sample, but LayerNorm
# is not estimating anything: it uses the **biased** one, dividing by $d$,
# and so does PyTorch's `nn.LayerNorm`.
#
# **Forecast.** With $d = 2$, how does dividing by $d - 1 = 1$ change the
# result $[1, -1]$?
#
# **Step.** numpy's `ddof` argument ("delta degrees of freedom") chooses
# the divisor $d - \text{ddof}$.

# %%
for ddof in (0, 1):
    s = residual.std(ddof=ddof)
    print(f"ddof = {ddof}: sigma = {s:.6f}, (x - mu) / sigma = {(residual - mu) / s}")
shrink = residual.std(ddof=0) / residual.std(ddof=1)
checks.assert_close(shrink, np.sqrt(1 / 2), name="sigma(ddof=0) / sigma(ddof=1) for d = 2")
for d in (2, 768, 4096):
    print(f"d = {d:4}: dividing by d - 1 scales the output by sqrt((d-1)/d) = {np.sqrt((d - 1) / d):.6f}")
assert round(100 * (1 - np.sqrt(767 / 768)), 2) == 0.07  # percent, quoted below

# %% [markdown]
# **Why.** Every output is scaled by $\sqrt{(d-1)/d}$: $1/\sqrt 2 \approx 0.707$
# at $d = 2$, a difference of about $0.07\,\%$ at $d = 768$. Small, but a
# check with a tight tolerance sees it, and so would a model loading weights
# trained the other way. numpy's `np.var` and `np.std` default to `ddof=0`
# (biased); PyTorch's `torch.var` and `torch.std` default to the unbiased
# estimate, a common slip when LayerNorm is written by hand in PyTorch.
#
# **Verify.** The asserts check the ratio $1/\sqrt 2$ for $d = 2$ and the $0.07\,\%$ for $d = 768$.
#
# ## 4. What eps changes
#
# With $\varepsilon$ inside the square root, each centred feature is
# multiplied by $1/\sqrt{\sigma^2 + \varepsilon}$ instead of $1/\sigma$, so
# the output shrinks by the factor
#
# $$s(\sigma) = \frac{\sigma}{\sqrt{\sigma^2 + \varepsilon}}
# \approx 1 - \frac{\varepsilon}{2\sigma^2} \quad \text{when } \sigma^2 \gg \varepsilon .$$
#
# **Forecast.** With PyTorch's default $\varepsilon = 10^{-5}$, how far from
# $\pm 1$ is W-4's result? What does LayerNorm return for a *constant* token,
# all features equal, with $\varepsilon = 0$ and with $\varepsilon = 10^{-5}$?
#
# **Step.** W-4 with $\varepsilon = 10^{-5}$, the first-order estimate, and a
# constant token.

# %%
eps = W_4.extra["eps"]
ln_eps = norm.layer_norm(residual, eps=eps)
print(f"LN with eps = {eps:g}: {ln_eps[0]:.10f}, {ln_eps[1]:.10f}")
print(f"first-order estimate 1 - eps / (2 sigma^2) = {1 - eps / (2 * var):.10f}")
checks.assert_close(ln_eps, W_4.extra["post_ln_eps"], name="LN, eps = 1e-5", rtol=1e-9)

constant = np.array([3.0, 3.0, 3.0])
with np.errstate(invalid="ignore"):  # 0 / 0 is NaN; numpy would warn
    by_hand = (constant - constant.mean()) / np.sqrt(constant.var() + 0.0)
print("constant token, eps = 0, by hand:", by_hand)
try:
    norm.layer_norm(constant, eps=0.0)
except ValueError as error:
    print("the reference refuses it:", error)
print("constant token, eps = 1e-5:", norm.layer_norm(constant, eps=eps))

eps_outside = (residual - mu) / (sigma + eps)
print(f"eps outside the root, (x - mu) / (sigma + eps): {eps_outside[0]:.10f}")
checks.assert_close(norm.layer_norm(constant, eps=eps), np.zeros(3), name="LN of a constant token")
assert f"{1 - ln_eps[0]:.1e}" == "4.7e-07"  # the shift quoted below
assert round(eps_outside[0], 10) == 0.9999969231  # eps outside the root: a different number

# %% [markdown]
# **Why.** With $\sigma = 3.25 \gg \sqrt{\varepsilon}$ the shift is tiny,
# $4.7 \times 10^{-7}$, which is where W-4's $0.9999995266$ comes from. A
# constant token has $\sigma = 0$: without $\varepsilon$ it is $0/0$, NaN
# (the reference raises an error rather than return it); with
# $\varepsilon$, the centred zeros stay zeros. Putting $\varepsilon$ outside the
# root, $(x - \mu)/(\sigma + \varepsilon)$, is a different function: it
# gives $0.9999969231$ here, so W-4's value tells the two apart from the sixth decimal on.
#
# The figure shows $s(\sigma)$ for two values of $\varepsilon$ in use:
# PyTorch's default $10^{-5}$, and $10^{-12}$, the value BERT uses. Tokens
# whose features spread less than about $\sqrt{\varepsilon}$ are shrunk
# towards 0 rather than scaled to unit size.

# %%
def eps_shrink_figure():
    """s(sigma) = sigma / sqrt(sigma^2 + eps) against sigma, for two eps."""
    sig = np.logspace(-8, 1, 400)
    title = "What eps does: tokens with sigma below about sqrt(eps) are shrunk"

    def draw_on(fig):
        ax = fig.subplots()
        for e, colour, style in ((1e-5, plots.BLUE, "-"), (1e-12, plots.ORANGE, "--")):
            ax.plot(sig, sig / np.sqrt(sig**2 + e), color=colour, linestyle=style, linewidth=2,
                    label=f"eps = {e:g}: half size at sigma = {np.sqrt(e / 3):.2g}")
        ax.axvline(W_4.extra["residual_std"], color=plots.GREY, linestyle=":", linewidth=1.5,
                   label="W-4's token, sigma = 3.25")
        ax.set_xscale("log")
        ax.set_xlabel("standard deviation sigma of the token's features (log scale)")
        ax.set_ylabel("shrink factor s(sigma)")
        ax.set_title(title)
        ax.grid(color="#E6E6E6", linewidth=0.8)
        fig.legend(frameon=False, loc="outside lower center", ncols=2)

    return plots.custom_figure(draw_on, size=(7.0, 4.0), alt=(
        f"Line plot, log x axis: {title}. The shrink factor s for sigma from 1e-08 to 10: with "
        f"eps = 1e-05 (solid) it is one half at sigma = {np.sqrt(1e-5 / 3):.2g}, with eps = 1e-12 (dashed) at "
        f"sigma = {np.sqrt(1e-12 / 3):.2g}; both reach 1 for large sigma. A dotted vertical line marks W-4's "
        "token, sigma = 3.25, where s is 1 for both."))


eps_shrink_figure()

# %% [markdown]
# *Figure: the factor by which LayerNorm's output falls short of unit size, against the
# token's spread $\sigma$; it is $1/2$ where $\sigma^2 = \varepsilon/3$, and within
# $5 \times 10^{-7}$ of 1 at W-4's $\sigma$.*
#
# **Verify.** The asserts above: W-4's value to ten digits, zeros for a
# constant token, and the other value that $\varepsilon$ outside the root gives.
#
# ## 5. Exercise: `layer_norm` (4 points)
#
# **Forecast.** For a batch `x` of shape $(n, d)$, what shape must the
# per-token means have so that `x - mu` subtracts each token's own mean?
#
# **Step.** Write `layer_norm(x, gamma=None, beta=None, eps=1e-5)`:
#
# - `x` has shape $(\dots, d)$: normalise each token over its **last axis**
#   (`axis=-1`, with `keepdims=True` so the result broadcasts back);
# - use the biased variance (divide by $d$) and put `eps` inside the square root;
# - then multiply by `gamma` if it is given, and add `beta` if it is given.
#
# Don't change `x` in place: the caller's array may be read-only (W-4's are).
#
# **Why the last axis.** A token's features lie along the last axis; the
# leading axes only list tokens, and LayerNorm never mixes tokens. The means
# have shape $(n, 1)$, which `keepdims=True` gives.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-9}$.

# %% nbgrader={"grade": false, "grade_id": "layer_norm", "locked": false, "schema_version": 3, "solution": true, "task": false}
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    """LayerNorm over the last axis. x: (..., d); gamma, beta: (d,) or None."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    out = (x - mu) / np.sqrt(var + eps)
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for layer_norm</summary>
#
# Normalise each token on its own: subtract its mean, divide by its standard
# deviation, both taken over the token's features, the last axis. Then scale by
# `gamma` and shift by `beta` if they are given.
#
# <details><summary>Hint 2 of 3 for layer_norm</summary>
#
# A mean over the last axis with `keepdims=True` gives each token's mean as
# shape $(\dots, 1)$, which broadcasts back over the features. The variance is
# the mean of the squared deviations, divided by $d$ (the biased one, `np.var`'s
# default `ddof=0`). `eps` goes inside the square root, added to the variance.
#
# <details><summary>Hint 3 of 3 for layer_norm</summary>
#
# In order: the means; the variances from `x` minus the means, squared, averaged
# over the last axis with `keepdims=True`; the normalised array, `x` minus the
# means over the square root of variance plus `eps`. Then, only if
# `gamma is not None`, multiply by it; only if `beta is not None`, add it. Work
# on a new array: never assign into `x`.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-4's token with $\varepsilon = 0$ and $\varepsilon = 10^{-5}$,
# then the same with a $\gamma$ and $\beta$. (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_layer_norm", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
LN_MISTAKES = mistakes.for_exercise("layer_norm")
r = W_4.extra["residual"]
checks.check(layer_norm, (r, None, None, 0.0), W_4.extra["post_ln_eps0"], rtol=1e-9, mistakes=LN_MISTAKES)
checks.check(layer_norm, (r,), W_4.extra["post_ln_eps"], rtol=1e-9, mistakes=LN_MISTAKES)
gamma, beta = np.array([2.0, 0.5]), np.array([0.0, 1.0])
checks.check(layer_norm, (r, gamma, beta, 0.0), [2.0, 0.5], rtol=1e-9, mistakes=LN_MISTAKES)
checks.ok("layer_norm reproduces W-4: [1, -1] with eps = 0, ±0.9999995266 with eps = 1e-5.")

# %% [markdown]
# The grader also checks batches and other inputs (2 points):

# %% nbgrader={"grade": true, "grade_id": "test_layer_norm_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: seeded random batches of shape (n, d) and (b, s, d), each row normalised on its own;
# random gamma and beta (each alone, and together); several eps; small d, where dividing by d - 1
# shows; a constant token and an all-zero token.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("03_residual_layernorm", "test_layer_norm_hidden")
d = 5
x = rng.normal(1.0, 2.0, size=(7, d))
gamma, beta = rng.normal(1.0, 0.5, size=d), rng.normal(0.0, 0.5, size=d)
for args in ((x,), (x, None, None, 0.0), (x, gamma, beta), (x, gamma, None, 0.1), (x, None, beta, 1e-3)):
    checks.check(layer_norm, args, norm.layer_norm(*args), rtol=1e-9, mistakes=LN_MISTAKES)
x3 = rng.normal(-2.0, 3.0, size=(2, 4, 8))
g3, b3 = rng.normal(1.0, 0.5, size=8), rng.normal(0.0, 0.5, size=8)
checks.check(layer_norm, (x3, g3, b3, 1e-5), norm.layer_norm(x3, g3, b3, 1e-5), rtol=1e-9,
             mistakes=LN_MISTAKES)
x_small = rng.normal(size=(4, 3)) * 0.01  # sigma^2 comparable to eps
checks.check(layer_norm, (x_small, None, None, 1e-4), norm.layer_norm(x_small, eps=1e-4), rtol=1e-9,
             mistakes=LN_MISTAKES)
edge = np.array([[2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [1.0, -2.0, 4.0]])
g_edge, b_edge = np.array([1.5, -1.0, 2.0]), np.array([0.25, 0.0, -0.5])
checks.check(layer_norm, (edge, g_edge, b_edge, 1e-5), norm.layer_norm(edge, g_edge, b_edge, 1e-5),
             rtol=1e-9, mistakes=LN_MISTAKES)
one_token = rng.normal(size=6)
checks.check(layer_norm, (one_token,), norm.layer_norm(one_token), rtol=1e-9, mistakes=LN_MISTAKES)
checks.ok("layer_norm normalises every token of a batch over its features.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Post-LN and pre-LN on the same input
#
# **Forecast.** With $\varepsilon = 0$, post-LN sends W-4's $x = [1, -1]$
# to $\mathrm{LN}([5.5, -1]) = [1, -1]$. What does pre-LN,
# $x + F(\mathrm{LN}(x))$, return? Start with $\mathrm{LN}([1, -1])$.
#
# **Step.** The reference blocks `norm.post_ln` and `norm.pre_ln`, with
# $\varepsilon = 0$ and with $\varepsilon = 10^{-5}$.

# %%
for e in (0.0, eps):
    print(f"eps = {e:g}:  post-LN {norm.post_ln(W_4.x, ffn_w4, e)}   pre-LN {norm.pre_ln(W_4.x, ffn_w4, e)}")
print("LN(x) with eps = 0:", norm.layer_norm(W_4.x, eps=0.0))
checks.assert_close(norm.post_ln(W_4.x, ffn_w4, 0.0), W_4.extra["post_ln_eps0"], name="post-LN, eps = 0")
checks.assert_close(norm.pre_ln(W_4.x, ffn_w4, 0.0), W_4.extra["residual"], name="pre-LN, eps = 0")


# %%
def block_bars_figure():
    """Grouped bars: W-4's token at each stage of the two blocks (eps = 0)."""
    stages = {
        "x": W_4.x,
        "F(x)": ffn_w4(W_4.x),
        "x + F(x)": W_4.x + ffn_w4(W_4.x),
        "post-LN\nLN(x + F(x))": norm.post_ln(W_4.x, ffn_w4, 0.0),
        "pre-LN\nx + F(LN(x))": norm.pre_ln(W_4.x, ffn_w4, 0.0),
    }
    title = "W-4's token through both blocks (eps = 0): same input, different outputs"

    def draw_on(fig):
        pos = np.arange(len(stages))
        ax = fig.subplots()
        for i, (colour, hatch) in enumerate(((plots.BLUE, ""), (plots.ORANGE, "//"))):
            values = [v[i] for v in stages.values()]
            bars = ax.bar(pos + (i - 0.5) * 0.36, values, width=0.34, color=colour, hatch=hatch,
                          edgecolor="white", label=f"feature {i + 1}")
            ax.bar_label(bars, labels=[plots.fmt(v) for v in values], padding=2, fontsize=9)
        ax.axhline(0.0, color=plots.BLACK, linewidth=0.9)
        ax.axvline(2.5, color=plots.GREY, linestyle=":", linewidth=1.2)
        ax.set_xticks(pos, list(stages))
        ax.set_xlabel("stage (the last two are the outputs of the two blocks)")
        ax.set_ylabel("feature value")
        ax.set_title(title)
        ax.legend(frameon=False, loc="upper left")
        ax.margins(y=0.15)

    return plots.custom_figure(draw_on, size=(8.0, 4.2), alt=(
        f"Grouped bar chart: {title}. The token's two features at each stage (feature 1 plain, feature 2 "
        "hatched): " + "; ".join(f"{stage.replace(chr(10), ' ')}: [{plots.fmt(v[0])}, {plots.fmt(v[1])}]"
                                 for stage, v in stages.items()) + "."))


block_bars_figure()

# %% [markdown]
# *Figure: W-4's token $x = [1, -1]$ at each stage; post-LN returns $[1, -1]$, pre-LN
# returns $[5.5, -1]$, the same input with the two orders of "add" and "normalise".*
#
# **Why.** $\mathrm{LN}([1, -1]) = [1, -1]$ with $\varepsilon = 0$, so pre-LN
# here equals $x + F(x) = [5.5, -1]$, unnormalised, while post-LN normalises
# that very sum. In general a post-LN block's output has mean 0 and standard
# deviation at most 1 per token (1 unless the token's spread is as small as
# about $\sqrt\varepsilon$, section 4); a pre-LN block's output keeps the
# scale of its input plus whatever $F$ adds, so the **residual stream**
# (the running sum $x$ passed from block to block) can grow with depth.
# That is why pre-LN models end with one last LayerNorm after the final
# block. What pre-LN gains: the residual path carries $x$ from a block's
# input to its output untouched by any normalisation, the usual explanation
# for why deep pre-LN stacks train more easily.
#
# **Verify.** On a batch of 1000 random tokens, the row statistics of the
# two outputs (a post-LN row below 1 is a token whose two features nearly
# coincide):

# %%
rng = np.random.default_rng(0)
batch = rng.normal(0.0, 3.0, size=(1000, 2))
post, pre = norm.post_ln(batch, ffn_w4), norm.pre_ln(batch, ffn_w4)
for name, y in (("post-LN", post), ("pre-LN", pre)):
    m, s = y.mean(-1), y.std(-1)
    print(f"{name:7}: row means from {m.min():+.3f} to {m.max():+.3f}; "
          f"row stds from {s.min():.3f} to {s.max():.3f}, median {np.median(s):.3f}")
assert np.allclose(post.mean(-1), 0.0, atol=1e-12) and np.all(post.std(-1) <= 1.0)
assert np.ptp(pre.std(-1)) > 1.0  # pre-LN rows keep very different scales

# %% [markdown]
# ## 7. Exercises: `post_ln_block` (3 points) and `pre_ln_block` (3 points)
#
# **Forecast.** If `sublayer` returned zeros for every input, what would each
# block return? (Post-LN: $\mathrm{LN}(x)$; pre-LN: $x$ itself, untouched.)
#
# **Step.** Write the two blocks with your `layer_norm`. `sublayer` is any function
# from $(\dots, d)$ to $(\dots, d)$, such as `ffn_w4`; pass `eps` on to
# `layer_norm`.
#
# - `post_ln_block(x, sublayer, eps=1e-5)` $= \mathrm{LN}(x + \text{sublayer}(x))$
# - `pre_ln_block(x, sublayer, eps=1e-5)` $= x + \text{sublayer}(\mathrm{LN}(x))$
#
# **How these are graded.** Each block is graded on its own: inside
# `with checks.substitute(layer_norm=norm.layer_norm):` the name `layer_norm`
# stands for the course's reference, and yours is put back when the block ends,
# in your notebook and in the grader's own re-run alike. So a slip in your
# `layer_norm` costs points only in the checks of section 5.
#
# Both blocks return float64 (a float32 result passes only where it is exact): the
# checks compare every entry with the reference to a relative $10^{-9}$.

# %% nbgrader={"grade": false, "grade_id": "post_ln_block", "locked": false, "schema_version": 3, "solution": true, "task": false}
def post_ln_block(x, sublayer, eps=1e-5):
    """Post-LN: LN(x + sublayer(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    return layer_norm(x + sublayer(x), eps=eps)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for post_ln_block</summary>
#
# Post-LN adds first and normalises last: the residual $x + \text{sublayer}(x)$,
# then LayerNorm of that sum.
#
# <details><summary>Hint 2 of 2 for post_ln_block</summary>
#
# `sublayer` is a function: call it on `x`, add its result to `x`, and hand the
# sum to your `layer_norm`, passing `eps` on by keyword (`eps=eps`), with no
# `gamma` or `beta`.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** W-4 through post-LN, $\varepsilon = 0$ and the default. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_post_ln_block", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
POST_MISTAKES = mistakes.for_exercise("post_ln_block")
with checks.substitute(layer_norm=norm.layer_norm):  # grade the block on its own
    checks.check(post_ln_block, (W_4.x, ffn_w4, 0.0), W_4.extra["post_ln_eps0"], rtol=1e-9,
                 mistakes=POST_MISTAKES)
    checks.check(post_ln_block, (W_4.x, ffn_w4), W_4.extra["post_ln_eps"], rtol=1e-9,
                 mistakes=POST_MISTAKES)
checks.ok("post_ln_block gives LN(x + F(x)) = [1, -1] for W-4 (eps = 0).")

# %% [markdown]
# The grader also checks batches, other sublayers and other eps (2 points):

# %% nbgrader={"grade": true, "grade_id": "test_post_ln_block_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: a random FFN on seeded random batches of shape (n, d) and (b, s, d) and on one
# token; a sublayer that is not an FFN; eps = 1e-5 and eps = 0.5 (so a lost eps shows); all-zero tokens.
### BEGIN HIDDEN TESTS
with checks.substitute(layer_norm=norm.layer_norm):  # grade the block on its own
    rng = checks.hidden_rng("03_residual_layernorm", "test_post_ln_block_hidden")
    d_model, d_ff = 6, 24
    W1, W2 = rng.normal(0.0, 0.5, size=(d_model, d_ff)), rng.normal(0.0, 0.5, size=(d_ff, d_model))
    b1, b2 = rng.normal(0.0, 0.2, size=d_ff), rng.normal(0.0, 0.2, size=d_model)

    def ffn_random(t):
        return ffn_forward(t, W1, b1, W2, b2)

    def flip_and_shift(t):
        return 2.0 * t[..., ::-1] + 1.0

    inputs = (rng.normal(0.0, 2.0, size=(5, d_model)), rng.normal(1.0, 1.0, size=(2, 3, d_model)),
              rng.normal(size=d_model), np.zeros((2, d_model)))
    for x in inputs:
        for sub in (ffn_random, flip_and_shift):
            for e in (1e-5, 0.5):
                checks.check(post_ln_block, (x, sub, e), norm.post_ln(x, sub, e), rtol=1e-9,
                             mistakes=POST_MISTAKES)
checks.ok("post_ln_block adds, then normalises, for any batch shape.")
### END HIDDEN TESTS

# %% [markdown]
# **Step.** Now the pre-LN block: normalise a copy of $x$ for the sublayer,
# and add the sublayer's output to the original $x$.

# %% nbgrader={"grade": false, "grade_id": "pre_ln_block", "locked": false, "schema_version": 3, "solution": true, "task": false}
def pre_ln_block(x, sublayer, eps=1e-5):
    """Pre-LN: x + sublayer(LN(x)). x: (..., d); sublayer: (..., d) -> (..., d)."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    return x + sublayer(layer_norm(x, eps=eps))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for pre_ln_block</summary>
#
# Pre-LN normalises first, and only on the sublayer's path: the sublayer sees
# $\mathrm{LN}(x)$, and its result is added to the original, unnormalised $x$.
#
# <details><summary>Hint 2 of 2 for pre_ln_block</summary>
#
# Call your `layer_norm` on `x` (with `eps=eps`), give that to `sublayer`, and
# add the result to `x` itself. The block's output is never normalised as a
# whole: that is the difference from post-LN.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** W-4 through pre-LN, $\varepsilon = 0$ and the default. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_pre_ln_block", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
PRE_MISTAKES = mistakes.for_exercise("pre_ln_block")
with checks.substitute(layer_norm=norm.layer_norm):  # grade the block on its own
    checks.check(pre_ln_block, (W_4.x, ffn_w4, 0.0), W_4.extra["residual"], rtol=1e-9, mistakes=PRE_MISTAKES)
    checks.check(pre_ln_block, (W_4.x, ffn_w4), norm.pre_ln(W_4.x, ffn_w4), rtol=1e-9, mistakes=PRE_MISTAKES)
checks.ok("pre_ln_block gives x + F(LN(x)) = [5.5, -1] for W-4 (eps = 0), not post-LN's [1, -1].")

# %% [markdown]
# The grader also checks batches, other sublayers and other eps (2 points):

# %% nbgrader={"grade": true, "grade_id": "test_pre_ln_block_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: a random FFN on seeded random batches of shape (n, d) and (b, s, d) and on one
# token; a sublayer that is not an FFN; eps = 1e-5 and eps = 0.5 (so a lost eps shows); all-zero tokens.
### BEGIN HIDDEN TESTS
with checks.substitute(layer_norm=norm.layer_norm):  # grade the block on its own
    rng = checks.hidden_rng("03_residual_layernorm", "test_pre_ln_block_hidden")
    d_model, d_ff = 6, 24
    W1, W2 = rng.normal(0.0, 0.5, size=(d_model, d_ff)), rng.normal(0.0, 0.5, size=(d_ff, d_model))
    b1, b2 = rng.normal(0.0, 0.2, size=d_ff), rng.normal(0.0, 0.2, size=d_model)

    def ffn_random(t):
        return ffn_forward(t, W1, b1, W2, b2)

    def flip_and_shift(t):
        return 2.0 * t[..., ::-1] + 1.0

    inputs = (rng.normal(0.0, 2.0, size=(5, d_model)), rng.normal(1.0, 1.0, size=(2, 3, d_model)),
              rng.normal(size=d_model), np.zeros((2, d_model)))
    for x in inputs:
        for sub in (ffn_random, flip_and_shift):
            for e in (1e-5, 0.5):
                checks.check(pre_ln_block, (x, sub, e), norm.pre_ln(x, sub, e), rtol=1e-9,
                             mistakes=PRE_MISTAKES)
checks.ok("pre_ln_block normalises the sublayer's input only, for any batch shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - The residual add needs `sublayer(x).shape == x.shape`; numpy's broadcasting
#   can hide a mismatch, so check it.
# - LayerNorm centres and scales each token over its features, with the
#   biased variance and $\varepsilon$ inside the square root; W-4 gives
#   $[1, -1]$ with $\varepsilon = 0$ and $\pm 0.9999995266$ with $10^{-5}$.
# - Post-LN, $\mathrm{LN}(x + F(x))$, and pre-LN, $x + F(\mathrm{LN}(x))$,
#   are different functions: $[1, -1]$ and $[5.5, -1]$ on the same input.
#
# Next: [04 · Activations](04_activations.ipynb).
