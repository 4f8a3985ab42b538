# %% [markdown]
# # 11 · Mixture of experts: many FFNs, a few per token
#
# Large recent models (Switch Transformer, Mixtral, DeepSeek and others) replace
# the one feed-forward sublayer of a block, in some or all of their blocks, by $E$
# of them, the *experts*, and a small *router* that sends each token to only $k$
# of them. (Some, DeepSeek's among them, also keep *shared* experts that every
# token uses, beside the routed ones; this notebook's layers have none.) The model then holds
# many more parameters than one token pays for. This notebook builds that layer
# from the FFN you know:
#
# $$r = x W_r,$$
#
# $$\text{(indices, gates)} = \text{top-}k(r),$$
#
# $$y = \sum_{j=1}^{k} \text{gate}_j \cdot \mathrm{FFN}_{\text{index}_j}(x).$$
#
# | symbol | shape | meaning |
# |---|---|---|
# | $x$ | $(\dots, d_\text{model})$ | one token per index of the leading axes |
# | $E$ | | the number of experts |
# | $W_r$ | $(d_\text{model}, E)$ | the router's weights (no bias) |
# | $r = x W_r$ | $(\dots, E)$ | the router's *logits*, one score per expert |
# | $k$ | | how many experts each token uses, $1 \le k \le E$ |
# | $\mathrm{FFN}_e$ | $(\dots, d_\text{model})$, in and out | expert $e$: here a ReLU FFN with its own $W_1, b_1, W_2, b_2$ |
# | gates | $(\dots, k)$ | the weights of the $k$ chosen experts, summing to 1 |
#
# The rule used here is Mixtral's: keep the $k$ largest logits, and take the
# **softmax over those $k$ logits only**. For equal logits this course puts the
# lower expert index first (section 2). Section 4 shows that the layer is still position-wise (notebook 05),
# section 5 counts Mixtral 8x7B's parameters from its configuration, and
# section 6 is the loss that keeps the router from sending everything to one
# expert.
#
# **Exercises** (10 points): `router_topk` (3), `moe_forward` (3),
# `moe_param_count` (2), `load_balancing_loss` (2).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np

from ffn_helpers import checks, examples, ffn_forward, mistakes, moe, plots, positions

W10 = examples.W_10  # worked example W-10: d_model = 2, E = 3 ReLU experts, k = 2


def check_router(fn, cases):
    """Test cells' helper: fn(*args) must return the reference's (indices, gates) for each (args, case) of `cases`.

    fn routes every case; on the first wrong one, a catalogued mistake of the part that is wrong is named where it
    gives that part of fn's result on every case (checks.check_judged).
    """
    runs = [(args, lambda got, args=args, case=case: _judge_router(got, args, case)) for args, case in cases]
    checks.check_judged(lambda *args: checks.call(fn, *args), runs,
                        lambda part: mistakes.for_exercise("router_topk", part), parts=("indices", "gates"),
                        expected=lambda: [moe.router_topk(*args) for args, _ in cases],
                        comparison=lambda part: {"rtol": 0, "atol": 0} if part == "indices" else {})


def _judge_router(got, args, case):
    """Raise unless fn's `got` is the reference's (indices, gates) for `args`: the failure under `case`, marked
    with the wrong part (`part`) where one is."""
    expected_indices, expected_gates = moe.router_topk(*args)
    if not (isinstance(got, tuple | list) and len(got) == 2):
        raise checks.in_case(case, checks.wrong_result("router_topk", "a pair (indices, gates)", got))
    indices, gates = got
    if np.asarray(indices).dtype.kind not in "iu":
        said = f"indices should be integers (expert numbers), got dtype {np.asarray(indices).dtype}"
        raise checks.in_case(case, checks.failure(f"{said}: {indices!r}", public=said))
    for part, value, want, tolerance in (("indices", indices, expected_indices, {"rtol": 0, "atol": 0}),
                                         ("gates", gates, expected_gates, {})):
        try:
            checks.assert_close(value, want, name=part, **tolerance)
        except AssertionError as failure:
            error = checks.in_case(case, failure)
            error.part = part
            raise error from None


def check_counts(fn, cases, catalogue=()):
    """Test cells' helper: fn(*args, **kwargs) must return the reference's (total, active), for each (args, kwargs)
    of `cases` (gated=... by keyword when kwargs has it); on the first wrong pair, a catalogued mistake is named
    where it gives fn's pairs on every case (checks.check_judged)."""
    def judge(got, args, kwargs):
        call = checks.call_text(fn.__name__, args, kwargs)
        if not (isinstance(got, tuple | list) and len(got) == 2):
            raise checks.wrong_result(call, "a pair (total, active)", got)
        for part, value, want in zip(("total", "active"), got, moe.moe_param_count(*args, **kwargs), strict=True):
            checks.check_equal(value, want, name=f"{call}: {part}")

    runs = [((args, kwargs), lambda got, a=args, k=kwargs: judge(got, a, k)) for args, kwargs in cases]
    # the catalogue's functions take gated by position
    positional = [(*args, kwargs.get("gated", True)) for args, kwargs in cases]
    checks.check_judged(lambda args, kwargs: checks.call(lambda: fn(*args, **kwargs), name=fn.__name__), runs,
                        lambda part: catalogue, mistake_args=positional,
                        expected=lambda: [moe.moe_param_count(*args) for args in positional],
                        comparison={"rtol": 0, "atol": 0})


# %% [markdown]
# ## 1. The router picks two experts for one token
#
# Worked example W-10 has $d_\text{model} = 2$, $E = 3$ experts, $k = 2$ and
#
# $$W_r = \begin{bmatrix} 1 & 0 & -1 \\ 0 & 1 & 1 \end{bmatrix}.$$
#
# **Forecast.** For the token $x = [2, 1]$: what are the three logits $x W_r$,
# which two experts win, and which of them gets the larger gate? Roughly how
# large is it? ($e^{1} \approx 2.718$.)
#
# **Step.** The reference `moe.router_topk` of `ffn_helpers`.

# %%
x = W10.x[0]
r = x @ W10.W_r
indices, gates = moe.router_topk(x, W10.W_r, W10.k)
print("logits r =", r)
print("chosen experts:", indices, " gates:", gates.round(6), " sum:", gates.sum())
print("softmax over all three logits:", moe.softmax(r).round(6))

# %% [markdown]
# **Why.** The logits are $[2, 1, -1]$: experts 0 and 1 win, in that order.
# Their gates are $e^{2} / (e^{2} + e^{1}) = 1 / (1 + e^{-1}) \approx 0.731$ and
# $\approx 0.269$: only the *difference* of the two kept logits matters. The
# softmax over all three logits would give expert 0 only $0.705$ and the two
# would sum to $0.965$; Mixtral renormalises over the chosen experts, which
# is the same as dividing those two probabilities by their sum. (Switch
# Transformer, with $k = 1$, keeps the full-softmax probability instead.)
#
# **Verify.**

# %%
assert np.array_equal(r, W10.logits[0])
assert indices.tolist() == W10.indices[0].tolist() == [0, 1]
assert np.allclose(gates, W10.gates[0], rtol=0, atol=5e-7)  # W-10 states 6 decimals
full = moe.softmax(r)
assert np.allclose(gates, full[indices] / full[indices].sum(), rtol=1e-12, atol=0)
assert abs(full[0] - 0.705) < 5e-4 and abs(full[indices].sum() - 0.965) < 5e-4
print("Experts (0, 1), gates [0.731059, 0.268941]: the softmax over the two kept logits.")

# %% [markdown]
# ## 2. Equal logits
#
# **Forecast.** Logits $r = [1, 3, 3, 0]$ and $k = 1$: which expert? With
# $k = 2$, in which order?
#
# **Step.**

# %%
r_tie = np.array([1.0, 3.0, 3.0, 0.0])
for k in (1, 2, 3):
    print(f"k = {k}: experts {moe.top_k(r_tie, k)}")
print('np.argsort(r, kind="stable")[::-1] starts with', np.argsort(r_tie, kind="stable")[::-1][:2])

# %% [markdown]
# **Why.** Ties are rare with trained weights but certain with small integer
# examples, and two implementations that break them differently send the same
# token to different experts. The course's rule: the lower index first.
# `np.argsort(-r, kind="stable")` does exactly that: a stable sort keeps equal
# keys in index order. Reversing a stable ascending sort puts the *higher*
# index first, and numpy's default `np.argsort` promises no order at all for
# equal keys (it can differ from one processor to another).
#
# **Verify.**

# %%
assert moe.top_k(r_tie, 1).tolist() == [1] and moe.top_k(r_tie, 3).tolist() == [1, 2, 0]
assert np.argsort(r_tie, kind="stable")[::-1][:1].tolist() == [2]
print("Equal logits: expert 1 before expert 2.")

# %% [markdown]
# ### Exercise: `router_topk`
#
# Write `router_topk(x, W_r, k)` returning the pair `(indices, gates)`:
#
# - `indices`, shape `(..., k)`, integers: the $k$ experts with the largest
#   logits $x W_r$, largest first; equal logits go to the lower index first
#   (pass `kind="stable"` to `np.argsort`: its default makes no promise for ties);
# - `gates`, shape `(..., k)`, float64: the softmax over those $k$ logits, in
#   the same order (subtract the largest logit before `np.exp`, so large logits
#   cannot overflow).
#
# `x` has shape `(..., d_model)`: one token, a batch `(n, d_model)`, or
# `(b, s, d_model)`. The checks compare the indices exactly and the gates with
# the reference to a relative $10^{-7}$ (a float32 result passes only where it
# is exact).
#
# **Forecast.** What do the gates look like when $k = 1$?

# %% nbgrader={"grade": false, "grade_id": "router_topk", "locked": false, "schema_version": 3, "solution": true, "task": false}
def router_topk(x, W_r, k):
    """The k experts with the largest logits x W_r (largest first, ties to the lower index) and their gates.

    x: (..., d_model), W_r: (d_model, E) -> indices (..., k) ints, gates (..., k) float64 summing to 1.
    """
    ### BEGIN SOLUTION
    r = np.asarray(x, dtype=float) @ np.asarray(W_r, dtype=float)
    indices = np.argsort(-r, axis=-1, kind="stable")[..., :k]
    chosen = np.take_along_axis(r, indices, axis=-1)
    e = np.exp(chosen - chosen[..., :1])  # chosen[..., 0] is the largest
    return indices, e / e.sum(axis=-1, keepdims=True)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for router_topk</summary>
#
# The router's scores are the logits $r = x W_r$. Pick the $k$ largest per token
# (ties to the lower expert), and turn just those $k$ logits into gates with a
# softmax.
#
# <details><summary>Hint 2 of 3 for router_topk</summary>
#
# Sorting `-r` with `np.argsort(..., axis=-1, kind="stable")` and keeping the
# first `k` columns gives the indices, largest first, ties in index order.
# `np.take_along_axis` then gathers the chosen logits from `r` along the last
# axis, in the same order, for any batch shape.
#
# <details><summary>Hint 3 of 3 for router_topk</summary>
#
# For the gates: subtract the largest chosen logit (the first one, `[..., :1]`
# keeps the axis) before `np.exp`, then divide by the sum over the last axis
# with `keepdims=True`. Return the pair `(indices, gates)`.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-10's two tokens, one at a time and as a batch. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_router_topk", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_router(router_topk, [((token, W10.W_r, W10.k), f"W-10, token {token.tolist()}") for token in W10.x]
             + [((W10.x, W10.W_r, W10.k), "W-10, both tokens as one (2, 2) batch")])
checks.ok("router_topk picks W-10's experts, largest first, with gates [0.731059, 0.268941].")

# %% [markdown]
# The grader also checks (2 points): random routers with $E = 8$ and
# $k = 1, 2, 8$ on inputs of shapes $(d_\text{model},)$, $(n, d_\text{model})$
# and $(b, s, d_\text{model})$; logits with ties, at the boundary of the top $k$
# too; logits near 800, where an unshifted `np.exp` overflows.
#
# **Why** (the forecast's answer). With $k = 1$ the softmax runs over a single
# logit, so every gate is exactly $1$: the chosen expert's output passes
# unscaled. That is why Switch Transformer, which routes to one expert, scales
# it by the full-softmax probability instead (section 1).

# %% nbgrader={"grade": true, "grade_id": "test_router_topk_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("11_mixture_of_experts", "test_router_topk_hidden")
d_model, E = 5, 8
W_r = rng.normal(size=(d_model, E))
cases = []
for shape in [(d_model,), (7, d_model), (2, 3, d_model)]:
    x_test = rng.normal(size=shape)
    cases += [((x_test, W_r, k), f"random router, x of shape {shape}, k = {k}") for k in (1, 2, E)]
# Integer logits with ties: x = e_i reads row i of W_r.
W_tie = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
x_tie = np.eye(3)
cases += [((x_tie, W_tie, k), f"tied logits {W_tie.tolist()} (one token per row), k = {k}") for k in (1, 2, 3, 4)]
cases.append(((np.array([1.0]), np.array([[800.0, 799.0, 0.0]]), 2), "logits [800, 799, 0], k = 2"))
check_router(router_topk, cases)
checks.ok("router_topk is right on every shape, k, tie and large logit.")
### END HIDDEN TESTS

# %% [markdown]
# ## 3. The MoE forward pass
#
# W-10's experts are ReLU FFNs with zero biases ($I$ is the $2 \times 2$ identity):
#
# | expert | $W_1$ | $W_2$ | what it computes |
# |---|---|---|---|
# | $\mathrm{FFN}_0$ | $I$ | $I$ | $\mathrm{ReLU}(x)$ |
# | $\mathrm{FFN}_1$ | $-I$ | $I$ | $\mathrm{ReLU}(-x)$ |
# | $\mathrm{FFN}_2$ | $I$ | $2I$ | $2\,\mathrm{ReLU}(x)$ |
#
# In this notebook an expert is passed as the tuple `(W1, b1, W2, b2)` of a
# ReLU FFN, and `experts` is the sequence of the $E$ tuples, expert $e$ at
# position $e$.
#
# **Forecast.** Token $[2, 1]$ goes to experts 0 and 1 (section 1). What is
# $y$? Token $[-1, 2]$ has logits $[-1, 2, 3]$: which experts, and what is $y$?
#
# **Step.** Each chosen expert's output, then the gated sum, with the reference
# `moe.moe_forward`.

# %%
for token in W10.x:
    idx, g = moe.router_topk(token, W10.W_r, W10.k)
    parts = [ffn_forward(token, *W10.experts[e]) for e in idx]
    print(f"x = {token}: experts {idx}, gates {g.round(6)}, outputs {[p.tolist() for p in parts]}")
Y = moe.moe_forward(W10.x, W10.W_r, W10.experts, W10.k)
print("y =\n", Y.round(6))

# %% [markdown]
# **Why.** For $[2, 1]$: $\mathrm{FFN}_0 = [2, 1]$ and $\mathrm{FFN}_1 =
# \mathrm{ReLU}([-2, -1]) = [0, 0]$, so $y = 0.731 \cdot [2, 1] = [1.462,
# 0.731]$. For $[-1, 2]$ the router picks expert 2 first ($[0, 4]$), then
# expert 1 ($[1, 0]$): $y = 0.731 \cdot [0, 4] + 0.269 \cdot [1, 0] =
# [0.269, 2.924]$. Expert 0 is never run for that token: that is the whole
# saving. Only $k$ of the $E$ FFNs do any work per token.
#
# **Verify.**

# %%
assert np.allclose(Y, W10.y, rtol=0, atol=5e-7)  # W-10 states 6 decimals
assert W10.indices[1].tolist() == [2, 1]
print("y = [1.462117, 0.731059] and [0.268941, 2.924234], as W-10 states.")

# %% [markdown]
# ### Exercise: `moe_forward`
#
# Write `moe_forward(x, W_r, experts, k)`: route every token with
# `router_topk` (yours; the checks run it with the course's, so a slip there is
# not charged twice), then return $\sum_j \text{gate}_j \cdot
# \mathrm{FFN}_{\text{index}_j}(x)$ for each token.
#
# - `x`: `(..., d_model)`, one token or any batch; the result has the shape of `x`.
# - `experts`: a sequence of $E$ tuples `(W1, b1, W2, b2)`, expert `e` at
#   position `e`; each is a ReLU FFN, $\mathrm{ReLU}(x W_1 + b_1) W_2 + b_2$,
#   and its $d_\text{ff}$ may differ from the others'. `ffn_forward` from
#   `ffn_helpers` (imported above) computes one.
# - Return float64: the checks compare every entry with the reference to a
#   relative $10^{-7}$.
#
# You may run every expert on every token and keep the chosen ones (simple), or
# run each expert on its own tokens only (what real implementations do).

# %% nbgrader={"grade": false, "grade_id": "moe_forward", "locked": false, "schema_version": 3, "solution": true, "task": false} may_call=["ffn_forward"]
def moe_forward(x, W_r, experts, k):
    """Mixture of experts: each token through its k chosen ReLU FFNs, weighted by the gates.

    x: (..., d_model), W_r: (d_model, E), experts: E tuples (W1, b1, W2, b2) -> (..., d_model).
    """
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    indices, gates = router_topk(x, W_r, k)
    tokens = x.reshape(-1, x.shape[-1])
    indices, gates = np.reshape(indices, (len(tokens), k)), np.reshape(gates, (len(tokens), k))
    y = np.zeros(tokens.shape)
    for e, expert in enumerate(experts):
        rows, slots = np.nonzero(indices == e)  # the tokens that chose expert e, and where in their top k
        if rows.size:
            y[rows] += gates[rows, slots, None] * ffn_forward(tokens[rows], *expert)
    return y.reshape(x.shape)
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for moe_forward</summary>
#
# For each token, the output is the gate-weighted sum of the outputs of the
# experts its router chose. Route all tokens first with `router_topk`, then add
# each chosen expert's contribution.
#
# <details><summary>Hint 2 of 3 for moe_forward</summary>
#
# Flatten the tokens to rows (`x.reshape(-1, d_model)`) and the routing to
# `(number of tokens, k)`, start an output of zeros, and loop over the experts.
# For expert `e`, `np.nonzero` of the comparison of the indices with `e` gives
# two arrays: the rows that chose it, and the slot (0 to k - 1) where, so you
# know which gate to use.
#
# <details><summary>Hint 3 of 3 for moe_forward</summary>
#
# For those rows, add the gate of that slot (as a column, so that it scales a
# whole output row) times the expert's output into the output rows; the expert's
# output is `ffn_forward` of those tokens with the expert's four arrays, the
# course function this exercise may call. Reshape the result back to `x`'s
# shape. (Running every expert on every token and masking also works, but does
# $E/k$ times the work.)
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** W-10's two tokens, one at a time and as a batch. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_moe_forward", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
with checks.substitute(router_topk=moe.router_topk):
    for token, y_stated in zip(W10.x, W10.y, strict=True):
        got = checks.check(moe_forward, (token, W10.W_r, W10.experts, W10.k),
                           moe.moe_forward(token, W10.W_r, W10.experts, W10.k),
                           mistakes=mistakes.for_exercise("moe_forward"))
        checks.assert_close(got, y_stated, name=f"moe_forward({token.tolist()}, ...)", rtol=0, atol=5e-7)
    checks.check(moe_forward, (W10.x, W10.W_r, W10.experts, W10.k), moe.moe_forward(W10.x, W10.W_r, W10.experts,
                 W10.k), mistakes=mistakes.for_exercise("moe_forward"))
checks.ok("moe_forward reproduces W-10: [1.462117, 0.731059] and [0.268941, 2.924234].")

# %% [markdown]
# The grader also checks (2 points): random experts with nonzero biases and
# different widths $d_\text{ff}$, $E = 6$ and $k = 1, 2, 6$, on inputs of
# shapes $(d_\text{model},)$, $(n, d_\text{model})$ and $(b, s,
# d_\text{model})$; a batch in which some expert receives no token at all.

# %% nbgrader={"grade": true, "grade_id": "test_moe_forward_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("11_mixture_of_experts", "test_moe_forward_hidden")
d_model, E = 4, 6
W_r = rng.normal(size=(d_model, E))
experts_test = tuple((rng.normal(size=(d_model, d_ff)), rng.normal(size=d_ff), rng.normal(size=(d_ff, d_model)),
                      rng.normal(size=d_model)) for d_ff in (3, 5, 8, 2, 7, 4))
with checks.substitute(router_topk=moe.router_topk):
    for shape in [(d_model,), (9, d_model), (2, 3, d_model)]:
        x_test = rng.normal(size=shape)
        for k in (1, 2, E):
            checks.check(moe_forward, (x_test, W_r, experts_test, k), moe.moe_forward(x_test, W_r, experts_test, k),
                         mistakes=mistakes.for_exercise("moe_forward"))
    # Every token prefers experts 0 and 1: the other four receive nothing.
    W_skewed = np.zeros((d_model, E))
    W_skewed[:, 0], W_skewed[:, 1] = 5.0, 4.0
    x_test = np.abs(rng.normal(size=(5, d_model))) + 0.1
    checks.check(moe_forward, (x_test, W_skewed, experts_test, 2), moe.moe_forward(x_test, W_skewed, experts_test, 2),
                 mistakes=mistakes.for_exercise("moe_forward"))
checks.ok("moe_forward matches the reference on every shape and k.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. Still position-wise
#
# Each token is routed by its own logits $x W_r$ and goes through its own
# experts: nothing in the formula looks at another token. So the MoE layer
# should be as position-wise as the plain FFN of
# [05 · Position-wise](05_position_wise.ipynb).
#
# **Forecast.** Run notebook 05's test (change every token in turn, watch the
# other rows) on the MoE layer. Mixes or not? And on a variant with an expert
# *capacity*: each expert serves at most $C$ tokens (here $C = 3$), in sequence order, and a
# token that comes later loses that expert's share of its output. (Switch
# Transformer caps its experts this way; a token that overflows its one expert
# skips the layer and goes on through the residual connection alone.)
#
# **Step.** The course's reference detector `positions.mixes_positions` (the
# solution of notebook 05's exercise) on both.

# %%
rng = np.random.default_rng(11)
X_seq = rng.normal(size=(8, 2))


def moe_layer(X):
    return moe.moe_forward(X, W10.W_r, W10.experts, W10.k)


def moe_with_capacity(X, capacity=3):
    """The same layer, but each expert serves at most `capacity` tokens; later tokens lose that expert."""
    indices, gates = moe.router_topk(X, W10.W_r, W10.k)
    Y = np.zeros_like(X)
    served = np.zeros(len(W10.experts), dtype=int)
    for i, x_i in enumerate(X):  # in sequence order: a token's fate depends on the tokens before it
        for e, g in zip(indices[i], gates[i], strict=True):
            if served[e] < capacity:
                served[e] += 1
                Y[i] += g * ffn_forward(x_i, *W10.experts[e])
    return Y


verdicts = {"MoE layer (W-10)": positions.mixes_positions(moe_layer, X_seq),
            "MoE with capacity 3": positions.mixes_positions(moe_with_capacity, X_seq)}
for name, mixes in verdicts.items():
    print(f"{name:<22} mixes positions: {mixes}")
print("experts chosen per token:", moe.router_topk(X_seq, W10.W_r, W10.k)[0].tolist())

# %% [markdown]
# **Why.** The routing rule is a function of one token, so the MoE layer is
# position-wise, like every FFN: the detector finds no row that moves when
# another token changes. A capacity limit breaks that: whether token $i$ still
# gets its expert depends on how many earlier tokens chose the same one, so
# changing an early token can change a later token's row. The pure rule of
# this notebook has no capacity; systems that cap their experts trade this
# independence for a predictable cost per expert.
#
# **Verify.**

# %%
assert verdicts == {"MoE layer (W-10)": False, "MoE with capacity 3": True}
assert np.array_equal(moe_layer(X_seq[::-1]), moe_layer(X_seq)[::-1])
print("The MoE layer is position-wise; with a capacity limit it is not.")

# %% [markdown]
# ## 5. Total and active parameters: Mixtral 8x7B
#
# Mixtral 8x7B's configuration: $d_\text{model} = 4096$, $d_\text{ff} =
# 14336$, 32 layers; in each, 8 SwiGLU experts (three matrices $W_\text{gate},
# W_\text{up}, W_\text{down}$, no biases, notebook 04) of which a token uses 2;
# attention with 32 query heads and 8 key/value heads of size 128 (the heads
# share keys and values in groups of 4, so $W_K$ and $W_V$ are $4096 \times
# 1024$); a vocabulary of 32,000 with separate input embedding and output head;
# RMSNorm weights without biases (two per layer, one at the end).
#
# **Forecast.** Mistral AI's release announcement of Mixtral gives it 46.7B
# parameters in all, of which 12.9B are used per token (its paper rounds these
# to 47B and 13B; neither figure is from a model card). Which parts does a
# token use in full, and which only a quarter of?
#
# **Step.** Every part, derived from the configuration by `moe.model_param_counts`.

# %%
config = moe.MIXTRAL_8X7B
counts = moe.model_param_counts(config)
expert = 3 * config.d_model * config.d_ff
attention_layer = counts["attention"][0] // config.n_layers
router_layer = counts["router"][0] // config.n_layers
print(f"one expert:    3 · {config.d_model} · {config.d_ff} = {expert:,} per layer")
print(f"attention:     2 · 4096² + 2 · 4096 · {config.n_kv_heads * config.head_dim} = {attention_layer:,} per layer")
print(f"router:        {config.d_model} · {config.n_experts} = {router_layer:,} per layer")
print(f"{'part':<12}{'total':>18}{'active':>18}")
for part, (total, active) in counts.items():
    print(f"{part:<12}{total:>18,}{active:>18,}")
print(f"announced: {counts['all'][0] / 1e9:.1f}B total, {counts['all'][1] / 1e9:.1f}B active")
one_row = counts["all"][1] - config.vocab_size * config.d_model + config.d_model
print(f"active, counting one embedding row per token: {one_row:,}")

# %% [markdown]
# **Why.** Embeddings, attention, norms and the router serve every token; the
# experts are where the two counts part: all 8 are stored, 2 run. The experts
# hold 97% of the stored parameters, so "8x7B" is not 56B: the 8 experts share
# everything else, and a token pays for about 12.9B, a quarter of the experts plus
# the rest. Memory is set by the total, compute per token by the active count.
# The 12.9B counts the whole input embedding table as active, though a token
# reads one row of it ($d_\text{model}$ numbers, not $32{,}000 \cdot d_\text{model}$):
# counted that way a token uses 12,748,857,344 parameters. The output head is
# used in full either way, since it scores every word of the vocabulary.
#
# **Verify.** The derived counts, the parts of the worked example, and the
# announcement's rounding.

# %%
assert expert == 176_160_768 and attention_layer == 41_943_040 and router_layer == 32_768
assert counts["all"] == (46_702_792_704, 12_879_925_248)
assert (round(counts["all"][0] / 1e9, 1), round(counts["all"][1] / 1e9, 1)) == (46.7, 12.9)
assert counts["embeddings"] == (2 * 32_000 * 4096,) * 2 and one_row == 12_748_857_344
assert counts["experts"][1] * 4 == counts["experts"][0]  # 2 of 8 experts run
assert round(counts["experts"][0] / counts["all"][0], 2) == 0.97 and counts["all"][0] < 8 * 7e9
assert moe.moe_param_count(4096, 14336, 8, 2) == (8 * expert + 32_768, 2 * expert + 32_768)
print("46,702,792,704 parameters in all, 12,879,925,248 used per token.")

# %% [markdown]
# Where they go, stored and used:

# %%
plots.params_bar({
    "experts, run (2 of 8)": counts["experts"][1],
    "experts, idle for this token": counts["experts"][0] - counts["experts"][1],
    "attention": counts["attention"][0],
    "embeddings + output head": counts["embeddings"][0],
    "router": counts["router"][0],
    "norms": counts["norms"][0],
}, title="Mixtral 8x7B: 46.7B parameters stored, 12.9B used per token")

# %% [markdown]
# *Figure: Mixtral 8x7B's parameters by part; the two expert bars together are
# the stored experts, the first alone is what one token runs.*
#
# ### Exercise: `moe_param_count`
#
# Write `moe_param_count(d_model, d_ff, n_experts, k, gated=True)` returning the
# pair `(total, active)` for the FFN part of **one layer**: the experts and the
# router.
#
# - An expert has no biases: $3\, d_\text{model}\, d_\text{ff}$ parameters when
#   `gated` (SwiGLU), $2\, d_\text{model}\, d_\text{ff}$ otherwise.
# - The router $W_r$ has $d_\text{model} \cdot n_\text{experts}$ parameters and
#   counts in both: every token is routed.
# - `total` counts all `n_experts` experts, `active` the `k` a token uses.
#
# Return two integers (Python `int`s; numpy integers such as `np.int64` pass too); the checks
# compare them exactly.

# %% nbgrader={"grade": false, "grade_id": "moe_param_count", "locked": false, "schema_version": 3, "solution": true, "task": false}
def moe_param_count(d_model, d_ff, n_experts, k, gated=True):
    """(total, active) parameters of one MoE layer's experts (no biases) and router."""
    ### BEGIN SOLUTION
    expert = (3 if gated else 2) * d_model * d_ff
    router = d_model * n_experts
    return n_experts * expert + router, k * expert + router
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for moe_param_count</summary>
#
# One expert's weights, times the number of experts stored (total) or used per
# token (active), plus the router, which every token uses, in both.
#
# <details><summary>Hint 2 of 2 for moe_param_count</summary>
#
# An expert has $3\, d_\text{model}\, d_\text{ff}$ parameters when gated and
# $2\, d_\text{model}\, d_\text{ff}$ when not; the router has
# $d_\text{model} \cdot n_\text{experts}$. Compute those two numbers first, as
# integers.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** One layer of Mixtral 8x7B. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_moe_param_count", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_counts(moe_param_count, [((4096, 14336, 8, 2), {})], mistakes.for_exercise("moe_param_count"))
checks.ok("moe_param_count gives Mixtral's layer: 1,409,318,912 stored, 352,354,304 active.")

# %% [markdown]
# The grader also checks (1 point): plain experts (`gated=False`, passed by
# keyword), $k = 1$ (Switch Transformer) and $k = n_\text{experts}$, one
# expert, and sizes where $d_\text{ff} < d_\text{model}$.

# %% nbgrader={"grade": true, "grade_id": "test_moe_param_count_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
check_counts(moe_param_count, [(args, kwargs) for args in [(768, 3072, 128, 1), (4096, 14336, 8, 8), (16, 4, 1, 1),
                                                            (10, 3, 5, 2), (512, 2048, 64, 2)]
                                for kwargs in ({}, {"gated": False})], mistakes.for_exercise("moe_param_count"))
checks.ok("moe_param_count is right for gated and plain experts, any k.")
### END HIDDEN TESTS

# %% [markdown]
# ## 6. Keeping the experts busy: the load-balancing loss
#
# A router is trained along with the experts, and nothing in the layer stops
# it from sending most tokens to the experts that happen to be best early on;
# those then train faster and win even more tokens. Switch Transformer adds an
# auxiliary loss. With $E$ experts, a batch of tokens, each sent to one expert
# (top-1), let
#
# - $f_i$: the share of the batch's tokens sent to expert $i$;
# - $P_i$: the mean, over the batch, of the router probability $p_i$ (the
#   softmax over all $E$ logits);
#
# $$\mathcal{L}_\text{balance} = E \sum_{i=1}^{E} f_i \, P_i,$$
#
# added to the training loss with a small scale $\alpha$ ($0.01$ in the paper).
#
# **Forecast.** Uniform routing ($f_i = P_i = 1/E$): what is the loss? Four
# tokens, all sent to expert 0 of 2, each with probabilities $[0.9, 0.1]$?
#
# **Step.**

# %%
uniform_probs = np.full((6, 3), 1 / 3)
loss_uniform = moe.load_balancing_loss(uniform_probs, np.array([0, 1, 2, 0, 1, 2]), 3)
collapsed_probs = np.tile([0.9, 0.1], (4, 1))
loss_collapsed = moe.load_balancing_loss(collapsed_probs, np.zeros(4, dtype=int), 2)
print(f"uniform over 3 experts: {loss_uniform:.6f}")
print(f"4 tokens to expert 0 of 2, p = [0.9, 0.1]: f = {moe.expert_shares(np.zeros(4, dtype=int), 2)}, "
      f"P = {collapsed_probs.mean(axis=0)}, loss = {loss_collapsed:.6f}")

# %% [markdown]
# **Why.** Uniform: $E \cdot E \cdot \frac{1}{E} \cdot \frac{1}{E} = 1$. All
# tokens to expert 0: $2 \cdot (1 \cdot 0.9 + 0 \cdot 0.1) = 1.8$, and $E$ at
# worst. The shares $f_i$ are counts and have no gradient; the $P_i$ do, so the
# loss pushes probability away from the experts that receive the most tokens.
# The factor $E$ makes the balanced value 1 whatever the number of experts.
#
# **Verify.**

# %%
assert abs(loss_uniform - 1.0) < 1e-12 and abs(loss_collapsed - 1.8) < 1e-12
print("Uniform routing: 1. Everything to one expert with p = 0.9: 1.8.")

# %% [markdown]
# ### Exercise: `load_balancing_loss`
#
# Write `load_balancing_loss(router_probs, expert_index, n_experts)`, the loss
# **before** $\alpha$:
#
# - `router_probs`: `(..., n_experts)`, each token's probabilities over all
#   experts; `expert_index`: `(...)`, integers, the expert each token was sent
#   to. Every leading index is one token: average over all of them.
# - An expert that receives no token has $f_i = 0$ (`np.bincount` needs
#   `minlength` for that).
#
# Return a float64 number (a Python `float` will do): the checks compare it with
# the reference to a relative $10^{-7}$.

# %% nbgrader={"grade": false, "grade_id": "load_balancing_loss", "locked": false, "schema_version": 3, "solution": true, "task": false}
def load_balancing_loss(router_probs, expert_index, n_experts):
    """Switch Transformer's E · Σ_i f_i · P_i (before α).

    router_probs: (..., E) probabilities, expert_index: (...) ints, n_experts: E -> float.
    """
    ### BEGIN SOLUTION
    probs = np.asarray(router_probs, dtype=float).reshape(-1, n_experts)
    index = np.asarray(expert_index).reshape(-1)
    f = np.bincount(index, minlength=n_experts) / index.size
    P = probs.mean(axis=0)
    return float(n_experts * np.sum(f * P))
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for load_balancing_loss</summary>
#
# Two shares per expert, averaged over all tokens: $f_i$, the fraction of tokens
# sent to it, and $P_i$, its mean router probability. The loss is
# $E \sum_i f_i P_i$.
#
# <details><summary>Hint 2 of 2 for load_balancing_loss</summary>
#
# Flatten first: probabilities to shape `(tokens, n_experts)`, indices to one
# dimension. `np.bincount` with `minlength` set to the number of experts counts
# the tokens per expert, zeros included; divide by the number of tokens for $f$.
# $P$ is the mean of the probabilities over axis 0.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** The two cases above. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_load_balancing_loss", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
checks.check_cases(load_balancing_loss, [((collapsed_probs, np.zeros(4, dtype=int), 2), 1.8),
                                         ((uniform_probs, np.array([0, 1, 2, 0, 1, 2]), 3), 1.0)],
                   mistakes=mistakes.for_exercise("load_balancing_loss"))
checks.ok("load_balancing_loss gives 1.8 for the collapsed router and 1 for the uniform one.")

# %% [markdown]
# The grader also checks (1 point): random routers with 8 experts, top-1
# choices, probabilities of shapes $(n, E)$ and $(b, s, E)$; a batch in which the
# last experts receive no token; a single token.

# %% nbgrader={"grade": true, "grade_id": "test_load_balancing_loss_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
rng = checks.hidden_rng("11_mixture_of_experts", "test_load_balancing_loss_hidden")
E = 8
cases = []
for shape in [(50,), (3, 7)]:
    probs = moe.softmax(rng.normal(size=shape + (E,)) * 2)
    cases.append((probs, probs.argmax(axis=-1), E))
probs = moe.softmax(rng.normal(size=(10, E)) + np.array([3, 2, 0, 0, 0, 0, -5, -5]))
index = np.array([0, 1, 0, 0, 2, 1, 0, 3, 0, 1])  # experts 4..7 get no token
cases += [(probs, index, E), (probs[:1], index[:1], E)]
checks.check_cases(load_balancing_loss, [(args, moe.load_balancing_loss(*args)) for args in cases],
                   mistakes=mistakes.for_exercise("load_balancing_loss"))
checks.ok("load_balancing_loss matches the reference on every batch.")
### END HIDDEN TESTS

# %% [markdown]
# ## 7. How routing concentrates
#
# Take $E = 8$ experts, 4000 random tokens in $d_\text{model} = 16$ and a random
# router, then give expert 0 a head start: add $\beta$ to its logit for every
# token, as a router does whose expert 0 has been winning for a while.
#
# **Forecast.** At $\beta = 0$, is the load even? How large must $\beta$ be for
# expert 0 to take half the tokens, and what does the loss say then?
#
# **Step.**

# %%
rng = np.random.default_rng(7)
E, d_model = 8, 16
X_batch = rng.normal(size=(4000, d_model))
W_route = rng.normal(scale=0.25, size=(d_model, E))
loads, losses = {}, {}
for beta in (0.0, 1.0, 2.0, 4.0):
    logits = X_batch @ W_route + beta * np.eye(E)[0]
    probs = moe.softmax(logits)
    chosen = moe.top_k(logits, 1)[:, 0]  # top-1 routing
    losses[beta] = moe.load_balancing_loss(probs, chosen, E)
    loads[f"β = {beta:g}: loss {losses[beta]:.2f}"] = moe.expert_shares(chosen, E)
for label, f in loads.items():
    print(f"{label:<20} shares {f.round(3)}")
plots.expert_load(loads, title="Top-1 routing as expert 0's logit gets a head start β")

# %% [markdown]
# *Figure: the share of 4000 tokens that each of 8 experts receives, for four
# head starts β of expert 0; the dashed line is the even share 1/8.*
#
# **Why.** A random router already spreads the tokens unevenly (at $\beta = 0$
# the busiest expert gets several times the share of the idlest), and a head
# start of a few units sends most tokens to one expert: at $\beta = 4$ the other
# seven sit nearly idle, and an idle expert gets no gradient to learn from.
# Half the tokens go to expert 0 for a head start between 1 and 2: the printed
# shares of expert 0 are about 0.41 at $\beta = 1$ and 0.70 at $\beta = 2$.
# That answers the forecast's second half too: where expert 0 takes half the
# tokens, the loss lies between the printed 1.38 ($\beta = 1$) and 2.64
# ($\beta = 2$), up from 1.05 at $\beta = 0$ (an even load gives exactly 1).
# It rises with the concentration, to 6.09 at $\beta = 4$, towards its maximum
# $E = 8$ (every token on one expert), and its gradient pulls the favoured
# expert's probability down.
#
# **Verify.**

# %%
values = [losses[b] for b in sorted(losses)]
assert all(a < b for a, b in zip(values, values[1:], strict=False))
assert 1.0 <= values[0] < 1.5 and values[-1] > 4
shares = list(loads.values())
assert shares[0].max() > 3 * shares[0].min()
assert shares[2][0] > 0.5 and shares[3][0] > 0.9
assert shares[1][0] < 0.5 < shares[2][0]  # half the tokens: a head start between 1 and 2
assert (round(shares[1][0], 2), round(shares[2][0], 2)) == (0.41, 0.70)
assert [round(loss, 2) for loss in values] == [1.05, 1.38, 2.64, 6.09]  # the losses the text quotes
print("The more the router favours expert 0, the larger the loss.")

# %% [markdown]
# ## Summary
#
# - A router scores each token against $E$ experts, $r = x W_r$, keeps the $k$
#   largest (equal logits: the lower index) and weighs them by the softmax over
#   those $k$ logits; the layer outputs the gated sum of the chosen FFNs.
# - Routing is decided token by token, so the layer stays position-wise;
#   capacity limits are what break that.
# - Mixtral 8x7B stores 46,702,792,704 parameters and runs 12,879,925,248 per
#   token (12,748,857,344 counting one embedding row per token): the experts are
#   97% of the model, and a token uses 2 of 8.
# - Switch Transformer's loss $E \sum_i f_i P_i$ is 1 for balanced routing and
#   grows as the tokens concentrate on few experts.
#
# Next: [12 · Low precision](12_low_precision.ipynb), where the FFN's numbers lose bits; or back to
# [00 · Start here](00_start_here.ipynb) for the map of the course.
