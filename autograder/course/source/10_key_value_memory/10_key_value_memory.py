# %% [markdown]
# # 10 · The FFN as a key-value memory
#
# Read the feed-forward sublayer one hidden unit at a time. Call column $j$ of
# $W_1$ a **key** $k_j$ and row $j$ of $W_2$ a **value** $v_j$. Then
#
# $$\begin{array}{l} \mathrm{FFN}(x) = \sigma(x W_1 + b_1)\, W_2 + b_2 \\
#   \quad = \sum_{j=0}^{d_\text{ff}-1} \sigma(x \cdot k_j + b_{1,j})\; v_j \;+\; b_2 . \end{array}$$
#
# Unit $j$ compares the input with its key, and if the match is strong enough
# to fire, it adds its value to the output, weighted by how strongly it fired.
# Geva et al. (2021, "Transformer Feed-Forward Layers Are Key-Value Memories")
# found trained FFNs working this way. The keys respond to patterns in the
# text: shallow ones (such as a particular last word) in the lower layers,
# semantic ones (such as a topic) in the upper layers. Each value pushes the
# prediction towards some words, and in the upper layers those are, more and
# more often, the words that tend to follow its key's pattern.
#
# This notebook writes such a memory by hand (worked example W-9), asks you to
# build, read and query one, and then measures how many pairs a memory of width
# $d_\text{model}$ holds before its entries blur into each other. Here
# $\sigma$ is ReLU throughout.
#
# | symbol | shape | meaning |
# |---|---|---|
# | $k_j = W_1[:, j]$ | $(d_\text{model},)$ | key $j$; stored keys have length 1 |
# | $v_j = W_2[j, :]$ | $(d_\text{model},)$ | value $j$ |
# | $K$, $V$ | $(n, d_\text{model})$ | $n$ keys and $n$ values, one pair per row |
# | $\theta$ | number in $[0, 1)$ | the threshold a match must pass to fire: $b_{1,j} = -\theta$ |
# | $h_j$ | number | how strongly memory $j$ fires for input $x$ (its coefficient), $\mathrm{ReLU}(x \cdot k_j + b_{1,j})$ |
#
# **Exercises** (10 points): `kv_ffn` (3), `recall` (4), `top_memories` (3).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import warnings

import numpy as np

from ffn_helpers import checks, examples, ffn_forward, memory, mistakes, plots

W9 = examples.W_9  # worked example W-9: three orthonormal keys, threshold 0.5


def check_memory_ffn(fn, args, expected):
    """Test cells' helper: fn(*args) must return (W1, b1, W2, b2); each is compared on its own, named with the
    threshold it was built for."""
    result = checks.call(fn, *args)
    try:
        W1, b1, W2, b2 = result
    except (TypeError, ValueError):
        raise checks.wrong_result(fn.__name__, "four arrays (W1, b1, W2, b2)", result) from None
    threshold = args[2] if len(args) > 2 else 0.5
    for name, got, want in zip(("W1", "b1", "W2", "b2"), (W1, b1, W2, b2), expected, strict=True):
        catalogue = mistakes.for_exercise("kv_ffn", name) if name != "b2" else ()  # b2 = 0: no catalogued mistake
        checks.assert_close(got, want, name=f"{name} (threshold θ = {threshold:g})", mistakes=catalogue, args=args)
    return W1, b1, W2, b2


def check_recall(fn, cases):
    """Test cells' helper: fn(*args) must be close to `expected` for each (args, expected) of `cases`, and raise no
    warning (stderr scores 0); on the first wrong share, a catalogued mistake is named where it gives fn's share
    on every case (checks.check_cases)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checks.check_cases(fn, cases, mistakes=mistakes.for_exercise("recall"))
    raised = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    if raised:
        raise checks.failure(
            f"{fn.__name__}(...) raised warnings, which a graded cell prints to stderr (it then scores 0): "
            f"{'; '.join(raised)}.\nSkip outputs of length 0 (no memory fired) before dividing by their "
            "length: their cosines are 0/0.", public=True)  # the warnings' own words: no test data


# %% [markdown]
# ## 1. The same FFN, read unit by unit
#
# **Forecast.** Take any FFN. Is $\sum_j h_j\, W_2[j, :] + b_2$, a sum of $d_\text{ff}$
# rows of $W_2$ weighted by the hidden values, the same as $h W_2 + b_2$?
#
# **Step.** A random FFN with $d_\text{model} = 4$, $d_\text{ff} = 6$, computed
# both ways.

# %%
rng = np.random.default_rng(10)
W1, b1 = rng.normal(size=(4, 6)), rng.normal(size=6)
W2, b2 = rng.normal(size=(6, 4)), rng.normal(size=4)
x = rng.normal(size=4)

h = memory.coefficients(x, W1, b1)  # h_j = ReLU(x · k_j + b1_j), one per memory
keys, values = memory.keys(W1), memory.values(W2)  # (6, 4) each: key j and value j are row j
y_by_memories = b2.copy()
for j in range(len(h)):
    y_by_memories = y_by_memories + h[j] * values[j]
print("h =", h.round(4))
print("sum over memories:", y_by_memories.round(6))
print("ffn_forward:      ", ffn_forward(x, W1, b1, W2, b2).round(6))

# %% [markdown]
# **Why.** A vector times a matrix is a weighted sum of the matrix's rows:
# $h W_2 = \sum_j h_j W_2[j, :]$. Units with $h_j = 0$ add nothing; the units
# that fire each add their own value. Nothing new is computed, only read
# differently.
#
# **Verify.** The two agree to rounding (the sums run in a different order).

# %%
assert np.allclose(y_by_memories, ffn_forward(x, W1, b1, W2, b2), rtol=1e-12, atol=1e-12)
assert np.array_equal(keys[2], W1[:, 2]) and np.array_equal(values[2], W2[2])
print(f"{int((h > 0).sum())} of {len(h)} memories fired, and their values add up to the FFN's output.")

# %% [markdown]
# ## 2. A memory written by hand (worked example W-9)
#
# To store $n$ pairs $(k_i, v_i)$, give the FFN one hidden unit per pair
# ($d_\text{ff} = n$) and set
#
# $$W_1 = K^\top,\qquad b_1 = -\theta,$$
#
# $$W_2 = \frac{V}{1 - \theta},\qquad b_2 = 0 .$$
#
# W-9 has $d_\text{model} = 3$, the three orthonormal keys $K = I$, the values
# $V = \begin{bmatrix} 1 & 2 & 0 \\ 0 & -1 & 3 \\ 2 & 0 & 1 \end{bmatrix}$ and
# $\theta = 0.5$, so $W_1 = I$, $b_1 = [-0.5, -0.5, -0.5]$ and $W_2 = 2V$.
#
# **Forecast.** Feed key 1, $x = [0, 1, 0]$. Which units fire, how strongly,
# and what comes out?
#
# **Step.** The course's `memory.kv_ffn` builds the FFN; each key goes through it.

# %%
K9, V9, theta9 = W9.extra["keys"], W9.extra["values"], W9.extra["threshold"]
params9 = memory.kv_ffn(K9, V9, theta9)
for name, p in zip(("W1", "b1", "W2", "b2"), params9, strict=True):
    print(f"{name} =\n{p}")
print("h for the three keys (one row each):\n", memory.coefficients(K9, *params9[:2]))
print("outputs for the three keys:\n", ffn_forward(K9, *params9))

# %% [markdown]
# **Why.** With unit, mutually orthogonal keys, $x = k_i$ gives $x \cdot k_i = 1$
# and $x \cdot k_j = 0$ for $j \ne i$. After the bias: $z_i = 1 - \theta = 0.5$
# and $z_j = -0.5$, so only unit $i$ fires, with $h_i = 1 - \theta$. Dividing
# the values by $1 - \theta$ when storing them makes the output exactly $v_i$.
#
# **Verify.** Key $i$ gives $h = 0.5\, e_i$ and recalls $V[i]$ exactly.

# %%
assert all(np.array_equal(p, q) for p, q in zip(params9, W9.params, strict=True))
assert np.array_equal(memory.coefficients(K9, *params9[:2]), W9.extra["key_h"])
assert np.array_equal(ffn_forward(K9, *params9), W9.extra["key_y"])
print("Each of W-9's keys gives back its own value, exactly.")

# %% [markdown]
# ### Exercise: `kv_ffn(keys, values, threshold=0.5)`
#
# Return `(W1, b1, W2, b2)`, the FFN that stores the $n$ pairs given as rows of
# `keys` and `values` (both of shape $(n, d_\text{model})$), by the recipe above:
#
# - **scale each key to unit length first** ($k_i / \lVert k_i \rVert$; keys are
#   never zero), then put the unit keys in as the columns of `W1`, shape
#   $(d_\text{model}, n)$: a key given as $[2, 0, 0]$ is stored as $[1, 0, 0]$;
# - `b1` $= -\theta$ in every entry, shape $(n,)$;
# - `W2` $=$ values $/ (1 - \theta)$, shape $(n, d_\text{model})$, for any
#   $\theta$ in $[0, 1)$;
# - `b2` $= 0$, shape $(d_\text{model},)$.
#
# Return float64 arrays, numpy's default (a float32 result passes only where
# it is exact): the checks compare each of the four with the reference to a
# relative $10^{-7}$.
#
# **Forecast.** With $\theta = 0$, is $W_2 = V$?
#
# **Step.**

# %% nbgrader={"grade": false, "grade_id": "kv_ffn", "locked": false, "schema_version": 3, "solution": true, "task": false}
def kv_ffn(keys, values, threshold=0.5):
    """An FFN storing the pairs: keys, values: (n, d_model) -> W1 (d_model, n), b1 (n,), W2 (n, d_model), b2 (d_model,)."""
    ### BEGIN SOLUTION
    K = np.asarray(keys, dtype=float)
    V = np.asarray(values, dtype=float)
    unit_keys = K / np.linalg.norm(K, axis=1, keepdims=True)
    n, d_model = K.shape
    return unit_keys.T, np.full(n, -float(threshold)), V / (1.0 - threshold), np.zeros(d_model)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for kv_ffn</summary>
#
# Follow the recipe's four lines: unit keys as columns of $W_1$, $-\theta$ in
# every entry of $b_1$, the values divided by $1 - \theta$ as $W_2$, and zeros
# for $b_2$.
#
# <details><summary>Hint 2 of 3 for kv_ffn</summary>
#
# Normalise each key (each row of `keys`) by its own length: `np.linalg.norm`
# along axis 1, with `keepdims=True`, gives the lengths as a column that divides
# row by row. The keys are rows, and the FFN multiplies `x @ W1`, so $W_1$ is
# the transpose of the unit-key matrix, of shape $(d_\text{model}, n)$.
#
# <details><summary>Hint 3 of 3 for kv_ffn</summary>
#
# $b_1$ is $-\theta$ repeated $n$ times (`np.full` makes it) and $b_2$ is
# $d_\text{model}$ zeros, where $n$ and $d_\text{model}$ are the two sizes of
# the keys' array. $W_2$ is `values` (as floats) divided by `1 - threshold`, not
# by `threshold`. Return the four as a tuple.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-9, W-9 with its keys given at length 2, and W-9 at $\theta = 0.2$
# ($b_1 = -0.2$, $W_2 = V / 0.8$). (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_kv_ffn", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_memory_ffn(kv_ffn, (W9.extra["keys"], W9.extra["values"], 0.5), W9.params)
check_memory_ffn(kv_ffn, (2 * W9.extra["keys"], W9.extra["values"], 0.5), W9.params)
check_memory_ffn(kv_ffn, (W9.extra["keys"], W9.extra["values"], 0.2),
                 memory.kv_ffn(W9.extra["keys"], W9.extra["values"], 0.2))
checks.ok("kv_ffn stores W-9: W1 = I, b1 = -θ, W2 = V / (1 - θ), b2 = 0, at θ = 0.5 and 0.2.")

# %% [markdown]
# The grader also checks (2 points): random keys of any length, with $n \ne
# d_\text{model}$ (more pairs than dimensions and fewer), square but
# non-symmetric key matrices, thresholds from $0$ to $0.9$, and that the FFN
# you build gives back every value exactly when its keys are orthonormal.

# %% nbgrader={"grade": true, "grade_id": "test_kv_ffn_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("10_key_value_memory", "test_kv_ffn_hidden")
for n, d_model, threshold in [(4, 4, 0.3), (5, 3, 0.2), (2, 6, 0.9), (4, 4, 0.0), (7, 4, 0.5), (1, 2, 0.3)]:
    K_test = rng.normal(size=(n, d_model)) * rng.uniform(0.3, 3.0, size=(n, 1))
    V_test = rng.normal(size=(n, d_model))
    check_memory_ffn(kv_ffn, (K_test, V_test, threshold), memory.kv_ffn(K_test, V_test, threshold))
# Orthonormal keys (rows of a random rotation): every key recalls its value exactly.
Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
V_test = rng.normal(size=(5, 5))
params = check_memory_ffn(kv_ffn, (Q, V_test, 0.2), memory.kv_ffn(Q, V_test, 0.2))
checks.assert_close(ffn_forward(Q, *(np.asarray(p, dtype=float) for p in params)), V_test,
                    name="the stored FFN applied to its orthonormal keys", rtol=1e-9, atol=1e-12)
checks.ok("kv_ffn is right for every shape and threshold.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3. A noisy key, and what the threshold filters
#
# A query rarely equals a stored key. Take $x = [0.9, 0.3, 0]$: mostly key 0,
# with some of key 1 mixed in.
#
# **Forecast.** Through W-9's memory, what are $z$, $h$ and the output? Which
# value does the output point along?
#
# **Step.**

# %%
x_noisy = W9.x
z_noisy = x_noisy @ W9.W1 + W9.b1
print("z =", z_noisy, "  h =", memory.coefficients(x_noisy, W9.W1, W9.b1))
print("y =", ffn_forward(x_noisy, *W9.params))
plots.preactivation_bars(z_noisy, title="W-9, noisy key x = [0.9, 0.3, 0]: which memories fire",
                         xlabel="memory j (key k_j)")

# %% [markdown]
# *Figure: the pre-activations $z_j = x \cdot k_j - 0.5$ of W-9's three memories
# for the noisy key (left) and their coefficients $h_j$ after ReLU (right).*
#
# **Why.** $x \cdot k_0 = 0.9$ clears the threshold, $z_0 = 0.4$; the match with
# key 1, $0.3$, does not, $z_1 = -0.2$. So $h = [0.4, 0, 0]$ and
# $y = 0.4 \cdot 2 V[0] = [0.8, 1.6, 0]$: the right value, scaled down to
# $0.8$ of its length. Without a threshold ($\theta = 0$, $W_2 = V$) key 1's
# share leaks through: $y = 0.9 V[0] + 0.3 V[1] = [0.9, 1.5, 0.9]$ no longer
# points along $V[0]$. The threshold has a price too: at $\theta = 0.95$ the
# noisy key does not clear it, no memory fires, and the output is $0$.
#
# **Verify.**

# %%
assert np.allclose(z_noisy, W9.z, rtol=0, atol=1e-15)
assert np.allclose(memory.coefficients(x_noisy, W9.W1, W9.b1), W9.h, rtol=0, atol=1e-15)
assert np.allclose(ffn_forward(x_noisy, *W9.params), W9.y, rtol=0, atol=1e-15)
y_no_threshold = ffn_forward(x_noisy, *memory.kv_ffn(K9, V9, 0.0))
assert np.allclose(y_no_threshold, W9.extra["y_without_threshold"], rtol=0, atol=1e-15)
cos_to_v0 = {label: memory.cosine_matrix(y[None, :], V9[:1])[0, 0]
             for label, y in [("θ = 0.5", ffn_forward(x_noisy, *W9.params)), ("θ = 0", y_no_threshold)]}
assert abs(cos_to_v0["θ = 0.5"] - 1) < 1e-12 and cos_to_v0["θ = 0"] < 0.9
y_high = ffn_forward(x_noisy, *memory.kv_ffn(K9, V9, W9.extra["high_threshold"]))
assert np.array_equal(y_high, np.zeros(3))
print({label: round(float(c), 4) for label, c in cos_to_v0.items()}, "= cosine of y with V[0];",
      "at θ = 0.95, y =", y_high)

# %% [markdown]
# ### Exercise: `recall(W1, b1, W2, b2, keys, values)`
#
# Run every row of `keys` through the ReLU FFN given by `W1, b1, W2, b2` (the
# keys are used as queries, as given, without rescaling), and return the
# **share** of them, a float from 0 to 1, whose output is *closest* to their own
# value, row $i$ of `values`. The rules, all checked:
#
# - *closest* means the largest cosine $\cos(y, v) = y \cdot v / (\lVert y \rVert\,
#   \lVert v \rVert)$ among all the values, not the largest dot product or the
#   smallest distance: a scaled copy of the right value (like W-9's $0.8\, V[0]$)
#   counts as recalled;
# - when several values tie for the largest cosine, the lower index wins, as
#   `np.argmax` decides: if values 0 and 2 are the same vector, key 2 is not
#   recalled, since its output is equally close to value 0;
# - an output of all zeros (no memory fired) has no direction and recalls
#   nothing: **skip outputs of length 0** before dividing by their length. Their
#   cosines would be $0/0$, which numpy makes NaN *and* reports with a
#   `RuntimeWarning` on stderr, and a graded cell that writes to stderr scores 0:
#   the check fails on any warning, even when the share is right;
# - no value is the zero vector.
#
# The result is compared with the reference to a relative $10^{-7}$; compute in
# float64.
#
# **Forecast.** W-9's memory at $\theta = 0.95$, queried with the three noisy
# keys $[0.9, 0.3, 0]$, $[0.3, 0.9, 0]$, $[0, 0.3, 0.9]$: what is the recall?
#
# **Step.**

# %% nbgrader={"grade": false, "grade_id": "recall", "locked": false, "schema_version": 3, "solution": true, "task": false} may_call=["ffn_forward"]
def recall(W1, b1, W2, b2, keys, values):
    """Share of keys whose FFN output is closest (cosine) to their own value; keys, values: (n, d_model)."""
    ### BEGIN SOLUTION
    Y = np.maximum(np.asarray(keys, dtype=float) @ W1 + b1, 0.0) @ W2 + b2
    V = np.asarray(values, dtype=float)
    hits = 0
    for i, y in enumerate(Y):
        size = np.linalg.norm(y)
        if size == 0:
            continue  # nothing fired: no direction
        cos = (V @ y) / (np.linalg.norm(V, axis=1) * size)
        hits += int(np.argmax(cos) == i)
    return hits / len(Y)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for recall</summary>
#
# For each key: run it through the FFN, find the value whose direction is
# closest to the output (the largest cosine), and count a hit when that value is
# the key's own. The recall is the number of hits over the number of keys.
#
# <details><summary>Hint 2 of 3 for recall</summary>
#
# Compute all outputs at once, $Y = \mathrm{ReLU}(K W_1 + b_1) W_2 + b_2$, then
# go through the rows. For a row of length 0 (nothing fired), skip it before any
# division: it recalls nothing, and dividing by its length would warn. For the
# others, the cosines with every value are `V @ y` divided by the values'
# lengths and by the row's length.
#
# <details><summary>Hint 3 of 3 for recall</summary>
#
# `np.argmax` of a row's cosines gives the first of the largest, which is the
# tie rule you need: a hit when it equals the row's index. Return hits divided
# by the number of keys, a float.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-9 with its own keys, with noisy keys, at $\theta = 0.95$ (where
# only key 0 given exactly fires: a recall of 1/3), and with value 1 made ten
# times as long, which a dot product would favour. (2 points.)

# %% nbgrader={"grade": true, "grade_id": "test_recall", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
noisy_keys = np.array([[0.9, 0.3, 0.0], [0.3, 0.9, 0.0], [0.0, 0.3, 0.9]])
V9 = W9.extra["values"]
strict = memory.kv_ffn(W9.extra["keys"], V9, W9.extra["high_threshold"])
one_exact = np.array([W9.extra["keys"][0], noisy_keys[1], noisy_keys[2]])  # key 0 itself, then two noisy keys
V_long = V9 * np.array([[1.0], [10.0], [1.0]])  # value 1 ten times as long: key 2's output has a larger dot with it
check_recall(recall, [((*W9.params, W9.extra["keys"], V9), 1.0), ((*W9.params, noisy_keys, V9), 1.0),
                      ((*strict, noisy_keys, V9), 0.0), ((*strict, one_exact, V9), 1 / 3),
                      ((*memory.kv_ffn(W9.extra["keys"], V_long, 0.5), W9.extra["keys"], V_long), 1.0)])
checks.ok("recall: W-9 gives back its values, even from noisy keys or with a long value; at θ = 0.95 only an exact "
          "key fires.")

# %% [markdown]
# The grader also checks (2 points): random memories with crosstalk (more pairs
# than dimensions) at thresholds 0 and 0.3, with values of very different
# lengths; noisy queries whose outputs point the right way at the wrong length;
# two equal values (the tie rule above); and a memory where only some queries
# fire.

# %% nbgrader={"grade": true, "grade_id": "test_recall_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("10_key_value_memory", "test_recall_hidden")
cases = []
for n, d_model, threshold in [(24, 8, 0.0), (40, 6, 0.3), (12, 16, 0.0)]:
    K_test = memory.random_unit_vectors(n, d_model, rng)
    V_test = memory.random_unit_vectors(n, d_model, rng) * rng.uniform(0.2, 5.0, size=(n, 1))
    params = memory.kv_ffn(K_test, V_test, threshold)
    cases += [((*params, queries, V_test), memory.recall(*params, queries, V_test))
              for queries in (K_test, memory.noisy_queries(K_test, 0.8, rng))]
# Orthonormal keys, short and long values, queries at 0.6 of a key: each output is a third of its value.
K_test = np.eye(4)
V_test = np.array([[0.1, 0.0, 0.0, 0.1], [3.0, 1.0, 0.0, 0.0], [0.0, 0.2, 0.1, 0.0], [0.0, 0.0, 4.0, 1.0]])
cases.append(((*memory.kv_ffn(K_test, V_test, 0.4), 0.6 * K_test, V_test), 1.0))
# Equal values 0 and 2: key 2's output is as close to value 0, and the lower index wins.
V_tie = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 2.0, 0.0]])
cases.append(((*memory.kv_ffn(K_test, V_tie, 0.5), K_test, V_tie), 0.75))
# Queries 1 and 3 are too weak to fire (0.4 < θ = 0.5); the other two are recalled.
cases.append(((*memory.kv_ffn(K_test, V_test, 0.5), np.diag([1.0, 0.4, 0.8, 0.4]), V_test), 0.5))
check_recall(recall, cases)
checks.ok("recall is right on every hidden memory.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. Which memories fire
#
# In a trained model, one reads a memory by asking which units fire for an
# input and what their values say. Here is a memory of $n = 64$ random unit
# keys in $d_\text{model} = 32$, stored with $\theta = 0$, queried with key 5.
#
# **Forecast.** How many of the 64 memories fire for key 5? Which fires most?
#
# **Step.**

# %%
rng = np.random.default_rng(4)
K64, V64 = memory.random_unit_vectors(64, 32, rng), memory.random_unit_vectors(64, 32, rng)
params64 = memory.kv_ffn(K64, V64, 0.0)
h5 = memory.coefficients(K64[5], *params64[:2])
top5 = memory.top_memories(K64[5], *params64[:2], 5)
print(f"{int((h5 > 0).sum())} of 64 memories fire for key 5; the five strongest:")
for j in top5:
    print(f"  memory {j:2d}: h = {h5[j]:.3f}")

# %% [markdown]
# **Why.** Memory 5 fires with $h = 1$ (the key matches itself). But random
# unit keys in 32 dimensions are not orthogonal: $k_5 \cdot k_j$ is spread
# around 0 with standard deviation $1/\sqrt{32} \approx 0.18$, so with no
# threshold about half of the other 63 keys also pass, each adding a little of
# its own value. That spill-over is **crosstalk**.
#
# **Verify.**

# %%
assert top5[0] == 5 and h5[5] == h5.max() and abs(h5[5] - 1) < 1e-12
assert 20 <= int((h5 > 0).sum()) <= 44  # about half of 64 (the key itself included)
print("Memory 5 fires most; about half of the others fire too.")

# %% [markdown]
# ### Exercise: `top_memories(x, W1, b1, k)`
#
# Return the indices of the `k` hidden units with the largest coefficient
# $h_j = \mathrm{ReLU}(x \cdot k_j + b_{1,j})$, **largest first** (here `k` is
# a count, not a key). Ties go to the **lower index**: in particular every unit
# that does not fire has $h_j = 0$, whatever its $z_j$, so those units tie and
# come in index order.
#
# `x` has shape $(\dots, d_\text{model})$: one input, or any batch of them; the
# result has shape $(\dots, k)$, integers. $1 \le k \le d_\text{ff}$. The result
# is compared with the reference index by index (a relative $10^{-7}$ on
# integers is exact equality).
#
# **Forecast.** For W-9's noisy key, $h = [0.4, 0, 0]$: what are the top 3?
#
# **Step.** (Hint: `np.argsort(..., kind="stable")` keeps equal entries in index order.)

# %% nbgrader={"grade": false, "grade_id": "top_memories", "locked": false, "schema_version": 3, "solution": true, "task": false}
def top_memories(x, W1, b1, k):
    """Indices of the k largest h = ReLU(x W1 + b1), largest first, ties by lower index; x: (..., d_model) -> (..., k)."""
    ### BEGIN SOLUTION
    h = np.maximum(np.asarray(x, dtype=float) @ W1 + b1, 0.0)
    return np.argsort(-h, axis=-1, kind="stable")[..., :k]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for top_memories</summary>
#
# Compute the coefficients $h = \mathrm{ReLU}(x W_1 + b_1)$ for every unit, then
# sort the units by $h$, largest first, and keep the first `k`.
#
# <details><summary>Hint 2 of 3 for top_memories</summary>
#
# Sorting `-h` ascending puts the largest $h$ first.
# `np.argsort(..., axis=-1, kind="stable")` sorts along the units for every
# input of a batch and keeps equal values in index order, so ties (all the units
# at 0, too) go to the lower index.
#
# <details><summary>Hint 3 of 3 for top_memories</summary>
#
# Slice the last axis to the first `k` indices, `[..., :k]`: the result has
# shape $(\dots, k)$ and integer dtype. Sort $h$ after the ReLU, not $z$: units
# that do not fire all tie at 0.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-9's noisy key, its three keys as one batch, the noisy key
# without a threshold, and a batch of three inputs whose coefficients are not
# symmetric. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_top_memories", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
x_batch = np.array([[0.9, 0.6, 0.0], [0.2, 0.9, 0.7], [0.0, 0.0, 0.8]])  # h is not symmetric: rows are not columns
checks.check_cases(top_memories, [((W9.x, W9.W1, W9.b1, 1), np.array([0])),
                                  ((W9.x, W9.W1, W9.b1, 3), np.array([0, 1, 2])),
                                  ((W9.extra["keys"], W9.W1, W9.b1, 1), np.array([[0], [1], [2]])),
                                  ((np.array([0.3, 0.9, 0.0]), W9.W1, np.zeros(3), 3), np.array([1, 0, 2])),
                                  ((x_batch, W9.W1, W9.b1, 2), memory.top_memories(x_batch, W9.W1, W9.b1, 2))],
                   mistakes=mistakes.for_exercise("top_memories"))
checks.ok("top_memories ranks W-9's memories: [0, 1, 2] for the noisy key, each key's own first.")

# %% [markdown]
# The grader also checks (2 points): random memories with inputs of shapes
# $(d_\text{model},)$, $(n, d_\text{model})$ and $(b, s, d_\text{model})$;
# $k = 1$, $k = 3$ and $k = d_\text{ff}$; units that do not fire, with very
# different negative $z$; and two units with the same key and bias, which tie.

# %% nbgrader={"grade": true, "grade_id": "test_top_memories_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("10_key_value_memory", "test_top_memories_hidden")
d_model, d_ff = 6, 10
W1_test, b1_test = rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff) - 0.5
inputs = [rng.normal(size=shape) for shape in [(d_model,), (5, d_model), (2, 3, d_model)]]
cases = [(x_test, W1_test, b1_test, k) for x_test in inputs for k in (1, 3, d_ff)]
# Units 2 and 7 share a key and a bias: whenever they fire, they tie exactly. Most units do not fire.
W1_tie = np.array([[1.0, 0.0, 2.0, -1.0, 0.5, 0.0, -3.0, 2.0], [0.0, 1.0, 1.0, 0.0, -0.5, -2.0, 1.0, 1.0]])
b1_tie = np.array([0.0, -1.0, -0.5, -4.0, 0.0, -1.0, -6.0, -0.5])
cases += [(x_test, W1_tie, b1_tie, k) for x_test in (np.array([1.0, 1.0]), np.array([[1.0, 1.0], [-1.0, 0.0],
                                                                                     [0.5, -2.0]])) for k in (3, 8)]
checks.check_cases(top_memories, [(args, memory.top_memories(*args)) for args in cases],
                   mistakes=mistakes.for_exercise("top_memories"))
checks.ok("top_memories is right on every hidden memory.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. How many pairs fit: capacity and crosstalk
#
# Orthonormal keys give perfect recall, but $d_\text{model}$ dimensions hold at
# most $d_\text{model}$ orthogonal directions. Store more pairs than that and
# the keys must overlap. For a key $k_i$ the output is
#
# $$y = v_i \;+\; \sum_{j \ne i} \frac{\mathrm{ReLU}(k_i \cdot k_j - \theta)}{1 - \theta}\, v_j ,$$
#
# its own value plus crosstalk from every other key it matches by more than
# $\theta$. The experiment: $n$ random unit keys and $n$ random unit values in
# $d_\text{model} = 16, 32, 64$, stored by `memory.kv_ffn` at three thresholds,
# and queried with the keys; the recall (your exercise, computed by the
# reference `memory.recall`) is averaged over 3 random draws.
#
# **Forecast.** At $\theta = 0$, roughly how many pairs can a 16-dimensional
# memory store before a tenth of them come back wrong? What does doubling
# $d_\text{model}$ do? What does a higher threshold do?
#
# **Step.**

# %%
n_pairs = [8, 16, 32, 64, 128, 256, 512]
thresholds = [0.0, 0.25, 0.5]
capacity = {d_model: {f"θ = {t}": memory.capacity_curve(d_model, n_pairs, t) for t in thresholds}
            for d_model in (16, 32, 64)}
for d_model, curves in capacity.items():
    for label, r in curves.items():
        print(f"d_model = {d_model:2d}, {label:<9}", " ".join(f"{v:5.3f}" for v in r))
plots.recall_curves(n_pairs, {f"d_model = {d}": c for d, c in capacity.items()},
                    xlabel="stored pairs n (log scale)",
                    title="Recall of random unit keys: capacity grows with d_model and with the threshold θ",
                    log_x=True)

# %% [markdown]
# *Figure: the share of stored pairs recalled against the number of pairs $n$,
# one panel per $d_\text{model}$, one curve per threshold $\theta$ (mean over 3 draws).*
#
# **Why.** Two random unit vectors in $d$ dimensions have $k_i \cdot k_j$
# spread around 0 with standard deviation $1/\sqrt{d}$. At $\theta = 0$ half of
# all other keys fire, each adding its value at a weight of order $1/\sqrt{d}$.
# Random directions add up in squares, and $\mathbb{E}[\mathrm{ReLU}(k_i \cdot
# k_j)^2] = \frac{1}{2d}$, so the crosstalk has a length of about
# $\sqrt{(n-1)/(2d)}$ next to the right value's length 1: in 16 dimensions it
# matches the right value at $n \approx 33$. A pair is lost when some *other*
# value points along the sum better than the right one. So at $\theta = 0$ a
# 16-dimensional memory recalls more than 95 % of 16 pairs, fewer than 90 % of
# 32, and only about half of 64. A wider memory wins
# twice: its crosstalk is shorter, and a random wrong value lines up with it
# less, so doubling $d_\text{model}$ moves the curve right by more than a
# doubling of $n$. A threshold makes the memory **sparse**: only keys that match
# by more than $\theta$ fire, and for random keys that is rare. The probability
# is printed below, from the exact distribution of $k_i \cdot k_j$
# (`memory.fire_probability`), next to the share measured in a memory.
#
# **Verify.** The curves fall where the argument says, and the share of keys
# that fire matches the formula.

# %%
c16, c32, c64 = (capacity[d] for d in (16, 32, 64))
assert c16["θ = 0.0"][n_pairs.index(32)] < 0.9 and c16["θ = 0.0"][n_pairs.index(16)] > 0.95  # trouble by n = 32
assert 0.4 < c16["θ = 0.0"][n_pairs.index(64)] < 0.6  # about half of 64 pairs
assert c16["θ = 0.5"][n_pairs.index(256)] > 0.99  # ... while θ = 0.5 still holds 256 pairs
for small, large in [(c16, c32), (c32, c64)]:  # twice the width: better with twice the pairs, wherever it matters
    worse = small["θ = 0.0"][:-1] < 1
    assert np.all(large["θ = 0.0"][1:][worse] > small["θ = 0.0"][:-1][worse])
for curves in capacity.values():  # a higher threshold never recalls less here
    assert np.all(curves["θ = 0.5"] >= curves["θ = 0.25"]) and np.all(curves["θ = 0.25"] >= curves["θ = 0.0"])

rng = np.random.default_rng(5)
K256 = memory.random_unit_vectors(256, 16, rng)
overlaps = K256 @ K256.T
others = ~np.eye(256, dtype=bool)
crosstalk = np.sum(np.where(others, np.maximum(overlaps, 0.0), 0.0) ** 2, axis=1)  # Σ_j≠i ReLU(k_i · k_j)²
print(f"crosstalk length at θ = 0, n = 256: {np.sqrt(crosstalk.mean()):.2f} (√(255/32) = {np.sqrt(255 / 32):.2f})")
assert abs(crosstalk.mean() / (255 / 32) - 1) < 0.1
print(f"{'d_model':>7} {'θ':>5} {'P(k_i · k_j > θ), formula':>26} {'share measured (n = 256)':>25}")
for t in thresholds:
    p, measured = memory.fire_probability(16, t), float(np.mean(overlaps[others] > t))
    print(f"{16:>7} {t:>5} {p:>26.4f} {measured:>25.4f}")
    assert abs(measured - p) < 0.01
assert abs(memory.fire_probability(16, 0.0) - 0.5) < 1e-12
assert 0.020 < memory.fire_probability(16, 0.5) < 0.021  # about 2% of the other keys
print("At θ = 0.5, about 2% of the other keys fire in 16 dimensions, instead of half of them.")

# %% [markdown]
# ## 6. What the threshold costs
#
# If a higher threshold only helped, one would set it near 1. But a threshold
# also decides how close a query must come to a key to fire it at all, as
# $\theta = 0.95$ showed for W-9's noisy key. Here a memory of $n = 128$ pairs
# in $d_\text{model} = 32$ is queried with its exact keys and with noisy ones:
# unit vectors whose cosine with their key is $0.95$ or $0.75$, tilted in a
# random direction (`memory.noisy_queries`).
#
# **Forecast.** For the queries at cosine $0.75$, what happens once $\theta$
# passes $0.75$?
#
# **Step.**

# %%
sweep_thresholds = np.round(np.arange(0.0, 0.95, 0.1), 1)
sweep = {f"queries at cosine {c}" if c < 1 else "queries = keys":
         np.array([memory.mean_recall(32, 128, t, query_cosine=c) for t in sweep_thresholds])
         for c in (1.0, 0.95, 0.75)}
for label, r in sweep.items():
    print(f"{label:<23}", " ".join(f"{v:5.3f}" for v in r))
plots.recall_curves(sweep_thresholds, {"d_model = 32, n = 128": sweep}, xlabel="threshold θ",
                    title="The threshold filters crosstalk, and noisy queries with it")

# %% [markdown]
# *Figure: recall against the threshold $\theta$ for a memory of 128 random
# pairs in 32 dimensions, queried with its keys and with noisy keys at cosine
# 0.95 and 0.75 (mean over 3 draws).*
#
# **Why.** Low thresholds let crosstalk in, and noisy queries suffer most: they
# match their own key by less, so the same crosstalk weighs more. Raising
# $\theta$ clears the crosstalk until it reaches the query's own match: a
# query at cosine $0.75$ gives $z = 0.75 - \theta < 0$ for its key once
# $\theta > 0.75$, and almost never matches another key that well, so nothing
# fires and nothing is recalled. The threshold trades tolerance for noise
# against crosstalk. (The memories of a trained model have no such clean
# recipe; they are learned, overlap, and are read by many units at once.)
#
# **Verify.**

# %%
i_08 = list(sweep_thresholds).index(0.8)
assert sweep["queries = keys"][0] < 0.9 and sweep["queries at cosine 0.75"][0] < 0.5  # θ = 0: crosstalk
assert sweep["queries = keys"][i_08] == 1.0 and sweep["queries at cosine 0.95"][i_08] == 1.0
assert sweep["queries at cosine 0.75"][i_08] <= 0.01  # θ = 0.8 > 0.75: nothing fires
good = sweep_thresholds[sweep["queries at cosine 0.75"] >= 0.99]
assert good.min() <= 0.4 and good.max() == 0.7
print(f"Queries at cosine 0.75 are recalled (99% or more) for θ from {good.min()} to {good.max()}, "
      "and not at all above 0.75.")

# %% [markdown]
# ## Summary
#
# - $\mathrm{FFN}(x) = \sum_j \mathrm{ReLU}(x \cdot k_j + b_{1,j})\, v_j + b_2$:
#   each hidden unit is a memory with key $k_j$ (a column of $W_1$) and value
#   $v_j$ (a row of $W_2$).
# - Unit keys, $b_1 = -\theta$ and $W_2 = V / (1 - \theta)$ store pairs exactly
#   when the keys are orthonormal (W-9); a noisy key still points the output
#   along its own value, only shorter.
# - Random keys overlap: crosstalk from the keys a query also matches limits
#   how many pairs a memory of width $d_\text{model}$ holds, and the limit grows
#   with $d_\text{model}$.
# - A threshold makes the memory sparse and raises its capacity, at the cost of
#   ignoring queries that match their key by less than $\theta$.
#
# Next: [11 · Mixture of experts](11_mixture_of_experts.ipynb), where a router picks which FFNs a token meets;
# or back to the map of the course: [00 · Start here](00_start_here.ipynb).
