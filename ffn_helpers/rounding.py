"""What float64 rounding does to a short dot product z = x · w + b, independently of the machine.

numpy's `x @ w` hands the sum to BLAS, and BLAS picks a kernel for the CPU: the kernel
decides in which order the products are added and whether a product and an addition are
fused into one rounding (a fused multiply-add, FMA). So `x @ w + b` may differ in its last
bits from one machine to the next. These functions give results that do not depend on it:

- `dot_in_order`: the sum in one stated order (left to right, each product and each
  addition rounded once), the same on every IEEE-754 machine;
- `every_rounding`: every value that *any* order, with or without FMAs, can give;
- `error_bound`: the textbook bound on how far any of them can be from the exact value.
"""

import itertools
import math
from fractions import Fraction

import numpy as np

UNIT_ROUNDOFF = 2.0**-53  # float64, round to nearest


def dot_in_order(x, w, b=0.0):
    """((x[0]·w[0] + x[1]·w[1]) + ...) + b with Python floats: one rounding per operation.

    Not `sum()`: from Python 3.12 on, `sum` of floats is compensated (it keeps the
    rounding errors), so it is not one fixed order of plain additions on every version.
    CPython evaluates `a * b` and `+` as separate operations, so no FMA either.
    """
    total = 0.0
    for xi, wi in zip(_floats(x), _floats(w), strict=True):
        total = total + xi * wi
    return total + float(b)


def every_rounding(x, w, b=0.0):
    """{value: one evaluation order giving it} over every way float64 can compute x · w + b.

    Every way means: any grouping and order of the additions of the products and b, and each
    product either rounded on its own or fused (FMA) into the addition that takes it. Each
    operation is rounded to nearest exactly as IEEE 754 prescribes (done here with exact
    fractions), so the result is the same on every machine. Meant for a handful of terms:
    the number of groupings grows like (2n - 3)!!.
    """
    leaves = [_Leaf(Fraction(xi) * Fraction(wi), f"{xi!r}*{wi!r}", product=f"{xi!r}, {wi!r}")
              for xi, wi in zip(_floats(x), _floats(w), strict=True)]
    leaves.append(_Leaf(Fraction(float(b)), repr(float(b)), product=None))
    if len(leaves) > 7:
        raise ValueError(f"every_rounding is for short sums; got {len(leaves)} terms")
    found = {}
    for value, how in _combine(tuple(leaves)):
        found.setdefault(float(value), how)
    return dict(sorted(found.items()))


def error_bound(x, w, b=0.0):
    """γ_(n+1) · (Σ|x_i w_i| + |b|), γ_k = k·u / (1 - k·u): the distance from the exact value
    of x · w + b (with the stored floats) that no evaluation order, with or without FMA,
    can exceed (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.5)."""
    x, w = _floats(x), _floats(w)
    k = len(x) + 1  # the bias is one more term: a dot product of (x, 1) with (w, b)
    gamma = k * UNIT_ROUNDOFF / (1 - k * UNIT_ROUNDOFF)
    return gamma * (math.fsum(abs(xi * wi) for xi, wi in zip(x, w, strict=True)) + abs(float(b)))


def exact_value(x, w, b=0.0):
    """x · w + b computed exactly from the stored floats, then rounded once."""
    return float(sum((Fraction(xi) * Fraction(wi) for xi, wi in zip(_floats(x), _floats(w), strict=True)),
                     Fraction(float(b))))


class _Leaf:
    """One term of the sum: `exact` value; `product` is "x_i, w_i" for a product (it may be fused), else None."""

    __slots__ = ("exact", "text", "product")

    def __init__(self, exact, text, product):
        self.exact, self.text, self.product = exact, text, product


def _round(q):
    return Fraction(float(q))  # int / int in CPython rounds correctly (to nearest, ties to even)


def _combine(terms):
    """Yield (rounded value, text) for every evaluation of the sum of `terms`."""
    if len(terms) == 1:
        leaf = terms[0]
        yield _round(leaf.exact), leaf.text
        return
    first, rest = terms[0], terms[1:]
    # Split into two non-empty groups; `first` always goes left, so each split is met once.
    for r in range(len(rest)):
        for chosen in itertools.combinations(range(len(rest)), r):
            left = (first, *(rest[i] for i in chosen))
            right = tuple(t for i, t in enumerate(rest) if i not in chosen)
            lefts, rights = list(_combine(left)), list(_combine(right))
            for (a, ta), (c, tc) in itertools.product(lefts, rights):
                yield _round(a + c), f"({ta} + {tc})"
            for single, others in ((left, rights), (right, lefts)):
                if len(single) == 1 and single[0].product:  # an FMA: the product is not rounded
                    for c, tc in others:
                        yield _round(single[0].exact + c), f"fma({single[0].product}, {tc})"


def _floats(values):
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]
