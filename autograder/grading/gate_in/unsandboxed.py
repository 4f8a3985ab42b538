"""The learner's code without the sandbox (`check` on macOS, Windows, or Linux without bubblewrap): limits, processes.

What each system lets a process hold:

- Linux: `prlimit`, or else Python's `resource` module, caps address space, CPU time and file size;
- macOS: `resource` caps CPU time and file size; its kernel does not enforce RLIMIT_AS, so memory is not held
  (and RLIMIT_AS is not set there);
- Windows: no `resource` module, so none of the three.
The number of processes is capped by prlimit alone (the kernel counts them per user).

The time limits hold everywhere: the grader's own clock ends a cell or a test that overruns (nbclient's
cell timeout, the clean re-run's deadlines), by killing the process tree where an interrupt is not enough.
Which limits do not hold is said in one line (`not_held`), never left silent.
"""

import contextlib
import os
import shutil
import signal
import subprocess
import sys

# Where util-linux's `prlimit` is missing: set what the system lets a process set, then become the command.
# (The process count is left: macOS counts it per user.) A limit the system refuses is left unset; `not_held` names
# those known not to hold (macOS: memory).
SET_LIMITS = """import os, resource, sys
memory, cpu, fsize = map(int, sys.argv[1:4])
for name, value in (("RLIMIT_AS", memory), ("RLIMIT_CPU", cpu), ("RLIMIT_FSIZE", fsize), ("RLIMIT_CORE", 0)):
    if name == "RLIMIT_AS" and sys.platform == "darwin":
        continue  # not enforced there (not_held says so); left alone, it cannot end the process by surprise
    try:
        resource.setrlimit(getattr(resource, name), (value, value))
    except (AttributeError, ValueError, OSError):
        pass
os.execvp(sys.argv[4], sys.argv[4:])
"""


def has_resource():
    """True where Python's `resource` module exists (not on Windows)."""
    try:
        import resource  # noqa: F401
    except ImportError:
        return False
    return True


def limits_prefix(limits):
    """Where `prlimit` is missing: the command that sets `limits` by Python's `resource`, then runs what follows it.

    Nothing without `resource` (Windows): there a process cannot become another either (os.execv starts
    a new one and ends, which would look to the grader like a process that died at once)."""
    if has_resource():
        return [sys.executable, "-c", SET_LIMITS, str(limits.memory), str(limits.cpu), str(limits.fsize)]
    return []


def reads_own_memory():
    """True where a process can read how much address space it maps already (/proc/self/status: Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return any(line.startswith("VmSize:") for line in f)
    except OSError:
        return False


def not_held():
    """The limits this machine cannot hold without the sandbox, as one phrase each (empty: all of them hold)."""
    if shutil.which("prlimit") is None and not has_resource():
        return ["memory, CPU time, file size and the number of processes (this Python has no `resource` module, "
                "as on Windows)"]
    lost = []
    if sys.platform == "darwin":
        lost.append("memory (macOS does not enforce RLIMIT_AS)")
    if shutil.which("prlimit") is None:  # RLIMIT_NPROC counts all the user's processes: prlimit adds them up first
        lost.append("the number of processes (no prlimit)")
    if sys.platform != "darwin" and not reads_own_memory():
        lost.append("the tests' memory (no /proc/self/status to read what their process maps already)")
    if not hasattr(os, "fork"):
        lost.append("the tests' memory and CPU time (no fork: they run in the check's own process)")
    return lost


def say_not_held(say):
    """One line naming the limits that do not hold here, if any."""
    lost = not_held()
    if lost:
        say(not_held_line(lost, "The time limits hold: the check stops what overruns."))


def not_held_line(lost, held):
    """The one line that names the limits `lost` (phrases) and says what holds instead (`held`): `check` without
    the sandbox, `grade` without cgroups."""
    return f"Limits not held here: {'; '.join(lost)}. {held}"


def new_group():
    """Popen arguments that start a process in a group of its own, which `interrupt` and `kill_tree` reach."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def interrupt(proc):
    """Ask `proc` to stop what it runs: SIGINT to its group, CTRL_BREAK on Windows; where neither exists, nothing
    (the caller's grace then passes and it kills the tree)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGINT)
        elif hasattr(signal, "CTRL_BREAK_EVENT"):
            proc.send_signal(signal.CTRL_BREAK_EVENT)


def kill_tree(proc):
    """End `proc` and what it started: its process group (POSIX), `taskkill /T` (Windows), else the process."""
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    elif os.name == "nt":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30, check=False)
    with contextlib.suppress(ProcessLookupError, OSError):
        proc.kill()
