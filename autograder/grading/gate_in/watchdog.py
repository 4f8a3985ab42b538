"""The hard deadline of one cell of a notebook run: past it, the kernel's whole sandbox is killed.

nbclient's own timeout interrupts a cell and waits for the kernel to answer; a kernel whose channels were broken by
junk written to its sockets, or one that ignores interrupts, never answers. So each cell also has a hard deadline:
its timeout plus a grace (limits.HARD_GRACE_SECONDS, or longer than nbclient's own wait for the kernel's last
output). A thread, not a task, watches it: it fires even when the event loop is stuck in a blocking call, and kills
the kernel's process group (the sandbox and everything in it). If the run has still not ended a grace after that,
the grader stops waiting for it. Either way the cell ends as a timeout (Watchdog.expired says the kill was ours).
"""

import asyncio
import threading


class Watchdog:
    """Hard deadlines for a run's cells, one at a time. `kill()` (called in the watchdog's thread) kills the
    kernel's sandbox; `grace`: seconds past a cell's timeout before it does, and again before the run is given up."""

    def __init__(self, kill, grace, log=None):
        self.kill, self.grace, self.log = kill, grace, log
        self.expired = False  # the cell under way, or the last one, was killed at its deadline

    def deadline(self, timeout, iopub_timeout=0):
        """Seconds after which a cell of `timeout` seconds (None or 0: no limit) is killed, or None."""
        return timeout + max(self.grace, (iopub_timeout or 0) + 2) if timeout else None

    async def guard(self, run, deadline):
        """Await the coroutine `run`; at `deadline` seconds kill the sandbox, and a grace later stop waiting.
        TimeoutError if the cell was killed, even if `run` ended (its result comes from a kernel being killed)."""
        self.expired = False
        if not deadline:
            return await run
        timer = threading.Timer(deadline, self._expire)
        timer.daemon = True
        timer.start()
        try:
            result = await asyncio.wait_for(run, deadline + self.grace)
        finally:
            timer.cancel()
        if self.expired:
            raise TimeoutError("the kernel was killed at the cell's hard deadline")
        return result

    def _expire(self):
        """The cell is past its hard deadline (in the timer's thread)."""
        self.expired = True
        if self.log is not None:
            self.log.error("cell past its hard deadline: killing the kernel's sandbox")
        self.kill()
