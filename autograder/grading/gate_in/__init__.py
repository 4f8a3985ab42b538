"""Gate In: what student code runs in and what the grader keeps of what it sends.

    sandbox.py        bubblewrap plus resource limits: what every piece of student code runs in
    syscalls.py       the seccomp filter (an allow-list) every sandboxed process starts under (`--then`)
    cgroups.py        a cgroup per sandbox and per worker: memory, processes and CPU counted for a whole tree
    cgjoin.py         a sandbox's first step, joining its cgroup before anything of it runs (`--join-then`)
    zygote.py         processes started warm: forked from one that imported their modules, moved into a sandbox
    zygote_main.py    a zygote's own program, which imports nothing of the grader
    kernel.py         the Jupyter kernel manager that starts each kernel inside the sandbox
    confine.py        the trusted processes that handle what student code made: a user of their own, namespaces
    unsandboxed.py    the limits without a sandbox (`check` on macOS, Windows): caps, stopping a process tree
    channels.py       the relay of a kernel's channels: what it sends is counted before it is kept
    zmtp.py           ZeroMQ's wire protocol, read as libzmq reads it: where each message begins and ends
    messages.py       what a kernel's message may become when read, bounded before it is decoded
    outputs.py        what a notebook run keeps of its outputs: a budget per run, per cell and per notebook
    limits.py         the one place for the bounds on what a kernel's messages and outputs may cost the grader
    watchdog.py       a cell's hard deadline: past it, the kernel's whole sandbox is killed
    loop_budget.py    the time an exercise's later tests get once one has overrun, in both runs
"""
