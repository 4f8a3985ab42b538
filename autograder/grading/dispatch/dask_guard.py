"""The instructor's process never unpickles what comes from a Dask cluster: msgpack's plain data only.

Dask's wire protocol (distributed.protocol.core.loads) unpickles every object a peer
marks `__Pickled__`, whatever the client's `deserializers` say; its client unpickles the
type of every result and every task's error as they come; and distributed no longer lets
the scheduler's pickling be turned off (`distributed.scheduler.pickle: false` stops it from
starting). A worker that student code took over could send any of these. `install`
replaces each, in this process only: msgpack's plain data is decoded and nothing else. A
pickled object, or data serialized by any family but msgpack, arrives as a `Refused` marker
(never an exception in the middle of Dask's message loop), which the grader treats as a
failed task. The scheduler therefore never runs in this process (cluster.py).
"""

import threading

import msgpack

from ... import upstream

REFUSED = []  # what was refused, in this process (the tests read it)
_LOCK = threading.Lock()


class Refused(Exception):  # noqa: N818 (a marker, raised nowhere; an Exception where Dask asserts one)
    """In place of an object the guard would not decode."""

    def __init__(self, what):
        super().__init__(what)
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


def no_unpickling(data, *args, **kwargs):
    """In place of every pickle.loads the client would call on a peer's bytes (a result's type, an error)."""
    _refuse("a pickle")
    raise Unpickling("this process does not unpickle what a Dask peer sends")


class Unpickling(TypeError):
    """Raised instead of unpickling (a TypeError: where Dask expects one, it goes on without the object)."""


def clean_exception(exception=None, traceback=None, **kwargs):
    """distributed.core.clean_exception without its unpickling: an error from the cluster as a message at most."""
    if not isinstance(exception, BaseException):
        exception = Refused(f"an error from the cluster, not decoded ({type(exception).__name__})")
    return type(exception), exception, None


class _PickleModule:
    """What distributed.client sees as `pickle`: dumps as ever, no loads."""

    def __init__(self, real):
        self.dumps, self.HIGHEST_PROTOCOL, self.loads = real.dumps, real.HIGHEST_PROTOCOL, no_unpickling


def install():
    """Put the guard in place of every way Dask's client decodes a peer's data, in this process (idempotent; the
    replacing, and the check of the installed distributed, are upstream.replace_distributed_decoders')."""
    import pickle

    upstream.replace_distributed_decoders(loads=loads, unpickle=no_unpickling, clean_exception=clean_exception,
                                          pickle_module=_PickleModule(pickle))
