"""Every message a sandboxed kernel sends is counted at what it costs the grader (issue 51).

Two floods the channels' byte budget let through: outputs with nothing in them (350,000 kept made a 28.8 MiB
notebook and 100 s of grading after the cells), and one validly signed message of 180 MB that decodes to 60 million
JSON objects (4 GiB in the grading worker). The bounds are in gate_in/limits.py; these tests hold them:

- what a notebook run keeps (gate_in/outputs.py, through SandboxExecute and nbclient, no kernel): each output counts
  at least OUTPUT_FLOOR characters and once against CELL_OUTPUTS and NOTEBOOK_OUTPUTS, whatever it is (an empty
  display, an empty stream, a display update, a clear_output storm, a metadata-only output), and the cell says how
  many it lost;
- what a message may become before it is decoded (gate_in/messages.py): JSON values, nesting, size once decoded;
- what the relay reads of ZeroMQ's wire format (gate_in/zmtp.py), against libzmq's own sockets: a message over
  MESSAGE_BYTES or MESSAGE_FRAMES never reaches ZeroMQ;
- the client's channels (kernel.BoundedChannel): a message over a bound is never decoded, the kernel is stopped
  and the student reads which channel;
- graded runs, through `check` (its process is the grading worker, with no cgroup: its own peak memory is read)
  and through `grade` (each worker reports its peak, `worker peak MiB` in the run's timing log): each flood stays
  within the bounds, the worker within its unflooded peak plus 256 MiB, and classmates keep full marks. How long
  each flood takes beside its honest twin is measured in benchmarks/bench_message_floods.py, not here.
"""

import json
import re
import socket
import time
import tracemalloc

import floods
import loops
import nbformat
import nbtools
import pytest
import zmq
import zmq.asyncio
from adversarial import grading

from autograder.grading.gate_in import channels, kernel, limits, messages, outputs, zmtp

MiB = limits.MiB
FLOOR, CELL, NOTEBOOK = limits.OUTPUT_FLOOR, limits.CELL_OUTPUTS, limits.NOTEBOOK_OUTPUTS


# ==== what a notebook run keeps ===================================================================================

def _executor(cells=3, **traits):
    from autograder.grading.execute import Recorder, SandboxExecute

    ex = SandboxExecute(recorder=Recorder(), **traits)
    ex.nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = {i}") for i in range(cells)])
    ex.reset_execution_trackers()
    ex.clear_before_next_output = False  # as nbclient sets it before each cell
    ex._start("unit")
    return ex


def _send(ex, cell, msg_type, content):
    msg = {"msg_type": msg_type, "header": {"msg_type": msg_type, "msg_id": "m"}, "parent_header": {"msg_id": "p"},
           "metadata": {}, "content": content}
    return ex.process_message(msg, ex.nb.cells[cell], cell)


def _ended(ex, cell):
    """The cell has ended (as SandboxExecute ends each one): its outputs, its note last."""
    ex._outputs.finish(cell, ex.nb.cells[cell].outputs)
    return ex.nb.cells[cell].outputs


def _kept(outs, output_type):
    return [o for o in outs if o.output_type == output_type and "cut by the grader" not in o.get("text", "")]


def _note(outs):
    notes = [o.text for o in outs if o.output_type == "stream" and "output cut by the grader" in o.text]
    assert len(notes) == 1, notes
    return notes[0]


def _written(ex):
    text = nbformat.writes(ex.nb)
    nbformat.validate(nbformat.reads(text, as_version=4))
    return text


# Each makes one output of nothing (or next to nothing), as student code can send it.
TINY = {
    "display_data {}": ("display_data", {"data": {}, "metadata": {}}),
    "execute_result {}": ("execute_result", {"data": {}, "metadata": {}, "execution_count": 1}),
    "stream ''": ("stream", {"name": "stdout", "text": ""}),
    "metadata only": ("display_data", {"data": {}, "metadata": {"image/png": {"width": 1}, "x": [1, 2]}}),
    "one character": ("display_data", {"data": {"text/plain": "."}, "metadata": {}}),
}


@pytest.mark.parametrize("kind", sorted(TINY))
def test_twenty_thousand_tiny_outputs_keep_at_most_a_cells_worth(kind):
    """20,000 outputs of nothing in one cell: CELL_OUTPUTS (1,000) are kept, the cell says 19,000 were dropped,
    and the notebook holds about what 1,000 such outputs take."""
    ex = _executor()
    msg_type, content = TINY[kind]
    for _ in range(20_000):
        _send(ex, 0, msg_type, content)
    outs = _ended(ex, 0)
    assert len(_kept(outs, msg_type)) == CELL == 1_000
    assert "19,000 outputs dropped" in _note(outs)
    assert ex.recorder.runs["unit"]["truncated"] == [0]
    assert len(_written(ex)) < CELL * 200


def test_streams_that_alternate_stdout_and_stderr_count_each_one():
    """Empty writes to stdout and stderr in turn: nbclient keeps each as an output of its own."""
    ex = _executor()
    for i in range(10_000):
        _send(ex, 0, "stream", {"name": ("stdout", "stderr")[i % 2], "text": ""})
    outs = _ended(ex, 0)
    assert len(_kept(outs, "stream")) == CELL
    assert "9,000 outputs dropped" in _note(outs)


def test_a_notebook_keeps_at_most_NOTEBOOK_OUTPUTS():
    """1,000 empty displays in each of 8 cells: the first 5 cells keep theirs (5,000), the last three none."""
    ex = _executor(8)
    for cell in range(8):
        for _ in range(1_000):
            _send(ex, cell, "display_data", {"data": {}, "metadata": {}})
    kept = [len(_kept(_ended(ex, cell), "display_data")) for cell in range(8)]
    assert kept == [1_000] * 5 + [0] * 3 and sum(kept) == NOTEBOOK == 5_000
    assert "1,000 outputs dropped" in _note(ex.nb.cells[7].outputs)
    assert ex.recorder.runs["unit"]["truncated"] == [5, 6, 7]


def test_each_output_counts_at_least_the_floor_against_the_characters_kept():
    """A cell allowed 10,000 characters keeps 100 empty outputs (100 characters each), not 1,000."""
    ex = _executor(max_output_bytes=10_000)
    for _ in range(1_000):
        _send(ex, 0, "display_data", {"data": {}, "metadata": {}})
    outs = _ended(ex, 0)
    assert len(_kept(outs, "display_data")) == 10_000 // FLOOR == 100
    assert "900 outputs dropped" in _note(outs)


def test_display_updates_count_each_output_they_rewrite():
    """50 empty displays sharing one display id (the k-th rewrites the k - 1 before it: 100 x (1 + ... + 50) =
    127,500 characters), then 1,000 empty updates, each rewriting 50 outputs (5,000 characters): the cell's
    1,000,000 characters take 174 updates; 826 are dropped."""
    ex = _executor()
    for _ in range(50):
        _send(ex, 0, "display_data", {"data": {}, "metadata": {}, "transient": {"display_id": "same"}})
    for _ in range(1_000):
        _send(ex, 0, "update_display_data", {"data": {"text/plain": ""}, "metadata": {},
                                             "transient": {"display_id": "same"}})
    outs = _ended(ex, 0)
    assert (1_000_000 - FLOOR * 50 * 51 // 2) // (FLOOR * 50) == 174
    assert len(_kept(outs, "display_data")) == 50 and "826 outputs dropped" in _note(outs)
    assert len(_written(ex)) < 50 * 200 + 1_000


def test_an_update_storm_on_one_display_stops_at_the_cells_characters():
    ex = _executor()
    _send(ex, 0, "display_data", {"data": {"text/plain": "0"}, "metadata": {}, "transient": {"display_id": "bar"}})
    for _ in range(100_000):
        _send(ex, 0, "update_display_data", {"data": {}, "metadata": {}, "transient": {"display_id": "bar"}})
    dropped = int(re.search(r"([\d,]+) outputs dropped", _note(_ended(ex, 0))).group(1).replace(",", ""))
    assert 100_000 - dropped < 1_000_000 // FLOOR  # at most a cell's characters of updates were applied
    assert ex._outputs.room(0) < FLOOR


def test_a_clear_output_storm_does_not_give_the_outputs_back():
    """display, clear, display, clear...: the cell shows one output at a time, but has made 20,000; past 1,000 the
    displays are dropped, and the cell's note, cleared with them, is put back when the cell ends."""
    ex = _executor()
    for _ in range(20_000):
        _send(ex, 0, "display_data", {"data": {"text/plain": "frame"}, "metadata": {}})
        _send(ex, 0, "clear_output", {"wait": False})
    outs = _ended(ex, 0)
    assert _kept(outs, "display_data") == []
    assert "19,000 outputs dropped" in _note(outs)


def test_comm_messages_are_neither_kept_nor_counted():
    ex = _executor()
    for _ in range(20_000):
        _send(ex, 0, "comm_msg", {"comm_id": "c", "data": {"state": {}}})
    _send(ex, 0, "display_data", {"data": {"text/plain": "still kept"}, "metadata": {}})
    outs = _ended(ex, 0)
    assert [o.data["text/plain"] for o in outs] == ["still kept"] and ex.recorder.runs["unit"]["truncated"] == []


def test_past_the_outputs_kept_a_cell_still_keeps_one_error():
    """The error decides the cell's score: it is kept, short, once, past every bound."""
    ex = _executor()
    for _ in range(CELL):
        _send(ex, 0, "display_data", {"data": {}, "metadata": {}})
    for _ in range(3):
        _send(ex, 0, "error", {"ename": "AssertionError", "evalue": "wrong", "traceback": ["t"]})
    outs = _ended(ex, 0)
    assert [(o.ename, o.evalue) for o in _kept(outs, "error")] == [("AssertionError", "wrong")]
    assert "2 outputs dropped" in _note(outs)


def _reply_error(ename, evalue, traceback):
    return {"content": {"status": "error", "ename": ename, "evalue": evalue, "traceback": traceback}}


def test_a_replys_error_is_cut_as_its_output_was_and_so_not_added_again():
    """nbgrader adds the reply's error to the cell unless an error output has its name: a 300-character name, cut in
    the output, would not match the reply's own, and 20 MB of message and traceback would go in uncut."""
    ex = _executor()
    huge = ("E" * 300, "x" * 10_000_000, ["x" * 10_000_000])
    _send(ex, 0, "error", dict(zip(("ename", "evalue", "traceback"), huge, strict=True)))
    ex.on_cell_executed(cell=ex.nb.cells[0], cell_index=0, execute_reply=_reply_error(*huge))
    assert len(_kept(ex.nb.cells[0].outputs, "error")) == 1
    assert len(_written(ex)) < 100_000


def test_a_replys_error_without_an_output_is_added_cut_and_readable():
    """A reply's error that no output repeats (a kernel's own making): added, cut, lone surrogates replaced."""
    ex = _executor()
    ex.on_cell_executed(cell=ex.nb.cells[0], cell_index=0,
                        execute_reply=_reply_error("E\udc00" * 300, "x" * 10_000_000, ["t"] * 1_000_000))
    [error] = _kept(ex.nb.cells[0].outputs, "error")
    assert error.ename.startswith("E\ufffd") and len(error.evalue) < 5_000 and len(error.traceback) <= 101
    assert len(_written(ex)) < 100_000
    ex.on_cell_executed(cell=ex.nb.cells[1], cell_index=1, execute_reply={"content": "not a dict"})
    assert ex.nb.cells[1].outputs == []


def test_an_output_budget_needs_no_kernel():
    """OutputBudget alone: the floor, the count, the note, for a cell's list of outputs."""
    budget, outs = outputs.OutputBudget(cell_chars=1_000, notebook_chars=10_000), []
    kept = [budget.stream(0, outs, "") for _ in range(20)]
    assert kept.count("") == 1_000 // FLOOR == 10 and kept.count(None) == 10
    budget.finish(0, outs)
    assert f"{kept.count(None)} outputs dropped" in _note(outs) and budget.truncated == [0]
    assert budget.display(1, [], size=0, copies=0, new=True) is True  # another cell, its own budget
    assert budget.display(1, [], size=850, copies=1, new=True) is False  # room for it, not for its copy too


# ==== what a message may become before it is decoded ===============================================================

def _parts(content=b"{}", metadata=b"{}", header=b'{"msg_id": "1", "msg_type": "stream"}', buffers=()):
    return [b"signature", header, b"{}", metadata, content, *buffers]


def test_sixty_million_objects_are_refused_before_they_are_decoded():
    """The issue's message, scaled to 2 million objects (6 MB): past DECODE_VALUES without a byte decoded."""
    content = b'{"data": {"application/json": [' + b"{}," * 2_000_000 + b"{}]}}"
    assert messages.refusal(_parts(content)) == "a message of more than 1,000,000 JSON values"


def test_commas_and_brackets_inside_strings_are_no_values():
    """A print of a long list is one string: 3 million commas and brackets in it count for nothing."""
    content = json.dumps({"name": "stdout", "text": str(list(range(400_000))) + "[{" * 1_000_000}).encode()
    assert messages.refusal(_parts(content)) is None


def test_escaped_quotes_do_not_hide_values_from_the_count():
    """A string ending in an escaped backslash ("\\\\") ends there: the 1.5 million objects after it count."""
    content = b'["\\\\\\\\", ' + b"{}," * 1_500_000 + b"{}]"
    assert json.loads(content)[0] == "\\\\"
    assert messages.refusal(_parts(content)) == "a message of more than 1,000,000 JSON values"
    hidden = b'["\\"' + b"{}," * 1_500_000 + b'"]'  # the same objects inside one string: no values
    assert messages.refusal(_parts(hidden)) is None


def test_the_exact_count_stops_once_past_the_bound(monkeypatch):
    """40 MB of short strings holding commas: the count outside strings reads a few megabytes (a million strings
    are a million values) and stops there, rather than all forty."""
    windows, tokens = [], messages._TOKENS

    class Counting:
        def match(self, *args):
            windows.append(args[1])
            return tokens.match(*args)

    monkeypatch.setattr(messages, "_TOKENS", Counting())
    content = b"[" + b'",",' * 10_000_000 + b'""]'
    assert messages.refusal(_parts(content)) == "a message of more than 1,000,000 JSON values"
    assert len(windows) <= 5 and max(windows) < 5 * MiB, windows


@pytest.mark.parametrize("part", ["content", "metadata", "header"])
def test_nesting_deeper_than_DECODE_DEPTH_is_refused_in_every_part(part):
    deep, fine = b"[" * 65 + b"]" * 65, b"[" * 64 + b"]" * 64
    assert messages.refusal(_parts(**{part: fine})) is None
    assert messages.refusal(_parts(**{part: deep})) == "a message nested more than 64 deep"
    assert messages.refusal(_parts(**{part: b'["' + b"[" * 10_000 + b'"]'})) is None  # in a string: no nesting


def test_nesting_is_followed_across_chunks_and_strings():
    """200 arrays open, a 3 MiB string (longer than a chunk), then they close: 200 deep, whatever lies between."""
    content = b"[" * 200 + b'"' + b"x" * (3 * MiB) + b'"' + b"]" * 200
    assert messages.refusal(_parts(content)) == "a message nested more than 64 deep"
    shallow = b'[{"a": [' + b'"' + b"[" * (3 * MiB) + b'"' + b"]}, " + b"[]," * 1_000_000 + b"[]]"
    assert messages.refusal(_parts(shallow)) == "a message of more than 1,000,000 JSON values"


def test_what_the_text_becomes_counts_its_widest_character(monkeypatch):
    """Python stores a string at the width of its widest character: one emoji makes 2 MiB of text 8 MiB."""
    monkeypatch.setattr(limits, "DECODE_BYTES", 4 * MiB)
    text = "x" * (2 * MiB - 200)
    assert messages.refusal(_parts(json.dumps({"text": text}).encode())) is None
    for wide in (json.dumps({"text": text + "\N{GRINNING FACE}"}, ensure_ascii=False).encode(),
                 json.dumps({"text": text + "\N{GRINNING FACE}"}).encode()):  # escaped: \ud83d\ude00
        assert messages.refusal(_parts(wide)) == "a message that would take more than 4 MiB to read"


def test_a_messages_binary_buffers_are_not_kept():
    """Up to 250 buffers of half a megabyte each fit the bounds; the grader, which keeps no widget, copies none."""
    session = kernel.SandboxedSession(key=b"k" * 32)
    frames = session.serialize(session.msg("comm_msg", {"comm_id": "c", "data": {}}), ident=None)
    parts = messages.after_delimiter(frames + [b"b" * (MiB // 2)] * 250)
    assert messages.refusal(parts) is None
    message = session.deserialize(messages.for_session(parts))
    assert message["content"]["comm_id"] == "c" and message["buffers"] == []


def test_size_and_parts_are_bounded_without_a_relay(monkeypatch):
    monkeypatch.setattr(limits, "MESSAGE_BYTES", 1 * MiB)
    assert messages.refusal(_parts(b'"' + b"x" * MiB + b'"')) == "a message of more than 1 MiB"
    assert messages.refusal(_parts(buffers=[b""] * 300)) == "a message of more than 256 parts"


def test_a_message_is_read_with_its_bytes_freed_before_its_values_are_made():
    """32 MiB of text: reading it adds the text and its value less the bytes it came in (one copy more), not the
    text and its value on top of them (two)."""
    session, size = kernel.SandboxedSession(key=b"k" * 32), 32 * MiB
    tracemalloc.start()
    try:
        frames = session.serialize(session.msg("stream", {"name": "stdout", "text": "x" * size}))
        parts = messages.for_session(messages.after_delimiter(frames))
        del frames
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        message = session.deserialize(parts)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert len(message["content"]["text"]) == size and parts[4] == bytearray()
    assert peak < 1.2 * size, peak / MiB


# ==== what the relay reads of ZeroMQ's wire format ===================================================================

GREETING = b"\xff" + bytes(7) + b"\x01\x7f" + bytes([3, 1]) + b"NULL".ljust(20, b"\0") + bytes(32)


def _frame(body, more=False):
    if len(body) < 256:
        return bytes([int(more), len(body)]) + body
    return bytes([int(more) | 2]) + len(body).to_bytes(8, "big") + body


def test_a_stream_read_a_byte_at_a_time_ends_the_same_messages():
    data = GREETING + _frame(b"a" * 300, more=True) + _frame(b"") + _frame(b"b" * 10) + _frame(b"c" * 70_000)
    whole = zmtp.Stream(MiB, 8, 2 * MiB)
    assert whole.feed(data) == (3, None)
    bytewise = zmtp.Stream(MiB, 8, 2 * MiB)
    assert sum(bytewise.feed(data[i:i + 1])[0] for i in range(len(data))) == 3


@pytest.mark.parametrize("greeting", [b"\x00\x05hello", b"\xff" + bytes(8) + b"\x7f", GREETING[:10] + b"\x01"],
                         ids=["ZMTP 1.0", "ZMTP 1.0, signed", "ZMTP 2.0"])
def test_a_greeting_no_libzmq_4_sends_is_unreadable(greeting):
    stream = zmtp.Stream(MiB, 8, 2 * MiB)
    stream.feed(greeting + bytes(64))
    assert stream.unreadable


def test_a_message_over_a_bound_is_refused_at_the_frame_that_crosses_it():
    stream = zmtp.Stream(1_000, 4, MiB)
    head = GREETING + _frame(b"x" * 600, more=True)
    assert stream.feed(head) == (0, None)
    assert stream.feed(bytes([2]) + (500).to_bytes(8, "big")) == (0, "a message of more than 1,000 bytes")
    parts = zmtp.Stream(MiB, 4, 2 * MiB)
    assert parts.feed(GREETING + _frame(b"", more=True) * 4 + _frame(b"")) == (0, "a message of more than 4 parts")


def test_a_frame_zeromq_refuses_itself_is_left_to_it():
    """Junk written to a kernel's socket (0xFF bytes: a frame of 2**64 - 1 bytes) is ZeroMQ's to refuse, as before
    the relay read frames: it gives the connection up, and the cell ends as a timeout, not as out of memory."""
    stream = zmtp.Stream(MiB, 8, 2 * MiB)
    assert stream.feed(GREETING + _frame(b"ok") + b"\xff" * 65536) == (1, None)
    assert stream.left_to_zeromq and not stream.unreadable


class _Through:
    """libzmq on both ends, the relay between: a PUSH socket (the kernel's side) and a PULL (the grader's)."""

    def __init__(self, tmp_path, channel="iopub"):
        self.context = zmq.Context()
        self.push, self.pull = self.context.socket(zmq.PUSH), self.context.socket(zmq.PULL)
        self.push.bind(f"ipc://{tmp_path}/kernel")
        self.calls = []
        self.relay = channels.Relay({str(tmp_path / "relay"): (channel, str(tmp_path / "kernel"))},
                                    lambda: self.calls.append(1)).start()
        self.pull.connect(f"ipc://{tmp_path}/relay")

    def received(self, timeout=5.0):
        out = []
        while self.pull.poll(int(timeout * 1000)):
            out.append(self.pull.recv_multipart())
            timeout = 0.5
        return out

    def close(self):
        self.relay.close()
        for s in (self.push, self.pull):
            s.close(linger=0)
        self.context.term()


@pytest.fixture
def through(tmp_path):
    made = []
    yield lambda **kw: made.append(_Through(tmp_path, **kw)) or made[-1]
    for t in made:
        t.close()


def test_the_relay_reads_libzmqs_own_stream_message_by_message(through):
    """Messages of every shape libzmq sends (empty parts, short and long sizes, many parts) reach the grader whole;
    the relay ends as many messages as it passed on, and one more: libzmq's READY command."""
    t = through()
    sent = [[b""], [b"a" * 255], [b"b" * 256, b"", b"c"], [b"d" * 70_000] * 3, [b"e"] * 200]
    for message in sent:
        t.push.send_multipart(message)
    assert t.received() == sent
    assert t.relay.messages == len(sent) + 1 and t.relay.exceeded is None


def test_a_message_over_MESSAGE_BYTES_never_reaches_zeromq(through, monkeypatch):
    monkeypatch.setattr(limits, "MESSAGE_BYTES", 1 * MiB)
    t = through(channel="stdin")
    t.push.send_multipart([b"before"])
    t.push.send_multipart([b"x" * (MiB // 2), b"y" * (MiB // 2), b"z"])  # one byte over, in its last part
    t.push.send_multipart([b"after"])
    assert t.received() == [[b"before"]]
    assert t.relay.exceeded == "the notebook sent a message of more than 1 MiB on stdin: the grader stopped its kernel"
    assert t.calls == [1]


def test_a_message_of_more_than_MESSAGE_FRAMES_parts_never_reaches_zeromq(through):
    t = through(channel="shell")
    t.push.send_multipart([b""] * (limits.MESSAGE_FRAMES + 1))
    assert t.received(timeout=2) == []
    assert t.relay.exceeded == "the notebook sent a message of more than 256 parts on shell: the grader stopped its " \
                               "kernel"


def test_a_connection_greeting_as_zmtp_2_is_not_forwarded_but_counted(tmp_path):
    """Student code can answer the relay's connection itself: a ZMTP 2.0 greeting (which libzmq would accept, and
    read in a framing the relay does not) gets nothing more through; all it sends still counts."""
    path = tmp_path / "kernel"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    relay = channels.Relay({str(tmp_path / "relay"): ("iopub", str(path))}, lambda: None, budget=4 * MiB).start()
    grader = socket.socket(socket.AF_UNIX)
    try:
        grader.connect(str(tmp_path / "relay"))
        listener.settimeout(10)
        kernel_end, _ = listener.accept()
        kernel_end.sendall(GREETING[:10] + b"\x01\x08" + b"z" * (2 * MiB))
        deadline = time.monotonic() + 10
        while relay.sent < 2 * MiB + 12 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert relay.sent == 2 * MiB + 12
        grader.settimeout(0.5)
        got = b""
        try:
            while chunk := grader.recv(65536):
                got += chunk
        except TimeoutError:
            pass
        assert len(got) < 12 and b"z" not in got  # at most the greeting before its revision: nothing after it
        kernel_end.close()
    finally:
        relay.close()
        grader.close()
        listener.close()


# ==== the client's channels ===========================================================================================

@pytest.mark.parametrize("channel", ["shell", "iopub", "stdin", "control"])
def test_a_channel_refuses_a_message_before_decoding_it_and_names_itself(tmp_path, channel):
    """A real ZeroMQ socket on each side; the kernel's side sends one message within the bounds and one of 2
    million objects, both validly signed: the first is read, the second is never decoded."""
    session = kernel.SandboxedSession(key=b"k" * 32)
    plain, bound = zmq.Context(), zmq.asyncio.Context()
    sender, receiver = plain.socket(zmq.PAIR), bound.socket(zmq.PAIR)
    told = []
    try:
        sender.bind(f"ipc://{tmp_path}/c")
        receiver.connect(f"ipc://{tmp_path}/c")
        reader = kernel._bounded(channel)(receiver, session)
        reader.on_refused = told.append
        session.send(sender, "display_data", {"data": {"text/plain": "fine"}, "metadata": {}})
        session.send(sender, "display_data", b"[" + b"{}," * 2_000_000 + b"{}]")

        async def read_both():
            first = await reader.get_msg(timeout=10)
            with pytest.raises(messages.Refused) as refused:
                await reader.get_msg(timeout=10)
            return first, refused.value

        first, refused = loops.run(read_both())
        assert first["content"]["data"]["text/plain"] == "fine"
        why = f"the notebook sent a message of more than 1,000,000 JSON values on {channel}: the grader stopped its " \
              "kernel"
        assert refused.why == why and told == [why]
    finally:
        sender.close(linger=0)
        receiver.close(linger=0)
        plain.term()
        bound.term()


# ==== graded runs ====================================================================================================

GROWTH = 256 * MiB  # what a flood may add to the grading worker's peak (issue 51)
CELL_TIMEOUT = 30
FLOOD_SECONDS = 12  # an empty-output flood's cell runs this long: tens of thousands of messages
# ... and sends this many at least, however busy the machine (two CPU-bound processes beside the suite slowed the
# kernel to 4,459 messages in 12 s); its cell's limit is far above what sending them takes there (about 30 s).
FLOOD_AT_LEAST = 11 * CELL
FLOOD_CELL_TIMEOUT = 180


@pytest.fixture(scope="module")
def unflooded(tmp_path_factory):
    result, peak = floods.graded(tmp_path_factory.mktemp("unflooded"), cell_timeout=CELL_TIMEOUT)
    assert result["status"] == "graded" and result["score"] == result["max_score"], result["status"]
    return peak


def _graded_or_behind(result):
    """A flooding cell ends one of two ways, as the machine's speed has it: the grader has read its messages within
    nbgrader's wait for the kernel's last one (Execute.iopub_timeout, 4 s) after the cell, and the notebook is graded
    in full; or not, and the cell ends as a timeout that stops the kernel (nbgrader's raise_on_iopub_timeout)."""
    if result["status"] == "graded":
        assert result["score"] == result["max_score"]
    else:
        assert result["status"] == "timeout"
        said = "the kernel did not respond after the cell's time limit"
        assert any(said in m for m in floods.messages(result)), floods.messages(result)[:3]


def _page(folder):
    return (folder / "feedback.html").read_text(encoding="utf-8")


def _outputs_on(page):
    return page.count('<pre class="out">')


def test_a_flood_sends_its_count_however_soon_its_time_is_up():
    """The flood's size holds on any machine: with no time to run, it still sends `at_least` messages."""
    import types

    sent = []
    kernel = types.SimpleNamespace(session=types.SimpleNamespace(send=lambda *args, **kwargs: sent.append(args)),
                                   iopub_socket="iopub", get_parent=lambda channel: {})
    shell = types.SimpleNamespace(kernel=kernel)
    exec(floods.empty_outputs(0, at_least=FLOOD_AT_LEAST), {"get_ipython": lambda: shell})
    assert len(sent) == FLOOD_AT_LEAST and sent[0][:2] == ("iopub", "display_data")


@pytest.mark.grading
@pytest.mark.sandbox
def test_an_empty_output_flood_is_cut_to_a_cells_outputs(tmp_path, unflooded):
    """The issue's first flood, in a free cell for 12 s and 11,000 messages at least: the cell keeps 1,000 outputs
    and says how many it lost, the page stays small, the worker within its unflooded peak plus 256 MiB."""
    result, peak = floods.graded(tmp_path, floods.empty_outputs(FLOOD_SECONDS, at_least=FLOOD_AT_LEAST),
                                 cell_timeout=FLOOD_CELL_TIMEOUT)
    _graded_or_behind(result)
    page = _page(tmp_path)
    dropped = int(re.search(r"([\d,]+) outputs dropped", page).group(1).replace(",", ""))
    if result["status"] == "graded":  # every message was read: all but the cell's 1,000 were dropped
        assert dropped >= FLOOD_AT_LEAST - CELL  # a real flood: ten times what a cell keeps, at least
    assert _outputs_on(page) < CELL + 100 and len(page) < 1 * MiB
    assert peak <= unflooded + GROWTH, (peak - unflooded) / MiB


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize(("objects", "why"), [(60_000_000, "a message of more than 128 MiB"),
                                              (30_000_000, "a message of more than 1,000,000 JSON values")],
                         ids=["180 MB, stopped by the relay", "90 MB, never decoded"])
def test_a_message_of_millions_of_objects_stops_the_kernel(tmp_path, unflooded, objects, why):
    """The issue's second flood (60 million objects, 180 MB), and one small enough for the relay (30 million,
    90 MB) that the client does not decode: out of memory, the student reads which channel, the worker stays
    within its unflooded peak plus 256 MiB (without the bounds: 4 GiB)."""
    result, peak = floods.graded(tmp_path, floods.objects(objects), cell_timeout=CELL_TIMEOUT)
    said = f"the notebook sent {why} on iopub: the grader stopped its kernel"
    assert result["status"] == "out of memory"
    assert any(said in m for m in floods.messages(result)), floods.messages(result)[:3]
    assert said in _page(tmp_path)
    assert peak <= unflooded + GROWTH, (peak - unflooded) / MiB


# Student code that sends outputs of next to nothing, each way it can, for 2 s each: one free cell of 14 s on any
# machine. Each flood is bounded by time, not by a count of messages: a count takes as long as the machine's speed
# says, and on a busy one it ran the cell past its 30 s limit (a CellTimeoutError, not the outcome under test).
TINY_FLOODS = "\n".join([
    floods.signed("update_display_data", '{"data": {}, "metadata": {}, "transient": {"display_id": "d"}}', 2),
    floods.signed("clear_output", '{"wait": False}', 2),
    floods.signed("execute_result", '{"data": {}, "metadata": {}, "execution_count": 1}', 2),
    floods.signed("stream", '{"name": ("stdout", "stderr")[sent % 2], "text": ""}', 2),
    floods.signed("comm_msg", '{"comm_id": "c", "data": {}}', 2),
    floods.signed("display_data", '{"data": {}, "metadata": {"x": 1}}', 2, metadata='{"note": sent}'),
    "import time\n"
    "from IPython.display import display, clear_output, update_display\n"
    "end, i = time.monotonic() + 2, 0\n"
    "while time.monotonic() < end:\n"
    "    display({}, raw=True, display_id='h')\n"
    "    update_display({}, raw=True, display_id='h')\n"
    "    clear_output(wait=i % 2 == 0)\n"
    "    i += 1\n",
])


@pytest.mark.grading
@pytest.mark.sandbox
def test_every_kind_of_tiny_output_is_bounded(tmp_path, unflooded):
    """Updates, clear_output storms, empty results and streams, comm messages, metadata-only outputs and
    IPython's own display functions, in one free cell: the cell's outputs cut to its bound."""
    result, peak = floods.graded(tmp_path, TINY_FLOODS, cell_timeout=CELL_TIMEOUT)
    _graded_or_behind(result)
    page = _page(tmp_path)
    assert "outputs dropped" in page and _outputs_on(page) < CELL + 100 and len(page) < 1 * MiB
    assert peak <= unflooded + GROWTH, (peak - unflooded) / MiB


# One message over a bound, on each channel the grader reads or the relay counts.
OVER = {
    "metadata nested 500 deep": ("iopub", floods.signed(
        "display_data", '{"data": {}, "metadata": {}}',
        metadata="__import__('functools').reduce(lambda m, _: {'m': m}, range(500), {})"),
        "a message nested more than 64 deep"),
    "a reply of 2 million values on shell": ("shell", floods.signed("execute_reply", "b'[' + b'0,' * 2_000_000 + "
                                                                    "b'0]'", channel="shell"),
                                             "a message of more than 1,000,000 JSON values"),
    "130 MiB on stdin": ("stdin", floods.signed("input_request", "b'\"' + b'x' * (130 * 2**20) + b'\"'",
                                                channel="stdin"),
                         "a message of more than 128 MiB"),
}


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("attack", sorted(OVER))
def test_a_message_over_a_bound_on_any_channel_stops_the_kernel(tmp_path, unflooded, attack):
    channel, source, why = OVER[attack]
    result, peak = floods.graded(tmp_path, source + "time.sleep(20)\n", cell_timeout=CELL_TIMEOUT)
    said = f"the notebook sent {why} on {channel}: the grader stopped its kernel"
    assert result["status"] == "out of memory"
    assert any(said in m for m in floods.messages(result)), floods.messages(result)[:3]
    assert peak <= unflooded + GROWTH, (peak - unflooded) / MiB


# ---- through `grade`: a class with flooders in it ---------------------------------------------------------------

@pytest.fixture(scope="module")
def flooded_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("flooded-class")
    course_root = grading.make_course(base / "course", floods.ASSIGNMENT)
    honest = nbtools.completed_learner(floods.ASSIGNMENT)

    def edited(source):
        nb = nbtools.completed_learner(floods.ASSIGNMENT)
        cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("x_try"))
        cell.source = source
        return nb

    submissions = {"classmate-a": honest, "classmate-b": honest,  # the flooders' honest twins, too
                   "flood-empty-outputs": edited(floods.empty_outputs(FLOOD_SECONDS)),
                   "flood-objects": edited(floods.objects(60_000_000)),
                   "flood-decoded": edited(floods.objects(30_000_000)),
                   # A name its error output cuts: nbgrader would add the reply's own error, uncut, beside it.
                   "long-error-name": edited("raise type('E' * 300, (Exception,), {})('x' * 30_000_000)\n")}
    grading.write_submissions(base / "submitted", floods.ASSIGNMENT, submissions)
    # One worker, which grades in the students' order: the classmates first, then the flooders (see the peak's test).
    results = grading.run_batch(floods.ASSIGNMENT, base / "submitted", base / "results", course_root, jobs=1,
                                cell_timeout=CELL_TIMEOUT)
    timing = {}
    for path in base.rglob("timing.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "student" in record:
                timing[record["student"]] = record["stages"]
    return {"results": results, "timing": timing, "course": course_root}


@pytest.mark.grading
@pytest.mark.sandbox
def test_classmates_of_flooders_keep_full_marks(flooded_class):
    for student in ("classmate-a", "classmate-b"):
        result = flooded_class["results"][student]
        assert result["status"] == "graded" and result["score"] == result["max_score"] > 0, student


@pytest.mark.grading
@pytest.mark.sandbox
def test_a_flooders_autograded_notebook_keeps_a_bounded_number_of_outputs(flooded_class):
    _graded_or_behind(flooded_class["results"]["flood-empty-outputs"])
    path = flooded_class["course"] / "autograded" / "flood-empty-outputs" / floods.ASSIGNMENT / \
        f"{floods.ASSIGNMENT}.ipynb"
    nb = nbformat.read(path, as_version=4)
    kept = sum(len(c.get("outputs", [])) for c in nb.cells)
    assert CELL < kept < CELL + 200  # the flood's cell's 1,000, the note, and the notebook's own outputs
    assert path.stat().st_size < 2 * MiB  # 350,000 outputs made 28.8 MiB


@pytest.mark.grading
@pytest.mark.sandbox
def test_an_error_whose_name_is_cut_is_kept_once_and_cut(flooded_class):
    result = flooded_class["results"]["long-error-name"]
    assert result["status"] == "graded" and result["score"] == result["max_score"]
    path = flooded_class["course"] / "autograded" / "long-error-name" / floods.ASSIGNMENT / f"{floods.ASSIGNMENT}.ipynb"
    errors = [o for c in nbformat.read(path, as_version=4).cells for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert len(errors) == 1 and len(errors[0].evalue) < 5_000
    assert path.stat().st_size < 2 * MiB  # uncut, the reply's error alone was 60 MB


@pytest.mark.grading
@pytest.mark.sandbox
def test_flooders_are_stopped_naming_the_channel(flooded_class):
    for student, why in (("flood-objects", "a message of more than 128 MiB"),
                         ("flood-decoded", "a message of more than 1,000,000 JSON values")):
        result = flooded_class["results"][student]
        assert result["status"] == "out of memory", student
        said = f"the notebook sent {why} on iopub"
        assert any(said in c["message"] for c in result["cells"]), (student, result["cells"][:1])


@pytest.mark.grading
@pytest.mark.sandbox
def test_each_worker_reports_its_own_peak_within_256_mib_of_the_twins(flooded_class):
    """The grading worker reports its own peak resident memory with each student (no cgroup needed). Graded as root,
    it may not reset the peak between students, so the one worker grades the classmates first, then each flooder:
    the peak it reports with a flooder is at least that flooder's own, and is within 256 MiB of the classmates'."""
    peaks = {student: stages["worker peak MiB"] for student, stages in flooded_class["timing"].items()}
    assert set(peaks) == set(flooded_class["results"]), peaks
    honest = max(peaks[s] for s in ("classmate-a", "classmate-b"))
    for student in ("flood-empty-outputs", "flood-objects", "flood-decoded", "long-error-name"):
        assert peaks[student] <= honest + GROWTH / MiB, (student, peaks)
