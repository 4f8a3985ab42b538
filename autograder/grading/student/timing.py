"""Where one student's time went in a grading worker: each stage's wall seconds, the worker's CPU and peak memory.

A worker's reply says so (wall seconds, and CPU seconds of the worker itself and of its children it reaped: the
judges, and the sandboxes' bwrap; not the kernel or the learner's process, which a sandbox's kill leaves to the
system). The bench reads them from the run's logs/timing.jsonl.
"""

import os
import time

TIMED_STAGES = ("notebook run", "notebook run: kernel start", "notebook run: cells", "notebook run: kernel stop",
                "clean re-run", "feedback")


class Timing:
    """One student's stages, from start() to report()."""

    def __init__(self):
        self.stages, self.started, self.cpu = {}, time.monotonic(), cpu_seconds()

    def start(self):
        """A new student: nothing counted yet, the clock and the worker's peak memory started anew."""
        self.stages, self.started, self.cpu = {}, time.monotonic(), cpu_seconds()
        forget_peak_memory()

    def add(self, stage, seconds):
        self.stages[stage] = self.stages.get(stage, 0.0) + seconds

    def since(self, stage, started):
        """Add the wall seconds since `started` to `stage` (see TIMED_STAGES)."""
        self.add(stage, time.monotonic() - started)

    def seconds(self):
        return time.monotonic() - self.started

    def text(self):
        return ", ".join(f"{k} {v:.1f} s" for k, v in self.stages.items())

    def report(self):
        """The reply's timing: each stage, nbgrader's part, the rest, the CPU seconds and the peak memory."""
        spent = [b - a for a, b in zip(self.cpu, cpu_seconds(), strict=True)]
        out = breakdown(self.stages, self.seconds(), spent)
        out["worker peak MiB"] = peak_memory_mib()
        return out


def cpu_seconds():
    """(CPU seconds of this process, of its reaped children): os.times, which Windows has too (no `resource`)."""
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


def forget_peak_memory():
    """Start this process's peak resident memory (VmHWM) anew, so that each student's is their own (Linux: writing
    5 to clear_refs resets it). Where that is refused (a worker graded as root runs as a user of its own, and the
    kernel then gives its /proc files to root) or there is no /proc, the peak stays the worker's since it started."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        pass


def peak_memory_mib():
    """This process's peak resident memory (since forget_peak_memory where it could reset it), in MiB: the worker
    reports its own, no cgroup needed. -1 where the system does not say (no /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return round(next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024, 1)
    except (OSError, StopIteration, ValueError):
        return -1


def breakdown(timing, total, cpu):
    """One student's timing: each stage's wall seconds, nbgrader's own part of the notebook run, the rest."""
    out = {stage: round(timing.get(stage, 0.0), 3) for stage in TIMED_STAGES}
    run = timing.get("notebook run", 0.0)
    out["notebook run: nbgrader"] = round(max(0.0, run - sum(v for k, v in timing.items()
                                                             if k.startswith("notebook run: "))), 3)
    out["other"] = round(max(0.0, total - run - timing.get("clean re-run", 0.0) - timing.get("feedback", 0.0)), 3)
    out["total"] = round(total, 3)
    out["worker cpu"], out["reaped children cpu"] = round(cpu[0], 3), round(cpu[1], 3)
    return out
