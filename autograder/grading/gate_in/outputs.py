"""What a notebook run keeps of the outputs its kernel sends: one budget per run, per cell and per notebook.

An output costs the grader twice: its characters (kept in the autograded notebook and the feedback page), and
itself (each kept output is a step for nbclient, nbgrader's preprocessors, nbformat and the page, however little
it holds). So each output counts its characters, at least limits.OUTPUT_FLOOR, against the characters a cell and
the notebook may keep, and counts once against the outputs they may keep (limits.CELL_OUTPUTS and
NOTEBOOK_OUTPUTS). Past either, the rest is dropped; the cell gets one line saying so, and how many outputs it
lost. nbgrader's LimitOutput is no model here: it counts a stream's lines only.

An error is kept, cut short, once per cell whatever the budget left: it decides the cell's score. A display that
rewrites earlier outputs (a display id) counts once for each output it rewrites.

`kept_message` is what of each message the kernel sends is passed on to nbclient at all (execute.SandboxExecute):
the fields nbformat's schema has, each bounded, display metadata dropped (a PNG's text alternative aside), widget
messages and every other kind dropped.
"""

import json
import re
from dataclasses import dataclass

from nbformat.notebooknode import NotebookNode

from ... import limits as grader_limits
from ... import readable
from . import limits


@dataclass(frozen=True)
class ErrorCut:
    """What is kept of an error: characters of its name and message, lines and characters of its traceback."""

    name: int = limits.ERROR_NAME_CHARS
    value: int = limits.ERROR_VALUE_CHARS
    traceback_lines: int = limits.TRACEBACK_LINES
    traceback_chars: int = limits.TRACEBACK_CHARS


def cut(text, limit):
    """`text` (or its str) at most `limit` characters, saying where it was cut."""
    text = text if isinstance(text, str) else str(text)
    return text if len(text) <= limit else text[:limit] + f" ... [cut by the grader at {limit:,} characters]"


class OutputBudget:
    """What is left to keep of one notebook run's outputs. `truncated`: the cells whose output was cut or dropped.

    Each method that keeps an output takes the cell's index and its list of outputs (where a note goes), and
    returns what is kept of it, or None: dropped."""

    def __init__(self, cell_chars, notebook_chars, error_cut=ErrorCut()):
        self.cell_chars, self.notebook_chars, self.error_cut = cell_chars, notebook_chars, error_cut
        self.truncated = []
        self._chars, self._outputs, self._dropped, self._notes = {}, {}, {}, {}
        self._total_chars = self._total_outputs = 0
        self._errors = set()  # cells that have an error kept

    # ---- what is left ------------------------------------------------------------------------------------------
    def room(self, cell):
        """Characters this cell may still keep."""
        return min(self.cell_chars - self._chars.get(cell, 0), self.notebook_chars - self._total_chars)

    def _output_room(self, cell):
        return min(limits.CELL_OUTPUTS - self._outputs.get(cell, 0), limits.NOTEBOOK_OUTPUTS - self._total_outputs)

    def _count(self, cell, chars, outputs=1):
        self._chars[cell] = self._chars.get(cell, 0) + chars
        self._total_chars += chars
        self._outputs[cell] = self._outputs.get(cell, 0) + outputs
        self._total_outputs += outputs

    # ---- outputs ---------------------------------------------------------------------------------------------
    def stream(self, cell, outputs, text):
        """What is kept of a stream's `text` (cut to the room left), or None."""
        room = self.room(cell)
        if self._output_room(cell) <= 0 or room < limits.OUTPUT_FLOOR:
            return self._drop(cell, outputs)
        if len(text) > room:
            self._noted(cell, outputs)
            text = text[:room]
        self._count(cell, max(len(text), limits.OUTPUT_FLOOR))
        return text

    def display(self, cell, outputs, size, copies, new):
        """Whether a display of `size` characters is kept: it rewrites `copies` earlier outputs (those with its
        display id), and is an output of its own when `new` (display_data, execute_result; not update_display_data).
        True: kept; None: dropped; False: kept as an output of its own that rewrites none (its display id dropped),
        there being room for it but not for its copies."""
        cost, room = max(size, limits.OUTPUT_FLOOR), self.room(cell)
        if new and self._output_room(cell) <= 0:
            return self._drop(cell, outputs)
        if cost * (copies + new) <= room:
            self._count(cell, cost * (copies + new), int(new))
            return True
        if not new or cost > room:
            return self._drop(cell, outputs)
        self._noted(cell, outputs)
        self._count(cell, cost)
        return False

    def cut_error(self, ename, evalue, traceback):
        """(name, message, traceback) of an error, each cut to its bound (ErrorCut), as strings."""
        ename, evalue = cut(ename, self.error_cut.name), cut(evalue, self.error_cut.value)
        kept, used = [], 0
        lines = traceback if isinstance(traceback, list) else []
        for line in lines[:self.error_cut.traceback_lines]:
            line = cut(line, self.error_cut.traceback_chars // 4)
            if used + len(line) > self.error_cut.traceback_chars:
                break
            kept.append(line)
            used += len(line)
        if len(kept) < len(lines):
            kept.append(f"... traceback cut by the grader ({len(lines):,} lines) ...")
        return ename, evalue, kept

    def error(self, cell, outputs, ename, evalue, traceback):
        """(name, message, traceback) kept of an error, or None: past the budget, one short error per cell."""
        ename, evalue, kept = self.cut_error(ename, evalue, traceback)
        size = max(len(ename) + len(evalue) + sum(map(len, kept)), limits.OUTPUT_FLOOR)
        if size > self.room(cell) or self._output_room(cell) <= 0:
            if cell in self._errors:  # the cell keeps the one error that decides its score
                return self._drop(cell, outputs)
            self._noted(cell, outputs)
            ename, evalue = ename[:100], evalue[:300]
            kept = [f"{ename}: {evalue}"]
            size = max(len(ename) + len(evalue) + len(kept[0]), limits.OUTPUT_FLOOR)
        self._errors.add(cell)
        self._count(cell, size)
        return ename, evalue, kept

    # ---- what was cut ----------------------------------------------------------------------------------------
    def _drop(self, cell, outputs):
        self._dropped[cell] = self._dropped.get(cell, 0) + 1
        self._noted(cell, outputs)
        return None

    def _noted(self, cell, outputs):
        """The cell's output was cut: its one note goes at the end of `outputs`."""
        if cell in self._notes:
            return
        self.truncated.append(cell)
        self._notes[cell] = note = NotebookNode(output_type="stream", name="stdout", text=self._note(cell))
        self._count(cell, len(note.text), 0)
        outputs.append(note)

    def finish(self, cell, outputs):
        """The cell has ended: its note says how many outputs it lost (and is put back if the cell cleared it)."""
        note = self._notes.get(cell)
        if note is None:
            return
        note.text = self._note(cell)
        if not any(out is note for out in outputs):
            outputs.append(note)

    def _note(self, cell):
        dropped = self._dropped.get(cell, 0)
        lost = f"; {dropped:,} output{'s' * (dropped != 1)} dropped" if dropped else ""
        return (f"\n... output cut by the grader (at most {self.cell_chars:,} characters and "
                f"{limits.CELL_OUTPUTS:,} outputs per cell, {self.notebook_chars:,} characters and "
                f"{limits.NOTEBOOK_OUTPUTS:,} outputs per notebook{lost}) ...\n")


# ---- what of a kernel's message is passed on ------------------------------------------------------------------------
_OUTPUT_TYPES = {"stream", "display_data", "execute_result", "update_display_data", "error"}
_JSON_MIME = re.compile(r"^application/(.*\+)?json$")
_PASSED_ON = _OUTPUT_TYPES | {"status", "execute_input", "clear_output"}


def kept_message(msg, budget, cell, outputs, copies):
    """The message nbclient gets in place of the kernel's `msg`, bounded (readable, the schema's fields only), or
    None: dropped. `budget`: the run's OutputBudget; `cell`, `outputs`: the cell's index and its outputs so far;
    `copies(display_id)`: how many kept outputs an output with that display id rewrites."""
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
    elif _bounded_output(msg_type, content, budget, cell, outputs, copies, bounded) is None:
        return None
    header = dict(msg.get("header") if isinstance(msg.get("header"), dict) else {}, msg_type=msg_type)
    parent = msg.get("parent_header") if isinstance(msg.get("parent_header"), dict) else {}
    # Lone surrogates in what the learner printed would fail every later write of the notebook.
    return dict(msg, msg_type=msg_type, header=header, parent_header=parent, content=readable.clean(bounded),
                metadata={})


def _bounded_output(msg_type, content, budget, cell, outputs, copies, bounded):
    """Fill `bounded` with what is kept of an output message's content (the budget decides how much), or return
    None to drop it."""
    if msg_type == "error":
        kept = budget.error(cell, outputs, content.get("ename", "Error"), content.get("evalue", ""),
                            content.get("traceback"))
        if kept is None:
            return None
        bounded.update(zip(("ename", "evalue", "traceback"), kept, strict=True))
        return bounded
    if msg_type == "stream":
        text = content.get("text")
        text = text if isinstance(text, str) else "".join(map(str, text)) if isinstance(text, list) else ""
        bounded["name"] = "stderr" if content.get("name") == "stderr" else "stdout"
        bounded["text"] = budget.stream(cell, outputs, text)
        return None if bounded["text"] is None else bounded
    data = content.get("data") if isinstance(content.get("data"), dict) else {}
    kept, size = _kept_data(data)
    display_id = bounded.get("transient", {}).get("display_id")
    keeps_id = budget.display(cell, outputs, size, copies(display_id) if display_id else 0,
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


def _image_alt(metadata, data):
    """{"image/png": {"alt": text}} when a kept PNG came with a string text alternative, else {}."""
    png = metadata.get("image/png") if isinstance(metadata, dict) and "image/png" in data else None
    alt = png.get("alt") if isinstance(png, dict) else None
    return {"image/png": {"alt": alt[:grader_limits.MAX_ALT_CHARS]}} if isinstance(alt, str) and alt else {}


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
