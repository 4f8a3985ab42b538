"""The system calls a sandboxed process may make: a seccomp filter, an allow-list, that every one of them starts under.

The filter lists what is allowed; every other call is refused. The list is Docker's default profile's (moby's
profiles, seccomp/default.json: the calls it allows every container, whatever its capabilities), less what holds
memory past the sandbox's limits or its CPU past its fair part. Memory a process holds outside its address space
escapes RLIMIT_AS, and a mount of its own escapes the sandbox's bounded /tmp. So no process in a sandbox may

- make a namespace (`unshare`, `clone` with any CLONE_NEW* flag): in a user namespace of its own it could mount a
  tmpfs of any size;
- create anonymous files (`memfd_create`, `memfd_secret`) or inter-process objects (System V shared memory,
  semaphore sets and message queues: `shmget`, `semget`, `msgget`; POSIX message queues: `mq_open`): what they hold
  counts against no limit of the process, and lives on after it;
- set extended attributes (`setxattr`, `lsetxattr`, `fsetxattr`, `setxattrat`): a tmpfs keeps their values in
  the kernel's memory, which neither its size nor RLIMIT_AS counts (gigabytes, with the tmpfs showing 0 used);
- start a session of its own (`setsid`): each session is a scheduling group of the kernel's own (autogroup), so
  a sandbox that made hundreds of them would take the CPU from the student graded beside it; kept in the one
  session its sandbox started in, all its processes share one fair part;
- use another ABI of the machine (i386 or x32 calls from an x86-64 process, arm32 from an arm64 one), whose
  numbers differ.

Those named above get EPERM ("operation not permitted": the learner's error says what happened). Every call not on
the list gets ENOSYS, as from a kernel that lacks it: a library meets that on any older kernel and falls back to an
older call, where EPERM would be an error it passes on. `clone3` is one: its flags sit in memory, which a filter
cannot read, so it is not on the list and the C library, told ENOSYS, falls back to `clone`, whose flags it reads.

Two halves. The grader's compiles the filter with libseccomp (`pyseccomp`, over the system's libseccomp), which
knows each machine's call numbers, ABIs and argument checks, into classic BPF: program(). The sandbox's is
stdlib only and imports nothing of the grader: `Sandbox.command` runs source() (this file's code with the compiled
filter written in as FILTER) as the first program in the sandbox (`python -I -S -c <source> --then PROGRAM ARGS`:
it installs the filter, then execs PROGRAM, which keeps it), and a zygote's child (zygote_main.py, which gets
source() prepended) installs it before it starts: refuse().
"""

import ctypes
import errno
import functools
import os
import platform
import sys
import tempfile
from pathlib import Path

THEN = "--then"
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_INSTRUCTION = 8  # bytes of one BPF instruction (struct sock_filter)


# ---- the sandbox's half: standard library only ---------------------------------------------------------------------

def refuse(program=None):
    """Install `program` (BPF as program() makes it; by default FILTER, which source() writes in) on this process
    and all it will start; raise OSError if it cannot be installed."""
    program = globals().get("FILTER") if program is None else program
    if sys.platform != "linux" or not program:
        raise OSError(errno.ENOSYS, f"no seccomp filter to install ({sys.platform} on {platform.machine()})")

    class Program(ctypes.Structure):  # struct sock_fprog
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(bytes(program), len(program))
    prog = Program(len(program) // _INSTRUCTION, ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    for args in ((_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
                 (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0)):
        if libc.prctl(*[ctypes.c_ulong(a) for a in args]) != 0:
            raise OSError(ctypes.get_errno(), f"prctl{args[:2]}: {os.strerror(ctypes.get_errno())}")


# ---- the grader's half: the filter, compiled by libseccomp ---------------------------------------------------------

# platform.machine() -> libseccomp's name of its ABI; elsewhere program() raises NoFilter.
MACHINES = {"x86_64": "X86_64", "aarch64": "AARCH64"}

# Docker's default profile's calls allowed to every container (its first rule), less those _REFUSED names and
# `ipc`, the System V multiplexer of 32-bit ABIs, which would reach shmget past its refusal. Not its second rule's
# (ptrace, process_vm_readv/writev, on kernels from 4.8): nothing graded debugs or reads another process's memory
# (a graded kernel has no debugger). A name the system's libseccomp does not know (a call newer than it) is left
# out, so refused with ENOSYS, as an older kernel would.
_DOCKER_ALLOWED = """
accept accept4 access adjtimex alarm bind brk cachestat capget capset chdir chmod chown chown32 clock_adjtime
clock_adjtime64 clock_getres clock_getres_time64 clock_gettime clock_gettime64 clock_nanosleep clock_nanosleep_time64
close close_range connect copy_file_range creat dup dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_ctl_old
epoll_pwait epoll_pwait2 epoll_wait epoll_wait_old eventfd eventfd2 execve execveat exit exit_group faccessat
faccessat2 fadvise64 fadvise64_64 fallocate fanotify_mark fchdir fchmod fchmodat fchmodat2 fchown fchown32 fchownat
fcntl fcntl64 fdatasync fgetxattr flistxattr flock fork fremovexattr fstat fstat64 fstatat64 fstatfs fstatfs64 fsync
ftruncate ftruncate64 futex futex_requeue futex_time64 futex_wait futex_waitv futex_wake futimesat getcpu getcwd
getdents getdents64 getegid getegid32 geteuid geteuid32 getgid getgid32 getgroups getgroups32 getitimer getpeername
getpgid getpgrp getpid getppid getpriority getrandom getresgid getresgid32 getresuid getresuid32 getrlimit
get_robust_list getrusage getsid getsockname getsockopt get_thread_area gettid gettimeofday getuid getuid32 getxattr
getxattrat inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl io_destroy io_getevents
io_pgetevents io_pgetevents_time64 ioprio_get ioprio_set io_setup io_submit kill landlock_add_rule
landlock_create_ruleset landlock_restrict_self lchown lchown32 lgetxattr link linkat listen listmount listxattr
listxattrat llistxattr _llseek lremovexattr lseek lstat lstat64 madvise map_shadow_stack membarrier mincore mkdir
mkdirat mknod mknodat mlock mlock2 mlockall mmap mmap2 mprotect mq_getsetattr mq_notify mq_timedreceive
mq_timedreceive_time64 mq_timedsend mq_timedsend_time64 mq_unlink mremap mseal msgctl msgrcv msgsnd msync munlock
munlockall munmap name_to_handle_at nanosleep newfstatat _newselect open openat openat2 pause pidfd_open
pidfd_send_signal pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 preadv preadv2
prlimit64 process_mrelease pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read readahead readlink readlinkat
readv recv recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages removexattr removexattrat rename renameat
renameat2 restart_syscall riscv_hwprobe rmdir rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo
rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_sigtimedwait_time64 rt_tgsigqueueinfo sched_getaffinity sched_getattr
sched_getparam sched_get_priority_max sched_get_priority_min sched_getscheduler sched_rr_get_interval
sched_rr_get_interval_time64 sched_setaffinity sched_setattr sched_setparam sched_setscheduler sched_yield seccomp
select semctl semop semtimedop semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto setfsgid setfsgid32
setfsuid setfsuid32 setgid setgid32 setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid
setresgid32 setresuid setresuid32 setreuid setreuid32 setrlimit set_robust_list setsockopt set_thread_area
set_tid_address setuid setuid32 shmat shmctl shmdt shutdown sigaltstack signalfd signalfd4 sigprocmask sigreturn
socketcall socketpair splice stat stat64 statfs statfs64 statmount statx symlink symlinkat sync sync_file_range
syncfs sysinfo tee tgkill time timer_create timer_delete timer_getoverrun timer_gettime timer_gettime64
timer_settime timer_settime64 timerfd_create timerfd_gettime timerfd_gettime64 timerfd_settime timerfd_settime64
times tkill truncate truncate64 ugetrlimit umask uname unlink unlinkat uretprobe utime utimensat utimensat_time64
utimes vfork vmsplice wait4 waitid waitpid write writev
""".split()
# Docker's, for one machine only: x86-64's thread-pointer and LDT calls (the C library sets up threads with the first).
_MACHINE_ALLOWED = {"x86_64": ("arch_prctl", "modify_ldt"), "aarch64": ()}
# Refused with EPERM, whatever the arguments (why: the module's docstring).
REFUSED = ("memfd_create", "memfd_secret", "shmget", "semget", "msgget", "mq_open",
           "setxattr", "lsetxattr", "fsetxattr", "setxattrat", "setsid", "unshare")
# clone's flags that make a namespace (Docker's mask: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET)
CLONE_NEW = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
# Docker's argument checks: socket() of any family but AF_ALG (38) and AF_VSOCK (40), the kernel's crypto and the
# host's virtual machines; personality() to these personas only.
_AF_ALG, _AF_NFC, _AF_VSOCK = 38, 39, 40
_PERSONAS = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)


class NoFilter(Exception):
    """The filter cannot be compiled here: no libseccomp, or a machine it is not written for."""


@functools.cache
def program(machine=None):
    """The filter for `machine` (default: this one) as classic BPF, the bytes of its struct sock_filter array."""
    machine = machine or platform.machine()
    if machine not in MACHINES:
        raise NoFilter(f"the grading sandbox's seccomp filter (autograder/grading/gate_in/syscalls.py) knows "
                       f"{' and '.join(MACHINES)}, not this machine's {machine}")
    try:
        import pyseccomp  # the grader's only: the sandbox gets the compiled bytes
    except (ImportError, RuntimeError) as exc:  # RuntimeError: pyseccomp found no libseccomp.so.2
        raise NoFilter(f"the grading sandbox's seccomp filter needs libseccomp and its binding pyseccomp "
                       f"(Debian/Ubuntu: apt-get install libseccomp2; pip install -e '.[grading]'): {exc}") from exc
    rules = _rules(pyseccomp, machine)
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def _rules(seccomp, machine):
    """A pyseccomp.SyscallFilter for `machine`'s own ABI: the allow-list, the refusals, the argument checks."""
    enosys, eperm = seccomp.ERRNO(errno.ENOSYS), seccomp.ERRNO(errno.EPERM)
    arch = getattr(seccomp.Arch, MACHINES[machine])
    rules = seccomp.SyscallFilter(enosys)  # what no rule names
    rules.set_attr(seccomp.Attr.ACT_BADARCH, enosys)  # another ABI (libseccomp also refuses x32's numbers)
    try:
        rules.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)  # a binary tree: a call is found in ~9 steps, not ~350
    except OSError:
        pass  # libseccomp before 2.5: a list, as fast as the kernel's JIT makes it, and the same decisions
    if arch != seccomp.system_arch():  # compiled for another machine (the tests check each machine's filter)
        rules.add_arch(arch)
        rules.remove_arch(seccomp.Arch.NATIVE)

    def add(action, name, *args):
        # Rules name calls by the native ABI's numbers (libseccomp translates them for the filter's ABI); -1: a
        # name the library does not know, left out (so refused).
        number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
        if number != -1:
            rules.add_rule(action, number, *args)

    for name in (*_DOCKER_ALLOWED, *_MACHINE_ALLOWED[machine]):
        add(seccomp.ALLOW, name)
    for name in REFUSED:
        add(eperm, name)
    add(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, sum(CLONE_NEW), 0))  # flags: arg 0 on both
    for flag in CLONE_NEW:
        add(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for compare, family in ((seccomp.LT, _AF_ALG), (seccomp.EQ, _AF_NFC), (seccomp.GT, _AF_VSOCK)):
        add(seccomp.ALLOW, "socket", seccomp.Arg(0, compare, family))
    for persona in _PERSONAS:
        add(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, persona))
    return rules


def source():
    """The program that installs the filter in a sandbox: this file's code, with program() written in as FILTER."""
    return f"FILTER = bytes.fromhex({program().hex()!r})\n" + _own_source()


@functools.cache
def _own_source():
    return Path(__file__).read_text(encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:2] == [THEN]:  # python -c <source()> --then PROGRAM ARGS
    refuse()
    os.execvp(sys.argv[2], sys.argv[2:])
