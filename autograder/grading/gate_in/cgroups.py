"""A cgroup of its own for each sandbox, and for each grading worker: limits the kernel counts for a whole tree.

RLIMIT_AS bounds each process alone, and nothing bounds what the kernel holds for a sandbox: its tmpfs pages and
inodes, extended attributes, socket buffers, the processes of all its users. A memory cgroup counts all of it
(cgroup v1's memory.usage_in_bytes includes kernel memory; v2's memory.current always does), a pids cgroup counts
every task of the tree, and a cpu cgroup gives the tree one share of the CPU, however many processes it runs.

Layout, under the cgroup `grade` runs in (in each v1 hierarchy of memory, pids and cpu; in the v2 one):

    ffn-<pid>/                  the run: removed, with all in it, when the run ends (Ctrl-C too)
        w<slot>-<n>/            one worker: its memory bound (the worker, its judges, its sandboxes)
            self/               the worker itself (v2 keeps processes out of a group that has groups inside)
            sb-<k>/             one sandbox: its memory, process and CPU share

The run's groups are made by `grade` (root, or a v2 subtree delegated to it) and each worker's group is handed to
the worker's user, which makes its sandboxes' groups in it. Where none can be made, find() says why and
not_held() names what then does not hold; each process keeps its own rlimits either way.
"""

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ...limits import GiB
from .cgjoin import join_cgroup  # noqa: F401 (the one step both starts take; pool.py joins a worker with it)

ROOT = "/sys/fs/cgroup"
CONTROLLERS = ("memory", "pids", "cpu")
WORKER_OWN = 2 * GiB  # a worker's own memory besides its sandbox: nbgrader, two zygotes, a judge's fork
SHARES_V1, WEIGHT_V2 = 1024, 100  # each the default: every sandbox, and every worker, gets one equal share


@dataclass(frozen=True)
class Hierarchy:
    """Where this process's groups go: `kind` "v2" (one folder) or "v1" (a folder per controller)."""

    kind: str
    base: tuple  # folders of the cgroup this process is in, one per hierarchy used


def sandbox_memory(limits):
    """A sandbox's memory as a whole: what one of its processes may map, and its two tmpfs (/tmp, /dev/shm)."""
    return limits.memory + 2 * limits.tmp_size


def worker_memory(limits):
    """A worker's bound: its sandbox's, and its own."""
    return sandbox_memory(limits) + WORKER_OWN


def _own_groups(proc_cgroup):
    """{controller or "": path} of this process's cgroups ("": the v2 hierarchy)."""
    groups = {}
    for line in Path(proc_cgroup).read_text(encoding="ascii").splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            groups[name] = (names, path)
    return groups


def find(root=None, proc_cgroup="/proc/self/cgroup"):
    """(Hierarchy, "") where this process may make groups with memory, pids and cpu; else (None, why)."""
    root = root or ROOT
    try:
        groups = _own_groups(proc_cgroup)
    except (OSError, ValueError) as exc:
        return None, f"cannot read this process's cgroups ({exc})"
    whys = []
    if "" in groups:
        found, why = _find_v2(root, groups[""][1])
        if found:
            return found, ""
        whys.append(why)
    found, why = _find_v1(root, groups)
    if found:
        return found, ""
    return None, "; ".join(whys + [why])


def _find_v2(root, path):
    for mount in (root, os.path.join(root, "unified")):
        if os.path.isfile(os.path.join(mount, "cgroup.controllers")):
            base = os.path.normpath(mount + path)
            have = _read(os.path.join(base, "cgroup.controllers")).split()
            missing = [c for c in CONTROLLERS if c not in have]
            if missing:
                return None, f"cgroup v2 without the {', '.join(missing)} controller(s) delegated"
            if not os.access(base, os.W_OK):
                return None, f"cgroup v2's {base} is not writable here"
            return Hierarchy("v2", (base,)), ""
    return None, "no cgroup v2 mounted"


def _find_v1(root, groups):
    missing = [c for c in CONTROLLERS if c not in groups]
    if missing:
        return None, f"no cgroup v1 {', '.join(missing)} controller(s)"
    bases = []
    for c in CONTROLLERS:
        names, path = groups[c]
        mount = next((m for m in (os.path.join(root, names), os.path.join(root, c)) if os.path.isdir(m)), None)
        base = os.path.normpath(mount + path) if mount else None
        if base is None or not os.path.isdir(base):
            return None, f"cgroup v1's {c} controller is not mounted under {root}"
        if not os.access(base, os.W_OK):
            return None, f"cgroup v1's {base} is not writable here (unprivileged, or mounted read-only)"
        bases.append(base)
    return Hierarchy("v1", tuple(bases)), ""


def _read(path):
    try:
        return Path(path).read_text(encoding="ascii")
    except OSError:
        return ""


def _write(folder, name, value, optional=False):
    """Write `value` to a group's file; an `optional` file the group lacks is left (a cgroup folder refuses to make
    one: EACCES, not ENOENT)."""
    path = Path(folder, name)
    if optional and not path.exists():
        return
    path.write_text(str(value), encoding="ascii")


def make(kind, parents, name, memory=None, pids=None, uid=None, inner=False):
    """Make group `name` in each folder of `parents`; return its folders. `memory` (bytes, kernel memory and no
    swap included) and `pids` bound it, when given; it gets one equal CPU share. `uid`: the user it is handed to
    (who may then move its own processes in and make groups inside). `inner`: groups will be made inside it."""
    folders = tuple(os.path.join(p, name) for p in parents)
    for folder in folders:
        os.mkdir(folder, 0o755)
    try:
        for folder in folders:
            _limit(kind, folder, memory, pids)
            if kind == "v2" and inner:
                _write(folder, "cgroup.subtree_control", " ".join(f"+{c}" for c in CONTROLLERS))
            if uid is not None:
                _hand_over(folder, uid)
    except BaseException:
        remove(folders)
        raise
    return folders


def _limit(kind, folder, memory, pids):
    """The limits of one group's folder (v1: each folder holds one controller's files; the others are absent)."""
    if kind == "v2":
        if memory is not None:
            _write(folder, "memory.max", memory)
            _write(folder, "memory.swap.max", 0, optional=True)  # no swap: the bound is memory, not memory+disk
        if pids is not None:
            _write(folder, "pids.max", pids)
        _write(folder, "cpu.weight", WEIGHT_V2)
        return
    if memory is not None:
        _write(folder, "memory.limit_in_bytes", memory, optional=True)  # counts kernel memory (slab, tmpfs) too
        _write(folder, "memory.memsw.limit_in_bytes", memory, optional=True)  # and swap, where it is counted
        _write(folder, "memory.kmem.tcp.limit_in_bytes", memory, optional=True)  # TCP buffers: v1 counts them apart
    if pids is not None:
        _write(folder, "pids.max", pids, optional=True)
    _write(folder, "cpu.shares", SHARES_V1, optional=True)


def _hand_over(folder, uid):
    """Delegate `folder` to `uid`: the folder and the files a delegate writes (cgroup v2's delegation rules)."""
    os.chown(folder, uid, uid)
    for name in ("cgroup.procs", "cgroup.threads", "cgroup.subtree_control", "tasks"):
        with contextlib.suppress(FileNotFoundError):
            os.chown(os.path.join(folder, name), uid, uid)


def _pids(folder):
    return [int(p) for p in _read(os.path.join(folder, "cgroup.procs")).split()]


def remove(folders, timeout=20.0):
    """Kill every process in the groups `folders` (and the groups inside them), then remove them all; return the
    folders that could not be removed (a process that would not die in `timeout` seconds)."""
    left = []
    for folder in folders:
        inner = sorted((str(p) for p in Path(folder).rglob("*") if p.is_dir()), key=len, reverse=True)
        for group in [*inner, folder]:
            if os.path.isdir(group) and not _kill_and_remove(group, timeout):
                left.append(group)
    return left


def _kill_and_remove(group, timeout):
    deadline = time.monotonic() + timeout
    if os.path.exists(os.path.join(group, "cgroup.kill")):  # v2: the kernel kills them all, forks in flight too
        with contextlib.suppress(OSError):
            _write(group, "cgroup.kill", 1)
    while True:
        for pid in _pids(group):  # again until none is left: a process may fork while its group is read
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            os.rmdir(group)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


def oom_kills(folders):
    """How many processes the kernel killed in the groups `folders` for going past their memory bound."""
    count = 0
    for folder in folders:
        for name in ("memory.events", "memory.oom_control"):  # v2, v1
            for line in _read(os.path.join(folder, name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit():
                    count += int(value)
    return count


def read_back(group, *names):
    """The number the kernel reports in the first of the files `names` that one of `group`'s folders holds (v1: a
    folder per controller), or None: what holds, not what was written (a refused write leaves no bound)."""
    for name in names:
        for folder in group:
            text = _read(os.path.join(folder, name)).split()
            if text and text[0].isdigit():
                return int(text[0])
    return None


def kind_of(folder):
    """"v2" or "v1": the kind of hierarchy a group's folder is in."""
    return "v2" if os.path.isfile(os.path.join(folder, "cgroup.controllers")) else "v1"


_RUN = {}  # "folders": this run's group, while it runs


def start_run(root=None):
    """Make this run's group (end_run removes it); return why none can be made, or ''. Only `grade` makes one:
    without it, workers get no group (a Dask worker's run has no end here to remove it at)."""
    found, why = find(root or ROOT)
    if found is None:
        return why
    try:
        if found.kind == "v2":  # the controllers, in the groups made below this process's own
            _enable(found.base[0])
        _RUN["folders"] = make(found.kind, found.base, f"ffn-{os.getpid()}-{time.monotonic_ns()}", inner=True)
    except OSError as exc:
        return f"cannot make a group in {found.base[0]} ({exc.strerror or exc})"
    return ""


def _enable(base):
    """Enable memory, pids and cpu in the groups below `base` (v2). The kernel refuses (EBUSY) where `base` holds
    processes and is not the root: there the machine's manager must give this process a subtree of its own."""
    have = _read(os.path.join(base, "cgroup.subtree_control")).split()
    wanted = [c for c in CONTROLLERS if c not in have]
    if wanted:
        _write(base, "cgroup.subtree_control", " ".join(f"+{c}" for c in wanted))


def worker_group(name, limits, uid):
    """A worker's group in this run's (bounded by worker_memory, handed to `uid`) and the folders its own process
    joins (`self` inside it), or ((), ()) when there are no cgroups."""
    run = _RUN.get("folders", ())
    if not run:
        return (), ()
    kind = kind_of(run[0])
    _RUN["workers"] = _RUN.get("workers", 0) + 1  # a name of its own, whichever pool of the run starts it
    group = make(kind, run, f"{name}-{_RUN['workers']}", memory=worker_memory(limits), uid=uid, inner=True)
    return group, make(kind, group, "self", uid=uid)


def sandbox_group(worker, name, limits):
    """A sandbox's group inside a worker's (`worker`: its folders), bounded by sandbox_memory and limits.nproc."""
    return make(kind_of(worker[0]), worker, name, memory=sandbox_memory(limits), pids=limits.nproc)


def sweep(worker):
    """Remove the sandboxes' groups in a worker's, and kill what still runs in them (not the worker's own)."""
    return remove([str(p) for folder in worker for p in Path(folder).glob("sb-*") if p.is_dir()])


def end_run():
    """Remove this run's group, everything in it killed (the run's end, however it ends)."""
    _RUN.pop("workers", None)
    return remove(_RUN.pop("folders", ()))


def not_held(why):
    """What does not hold where no cgroup can be made (`why`), as one phrase (unsandboxed.say_not_held's form)."""
    return (f"a memory bound on each sandbox as a whole and on each grading worker, counting kernel memory "
            f"(tmpfs pages and inodes, extended attributes, socket buffers), a process count per sandbox, and an "
            f"equal CPU share per sandbox, whatever its number of processes (no cgroups: {why})")
