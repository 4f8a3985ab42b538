# %% [markdown]
# # 06 · Parameter budget: counts, bytes and FLOPs
#
# How big is the feed-forward sublayer, how much memory does it take, and how
# much arithmetic does one token cost? This notebook (scenario H) answers
# for real models, and shows that the FFN holds about two thirds of a
# transformer block's parameters.
#
# One FFN layer, $\mathrm{FFN}(x) = \sigma(x W_1 + b_1) W_2 + b_2$, holds four arrays:
#
# | array | shape | entries |
# |---|---|---|
# | $W_1$ | $(d_\text{model}, d_\text{ff})$ | $d_\text{model} \cdot d_\text{ff}$ |
# | $b_1$ | $(d_\text{ff},)$ | $d_\text{ff}$ |
# | $W_2$ | $(d_\text{ff}, d_\text{model})$ | $d_\text{ff} \cdot d_\text{model}$ |
# | $b_2$ | $(d_\text{model},)$ | $d_\text{model}$ |
#
# so its parameter count is, with biases,
#
# $$N = 2\, d_\text{model}\, d_\text{ff} + d_\text{ff} + d_\text{model},$$
#
# and without them
#
# $$N = 2\, d_\text{model}\, d_\text{ff}.$$
#
# Memory is $N$ times the bytes per parameter of the storage type (the
# *dtype*). A *FLOP* is one floating-point operation, an addition or a
# multiplication; a multiply-add is two of them.
#
# **Exercises** (12 points): `ffn_param_count` (2), `param_bytes` (2),
# `ffn_flops_per_token` (2), `swiglu_param_count` (2), `count_from_shapes` (2),
# `params_by_part` (2).
#
# *Where to run it:* in JupyterLab, in the browser through the **launch binder**
# badge of the repository's README, or locally after `make lab`. How the checks
# and their messages work is in [00 · Start here](00_start_here.ipynb).

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import math

import numpy as np
from IPython.display import Markdown

from ffn_helpers import attention_param_count, checks, examples, mistakes, plots, preset
from ffn_helpers import ffn_flops_per_token as reference_flops
from ffn_helpers import ffn_param_count as reference_count
from ffn_helpers import param_bytes as reference_bytes

W6 = examples.W_6  # the worked example's numbers
MiB = 2**20  # a mebibyte: 1,048,576 bytes


def _call_text(fn, args):
    return checks.call_text(fn.__name__, args)


def check_ints(fn, cases, catalogue=(), shown=None):
    """Test cells' helper: fn(*args) must return exactly the integer `expected`, for each (args, expected) of
    `cases`; on the first wrong count, a catalogued mistake is named where it gives fn's count for every case
    (checks.check_cases). `shown`: how each case's call is shown, where its arguments are too long to print."""
    checks.check_cases(fn, cases, exact=True, mistakes=catalogue, shown=shown)


def check_raises(fn, args, error, why):
    """Test cells' helper: fn(*args) must raise `error` (a bad input must not pass silently)."""
    try:
        got = fn(*args)
    except NotImplementedError:
        checks.call(fn, *args)  # raises the course's "not implemented yet" message
    except error:
        return
    except Exception as exc:
        text = f"raised {type(exc).__name__} ({exc}); expected {error.__name__}: {why}"  # their words: theirs to see
        raise checks.failure(f"{_call_text(fn, args)} {text}", public=f"{fn.__name__}(...) {text}") from None
    else:
        expected = f"expected it to raise {error.__name__}: {why}"
        raise checks.failure(f"{_call_text(fn, args)} returned {got!r}; {expected}",
                             public=f"{fn.__name__}(...) returned {checks.describe(got)}; {expected}")


# %% [markdown]
# ## 1. One layer of BERT-base
#
# BERT-base and GPT-2 small both use $d_\text{model} = 768$ and
# $d_\text{ff} = 3072 = 4 \cdot 768$.
#
# **Forecast.** Before running the next cell: roughly how many parameters does
# one FFN layer of BERT-base have? A hundred thousand, a million, five million,
# fifty million?
#
# **Step.** Count each array from its shape.

# %%
d_model, d_ff = 768, 3072
shapes = {"W1": (d_model, d_ff), "b1": (d_ff,), "W2": (d_ff, d_model), "b2": (d_model,)}
counts = {name: math.prod(shape) for name, shape in shapes.items()}
per_layer = sum(counts.values())
for name, shape in shapes.items():
    print(f"{name}: shape {shape!s:<12} {counts[name]:>10,} parameters")
print(f"one layer:                  {per_layer:>10,}")
print(f"8·d_model² =                {8 * d_model**2:>10,}  (the weights alone, since d_ff = 4·d_model)")

# %% [markdown]
# **Why.** The two matrices hold almost everything: with $d_\text{ff} = 4
# d_\text{model}$ they have $2 \cdot d_\text{model} \cdot 4 d_\text{model} = 8
# d_\text{model}^2$ entries, and the biases add only $d_\text{ff} +
# d_\text{model} = 3840$, under 0.1% of the layer.
#
# **Verify.** The counts agree with worked example W-6 and with the reference
# `ffn_param_count` of `ffn_helpers`.

# %%
for name in ("W1", "b1", "W2", "b2"):
    assert counts[name] == W6["bert_base"][name]
assert per_layer == W6["bert_base"]["per_layer"] == reference_count(768, 3072) == 4_722_432
assert 8 * d_model**2 == W6["bert_base"]["approx_8_d_model_sq"] == 4_718_592
assert d_ff + d_model == 3840 and (d_ff + d_model) / per_layer < 0.001
print(f"One BERT-base FFN layer: {per_layer:,} parameters; the biases are "
      f"{100 * (d_ff + d_model) / per_layer:.3f}% of them.")

# %% [markdown]
# ### Exercise: `ffn_param_count`
#
# Write `ffn_param_count(d_model, d_ff, bias=True)`: the number of parameters
# of one FFN layer, with the two bias vectors when `bias` is true and without
# them otherwise. Return an integer (a Python `int`; a numpy integer such as `np.int64` passes too).
#
# **Forecast.** What does `ffn_param_count(256, 1024, bias=False)` give?

# %% nbgrader={"grade": false, "grade_id": "ffn_param_count", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_param_count(d_model, d_ff, bias=True):
    """Parameters of one FFN layer: W1 and W2, plus b1 and b2 when bias is true."""
    ### BEGIN SOLUTION
    weights = d_model * d_ff + d_ff * d_model
    biases = d_ff + d_model if bias else 0
    return weights + biases
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for ffn_param_count</summary>
#
# Count each piece of the layer: two weight matrices of
# $d_\text{model} \times d_\text{ff}$ entries each, and, when `bias` is true,
# one bias of $d_\text{ff}$ entries and one of $d_\text{model}$.
#
# <details><summary>Hint 2 of 2 for ffn_param_count</summary>
#
# Compute the weights' count and the biases' count separately; the biases count
# 0 when `bias` is false. Everything is an integer product or sum, so the result
# is a Python `int` as long as nothing is divided.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** BERT-base's layer, and the $256/1024$ layer with and without
# biases. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_param_count", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_ints(ffn_param_count, [((768, 3072), W6["bert_base"]["per_layer"]),
                             ((256, 1024, True), W6["libtorch_example"]["with_bias"]),
                             ((256, 1024, False), W6["libtorch_example"]["without_bias"])],
           mistakes.for_exercise("ffn_param_count"))
checks.ok("ffn_param_count counts W1, b1, W2 and b2.")

# %% [markdown]
# The grader also checks (1 point): the 512/2048 layer, sizes where
# $d_\text{ff}$ is not $4 d_\text{model}$ (also $d_\text{ff} < d_\text{model}$),
# a one-unit layer, and `bias` passed by keyword.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_param_count_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
cases = [(512, 2048), (3, 5, True), (3, 5, False), (1000, 7, True), (1, 1, True), (1, 1, False), (4096, 11008, False)]
check_ints(ffn_param_count, [(args, reference_count(*args)) for args in cases], mistakes.for_exercise("ffn_param_count"))
by_keyword = checks.call(lambda: ffn_param_count(10, 20, bias=False), name="ffn_param_count")
checks.check_equal(by_keyword, 400, name="ffn_param_count(10, 20, bias=False)")
checks.ok("ffn_param_count is right for every size.")
### END HIDDEN TESTS

# %% [markdown]
# ## 2. The original Transformer, and a wrong number in print
#
# The base model of the original Transformer paper has $d_\text{model} = 512$
# and $d_\text{ff} = 2048$.
#
# **Forecast.** Its FFN layer has $2 \cdot 512 \cdot 2048$ weights plus
# $2048 + 512$ biases. How many in all?
#
# **Step.**

# %%
tb = preset("transformer-base")
tb_count = reference_count(tb.d_model, tb.d_ff)
published = W6["transformer_base"]["published_wrong_sum"]
weights, biases = 2 * tb.d_model * tb.d_ff, tb.d_ff + tb.d_model
printed_weights = published - biases  # the product the text must have used to reach its total
print(f"{tb.name}: d_model = {tb.d_model}, d_ff = {tb.d_ff}")
print(f"  2·{tb.d_model}·{tb.d_ff} + {tb.d_ff} + {tb.d_model} = {weights:,} + {biases:,} = {tb_count:,}")
print(f"  the text in print:     {printed_weights:,} + {biases:,} = {published:,}")
print(f"  its product is off by {printed_weights - weights:,}; its bias sum is right")

# %% [markdown]
# **Why.** A widely read LibTorch walkthrough prints this count as 2,101,760,
# from the arithmetic "2 × 512 × 2048 + 2048 + 512 = 2,099,200 + 2,560". Its
# bias sum, 2,560, is right; its product is not: $2 \cdot 512 \cdot 2048 =
# 2{,}097{,}152$, so the total is 2,099,712, which is also what that
# walkthrough's own program prints when it runs. The same text calls this layer GPT-2
# small's; GPT-2 small uses $d_\text{model} = 768$ and $d_\text{ff} = 3072$, the
# sizes of BERT-base, so its layer has 4,722,432 parameters. When a count
# matters, recompute it from the shapes.
#
# **Verify.**

# %%
assert tb_count == W6["transformer_base"]["per_layer"] == 2_099_712
assert published == 2_101_760 and (weights, biases) == (2_097_152, 2_560)
assert printed_weights == 2_099_200 and weights + biases == tb_count
gpt2 = preset("gpt2-small")
assert (gpt2.d_model, gpt2.d_ff) == (768, 3072) and gpt2.ffn_params_per_layer == 4_722_432
print("512/2048 gives 2,099,712 parameters; GPT-2 small's layer (768/3072) gives 4,722,432.")

# %% [markdown]
# ## 3. Bytes: what the dtype costs
#
# A parameter takes as many bytes as its dtype: `float64` 8, `float32` 4,
# `float16` 2, `bfloat16` 2 (a 16-bit format that keeps float32's 8-bit
# exponent and shortens the mantissa to 7 bits) and `int8` 1 (quantised
# weights; the scale factors stored beside them are left out here).
#
# **Forecast.** BERT-base has 12 layers. How many MiB ($2^{20}$ bytes) do its
# FFN weights take in float32? In bfloat16?
#
# **Step.**

# %%
bert = preset("bert-base")
bert_total = bert.ffn_params_total
print(f"BERT-base FFNs: {bert.n_layers} layers × {bert.ffn_params_per_layer:,} = {bert_total:,} parameters")
for dtype in ("float64", "float32", "float16", "bfloat16", "int8"):
    n_bytes = reference_bytes(bert_total, dtype)
    print(f"  {dtype:<9} {n_bytes:>13,} bytes = {n_bytes / MiB:8.2f} MiB")

# %% [markdown]
# **Why.** Memory is linear in the bytes per parameter: halving the width of
# the number halves the memory. That is why 16-bit and 8-bit formats are popular
# for large models, whose weights otherwise outgrow a device's memory.
#
# **Verify.**

# %%
assert bert_total == W6["bert_base"]["total"] == 56_669_184
assert reference_bytes(bert_total, "float32") == W6["bert_base"]["float32_bytes"] == 226_676_736
assert round(reference_bytes(bert_total, "float32") / MiB, 2) == W6["bert_base"]["float32_MiB"] == 216.18
print(f"{bert_total:,} parameters in float32: {reference_bytes(bert_total):,} bytes ≈ "
      f"{reference_bytes(bert_total) / MiB:.2f} MiB.")

# %% [markdown]
# ### Exercise: `param_bytes`
#
# Write `param_bytes(n_params, dtype="float32")`: the bytes taken by
# `n_params` parameters stored as `dtype`, one of `"float64"`, `"float32"`,
# `"float16"`, `"bfloat16"`, `"int8"`. For any other name, raise a `ValueError`
# whose message names the dtype that came and the five that are allowed: a
# typo such as `"fp32"` must not turn into a silent wrong answer. Return
# an integer (a Python `int`; a numpy integer such as `np.int64` passes too): a byte count is whole, and the check compares exactly, so
# `n_params * 4.0` (a float) fails even where its value is right.
#
# (numpy knows no `bfloat16`, so `np.dtype(dtype).itemsize` is not the way.)

# %% nbgrader={"grade": false, "grade_id": "param_bytes", "locked": false, "schema_version": 3, "solution": true, "task": false}
def param_bytes(n_params, dtype="float32"):
    """Bytes (an int) taken by n_params parameters of type dtype ("float64", "float32", "float16", "bfloat16", "int8")."""
    ### BEGIN SOLUTION
    sizes = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "int8": 1}
    if dtype not in sizes:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(sizes)}")
    return n_params * sizes[dtype]
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for param_bytes</summary>
#
# A dtype stores each parameter in a fixed number of bytes: 8, 4, 2, 2 and 1 for
# the five names. Look the size up by name, and refuse a name that is not one of
# them.
#
# <details><summary>Hint 2 of 2 for param_bytes</summary>
#
# A dict from the five names to their sizes does both jobs: `in` tells whether a
# name is known, and indexing gives the size. For an unknown name, raise
# `ValueError` with a message that repeats the name received (`{dtype!r}`) and
# lists the five allowed. Multiply `n_params` by the integer size: never by a
# float.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** BERT-base's FFNs in float32, with the dtype given and by default,
# and an unknown dtype. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_param_bytes", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_ints(param_bytes, [((W6["bert_base"]["total"], "float32"), W6["bert_base"]["float32_bytes"]),
                         ((W6["bert_base"]["total"],), W6["bert_base"]["float32_bytes"])],
           mistakes.for_exercise("param_bytes"))
check_raises(param_bytes, (1000, "float8"), ValueError, "float8 is not one of the five dtypes")
checks.ok("param_bytes is right for float32 and rejects an unknown dtype.")

# %% [markdown]
# The grader also checks (1 point): every one of the five dtypes, LLaMA-7B's
# FFNs in bfloat16 (more than $2^{32}$ bytes), and other unknown names
# (`"fp32"`, `"int4"`).

# %% nbgrader={"grade": true, "grade_id": "test_param_bytes_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
check_ints(param_bytes, [((n, dtype), reference_bytes(n, dtype))
                         for n in (1, 1280, W6["transformer_base"]["per_layer"], W6["llama_7b"]["total"])
                         for dtype in ("float64", "float32", "float16", "bfloat16", "int8")],
           mistakes.for_exercise("param_bytes"))
for dtype in ("fp32", "int4"):
    check_raises(param_bytes, (1000, dtype), ValueError, f"{dtype} is not one of the five dtypes")
checks.ok("param_bytes is right for every dtype.")
### END HIDDEN TESTS

# %% [markdown]
# ## 4. FLOPs per token
#
# Multiplying a row vector of length $d_\text{model}$ by $W_1$ takes
# $d_\text{model} \cdot d_\text{ff}$ multiply-adds, one per weight; $W_2$ takes
# as many again. Each multiply-add is 2 FLOPs, so one token costs
#
# $$\begin{array}{l} \text{FLOPs per token} \\
#   \qquad = 2 \cdot 2\, d_\text{model}\, d_\text{ff} = 4\, d_\text{model}\, d_\text{ff} \end{array}$$
#
# (the biases and the activation add $O(d_\text{ff})$ and are left out, as is usual).
# Put differently: about 2 FLOPs per weight per token.
#
# **Forecast.** How many FLOPs do BERT-base's 12 FFN layers spend on one token?
# On a sequence of 512 tokens?
#
# **Step.**

# %%
per_token_layer = reference_flops(bert.d_model, bert.d_ff)
per_token = bert.n_layers * per_token_layer
print(f"one layer, one token:          {per_token_layer:>16,} FLOPs")
print(f"{bert.n_layers} layers, one token:        {per_token:>16,} FLOPs")
print(f"{bert.n_layers} layers, 512 tokens:       {512 * per_token:>16,} FLOPs ≈ {512 * per_token / 1e9:.0f} GFLOP")

# %% [markdown]
# **Why.** The cost grows with the product $d_\text{model} \cdot d_\text{ff}$,
# the same product that sets the parameter count: every weight is used once per
# token, in one multiply-add.
#
# **Verify.**

# %%
assert per_token_layer == 4 * 768 * 3072 == 9_437_184
assert per_token_layer == 2 * (2 * 768 * 3072)  # two FLOPs per multiply-add
print("4·d_model·d_ff FLOPs per token and layer.")

# %% [markdown]
# ### Exercise: `ffn_flops_per_token`
#
# Write `ffn_flops_per_token(d_model, d_ff)`: the FLOPs of one token's forward
# pass through one (plain, two-matrix) FFN layer, biases and activation left out.
# Return an integer (a Python `int`; a numpy integer such as `np.int64` passes too).

# %% nbgrader={"grade": false, "grade_id": "ffn_flops_per_token", "locked": false, "schema_version": 3, "solution": true, "task": false}
def ffn_flops_per_token(d_model, d_ff):
    """FLOPs of one token through one FFN layer: 2 per multiply-add, d_model·d_ff multiply-adds per matrix."""
    ### BEGIN SOLUTION
    multiply_adds = 2 * d_model * d_ff
    return 2 * multiply_adds
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for ffn_flops_per_token</summary>
#
# Each of the two matrices costs one multiply-add per weight for one token, and
# one multiply-add is two FLOPs (a multiplication and an addition).
#
# <details><summary>Hint 2 of 2 for ffn_flops_per_token</summary>
#
# One matrix has $d_\text{model} \cdot d_\text{ff}$ weights, the layer two such
# matrices: count the multiply-adds of both, then double for FLOPs. Keep it in
# integers.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** BERT-base's layer. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_ffn_flops_per_token", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_ints(ffn_flops_per_token, [((768, 3072), 9_437_184)], mistakes.for_exercise("ffn_flops_per_token"))
checks.ok("ffn_flops_per_token counts 2 FLOPs per multiply-add, in both matrices.")

# %% [markdown]
# The grader also checks (1 point): other sizes, against the reference.

# %% nbgrader={"grade": true, "grade_id": "test_ffn_flops_per_token_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
check_ints(ffn_flops_per_token, [(args, reference_flops(*args)) for args in [(512, 2048), (256, 1024), (4096, 11008),
                                                                            (3, 5), (1, 1), (1000, 7)]],
           mistakes.for_exercise("ffn_flops_per_token"))
checks.ok("ffn_flops_per_token is right for every size.")
### END HIDDEN TESTS

# %% [markdown]
# ## 5. The FFN's share of a block
#
# A transformer block has two sublayers. Attention has four $d_\text{model}
# \times d_\text{model}$ projections (queries, keys, values, output), each with a
# bias of $d_\text{model}$, so $4(d_\text{model}^2 + d_\text{model})$
# parameters; the FFN has $2 d_\text{model} d_\text{ff} + d_\text{ff} +
# d_\text{model}$. With $d_\text{ff} = 4 d_\text{model}$ that is roughly
# $4 d_\text{model}^2$ against $8 d_\text{model}^2$.
#
# **Forecast.** What fraction of a block's parameters is in the FFN (layer
# norms aside)? Take $d_\text{model} = 256$, $d_\text{ff} = 1024$, the sizes of
# the LibTorch-style example of this course.
#
# **Step.**

# %%
lt = W6["libtorch_example"]
ffn_256 = reference_count(256, 1024)
ffn_256_no_bias = reference_count(256, 1024, bias=False)
attention_256 = attention_param_count(256)
share_256 = ffn_256 / (ffn_256 + attention_256)
print(f"FFN 256/1024: {ffn_256:,} with biases, {ffn_256_no_bias:,} without "
      f"(the biases: {ffn_256 - ffn_256_no_bias:,}, {100 * (ffn_256 - ffn_256_no_bias) / ffn_256:.2f}%)")
print(f"attention, four 256×256 projections with biases: {attention_256:,}")
print(f"FFN share of the block: {share_256:.4f}")

# %% [markdown]
# **Why.** The FFN's two matrices are each four times as large as one
# attention projection, and there are two of them against four projections:
# $8 d_\text{model}^2$ against $4 d_\text{model}^2$, so about two thirds. This
# is where the bulk of a transformer block's weights lives.
#
# **Verify.**

# %%
assert ffn_256 == lt["with_bias"] == 525_568 and ffn_256_no_bias == lt["without_bias"] == 524_288
assert ffn_256 - ffn_256_no_bias == lt["bias"] == 1_280
assert attention_256 == lt["attention_with_bias"] == 263_168
assert abs(share_256 - lt["ffn_share_approx"]) < 0.001
print(f"The FFN holds {share_256:.1%} of the 256/1024 block, about two thirds.")

# %% [markdown]
# Here is the whole of one BERT-base layer, layer norms included (BERT applies
# two LayerNorms per layer, each with a scale $\gamma$ and a shift $\beta$ of
# $d_\text{model}$ entries).

# %%
d = bert.d_model
bert_layer = {
    "FFN W1 (768 × 3072)": d * bert.d_ff,
    "FFN W2 (3072 × 768)": bert.d_ff * d,
    "FFN biases b1, b2": bert.d_ff + d,
    "attention Wq, Wk, Wv, Wo": 4 * d * d,
    "attention biases": 4 * d,
    "2 LayerNorms (γ, β)": 2 * 2 * d,
}
ffn_part = sum(v for k, v in bert_layer.items() if k.startswith("FFN"))
assert ffn_part == bert.ffn_params_per_layer
assert bert_layer["attention Wq, Wk, Wv, Wo"] + bert_layer["attention biases"] == attention_param_count(d)
print(f"one BERT-base layer: {sum(bert_layer.values()):,} parameters; the FFN's share: "
      f"{ffn_part / sum(bert_layer.values()):.1%}")
plots.params_bar(bert_layer, title="Where one BERT-base layer's parameters go")

# %% [markdown]
# *Figure: the parameters of one BERT-base encoder layer, part by part; each
# bar is labelled with its count and its share of the layer.*

# %% [markdown]
# ## 6. Gated FFNs: a LLaMA-7B layer
#
# Gated FFNs such as SwiGLU (notebook 04) compute
# $(\mathrm{SiLU}(x W_\text{gate}) \odot x W_\text{up})\, W_\text{down}$: three
# matrices, $W_\text{gate}$ and $W_\text{up}$ of shape $(d_\text{model},
# d_\text{ff})$ and $W_\text{down}$ of shape $(d_\text{ff}, d_\text{model})$, and
# in LLaMA no biases. LLaMA-7B has $d_\text{model} = 4096$, $d_\text{ff} = 11008$
# and 32 layers.
#
# **Forecast.** Why would a gated model pick $d_\text{ff} = 11008$, about
# $2.7\, d_\text{model}$, rather than $4\, d_\text{model}$?
#
# **Step.**

# %%
llama = preset("llama-7b")
llama_layer = reference_count(llama.d_model, llama.d_ff, bias=False, gated=True)
llama_total = llama.n_layers * llama_layer
two_thirds_of_4d = 2 * 4 * llama.d_model / 3
print(f"one layer: 3·{llama.d_model}·{llama.d_ff} = {llama_layer:,}")
print(f"{llama.n_layers} layers: {llama_total:,} parameters, "
      f"{reference_bytes(llama_total, 'bfloat16') / 2**30:.2f} GiB in bfloat16")
print(f"3·d_model·d_ff / (8·d_model²) = {llama_layer / (8 * llama.d_model**2):.4f}")
print(f"(2/3)·4·d_model = {two_thirds_of_4d:.2f}, rounded up to a multiple of 256: "
      f"{256 * math.ceil(two_thirds_of_4d / 256)}")

# %% [markdown]
# **Why.** Three matrices of width $d_\text{ff}$ cost as much as two of width
# $\tfrac{3}{2} d_\text{ff}$. Taking $d_\text{ff} \approx \tfrac{2}{3} \cdot 4
# d_\text{model}$ keeps the gated layer at the $8 d_\text{model}^2$ budget of a
# plain FFN with $d_\text{ff} = 4 d_\text{model}$; LLaMA rounds that width up to
# a multiple of 256, which gives 11008.
#
# **Verify.**

# %%
assert llama_layer == W6["llama_7b"]["per_layer"] == 135_266_304
assert llama_total == W6["llama_7b"]["total"] == 4_328_521_728
assert 256 * math.ceil(two_thirds_of_4d / 256) == llama.d_ff
assert abs(llama_layer / (8 * llama.d_model**2) - 1) < 0.01
print(f"One LLaMA-7B FFN layer: {llama_layer:,}; all 32: {llama_total:,}.")

# %% [markdown]
# ### Exercise: `swiglu_param_count`
#
# Write `swiglu_param_count(d_model, d_ff)`: the parameters of one gated FFN
# layer with three matrices and no biases. Return
# an integer (a Python `int`; a numpy integer such as `np.int64` passes too).

# %% nbgrader={"grade": false, "grade_id": "swiglu_param_count", "locked": false, "schema_version": 3, "solution": true, "task": false}
def swiglu_param_count(d_model, d_ff):
    """Parameters of one gated FFN: W_gate, W_up (d_model, d_ff) and W_down (d_ff, d_model), no biases."""
    ### BEGIN SOLUTION
    return 3 * d_model * d_ff
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for swiglu_param_count</summary>
#
# A gated FFN has three weight matrices and no biases: the gate and the up
# projection, each $d_\text{model} \times d_\text{ff}$, and the down projection,
# $d_\text{ff} \times d_\text{model}$.
#
# <details><summary>Hint 2 of 2 for swiglu_param_count</summary>
#
# All three matrices have the same number of entries, so the count is that
# number taken three times; an integer expression, nothing more.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** One LLaMA-7B layer. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_swiglu_param_count", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_ints(swiglu_param_count, [((4096, 11008), W6["llama_7b"]["per_layer"])], mistakes.for_exercise("swiglu_param_count"))
checks.ok("swiglu_param_count counts three matrices and no biases.")

# %% [markdown]
# The grader also checks (1 point): other sizes, including $d_\text{ff} < d_\text{model}$.

# %% nbgrader={"grade": true, "grade_id": "test_swiglu_param_count_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
check_ints(swiglu_param_count, [(args, reference_count(*args, bias=False, gated=True))
                                for args in [(768, 2048), (3, 5), (1, 1), (5120, 13824), (1000, 7)]],
           mistakes.for_exercise("swiglu_param_count"))
checks.ok("swiglu_param_count is right for every size.")
### END HIDDEN TESTS

# %% [markdown]
# ## 7. The models side by side
#
# The numbers of sections 1 to 6, for five models in one list: per layer, for
# all FFN layers, in bytes for two dtypes, and in forward FLOPs per token.
#
# **Forecast.** LLaMA-7B's FFN layers against BERT-base's: how many times the
# parameters? And for every model, how do the FLOPs per token compare with the
# number of weights?
#
# **Step.** Build the list from the presets, one entry per model.

# %%
rows = []  # a list, not a nine-column table: it stays readable in a narrow window
for key in ("transformer-base", "bert-base", "gpt2-small", "libtorch-example", "llama-7b"):
    m = preset(key)
    flops_m = m.n_layers * reference_flops(m.d_model, m.d_ff, gated=m.gated)
    note = {"transformer-base": f" (its encoder; the decoder has {m.n_layers} more FFN layers)",
            "llama-7b": " (gated, no biases)"}.get(key, "")
    rows.append(f"- **{m.name}**{note}: $d_\\text{{model}}$ {m.d_model:,}, $d_\\text{{ff}}$ {m.d_ff:,}, "
                f"{m.n_layers} {'layer' if m.n_layers == 1 else 'layers'}. FFN parameters: {m.ffn_params_per_layer:,} per layer, "
                f"{m.ffn_params_total:,} in all layers; "
                f"{reference_bytes(m.ffn_params_total, 'float32') / MiB:,.1f} MiB in float32, "
                f"{reference_bytes(m.ffn_params_total, 'bfloat16') / MiB:,.1f} MiB in bfloat16. "
                f"Forward FLOPs per token (all FFN layers): {flops_m:,}.")
Markdown("\n".join(rows))

# %% [markdown]
# *The list: FFN parameters, memory and forward FLOPs per token for five
# models; the gated layer's FLOPs count three matrices, $6\, d_\text{model}\, d_\text{ff}$ per token.*
#
# **Why.** A layer's count grows with $d_\text{model} \cdot d_\text{ff}$ and the
# model's with the number of layers, so LLaMA-7B's 32 gated layers hold about
# 76 times the FFN parameters of BERT-base's 12. The FLOPs follow the
# weights exactly: every weight takes part in one multiply-add per token, two
# FLOPs, so the FLOPs per token are twice the number of weights for every model
# (biases and the activation left out). Memory follows the dtype: bfloat16 is
# half of float32.
#
# **Verify.**

# %%
llama, bert = preset("llama-7b"), preset("bert-base")
ratio = llama.ffn_params_total / bert.ffn_params_total
print(f"LLaMA-7B / BERT-base, FFN parameters: {ratio:.1f}")
assert round(ratio) == 76
for key in ("transformer-base", "bert-base", "gpt2-small", "libtorch-example", "llama-7b"):
    m = preset(key)
    weights = (3 if m.gated else 2) * m.d_model * m.d_ff
    assert reference_flops(m.d_model, m.d_ff, gated=m.gated) == 2 * weights
    assert reference_bytes(m.ffn_params_total, "bfloat16") * 2 == reference_bytes(m.ffn_params_total, "float32")
print("In every row: FLOPs per token = 2 × weights, and bfloat16 takes half the bytes of float32.")

# %% [markdown]
# ## 8. Exercise: reading a checkpoint's shape list
#
# Frameworks list a model's parameters as (name, shape) pairs. PyTorch's
# `nn.Linear(in_features, out_features)` stores its weight as
# `(out_features, in_features)`, so an FFN with $d_\text{model} = 256$ and
# $d_\text{ff} = 1024$ built from two `nn.Linear` layers lists:

# %%
libtorch_ffn = [
    ("fc1.weight", (1024, 256)),  # (d_ff, d_model): W1 transposed
    ("fc1.bias", (1024,)),
    ("fc2.weight", (256, 1024)),  # (d_model, d_ff): W2 transposed
    ("fc2.bias", (256,)),
]
fc1_out, fc1_in = libtorch_ffn[0][1]
print(f"fc1.weight is (out, in) = ({fc1_out}, {fc1_in}): d_model = {fc1_in}, d_ff = {fc1_out}")

# %% [markdown]
# Write `count_from_shapes(shapes)`: the total number of parameters in such a
# list, where each shape is a tuple (or list) of ints. A tensor of shape
# $(a, b)$ holds $a \cdot b$ numbers, a vector of shape $(a,)$ holds $a$, and a
# scalar of shape $()$ holds one. Return an integer (a Python `int`; a numpy integer such as `np.int64` passes too). (Careful: `np.prod(())`
# is `1.0`, a float; `math.prod` returns ints.)
#
# **Forecast.** What does the list above give? You have met the number before.

# %% nbgrader={"grade": false, "grade_id": "count_from_shapes", "locked": false, "schema_version": 3, "solution": true, "task": false}
def count_from_shapes(shapes):
    """Total parameters in a list of (name, shape) pairs, e.g. [("fc1.weight", (1024, 256)), ...]."""
    ### BEGIN SOLUTION
    total = 0
    for _name, shape in shapes:
        total += math.prod(shape)
    return total
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 2 for count_from_shapes</summary>
#
# A tensor holds the product of its shape's numbers. Add that product up over
# every `(name, shape)` pair of the list; the names do not matter here.
#
# <details><summary>Hint 2 of 2 for count_from_shapes</summary>
#
# `math.prod(shape)` multiplies the entries of a tuple or a list, gives 1 for
# the empty shape `()` (a scalar is one number), and returns an `int`, unlike
# `np.prod(())`, which is `1.0`. Start a total at 0 and add one product per
# pair; an empty list then gives 0.
#
# </details>
# </details>

# %% [markdown]
# **Verify.** The LibTorch-style FFN above. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_count_from_shapes", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_ints(count_from_shapes, [((libtorch_ffn,), W6["libtorch_example"]["with_bias"])],
           mistakes.for_exercise("count_from_shapes"), shown=["count_from_shapes(libtorch_ffn)"])
checks.ok("count_from_shapes reads the LibTorch-style list.")

# %% [markdown]
# The grader also checks (1 point): a LLaMA-style gated layer (three weights,
# no biases), a whole BERT-base layer with its attention and LayerNorm
# parameters, shapes given as lists, a scalar parameter of shape $()$, and an
# empty list.

# %% nbgrader={"grade": true, "grade_id": "test_count_from_shapes_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
llama_shapes = [("mlp.gate_proj.weight", (11008, 4096)), ("mlp.up_proj.weight", (11008, 4096)),
                ("mlp.down_proj.weight", (4096, 11008))]
bert_shapes = [(f"attention.{p}.weight", (768, 768)) for p in ("query", "key", "value", "output")]
bert_shapes += [(f"attention.{p}.bias", (768,)) for p in ("query", "key", "value", "output")]
bert_shapes += [("attention.LayerNorm.weight", [768]), ("attention.LayerNorm.bias", [768]),
                ("intermediate.dense.weight", [3072, 768]), ("intermediate.dense.bias", [3072]),
                ("output.dense.weight", [768, 3072]), ("output.dense.bias", [768]),
                ("output.LayerNorm.weight", [768]), ("output.LayerNorm.bias", [768])]
small = [("logit_scale", ()), ("proj.weight", (3, 5))]
check_ints(count_from_shapes, [((llama_shapes,), W6["llama_7b"]["per_layer"]),
                               ((bert_shapes,), sum(bert_layer.values())), ((small,), 16), (([],), 0)],
           mistakes.for_exercise("count_from_shapes"),
           shown=["count_from_shapes(llama_shapes)", "count_from_shapes(bert_shapes)", f"count_from_shapes({small!r})",
                  "count_from_shapes([])"])
checks.ok("count_from_shapes is right on every list.")
### END HIDDEN TESTS

# %% [markdown]
# ## 9. Exercise: where a whole model's parameters go
#
# A checkpoint lists every parameter of a model, not only the FFN's. Here are
# the lists of two real models, built from their configurations: GPT-2 small
# (as Hugging Face names it; its `Conv1D` layers store weights as
# `(in, out)`) and LLaMA-7B (`nn.Linear` layout, `(out, in)`).
#
# One difference matters for the count. GPT-2 **ties** its output projection to
# its token embedding: the same `wte` matrix turns tokens into vectors and
# vectors back into scores over the vocabulary, so the list holds it once.
# LLaMA **unties** them: `embed_tokens` and `lm_head` are two
# $32000 \times 4096$ matrices.
#
# **Step.** The two lists (the cell prints the first lines of each).

# %%
def gpt2_small_shapes(n_layer=12, d=768, vocab=50257, context=1024):
    """GPT-2 small's parameter list: (name, shape) pairs, Conv1D weights as (in, out)."""
    shapes = [("transformer.wte.weight", (vocab, d)), ("transformer.wpe.weight", (context, d))]
    for i in range(n_layer):
        block = f"transformer.h.{i}"
        shapes += [(f"{block}.ln_1.weight", (d,)), (f"{block}.ln_1.bias", (d,)),
                   (f"{block}.attn.c_attn.weight", (d, 3 * d)), (f"{block}.attn.c_attn.bias", (3 * d,)),
                   (f"{block}.attn.c_proj.weight", (d, d)), (f"{block}.attn.c_proj.bias", (d,)),
                   (f"{block}.ln_2.weight", (d,)), (f"{block}.ln_2.bias", (d,)),
                   (f"{block}.mlp.c_fc.weight", (d, 4 * d)), (f"{block}.mlp.c_fc.bias", (4 * d,)),
                   (f"{block}.mlp.c_proj.weight", (4 * d, d)), (f"{block}.mlp.c_proj.bias", (d,))]
    return shapes + [("transformer.ln_f.weight", (d,)), ("transformer.ln_f.bias", (d,))]


def llama_7b_shapes(n_layer=32, d=4096, d_ff=11008, vocab=32000):
    """LLaMA-7B's parameter list: (name, shape) pairs, nn.Linear weights as (out, in), no biases."""
    shapes = [("model.embed_tokens.weight", (vocab, d))]
    for i in range(n_layer):
        layer = f"model.layers.{i}"
        shapes += [(f"{layer}.self_attn.{p}_proj.weight", (d, d)) for p in "qkvo"]
        shapes += [(f"{layer}.mlp.gate_proj.weight", (d_ff, d)), (f"{layer}.mlp.up_proj.weight", (d_ff, d)),
                   (f"{layer}.mlp.down_proj.weight", (d, d_ff)),
                   (f"{layer}.input_layernorm.weight", (d,)), (f"{layer}.post_attention_layernorm.weight", (d,))]
    return shapes + [("model.norm.weight", (d,)), ("lm_head.weight", (vocab, d))]


gpt2_list, llama_list = gpt2_small_shapes(), llama_7b_shapes()


# What the checks below expect, counted from the sizes alone (no name is read): GPT-2's
# fused c_attn holds the same Q, K, V as attention_param_count's four projections.
def expected_parts(embeddings, attention, ffn, norm):
    return {"embeddings": embeddings, "attention": attention, "ffn": ffn, "norm": norm}


GPT2_PARTS = expected_parts(50257 * 768 + 1024 * 768, 12 * attention_param_count(768),
                            12 * reference_count(768, 3072), 12 * 2 * 2 * 768 + 2 * 768)
LLAMA_PARTS = expected_parts(2 * 32000 * 4096, 32 * attention_param_count(4096, bias=False),
                             W6["llama_7b"]["total"], 32 * 2 * 4096 + 4096)


def check_parts(fn, shapes, expected, label):
    """Test cells' helper: fn(shapes) must be the dict `expected`, with int values; `label`: how its argument is
    written, as in the test cell (a call shown as Python reads it: params_by_part(gpt2_list))."""
    got = checks.call(fn, shapes, name="params_by_part")
    if not isinstance(got, dict):
        raise checks.wrong_result(f"params_by_part({label})", f"a dict with the keys {sorted(expected)}", got)
    if set(got) != set(expected):
        raise checks.failure(f"params_by_part({label}) should return a dict with the keys {sorted(expected)}, "
                             f"got the keys {sorted(map(repr, got))}", public=True)
    for part in expected:
        checks.check_equal(got[part], expected[part], name=f'params_by_part({label})["{part}"]')


for name, shape in gpt2_list[:4] + llama_list[-3:]:
    print(f"{name:45} {shape}")
print(f"... {len(gpt2_list)} and {len(llama_list)} entries")

# %% [markdown]
# Write `params_by_part(shapes)`: for a list of `(name, shape)` pairs, return a
# dict with the keys `"embeddings"`, `"attention"`, `"ffn"` and `"norm"`, each
# the total number of parameters of that part (an integer: a Python `int`, or a numpy integer such as
# `np.int64`; 0 for a part
# that does not occur). Decide each parameter's part from its name, in lower
# case, by the **first** rule that matches:
#
# 1. it contains `norm` or `ln_`: **norm** (`post_attention_layernorm` is a norm, not attention);
# 2. it contains `embed`, `wte`, `wpe` or `lm_head`: **embeddings** (input and output);
# 3. it contains `attn` or `attention`: **attention**;
# 4. it contains `mlp`: **ffn**.
#
# A name that no rule matches raises a `ValueError` naming it: a parameter
# silently left out would make every share wrong.
#
# **Forecast.** Which part is the largest in GPT-2 small, and which in
# LLaMA-7B? Where do GPT-2 small's embeddings rank?

# %% nbgrader={"grade": false, "grade_id": "params_by_part", "locked": false, "schema_version": 3, "solution": true, "task": false}
def params_by_part(shapes):
    """{"embeddings": int, "attention": int, "ffn": int, "norm": int} for a list of (name, shape) pairs."""
    ### BEGIN SOLUTION
    rules = [("norm", ("norm", "ln_")), ("embeddings", ("embed", "wte", "wpe", "lm_head")),
             ("attention", ("attn", "attention")), ("ffn", ("mlp",))]
    totals = {part: 0 for part, _ in rules}
    for name, shape in shapes:
        lowered = name.lower()
        part = next((part for part, keys in rules if any(k in lowered for k in keys)), None)
        if part is None:
            raise ValueError(f"no part for parameter {name!r}: expected a name with one of "
                             "norm, ln_, embed, wte, wpe, lm_head, attn, attention, mlp")
        totals[part] += math.prod(shape)
    return totals
    ### END SOLUTION


# %% [markdown]
# <details><summary>Hint 1 of 3 for params_by_part</summary>
#
# Decide each parameter's part by its lower-cased name, trying the four rules in
# their order and taking the first that matches; then add its count (the product
# of its shape) to that part's total.
#
# <details><summary>Hint 2 of 3 for params_by_part</summary>
#
# Keep the rules as an ordered list of (part, substrings), and start a dict with
# all four parts at 0, so that a part that never occurs still reports 0. For
# each pair: lower-case the name, find the first rule with any substring in it
# (`any(... in name for ...)`), and raise `ValueError` naming the parameter when
# none does.
#
# <details><summary>Hint 3 of 3 for params_by_part</summary>
#
# The count of one parameter is `math.prod(shape)`, an int; add it to
# `totals[part]`. Return the dict after the loop. The order of the rules is what
# makes `post_attention_layernorm` a norm: the norm rule is tried before the
# attention rule.
#
# </details>
# </details>
# </details>

# %% [markdown]
# **Verify.** GPT-2 small and LLaMA-7B against counts made from their sizes
# alone (`GPT2_PARTS`, `LLAMA_PARTS` above): GPT-2's attention is
# `attention_param_count(768)` per layer, its FFN `ffn_param_count(768, 3072)`;
# LLaMA-7B's FFN layers are W-6's 4,328,521,728. (1 point.)

# %% nbgrader={"grade": true, "grade_id": "test_params_by_part", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
check_parts(params_by_part, gpt2_list, GPT2_PARTS, "gpt2_list")
check_parts(params_by_part, llama_list, LLAMA_PARTS, "llama_list")
checks.ok("params_by_part splits GPT-2 small and LLaMA-7B into their four parts.")

# %% [markdown]
# The grader also checks (1 point): names in other styles and in mixed case
# (`attention.output.LayerNorm` is a norm), shapes given as lists, a scalar of
# shape $()$, an empty list (every part 0), and that a name no rule matches
# raises a `ValueError`.

# %% nbgrader={"grade": true, "grade_id": "test_params_by_part_hidden", "locked": true, "points": 1, "schema_version": 3, "solution": false, "task": false}
# Hidden tests: the grader runs the checks listed above in this cell; until then it checks nothing.
### BEGIN HIDDEN TESTS
other_names = [("encoder.layer.0.attention.self.query.weight", [768, 768]),
              ("encoder.layer.0.attention.self.query.bias", [768]),
              ("encoder.layer.0.attention.output.LayerNorm.weight", [768]),
              ("encoder.layer.0.mlp.dense.weight", [3072, 768]),
              ("embeddings.word_embeddings.weight", [30522, 768]),
              ("encoder.layer.0.ATTN.scale", ())]
check_parts(params_by_part, other_names, expected_parts(30522 * 768, 768 * 768 + 768 + 1, 3072 * 768, 768),
            "other_names")
check_parts(params_by_part, [], expected_parts(0, 0, 0, 0), "[]")
check_raises(params_by_part, ([("mlp.fc.weight", (2, 3)), ("pooler.dense.weight", (4, 4))],), ValueError,
             "'pooler.dense.weight' matches no rule, and leaving it out would make every share wrong")
checks.ok("params_by_part follows the rules on every list.")
### END HIDDEN TESTS

# %% [markdown]
# With the parts counted from the sizes (the same numbers the check uses):

# %%
for label, parts in (("GPT-2 small", GPT2_PARTS), ("LLaMA-7B", LLAMA_PARTS)):
    total = sum(parts.values())
    shares = ", ".join(f"{part} {100 * n / total:.1f}%" for part, n in parts.items())
    print(f"{label}: {total:,} parameters: {shares}")

# %% [markdown]
# **Why.** Both totals are the published ones, 124,439,808 for GPT-2 small and
# 6,738,415,616 for LLaMA-7B. In the small model the embeddings are expensive:
# its 50,257 token vectors and 1,024 position vectors take nearly a third of
# all parameters, even with the output projection tied. In LLaMA-7B, whose
# $d_\text{model}$ is over five times larger and whose vocabulary is smaller,
# the two untied $32000 \times 4096$ matrices are under 4 %, and the gated FFN
# layers hold about two thirds of everything.
# A model's "FFN share" depends on its size, and the embeddings are the part
# that does not grow with depth.
#
# **Verify.**

# %%
assert sum(GPT2_PARTS.values()) == 124_439_808 and sum(LLAMA_PARTS.values()) == 6_738_415_616
assert 0.31 < GPT2_PARTS["embeddings"] / sum(GPT2_PARTS.values()) < 0.34
assert LLAMA_PARTS["embeddings"] / sum(LLAMA_PARTS.values()) < 0.04
assert 0.64 < LLAMA_PARTS["ffn"] / sum(LLAMA_PARTS.values()) < 0.67 and 4096 / 768 > 5 and 32000 < 50257
print("GPT-2 small: embeddings nearly a third; LLaMA-7B: embeddings under 4 %, FFN about two thirds.")

# %% [markdown]
# ## Summary
#
# - One FFN layer has $2 d_\text{model} d_\text{ff} + d_\text{ff} + d_\text{model}$
#   parameters; the biases are a rounding error. With $d_\text{ff} = 4
#   d_\text{model}$ that is about $8 d_\text{model}^2$, roughly two thirds of a block.
# - Bytes are parameters times the dtype's size (bfloat16 and float16: 2).
# - A token costs $4 d_\text{model} d_\text{ff}$ FLOPs per plain layer: 2 per weight.
# - Recompute published counts from the shapes: 512/2048 gives 2,099,712, not 2,101,760.
# - A whole model's list splits into embeddings, attention, FFN and norms; tied
#   embeddings count once, untied ones twice.
#
# Next: [07 · Collapse to linear](07_collapse_to_linear.ipynb).
