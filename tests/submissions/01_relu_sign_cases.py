"""Alternative answers for 01_relu_sign_cases."""

from . import Wrong

_NP = "import numpy as np\n\n"

CORRECT = {
    "vectorised": {
        "preactivation": _NP + "def preactivation(x, w, b):\n"
                               "    return np.asarray(x, float) @ np.asarray(w, float) + b\n",
        "sign_case": "def sign_case(z):\n"
                     "    z = float(z)\n"
                     "    if z > 0:\n        return 'A'\n"
                     "    if z < 0:\n        return 'B'\n"
                     "    return 'C'\n",
        "relu": _NP + "def relu(z):\n    return np.maximum(np.asarray(z, float), 0.0)\n",
        "relu_grad": _NP + "def relu_grad(z):\n    return (np.asarray(z, float) > 0).astype(float)\n",
    },
    "einsum-where": {
        "preactivation": _NP + "def preactivation(x, w, b):\n"
                               "    return np.einsum('...i,i->...', np.asarray(x, float), np.asarray(w, float)) + b\n",
        "sign_case": _NP + "def sign_case(z):\n"
                           "    return {1.0: 'A', -1.0: 'B', 0.0: 'C'}[float(np.sign(z))]\n",
        "relu": _NP + "def relu(z):\n    z = np.asarray(z, float)\n    return np.where(z > 0, z, 0.0)\n",
        "relu_grad": _NP + "def relu_grad(z):\n    return np.where(np.asarray(z, float) > 0, 1.0, 0.0)\n",
    },
    "loop": {
        "preactivation": _NP + "def preactivation(x, w, b):\n"
                               "    x = np.asarray(x, float)\n"
                               "    z = np.full(x.shape[:-1], float(b))\n"
                               "    for i in range(x.shape[-1]):\n"
                               "        z = z + x[..., i] * w[i]\n"
                               "    return z\n",
        "sign_case": "def sign_case(z):\n"
                     "    if z == 0:\n        return 'C'\n"
                     "    return 'A' if z > 0 else 'B'\n",
        "relu": _NP + "def relu(z):\n    z = np.asarray(z, float)\n    return z * (z > 0)\n",
        "relu_grad": _NP + "def relu_grad(z):\n    return np.heaviside(np.asarray(z, float), 0.0)\n",
    },
}

WRONG = [
    # preactivation
    Wrong("pre-missing-b", "preactivation", _NP + "def preactivation(x, w, b):\n    return np.asarray(x) @ w\n",
          loses=("test_preactivation", "test_preactivation_hidden"), diagnosis="missing_b"),
    Wrong("pre-relu", "preactivation",
          _NP + "def preactivation(x, w, b):\n    return np.maximum(np.asarray(x) @ w + b, 0)\n",
          loses=("test_preactivation", "test_preactivation_hidden"), diagnosis="relu_in_preactivation"),
    Wrong("pre-bias-each", "preactivation",
          _NP + "def preactivation(x, w, b):\n    return np.sum(np.asarray(x) * w + b, axis=-1)\n",
          loses=("test_preactivation", "test_preactivation_hidden"), diagnosis="bias_in_every_term"),
    Wrong("pre-builtin-sum", "preactivation",  # Python's sum runs over the first axis, not the last
          "def preactivation(x, w, b):\n    return sum(x * w) + b\n",
          loses=("test_preactivation", "test_preactivation_hidden")),
    # sign_case
    Wrong("sign-zero-in-b", "sign_case",
          "def sign_case(z):\n    if z > 0:\n        return 'A'\n    return 'B'\n",
          loses=("test_sign_case", "test_sign_case_hidden"), diagnosis="zero_as_b"),
    Wrong("sign-isclose", "sign_case",
          _NP + "def sign_case(z):\n    if np.isclose(z, 0):\n        return 'C'\n"
                "    return 'A' if z > 0 else 'B'\n",
          loses=("test_sign_case", "test_sign_case_hidden"), diagnosis="zero_by_tolerance"),
    Wrong("sign-by-output", "sign_case",
          _NP + "def sign_case(z):\n    return 'C' if np.maximum(z, 0) == 0 else 'A'\n",
          loses=("test_sign_case", "test_sign_case_hidden"), diagnosis="zero_output_as_c"),
    Wrong("sign-np-where", "sign_case",  # returns a 0-d array, not a str
          _NP + "def sign_case(z):\n    return np.where(z > 0, 'A', np.where(z < 0, 'B', 'C'))\n",
          loses=("test_sign_case", "test_sign_case_hidden")),
    Wrong("sign-signbit", "sign_case",  # -0.0 has its sign bit set, yet it is zero
          _NP + "def sign_case(z):\n    if np.signbit(z):\n        return 'B'\n"
                "    return 'A' if z > 0 else 'C'\n",
          loses=("test_sign_case_hidden",), diagnosis="negative_zero_as_b"),
    Wrong("sign-rejects-numpy", "sign_case",  # np.float32, np.int64 and 0-d arrays are numbers too
          "def sign_case(z):\n    if not isinstance(z, (int, float)):\n"
          "        raise TypeError(f'z must be a number, got {type(z).__name__}')\n"
          "    return 'A' if z > 0 else 'B' if z < 0 else 'C'\n",
          loses=("test_sign_case_hidden",)),
    # relu
    Wrong("relu-min", "relu", _NP + "def relu(z):\n    return np.minimum(z, 0.0)\n",
          loses=("test_relu", "test_relu_hidden"), diagnosis="min_for_max"),
    Wrong("relu-abs", "relu", _NP + "def relu(z):\n    return np.abs(z)\n",
          loses=("test_relu", "test_relu_hidden"), diagnosis="abs_for_relu"),
    Wrong("relu-step", "relu", _NP + "def relu(z):\n    return (np.asarray(z) > 0).astype(float)\n",
          loses=("test_relu", "test_relu_hidden"), diagnosis="step_for_relu"),
    Wrong("relu-builtin-max", "relu", "def relu(z):\n    return max(0.0, z)\n",
          loses=("test_relu", "test_relu_hidden")),
    Wrong("relu-in-place", "relu",  # right values, but it overwrites the caller's array
          _NP + "def relu(z):\n    z = np.asarray(z, float)\n    z[z < 0] = 0.0\n    return z\n",
          loses=("test_relu_hidden",)),
    # relu_grad
    Wrong("grad-one-at-zero", "relu_grad", _NP + "def relu_grad(z):\n    return (np.asarray(z) >= 0).astype(float)\n",
          loses=("test_relu_grad", "test_relu_grad_hidden"), diagnosis="grad_one_at_zero"),
    Wrong("grad-half-at-zero", "relu_grad", _NP + "def relu_grad(z):\n    return np.heaviside(z, 0.5)\n",
          loses=("test_relu_grad", "test_relu_grad_hidden"), diagnosis="grad_half_at_zero"),
    Wrong("grad-sign", "relu_grad", _NP + "def relu_grad(z):\n    return np.sign(z)\n",
          loses=("test_relu_grad", "test_relu_grad_hidden"), diagnosis="sign_for_grad"),
]
