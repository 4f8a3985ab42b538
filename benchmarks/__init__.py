"""Benchmarks that print figures: `make bench` (python -m benchmarks).

Each `bench_*.py` module here has `rows()`, returning a list of `Row`s.
Timings are figures to read, never assertions: nothing here fails on speed.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    name: str
    value: float
    unit: str
    target: str = ""  # what the issue asks for, as text ("<= 1.15")
    note: str = ""
