"""Alternative answers for 13_training.

The module and numerical_gradient are 09's, brought over: their variants are 09's own
(tests/submissions/09_ffn_module.py), the module's five answers in one cell. The loss, the
step, the loop and the run are 13's; each wrong variant is a right cell with one mistake in it.
`train` and `fit` are graded with the course's functions in place of the learner's, so a wrong
step or loss costs its own cells only.
"""

import importlib

from . import Wrong

_09 = importlib.import_module("submissions.09_ffn_module")

_MODULE_MATRIX = "\n\n".join([_09._INIT_STANDARD_NORMAL, _09._COUNT_BY_SHAPES, _09._FORWARD_MATMUL,
                              _09._BACKWARD_TENSORDOT, _09._CLASS_KEYWORDS])
_MODULE_LOOPS = "\n\n".join([_09._INIT_SCALED, _09._COUNT_SIZES, _09._FORWARD_EINSUM, _09._BACKWARD_LOOP,
                             _09._CLASS_PARAMS_METHOD])

# The mean over tokens of each token's squared length, halved.
_LOSS_PER_TOKEN = '''import numpy as np


def mse_loss(y, target):
    d = np.asarray(y, dtype=float) - np.asarray(target, dtype=float)
    per_token = 0.5 * np.sum(d * d, axis=-1)
    return float(np.mean(per_token)), d / per_token.size
'''

# A loop over the tokens, each one's share added up.
_LOSS_LOOP = '''import numpy as np


def mse_loss(y, target):
    y = np.asarray(y, dtype=float)
    t = np.asarray(target, dtype=float)
    rows_y, rows_t = y.reshape(-1, y.shape[-1]), t.reshape(-1, t.shape[-1])
    n = len(rows_y)
    total = 0.0
    grad = np.empty_like(rows_y)
    for i in range(n):
        diff = rows_y[i] - rows_t[i]
        total += 0.5 * float(diff @ diff)
        grad[i] = diff / n
    return total / n, grad.reshape(y.shape)
'''

_STEP_COMPREHENSION = '''def sgd_step(params, grads, lr):
    return {name: None if params[name] is None else params[name] - lr * grads[name]
            for name in ("W1", "b1", "W2", "b2")}
'''

# Changes the dict it is given and returns it: the values are right all the same.
_STEP_IN_THE_DICT = '''def sgd_step(params, grads, lr):
    for name in ["W1", "b1", "W2", "b2"]:
        if params[name] is not None:
            params[name] = params[name] + (-lr) * grads[name]
    return params
'''

_TRAIN_FOR = '''import numpy as np


def train(params, x, target, lr, steps):
    losses = []
    for _ in range(steps):
        W1, b1, W2, b2 = (params[name] for name in ("W1", "b1", "W2", "b2"))
        loss, grad_y = mse_loss(ffn_module_forward(x, W1, b1, W2, b2), target)
        losses.append(loss)
        params = sgd_step(params, ffn_module_backward(x, grad_y, W1, b1, W2, b2), lr)
    return params, np.array(losses)
'''

_TRAIN_WHILE = '''def train(params, x, target, lr, steps):
    history = []
    step = 0
    current = dict(params)
    while step < steps:
        y = ffn_module_forward(x, current["W1"], current["b1"], current["W2"], current["b2"])
        loss, g = mse_loss(y, target)
        history = history + [loss]
        grads = ffn_module_backward(x, g, current["W1"], current["b1"], current["W2"], current["b2"], "relu")
        current = sgd_step(current, grads, lr)
        step += 1
    return current, history
'''

_FIT_08 = '''def fit(params, x, target):
    return train(params, x, target, 0.8, 2000)
'''

_FIT_KEYWORDS = '''LEARNING_RATE, STEPS = 0.7, 1999


def fit(params, x, target):
    trained, losses = train(params, x, target, lr=LEARNING_RATE, steps=STEPS)
    return trained, list(losses)
'''

CORRECT = {
    "matrix-style": {"FeedForwardNetwork": _MODULE_MATRIX, "numerical_gradient": _09._NUMGRAD_FLAT,
                     "mse_loss": _LOSS_PER_TOKEN, "sgd_step": _STEP_COMPREHENSION, "train": _TRAIN_FOR,
                     "fit": _FIT_08},
    "loop-style": {"FeedForwardNetwork": _MODULE_LOOPS, "numerical_gradient": _09._NUMGRAD_UNIT_VECTORS,
                   "mse_loss": _LOSS_LOOP, "sgd_step": _STEP_IN_THE_DICT, "train": _TRAIN_WHILE,
                   "fit": _FIT_KEYWORDS},
}

_swap = _09._swap
_MODULE = ("test_FeedForwardNetwork", "test_FeedForwardNetwork_hidden")
_NUMGRAD = ("test_numerical_gradient", "test_numerical_gradient_hidden")
_LOSS = ("test_mse_loss", "test_mse_loss_hidden")
_STEP = ("test_sgd_step", "test_sgd_step_hidden")
_TRAIN = ("test_train", "test_train_hidden")
_FIT = ("test_fit", "test_fit_hidden")

WRONG = [
    Wrong("module-stale-parameters", "FeedForwardNetwork",
          _swap(_swap(_MODULE_LOOPS, "        self.activation = activation\n",
                      "        self.activation = activation\n        self.initial = params\n"),
                "return ffn_module_forward(x, *self.params(), self.activation)",
                "return ffn_module_forward(x, *self.initial, self.activation)"),
          loses=_MODULE, diagnosis="stale_parameters"),
    Wrong("module-backward-no-mask", "FeedForwardNetwork",
          _swap(_MODULE_MATRIX, "dz = (G @ W2.T) * dsigma", "dz = G @ W2.T"),
          loses=_MODULE, diagnosis="missing_activation_grad"),
    Wrong("numgrad-over-h", "numerical_gradient", _swap(_09._NUMGRAD_FLAT, "/ (2 * h)", "/ h"),
          loses=_NUMGRAD, diagnosis="divided_by_h"),
    Wrong("numgrad-forward-difference", "numerical_gradient",
          _swap(_09._NUMGRAD_FLAT, "flat[i] = saved - h\n", "flat[i] = saved\n").replace("/ (2 * h)", "/ h"),
          loses=_NUMGRAD, diagnosis="forward_difference"),
    Wrong("loss-grad-not-averaged", "mse_loss", _swap(_LOSS_PER_TOKEN, "d / per_token.size", "d"),
          loses=_LOSS, diagnosis="grad_not_averaged"),
    Wrong("loss-summed", "mse_loss", _swap(_LOSS_PER_TOKEN, "float(np.mean(per_token))", "float(np.sum(per_token))"),
          loses=_LOSS, diagnosis="loss_summed"),
    Wrong("loss-mean-of-entries", "mse_loss",  # np.mean((y - t)**2): no ½, and a mean over every entry
          _swap(_LOSS_PER_TOKEN, "return float(np.mean(per_token)), d / per_token.size",
                "return float(np.mean(d * d)), 2 * d / d.size"),
          loses=_LOSS),
    Wrong("loss-grad-sign", "mse_loss",
          _swap(_LOSS_LOOP, "diff = rows_y[i] - rows_t[i]", "diff = rows_t[i] - rows_y[i]"),
          loses=_LOSS, diagnosis="grad_sign"),
    Wrong("step-sign", "sgd_step", _swap(_STEP_COMPREHENSION, "params[name] - lr * grads[name]",
                                         "params[name] + lr * grads[name]"),
          loses=_STEP, diagnosis="update_sign"),
    Wrong("step-lr-ignored", "sgd_step", _swap(_STEP_COMPREHENSION, "params[name] - lr * grads[name]",
                                               "params[name] - grads[name]"),
          loses=_STEP, diagnosis="lr_ignored"),
    Wrong("step-biases-skipped", "sgd_step",  # the biases come back as they were
          _swap(_STEP_COMPREHENSION, "None if params[name] is None", "params[name] if name.startswith('b')"),
          loses=_STEP, diagnosis="biases_not_updated"),
    Wrong("step-over-grads", "sgd_step",  # goes through grads, which also holds "x"
          '''def sgd_step(params, grads, lr):
    return {name: None if g is None else params[name] - lr * g for name, g in grads.items()}
''', loses=_STEP),
    Wrong("train-copy", "train", _swap(_TRAIN_FOR, "        params = sgd_step(params, ffn_module_backward(",
                                       "        sgd_step(params, ffn_module_backward("),
          loses=_TRAIN, diagnosis="updated_a_copy"),
    Wrong("train-forward-once", "train",
          _swap(_swap(_TRAIN_WHILE, "    while step < steps:\n        y = ffn_module_forward(",
                      "    y = ffn_module_forward("), "        loss, g = mse_loss(y, target)",
                "    while step < steps:\n        loss, g = mse_loss(y, target)"),
          loses=_TRAIN, diagnosis="forward_not_recomputed"),
    Wrong("train-loss-after-step", "train",
          _swap(_swap(_TRAIN_FOR, "        losses.append(loss)\n", ""),
                "        params = sgd_step(params, ffn_module_backward(x, grad_y, W1, b1, W2, b2), lr)\n",
                "        params = sgd_step(params, ffn_module_backward(x, grad_y, W1, b1, W2, b2), lr)\n"
                "        y_after = ffn_module_forward(x, params['W1'], params['b1'], params['W2'], params['b2'])\n"
                "        losses.append(mse_loss(y_after, target)[0])\n"),
          loses=_TRAIN, diagnosis="loss_after_step"),
    Wrong("fit-lr-too-large", "fit", _swap(_FIT_08, "0.8, 2000", "2.0, 2000"), loses=_FIT, diagnosis="lr_diverges"),
    Wrong("fit-too-slow", "fit", _swap(_FIT_08, "0.8, 2000", "0.05, 500"), loses=_FIT, diagnosis="too_slow"),
    Wrong("fit-too-many-steps", "fit", _swap(_FIT_08, "0.8, 2000", "0.3, 5000"), loses=_FIT),
]
