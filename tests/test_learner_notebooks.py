"""What the learner meets outside the notebooks' own cells: the stated contracts.

- The float64 contract that 00_start_here states: a float32 answer fails, and its message
  names the dtype before anything else.
"""

import nbtools
import numpy as np

from ffn_helpers import checks

# ---------------------------------------------------------------- the float64 contract


def test_a_float32_answer_fails_and_the_message_names_the_dtype_first():
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    expected = x @ W
    got = x.astype(np.float32) @ W.astype(np.float32)
    # Within rtol 1e-7 of the float64 values, so only the dtype rule makes it fail.
    assert np.allclose(got, expected, rtol=checks.DEFAULT_RTOL, atol=checks.DEFAULT_ATOL)
    result = checks.compare(got, expected, name="ffn_forward(...)")
    assert not result.ok
    assert result.message.startswith("ffn_forward(...) has dtype float32, expected float64")


def test_an_exact_float32_answer_still_passes():
    assert checks.compare(np.array([1.5, -2.0], dtype=np.float32), np.array([1.5, -2.0])).ok


def test_the_tolerances_00_states_are_the_checks_tolerances():
    text = "\n".join(c.source for c in nbtools.source(nbtools.ORIENTATION).cells)
    assert "relative $10^{-7}$, some to $10^{-10}$" in text
    assert checks.DEFAULT_RTOL == 1e-7
    limiting = "\n".join(c.source for c in nbtools.source("08_limiting_behaviour").cells)
    assert "RTOL = 1e-10" in limiting
