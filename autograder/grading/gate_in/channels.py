"""The budget of a sandboxed kernel's channels: what a kernel sends the grader is counted before it is kept.

ZeroMQ bounds a socket's queue by messages (its high-water mark), not by bytes, and it keeps every frame of a
message before it hands out the first: a kernel that sends a few huge messages, or one message of many frames,
on a channel nobody reads (stdin) would fill the grading worker's memory, whatever ZeroMQ option is set. So the
grader never connects ZeroMQ to a kernel's socket itself: each channel (shell, IOPub, stdin, control, heartbeat)
goes through a relay of the grader's (`Relay`, one thread per kernel) that counts every byte the kernel sends
before ZeroMQ sees it. Past `BUDGET` bytes in one kernel run, all channels together, the relay forwards nothing
more and calls its `on_exceeded` (kernel.py kills the kernel; execute.py fails the cell with `exceeded_why`).
It reads the kernel's side of each connection as libzmq does (zmtp.py), so the same happens at a message larger
than `limits.MESSAGE_BYTES` or of more than `limits.MESSAGE_FRAMES` parts, before any byte of it over the bound
reaches ZeroMQ. A connection that does not greet as every libzmq 4 does is not forwarded at all; what it sends
still counts.
The relay holds at most `CHUNK` bytes per direction of a connection: what the grader does not read waits in the
kernel's sandbox, under the sandbox's limits.

ZeroMQ's own bounds come on top, on every socket the grader opens to a kernel (`bound_context`): a frame larger
than the whole budget is refused before it is allocated (ZMQ_MAXMSGSIZE), and at most `QUEUE` messages wait in
a socket's queue (ZMQ_RCVHWM).
"""

import os
import selectors
import socket
import threading

import zmq

from ...limits import MiB
from . import limits, zmtp

# Bytes a kernel may send the grader in one run, on all its channels together. An honest notebook sends its
# outputs (the grader keeps at most 5 million characters of them: execute.py's max_notebook_output_bytes), each
# cell's code back once (execute_input) and a few small messages per cell: a few MiB, rarely more than 10. A
# notebook that prints 100 MB by mistake is graded as plain nbgrader grades it (its output cut, the rest scored:
# the adversarial suite's `flood`), so the budget lies above that; what it lets into the worker (at most this much
# in ZeroMQ's queues) stays well inside the worker's own memory bound.
BUDGET = 256 * MiB
QUEUE = 64  # messages waiting in one of the grader's sockets (ZeroMQ's default is 1000)
CHUNK = 64 * 1024  # bytes the relay holds per direction of a connection
# Connections open at once. ZeroMQ gives a connection up for good when it breaks the protocol (junk, a frame over
# its limit) and dials anew when the other end closes one; the relay still reads the kernel's end of each closed
# one to count it: past this many, the oldest such end is closed.
LINKS = 32


def exceeded_why(channel, budget=None):
    """The student's message: which channel took the kernel past the budget."""
    return (f"the notebook sent more than {(BUDGET if budget is None else budget) // MiB} MiB of output on "
            f"{channel}: the grader stopped its kernel")


def refused_why(channel, what):
    """The student's message: the kernel sent `what` (a message over a bound of limits.py) on `channel`."""
    return f"the notebook sent {what} on {channel}: the grader stopped its kernel"


def bound_context(context):
    """Every socket `context` opens from now on refuses a frame larger than the budget and queues few messages."""
    context.setsockopt(zmq.MAXMSGSIZE, BUDGET)
    context.setsockopt(zmq.RCVHWM, QUEUE)
    return context


class _Link:
    """One connection of the grader's ZeroMQ to the relay, and the relay's own to the kernel's socket."""

    def __init__(self, channel, grader, kernel):
        self.channel, self.grader, self.kernel = channel, grader, kernel
        self.to_grader = self.to_kernel = b""
        self.stream = zmtp.Stream(limits.MESSAGE_BYTES, limits.MESSAGE_FRAMES, BUDGET)  # what the kernel sends

    def sockets(self):
        return [s for s in (self.grader, self.kernel) if s is not None]


class Relay:
    """Forwards each channel between the grader's ZeroMQ and a kernel's socket, counting what the kernel sends.

    routes: {path the relay listens on: (channel name, path of the kernel's socket)}. The kernel's path is
    connected anew for each connection ZeroMQ makes (it dials anew when one closes), never looked up otherwise.
    """

    def __init__(self, routes, on_exceeded, budget=None):
        self.routes, self.on_exceeded = dict(routes), on_exceeded
        self.budget = BUDGET if budget is None else budget
        self.sent, self.by_channel, self.exceeded, self.error = 0, {}, None, None
        self.messages = 0  # messages the kernel sent whole, all channels together
        self._selector, self._links, self._listeners = selectors.DefaultSelector(), {}, []
        self._wake_r, self._wake_w = os.pipe()
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        for path, (channel, target) in self.routes.items():
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)  # in the grader's own runtime folder: no sandbox sees it
            listener.listen(16)
            listener.setblocking(False)
            self._listeners.append(listener)
            self._selector.register(listener, selectors.EVENT_READ, (channel, target))
        self._thread = threading.Thread(target=self._run, name="kernel channel relay", daemon=True)

    def start(self):
        self._thread.start()
        return self

    def close(self):
        """Stop forwarding and close every socket (the kernel's run is over)."""
        if self._wake_w is None:
            return
        if self._thread.is_alive():
            os.write(self._wake_w, b"x")
            self._thread.join(timeout=10)
        if not self._thread.is_alive():  # else the thread still reads the pipe: it goes with the process
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = None
        for path in self.routes:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def _run(self):
        try:
            while self.exceeded is None:
                events = self._selector.select()
                if any(key.data is None for key, _ in events):
                    return
                for key, mask in events:
                    self._on_event(key, mask)
        finally:
            self._close_all()

    def _on_event(self, key, mask):
        if self.exceeded is not None:  # nothing more goes anywhere
            return
        if isinstance(key.data, tuple):
            self._accept(key.fileobj, *key.data)
            return
        link = key.data
        if link not in self._links:  # closed by an earlier event of the same round
            return
        if mask & selectors.EVENT_READ:
            self._read(link, key.fileobj)
        # A closed end is readable and writable at once: the read closed it, and no write may then take the
        # other end for it (the kernel's, whose bytes must still be counted).
        if link in self._links and mask & selectors.EVENT_WRITE and key.fileobj in link.sockets():
            self._write(link, key.fileobj)
        if link in self._links:
            self._interest(link)

    def _accept(self, listener, channel, target):
        try:
            grader, _ = listener.accept()
        except OSError:  # out of descriptors: this channel takes no new connection (the cell's timeout ends it)
            self._unwatch(listener)
            return
        if len(self._links) >= LINKS:
            draining = [link for link in self._links if link.grader is None]
            if not draining:
                grader.close()
                return
            self._drop(draining[0], "kernel")
        kernel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            kernel.settimeout(5)
            kernel.connect(target)  # the kernel's socket by its descriptor (kernel.py): nothing else is reachable
        except OSError:  # the kernel is gone: this channel is refused from now on, as the kernel's own socket is
            kernel.close()
            grader.close()
            self._unwatch(listener)
            listener.close()
            return
        for s in (grader, kernel):
            s.setblocking(False)
        link = _Link(channel, grader, kernel)
        self._links[link] = None  # a dict: the oldest first
        self._interest(link)

    def _read(self, link, sock):
        try:
            data = sock.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if sock is link.kernel:
            if not data:  # the kernel closed it: what is left goes on, then the grader's end closes
                self._drop(link, "kernel")
                return
            messages, over = link.stream.feed(data)
            if self._count(link.channel, len(data), messages, over) and link.grader is not None \
                    and not link.stream.unreadable:
                link.to_grader = data  # while the grader's end is gone, what the kernel sends is counted, then dropped
        elif not data:  # ZeroMQ closed its end (it refused a frame, or it stops): nothing more goes to the kernel
            self._drop(link, "grader")
        else:
            link.to_kernel = data

    def _write(self, link, sock):
        attribute = "to_grader" if sock is link.grader else "to_kernel"
        try:
            sent = sock.send(getattr(link, attribute))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(link, "grader" if sock is link.grader else "kernel")
            return
        setattr(link, attribute, getattr(link, attribute)[sent:])
        if attribute == "to_grader" and not link.to_grader and link.kernel is None:
            self._drop(link, "grader")  # all the kernel sent before it closed has gone on

    def _count(self, channel, n, messages=0, over=None):
        """Count `n` bytes the kernel sent on `channel`, which end `messages` messages (`over`: why the message they
        hold is over a bound, or None): False, once the run is past its budget."""
        self.sent += n
        self.by_channel[channel] = self.by_channel.get(channel, 0) + n
        self.messages += messages
        if self.sent <= self.budget and over is None:
            return True
        if self.exceeded is None:
            self.exceeded = exceeded_why(channel, self.budget) if over is None else refused_why(channel, over)
            try:
                self.on_exceeded()
            except Exception as exc:  # noqa: BLE001 (the relay stops forwarding whatever the callback did)
                self.error = exc
        return False

    def _drop(self, link, end):
        """Close one end of a link; the whole link once both are gone (or the kernel's, with nothing left to send)."""
        sock = getattr(link, end)
        if sock is not None:
            self._unwatch(sock)
            sock.close()
            setattr(link, end, None)
        if end == "grader":
            link.to_grader = link.to_kernel = b""
        if link.kernel is None and (link.grader is None or not link.to_grader):
            for rest in link.sockets():
                self._unwatch(rest)
                rest.close()
            link.grader = link.kernel = None
            self._links.pop(link, None)

    def _interest(self, link):
        """Read from an end only while nothing it sent waits to go on; write to it while something waits."""
        read, write = selectors.EVENT_READ, selectors.EVENT_WRITE
        for sock, waiting_from, waiting_to in ((link.kernel, link.to_grader, link.to_kernel),
                                               (link.grader, link.to_kernel, link.to_grader)):
            if sock is None:
                continue
            self._unwatch(sock)
            events = (0 if waiting_from else read) | (write if waiting_to else 0)
            if events:
                self._selector.register(sock, events, link)

    def _unwatch(self, sock):
        try:
            self._selector.unregister(sock)
        except (KeyError, ValueError):
            pass

    def _close_all(self):
        for link in list(self._links):
            for sock in link.sockets():
                sock.close()
        self._links.clear()
        for listener in self._listeners:
            listener.close()
        self._selector.close()
