# %% [markdown]
# # 05 · Position-wise: many tokens, one set of weights
#
# A transformer reads a sequence of $n$ tokens as a matrix $X$ of shape
# $(n, d_\text{model})$: row $i$, written $x_i$, is token $i$'s vector. The
# feed-forward sublayer applies **the same function, with the same weights, to
# every row on its own**:
#
# $$\begin{array}{l} \mathrm{FFN}(X)_i = \mathrm{FFN}(x_i) \\
#   \qquad = \mathrm{ReLU}(x_i W_1 + b_1)\, W_2 + b_2 \end{array}$$
#
# for $i = 0, \dots, n-1$.
#
# That is what *position-wise* means. Attention is the sublayer that moves
# information between positions; the FFN never does. This notebook (scenario
# G) checks that claim four ways, asks you to write a detector that can
# tell the two kinds of function apart, and measures why the FFN is computed as
# one matrix product over all tokens rather than token by token.
#
# | symbol | shape | meaning |
# |---|---|---|
# | $X$ | $(n, d_\text{model})$ | $n$ tokens, one per row (more leading axes, such as a batch, are allowed) |
# | $x_i$ | $(d_\text{model},)$ | row $i$ of $X$ |
# | $W_1, b_1, W_2, b_2$ | as in notebook 02 | one set of weights shared by every position |
# | $f$ | $(n, d_\text{model}) \to (n, d_\text{out})$ | any function of a whole sequence |
#
# **Exercises** (10 points): `ffn_per_token` (5), `mixes_positions` (5).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import timeit

import numpy as np

from ffn_helpers import checks, examples, ffn_forward, mistakes, plots

W4 = examples.W_4  # the 2 → 3 → 2 FFN of worked example W-4


def check_verdicts(fn, cases, catalogue=()):
    """Test cells' helper: `fn(*args)` must answer `expected` (True or False) for each (args, expected, case).

    fn answers every case; on the first wrong verdict, a catalogued mistake is named where it gives fn's verdict
    on every case of the list (checks.check_cases): one verdict alone singles out no mistake.
    """
    checks.check_cases(fn, [(args, expected) for args, expected, _ in cases], exact=True, mistakes=catalogue,
                       about=[case for _, _, case in cases])


# %% [markdown]
# ## 1. Two tokens through shared weights
#
# Worked example W-4 has $d_\text{model} = 2$, $d_\text{ff} = 3$ and
#
# $$W_1 = \begin{bmatrix} 1 & 0 & 2 \\ 0 & 1 & -1 \end{bmatrix},\quad
# b_1 = \begin{bmatrix} 0 & 0 & 0.5 \end{bmatrix},$$
#
# $$W_2 = \begin{bmatrix} 1 & -1 \\ 0 & 1 \\ 1 & 0 \end{bmatrix},\quad
# b_2 = \begin{bmatrix} 0 & 1 \end{bmatrix}.$$
#
# Put two tokens in a sequence: $x_0 = [1, 0]$ and $x_1 = [0, 2]$.
#
# **Forecast.** Work out $\mathrm{FFN}(x_0)$ and $\mathrm{FFN}(x_1)$ by hand, one
# token at a time. (For $x_1$, one pre-activation is exactly zero.)
#
# **Step.** Feed the whole $(2, 2)$ matrix to the reference `ffn_forward` at once.

# %%
X = W4.extra["tokens"]
Y = ffn_forward(X, *W4.params)
print("X =\n", X)
print("FFN(X) =\n", Y)

# %% [markdown]
# **Why.** `X @ W1` multiplies every row by the same $W_1$, and adding $b_1$
# broadcasts it to every row; ReLU is elementwise; the same happens with
# $W_2, b_2$. So row $i$ of the output is computed from row $i$ of the input
# alone: $\mathrm{FFN}([1, 0]) = [3.5, 0]$ and $\mathrm{FFN}([0, 2]) = [0, 3]$.
#
# **Verify.** The batch result equals the worked example, and each row equals
# the FFN applied to that token alone.

# %%
assert np.allclose(Y, W4.extra["tokens_out"], rtol=0, atol=1e-15)
for i in range(len(X)):
    assert np.array_equal(Y[i], ffn_forward(X[i], *W4.params))
print("FFN([1, 0]) =", Y[0], "and FFN([0, 2]) =", Y[1], ": each row on its own.")

# %% [markdown]
# ## 2. Permuting the tokens permutes the outputs
#
# **Forecast.** Swap the two tokens: $X' = [x_1; x_0]$. What is $\mathrm{FFN}(X')$?
#
# **Step.**

# %%
X_swapped = X[::-1]
Y_swapped = ffn_forward(X_swapped, *W4.params)
print("FFN(X swapped) =\n", Y_swapped)

# %% [markdown]
# **Why.** Nothing in the computation looks at a row's position, so each output
# row travels with its input row: for any permutation $P$ of the rows,
# $\mathrm{FFN}(PX) = P\,\mathrm{FFN}(X)$. (A function with this property is
# called *permutation-equivariant*. Section 5 shows that the property alone does
# not prove the absence of mixing.)
#
# **Verify.**

# %%
assert np.array_equal(Y_swapped, Y[::-1])
print("The outputs came back in the swapped order.")

# %% [markdown]
# ## 3. Changing one token changes only its own row
#
# **Forecast.** Replace token 1 by $[5, -3]$ and keep token 0. Which output rows change?
#
# **Step.**

# %%
X_changed = X.copy()
X_changed[1] = [5.0, -3.0]
Y_changed = ffn_forward(X_changed, *W4.params)
print("before:\n", Y, "\nafter:\n", Y_changed)

# %% [markdown]
# **Why.** Row 0 of the output is a function of $x_0$ only, so it does not move,
# not even by a rounding error: the same operations run on the same numbers.
#
# **Verify.**

# %%
assert np.array_equal(Y_changed[0], Y[0])
assert not np.array_equal(Y_changed[1], Y[1])
print("Only row 1 changed.")

# %% [markdown]
# ## 4. Exercise: the FFN, one token at a time
#
# Write the FFN as the definition reads: a loop that takes one token, computes
# $\mathrm{ReLU}(x W_1 + b_1) W_2 + b_2$ for it, and stores the result in the
# same position of the output.
#
# `X` may have any number of leading axes: $(n, d_\text{model})$ for one
# sequence, $(b, s, d_\text{model})$ for a batch of $b$ sequences of $s$ tokens,
# or just $(d_\text{model},)$ for a single token. Every index into the leading
# axes is one token. `np.ndindex(X.shape[:-1])` walks through all of those
# indices (for a single token it yields the empty index `()` once, and
# `X[()]` is the whole vector).
#
# **Forecast.** For $X$ of shape $(b, s, d_\text{model})$, how many times does
# your loop body run?
#
# **Step.** Implement `ffn_per_token` as a loop over the tokens, each one
# through the FFN on its own: writing it that way is what shows that no token
# needs another. Return float64; the checks compare with the reference to a
# relative $10^{-7}$. They compare values only, so they cannot tell your loop
# from the batched `X @ W1` on the whole array (section 6 times the two): the
# loop is for you, not for the grade.

# %% nbgrader={"grade": false, "grade_id": "ffn_per_token", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_per_token(X, W1, b1, W2, b2):
    """ReLU FFN applied to each token separately, in a Python loop.

    X: (..., d_model) -> (..., d_model); every leading index is one token.
    W1: (d_model, d_ff), b1: (d_ff,), W2: (d_ff, d_model), b2: (d_model,).
    """
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    out = np.empty(X.shape[:-1] + (np.shape(W2)[1],))
    for index in np.ndindex(X.shape[:-1]):
        h = np.maximum(X[index] @ W1 + b1, 0.0)
        out[index] = h @ W2 + b2
    return out
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for ffn_per_token</summary>
#
# Make an output array first, then fill it one token at a time: for each index
# into the leading axes, run the FFN on that one vector and store the result at
# the same index.
#
# <details><summary>Hint 2 of 3 for ffn_per_token</summary>
#
# `np.ndindex(X.shape[:-1])` yields every index into the leading axes (for a
# single token, the empty index `()` once), and `X[index]` is then one token of
# shape $(d_\text{model},)$. The output's shape is the leading axes,
# `X.shape[:-1]`, plus one more axis as long as the output width, the number of
# columns of `W2`; `np.empty` makes an array of a given shape to fill.
#
# <details><summary>Hint 3 of 3 for ffn_per_token</summary>
#
# Inside the loop, two lines: the hidden vector, the maximum of 0 and that one
# token times `W1` plus `b1`; then the output row, the hidden vector times `W2`
# plus `b2`, assigned into the output at `index`. Return the filled array.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The two tokens of W-4, in both orders, then the single token of
# W-2 from notebook 02, whose output has a negative entry. (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_per_token", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
checks.check_cases(ffn_per_token, [((W4.extra["tokens"], *W4.params), W4.extra["tokens_out"]),
                                   ((W4.extra["tokens"][::-1], *W4.params), W4.extra["tokens_out"][::-1]),
                                   ((examples.W_2.x, *examples.W_2.params), examples.W_2.y)],
                   mistakes=mistakes.for_exercise("ffn_per_token"),
                   about=["W-4's two tokens", "W-4's two tokens, in the other order",
                          "W-2's single token, X of shape (3,)"])
checks.ok("ffn_per_token reproduces W-4's two tokens, in either order, and W-2's token.")

# %% [markdown]
# The grader also checks (3 points): random weights with $d_\text{model} \ne
# d_\text{ff}$; inputs of shapes $(n, d_\text{model})$, $(b, s, d_\text{model})$,
# $(1, d_\text{model})$ and a single token $(d_\text{model},)$; pre-activations
# that are exactly zero; all against the reference `ffn_forward`.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_per_token_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("05_position_wise", "test_ffn_per_token_hidden")
d_model, d_ff = 5, 11
W1, b1 = rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff)
W2, b2 = rng.normal(size=(d_ff, d_model)), rng.normal(size=d_model)
for shape in [(7, d_model), (2, 3, d_model), (1, d_model), (d_model,)]:
    X_test = rng.normal(size=shape)
    checks.check(ffn_per_token, (X_test, W1, b1, W2, b2), ffn_forward(X_test, W1, b1, W2, b2),
                 mistakes=mistakes.for_exercise("ffn_per_token"))
# Integer tokens and weights whose pre-activations hit exactly 0 (W-3's case C).
W3 = examples.W_3
X_test = np.stack([W3.x, 2 * W3.x, -W3.x])
checks.check(ffn_per_token, (X_test, *W3.params), ffn_forward(X_test, *W3.params),
             mistakes=mistakes.for_exercise("ffn_per_token"))
checks.check(ffn_per_token, (W3.x, *W3.params), W3.y, mistakes=mistakes.for_exercise("ffn_per_token"))
checks.ok("ffn_per_token matches the reference on every batch shape.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. Functions that do mix positions
#
# Here are three functions of a whole sequence that *do* move information
# between tokens, next to two that do not. The three mixers are linear in the
# token axis, $f(X) = M X$ for an $n \times n$ matrix $M$, so their output row
# $i$ depends on token $j$ exactly when $M_{ij} \ne 0$:
#
# | function | row $i$ of the output | row $i$ depends on |
# |---|---|---|
# | FFN (applied row by row) | $\mathrm{FFN}(x_i)$ | $x_i$ only |
# | mean over tokens | $\frac{1}{n}\sum_{j} x_j$ | every token ($M_{ij} = 1/n$) |
# | prefix sum (causal) | $\sum_{j \le i} x_j$ | tokens $0, \dots, i$ ($M$ lower triangular) |
# | suffix sum | $\sum_{j \ge i} x_j$ | tokens $i, \dots, n-1$ ($M$ upper triangular) |
# | positional offset | $x_i + 0.5\, i$ (in every feature) | $x_i$ only |
#
# The positional offset depends on the *position* $i$ but on no other token:
# it does not mix.
#
# **Forecast.** In the prefix sum, which output rows change when you change
# token 0? When you change the last token?
#
# **Step.** Draw which output row depends on which token.

# %%
def ffn_rows(X):
    """W-4's FFN applied to every row: position-wise, no mixing."""
    return ffn_forward(X, *W4.params)


def mean_mixer(X):
    """Every row becomes the mean of all tokens."""
    X = np.asarray(X, dtype=float)
    return np.broadcast_to(X.mean(axis=0), X.shape).copy()


def prefix_sum(X):
    """Row i is x_0 + ... + x_i (a causal mixer: a token sees only earlier ones)."""
    return np.cumsum(np.asarray(X, dtype=float), axis=0)


def suffix_sum(X):
    """Row i is x_i + ... + x_{n-1}."""
    return np.cumsum(np.asarray(X, dtype=float)[::-1], axis=0)[::-1]


def positional_offset(X):
    """Row i is x_i + 0.5·i in every feature: depends on the position, not on other tokens."""
    X = np.asarray(X, dtype=float)
    return X + 0.5 * np.arange(len(X))[:, None]


n_demo = 6
dependence = {  # dependence[name][i, j]: does output row i depend on token j?
    "FFN (position-wise)": np.eye(n_demo, dtype=bool),
    "mean over tokens": np.ones((n_demo, n_demo), dtype=bool),
    "prefix sum": np.tril(np.ones((n_demo, n_demo), dtype=bool)),
    "suffix sum": np.triu(np.ones((n_demo, n_demo), dtype=bool)),
}


def dependence_figure(patterns):
    """One panel per function: a filled square at (i, j) when output row i depends on token j."""
    title = f"Which output rows depend on which tokens (n = {n_demo})"

    def draw_on(fig):
        from matplotlib.lines import Line2D  # drawing only: a graded run shows the figure by its `alt`
        from matplotlib.patches import Rectangle

        axes = fig.subplots(1, len(patterns))
        for ax, (name, D) in zip(axes, patterns.items(), strict=True):
            n = len(D)
            rows, cols = np.nonzero(D)
            ax.scatter(cols, rows, marker="s", s=260, color=plots.BLUE, label="row i depends on token j")
            # What the two naive detectors of this section look at: one column each.
            ax.add_patch(Rectangle((-0.45, -0.45), 0.9, n - 0.1, fill=False, edgecolor=plots.ORANGE,
                                   linewidth=2.2, linestyle="--"))
            ax.add_patch(Rectangle((n - 1.45, -0.45), 0.9, n - 0.1, fill=False, edgecolor=plots.REDDISH_PURPLE,
                                   linewidth=2.2, linestyle=":"))
            ax.set_xlim(-0.7, n - 0.3)
            ax.set_ylim(n - 0.3, -0.7)
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            ax.set_aspect("equal")
            ax.set_title(name)
            ax.set_xlabel("input token j")
        axes[0].set_ylabel("output row i")
        fig.legend(handles=[
            Line2D([], [], marker="s", linestyle="", markersize=11, color=plots.BLUE,
                   label="output row i depends on token j"),
            Line2D([], [], color=plots.ORANGE, linewidth=2.2, linestyle="--",
                   label="column 0: what changing token 0 can reveal"),
            Line2D([], [], color=plots.REDDISH_PURPLE, linewidth=2.2, linestyle=":",
                   label="last column: what changing the last token can reveal"),
        ], loc="outside lower center", ncols=3, frameon=False)
        fig.suptitle(title)

    return plots.custom_figure(draw_on, size=(11, 3.6), alt=(
        f"{len(patterns)} grids: {title}. In each, a filled square at (token j, row i) when output row i depends on "
        "token j: " + "; ".join(f"{name}: {_dependence_words(D)}" for name, D in patterns.items())
        + ". A dashed outline marks column 0, a dotted one the last column."))


def _dependence_words(D):
    """A dependence pattern in words, for the figure's text alternative."""
    n = len(D)
    for words, shape in (("each row on its own token only", np.eye(n, dtype=bool)),
                         ("row i on tokens 0 to i", np.tril(np.ones((n, n), dtype=bool))),
                         ("row i on tokens i to the last", np.triu(np.ones((n, n), dtype=bool))),
                         ("every row on every token", np.ones((n, n), dtype=bool))):
        if np.array_equal(D, shape):
            return words
    return f"{int(D.sum())} of {n * n} squares filled"


dependence_figure(dependence)

# %% [markdown]
# *Figure: for each function, a blue square at (token $j$, row $i$) means that
# output row $i$ depends on token $j$; the dashed and dotted outlines are the
# first and the last column.*
#
# **Why.** A function mixes positions exactly when some square lies off the
# diagonal. Changing token $j$ and watching the other rows reads column $j$ of
# the picture, and only column $j$. In the suffix sum, column 0 holds just the
# diagonal square: token 0 reaches no other row, although every other token
# reaches row 0. The prefix sum is the mirror image: the last token reaches
# only the last row. A detector that changes one fixed token is blind to one of them.
#
# **Verify.** Here are four tempting detectors, each returning True for "mixes"
# (their code is in `ffn_helpers/mistakes/position_wise.py`, because each is a
# mistake the grader recognises), tried on the five functions:
#
# - *token 0 only*: change token 0, see whether another row moves;
# - *last token only*: the same with the last token;
# - *permutation*: reverse the tokens and see whether the outputs come back reversed;
# - *all at once*: change every token and see whether any row moves.

# %%
naive = {
    "token 0 only": "perturbs_first_token_only",
    "last token only": "perturbs_last_token_only",
    "permutation": "permutation_test",
    "all at once": "perturbs_all_at_once",
}
detectors = {label: next(m.compute for m in mistakes.for_exercise("mixes_positions") if m.key == key)
             for label, key in naive.items()}
functions = {"FFN (position-wise)": (ffn_rows, False), "mean over tokens": (mean_mixer, True),
             "prefix sum": (prefix_sum, True), "suffix sum": (suffix_sum, True),
             "positional offset": (positional_offset, False)}
X_demo = np.random.default_rng(5).normal(size=(n_demo, 2))

print(f"{'function':<22}{'mixes?':<9}" + "".join(f"{label:<18}" for label in detectors))
verdicts = {}
for name, (f, truth) in functions.items():
    cells = []
    for label, detect in detectors.items():
        verdicts[name, label] = bool(detect(f, X_demo))
        mark = "right" if verdicts[name, label] == truth else "WRONG"
        cells.append(f"{verdicts[name, label]!s:<6}({mark})     ")
    print(f"{name:<22}{truth!s:<9}" + "".join(cells))

# %% [markdown]
# Each detector gets at least one function wrong:

# %%
assert verdicts["suffix sum", "token 0 only"] is False  # misses the suffix sum
assert verdicts["prefix sum", "last token only"] is False  # misses the prefix sum
assert verdicts["mean over tokens", "permutation"] is False  # the mean is permutation-equivariant
assert verdicts["positional offset", "permutation"] is True  # ... and position-dependence is not mixing
assert verdicts["FFN (position-wise)", "all at once"] is True  # every row moves when every token does
print("Each naive detector is fooled by at least one of the five functions.")

# %% [markdown]
# The permutation detector deserves a second look: self-attention without
# positional information is permutation-equivariant too, and it is the very
# sublayer whose job is to mix. Equivariance says the function treats positions
# alike; it says nothing about whether a row looks at other rows.
#
# ## Exercise: a detector that is not fooled
#
# Write `mixes_positions(f, X)`: return `True` when some output row of `f(X)`
# depends on a token other than its own, i.e. when changing some token $j$
# changes some output row $i \ne j$; otherwise `False`.
#
# - Change **every** token in turn, one at a time, and compare the *other* rows
#   of the output before and after.
# - Change it by a random vector (a fixed seed keeps the answer reproducible),
#   not by a round number that might happen to cancel.
# - Compare with a small tolerance (`np.allclose` with tight `rtol` and `atol`),
#   not with `==`: a mixer can change a row by much less than the step you take.
# - `f` may return a different number of features than it receives; only the
#   first axis (tokens) lines up.
#
# **Forecast.** How many calls to `f` does your detector need for $n$ tokens?
#
# **Step.**

# %% nbgrader={"grade": false, "grade_id": "mixes_positions", "locked": false, "schema_version": 3, "solution": true, "task": false}
def mixes_positions(f, X):
    """Does some output row of f depend on a token other than its own?

    X: (n, d_model), one token per row; f maps it to an array (n, d_out).
    Return True if changing some token j changes some output row i != j, else False.
    """
    ### BEGIN SOLUTION
    X = np.asarray(X, dtype=float)
    rng = np.random.default_rng(0)
    before = np.asarray(f(X), dtype=float)
    for j in range(len(X)):
        moved = X.copy()
        moved[j] += rng.normal(size=X.shape[1:])
        after = np.asarray(f(moved), dtype=float)
        others = np.arange(len(X)) != j
        if not np.allclose(after[others], before[others], rtol=1e-9, atol=1e-12):
            return True
    return False
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for mixes_positions</summary>
#
# Change one token, and look at every *other* output row: if one of them
# changed, `f` mixes positions. Do that for each token in turn; if none ever
# moves another row, it does not.
#
# <details><summary>Hint 2 of 3 for mixes_positions</summary>
#
# Compute `f(X)` once as the baseline. For each token `j`, copy `X`, add a
# random vector (from a seeded generator) to row `j` of the copy, and compute
# `f` again. Compare the rows other than `j` with a boolean mask such as
# `np.arange(n) != j`; compare with `np.allclose` and tolerances far below your
# step (a relative $10^{-9}$ and an absolute $10^{-12}$ will do), never with
# `==`.
#
# <details><summary>Hint 3 of 3 for mixes_positions</summary>
#
# Return `True` the moment some other row is not close to its baseline, and
# `False` after the loop. Turn what `f` returns into a float array before
# comparing, and remember that the output's rows may have another width than the
# input's: only the first axis lines up.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** The five functions of the table above. (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_mixes_positions", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
X_check = np.random.default_rng(5).normal(size=(6, 2))
check_verdicts(mixes_positions, [
    ((ffn_rows, X_check), False, "W-4's FFN applied row by row (position-wise: no mixing)"),
    ((mean_mixer, X_check), True, "the mean over tokens (every row depends on every token)"),
    ((prefix_sum, X_check), True, "the prefix sum, row i = x_0 + ... + x_i"),
    ((suffix_sum, X_check), True, "the suffix sum, row i = x_i + ... + x_{n-1}"),
    ((positional_offset, X_check), False,
     "the positional offset x_i + 0.5·i (depends on the position, not on other tokens)"),
], mistakes.for_exercise("mixes_positions"))
checks.ok("mixes_positions tells all five functions apart.")

# %% [markdown]
# The grader also checks (3 points) functions your detector has not seen:
# position-wise ones (the identity, an elementwise `tanh`, a random FFN, a linear
# map of the features to a different width) and mixers that hide from the naive
# detectors (a shift of the tokens by one place, a sum pooled into the last row
# only, a mean over the interior tokens that leaves the first and the last
# alone, each token plus the feature-wise maximum over tokens, each token plus the
# last token, which mixes through the last position only); and a sequence of a
# single token, which has nothing to mix with.

# %% nbgrader={"grade": true, "grade_id": "test_mixes_positions_hidden", "locked": true, "points": 3, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("05_position_wise", "test_mixes_positions_hidden")
X_test = rng.normal(size=(8, 5))
A = rng.normal(size=(5, 3))
W1, b1 = rng.normal(size=(5, 16)), rng.normal(size=16)
W2, b2 = rng.normal(size=(16, 5)), rng.normal(size=5)


def pooled_into_last(X):
    Y = np.array(X, dtype=float)
    Y[-1] = Y.sum(axis=0)
    return Y


def interior_mean(X):
    Y = np.array(X, dtype=float)
    Y[1:-1] = Y[1:-1].mean(axis=0)
    return Y


cases = [
    (lambda X: np.array(X, dtype=float), X_test, False, "the identity"),
    (np.tanh, X_test, False, "tanh applied elementwise"),
    (lambda X: ffn_forward(X, W1, b1, W2, b2), X_test, False, "a random 5 → 16 → 5 FFN"),
    (lambda X: X @ A, X_test, False, "a linear map of the features to 3 outputs, X @ A"),
    (lambda X: np.roll(X, 1, axis=0), X_test, True, "a shift of the tokens by one place (np.roll)"),
    (pooled_into_last, X_test, True, "a sum pooled into the last row only, the other rows unchanged"),
    (interior_mean, X_test, True, "a mean over tokens 1..n-2; the first and last tokens pass through"),
    (lambda X: X + X.max(axis=0), X_test, True, "each token plus the feature-wise maximum over tokens"),
    (lambda X: np.cumsum(X, axis=0) @ A, X_test, True, "a prefix sum followed by a change of width"),
    (lambda X: X + X[-1], X_test, True, "each token plus the last token: only the last token reaches other rows"),
    (mean_mixer, X_test[:1], False, "a single token (nothing to mix with), through the mean mixer"),
]
check_verdicts(mixes_positions, [((f, X_case), truth, case) for f, X_case, truth, case in cases],
               mistakes.for_exercise("mixes_positions"))
checks.ok("mixes_positions is right on every hidden case.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Speed: one large matrix product, or many small ones
#
# Because the FFN treats every token alike, the whole sequence can go through
# as one matrix product: `X @ W1` multiplies an $(n, d_\text{model})$ matrix by a
# $(d_\text{model}, d_\text{ff})$ one. The loop of section 4 computes exactly the
# same numbers as $n$ separate vector-times-matrix products.
#
# We time both on $n = 256$ tokens at two realistic sizes: $d_\text{model} =
# 256$, $d_\text{ff} = 1024$ (the LibTorch-style example of notebook 06) and
# $d_\text{model} = 512$, $d_\text{ff} = 2048$ (the original Transformer). The loop
# gets its best chance: bare numpy in its body, no checks. The figure of merit
# is the **ratio** of the two times, loop over product. Absolute times depend
# on the machine, and so does the ratio, and even which way it goes: it
# depends on the processor's caches and cores, on the BLAS library numpy calls,
# and on what else the machine is doing while it measures.
#
# **Forecast.** Which is faster at each size, and by how much: about 1×, 10×,
# 100×? Is the answer the same for both sizes?
#
# **Step.**

# %%
def loop_ffn(X, W1, b1, W2, b2):
    """The FFN one token at a time, as lean as a Python loop can be."""
    out = np.empty((len(X), W2.shape[1]))
    for i in range(len(X)):
        out[i] = np.maximum(X[i] @ W1 + b1, 0.0) @ W2 + b2
    return out


n_tokens = 256
n_looped = 32  # the loop's cost per token does not depend on n, so it is timed on the first 32 tokens
timing = {}
for d_model, d_ff in [(256, 1024), (512, 2048)]:
    rng = np.random.default_rng(0)
    X_big = rng.normal(size=(n_tokens, d_model))
    params = (rng.normal(scale=d_model**-0.5, size=(d_model, d_ff)), rng.normal(scale=0.1, size=d_ff),
              rng.normal(scale=d_ff**-0.5, size=(d_ff, d_model)), rng.normal(scale=0.1, size=d_model))
    # One untimed run of each (it warms the caches, and its results are checked below), then
    # the best of a few timed repeats: the run least disturbed by whatever else the machine is doing.
    outputs = loop_ffn(X_big[:n_looped], *params), ffn_forward(X_big, *params)[:n_looped]
    t_loop = min(timeit.repeat(lambda X=X_big[:n_looped], p=params: loop_ffn(X, *p), number=1, repeat=3))
    t_batched = min(timeit.repeat(lambda X=X_big, p=params: ffn_forward(X, *p), number=3, repeat=3)) / 3
    timing[d_model, d_ff] = dict(outputs=outputs, loop=t_loop, batched=t_batched)

print(f"{'d_model/d_ff':>13} {'weights':>9} {'loop, per token':>16} {'GEMM, per token':>16} {'ratio':>7}")
for (d_model, d_ff), t in timing.items():
    weight_mib = 2 * d_model * d_ff * 8 / 2**20  # W1 and W2 in float64
    per_token_loop, per_token_gemm = t["loop"] / n_looped, t["batched"] / n_tokens
    t["ratio"] = per_token_loop / per_token_gemm
    print(f"{d_model:>6}/{d_ff:<6} {weight_mib:>5.0f} MiB {1e6 * per_token_loop:>12.1f} µs "
          f"{1e6 * per_token_gemm:>12.1f} µs {t['ratio']:>6.1f}×")
for (d_model, d_ff), t in timing.items():  # what this run measured, whichever way it went
    faster, slower, times = (("one product", "the loop", t["ratio"]) if t["ratio"] >= 1
                             else ("the loop", "one product", 1 / t["ratio"]))
    print(f"here, at {d_model}/{d_ff}: {faster} was {times:.1f}× as fast as {slower}")

# %% [markdown]
# **Why.** The arithmetic is identical: $4 d_\text{model} d_\text{ff}$ FLOPs
# per token either way (notebook 06). What differs is how often the weights
# travel. A vector-times-matrix product does only 2 FLOPs per weight it
# reads, so the loop fetches all of $W_1$ and $W_2$ once *per token* and spends
# its time waiting for weights rather than computing. One matrix-matrix product
# (a GEMM) works through the weights in blocks that stay in the processor's
# fast cache while each block is applied to many tokens; it also keeps the vector
# units busy and spreads the work over all cores, and it pays Python's call
# overhead once instead of once per token.
#
# Those are the product's advantages. How much they are worth varies from
# machine to machine, and your table is the measurement; where the weights
# live is one reason. The 256/1024 layer's 4 MiB of float64 weights can
# stay in a larger cache from one token to the next, so the loop loses little
# to fetching them and mostly pays for small calls. The 512/2048 layer's
# 16 MiB compete for cache with everything else, so each token may have to
# fetch them from further away: there the loop has more to lose.
# Load pulls the other way: a GEMM that counts on every core suffers most when
# the cores are shared, so on a busy machine the product's lead shrinks, and
# the loop can even come out ahead. Real layers are larger than either. This
# is why frameworks push every token of a batch through one product: the
# independence of the tokens, which this notebook tested, is exactly what
# makes that batching legal.
#
# **Verify.** Both ways give the same numbers on the tokens both computed (up to
# rounding, since the sums are accumulated in a different order).

# %%
for t in timing.values():
    from_loop, from_gemm = t["outputs"]
    assert np.allclose(from_loop, from_gemm, rtol=1e-10, atol=1e-12)
assert 2 * 256 * 1024 * 8 == 4 * 2**20 and 2 * 512 * 2048 * 8 == 16 * 2**20  # the weight sizes quoted above
print("Loop and batched product agree at both sizes.")

# %% [markdown]
# ## Summary
#
# - The FFN maps each token with the same weights and never looks at other
#   tokens: permuting the tokens permutes the outputs, and changing one token
#   changes only its own output row.
# - Whether a function mixes positions is read from *every* token's influence on
#   the *other* rows; a fixed-token probe or a permutation test can be fooled.
# - The same independence lets all tokens share one large matrix product
#   instead of a loop over tokens. How the two compare in time is measured, not
#   fixed: section 6's ratio depends on the machine's caches, cores and BLAS,
#   and on how busy it is.
#
# Next: [06 · Parameter budget](06_parameter_budget.ipynb).
