"""What the floods of issue 51 cost the grader, beside an honest twin: wall time, the time past the cells, peak memory.

Each is 02's completed learner notebook graded by `python -m autograder check` (whose process is the grading
worker, with no cgroup) at the course's cell time limit (60 s), its x_try cell replaced by the flood (tests/floods.py):
- no flood: the honest twin;
- empty display_data messages through the kernel's own session for 45 s, as the issue found them (350,000 kept
  made a 28.8 MiB notebook and took 104 s after the cells), and through IPython's public publish_display_data({});
- one validly signed message of 60 million empty JSON objects (180 MB: 4 GiB in the worker without the bounds),
  and one of 30 million (90 MB), which the relay lets through and the client does not decode.
The target is the issue's: a flood costs at most one cell time limit plus 10 s beyond its twin, and the worker
stays within its unflooded peak plus 256 MiB. `past the cells` is the grading worker's own time outside the
notebook run's cells (check.TIMING_ENV: its stages). Timings are figures to read, never assertions.
"""

import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks import Row

MiB = 1024 * 1024
CELL_TIMEOUT = 60  # the course's Execute.timeout
SECONDS = 45  # how long the floods ran, each under the cell time limit


def _floods():
    import floods

    return {"no flood (the honest twin)": None,
            f"empty display_data, {SECONDS} s": floods.empty_outputs(SECONDS),
            f"publish_display_data({{}}), {SECONDS} s": floods.published_empty_outputs(SECONDS),
            "one message of 60 million objects (180 MB)": floods.objects(60_000_000),
            "one message of 30 million objects (90 MB)": floods.objects(30_000_000)}


def _graded(folder, edit):
    import floods

    timing = folder / "timing.json"
    started = time.monotonic()
    result, peak = floods.graded(folder, edit, cell_timeout=CELL_TIMEOUT, timing=timing)
    wall = time.monotonic() - started
    worker = json.loads(timing.read_text(encoding="utf-8"))["stages"].get("worker", {})
    past = worker.get("total", 0.0) - worker.get("notebook run: cells", 0.0)
    return result, wall, past, peak


def rows():
    out, twin = [], None
    with tempfile.TemporaryDirectory(prefix="ffn-bench-floods-") as tmp:
        for i, (label, edit) in enumerate(_floods().items()):
            folder = Path(tmp) / str(i)
            folder.mkdir()
            load = os.getloadavg()[0]
            result, wall, past, peak = _graded(folder, edit)
            note = f"{result['status']} {result['score']:g}/{result['max_score']:g}; load average {load:.1f}"
            if twin is None:
                twin = (wall, peak)
                out += [Row(f"{label}: check", wall, "s", "", note),
                        Row(f"{label}: past the cells", past, "s", "", "the grading worker's own"),
                        Row(f"{label}: worker's peak", peak / MiB, "MiB", "", "VmHWM, no cgroup")]
                continue
            out += [Row(f"{label}: check", wall, "s", f"<= {twin[0] + CELL_TIMEOUT + 10:.0f}", note),
                    Row(f"{label}: past the cells", past, "s", "", f"the twin: {out[1].value:.1f} s"),
                    Row(f"{label}: worker's peak", peak / MiB, "MiB", f"<= {(twin[1] + 256 * MiB) / MiB:.0f}",
                        "VmHWM, no cgroup")]
    return out
