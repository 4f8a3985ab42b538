"""The optional PyTorch cross-check of 09 and 13, with a real torch: autograd agrees with right answers and
catches a wrong backward pass.

torch is no dependency of the course, so these tests need an environment that has it: `.ci/run`'s
torch step builds one (its own, so that no other step sees torch), installs the CPU build of the
release named there, and runs this file with FFN_REQUIRE_TORCH=1, which turns the skip below into a
failure: CI cannot pass by skipping. Without torch the cell's one-line message is tested in
tests/test_your_own_code.py.
"""

import os

import pytest
from test_your_own_code import TORCH, maskless, run_cell

REQUIRED = os.environ.get("FFN_REQUIRE_TORCH", "") not in ("", "0")


@pytest.fixture(scope="module")
def torch():
    try:
        import torch
    except ImportError as exc:
        why = f"torch is not installed ({exc}); `.ci/run torch` installs it in an environment of its own"
        if REQUIRED:
            pytest.fail(f"FFN_REQUIRE_TORCH is set, but {why}")
        pytest.skip(why)
    return torch


def lines(printed):
    """{label: what the comparison said} for each line torch_check.compare printed."""
    return {" ".join(line.split(":")[0].split()): line.split(":", 1)[1].strip() for line in printed.splitlines()
            if line.startswith("  ") and ("agrees" in line or "DIFFERS" in line)}


@pytest.mark.parametrize("aid, names", [
    ("09_ffn_module", [f"{a} {n}" for a in ("relu", "gelu") for n in ("W1", "b1", "W2", "b2", "x")]),
    ("13_training", ["loss", "W1", "b1", "W2", "b2"]),
])
def test_autograd_agrees_with_right_answers(torch, aid, names):
    printed = run_cell(aid, TORCH, everything_before=True)
    assert f"PyTorch {torch.__version__}: autograd's" in printed, printed
    said = lines(printed)
    assert sorted(said) == sorted(names) and all(v.startswith("agrees") for v in said.values()), printed
    assert printed.strip().endswith("all agree")


@pytest.mark.parametrize("aid", ["09_ffn_module", "13_training"])
def test_autograd_catches_a_backward_pass_without_relus_mask(torch, aid):
    printed = run_cell(aid, TORCH, maskless(aid), everything_before=True)
    said = lines(printed)
    relu = {k.removeprefix("relu "): v for k, v in said.items() if not k.startswith("gelu")}
    assert relu["W1"].startswith("DIFFERS") and relu["b1"].startswith("DIFFERS"), printed
    assert relu["W2"].startswith("agrees") and relu["b2"].startswith("agrees"), printed
    assert printed.strip().endswith("some differ: see the lines above")
