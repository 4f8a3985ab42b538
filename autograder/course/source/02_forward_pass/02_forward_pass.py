# %% [markdown]
# # 02 · The forward pass, shape by shape
#
# Notebook 01 followed one hidden unit. A layer has $d_\text{ff}$ of them side by
# side, and the FFN adds a second layer that maps their outputs back to the
# token's width $d_\text{model}$:
#
# $$z = x W_1 + b_1, \qquad h = \mathrm{ReLU}(z),$$
#
# $$y = h W_2 + b_2 = \mathrm{FFN}(x).$$
#
# | symbol | shape | meaning |
# |---|---|---|
# | $x$ | $(\dots, d_\text{model})$ | one token (a row), or a batch of tokens |
# | $W_1$ | $(d_\text{model}, d_\text{ff})$ | column $j$ holds hidden unit $j$'s weights $w$ from notebook 01 |
# | $b_1$ | $(d_\text{ff},)$ | one bias per hidden unit |
# | $z$, $h$ | $(\dots, d_\text{ff})$ | pre-activations and hidden outputs |
# | $W_2$ | $(d_\text{ff}, d_\text{model})$ | row $j$ says how hidden unit $j$ feeds each output |
# | $b_2$ | $(d_\text{model},)$ | one bias per output |
# | $y$ | $(\dots, d_\text{model})$ | the output: the same shape as $x$ |
#
# This is scenario **D**: the whole pass, with the shape at every stage. You
# will write `ffn_forward`, then `linear_torch` (the same layer in PyTorch's
# weight layout), then `dead_fraction` (how many hidden outputs ReLU sets to 0).
# (10 points.)
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np

import ffn_helpers as ref  # the course's reference implementations
from ffn_helpers import checks, mistakes, plots
from ffn_helpers.examples import W_2, W_3, W_7

# %% [markdown]
# ## 1 · One token through W-2 ($3 \to 4 \to 3$)
#
# Worked example W-2 has $d_\text{model} = 3$ and $d_\text{ff} = 4$:

# %%
for name, value in [("x", W_2.x), ("W1", W_2.W1), ("b1", W_2.b1), ("W2", W_2.W2), ("b2", W_2.b2)]:
    print(f"{name} {value.shape}:\n{value}\n")

# %% [markdown]
# **Forecast.** Write down the shape of $x W_1$, $z$, $h$ and $y$. Then compute
# $z_1 = x \cdot W_1[:, 1] + b_1[1]$ (hidden unit 1, counting from 0) and
# decide whether ReLU lets it through.
#
# **Step.** The reference pass, stage by stage (`ref.ffn_trace` returns every
# intermediate array).

# %%
trace = ref.ffn_trace(W_2.x, *W_2.params)
stages = [("x", trace.x), ("x @ W1", W_2.x @ W_2.W1), ("z = x @ W1 + b1", trace.z),
          ("h = ReLU(z)", trace.h), ("y = h @ W2 + b2", trace.y)]
for name, value in stages:
    print(f"{name:16} shape {value.shape!s:6} {np.round(value, 6)}")

# %% [markdown]
# **Why.** `x @ W1` contracts the shared axis ($d_\text{model} = 3$) and leaves
# one number per hidden unit ($d_\text{ff} = 4$); `b1` adds one bias per unit.
# Unit 1 has $z_1 = -0.62 < 0$ (case B), so $h_1 = 0$ and row 1 of $W_2$ contributes
# nothing to $y$. `h @ W2` contracts $d_\text{ff}$ and brings the token back to
# $d_\text{model} = 3$.
#
# **Verify.**

# %%
assert np.allclose(W_2.x @ W_2.W1, W_2.xW1)  # [0.84, -0.52, 0.35, 0.96]
assert np.allclose(trace.z, W_2.z)  # [0.94, -0.62, 0.55, 0.96]
assert np.allclose(trace.h, W_2.h)  # [0.94, 0, 0.55, 0.96]
assert np.allclose(trace.y, W_2.y)  # [0.453, -0.512, 0.698]
assert [v.shape for _, v in stages] == [(3,), (4,), (4,), (4,), (3,)]
# Unit 1 is off, so dropping it (and row 1 of W2) changes nothing:
keep = [0, 2, 3]
assert np.allclose(trace.h[keep] @ W_2.W2[keep] + W_2.b2, trace.y)

# %% [markdown]
# The same pass as a picture: every input, hidden unit and output is a box with
# its value; edges are weights.

# %%
plots.ffn_dataflow(W_2.x, *W_2.params, title="W-2: one token through the FFN (inactive unit in grey)")

# %% [markdown]
# *Figure: W-2's forward pass. Blue edges are positive weights, vermilion negative,
# thicker is larger; hidden unit 1 ($z = -0.62$) is inactive, so its outgoing
# edges (dotted grey) carry 0.*
#
# ## 2 · W-3 ($2 \to 4 \to 2$): exact zeros
#
# W-3 is built from small integers (and one $0.5$), so every product and sum is
# exact in float64 (notebook 01, section 2).
#
# **Forecast.** With $x = [2, -1]$, $x W_1 = [2, -1, -3, 5]$ and $b_1 = [0, 1, 3, 0]$:
# which hidden units are inactive, and which of the cases A, B, C are they?
#
# **Step.**

# %%
trace3 = ref.ffn_trace(W_3.x, *W_3.params)
for name, value in [("x @ W1", W_3.x @ W_3.W1), ("z", trace3.z), ("h", trace3.h), ("y", trace3.y)]:
    print(f"{name:7} {value}")
print("z == 0 exactly:", trace3.z == 0)

# %% [markdown]
# **Why.** The biases cancel units 1 and 2 exactly: $-1 + 1 = 0$ and $-3 + 3 = 0$.
# Both are case C, so ReLU outputs 0 for them, just as for a negative $z$. Any
# check for inactive units must count $z = 0$ as well as $z < 0$.
#
# **Verify.**

# %%
assert np.array_equal(W_3.x @ W_3.W1, W_3.xW1)  # [2, -1, -3, 5]
assert np.array_equal(trace3.z, W_3.z)  # [2, 0, 0, 5]: exact, no tolerance needed
assert np.array_equal(trace3.y, W_3.y)  # [4.5, 1.0]
assert np.sum(trace3.z == 0) == 2 and np.sum(trace3.z < 0) == 0

# %%
plots.ffn_dataflow(W_3.x, *W_3.params, title="W-3: two hidden units with z = 0 exactly (grey)")

# %% [markdown]
# *Figure: W-3's forward pass. Hidden units 1 and 2 have $z = 0$ exactly and are
# inactive (grey); zero weights are not drawn.*
#
# ### Your turn: step through it, then try another input
#
# The view below runs one token through W-2's network a stage at a time.
# Press **Step** to go from the input to the pre-activation $z$, then to the
# hidden values $h = \mathrm{ReLU}(z)$ (inactive units greyed), then to the
# output $y$; **Back** and **Reset** undo. Type into a box (or step it with the
# arrow keys) to change one entry of $x$: every stage is recomputed by `ffn_helpers.ffn_forward`'s own code.
# (Outside JupyterLab, e.g. in an exported copy, a static picture of the last
# stage appears instead.)

# %%
ref.widgets.interactive_ffn(W_2.x, *W_2.params)

# %% [markdown]
# `x_try` below is W-2's input with its first feature negated. Which hidden
# units switch off, and which switch on? Then change `x_try` and run the cell
# again: can you find an input that switches every hidden unit off?

# %%
x_try = np.array([-1.0, -0.5, 0.8])  # W-2's x with x[0] negated; edit me
plots.ffn_dataflow(x_try, *W_2.params, title=f"W-2's FFN on x = {x_try}")

# %% [markdown]
# *Figure: W-2's network on your input `x_try`; grey hidden units are inactive.*
#
# ### Exercise: `ffn_forward(x, W1, b1, W2, b2)`
#
# Return $\mathrm{ReLU}(x W_1 + b_1) W_2 + b_2$ for `x` of shape
# `(..., d_model)`: one token `(d_model,)`, a batch `(n, d_model)`, or batches of
# sequences `(b, s, d_model)`. The result has the shape of `x`.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-7}$.

# %% nbgrader={"grade": false, "grade_id": "ffn_forward", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_forward(x, W1, b1, W2, b2):
    """FFN(x) = ReLU(x W1 + b1) W2 + b2; x: (..., d_model) -> (..., d_model)."""
    ### BEGIN SOLUTION
    z = np.asarray(x, dtype=float) @ W1 + b1
    h = np.maximum(z, 0.0)
    return h @ W2 + b2
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for ffn_forward</summary>
#
# Follow the formula from the inside out: the pre-activation $z = x W_1 + b_1$,
# then $h = \mathrm{ReLU}(z)$, then $y = h W_2 + b_2$. Each is one line of
# numpy.
#
# <details><summary>Hint 2 of 3 for ffn_forward</summary>
#
# `@` multiplies the last axis of `x` by $W_1$ whatever the leading axes are,
# and `b1` broadcasts over them, so the same three lines serve one token and any
# batch. ReLU is `np.maximum(..., 0.0)`. Turn `x` into a float array first.
#
# <details><summary>Hint 3 of 3 for ffn_forward</summary>
#
# Three names, in order: `z` from `x` (as a float array) matrix-multiplied by
# `W1`, plus `b1`; `h` the elementwise maximum of `z` and `0.0`; the result `h`
# matrix-multiplied by `W2`, plus `b2`. No loop is needed.
#
# </details>
# </details>
# </details>

# %% nbgrader={"grade": true, "grade_id": "test_ffn_forward", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Worked examples W-2 and W-3, each one token, then W-2 on a batch of two tokens.
checks.check(ffn_forward, (W_2.x, *W_2.params), W_2.y, mistakes=mistakes.for_exercise("ffn_forward"))
checks.check(ffn_forward, (W_3.x, *W_3.params), W_3.y, mistakes=mistakes.for_exercise("ffn_forward"))
x_pair = np.stack([W_2.x, -W_2.x])
checks.check(ffn_forward, (x_pair, *W_2.params), ref.ffn_forward(x_pair, *W_2.params),
             mistakes=mistakes.for_exercise("ffn_forward"))
checks.ok("ffn_forward reproduces W-2 ([0.453, -0.512, 0.698]) and W-3 ([4.5, 1.0]).")

# %% nbgrader={"grade": true, "grade_id": "test_ffn_forward_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: seeded random weights and inputs of shapes (n, d_model) and
# (b, s, d_model), including the LibTorch-sized [2, 10, 256] -> d_ff = 1024, a square
# d_model = d_ff, and integer-valued inputs with exact zeros; each against the reference.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("02_forward_pass", "test_ffn_forward_hidden")
for x_shape, d_ff in [((5, 3), 4), ((2, 4, 3), 7), ((6,), 6), ((2, 10, 256), 1024)]:
    d_model = x_shape[-1]
    x = rng.normal(size=x_shape)
    W1, b1 = rng.normal(size=(d_model, d_ff)) / np.sqrt(d_model), rng.normal(size=d_ff)
    W2, b2 = rng.normal(size=(d_ff, d_model)) / np.sqrt(d_ff), rng.normal(size=d_model)
    checks.check(ffn_forward, (x, W1, b1, W2, b2), ref.ffn_forward(x, W1, b1, W2, b2),
                 mistakes=mistakes.for_exercise("ffn_forward"))
x = rng.integers(-2, 3, size=(3, 5, 4)).astype(float)
W1, b1 = rng.integers(-2, 3, size=(4, 6)).astype(float), rng.integers(-2, 3, size=6).astype(float)
W2, b2 = rng.integers(-2, 3, size=(6, 4)).astype(float), rng.integers(-2, 3, size=4).astype(float)
assert np.any(x @ W1 + b1 == 0)  # this case really has exact zeros
checks.check(ffn_forward, (x, W1, b1, W2, b2), ref.ffn_forward(x, W1, b1, W2, b2),
             mistakes=mistakes.for_exercise("ffn_forward"))
checks.ok("ffn_forward works on batches of any shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3 · Batches: `(n, d_model)` and `(b, s, d_model)`
#
# In a transformer the FFN sees a whole batch of sequences at once: $b$ sequences
# of $s$ tokens each, so $x$ has shape $(b, s, d_\text{model})$. Take $b = 2$,
# $s = 10$, $d_\text{model} = 256$, $d_\text{ff} = 1024$, and write shapes the way
# LibTorch (PyTorch's C++ API) prints tensor sizes: `[2, 10, 256]`.
#
# **Forecast.** For $x$ of shape $(2, 10, 256)$, what are the shapes of $z$, $h$
# and $y$? How many times is $W_1$ used?
#
# **Step.** Random weights of those sizes, and the shape trace of one pass.

# %%
rng = np.random.default_rng(0)
d_model, d_ff = 256, 1024
W1 = rng.normal(size=(d_model, d_ff)) / np.sqrt(d_model)
b1 = np.zeros(d_ff)
W2 = rng.normal(size=(d_ff, d_model)) / np.sqrt(d_ff)
b2 = np.zeros(d_model)
x_batch = rng.normal(size=(2, 10, d_model))
shapes = plots.shape_trace(x_batch, W1, b1, W2, b2)
for stage, shape in shapes:
    print(f"{stage:16} {list(shape)}")

# %% [markdown]
# **Why.** `@` treats every axis but the last as a batch axis: each of the
# $2 \cdot 10 = 20$ token rows is multiplied by the same $W_1$ and $W_2$, so the
# trace reads $[2, 10, 256] \to [2, 10, 1024] \to [2, 10, 256]$. The FFN never
# mixes tokens, so flattening the batch to $(20, 256)$ rows and back gives the
# same result (notebook 05 takes this further).
#
# **Verify.**

# %%
assert [list(s) for _, s in shapes] == [[2, 10, 256], [2, 10, 1024], [2, 10, 1024], [2, 10, 1024], [2, 10, 256]]
y_batch = ref.ffn_forward(x_batch, W1, b1, W2, b2)
y_rows = ref.ffn_forward(x_batch.reshape(20, d_model), W1, b1, W2, b2).reshape(2, 10, d_model)
assert np.allclose(y_batch, y_rows, rtol=1e-12, atol=1e-12)
assert np.allclose(y_batch[1, 3], ref.ffn_forward(x_batch[1, 3], W1, b1, W2, b2), rtol=1e-12, atol=1e-12)

# %% [markdown]
# ## 4 · PyTorch's `(out, in)` weight layout
#
# `torch.nn.Linear(in_features, out_features)` stores its `weight` with shape
# `(out_features, in_features)`: row $k$ is output $k$'s weight vector, as in the
# column-vector formula $y = W x + b$ of linear algebra. Tokens, though, arrive as
# rows of $x$, so the layer computes
#
# $$\texttt{y = x @ weight.T + bias}.$$
#
# That is why `x @ W.T` appears all over PyTorch code. An FFN written with
# `nn.Linear` holds `weight1` of shape $(d_\text{ff}, d_\text{model})$ and `weight2`
# of shape $(d_\text{model}, d_\text{ff})$; in this course's layout
# $W_1 = \texttt{weight1}^\top$ and $W_2 = \texttt{weight2}^\top$, and the biases are
# the same.
#
# **Forecast.** What is the shape of `nn.Linear(256, 1024).weight`? And what
# happens if you forget the transpose and compute `x @ weight`?
#
# **Step.** W-2 stored the PyTorch way, then the forgotten transpose: once with
# W-2's $4 \times 3$ weight, once with the square $2 \times 2$ first layer of
# worked example W-7 (which notebook 07 uses).

# %%
weight1, weight2 = W_2.W1.T, W_2.W2.T  # what nn.Linear(3, 4) and nn.Linear(4, 3) would hold
print("weight1", weight1.shape, " weight2", weight2.shape)
z_torch = W_2.x @ weight1.T + W_2.b1
print("x @ weight1.T + b1 =", z_torch)
try:
    W_2.x @ weight1 + W_2.b1
except ValueError as error:
    print("x @ weight1 + b1 fails:", error)

weight_sq = W_7.W1.T  # a square weight, (out, in) = (2, 2)
x_sq = W_7.x
print("square weight: x @ weight.T =", x_sq @ weight_sq.T, " but x @ weight =", x_sq @ weight_sq, "(no error!)")

# %% [markdown]
# **Why.** With a non-square weight the forgotten transpose fails loudly (the
# inner sizes 3 and 4 do not match). With a square weight, as in an attention
# projection $d_\text{model} \to d_\text{model}$, it runs and silently returns
# the wrong numbers. `ref.from_torch_layout` converts all four FFN parameters.
#
# **Verify.**

# %%
assert weight1.shape == (4, 3) and weight2.shape == (3, 4)
assert np.allclose(z_torch, W_2.z)
W1_back, b1_back, W2_back, b2_back = ref.from_torch_layout(weight1, W_2.b1, weight2, W_2.b2)
assert np.array_equal(W1_back, W_2.W1) and np.array_equal(W2_back, W_2.W2)
assert np.allclose(x_sq @ weight_sq.T + W_7.b1, W_7.z)  # W-7's pre-activation [4, 5]
assert not np.allclose(x_sq @ weight_sq.T, x_sq @ weight_sq)

# %% [markdown]
# ### Exercise: `linear_torch(x, weight, bias)`
#
# Implement `nn.Linear`'s forward: `x` has shape `(..., in_features)`, `weight`
# `(out_features, in_features)`, `bias` `(out_features,)` or `None` (a layer made
# with `bias=False`). Return `x @ weight.T + bias`, shape `(..., out_features)`.
#
# Return float64, numpy's default (a float32 result passes only where it is exact):
# the checks compare every entry with the reference to a relative $10^{-7}$.

# %% nbgrader={"grade": false, "grade_id": "linear_torch", "locked": false, "schema_version": 3, "solution": true, "task": false}
def linear_torch(x, weight, bias):
    """nn.Linear: x @ weight.T + bias; x: (..., in), weight: (out, in), bias: (out,) or None -> (..., out)."""
    ### BEGIN SOLUTION
    y = np.asarray(x, dtype=float) @ np.asarray(weight, dtype=float).T
    return y if bias is None else y + bias
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for linear_torch</summary>
#
# PyTorch keeps the weight as `(out_features, in_features)`, the transpose of
# this course's layout. So the layer multiplies by the weight's transpose, then
# adds the bias.
#
# <details><summary>Hint 2 of 2 for linear_torch</summary>
#
# `weight.T` has shape `(in_features, out_features)`, so `x @ weight.T` maps the
# last axis of `x` to `out_features`, for any leading axes. When `bias` is
# `None` (a layer made with `bias=False`), there is nothing to add: test for it
# before adding.
#
# </details>
# </details>

# %% nbgrader={"grade": true, "grade_id": "test_linear_torch", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# W-7's square first layer, then W-2, both stored the PyTorch way: W-2's first layer gives
# its pre-activation, and two layers with ReLU between them give its output.
checks.check(linear_torch, (W_7.x, W_7.W1.T, W_7.b1), W_7.z, mistakes=mistakes.for_exercise("linear_torch"))
weight1, weight2 = W_2.W1.T, W_2.W2.T
checks.check(linear_torch, (W_2.x, weight1, W_2.b1), W_2.z, mistakes=mistakes.for_exercise("linear_torch"))
h_torch = ref.relu(checks.call(linear_torch, W_2.x, weight1, W_2.b1))
checks.check(linear_torch, (h_torch, weight2, W_2.b2), W_2.y, mistakes=mistakes.for_exercise("linear_torch"))
checks.ok("linear_torch reproduces W-7's and W-2's layers from PyTorch-layout weights.")

# %% nbgrader={"grade": true, "grade_id": "test_linear_torch_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: seeded random batches (n, in) and (b, s, in), including
# [2, 10, 256] -> 1024; a square weight (where a missing transpose gives wrong numbers
# rather than an error); and bias=None.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("02_forward_pass", "test_linear_torch_hidden")
# The square weight comes first: there a missing transpose gives numbers, which the
# feedback can recognise, instead of a shape error.
for x_shape, d_out in [((4, 6), 6), ((2, 3, 5), 5), ((5, 3), 4), ((2, 10, 256), 1024), ((3,), 2)]:
    x, weight, bias = rng.normal(size=x_shape), rng.normal(size=(d_out, x_shape[-1])), rng.normal(size=d_out)
    checks.check(linear_torch, (x, weight, bias), x @ weight.T + bias, mistakes=mistakes.for_exercise("linear_torch"))
x, weight = rng.normal(size=(4, 5)), rng.normal(size=(5, 5))
checks.check(linear_torch, (x, weight, None), x @ weight.T, mistakes=mistakes.for_exercise("linear_torch"))
x, weight = rng.normal(size=(2, 3, 4)), rng.normal(size=(6, 4))
checks.check(linear_torch, (x, weight, None), x @ weight.T, mistakes=mistakes.for_exercise("linear_torch"))
checks.ok("linear_torch follows nn.Linear on any batch shape, with or without bias.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5 · How many hidden units are inactive?
#
# A hidden output is **inactive** when ReLU sets it to 0, that is when $z \le 0$
# (cases B and C). Over a batch of $N$ tokens, the share of inactive outputs is
#
# $$\text{dead fraction} = \frac{1}{N\, d_\text{ff}} \sum_{n=1}^{N} \sum_{j=1}^{d_\text{ff}}
#   \mathbb{1}\left[h_{nj} = 0\right],$$
#
# $$h = \mathrm{ReLU}(x W_1 + b_1),$$
#
# where $\mathbb{1}[\cdot]$ is 1 when the condition holds and 0 otherwise. For one
# token it is the share of its $d_\text{ff}$ units that are off. (A *dead unit*
# in the sense of notebook 01, off for every token, is a stronger condition.)
# W-2 has 1 of 4 units off, a share of 0.25; W-3 has 2 of 4, 0.5, both by exact zeros.
#
# A common rule of thumb says "about half the hidden units are zero". Does it hold?
#
# **Forecast.** Take $d_\text{model} = 64$, $d_\text{ff} = 256$, $W_1$ with
# independent normal entries of variance $1/d_\text{model}$, $b_1 = 0$, and
# $N = 4096$ tokens whose features are standard normal (symmetric around 0).
# What share do you expect? What if every feature of the input is shifted to
# have mean 2 instead? What if instead $b_1 = -0.5$ for every unit?
#
# **Step.** The three scenarios, the share, and how many units are off (or on)
# for at least 99% of the tokens.

# %%
rng = np.random.default_rng(2)
d_model, d_ff, n_tokens = 64, 256, 4096
W1_r = rng.normal(size=(d_model, d_ff)) / np.sqrt(d_model)
scenarios = {
    "symmetric x, b1 = 0": (rng.normal(size=(n_tokens, d_model)), np.zeros(d_ff)),
    "shifted x (mean 2), b1 = 0": (rng.normal(2.0, 1.0, size=(n_tokens, d_model)), np.zeros(d_ff)),
    "symmetric x, b1 = -0.5": (rng.normal(size=(n_tokens, d_model)), np.full(d_ff, -0.5)),
}
print(f"{'scenario':28} {'share off':>9}   units off ≥ 99%   units on ≥ 99%")
share, off_units, on_units, z_of = {}, {}, {}, {}
for name, (x_s, b1_s) in scenarios.items():
    z_of[name] = x_s @ W1_r + b1_s  # (n_tokens, d_ff)
    off = ref.relu(z_of[name]) == 0
    share[name] = off.mean()
    off_units[name] = np.mean(off.mean(axis=0) >= 0.99)
    on_units[name] = np.mean(off.mean(axis=0) <= 0.01)
    print(f"{name:28} {share[name]:9.3f}   {off_units[name]:15.1%}   {on_units[name]:14.1%}")

# %%
plots.preactivation_histogram(z_of["symmetric x, b1 = 0"],
                              title="Symmetric inputs: pre-activations of 256 units over 4096 tokens")

# %% [markdown]
# *Figure: all $4096 \times 256$ pre-activations for symmetric inputs; the share
# left of 0 (vermilion) is the inactive share, close to one half.*
#
# Shifting the input does not move every unit the same way. Unit $j$'s
# pre-activation now has mean $2 \sum_i (W_1)_{ij}$, positive for some units and
# negative for others. Here is the unit whose column of $W_1$ has the most
# negative sum, under both inputs:

# %%
j_low = int(np.argmin(W1_r.sum(axis=0)))
z_unit_sym = z_of["symmetric x, b1 = 0"][:, j_low]
z_unit_shift = z_of["shifted x (mean 2), b1 = 0"][:, j_low]
plots.preactivation_histogram(z_unit_shift, title=f"Shifted inputs: unit {j_low} over 4096 tokens")

# %% [markdown]
# *Figure: one hidden unit's pre-activations when the inputs have mean 2: all
# of them are negative, so this unit is off for every token.*
#
# **Why.** With $b_1 = 0$ and symmetric $x$, each $z_j = \sum_i x_i (W_1)_{ij}$ is
# symmetric around 0, so about half of the outputs are 0. Shifting the input
# gives each unit its own offset: the overall share stays near one half only
# because random weights have column sums of both signs, while about one unit
# in ten is now off for at least 99% of the tokens, dead for this data in the
# sense of notebook 01. A negative bias moves every $z$ down, and the share
# rises to about 0.69. The rule of thumb holds only when the pre-activations are
# roughly symmetric around zero; trained networks need not be.
#
# **Verify.**

# %%
assert abs(share["symmetric x, b1 = 0"] - 0.5) < 0.01
assert off_units["symmetric x, b1 = 0"] == 0 and on_units["symmetric x, b1 = 0"] == 0
assert 0.4 < share["shifted x (mean 2), b1 = 0"] < 0.6
assert 0.05 < off_units["shifted x (mean 2), b1 = 0"] < 0.15 and on_units["shifted x (mean 2), b1 = 0"] > 0.05
assert round(share["symmetric x, b1 = -0.5"], 2) == 0.69
assert 0.3 < np.mean(z_unit_sym <= 0) < 0.7 and np.all(z_unit_shift < 0)
assert np.mean(W_2.h == 0) == 0.25 and np.mean(W_3.h == 0) == 0.5

# %% [markdown]
# ### Exercise: `dead_fraction(x, W1, b1)`
#
# Return the share of hidden outputs $h = \mathrm{ReLU}(x W_1 + b_1)$ that are
# exactly 0, over all tokens and all $d_\text{ff}$ units, as one number between 0
# and 1. `x` has shape `(..., d_model)`: one token or any batch. Remember W-3.
#
# Return a float64 number (a Python `float` will do): the checks compare it with
# the reference to a relative $10^{-7}$.

# %% nbgrader={"grade": false, "grade_id": "dead_fraction", "locked": false, "schema_version": 3, "solution": true, "task": false}
def dead_fraction(x, W1, b1):
    """Share of (token, unit) pairs with ReLU(x W1 + b1) == 0; x: (..., d_model) -> float in [0, 1]."""
    ### BEGIN SOLUTION
    z = np.asarray(x, dtype=float) @ W1 + b1
    return float(np.mean(z <= 0))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for dead_fraction</summary>
#
# A hidden output is 0 exactly when its pre-activation is not positive:
# $z \le 0$. The share of them is a mean of a comparison, over every token and
# every unit together.
#
# <details><summary>Hint 2 of 3 for dead_fraction</summary>
#
# Compute $z = x W_1 + b_1$ for the whole batch at once; its shape is
# $(\dots, d_\text{ff})$ with one entry per (token, unit) pair. The mean of a
# boolean array is the share of `True`s. Remember W-3: a pre-activation of
# exactly 0 gives $h = 0$ too, so use `<=`, not `<`.
#
# <details><summary>Hint 3 of 3 for dead_fraction</summary>
#
# The answer is one number: take `np.mean` of `z <= 0` over the whole array (no
# `axis`), then make it a Python float with `float(...)`.
#
# </details>
# </details>
# </details>

# %% nbgrader={"grade": true, "grade_id": "test_dead_fraction", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# W-2 (1 of 4 units off), W-3 (2 of 4, both exact zeros), and W-3 on a batch of two tokens.
x_pair = np.stack([W_3.x, -W_3.x])
checks.check_cases(dead_fraction, [((W_2.x, W_2.W1, W_2.b1), np.mean(W_2.h == 0)),
                                   ((W_3.x, W_3.W1, W_3.b1), np.mean(W_3.h == 0)),
                                   ((x_pair, W_3.W1, W_3.b1), np.mean(ref.relu(x_pair @ W_3.W1 + W_3.b1) == 0))],
                   mistakes=mistakes.for_exercise("dead_fraction"))
checks.ok("dead_fraction: 0.25 for W-2, 0.5 for W-3 (exact zeros count).")

# %% nbgrader={"grade": true, "grade_id": "test_dead_fraction_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# The grader also checks: seeded random batches of shapes (n, d_model) and (b, s, d_model),
# integer-valued ones full of exact zeros, and a batch where some units are off for
# every token; each against the share of ReLU outputs equal to 0.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("02_forward_pass", "test_dead_fraction_hidden")


def expected_share(x, W1, b1):
    return np.mean(ref.relu(x @ W1 + b1) == 0)


cases = []
for x_shape, d_ff in [((50, 8), 16), ((2, 10, 8), 32), ((8,), 12)]:
    cases.append((rng.normal(size=x_shape), rng.normal(size=(x_shape[-1], d_ff)), rng.normal(size=d_ff)))
for x_shape in [(20, 3), (2, 5, 3)]:
    x = rng.integers(-1, 2, size=x_shape).astype(float)
    W1, b1 = rng.integers(-1, 2, size=(3, 10)).astype(float), rng.integers(-1, 2, size=10).astype(float)
    assert np.any(x @ W1 + b1 == 0)
    cases.append((x, W1, b1))
x, W1 = rng.normal(size=(30, 4)), rng.normal(size=(4, 6))
b1 = np.array([0.0, 0.0, -100.0, 0.0, 100.0, -100.0])  # units 2 and 5 off for every token
cases.append((x, W1, b1))
checks.check_cases(dead_fraction, [(args, expected_share(*args)) for args in cases],
                   mistakes=mistakes.for_exercise("dead_fraction"))
checks.ok("dead_fraction counts every (token, unit) pair, exact zeros included.")
### END HIDDEN TESTS

# %% [markdown]
# ## Summary
#
# - $x\,(\dots, d_\text{model}) \xrightarrow{W_1, b_1} z\,(\dots, d_\text{ff})$
#   $\xrightarrow{\mathrm{ReLU}} h\,(\dots, d_\text{ff})$
#   $\xrightarrow{W_2, b_2} y\,(\dots, d_\text{model})$:
#   only the last axis changes; every leading axis is a batch axis, so
#   $[2, 10, 256] \to [2, 10, 1024] \to [2, 10, 256]$.
# - W-2 gives $y = [0.453, -0.512, 0.698]$ with one unit off; W-3 gives
#   $y = [4.5, 1.0]$ with two units at exactly $z = 0$.
# - PyTorch's `nn.Linear` stores `weight` as `(out, in)` and computes
#   `x @ weight.T + bias`; $W_1 = \texttt{weight1}^\top$. A missing transpose fails
#   loudly for non-square weights and silently for square ones.
# - About half the hidden outputs are 0 only when the pre-activations are
#   symmetric around 0; shifts in the input or the bias change the share and
#   can leave units off for every token.
#
# Next: [03 · Residual and LayerNorm](03_residual_layernorm.ipynb).
