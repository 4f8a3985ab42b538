"""The instructor's process never unpickles what comes from a Dask cluster: msgpack's plain data only.

Dask's wire protocol (distributed.protocol.core.loads) unpickles every object a peer
marks `__Pickled__`, whatever the client's `deserializers` say, and distributed no longer
lets the scheduler's pickling be turned off (`distributed.scheduler.pickle: false` stops it
from starting). A worker that student code took over could send such an object. `install`
replaces that function, in this process only, with one that decodes msgpack and nothing
else: a pickled object, or data serialized by any family but msgpack, arrives as a `Refused`
marker (never as an exception in the middle of Dask's message loop), which the grader
treats as a failed task. The scheduler therefore never runs in this process (cluster.py).
"""

import threading

import msgpack

REFUSED = []  # what was refused, in this process (the tests read it)
_LOCK = threading.Lock()
_ORIGINAL = {}


class Refused:
    """In place of an object the guard would not decode."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return f"Refused({self.what!r})"


def _refuse(what):
    with _LOCK:
        REFUSED.append(what)
    return Refused(what)


def loads(frames, deserialize=True, deserializers=None):
    """distributed.protocol.core.loads, with plain msgpack data the only thing that is decoded."""
    from distributed.protocol.core import msgpack_opts
    from distributed.protocol.serialize import msgpack_decode_default

    def hook(obj):
        if obj.get("__Pickled__", 0):
            return _refuse("a pickled object")
        offset = obj.get("__Serialized__", 0)
        if offset > 0:
            return _serialized(frames, offset)
        if "__Enum__" in obj:  # msgpack_decode_default would import a module for it
            return _refuse("an enum")
        return msgpack_decode_default(obj)

    return msgpack.loads(frames[0], object_hook=hook, use_list=False, **msgpack_opts)


def _serialized(frames, offset):
    """A `__Serialized__` object: decoded only when it was serialized by the msgpack family."""
    from distributed.protocol.compression import decompress
    from distributed.protocol.core import msgpack_opts
    from distributed.protocol.serialize import merge_and_deserialize

    try:
        header = msgpack.loads(frames[offset], use_list=False, **msgpack_opts)
        sub = frames[offset + 1: offset + 1 + int(header["num-sub-frames"])]
        if "compression" in header:
            sub = decompress(header, sub)
        return merge_and_deserialize(header, sub, deserializers=["msgpack"])
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:  # another family, or a bad header
        return _refuse(str(exc)[:200])


def install():
    """Put the guard in place of Dask's loads in this process (idempotent)."""
    import distributed.protocol as protocol
    import distributed.protocol.core as core

    if not _ORIGINAL:
        _ORIGINAL["core"], _ORIGINAL["protocol"] = core.loads, protocol.loads
    core.loads = protocol.loads = loads


def uninstall():
    import distributed.protocol as protocol
    import distributed.protocol.core as core

    if _ORIGINAL:
        core.loads, protocol.loads = _ORIGINAL.pop("core"), _ORIGINAL.pop("protocol")
