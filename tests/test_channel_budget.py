"""The byte budget of a kernel's channels (gate_in/channels.py, issue 41): what a kernel sends is counted before
the grader keeps it, on every channel, and a kernel past the budget fails its cell and nothing else.

First the relay alone, between two plain sockets (the kernel's side speaking ZeroMQ's wire format, which the relay
reads); then graded runs (`check`, whose process is the grading worker)
of a notebook whose one free cell floods stdin, IOPub or shell, with the budget lowered to 8 MiB: the worker's
peak memory (VmHWM) stays within 8 budgets of its peak on the same notebook unflooded, the run is out of memory,
and the student reads which channel. Without the budget the same floods put the worker 250 to 450 MiB higher.
"""

import select
import socket
import threading
import time

import floods
import pytest
import zmq

from autograder.grading.gate_in import channels

MiB = channels.MiB
# A ZMTP 3.1 greeting with the NULL mechanism, as every libzmq 4 sends it first (libzmq's src/zmtp_engine.cpp).
GREETING = b"\xff" + bytes(7) + b"\x01\x7f" + bytes([3, 1]) + b"NULL".ljust(20, b"\0") + bytes(32)


def frame(body, more=False):
    """One ZMTP frame holding `body` (a part of a message; the message's last unless `more`)."""
    if len(body) < 256:
        return bytes([int(more), len(body)]) + body
    return bytes([int(more) | 2]) + len(body).to_bytes(8, "big") + body


def frames(data, size=60_000):
    """`data` as one-part messages of at most `size` bytes each."""
    return b"".join(frame(data[i:i + size]) for i in range(0, len(data), size))


class _Pair:
    """A relay between a stand-in kernel (a listening socket it accepts from) and a stand-in grader (a client)."""

    def __init__(self, tmp_path, budget, channel="stdin"):
        self.kernel_listener = socket.socket(socket.AF_UNIX)
        self.kernel_listener.bind(str(tmp_path / "kernel.sock"))
        self.kernel_listener.listen()
        self.calls = []
        self.relay = channels.Relay({str(tmp_path / "relay.sock"): (channel, str(tmp_path / "kernel.sock"))},
                                    lambda: self.calls.append(time.monotonic()), budget=budget).start()
        self.grader = socket.socket(socket.AF_UNIX)
        self.grader.connect(str(tmp_path / "relay.sock"))
        self.kernel_listener.settimeout(10)
        self.kernel, _ = self.kernel_listener.accept()
        self.kernel.sendall(GREETING)  # as libzmq, the kernel's side greets first
        assert _read(self.grader, len(GREETING)) == GREETING

    def close(self):
        self.relay.close()
        for s in (self.grader, self.kernel, self.kernel_listener):
            s.close()


@pytest.fixture
def pair(tmp_path):
    made = []

    def make(budget, channel="stdin"):
        made.append(_Pair(tmp_path, budget, channel))
        return made[-1]

    yield make
    for p in made:
        p.close()


def _read(sock, n, timeout=10):
    sock.settimeout(timeout)
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _wait_until(condition, within=10.0):
    """Whether `condition()` holds within `within` seconds (the deadline only catches a hang)."""
    deadline = time.monotonic() + within
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def _holds_for_the_grader(relay):
    """Whether the relay holds bytes for a grader's end that cannot take them now: it reads nothing more from that
    link's kernel until they go (the state the relay settles in while the grader reads nothing)."""
    try:
        links = list(relay._links)
    except RuntimeError:  # the relay's thread changed them meanwhile: not settled
        return False
    return any(link.to_grader and link.grader is not None and not select.select([], [link.grader], [], 0)[1]
               for link in links)


def _draining(relay):
    """How many of the relay's links have lost their grader's end (ZeroMQ closed it) and only read the kernel's."""
    try:
        return sum(link.grader is None for link in list(relay._links))
    except RuntimeError:  # the relay's thread changed them meanwhile
        return -1


def _send_in_thread(sock, data):
    thread = threading.Thread(target=lambda: _sendall_quietly(sock, data), daemon=True)
    thread.start()
    return thread


def _sendall_quietly(sock, data):
    try:
        sock.sendall(data)
    except OSError:  # the relay closed its end
        pass


def test_within_the_budget_the_relay_passes_both_ways_byte_for_byte(pair):
    p = pair(4 * MiB)
    up, down = bytes(range(256)) * 4096, frames(bytes(reversed(range(256))) * 8192)  # 1 MiB and 2 MiB
    writers = [_send_in_thread(p.kernel, down), _send_in_thread(p.grader, up)]
    assert _read(p.kernel, len(up)) == up
    assert _read(p.grader, len(down)) == down
    for writer in writers:
        writer.join(10)
    sent = len(GREETING) + len(down)  # only the kernel's bytes count
    assert p.relay.sent == sent and p.relay.by_channel == {"stdin": sent}
    assert p.relay.messages == 35  # 2 MiB in messages of 60,000 bytes: 34 whole ones and the rest
    assert p.relay.exceeded is None and p.calls == []


def test_past_the_budget_the_relay_forwards_nothing_more_and_names_the_channel(pair):
    p = pair(1 * MiB, channel="iopub")
    _send_in_thread(p.kernel, b"x" * (3 * MiB))
    received = _read(p.grader, 3 * MiB)
    assert len(received) <= 1 * MiB  # never more than the budget reaches the grader
    deadline = time.monotonic() + 10
    while not p.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(p.calls) == 1
    assert p.relay.exceeded == "the notebook sent more than 1 MiB of output on iopub: the grader stopped its kernel"


def test_what_the_grader_does_not_read_waits_in_the_kernel(pair):
    """A grader that reads nothing (the stdin channel): the relay takes in no more than a chunk and what the
    sockets' buffers hold, far below the 32 MiB the kernel tries to send, and the kernel's send waits."""
    p = pair(64 * MiB)
    p.kernel.setblocking(False)
    sent, data = 0, frame(b"x" * (32 * MiB))
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            sent += p.kernel.send(data[sent:sent + MiB])
        except BlockingIOError:
            time.sleep(0.01)
    assert sent < 8 * MiB, sent
    assert p.relay.sent <= sent and p.relay.exceeded is None


def test_once_zeromq_closes_its_end_what_the_kernel_sends_still_counts(pair):
    """ZeroMQ drops a connection that sent it a frame over its limit; what the kernel sends after that is read,
    counted and dropped, so a kernel cannot spend its budget anew on each connection."""
    p = pair(1 * MiB, channel="shell")
    p.grader.close()
    _send_in_thread(p.kernel, b"x" * (2 * MiB))
    deadline = time.monotonic() + 10
    while not p.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(p.calls) == 1 and "on shell" in p.relay.exceeded


def test_once_zeromq_closes_its_end_with_bytes_waiting_for_it_the_kernel_still_counts(pair):
    """ZeroMQ drops the connection while the relay holds bytes for it (its end is readable and writable at once,
    the usual case under load): the relay closes that end only, and goes on counting what the kernel sends."""
    p = pair(1 * MiB, channel="iopub")
    message = frame(b"x" * (512 * 1024 + 2 * MiB))
    _send_in_thread(p.kernel, message[:512 * 1024])  # under the budget; more than the sockets hold, unread
    assert _wait_until(lambda: _holds_for_the_grader(p.relay))
    assert p.relay.sent < 512 * 1024  # the relay holds a chunk for the grader, and reads no more until it goes
    p.grader.close()
    sender = _send_in_thread(p.kernel, message[512 * 1024:])
    deadline = time.monotonic() + 10
    while not p.calls and time.monotonic() < deadline:
        time.sleep(0.01)
    sender.join(10)
    assert len(p.calls) == 1 and "on iopub" in p.relay.exceeded, p.relay.sent


def test_reconnections_keep_a_bounded_number_of_connections_open(pair, tmp_path):
    """ZeroMQ reconnecting again and again (each time it drops a connection): the relay keeps reading the kernel's
    end of a dropped connection, but closes the oldest once LINKS connections are open, and still relays a new one."""
    p = pair(4 * MiB)
    kernel_ends = []
    for i in range(channels.LINKS + 4):
        grader = socket.socket(socket.AF_UNIX)
        grader.connect(str(tmp_path / "relay.sock"))
        kernel_ends.append(p.kernel_listener.accept()[0])
        grader.close()
        # the relay sees this one closed before the next comes: one more link drains, up to all but the pair's own
        assert _wait_until(lambda i=i: _draining(p.relay) == min(i + 1, channels.LINKS - 1))
    try:
        for end in kernel_ends[:4]:  # the oldest: closed by the relay
            assert _read(end, 1, timeout=5) == b""
        kernel_ends[-1].settimeout(0.5)
        with pytest.raises(TimeoutError):  # the newest: still read and counted
            kernel_ends[-1].recv(1)
        p.kernel.sendall(frame(b"still relayed"))
        assert _read(p.grader, 15) == frame(b"still relayed")
    finally:
        for end in kernel_ends:
            end.close()


def _through_a_bound_socket(tmp_path, size):
    """Whether a frame of `size` bytes reaches a socket of a bound context within a second."""
    plain, bound = zmq.Context(), channels.bound_context(zmq.Context())
    sender, receiver = plain.socket(zmq.PUSH), bound.socket(zmq.PULL)
    try:
        assert receiver.getsockopt(zmq.MAXMSGSIZE) == channels.BUDGET
        assert receiver.getsockopt(zmq.RCVHWM) == channels.QUEUE
        sender.bind(f"ipc://{tmp_path}/z-{size}")
        receiver.connect(f"ipc://{tmp_path}/z-{size}")
        assert sender.poll(5000, zmq.POLLOUT)  # connected
        sender.send(b"x" * size, flags=zmq.NOBLOCK)
        return receiver.poll(1000) and len(receiver.recv()) == size
    finally:
        sender.close(linger=0)
        receiver.close(linger=0)
        plain.term()
        bound.term()


def test_a_bound_context_refuses_a_frame_over_the_budget_before_keeping_it(tmp_path, monkeypatch):
    monkeypatch.setattr(channels, "BUDGET", 1 * MiB)
    assert _through_a_bound_socket(tmp_path, MiB)
    assert not _through_a_bound_socket(tmp_path, MiB + 1)


# ---- a grading worker under a flood ----------------------------------------------------------------------------

BUDGET = 8 * MiB  # lowered, so that a flood costs the test seconds, not gigabytes
# stdin in messages under the budget, which ZeroMQ takes whole into its queue as the relay counts them; IOPub and
# shell in frames over it, which ZeroMQ refuses (giving that connection up) while the relay counts on
SIZES = {"stdin": (4 * MiB, 120), "iopub": (96 * MiB, 3), "shell": (96 * MiB, 2)}


@pytest.fixture(scope="module")
def unflooded(tmp_path_factory):
    result, peak = floods.graded(tmp_path_factory.mktemp("unflooded"), budget=BUDGET)
    assert result["status"] == "graded" and result["score"] == result["max_score"], result["status"]
    return peak


@pytest.mark.grading
@pytest.mark.sandbox
@pytest.mark.parametrize("channel", sorted(SIZES))
def test_a_flood_on_any_channel_stays_within_the_budget_in_the_grading_worker(tmp_path, channel, unflooded):
    size, count = SIZES[channel]
    result, peak = floods.graded(tmp_path, floods.flood(channel, size, count), budget=BUDGET)
    assert peak <= floods.worker_bound(unflooded, BUDGET), (
        f"the grading worker peaked at {peak / MiB:.0f} MiB under a flood of {count} x {size // MiB} MiB on "
        f"{channel}, {(peak - unflooded) / MiB:.0f} MiB over its unflooded {unflooded / MiB:.0f} MiB "
        f"(at most {floods.GROWTH_IN_BUDGETS * BUDGET // MiB})")
    said = f"the notebook sent more than {BUDGET // MiB} MiB of output on {channel}"
    assert result["status"] == "out of memory", result["status"]
    assert any(said in m for m in floods.messages(result)), floods.messages(result)
    assert said in (tmp_path / "feedback.html").read_text(encoding="utf-8")
