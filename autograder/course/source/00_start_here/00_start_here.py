# %% [markdown]
# # 00 · Start here: the feed-forward sublayer, and how this course works
#
# *Open this course in the browser, with nothing to install:* use the **launch binder**
# badge in the repository's README; it opens JupyterLab on this notebook.
# To work locally, run `make lab` in the repository (see the README); on Windows, or a Mac
# without `make`, run `python lab.py` there instead (`python3 lab.py` on a Mac).
#
# Every transformer block has two sublayers: attention, which mixes information
# *between* tokens, and the **position-wise feed-forward network** (FFN), which
# transforms each token *on its own*:
#
# $$\mathrm{FFN}(x) = \sigma(x W_1 + b_1)\, W_2 + b_2$$
#
# | symbol | shape | meaning |
# |---|---|---|
# | $x$ | $(\dots, d_\text{model})$ | one token's vector (a row), or a batch of them |
# | $W_1$, $b_1$ | $(d_\text{model}, d_\text{ff})$, $(d_\text{ff},)$ | the first layer: widen to $d_\text{ff}$ hidden units |
# | $z = x W_1 + b_1$ | $(\dots, d_\text{ff})$ | the **pre-activation** |
# | $h = \sigma(z)$ | $(\dots, d_\text{ff})$ | the **hidden** values, after the activation $\sigma$ (ReLU, GELU, SiLU) |
# | $W_2$, $b_2$ | $(d_\text{ff}, d_\text{model})$, $(d_\text{model},)$ | the second layer: back to $d_\text{model}$ |
#
# Vectors are rows and the weights multiply from the right (`x @ W1`), as in numpy.
# PyTorch's `nn.Linear` stores its weight the other way round; notebook 02 shows both.
#
# In notebooks 01 to 11 and 13 the arrays of numbers are **float64**, numpy's default:
# the arrays the checks give your functions, and the ones they expect back.
# The exceptions are indices, which are integers: `top_memories` (10) and
# `router_topk` (11) return them, and `load_balancing_loss` (11) takes them as
# `expert_index`. Counts and sizes are integers (Python's `int`, or numpy's such as
# `np.int64`), and 01's hidden tests
# also pass single numpy numbers (`np.float32`, `np.int64`) where a number is
# expected.
#
# Most checks compare with the reference to a relative $10^{-7}$. The others
# use the tolerance their numbers call for, from none at all where no rounding
# enters (ReLU's outputs in 01, the experts 11's router picks) to $10^{-2}$ for
# the spread of 09's random weights: $10^{-9}$ in 03 and 04, $10^{-10}$ in 08,
# and from $10^{-12}$ to $4 \times 10^{-3}$ (float16 results) in 12. A float32
# result (PyTorch's default) is rounded more coarsely than $10^{-7}$, and its
# check fails with a message that names the dtype first. Notebook 12 is about
# lower precision itself: its exercises also work in float32, float16 and
# int8, and each one says which dtype it takes and returns.

# %% [markdown]
# ## The map of the course
#
# Ten scenarios, A to J, spread over eight notebooks (01 takes three of
# them), and a capstone that uses them all. The letters are the names the worked
# examples and exercises use:
#
# | notebook | scenario | what to watch |
# |---|---|---|
# | [01 · ReLU's sign cases](01_relu_sign_cases.ipynb) | A, B, C: pre-activation positive, negative, exactly zero | ReLU passes, blocks, and the fragile zero |
# | [02 · The forward pass](02_forward_pass.ipynb) | D: $d_\text{model} \to d_\text{ff} \to d_\text{model}$ | shapes at every stage; PyTorch's layout |
# | [03 · Residual and LayerNorm](03_residual_layernorm.ipynb) | E: the wrapper around the FFN | add then normalise, or normalise first |
# | [04 · Activations](04_activations.ipynb) | F: GELU, ReLU, SiLU on the same input | negative inputs survive smoothly |
# | [05 · Position-wise](05_position_wise.ipynb) | G: many tokens, shared weights | no mixing between tokens |
# | [06 · Parameter budget](06_parameter_budget.ipynb) | H: counts, bytes, FLOPs | where a model's parameters go |
# | [07 · Collapse to linear](07_collapse_to_linear.ipynb) | I: no activation | two affine maps are one |
# | [08 · Limiting behaviour](08_limiting_behaviour.ipynb) | J: $z \to \pm\infty$ | overflow, underflow, tails |
# | [09 · The FFN module](09_ffn_module.ipynb) | all of them | a complete module, its gradients, a gradient check |
#
# Four more go beyond the scenarios, to questions today's models raise:
#
# | notebook | question | what to watch |
# |---|---|---|
# | [10 · Key-value memory](10_key_value_memory.ipynb) | what do the FFN's weights store? | keys (columns of $W_1$), values (rows of $W_2$); how many pairs fit, and what the threshold buys |
# | [11 · Mixture of experts](11_mixture_of_experts.ipynb) | how do Mixtral and Switch run many FFNs per layer? | a router picks k of E experts per token; total against active parameters; load balancing |
# | [12 · Low precision](12_low_precision.ipynb) | what do float16, bfloat16 and int8 do to an FFN? | overflow in the hidden layer, rounding to even, one scale per column |
# | [13 · Training](13_training.ipynb) | how does an FFN learn its weights, and what does it store? | your module trained on 32 pairs; the learning rate; many units per key; more pairs than it holds |

# %% [markdown]
# ## How to work in a notebook
#
# Each section has the same four beats:
#
# 1. **Forecast**: before running anything, write down what you expect. A wrong
#    forecast is the most useful thing that can happen to you here.
# 2. **Step**: one small computation, often a function you write.
# 3. **Why**: a sentence or two on what the result means.
# 4. **Verify**: a check cell tests your code and says exactly what is wrong.
#
# Exercise cells contain `# YOUR CODE HERE` and `raise NotImplementedError()`.
# Replace both with your code, run the cell, then run the check below it.
# Until you do, that check fails with a message telling you to implement the
# function, and nothing else in the notebook breaks: **Run All** (Run ▸ Run All
# Cells) goes on past a failing check, so every section, table and figure of a
# notebook is there to read before you have written a line. (The check cells
# carry the tag `raises-exception`, which tells JupyterLab to go on.) A failed
# check shows its message first; when your code crashed, the lines of your code
# that raised follow it.
#
# **Hints.** Under each exercise's cell, a cell holds two or three hints, each
# folded away: select **Hint 1** (click it, or Tab to it and press Enter) to
# open it, and the next hint shows inside it, to open only if you need it. The
# first points at the idea; the last comes as close to the answer as it can
# without writing its code. Opening a hint changes nothing in your grade.
#
# **Check a whole notebook as the grader would.** Save it (Ctrl+S), then run
# this in a cell of any notebook in the same folder:
#
# ```
# !python -m autograder check 02_forward_pass.ipynb
# ```
#
# or, in a terminal at the top of the repository,
# `.venv/bin/python -m autograder check my-notebooks/02_forward_pass.ipynb`
# (on Windows: `.venv\Scripts\python -m autograder check my-notebooks\02_forward_pass.ipynb`).
# It runs the notebook and every check, hidden ones included, and prints one line per
# exercise: its points and the first line of what is still wrong. It needs no
# sandbox for your own notebook (it says so when there is none, and which limits it
# cannot hold on your system); it takes under a minute.
#
# **Self-learners:** the worked solutions are in the `solutions/` folder, with
# the same names. They also contain the *hidden tests* that a grader runs;
# `python -m autograder check` (above) runs them on your own code.
#
# **In a graded class:** your instructor releases these notebooks with nbgrader.
# Before you submit, use the **Validate** button in the notebook's toolbar (or
# `nbgrader validate 01_relu_sign_cases.ipynb` in a terminal): it runs every
# cell and reports any check that fails. The grader also runs hidden tests
# on other inputs, so passing the visible checks is necessary, not sufficient.
# Write each answer yourself, with numpy, scipy and your own earlier answers.
# The grader runs none of the course's own functions for an answer (such as
# `ffn_helpers.ffn_forward`, anything in `ffn_helpers.mistakes`, or a private
# name such as `ffn_helpers._fast`), except those its exercise names under its
# description ("Course functions you may call here"). An answer that calls
# another one, or that changes numpy, the checks or the test cells, earns no
# points for that exercise, and the grader shows the instructor why. The checks in
# each notebook refuse such a call as the grader does, so you meet it before you submit.

# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false, "task": false}
import numpy as np

from ffn_helpers import checks

# %% [markdown]
# ## A first exercise: adding a bias
#
# This notebook is not graded; its one exercise is here to show you what a
# check says when it passes and when it fails.
#
# The smallest piece of the FFN is adding a bias vector $b$ to a
# pre-activation $z$, entry by entry: $(z + b)_j = z_j + b_j$. With
# $z$ of shape $(\dots, d)$ and $b$ of shape $(d,)$, numpy's broadcasting adds
# $b$ to every row.
#
# **Forecast.** What is `add_bias([1.0, 2.0], [0.5, -0.5])`? And for
# `z = [[1, 2], [3, 4]]` with the same `b`?
#
# **Step.** Here `add_bias` is already written. Run its cell, then the check
# below it.

# %%
def add_bias(z, b):
    """Return z + b, with z: (..., d) and b: (d,)."""
    return np.asarray(z, dtype=float) + np.asarray(b, dtype=float)


# %% [markdown]
# **Verify.** The check calls your function on the worked examples and on a
# random batch, and compares with the expected values. A passing check prints a
# ✔ line.

# %% tags=["raises-exception"]
checks.check(add_bias, ([1.0, 2.0], [0.5, -0.5]), [1.5, 1.5])
checks.check(add_bias, ([[1, 2], [3, 4]], [0.5, -0.5]), [[1.5, 1.5], [3.5, 3.5]])
rng = np.random.default_rng(0)
z, b = rng.normal(size=(2, 3, 5)), rng.normal(size=5)
checks.check(add_bias, (z, b), z + b)
checks.ok("add_bias adds b to every row.")

# %% [markdown]
# **What a failing check looks like.** Now break `add_bias` on purpose: in its
# cell, delete `+ np.asarray(b, dtype=float)`, run that cell, and run the check
# again. It fails with an `AssertionError` whose message gives the expected
# value, what came back and the largest difference. Here is that message for a
# version that forgets the bias:

# %% nbgrader={"grade": false, "grade_id": "failing_demo", "locked": true, "schema_version": 3, "solution": false, "task": false}
def add_bias_forgot_b(z, b):
    return np.asarray(z, dtype=float)


try:
    checks.check(add_bias_forgot_b, ([1.0, 2.0], [0.5, -0.5]), [1.5, 1.5])
except AssertionError as failure:
    print("The check failed, as it should:\n")
    print(failure)

# %% [markdown]
# In the graded notebooks, the checks also recognise common mistakes: a
# forward pass without $b_1$ is reported as
# `Likely mistake (missing_b1): b1 is missing: the hidden units' pre-activation is x W1 + b1 (add b1 before σ).`
# Put the bias back and run both cells again before you move on.
#
# **Why.** Broadcasting lines up the last axes: `b` of shape `(d,)` is added to
# each of the rows of `z`, however many leading (batch) axes `z` has. Every
# function in this course works this way: the last axis is the feature axis.
#
# In the graded notebooks an exercise cell starts as `# YOUR CODE HERE` and
# `raise NotImplementedError()`; until you write it, its checks fail with a
# message asking you to implement it, and the rest of the notebook still runs.
#
# Next: [01 · ReLU's sign cases](01_relu_sign_cases.ipynb).
