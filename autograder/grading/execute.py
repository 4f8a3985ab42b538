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
  rerun.AFTER_TIMEOUT seconds each, and after a second timeout are not run:
  a looping answer costs one cell timeout, not one per test;
- a hard deadline per cell (the cell's timeout plus `hard_grace` seconds): if
  nbclient has not finished the cell by then (a kernel whose channels were
  broken by junk written to its sockets, one that ignores interrupts), a
  watchdog thread kills the kernel's whole process group (the sandbox, and
  everything in it), and the cell ends as a timeout;
- a kernel that sends more than its channels' budget (gate_in/channels.py), on any channel, or one message that
  would cost the grader more than gate_in/limits.py allows (its size and parts, counted by the relay; what it would
  become once decoded, measured by the kernel client: gate_in/messages.py), is killed; the cell fails with a
  MemoryError saying which channel, and the run counts as out of memory, as a MemoryError in plain nbgrader would;
- everything the kernel sends is bounded before it is kept (gate_in/outputs.py): characters of output per cell
  (`max_output_bytes`) and per notebook (`max_notebook_output_bytes`), each output counted as at least
  gate_in/limits.py's OUTPUT_FLOOR characters, and the number of outputs per cell and per notebook, errors
  included (name, message and traceback cut, so an error still decides the cell's score); display metadata
  dropped, widget messages ignored;
- `LAST_RUN[notebook]` tells the worker what happened: timeouts, memory errors, a dead kernel.
"""

import asyncio
import json
import re
import threading
import time

from jupyter_core.utils import run_sync
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Integer, default

from .. import exercises_in_order, limits, readable, upstream
from ..cells import role_of
from .gate_beside.rerun import AFTER_TIMEOUT
from .gate_in.kernel import SandboxedKernelManager, kill_sandbox, over_budget
from .gate_in.outputs import ErrorCut, OutputBudget

# SandboxExecute overrides two of nbclient's internals and reads a third (upstream.check_nbclient names them and
# checks the installed nbclient on import: a grading run stops before its first student).
upstream.check_nbclient()

LAST_RUN = {}  # notebook name -> what happened in its run (see SandboxExecute.preprocess)
ON_CELL = None  # the worker's, or None: called with (notebook name, its cells, index) as each code cell starts
# The parts of a notebook run that LAST_RUN[name]["seconds"] times (wall seconds; the rest is nbgrader's own work).
STAGES = ("kernel start", "cells", "kernel stop")

# results.py reads a `why` that starts with "the kernel did not" as a timeout
TIMEOUT_WHY = "the kernel did not respond after the cell's time limit"
BROKEN_WHY = "the kernel did not send readable messages (its channels were broken): it was stopped"
_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "update_display_data", "error"}
_JSON_MIME = re.compile(r"^application/(.*\+)?json$")
_PASSED_ON = _OUTPUT_TYPES | {"status", "execute_input", "clear_output"}


def _test_exercises(cells):
    """cell index -> (exercise, grade id) of each test cell, by the rule the whole grader uses."""
    roles = []
    for c in cells:
        grade_id, role = c.get("metadata", {}).get("nbgrader", {}).get("grade_id"), role_of(c)
        roles.append((grade_id, role if role == "answer" or (role == "test" and grade_id) else None))
    return {i: (exercise or grade_id, grade_id) for i, ((grade_id, role), exercise)
            in enumerate(zip(roles, exercises_in_order(roles), strict=True)) if role == "test"}


def _error(ename, evalue):
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _image_alt(metadata, data):
    """{"image/png": {"alt": text}} when a kept PNG came with a string text alternative, else {}."""
    png = metadata.get("image/png") if isinstance(metadata, dict) and "image/png" in data else None
    alt = png.get("alt") if isinstance(png, dict) else None
    return {"image/png": {"alt": alt[:limits.MAX_ALT_CHARS]}} if isinstance(alt, str) and alt else {}


def _size(value):
    """Characters a value takes in the notebook (a cheap upper bound for strings and lists of strings)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return sum(map(len, value)) + len(value)
    try:
        return len(json.dumps(value, default=str))
    except (TypeError, ValueError, RecursionError):
        return None  # not data at all: dropped


def _kept_data(data):
    """({mime: value} kept of a display's data, the characters it takes): nbformat's schema, bounded names."""
    kept, size = {}, 0
    for mime, value in data.items():
        value_size = _size(value)
        if isinstance(mime, str) and len(mime) <= 100 and value_size is not None and \
                (_JSON_MIME.match(mime) or isinstance(value, str)
                 or isinstance(value, list) and all(isinstance(v, str) for v in value)):  # nbformat's schema
            kept[mime] = value
            size += value_size + len(mime)
    return kept, size


class SandboxExecute(Execute):
    max_output_bytes = Integer(1_000_000, help="Output kept per cell (characters); the rest is dropped.").tag(
        config=True)
    max_notebook_output_bytes = Integer(5_000_000, help="Output kept per notebook (characters), errors "
                                        "included; the rest is dropped.").tag(config=True)
    max_error_name = Integer(200, help="Characters kept of an error's name.").tag(config=True)
    max_error_value = Integer(4_000, help="Characters kept of an error's message.").tag(config=True)
    max_traceback_lines = Integer(100, help="Lines kept of an error's traceback.").tag(config=True)
    max_traceback_bytes = Integer(20_000, help="Characters kept of an error's traceback.").tag(config=True)
    hard_grace = Integer(10, help="Seconds past a cell's timeout after which the kernel's sandbox is killed, "
                         "whatever state its channels are in.").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxedKernelManager  # nbgrader's Execute would default to its own
        super().__init__(*args, **kwargs)
        self.timeout_func = self._timeout_of

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
        self._info = LAST_RUN[name] = {"timeouts": [], "dead": None, "memory_errors": [], "truncated": [],
                                       "seconds": dict.fromkeys(STAGES, 0.0)}
        self._exercise = _test_exercises(nb.cells if nb is not None else [])
        self._looped, self._spent = {}, {}  # exercise -> its test that timed out first, and second
        self._dead = None
        self._outputs = OutputBudget(self.max_output_bytes, self.max_notebook_output_bytes, ErrorCut(
            self.max_error_name, self.max_error_value, self.max_traceback_lines, self.max_traceback_bytes))
        self._info["truncated"] = self._outputs.truncated
        self._expired = False

    def _add_seconds(self, stage, started):
        info = getattr(self, "_info", None)
        if info is not None:
            info["seconds"][stage] += time.monotonic() - started

    async def async_start_new_kernel(self, **kwargs):
        started = time.monotonic()
        try:
            return await super().async_start_new_kernel(**kwargs)
        finally:
            self._add_seconds("kernel start", started)

    async def async_start_new_kernel_client(self):
        started = time.monotonic()  # until the kernel answers kernel_info: its imports and start-up
        try:
            return await super().async_start_new_kernel_client()
        finally:
            self._add_seconds("kernel start", started)

    async def _async_cleanup_kernel(self):
        started = time.monotonic()
        try:
            return await super()._async_cleanup_kernel()
        finally:
            self._add_seconds("kernel stop", started)

    # nbclient binds its own coroutines to these synchronous names: bind ours
    start_new_kernel = run_sync(async_start_new_kernel)
    start_new_kernel_client = run_sync(async_start_new_kernel_client)
    _cleanup_kernel = run_sync(_async_cleanup_kernel)

    async def _async_handle_timeout(self, timeout, cell=None):  # nbclient internal: upstream.check_nbclient
        self._timed_out(self._index_of(cell))
        return await super()._async_handle_timeout(timeout, cell)

    def _timed_out(self, index):
        if index not in self._info["timeouts"]:
            self._info["timeouts"].append(index)
            if index in self._exercise:
                exercise, grade_id = self._exercise[index]
                (self._spent if exercise in self._looped else self._looped).setdefault(exercise, grade_id)

    def _timeout_of(self, cell):
        """A cell's time limit (nbclient's timeout_func): shorter for the later tests of an exercise that looped."""
        exercise = self._exercise.get(self._index_of(cell), (None,))[0]
        if exercise in self._looped and self.timeout and self.timeout > 0:
            return min(self.timeout, AFTER_TIMEOUT)
        return self.timeout

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
        started = time.monotonic()
        try:
            return await self._execute_cell(cell, cell_index, execution_count, store_history)
        finally:
            self._add_seconds("cells", started)

    execute_cell = run_sync(async_execute_cell)  # the base class binds its own coroutine: bind ours

    async def _execute_cell(self, cell, cell_index, execution_count, store_history):
        not_run = self._not_run_why(cell_index)
        if not_run:
            cell.outputs = [_error("NotRun", not_run)]
            return cell
        self._starting(cell_index)
        timeout = self._cell_timeout(cell)
        limit = timeout + max(self.hard_grace, (self.iopub_timeout or 0) + 2) if timeout else None
        watchdog = None
        self._expired = False
        if limit:
            # A thread, not a task: it fires even when the event loop is stuck in a blocking call.
            watchdog = threading.Timer(limit, self._expire)
            watchdog.daemon = True
            watchdog.start()
        try:
            run = super().async_execute_cell(cell, cell_index, execution_count, store_history)
            # The watchdog kills the kernel at `limit`, which nbclient notices within a second or two; if it
            # does not, stop waiting for it.
            cell = await (asyncio.wait_for(run, limit + self.hard_grace) if limit else run)
            if self._expired:
                raise CellTimeoutError("the kernel was killed at the cell's hard deadline")
        except CellExecutionError:
            raise
        except Exception as exc:  # noqa: BLE001 (every way a run can end is recorded: _ended says which)
            await self._ended(cell, cell_index, exc)
        except asyncio.CancelledError as exc:
            if not self._expired:
                raise
            await self._ended(cell, cell_index, exc)
        finally:
            if watchdog is not None:
                watchdog.cancel()
            self._outputs.finish(cell_index, cell.outputs)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and "MemoryError" in str(out.get("ename", "")):
                self._info["memory_errors"].append(cell_index)
        return cell

    def _not_run_why(self, cell_index):
        """Why this cell is not run at all (the kernel is gone, or its exercise already ran past its time), or ''."""
        if self._dead is not None:
            return f"not run: the kernel stopped at an earlier cell ({self._dead})"
        exercise = self._exercise.get(cell_index, (None,))[0]
        if exercise in self._spent:
            return f"not run: {exercise} already ran past its time in {self._looped[exercise]} and " \
                   f"{self._spent[exercise]}"
        return ""

    async def _ended(self, cell, cell_index, exc):
        """Record how the cell's run ended early: the kernel sent more than its channels' budget, died, ran past
        its deadline, or broke its channels."""
        over = over_budget(self.km)
        if over is not None:  # as a MemoryError in plain nbgrader: this cell fails, the run counts as out of memory
            self._stop(cell, cell_index, over, ename="MemoryError")
            await self._kill()
            return
        if isinstance(exc, DeadKernelError) and not self._expired:
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

    def _starting(self, cell_index):
        if ON_CELL is not None:  # the progress line's
            ON_CELL(self._name, self.nb.cells, cell_index)

    def _stop(self, cell, cell_index, why, ename=None):
        self._dead = f"cell {cell_index}: {why}"
        self._info["dead"] = {"cell": cell_index, "why": why}
        ename = ename or ("KernelDied" if "died" in why else "CellTimeoutError")
        cell.outputs = list(cell.get("outputs", [])) + [_error(ename, why)]

    def _expire(self):
        """The watchdog: the cell is past its hard deadline. Kill the sandbox (runs in a thread)."""
        self._expired = True
        self.log.error("cell past its hard deadline: killing the kernel's sandbox")
        self._kill_process_group()

    def _kill_process_group(self):
        kill_sandbox(getattr(getattr(self.km, "provisioner", None), "process", None))

    async def _kill(self):
        self._kill_process_group()
        try:
            await asyncio.wait_for(self.km.shutdown_kernel(now=True), 30)
        except Exception as exc:  # already gone: nothing left to stop
            self.log.debug("kernel already gone: %s", exc)

    # ------------------------------------------------------------ what the kernel sends, bounded

    def process_message(self, msg, cell, cell_index):
        msg_type = msg.get("msg_type")
        if msg_type not in _PASSED_ON:
            return None  # comm (widgets) and anything else: not kept
        content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
        bounded = {}
        count = content.get("execution_count")
        if "execution_count" in content or msg_type == "execute_result":
            ok = isinstance(count, int) and not isinstance(count, bool) and 0 <= count < 10**9
            bounded["execution_count"] = count if ok else None
        transient = content.get("transient")
        if isinstance(transient, dict) and isinstance(transient.get("display_id"), str) \
                and 0 < len(transient["display_id"]) <= 200 and msg_type != "stream":
            bounded["transient"] = {"display_id": transient["display_id"]}
        if msg_type == "status":
            state = content.get("execution_state")
            bounded["execution_state"] = state if isinstance(state, str) else "busy"
        elif msg_type == "clear_output":
            bounded["wait"] = bool(content.get("wait"))
        elif msg_type == "execute_input":
            bounded["code"] = ""
        elif self._bounded_output(msg_type, content, cell, cell_index, bounded) is None:
            return None
        header = dict(msg.get("header") if isinstance(msg.get("header"), dict) else {}, msg_type=msg_type)
        parent = msg.get("parent_header") if isinstance(msg.get("parent_header"), dict) else {}
        # Lone surrogates in what the learner printed would fail every later write of the notebook.
        msg = dict(msg, msg_type=msg_type, header=header, parent_header=parent, content=readable.clean(bounded),
                   metadata={})
        return super().process_message(msg, cell, cell_index)

    def _copies(self, bounded):
        """How many outputs an output with a display id rewrites (nbclient updates every output with that id)."""
        display_id = bounded.get("transient", {}).get("display_id")
        # nbclient internal (upstream.check_nbclient): {display_id: {cell index: [output index, ...]}}
        return sum(map(len, self._display_id_map.get(display_id, {}).values())) if display_id else 0

    def _bounded_output(self, msg_type, content, cell, cell_index, bounded):
        """Fill `bounded` with what is kept of an output message's content (gate_in/outputs.py decides how much),
        or return None to drop it."""
        if msg_type == "error":
            kept = self._outputs.error(cell_index, cell.outputs, content.get("ename", "Error"),
                                       content.get("evalue", ""), content.get("traceback"))
            if kept is None:
                return None
            bounded.update(zip(("ename", "evalue", "traceback"), kept, strict=True))
            return bounded
        if msg_type == "stream":
            text = content.get("text")
            text = text if isinstance(text, str) else "".join(map(str, text)) if isinstance(text, list) else ""
            bounded["name"] = "stderr" if content.get("name") == "stderr" else "stdout"
            bounded["text"] = self._outputs.stream(cell_index, cell.outputs, text)
            return None if bounded["text"] is None else bounded
        data = content.get("data") if isinstance(content.get("data"), dict) else {}
        kept, size = _kept_data(data)
        keeps_id = self._outputs.display(cell_index, cell.outputs, size, self._copies(bounded),
                                         new=msg_type != "update_display_data")
        if keeps_id is None:
            return None
        if not keeps_id:
            bounded.pop("transient", None)  # shown once, but it will not rewrite earlier outputs
        bounded["data"] = kept
        # Of the kernel's say on how to show an output, only a PNG's text alternative, as a bounded string (the
        # pages' alt text: sanitise.image_alt makes it plain); nothing else a grade or a page needs.
        bounded["metadata"] = _image_alt(content.get("metadata"), kept)
        return bounded

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
