"""A grading worker's peak memory under the stdin flood of issue 41, against its bound.

The flood: twenty 200 MiB messages on the kernel's stdin channel, which nothing reads, from a free cell of 02's
completed learner notebook, graded by `python -m autograder check` (whose process is the grading worker) with the
channels' budget as configured (gate_in/channels.py). The bound is the worker's peak on the same notebook
unflooded plus what the budget lets in (tests/floods.py's worker_bound). Without the budget the worker reached
2.9 GiB; the sandbox's own memory limit is 2 GiB.
"""

import os
import tempfile
from pathlib import Path

from benchmarks import Row

MiB = 1024 * 1024


def rows():
    import floods

    from autograder.grading.gate_in import channels

    with tempfile.TemporaryDirectory(prefix="ffn-bench-channels-") as tmp:
        quiet, noisy = Path(tmp) / "unflooded", Path(tmp) / "flooded"
        quiet.mkdir()
        noisy.mkdir()
        _, unflooded = floods.graded(quiet)
        load = os.getloadavg()[0]
        result, peak = floods.graded(noisy, floods.flood("stdin", 200 * MiB, 20))
    bound = floods.worker_bound(unflooded, channels.BUDGET)
    note = (f"budget {channels.BUDGET // MiB} MiB a kernel run; the run: {result['status']}; "
            f"load average {load:.1f}")
    return [Row("a grading worker's peak memory, no flood", unflooded / MiB, "MiB", "", "02 completed, check"),
            Row("a grading worker's peak memory under the stdin flood", peak / MiB, "MiB",
                f"<= {bound / MiB:.0f}", f"20 x 200 MiB on stdin; {note}")]
