"""Joining a sandbox's cgroup: the one step both ways of starting a sandbox take before anything of it runs.

`Sandbox.command` starts with this file's source (`python -I -S -c <source> GROUP... --join-then PROGRAM ARGS`: it
moves itself into each GROUP, then execs PROGRAM, bubblewrap, which and all it starts stay there), and a zygote's
keeper (zygote_main.py, which gets this source prepended) calls join_cgroup before it enters the sandbox and
forks the process there. So every process of a sandbox is counted by its cgroup from its first instruction.

Stdlib only, and no import of the grader. Writing "0" to a group's cgroup.procs moves the writing process (cgroup
v1 and v2 alike): no pid to translate between the namespaces a process may see.
"""

import os
import sys


def join_cgroup(groups):
    """Move this process into each folder of `groups` (one per cgroup hierarchy); OSError if one refuses."""
    for group in groups:
        fd = os.open(os.path.join(group, "cgroup.procs"), os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)


JOIN_THEN = "--join-then"

if __name__ == "__main__" and JOIN_THEN in sys.argv[1:]:  # python -c <this source> GROUP... --join-then PROGRAM ARGS
    _at = sys.argv.index(JOIN_THEN)
    join_cgroup(sys.argv[1:_at])
    os.execvp(sys.argv[_at + 1], sys.argv[_at + 1:])
