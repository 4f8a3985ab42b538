"""A small, safe call protocol between the trusted grader and a sandboxed process running student code.

Only bounded data crosses the channel: None, booleans, numbers, strings,
bytes, tuples, lists, dicts and numpy arrays and scalars of numeric, boolean or
text dtypes, each message within `Budget`, checked before anything is
allocated. Nothing is ever unpickled or evaluated.

The two sides are not equal. The student's side *exports*: an object of the
learner's that is not data (a function, an instance of a learner's class)
stays in the sandbox and the grader gets a `Remote` handle to it. The grader's
side exports nothing: it sends data, the student's own handles back, and
*callbacks*. A callback is how a test hands the learner a function (a
sublayer, a map to test): the student's side can only call it, with data, and
gets data back. No handle, attribute or object of the grader's ever reaches the
student's process, so whatever it sends can at worst be wrong data. The grader
also answers `reference` requests (`on_reference`): a stub of the public build
of ffn_helpers (public.py) asks for a course function by its dotted name, with
data and the learner's own handles, and gets data back, or a refusal. Every call the
grader's side runs for the other side, a course function or a callback, runs under the
peer's `deadline` (`_until`): the time of the cell or test that made it.

Three parts, one job each: `Codec` writes a message's values and reads them back
(what is data, what becomes a handle or a callback, the arrays a call changed in
place); `write_frame` and `read_frame` carry one message: b"FFN1", header length,
buffer count, a JSON header, then each buffer with its length; `Peer` makes
requests and serves the other side's. This module uses only the standard library
and numpy: its source also runs inside the sandbox, ahead of `clean_runner`.
"""

import builtins
import json
import os
import select
import signal
import struct
import threading
import time

import numpy as np

MAGIC = b"FFN1"
MAX_HEADER = 16 * 1024 * 1024
MAX_PAYLOAD = 64 * 1024 * 1024
MAX_DEPTH = 40
MAX_NODES = 200_000  # values in one message (list items, dict keys and values...)
MAX_STRING = 16 * 1024  # characters of one string
MAX_STRINGS = 4096  # strings in one message: with MAX_STRING, np.asarray of them stays under 256 MiB
DATA_KINDS = "biufcUS"
_NATIVE = (type(None), bool, int, float, str)


class ChannelError(BaseException):
    """The channel itself failed. Not an Exception: code under test that catches
    every Exception (as a test's `checks.call` does) must not swallow it."""


class ProtocolError(ChannelError):
    """The other side sent something that is not a well-formed message."""


class ChannelTimeout(ChannelError):
    """No answer before the deadline; `request_id` is the request still waiting for one."""

    request_id = None


class ChannelClosed(ChannelError):
    """The other side went away (it exited, crashed or was killed)."""


class RemoteError(Exception):
    """An exception raised on the other side whose type is not a built-in one."""


class Budget:
    """What one message may still hold; `take` refuses before anything is allocated."""

    def __init__(self):
        self.nodes, self.strings, self.nbytes = MAX_NODES, MAX_STRINGS, MAX_PAYLOAD

    def take(self, nodes=1, strings=0, nbytes=0, error=ValueError):
        self.nodes -= nodes
        self.strings -= strings
        self.nbytes -= nbytes
        if self.nodes < 0 or self.strings < 0 or self.nbytes < 0:
            raise error(f"the value is larger than a message may be (at most {MAX_NODES:,} values, "
                        f"{MAX_STRINGS:,} strings and {MAX_PAYLOAD // 2**20} MiB)")


def _exception_class(name):
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls
    return None


def rebuild_exception(info):
    """The exception to raise locally for an error reported by the other side."""
    name, message = str(info.get("type", "Exception"))[:200], str(info.get("message", ""))[:20000]
    cls = _exception_class(name)
    if cls is not None:
        try:
            return cls(message)
        except Exception:
            pass
    return RemoteError(f"{name}: {message}" if message else name)


def describe_exception(exc):
    try:
        message = str(exc)
    except Exception:
        message = "<the exception's message could not be read>"
    return {"type": type(exc).__name__, "message": message[:20000]}


class Remote:
    """A handle to an object of the learner's, held by the grader.

    It forwards calls, attribute reads (not dunders) and attribute writes. It
    has no length, items or truth of its own, so numpy and the checks treat it
    as one opaque object, never as a sequence to pull item by item.
    """

    __slots__ = ("_r_peer", "_r_id", "_r_type", "_r_root", "_r_name")

    def __init__(self, peer, handle_id, type_name, root, name=None):
        object.__setattr__(self, "_r_peer", peer)
        object.__setattr__(self, "_r_id", handle_id)
        object.__setattr__(self, "_r_type", type_name)
        object.__setattr__(self, "_r_root", root)
        object.__setattr__(self, "_r_name", name)

    @property
    def __name__(self):
        return self._r_name or self._r_type

    def _r_request(self, op, values=None, **fields):
        peer = self._r_peer
        return peer.request({"op": op, "target": self, **fields}, values=values, root=self._r_root)

    def __call__(self, *args, **kwargs):
        # numpy's error handling of the caller (np.errstate in a test) holds for the call on the other side
        return self._r_request("call", values={"args": list(args), "kwargs": kwargs}, errstate=np.geterr())

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._r_request("getattr", name=name)

    def __setattr__(self, name, value):
        self._r_request("setattr", values={"value": value}, name=name)

    def __repr__(self):
        return f"<{self._r_peer.other}'s {self._r_type} object>"


class Callback:
    """A function of the grader's as the student's side sees it: callable with data, nothing else."""

    __slots__ = ("_cb_peer", "_cb_id", "__name__")

    def __init__(self, peer, callback_id, name):
        self._cb_peer, self._cb_id, self.__name__ = peer, callback_id, name

    def __call__(self, *args, **kwargs):
        return self._cb_peer.request({"op": "callback", "cb": self._cb_id},
                                     values={"args": list(args), "kwargs": kwargs}, data_only=True)

    def __repr__(self):
        return f"<the course's function {self.__name__}>"


class Codec:
    """What a message's values are on the wire, for one end of the channel (`peer`): data as JSON and raw buffers,
    within Budget, read back exactly; what is not data as a handle (the student's side exports its objects) or a
    callback (the grader's side hands over functions). Nothing is ever unpickled or evaluated."""

    def __init__(self, peer):
        self.peer, self.exports = peer, peer.exports
        self.handles, self._next_handle = {}, 1  # the student's side: handle id -> the learner's object
        self.callbacks = {}  # the grader's side: callback id -> function

    def handle(self, obj, data_only=False):
        """The JSON form of what is not data: the other side's own handle, a callback (the grader's side) or a
        handle to one of this side's objects (the student's); TypeError where only data may go."""
        if isinstance(obj, Remote) and obj._r_peer is self.peer:
            return {"$h": obj._r_id, "o": self.peer.other}
        if data_only:
            raise TypeError(f"only data can be sent here, not a {type(obj).__name__}")
        if not self.exports:
            if not callable(obj):
                raise TypeError(f"the grader sends the learner's code only data, not a {type(obj).__name__}")
            cid = len(self.callbacks) + 1
            self.callbacks[cid] = obj
            return {"$cb": cid, "n": str(getattr(obj, "__name__", "function"))[:100]}
        hid = self._next_handle
        self._next_handle += 1
        self.handles[hid] = obj
        return {"$h": hid, "o": self.peer.name, "t": type(obj).__name__[:100]}

    def encode(self, value, buffers, depth=0, data_only=False, budget=None):
        """The JSON form of `value`; raw array bytes are appended to `buffers`.

        `data_only`: refuse what is not data (no handle, no callback)."""
        if depth > MAX_DEPTH:
            raise ValueError("value nested too deeply to send")
        budget = budget or Budget()
        budget.take()
        t = type(value)

        def inner(v):
            return self.encode(v, buffers, depth + 1, data_only, budget)

        if t is str:
            if len(value) > MAX_STRING:
                raise ValueError(f"a string of {len(value):,} characters is too long to send (at most {MAX_STRING:,})")
            budget.take(0, strings=1, nbytes=len(value))
            return value
        if t in _NATIVE:
            return value if t is not float else {"$f": value.hex()}
        if t is complex:
            return {"$c": [value.real.hex(), value.imag.hex()]}
        if t is bytes:
            budget.take(0, nbytes=len(value))
            buffers.append(value)
            return {"$b": len(buffers) - 1}
        if t is tuple or t is list:
            budget.take(len(value))  # before encoding the items: a huge list is refused at once
            items = [inner(v) for v in value]
            return {"$t": items} if t is tuple else items
        if t is dict:
            budget.take(2 * len(value))
            return {"$d": [[inner(k), inner(v)] for k, v in value.items()]}
        if t is np.ndarray and value.dtype.kind in DATA_KINDS and not value.dtype.fields:
            budget.take(0, nbytes=value.nbytes)
            buffers.append(np.ascontiguousarray(value).tobytes())
            return {"$a": len(buffers) - 1, "dtype": value.dtype.str, "shape": list(value.shape)}
        if isinstance(value, np.generic) and t.__module__ == "numpy" and value.dtype.kind in DATA_KINDS:
            budget.take(0, nbytes=value.nbytes)
            buffers.append(np.asarray(value).tobytes())
            return {"$s": len(buffers) - 1, "dtype": value.dtype.str}
        return self.handle(value, data_only)

    def decode(self, value, buffers, depth=0, data_only=False, budget=None):
        """The value a message holds, within `Budget`. `data_only`: a handle or callback is an error."""
        if depth > MAX_DEPTH:
            raise ProtocolError("value nested too deeply")
        budget = budget or Budget()
        budget.take(error=ProtocolError)

        def inner(v):
            return self.decode(v, buffers, depth + 1, data_only, budget)

        if type(value) is str:
            if len(value) > MAX_STRING:
                raise ProtocolError(f"a string of {len(value):,} characters (at most {MAX_STRING:,})")
            budget.take(0, strings=1, nbytes=len(value), error=ProtocolError)
            return value
        if value is None or type(value) in (bool, int):
            return value
        if type(value) is list:
            budget.take(len(value), error=ProtocolError)
            return [inner(v) for v in value]
        if type(value) is not dict or len(value) == 0:
            raise ProtocolError(f"unexpected {type(value).__name__} in a message")
        for tag, decode_tagged in _TAGGED:  # in this order: a dict with two tags is read by the first
            if tag in value:
                return decode_tagged(self, value, buffers, inner, data_only, budget)
        raise ProtocolError("unknown value tag")

    def write_back(self, entries, buffers, values):
        """Arrays the other side changed in place: change ours the same way (as a call in one process would)."""
        args, kwargs = values.get("args") or [], values.get("kwargs") or {}
        for entry in entries[:64]:
            if type(entry) is not list or len(entry) != 2:
                raise ProtocolError("malformed write-back")
            key, changed = entry[0], self.decode(entry[1], buffers)
            if type(key) is int and 0 <= key < len(args):
                original = args[key]
            elif type(key) is str:
                original = kwargs.get(key)
            else:
                continue
            if type(original) is np.ndarray and type(changed) is np.ndarray and original.flags.writeable \
                    and original.shape == changed.shape and original.dtype == changed.dtype:
                original[...] = changed


class Peer:
    """One end of the channel: sends and receives frames, makes requests and serves the other side's. What a
    message's values are on the wire is its `codec`'s (Codec).

    `name` is this side's name ("grader" or "student"). `exports`: this side
    hands out handles to its objects (the student's side); the grader's side
    sends only data, and functions as callbacks (see the module's doc).
    """

    codec_class = Codec  # a subclass may write values its own way (clean_runner's)

    def __init__(self, sock, name, other, exports=False):
        self.sock, self.name, self.other = sock, name, other
        self.exports = exports
        self.codec = self.codec_class(self)
        self.pid = os.getpid()  # a forked copy of this process must never speak on the channel
        self._next_request = 1
        self.deadline = None  # time.monotonic() value; None waits forever
        self.on_reply = None  # called with each reply's "notes" (set by the grader)
        self.serve_hook = None  # called before replying, returns extra "notes" (set by the student's side)
        self.on_reference = None  # the grader's side: (dotted name, args, kwargs) -> a course function's result
        self.root = None  # the name whose call is under way (for the student's side)

    # --- framing (write_frame, read_frame) ---------------------------------------------------------------
    def send(self, message, buffers=()):
        if os.getpid() != self.pid:
            os._exit(0)  # the learner's code forked, and the copy is unwinding through this loop
        write_frame(self.sock, message, buffers, self.deadline)

    def receive(self):
        """(message, its buffers): the next frame, read by the peer's deadline."""
        return read_frame(self.sock, self.deadline)

    # --- requests ---------------------------------------------------------------------------------------
    def request(self, message, values=None, root=None, data_only=False):
        """Send a request and serve the other side's requests until its answer comes.

        A "target" field is a handle of the other side's; `values` are encoded as
        data (and, from the grader, callbacks), with `data_only` as data alone.
        """
        rid = self._next_request
        self._next_request += 1
        buffers = []
        parts = {"id": rid}
        budget = Budget()
        for key, value in message.items():
            parts[key] = self.codec.handle(value, data_only=True) if key == "target" else value
        for key, value in (values or {}).items():
            parts[key] = self.codec.encode(value, buffers, data_only=data_only, budget=budget)
        if root is not None:
            parts["root"] = root
        self.send(parts, buffers)
        return self.await_reply(rid, root, values)

    def await_reply(self, rid, root=None, values=None):
        """Serve the other side's requests until the answer to request `rid` comes; return or raise it."""
        while True:
            try:
                reply, bufs = self.receive()
            except ChannelTimeout as exc:
                exc.request_id = rid
                raise
            if reply.get("re") == rid:
                if type(reply.get("writeback")) is list and values:
                    self.codec.write_back(reply["writeback"], bufs, values)
                if self.on_reply is not None and "notes" in reply:
                    self.on_reply(reply["notes"], root)
                if reply.get("ok") is True:
                    return self.codec.decode(reply.get("value"), bufs, data_only=self.exports)
                raise rebuild_exception(reply.get("error") if type(reply.get("error")) is dict else {})
            if "op" in reply and "id" in reply:
                self.serve(reply, bufs)
            else:
                raise ProtocolError("unexpected message")

    def watch(self, args, kwargs):
        """Called with a call's decoded arguments just before the call (see StudentPeer)."""

    def take_writeback(self):
        """(argument index or name, array) of the arguments the last call changed in place; see StudentPeer."""
        return []

    def serve(self, message, buffers):
        """Answer one request from the other side."""
        previous_root = self.root
        self.root = message.get("root") if isinstance(message.get("root"), str) else None
        try:
            value = self.perform(message, buffers)
            bufs = []
            reply = {"re": message["id"], "ok": True,
                     "value": self.codec.encode(value, bufs, data_only=not self.exports)}
        except ChannelError:
            raise
        except BaseException as exc:  # noqa: B036 (SystemExit, KeyboardInterrupt too: they are answers)
            reply, bufs = {"re": message["id"], "ok": False, "error": describe_exception(exc)}, []
        finally:
            self.root = previous_root
        changed = self.take_writeback()
        if changed:
            try:
                reply["writeback"] = [[key, self.codec.encode(array, bufs)] for key, array in changed]
            except ValueError:
                pass  # too large to send back: the caller keeps its arrays as they were
        if self.serve_hook is not None:
            notes = self.serve_hook(message)
            if notes:
                reply["notes"] = notes
        self.send(reply, bufs)

    def perform(self, message, buffers):
        if not self.exports:  # the grader's side: it answers calls of its callbacks and of the course's functions
            if self.deadline is not None and time.monotonic() > self.deadline:
                # a learner that keeps asking would otherwise hold the grader past the deadline: each request
                # is answered at once, so waiting for the other side's answer never times out
                raise ChannelTimeout("no answer before the deadline (the learner's code kept calling the grader)")
            with _until(self.deadline):  # one slow call would hold it there as well
                return self._perform_for_learner(message, buffers)
        return self._perform_for_grader(message, buffers)

    def _perform_for_learner(self, message, buffers):
        """The grader's side: a course function (`on_reference`) or a callback, called with data."""
        op = message.get("op")
        if op == "reference" and self.on_reference is not None:
            # a stub of ffn_helpers' public build: data, and the learner's own objects as handles (a sublayer)
            args = self.codec.decode(message.get("args", []), buffers)
            kwargs = self.codec.decode(message.get("kwargs", {"$d": []}), buffers)
            _check_call(args, kwargs)
            return self.on_reference(str(message.get("name"))[:200], args, kwargs)
        if op != "callback":
            raise ProtocolError(f"the grader does not serve {str(op)[:40]!r} requests")
        function = self.codec.callbacks.get(message.get("cb"))
        if function is None:
            raise ProtocolError("unknown callback")
        args = self.codec.decode(message.get("args", []), buffers, data_only=True)
        kwargs = self.codec.decode(message.get("kwargs", {"$d": []}), buffers, data_only=True)
        _check_call(args, kwargs)
        return function(*args, **kwargs)

    def _perform_for_grader(self, message, buffers):
        """The student's side: a call, attribute or request of the grader's on the learner's objects."""
        op = message.get("op")
        if op in ("call", "getattr", "setattr"):
            target = self.codec.decode(message.get("target"), buffers)
            if op == "call":
                args = self.codec.decode(message.get("args", []), buffers)
                kwargs = self.codec.decode(message.get("kwargs", {"$d": []}), buffers)
                if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
                    raise ProtocolError("malformed call")
                self.watch(args, kwargs)
                return target(*args, **kwargs)
            name = str(message.get("name"))
            if name.startswith("__"):
                raise AttributeError(name)
            if op == "getattr":
                return getattr(target, name)
            setattr(target, name, self.codec.decode(message.get("value"), buffers))
            return None
        return self.perform_extra(op, message, buffers)

    def perform_extra(self, op, message, buffers):
        raise ProtocolError(f"unknown request {op!r}")


# --- frames: b"FFN1", header length, buffer count, a JSON header, then each buffer with its length --------------
def write_frame(sock, message, buffers, deadline):
    """Send one message (a JSON header) and its raw buffers, by `deadline` (time.monotonic(); None: no limit)."""
    header = json.dumps(message, allow_nan=False).encode()
    parts = [MAGIC, struct.pack("<II", len(header), len(buffers)), header]
    for buf in buffers:
        parts += [struct.pack("<Q", len(buf)), buf]
    view = memoryview(b"".join(parts))
    while view:
        _wait(sock, deadline, select_write=True)
        try:
            n = sock.send(view)  # a socket's own call: on Windows a socket is no file descriptor
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            raise ChannelClosed(str(exc)) from None
        view = view[n:]


def read_frame(sock, deadline):
    """(message, buffers) of the next frame, each size checked before it is read; ProtocolError if it is none."""
    head = _read(sock, 12, deadline)
    if head[:4] != MAGIC:
        raise ProtocolError("bad frame")
    n_header, n_buffers = struct.unpack("<II", head[4:])
    if n_header > MAX_HEADER or n_buffers > 100000:
        raise ProtocolError("frame too large")
    try:
        message = json.loads(_read(sock, n_header, deadline))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"unreadable header: {exc}") from None
    buffers, total = [], 0
    for _ in range(n_buffers):
        (size,) = struct.unpack("<Q", _read(sock, 8, deadline))
        total += size
        if total > MAX_PAYLOAD:
            raise ProtocolError(f"message larger than {MAX_PAYLOAD // 2**20} MiB")
        buffers.append(_read(sock, size, deadline))
    if type(message) is not dict:
        raise ProtocolError("a message must be an object")
    return message, buffers


def _wait(sock, deadline, select_write=False):
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
    fd = sock.fileno()
    ready = select.select([], [fd], [], timeout)[1] if select_write else select.select([fd], [], [], timeout)[0]
    if not ready:
        raise ChannelTimeout("no answer before the deadline")


def _read(sock, n, deadline):
    chunks, left = [], n
    while left:
        _wait(sock, deadline)
        try:
            chunk = sock.recv(min(left, 1 << 20))
        except (ConnectionResetError, ConnectionAbortedError) as exc:
            raise ChannelClosed(str(exc)) from None
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _until:
    """Raise ChannelTimeout in this process's main thread when `deadline` (time.monotonic()) passes, for the calls
    the grader's side runs for the learner's code (a course function, a callback): a slow one stops at its test's
    deadline, and its time counts toward that test. SIGALRM, so the grader's Python stops between two operations:
    one C call (a matrix product) runs to its end, bounded by the message's size and the judge's memory. Without
    a deadline, off the main thread, without setitimer (Windows) or with a timer already set: no alarm."""

    armed = False  # one alarm at a time: a call nested in another (a callback inside a course function) shares it

    def __init__(self, deadline):
        self.deadline, self.arming = deadline, False

    def __enter__(self):
        if self.deadline is None or _until.armed or not hasattr(signal, "setitimer") \
                or threading.current_thread() is not threading.main_thread() \
                or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
            return self
        self.previous = signal.signal(signal.SIGALRM, self._overran)
        self.arming = _until.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(1e-3, self.deadline - time.monotonic()))
        return self

    @staticmethod
    def _overran(signum, frame):
        raise ChannelTimeout("no answer before the deadline (a call the learner's code made ran past it)")

    def __exit__(self, *exc):
        if not self.arming:
            return False
        try:  # an alarm that comes now is ignored; one that came just before raises here, and is cleaned up below
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if self.previous is None else self.previous)
            _until.armed = self.arming = False
        return False


def _check_call(args, kwargs):
    if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
        raise ProtocolError("malformed call")


# --- decoding tagged values: each function reads one tag's dict (see Codec.decode) ------------------------------
def _buffer(buffers, index):
    if type(index) is not int or not 0 <= index < len(buffers):
        raise ProtocolError("bad buffer reference")
    return buffers[index]


def _float(codec, value, buffers, inner, data_only, budget):
    return float.fromhex(value["$f"])


def _complex(codec, value, buffers, inner, data_only, budget):
    re_, im = value["$c"]
    return complex(float.fromhex(re_), float.fromhex(im))


def _bytes(codec, value, buffers, inner, data_only, budget):
    return bytes(_buffer(buffers, value["$b"]))


def _tuple(codec, value, buffers, inner, data_only, budget):
    if type(value["$t"]) is not list:
        raise ProtocolError("malformed tuple")
    budget.take(len(value["$t"]), error=ProtocolError)
    return tuple(inner(v) for v in value["$t"])


def _dict(codec, value, buffers, inner, data_only, budget):
    if type(value["$d"]) is not list:
        raise ProtocolError("malformed dict")
    budget.take(2 * len(value["$d"]), error=ProtocolError)
    out = {}
    for pair in value["$d"]:
        if type(pair) is not list or len(pair) != 2:
            raise ProtocolError("malformed dict")
        key = inner(pair[0])
        try:
            out[key] = inner(pair[1])
        except TypeError:  # an unhashable key (a list)
            raise ProtocolError("a dict key that cannot be a key") from None
    return out


def _array(codec, value, buffers, inner, data_only, budget):
    """An ndarray ($a, with its shape) or a numpy scalar ($s), of a data dtype, from its raw bytes."""
    dtype = np.dtype(str(value["dtype"]))
    if dtype.kind not in DATA_KINDS or dtype.fields or dtype.hasobject:
        raise ProtocolError(f"dtype {dtype} cannot be sent")
    raw = _buffer(buffers, value["$a"] if "$a" in value else value["$s"])
    budget.take(0, nbytes=len(raw), error=ProtocolError)
    if "$s" in value:
        if len(raw) != dtype.itemsize:
            raise ProtocolError("scalar of the wrong size")
        return np.frombuffer(raw, dtype=dtype)[0]
    if type(value.get("shape")) is not list or len(value["shape"]) > 64 \
            or not all(type(n) is int for n in value["shape"]):
        raise ProtocolError("malformed array shape")
    shape = tuple(value["shape"])
    if any(n < 0 for n in shape) or int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(raw):
        raise ProtocolError("array data does not match its shape")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def _handle(codec, value, buffers, inner, data_only, budget):
    hid = value["$h"]
    if data_only:
        raise TypeError("only data is accepted here, not an object")
    if value.get("o") == codec.peer.name:
        if not codec.exports or hid not in codec.handles:
            raise ProtocolError("unknown handle")
        return codec.handles[hid]
    if codec.exports:  # the grader's side has no objects to hand out
        raise ProtocolError("a handle from a side that exports none")
    return Remote(codec.peer, hid, str(value.get("t", "object"))[:100], codec.peer.root)


def _callback(codec, value, buffers, inner, data_only, budget):
    if data_only or not codec.exports:  # only the grader sends callbacks, only to the student's side
        raise ProtocolError("a callback where none may come")
    return Callback(codec.peer, value["$cb"], str(value.get("n", "function"))[:100])


_TAGGED = (("$f", _float), ("$c", _complex), ("$b", _bytes), ("$t", _tuple), ("$d", _dict), ("$a", _array),
           ("$s", _array), ("$h", _handle), ("$cb", _callback))
