"""Benchmarks that print figures: `make bench` (python -m benchmarks).

Each `bench_*.py` module here has `rows()`, returning a list of `Row`s.
Timings are figures to read, never assertions: nothing here fails on speed.
"""

import resource
import subprocess
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    name: str
    value: float
    unit: str
    target: str = ""  # what the issue asks for, as text ("<= 1.15")
    note: str = ""


def run_timed(cmd, **kwargs):
    """(completed process, wall seconds, CPU seconds of its reaped children) of one command, output captured."""
    cpu0, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    wall, cpu1 = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
