"""ZeroMQ's wire protocol (ZMTP), read as the grader's libzmq reads it: where each message a kernel sends begins
and ends, so that the relay (channels.py) counts every message, and its size, before ZeroMQ keeps any of it.

libzmq's reader is the owner of the format (libzmq 4.3, src/zmtp_engine.cpp and src/v2_decoder.cpp):
- a greeting: 0xFF, eight bytes libzmq does not read, a byte whose lowest bit is 1, then the revision; a peer
  whose first byte is not 0xFF, whose tenth byte's lowest bit is 0, or whose revision is 0 or 1, is talked to in
  ZMTP 1.0 or 2.0 (libzmq still accepts them), any other revision in ZMTP 3, whose greeting is 64 bytes;
- then frames, commands and message parts alike: a flags byte (bit 0: more parts of this message follow, bit 1:
  the size takes eight bytes, big-endian, else one; bit 2: a command; libzmq ignores the other bits), the size,
  the body. A message ends with a part whose bit 0 is 0.
Every libzmq 4 greets in ZMTP 3, ipykernel's included. A stream that greets otherwise is `unreadable`: the relay
forwards nothing more of it (only student code that writes its own bytes to the kernel's socket makes one). A
frame larger than the grader's ZeroMQ takes at all (its ZMQ_MAXMSGSIZE) is ZeroMQ's to refuse, as it refuses junk
written to a kernel's socket: it gives that connection up, and the stream is read no further (`left_to_zeromq`).
"""

from ...limits import MiB

GREETING = 64  # bytes of a ZMTP 3 greeting
_MORE, _LONG = 0x01, 0x02


def in_words(size):
    """A bound in bytes as the student reads it: "128 MiB", or "1,000 bytes"."""
    return f"{size // MiB} MiB" if size % MiB == 0 else f"{size:,} bytes"


class Stream:
    """The kernel's side of one connection, read as it arrives: how many messages each piece completes, and whether
    the message being read is already over a bound (`message_bytes`, all its frames' bodies; `message_frames`)."""

    def __init__(self, message_bytes, message_frames, zeromq_frame_bytes):
        self.message_bytes, self.message_frames = message_bytes, message_frames
        self.zeromq_frame_bytes = zeromq_frame_bytes
        self.unreadable = self.left_to_zeromq = False
        self._greeting = b""  # what has come of the greeting (its first eleven bytes are read)
        self._head = b""  # the flags and size of the frame being read, until they are whole
        self._body = 0  # bytes of that frame's body still to come
        self._more = False  # whether a part follows that frame in its message
        self._bytes = self._frames = 0  # the message being read, so far

    def feed(self, data):
        """Read the next bytes of the stream: (messages they complete, why the message being read is over a bound,
        or None). Once a message is over a bound, nothing after it is read."""
        done, at = 0, 0
        while at < len(data) and not (self.unreadable or self.left_to_zeromq):
            if len(self._greeting) < GREETING:
                at = self._read_greeting(data, at)
            elif self._body:
                step = min(self._body, len(data) - at)
                self._body -= step
                at += step
                done += self._frame_read()
            else:
                at, why = self._read_head(data, at)
                if why:
                    return done, why
                done += self._frame_read()
        return done, None

    def _read_greeting(self, data, at):
        take = data[at:at + GREETING - len(self._greeting)]
        self._greeting += take
        g = self._greeting
        if g[:1] != b"\xff" or (len(g) >= 10 and not g[9] & 1) or (len(g) >= 11 and g[10] in (0, 1)):
            self.unreadable = True  # ZMTP 1.0 or 2.0: no libzmq 4 greets so
        return at + len(take)

    def _read_head(self, data, at):
        """Read the flags and size of the next frame, as far as `data` holds them: (where reading goes on, why the
        message is over a bound or None)."""
        if not self._head:
            self._head, at = data[at:at + 1], at + 1
        need = (9 if self._head[0] & _LONG else 2) - len(self._head)
        self._head += data[at:at + need]
        at += min(need, len(data) - at)
        if len(self._head) < (9 if self._head[0] & _LONG else 2):
            return at, None
        self._more = bool(self._head[0] & _MORE)
        self._body = int.from_bytes(self._head[1:], "big")
        self._head = b""
        if self._body > self.zeromq_frame_bytes:
            self.left_to_zeromq = True  # it refuses the frame from its head, and gives the connection up
            return at, None
        self._bytes += self._body
        self._frames += 1
        if self._bytes > self.message_bytes:
            return at, f"a message of more than {in_words(self.message_bytes)}"
        if self._frames > self.message_frames:
            return at, f"a message of more than {self.message_frames} parts"
        return at, None

    def _frame_read(self):
        """1 when the frame just read to its end (its head read, its body all come) ends a message, else 0."""
        if self._body or self._head:
            return 0
        if self._more:
            return 0
        self._bytes = self._frames = 0
        return 1
