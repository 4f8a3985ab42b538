"""nbgrader's Execute preprocessor, with the kernel in the sandbox and every way a run can end recorded.

On top of nbgrader's own behaviour (per-cell timeout, interrupt on timeout):
- the kernel starts in the sandbox (kernel.SandboxedKernelManager);
- a kernel that dies (os._exit, a kill, the CPU limit) or that ignores the
  interrupt after a timeout does not end the student's grading: that cell and
  every later one get an error output saying why they were not run, so they
  score 0 and the cells before keep their results;
- a kernel whose messages cannot be read (junk written to its sockets) is
  stopped, and that cell and the later ones end as above (recorded as a timeout);
- once a test cell has timed out, the later tests of its exercise get
  gate_in/loop_budget.py's AFTER_TIMEOUT seconds each, and after a second timeout are not run
  (its LoopBudget, the clean re-run's rule too): a looping answer costs one cell timeout, not one per test;
- a hard deadline per cell (the cell's timeout plus `hard_grace` seconds): if
  nbclient has not finished the cell by then (a kernel whose channels were
  broken by junk written to its sockets, one that ignores interrupts), a
  watchdog thread kills the kernel's whole process group (the sandbox, and
  everything in it), and the cell ends as a timeout (gate_in/watchdog.py);
- a kernel that sends more than its channels' budget (gate_in/channels.py), on any channel, or one message that
  would cost the grader more than gate_in/limits.py allows (its size and parts, counted by the relay; what it would
  become once decoded, measured by the kernel client: gate_in/messages.py), is killed; the cell fails with a
  MemoryError saying which channel, and the run counts as out of memory, as a MemoryError in plain nbgrader would;
- everything the kernel sends is bounded before it is kept (gate_in/outputs.py's kept_message and OutputBudget,
  whose bounds are gate_in/limits.py's): characters of output per cell
  (`max_output_bytes`) and per notebook (`max_notebook_output_bytes`), each output counted as at least
  gate_in/limits.py's OUTPUT_FLOOR characters, and the number of outputs per cell and per notebook, errors
  included (name, message and traceback cut, so an error still decides the cell's score); display metadata
  dropped, widget messages ignored;
- its `recorder` (a Recorder, passed in through the configuration) tells the caller what happened in each
  notebook's run (timeouts, memory errors, a dead kernel, the cells whose output was cut, the seconds of each
  stage) and which cell is starting. Given none, a run records into a recorder of its own, which nobody reads:
  there is no module-wide record, so two runs in one process never see each other's.
"""

import asyncio
import contextlib
import time

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Instance, Integer, default

from .. import exercises_in_order, readable, upstream
from ..cells import role_of
from .gate_in import limits
from .gate_in.kernel import SandboxedKernelManager, kill_sandbox, over_budget
from .gate_in.loop_budget import LoopBudget
from .gate_in.outputs import ErrorCut, OutputBudget, kept_message
from .gate_in.watchdog import Watchdog

# SandboxExecute overrides two of nbclient's internals and reads a third (upstream.check_nbclient names them and
# checks the installed nbclient on import: a grading run stops before its first student).
upstream.check_nbclient()

# The parts of a notebook run that a run's record times in "seconds" (wall seconds; the rest is nbgrader's own work).
STAGES = ("kernel start", "cells", "kernel stop")

# results.py reads a `why` that starts with "the kernel did not" as a timeout
TIMEOUT_WHY = "the kernel did not respond after the cell's time limit"
BROKEN_WHY = "the kernel did not send readable messages (its channels were broken): it was stopped"


class Recorder:
    """What notebook runs tell the one who started them. `runs[notebook]`: what happened in its last run (timeouts,
    memory errors, a dead kernel, the cells whose output was cut, the seconds of each of STAGES); `on_cell(notebook,
    cells, index)`, if given, is called as each code cell starts (a progress line's).

    Passed by reference through nbgrader's configuration (c.SandboxExecute.recorder), which copies each value it
    sets: a copy of a recorder is the recorder itself, or the runs would be recorded where nobody reads them."""

    def __init__(self, on_cell=None):
        self.runs, self._on_cell = {}, on_cell

    def __deepcopy__(self, memo):
        return self

    def start(self, notebook, truncated):
        """A fresh record for `notebook`'s run; `truncated`: the list its output budget fills."""
        self.runs[notebook] = {"timeouts": [], "dead": None, "memory_errors": [], "truncated": truncated,
                               "seconds": dict.fromkeys(STAGES, 0.0)}
        return self.runs[notebook]

    def cell_starting(self, notebook, cells, index):
        on_cell = self.on_cell()
        if on_cell is not None:
            on_cell(notebook, cells, index)

    def on_cell(self):
        return self._on_cell


def _test_exercises(cells):
    """cell index -> (exercise, grade id) of each test cell, by the rule the whole grader uses."""
    roles = []
    for c in cells:
        grade_id, role = c.get("metadata", {}).get("nbgrader", {}).get("grade_id"), role_of(c)
        roles.append((grade_id, role if role == "answer" or (role == "test" and grade_id) else None))
    return {i: (exercise or grade_id, grade_id) for i, ((grade_id, role), exercise)
            in enumerate(zip(roles, exercises_in_order(roles), strict=True)) if role == "test"}


@contextlib.contextmanager
def _timed(record, stage):
    """Add the wall seconds the block takes to `stage` of a run's record (None: a kernel started outside a run)."""
    started = time.monotonic()
    try:
        yield
    finally:
        if record is not None:
            record["seconds"][stage] += time.monotonic() - started


def _error(ename, evalue):
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


class SandboxExecute(Execute):
    max_output_bytes = Integer(limits.CELL_OUTPUT_CHARS, help="Output kept per cell (characters); the rest is "
                               "dropped.").tag(config=True)
    max_notebook_output_bytes = Integer(limits.NOTEBOOK_OUTPUT_CHARS, help="Output kept per notebook (characters), "
                                        "errors included; the rest is dropped.").tag(config=True)
    max_error_name = Integer(limits.ERROR_NAME_CHARS, help="Characters kept of an error's name.").tag(config=True)
    max_error_value = Integer(limits.ERROR_VALUE_CHARS, help="Characters kept of an error's message.").tag(
        config=True)
    max_traceback_lines = Integer(limits.TRACEBACK_LINES, help="Lines kept of an error's traceback.").tag(
        config=True)
    max_traceback_bytes = Integer(limits.TRACEBACK_CHARS, help="Characters kept of an error's traceback.").tag(
        config=True)
    hard_grace = Integer(limits.HARD_GRACE_SECONDS, help="Seconds past a cell's timeout after which the kernel's "
                         "sandbox is killed, whatever state its channels are in.").tag(config=True)
    recorder = Instance(Recorder, help="Where each notebook's run is recorded (see Recorder): the caller's, "
                        "passed in its configuration, or one of this run's own.").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager  # nbgrader's Execute would default to its own
        super().__init__(*args, **kwargs)
        self.timeout_func = self._timeout_of

    @default("recorder")
    def _recorder_default(self):
        return Recorder()  # a caller that reads no record (nbgrader's own autograde, a test)

    @default("shutdown_kernel")
    def _shutdown_default(self):
        return "immediate"  # the kernel's state is of no further use: kill the sandbox at once

    @default("store_widget_state")
    def _widgets_default(self):
        return False  # a widget's state would go into the notebook's metadata, unbounded

    def preprocess(self, nb, resources, retries=None):
        self._start((resources or {}).get("nbgrader", {}).get("notebook", ""), nb)
        return super().preprocess(nb, resources, retries)

    def _start(self, name, nb=None):
        """Fresh accounts for one notebook's run."""
        self._name = name
        self._outputs = OutputBudget(self.max_output_bytes, self.max_notebook_output_bytes, ErrorCut(
            self.max_error_name, self.max_error_value, self.max_traceback_lines, self.max_traceback_bytes))
        self._record = self.recorder.start(name, self._outputs.truncated)
        self._exercise = _test_exercises(nb.cells if nb is not None else [])
        self._loops = LoopBudget(self.timeout)
        self._dead = None

    def _timed(self, stage):
        return _timed(getattr(self, "_record", None), stage)

    async def async_start_new_kernel(self, **kwargs):
        with self._timed("kernel start"):
            return await super().async_start_new_kernel(**kwargs)

    async def async_start_new_kernel_client(self):
        with self._timed("kernel start"):  # until the kernel answers kernel_info: its imports and start-up
            return await super().async_start_new_kernel_client()

    async def _async_cleanup_kernel(self):
        with self._timed("kernel stop"):
            return await super()._async_cleanup_kernel()

    # nbclient binds its own coroutines to these synchronous names: bind ours
    start_new_kernel = run_sync(async_start_new_kernel)
    start_new_kernel_client = run_sync(async_start_new_kernel_client)
    _cleanup_kernel = run_sync(_async_cleanup_kernel)

    async def _async_handle_timeout(self, timeout, cell=None):  # nbclient internal: upstream.check_nbclient
        self._timed_out(self._index_of(cell))
        return await super()._async_handle_timeout(timeout, cell)

    def _timed_out(self, index):
        if index not in self._record["timeouts"]:
            self._record["timeouts"].append(index)
            if index in self._exercise:
                self._loops.overran(*self._exercise[index])

    def _timeout_of(self, cell):
        """A cell's time limit (nbclient's timeout_func): shorter for the later tests of an exercise that looped."""
        self._loops.cell_timeout = self.timeout  # nbclient's setting as it is now, which a caller may change
        return self._loops.seconds(self._exercise.get(self._index_of(cell), (None,))[0])

    def _cell_timeout(self, cell):
        """The cell's time limit in seconds, or None: nbclient's rule, from its public settings."""
        timeout = self.timeout_func(cell) if self.timeout_func is not None else self.timeout
        return timeout if timeout and timeout > 0 else None

    def _index_of(self, cell):
        for i, c in enumerate(self.nb.cells):
            if c is cell:
                return i
        return None

    # ------------------------------------------------------------ running a cell, with a hard deadline

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type != "code" or not cell.source.strip():
            return cell
        with self._timed("cells"):
            return await self._execute_cell(cell, cell_index, execution_count, store_history)

    execute_cell = run_sync(async_execute_cell)  # the base class binds its own coroutine: bind ours

    async def _execute_cell(self, cell, cell_index, execution_count, store_history):
        not_run = self._not_run_why(cell_index)
        if not_run:
            cell.outputs = [_error("NotRun", not_run)]
            return cell
        self.recorder.cell_starting(self._name, self.nb.cells, cell_index)
        self._watchdog = Watchdog(self._kill_process_group, self.hard_grace, self.log)  # this cell's
        deadline = self._watchdog.deadline(self._cell_timeout(cell), self.iopub_timeout)
        try:
            run = super().async_execute_cell(cell, cell_index, execution_count, store_history)
            cell = await self._watchdog.guard(run, deadline)
        except CellExecutionError:
            raise
        except Exception as exc:  # noqa: BLE001 (every way a run can end is recorded: _ended says which)
            await self._ended(cell, cell_index, exc)
        except asyncio.CancelledError as exc:
            if not self._watchdog.expired:
                raise
            await self._ended(cell, cell_index, exc)
        finally:
            self._outputs.finish(cell_index, cell.outputs)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and "MemoryError" in str(out.get("ename", "")):
                self._record["memory_errors"].append(cell_index)
        return cell

    def _not_run_why(self, cell_index):
        """Why this cell is not run at all (the kernel is gone, or its loop budget is spent: LoopBudget), or ''."""
        if self._dead is not None:
            return f"not run: the kernel stopped at an earlier cell ({self._dead})"
        return self._loops.not_run_why(self._exercise.get(cell_index, (None,))[0])

    async def _ended(self, cell, cell_index, exc):
        """Record how the cell's run ended early: the kernel sent more than its channels' budget, died, ran past
        its deadline, or broke its channels."""
        over = over_budget(self.km)
        if over is not None:  # as a MemoryError in plain nbgrader: this cell fails, the run counts as out of memory
            self._stop(cell, cell_index, over, ename="MemoryError")
            await self._kill()
            return
        if isinstance(exc, DeadKernelError) and not self._watchdog.expired:
            self._stop(cell, cell_index, "the kernel died while running this cell "
                       "(os._exit, a kill, a crash or the CPU-time limit)")
            return
        if isinstance(exc, (TimeoutError, DeadKernelError, asyncio.CancelledError, CellTimeoutError)):
            why = TIMEOUT_WHY
        else:  # a frame that is no Jupyter message (junk written to the kernel's sockets)...
            self.log.error("the kernel's channels broke: %r", exc)
            why = BROKEN_WHY
        self._timed_out(cell_index)
        self._stop(cell, cell_index, why)
        await self._kill()

    def _stop(self, cell, cell_index, why, ename=None):
        self._dead = f"cell {cell_index}: {why}"
        self._record["dead"] = {"cell": cell_index, "why": why}
        ename = ename or ("KernelDied" if "died" in why else "CellTimeoutError")
        cell.outputs = list(cell.get("outputs", [])) + [_error(ename, why)]

    def _kill_process_group(self):
        kill_sandbox(getattr(getattr(self.km, "provisioner", None), "process", None))

    async def _kill(self):
        self._kill_process_group()
        try:
            await asyncio.wait_for(self.km.shutdown_kernel(now=True), 30)
        except Exception as exc:  # already gone: nothing left to stop
            self.log.debug("kernel already gone: %s", exc)

    # ------------------------------------------------------------ what the kernel sends, bounded (gate_in/outputs.py)

    def process_message(self, msg, cell, cell_index):
        kept = kept_message(msg, self._outputs, cell_index, cell.outputs, self._copies)
        return None if kept is None else super().process_message(kept, cell, cell_index)

    def _copies(self, display_id):
        """How many outputs an output with this display id rewrites (nbclient updates every output with that id)."""
        # nbclient internal (upstream.check_nbclient): {display_id: {cell index: [output index, ...]}}
        return sum(map(len, self._display_id_map.get(display_id, {}).values()))

    def on_cell_executed(self, **kwargs):
        """nbgrader's hook: it appends the cell's reply's error as an output when no error output has its name (a
        timeout's, or one the kernel made up). Cut and made readable first, as every error output is, so that it
        matches the output it repeats, and adds nothing unbounded when it does not."""
        reply = kwargs.get("execute_reply")
        content = reply.get("content") if isinstance(reply, dict) else None
        if not isinstance(content, dict):
            return None  # no reply to speak of: nothing to add
        if content.get("status") == "error":
            kept = self._outputs.cut_error(content.get("ename", "Error"), content.get("evalue", ""),
                                           content.get("traceback"))
            content.update(zip(("ename", "evalue", "traceback"), readable.clean(list(kept)), strict=True))
        return super().on_cell_executed(**kwargs)

    def handle_comm_msg(self, outs, msg, cell_index):
        return None  # no widgets in grading: their messages are neither kept nor acted on
