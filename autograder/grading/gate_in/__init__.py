"""Gate In: what student code runs in and receives.

The sandbox (bubblewrap, limits, the seccomp filter), the processes started warm inside it (zygotes),
the sandboxed Jupyter kernel, the confinement of the trusted processes that handle what student code
made, and the limits that hold without a sandbox (`check` on macOS and Windows).
"""
