"""Alternative answers for 00_start_here."""

from . import Wrong

CORRECT = {
    "asarray": {"add_bias": "import numpy as np\n\ndef add_bias(z, b):\n    return np.asarray(z, float) + np.asarray(b, float)\n"},
    "np-add": {"add_bias": "import numpy as np\n\ndef add_bias(z, b):\n    return np.add(z, b, dtype=float)\n"},
}

WRONG = [
    Wrong("forgot-bias", "add_bias", "import numpy as np\n\ndef add_bias(z, b):\n    return np.asarray(z, float)\n",
          loses=("test_add_bias",)),
    Wrong("subtracts", "add_bias", "import numpy as np\n\ndef add_bias(z, b):\n    return np.asarray(z, float) - b\n",
          loses=("test_add_bias",)),
]
