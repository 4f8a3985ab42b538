"""nbgrader's Execute preprocessor, with the kernel in the sandbox and every way a run can end recorded.

On top of nbgrader's own behaviour (per-cell timeout, interrupt on timeout):
- the kernel starts in the sandbox (kernel.SandboxedKernelManager);
- a kernel that dies (os._exit, a kill, the CPU limit) or that ignores the
  interrupt after a timeout does not end the student's grading: that cell and
  every later one get an error output saying why they were not run, so they
  score 0 and the cells before keep their results;
- a cell's output is capped (a submission that prints 100 MB costs nothing);
- `LAST_RUN[notebook]` tells the worker what happened: timeouts, memory errors, a dead kernel.
"""

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Integer, default

from .kernel import SandboxedKernelManager

LAST_RUN = {}  # notebook name -> what happened in its run (see SandboxExecute.preprocess)


def _error(ename, evalue):
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class SandboxExecute(Execute):
    max_output_bytes = Integer(1_000_000, help="Output kept per cell; the rest is dropped.").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager  # nbgrader's Execute would default to its own
        super().__init__(*args, **kwargs)

    @default("shutdown_kernel")
    def _shutdown_default(self):
        return "immediate"  # the kernel's state is of no further use: kill the sandbox at once

    def preprocess(self, nb, resources, retries=None):
        name = (resources or {}).get("nbgrader", {}).get("notebook", "")
        self._info = LAST_RUN[name] = {"timeouts": [], "dead": None, "memory_errors": [], "truncated": []}
        self._dead = None
        self._bytes = {}
        return super().preprocess(nb, resources, retries)

    async def _async_handle_timeout(self, timeout, cell=None):
        self._info["timeouts"].append(self._index_of(cell))
        return await super()._async_handle_timeout(timeout, cell)

    def _index_of(self, cell):
        for i, c in enumerate(self.nb.cells):
            if c is cell:
                return i
        return None

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type != "code" or not cell.source.strip():
            return cell
        if self._dead is not None:
            cell.outputs = [_error("NotRun", f"not run: the kernel stopped at an earlier cell ({self._dead})")]
            return cell
        try:
            cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except DeadKernelError:
            self._stop(cell, cell_index, "the kernel died while running this cell "
                       "(os._exit, a kill, a crash or the CPU-time limit)")
        except CellTimeoutError:
            self._stop(cell, cell_index, "the kernel did not respond after the cell's time limit")
            await self._kill()
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and "MemoryError" in str(out.get("ename", "")):
                self._info["memory_errors"].append(cell_index)
        return cell

    execute_cell = run_sync(async_execute_cell)  # the base class binds its own coroutine: bind ours

    def _stop(self, cell, cell_index, why):
        self._dead = f"cell {cell_index}: {why}"
        self._info["dead"] = {"cell": cell_index, "why": why}
        cell.outputs = list(cell.get("outputs", [])) + [_error("KernelDied" if "died" in why else "CellTimeoutError",
                                                               why)]

    async def _kill(self):
        try:
            await self.km.shutdown_kernel(now=True)
        except Exception as exc:  # already gone: nothing left to stop
            self.log.debug("kernel already gone: %s", exc)

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        size = len(str(content.get("text", ""))) + sum(len(str(v)) for v in (content.get("data") or {}).values()) \
            + sum(len(str(t)) for t in (content.get("traceback") or []))
        used = self._bytes.get(cell_index, 0)
        self._bytes[cell_index] = used + size
        if used + size > self.max_output_bytes:
            if used <= self.max_output_bytes:
                self._info["truncated"].append(cell_index)
                note = f"\n... output cut by the grader after {self.max_output_bytes:,} bytes ...\n"
                outs.append(NotebookNode(output_type="stream", name="stdout", text=note))
            if msg["msg_type"] != "error":  # an error still counts: it decides the cell's score
                return None
        return super().output(outs, msg, display_id, cell_index)
