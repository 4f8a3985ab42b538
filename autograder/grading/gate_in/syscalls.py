"""The system calls a sandboxed process may not make: a seccomp filter that every one of them starts under.

Memory a process holds outside its address space escapes RLIMIT_AS, and a mount of its own escapes
the sandbox's bounded /tmp. So no process in a sandbox may

- make a user namespace (`unshare`, `clone` with CLONE_NEWUSER): in one it could mount a tmpfs of any size;
- create anonymous files (`memfd_create`) or inter-process objects (System V shared memory, semaphore sets and
  message queues: `shmget`, `semget`, `msgget`; POSIX message queues: `mq_open`): what they hold counts against
  no limit of the process, and lives on after it;
- set extended attributes (`setxattr`, `lsetxattr`, `fsetxattr`, `setxattrat`): a tmpfs keeps their values in
  the kernel's memory, which neither its size nor RLIMIT_AS counts (gigabytes, with the tmpfs showing 0 used);
- start a session of its own (`setsid`): each session is a scheduling group of the kernel's own (autogroup), so
  a sandbox that made hundreds of them would take the CPU from the student graded beside it; kept in the one
  session its sandbox started in, all its processes share one fair part;
- call `clone3`, whose flags a filter cannot read: it gets ENOSYS, and the C library falls back to `clone`;
- use another ABI of the machine (i386 or x32 calls from an x86-64 process), whose numbers differ.

Stdlib only, and no import of the grader: `Sandbox.command` runs this file's source as the first program in
the sandbox (`python -I -S -c <source> --then PROGRAM ARGS`: it installs the filter, then execs PROGRAM, which
keeps it), and a zygote's child (zygote_main.py, which gets this source prepended) installs it before it starts.
"""

import ctypes
import errno
import os
import platform
import sys

# (AUDIT_ARCH_*, {call: number}) of each machine the filter knows; elsewhere refuse() says it cannot.
MACHINES = {
    "x86_64": (0xC000003E, {"memfd_create": 319, "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240,
                            "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "setxattrat": 463,
                            "setsid": 112, "unshare": 272, "clone": 56, "clone3": 435}),
    "aarch64": (0xC00000B7, {"memfd_create": 279, "shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180,
                             "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "setxattrat": 463,
                             "setsid": 157, "unshare": 97, "clone": 220, "clone3": 435}),
}
_X32_BIT = 0x40000000  # x86-64's x32 ABI: the same calls under numbers with this bit set
CLONE_NEWUSER = 0x10000000
_REFUSED = ("memfd_create", "shmget", "semget", "msgget", "mq_open",  # EPERM, whatever the arguments
            "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "setsid")
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000  # SECCOMP_RET_*
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ/JGE/JSET|K, BPF_RET|K
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (arg0's low 32 bits: little-endian machines)
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def program(machine=None):
    """The filter as (code, jump if true, jump if false, k) instructions, for `machine` (default: this one)."""
    machine = machine or platform.machine()
    arch, nr = MACHINES[machine]
    eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    # Jumps name a label; assemble() turns them into the relative offsets BPF wants.
    steps = [(_LD, None, None, _ARCH), (_JEQ, None, "no", arch), (_LD, None, None, _NR)]
    if machine == "x86_64":
        steps.append((_JGE, "no", None, _X32_BIT))
    steps += [(_JEQ, "refuse", None, nr[call]) for call in _REFUSED]
    steps += [(_JEQ, "no", None, nr["clone3"]), (_JEQ, "flags", None, nr["unshare"]),
              (_JEQ, "flags", None, nr["clone"]), (_RET, None, None, _ALLOW),
              ("flags", _LD, None, None, _ARG0), (_JSET, "refuse", None, CLONE_NEWUSER), (_RET, None, None, _ALLOW),
              ("refuse", _RET, None, None, eperm), ("no", _RET, None, None, enosys)]
    return assemble(steps)


def assemble(steps):
    """[(label?, code, jt label, jf label, k)] -> [(code, jt, jf, k)] with jumps as offsets from the next step."""
    steps = [s if isinstance(s[0], str) else (None, *s) for s in steps]
    where = {label: i for i, (label, *_) in enumerate(steps) if label}
    return [(code, where[jt] - i - 1 if jt else 0, where[jf] - i - 1 if jf else 0, k)
            for i, (_, code, jt, jf, k) in enumerate(steps)]


def refuse():
    """Install the filter on this process and all it will start; raise OSError if it cannot be installed."""
    if sys.platform != "linux" or platform.machine() not in MACHINES:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {sys.platform} on {platform.machine()}")

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(Instruction))]

    steps = program()
    instructions = (Instruction * len(steps))(*[Instruction(*s) for s in steps])
    prog = Program(len(steps), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    for args in ((_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
                 (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0)):
        if libc.prctl(*[ctypes.c_ulong(a) for a in args]) != 0:
            raise OSError(ctypes.get_errno(), f"prctl{args[:2]}: {os.strerror(ctypes.get_errno())}")


THEN = "--then"

if __name__ == "__main__" and sys.argv[1:2] == [THEN]:  # python -c <this source> --then PROGRAM ARGS
    refuse()
    os.execvp(sys.argv[2], sys.argv[2:])
