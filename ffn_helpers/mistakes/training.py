"""Notebook 13's mistakes: the loss and its gradient, the SGD step, the training loop, the learning rate.

The module (FeedForwardNetwork) and numerical_gradient are 09's, brought over: their mistakes are 09's.
"""

import numpy as np

from .. import training
from ..ffn import ffn_forward
from ..module import ffn_backward
from .ffn_module import FEED_FORWARD_NETWORK, NUMERICAL_GRADIENT
from .mistake import Mistake, in_part


def _diff(y, target):
    y, target = np.asarray(y, float), np.asarray(target, float)
    return y - target, y.size // y.shape[-1]


def _loss(y, target, scale):
    diff, n = _diff(y, target)
    return scale(n, diff.size) * float(np.sum(diff * diff))


_NO_HALF = ("no_half", "L = ½ · (1/N) Σ ‖y - t‖²: the ½ is missing (it makes ∂L/∂y = (y - t)/N, with no 2).")
_ENTRIES = ("averaged_over_entries", "you divided by every entry of y (N · d_model); the mean is over the N tokens "
            "only, each token's ½‖y - t‖² summed over its d_model features.")

# mse_loss returns (L, ∂L/∂y); the notebook compares each on its own, args (y, target).
MSE_LOSS = in_part("loss", (
    Mistake("loss_summed", "L adds ½‖y - t‖² over the tokens but does not divide by their number N: the loss "
            "of a batch is the mean over its tokens, so that it does not grow with the batch.",
            lambda y, target: _loss(y, target, lambda n, size: 0.5)),
    Mistake(*_NO_HALF, lambda y, target: _loss(y, target, lambda n, size: 1.0 / n)),
    Mistake(*_ENTRIES, lambda y, target: _loss(y, target, lambda n, size: 0.5 / size)),
)) + in_part("grad", (
    Mistake("grad_not_averaged", "∂L/∂y is y - t without the 1/N: the loss is a mean over the N tokens, so its "
            "gradient is averaged over the batch too, (y - t) / N.",
            lambda y, target: _diff(y, target)[0]),
    Mistake("grad_sign", "∂L/∂y = (y - t) / N, output minus target; yours is (t - y) / N, pointing the other way.",
            lambda y, target: -_diff(y, target)[0] / _diff(y, target)[1]),
    Mistake(*_NO_HALF, lambda y, target: 2.0 * _diff(y, target)[0] / _diff(y, target)[1]),
    Mistake(*_ENTRIES, lambda y, target: _diff(y, target)[0] / np.size(y)),
))


def _step(name, params, grads, lr, move):
    p = params[name]
    return None if p is None else move(np.asarray(p, float), np.asarray(grads[name], float), lr, name)


# sgd_step's check compares each parameter of the result, args (name, params, grads, lr).
SGD_STEP = (
    Mistake("update_sign", "the step goes up the gradient: p + lr · g makes the loss grow; step against it, "
            "p - lr · g.",
            lambda name, params, grads, lr: _step(name, params, grads, lr, lambda p, g, lr, n: p + lr * g)),
    Mistake("lr_ignored", "the step is p - g, whatever lr is: scale the gradient by the learning rate, "
            "p - lr · g.",
            lambda name, params, grads, lr: _step(name, params, grads, lr, lambda p, g, lr, n: p - g)),
    Mistake("biases_not_updated", "the biases come back as they were: b1 and b2 are parameters too, and take "
            "the same step, b - lr · ∂L/∂b.",
            lambda name, params, grads, lr: _step(
                name, params, grads, lr, lambda p, g, lr, n: p if n.startswith("b") else p - lr * g)),
)


def _stale(params, x, target, lr, steps, recompute=True, update=True, after=False):
    """The training loop the way a mistake runs it: (final parameters, losses)."""
    x, target = np.asarray(x, float), np.asarray(target, float)
    current = {name: None if p is None else np.asarray(p, float) for name, p in params.items()}
    losses = []
    y = ffn_forward(x, *current.values())
    for _ in range(steps):
        if recompute:
            y = ffn_forward(x, *current.values())
        loss, grad_y = training.mse_loss(y, target)
        new = training.sgd_step(current, ffn_backward(x, grad_y, *current.values()), lr)
        if update:
            current = new
        losses.append(training.loss_of(current, x, target) if after else loss)
    return current, np.array(losses)


# train returns (params, losses); the notebook compares each parameter, args (name, params, x, target, lr, steps),
# then the losses, args (params, x, target, lr, steps).
_COPY = ("updated_a_copy", "the parameters never change: sgd_step returns new ones, and the loop must go on with "
         "them (params = sgd_step(params, grads, lr)); updating a copy, or dropping what it returns, trains nothing.")
_FORWARD = ("forward_not_recomputed", "the forward pass ran once, before the loop: each step needs y = FFN(x) "
            "with the parameters as they are now, or its loss and gradient belong to the first step's parameters.")
TRAIN = in_part("params", (
    Mistake(*_COPY, lambda name, params, x, target, lr, steps: _stale(params, x, target, lr, steps,
                                                                      update=False)[0][name]),
    Mistake(*_FORWARD, lambda name, params, x, target, lr, steps: _stale(params, x, target, lr, steps,
                                                                         recompute=False)[0][name]),
)) + in_part("losses", (
    Mistake(*_COPY, lambda params, x, target, lr, steps: _stale(params, x, target, lr, steps, update=False)[1]),
    Mistake(*_FORWARD, lambda params, x, target, lr, steps: _stale(params, x, target, lr, steps,
                                                                   recompute=False)[1]),
    Mistake("loss_after_step", "losses[i] should be the loss before step i (losses[0] is where training starts); "
            "yours is the loss after it.",
            lambda params, x, target, lr, steps: _stale(params, x, target, lr, steps, after=True)[1]),
))

# fit: the learner picks the learning rate and the number of steps. The notebook's check names these from the
# losses the run returns (training.rises); each computes such a run, args (params, x, target).
FIT = (
    Mistake("lr_diverges", "the loss climbs above where it started: the learning rate is too large for this "
            "problem, and each step overshoots; try a smaller one (halve it until the loss falls).",
            lambda params, x, target: training.train(params, x, target, training.LR_DIVERGES, 200)),
    Mistake("too_slow", "the loss falls, but not far enough within the steps you allow: take a larger learning "
            "rate (as long as the loss still falls) or more steps, up to the limit.",
            lambda params, x, target: training.train(params, x, target, 0.01, 200)),
)

CATALOGUE = {
    "FeedForwardNetwork": FEED_FORWARD_NETWORK, "numerical_gradient": NUMERICAL_GRADIENT, "mse_loss": MSE_LOSS,
    "sgd_step": SGD_STEP, "train": TRAIN, "fit": FIT,
}
