"""The sandboxes of one grading worker: its job slot's uid, the run's hidden folders and limits, a cgroup for each.

A worker runs one sandbox at a time. Each gets a cgroup of its own (cgroups.py) once the last one has ended, and
what the kernel killed in it for the sandbox's memory is read from that group.
"""

import shutil
import sys
from pathlib import Path

_KERNEL_WORK = "/tmp/work"  # the graded kernel's working folder, inside its sandbox (in its SANDBOX_HOME)

# Run by each kernel before the notebook, leaving no name behind: OpenBLAS takes its work buffers on the
# first matrix product and ends the process when it cannot, so it takes them before any cell runs.
_KERNEL_STARTUP = """def _grader_warm_up():
    import numpy
    numpy.ones((64, 64)) @ numpy.ones((64, 64))


_grader_warm_up()
del _grader_warm_up
"""


class Sandboxes:
    """Every sandbox a worker makes (WorkerSetup: `slot`, `uid_base`, `isolate`, `hidden`, `limits`, `cgroup`).
    `figures`: how the course's figures are drawn; `mpl_cache`: matplotlib's font list, given to each kernel."""

    def __init__(self, setup, figures, mpl_cache):
        from ..gate_in.sandbox import Limits

        self.slot, self.uid_base, self.isolate, self.hidden = setup.slot, setup.uid_base, setup.isolate, setup.hidden
        self.limits, self.cgroup = Limits(**setup.limits), setup.cgroup
        self.figures, self.mpl_cache = figures, mpl_cache
        self.groups, self.last_group = 0, ()  # the sandboxes' cgroups made so far, and the last one

    def clear_slot(self):
        """No process of an earlier sandbox may still hold this job slot's uid (and its process count)."""
        from ..gate_in.sandbox import clear_uid, slot_uid

        if self.isolate:
            left = clear_uid(slot_uid(self.slot, self.uid_base))
            if left:
                print(f"killed {left} leftover process(es) of an earlier sandbox", file=sys.stderr, flush=True)

    def judge_uid(self):
        """The uid the judge runs the tests as, or None: the worker dropped its rights (or has none to drop)."""
        from ..gate_in.sandbox import worker_uid

        return worker_uid(self.slot, self.uid_base) if self.isolate else None

    def sandbox(self, cwd, writable=(), readonly=()):
        from ..gate_in.sandbox import Sandbox, slot_uid

        uid = slot_uid(self.slot, self.uid_base) if self.isolate else None
        return Sandbox(writable=tuple(map(str, writable)), readonly=tuple(map(str, readonly)), hidden=self.hidden,
                       cwd=str(cwd), uid=uid, limits=self.limits, isolate=self.isolate,
                       env=(("NBGRADER_EXECUTION", "autograde"),))

    def new_group(self):
        """A cgroup of its own for a new sandbox (cgroups.py), or () where the worker has none. The earlier groups
        go first, with whatever still runs in them."""
        from ..gate_in import cgroups

        if not self.cgroup:
            return ()
        cgroups.sweep(self.cgroup)
        self.groups += 1
        self.last_group = cgroups.sandbox_group(self.cgroup, f"sb-{self.groups}", self.limits)
        return self.last_group

    def killed_for_memory(self):
        """Whether the kernel killed processes of the last sandbox for its memory (its cgroup's bound)."""
        from ..gate_in import cgroups

        return bool(self.last_group and cgroups.oom_kills(self.last_group))

    def start_zygote(self, scratch):
        """Kernels and clean runners forked warm into each sandbox (zygote.py), where they can be; each zygote sees
        only the course's environment, its own folders (sandbox.own_folders) in a folder of its own."""
        from ffn_helpers.plots import FIGURES_ENV

        from ..gate_beside.rerun import runner_source
        from ..gate_in import zygote
        from ..gate_in.sandbox import own_folders

        if not zygote.usable(self.sandbox("/"), "kernel"):
            return
        home = scratch / "zygote"
        home.mkdir(exist_ok=True)
        env = dict(self.sandbox(home).environment(), **own_folders(home), **{FIGURES_ENV: self.figures})
        zygote.start(env, "kernel")
        zygote.start(env, "runner", runner_source())

    def kernel(self, work, runtime):
        """The sandbox of the student's kernel, in a cgroup of its own: it is given the working folder `work` and
        matplotlib's font list, and first runs _KERNEL_STARTUP (written into `runtime`, its connection file's
        folder)."""
        from ffn_helpers.plots import FIGURES_ENV

        from ..gate_in.sandbox import SANDBOX_HOME, own_folders

        startup = runtime / "00-grader.py"
        startup.write_text(_KERNEL_STARTUP, encoding="utf-8")
        env = (("NBGRADER_EXECUTION", "autograde"), (FIGURES_ENV, self.figures))
        if self.isolate:
            # No folder of the machine is writable in the kernel's sandbox: it works in its own /tmp (memory of a
            # bounded size), where what it was given is shown read-only; of `runtime` it sees its connection file
            # alone, read-only too, and it binds its sockets in that /tmp (kernel.py).
            folders = own_folders(SANDBOX_HOME)  # where its matplotlib and IPython look (Sandbox.environment)
            given = [(f, f"{_KERNEL_WORK}/{f.relative_to(work).as_posix()}") for f in sorted(work.rglob("*"))
                     if f.is_file() and not f.is_symlink()]
            given += [(f, f"{folders['MPLCONFIGDIR']}/{f.name}") for f in sorted(self.mpl_cache.iterdir())
                      if f.is_file()]
            given.append((startup, f"{folders['IPYTHONDIR']}/profile_default/startup/00-grader.py"))
            box = self.sandbox(_KERNEL_WORK).with_(env=env, in_tmp=tuple((str(f), target) for f, target in given))
        else:  # a learner's `check` without the sandbox: its folders on the machine, as any local kernel's
            folders = own_folders(runtime)
            mpl, ipython = Path(folders["MPLCONFIGDIR"]), Path(folders["IPYTHONDIR"])
            shutil.copytree(self.mpl_cache, mpl)
            (ipython / "profile_default" / "startup").mkdir(parents=True)
            shutil.copyfile(startup, ipython / "profile_default" / "startup" / startup.name)
            box = self.sandbox(work, writable=(work, runtime)).with_(
                env=env + (("MPLCONFIGDIR", str(mpl)), ("IPYTHONDIR", str(ipython))))
        return box.with_(cgroup=self.new_group())
