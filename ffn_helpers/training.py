r"""Training the FFN of notebook 09 by gradient descent, and the task it learns (notebook 13).

    L = ½ · (1/N) Σ_tokens ‖FFN(x) - t‖²,   ∂L/∂y = (y - t) / N

N counts the tokens (every leading axis of y). The parameters travel as a dict
{"W1", "b1", "W2", "b2"} (a bias may be None). `mse_loss` gives L and ∂L/∂y, `sgd_step`
one step against the gradient, `train` the loop (forward, loss, backward, step, with the
loss recorded before each step), `fit` the run notebook 13 asks for. The task: `memory_task`
draws n random unit keys and n random unit values to store, as in notebook 10; `capacity`
trains memories of several widths on more and more pairs.
"""

import math

import numpy as np

from ._arrays import as_float, positive_int
from .activations import relu_grad
from .ffn import ffn_forward
from .memory import random_unit_vectors, recall
from .module import ffn_backward, xavier_init

PARAMS = ("W1", "b1", "W2", "b2")

# Notebook 13's task and run: 32 pairs in 8 dimensions, a memory of 64 units, at most 2000 steps.
TASK = {"n_pairs": 32, "d_model": 8, "d_ff": 64, "task_seed": 0, "init_seed": 1}
FIT_MAX_STEPS = 2000
FIT_LOSS_BOUND = 1e-2  # what `fit` must reach (the loss starts near 0.6)
LR_RUN = 1.0  # the course's run
LR_DIVERGES = 2.0  # a step too large for this task: the loss jumps above its start and stays there


def params_of(W1, b1, W2, b2):
    """The parameters as the dict `train` takes: float64 copies (a bias may be None)."""
    return {name: None if p is None else as_float(p, name).copy() for name, p in zip(PARAMS, (W1, b1, W2, b2),
                                                                                  strict=True)}


def initial_params(d_model, d_ff, seed):
    """Xavier-normal weights and zero biases (module.xavier_init), as a dict."""
    return params_of(*xavier_init(d_model, d_ff, True, seed))


def _tokens(y):
    return y.size // y.shape[-1] if y.ndim else 1


def mse_loss(y, target):
    """(L, ∂L/∂y) for L = ½ · (1/N) Σ_tokens ‖y - target‖²; y, target: (..., d_model), N tokens.

    L is a float; ∂L/∂y = (y - target) / N has y's shape.
    """
    y, target = as_float(y, "y"), as_float(target, "target")
    if y.shape != target.shape or y.ndim == 0:
        raise ValueError(f"y and target should have the same shape (..., d_model), got {y.shape} and {target.shape}")
    diff = y - target
    n = _tokens(y)
    return 0.5 * float(np.sum(diff * diff)) / n, diff / n


def sgd_step(params, grads, lr):
    """New parameters, each p - lr · grads[name]; a parameter that is None stays None. `params` is left as it is."""
    if not (isinstance(lr, (int, float, np.floating)) and not isinstance(lr, bool) and math.isfinite(lr)):
        raise ValueError(f"lr should be a finite number, got {lr!r}")
    return {name: None if params[name] is None else as_float(params[name], name) - lr * as_float(grads[name], name)
            for name in PARAMS}


def loss_of(params, x, target):
    """L of the ReLU FFN with these parameters on (x, target)."""
    return mse_loss(ffn_forward(x, *(params[name] for name in PARAMS)), target)[0]


def train(params, x, target, lr, steps):
    """`steps` steps of gradient descent on L from `params`: (the final parameters, the losses).

    losses[i] is L at the parameters before step i (so losses[0] is the starting loss); a float64 array.
    Each step recomputes the forward pass, then ∂L/∂y, the backward pass and the update.
    """
    steps = positive_int(steps, "steps")
    x, target = as_float(x, "x"), as_float(target, "target")
    losses = np.empty(steps)
    # The first step through the course's functions, which check every input and say what is wrong with it; the
    # others by _steps, the same arithmetic without those checks (notebook 13 trains 24 memories of 2000 steps).
    current = tuple(params[name] for name in PARAMS)
    losses[0], grad_y = mse_loss(ffn_forward(x, *current), target)
    params = sgd_step(params, ffn_backward(x, grad_y, *current), lr)
    return _steps(params, x, target, lr, losses[1:]), losses


def _steps(params, x, target, lr, losses):
    """len(losses) more steps of `train` from checked float64 `params` (losses written in place): the operations of
    ffn_forward, mse_loss, ffn_backward (ReLU) and sgd_step, in their order, so bit for bit their results
    (test_training shows it, NaN and ±inf included), without their checks and the forward pass made twice."""
    W1, b1, W2, b2 = (params[name] for name in PARAMS)
    d_model, d_ff = W1.shape
    n = _tokens(target)
    x2 = x.reshape(-1, d_model)
    for i in range(len(losses)):
        z = x @ W1 if b1 is None else x @ W1 + b1
        h = np.maximum(z, 0.0)
        diff = (h @ W2 if b2 is None else h @ W2 + b2) - target
        losses[i] = 0.5 * float(np.sum(diff * diff)) / n
        G = diff / n
        dz = (G @ W2.T) * relu_grad(z)
        h2, G2, dz2 = h.reshape(-1, d_ff), G.reshape(-1, d_model), dz.reshape(-1, d_ff)
        W1, W2 = W1 - lr * (x2.T @ dz2), W2 - lr * (h2.T @ G2)
        b1 = None if b1 is None else b1 - lr * dz2.sum(axis=0)
        b2 = None if b2 is None else b2 - lr * G2.sum(axis=0)
    return {"W1": W1, "b1": b1, "W2": W2, "b2": b2}


def memory_task(n_pairs, d_model, seed):
    """(keys, values): n_pairs random unit keys, then n_pairs random unit values, from default_rng(seed)."""
    rng = np.random.default_rng(seed)
    return random_unit_vectors(n_pairs, d_model, rng), random_unit_vectors(n_pairs, d_model, rng)


def the_task():
    """Notebook 13's task (TASK): (keys, values, the starting parameters)."""
    keys, values = memory_task(TASK["n_pairs"], TASK["d_model"], TASK["task_seed"])
    return keys, values, initial_params(TASK["d_model"], TASK["d_ff"], TASK["init_seed"])


def fit(params, x, target):
    """The course's answer to `fit`: LR_RUN for FIT_MAX_STEPS steps."""
    return train(params, x, target, LR_RUN, FIT_MAX_STEPS)


def rises(losses):
    """Does a run's loss go above where it started (or stop being finite)? The sign of a step too large."""
    losses = as_float(losses, "losses")
    return bool(losses.size) and (not np.all(np.isfinite(losses)) or bool(np.any(losses > losses[0])))


def capacity(d_model, widths, n_pairs, steps=FIT_MAX_STEPS, lr=LR_RUN, seeds=(0, 1)):
    """{d_ff: (final losses, recalls)}, each of shape (len(n_pairs),): the mean over `seeds` of a memory of d_ff
    units trained on n random pairs (task seed s, starting weights seed 10 + s), its loss after `steps` steps and
    the share of keys recalled (memory.recall: the output closest to the key's own value)."""
    result = {}
    for d_ff in widths:
        losses, recalls = np.zeros(len(n_pairs)), np.zeros(len(n_pairs))
        for i, n in enumerate(n_pairs):
            for seed in seeds:
                keys, values = memory_task(n, d_model, seed)
                params, run = train(initial_params(d_model, d_ff, 10 + seed), keys, values, lr, steps)
                losses[i] += loss_of(params, keys, values) / len(seeds)
                recalls[i] += recall(*(params[name] for name in PARAMS), keys, values) / len(seeds)
        result[d_ff] = (losses, recalls)
    return result


def parameter_count(d_model, d_ff):
    """How many numbers a memory of d_ff units adjusts: 2 d_model d_ff + d_ff + d_model."""
    return 2 * d_model * d_ff + d_ff + d_model


def writers(params, keys, values):
    """How much each unit writes along each key's own value: (n, d_ff), entry [i, j] = h_ij (v_j · t_i) / ‖t_i‖².

    h_ij is unit j's coefficient for key i (memory.coefficients), v_j = W2[j] its value, t_i = values[i]. A row
    adds up, with b2's share b2 · t_i / ‖t_i‖², to y_i · t_i / ‖t_i‖²: 1 for an output equal to its value.
    """
    keys, values = as_float(keys, "keys"), as_float(values, "values")
    h = np.maximum(keys @ params["W1"] + (0.0 if params["b1"] is None else params["b1"]), 0.0)
    along = (values @ as_float(params["W2"], "W2").T) / np.sum(values * values, axis=1, keepdims=True)
    return h * along
