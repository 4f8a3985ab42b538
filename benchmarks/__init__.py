"""Benchmarks that print figures: `make bench` (python -m benchmarks).

Each `bench_*.py` module here has `rows()`, returning a list of `Row`s.
Timings are figures to read, never assertions: nothing here fails on speed.
"""

import contextlib
import os
import re
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# Benches reuse the suite's helpers (nbtools, the browser's LabServer, report fixtures), which import one another
# by their plain names, as tests/conftest.py makes them importable for pytest.
TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


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


class TreePeaks:
    """Peak resident memory (VmHWM) of `root` and the processes under it whose command line holds each needle.

    Only that tree counts: other work on the machine (a notebook, another grading) must not.
    """

    def __init__(self, root, needles):
        self.root, self.peaks, self._stop = root, dict.fromkeys(needles, 0), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peaks

    def _parents(self):
        parents = {}
        for entry in filter(str.isdigit, os.listdir("/proc")):
            with contextlib.suppress(OSError, AttributeError):
                status = Path(f"/proc/{entry}/status").read_text()
                parents[int(entry)] = (int(re.search(r"^PPid:\s*(\d+)", status, re.M).group(1)), status)
        return parents

    def _run(self):
        while not self._stop.wait(0.1):
            parents = self._parents()
            for pid, (ppid, status) in parents.items():
                while ppid not in (0, 1, self.root) and ppid in parents:
                    ppid = parents[ppid][0]
                if self.root not in (pid, ppid):
                    continue
                with contextlib.suppress(OSError, AttributeError):
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    rss = int(re.search(r"^VmHWM:\s*(\d+) kB", status, re.M).group(1)) * 1024
                    for needle in self.peaks:
                        if needle in cmdline:
                            self.peaks[needle] = max(self.peaks[needle], rss)
