"""What a kernel's message may become when the grader reads it, bounded before it is decoded.

jupyter_client's Session.deserialize decodes each of a message's four JSON parts with json.loads: one validly
signed part of 180 MB holding `[{},{},...]` becomes 60 million dicts, more than 4 GiB of the grading worker. So
the grader's kernel client (kernel.py) first measures a message's parts as they came, without decoding them,
against limits.py (`refusal`): its size and its number of parts (the relay counted them already, but without the
sandbox there is no relay), its JSON values, their nesting, and what its text may become once decoded. A message
over a bound is never decoded: the kernel is stopped, as for the channels' budget. The parts of one within them
reach the session as bytearrays that `read_json` empties as it decodes each, so that a part's bytes are gone
before its values are made.

Counting JSON values exactly needs to know what is inside a string: a print of a long list is one string full of
commas. A count of the structural characters (`[`, `{`, `,`, `:`: every value but the first follows one) is an
upper bound that decides almost every message at once; only past a bound are the strings taken out (RFC 8259,
section 7: a string is a quote, then characters or escapes, then a quote) and the rest counted exactly, strings
one value each, stopping once past a bound. Each pass is one of Python's own C loops (bytes.count, re, numpy), a
megabyte at a time: many short strings are the slow case, and a million of them are already past the bound.
"""

import json
import re

import numpy as np

from . import limits, zmtp

DELIMITER = b"<IDS|MSG>"  # jupyter_client's Session.DELIM: the routing frames end there
_CHUNK = 1 << 20  # bytes measured at a time
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
# The longest run of whole tokens from a position: text outside strings, and strings that end within the run.
_TOKENS = re.compile(rb'(?:[^"]+|"[^"\\]*(?:\\.[^"\\]*)*")*')
_OPENS, _CLOSES = b"[{", b"]}"
_STRUCTURAL = b"[{,:"
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89abAB]")  # half of a character outside the BMP, escaped
_BELOW_FOUR_BYTES = bytes(range(0xF0))  # deleted, what is left of UTF-8 is four-byte leads (and invalid bytes)


class Refused(ValueError):
    """A message the grader would not decode (`why`: what it was, for the student's message)."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why


def after_delimiter(frames):
    """The parts of a message after its routing frames (`frames`: bytes-like), as Session.feed_identities finds them."""
    for i, frame in enumerate(frames):
        if len(frame) == len(DELIMITER) and bytes(frame) == DELIMITER:
            return frames[i + 1:]
    raise ValueError("DELIM not in msg_list")  # feed_identities' own words


def refusal(parts):
    """Why the message made of `parts` (bytes-like: its signature, header, parent header, metadata, content, then
    its buffers) may not be decoded, or None."""
    if len(parts) > limits.MESSAGE_FRAMES:
        return f"a message of more than {limits.MESSAGE_FRAMES} parts"
    if sum(map(len, parts)) > limits.MESSAGE_BYTES:
        return f"a message of more than {zmtp.in_words(limits.MESSAGE_BYTES)}"
    values = becomes = 0
    for part in parts[1:5]:
        counts = _Counts(part)
        becomes += 2 * counts.width * len(part)
        if counts.structural > limits.DECODE_VALUES or counts.opens > limits.DECODE_DEPTH:
            exact_values, depth = _outside_strings(part, limits.DECODE_VALUES - values)
            if depth > limits.DECODE_DEPTH:
                return f"a message nested more than {limits.DECODE_DEPTH} deep"
            values += exact_values
        else:
            values += counts.structural
        if values > limits.DECODE_VALUES:
            return f"a message of more than {limits.DECODE_VALUES:,} JSON values"
    if becomes > limits.DECODE_BYTES:
        return f"a message that would take more than {zmtp.in_words(limits.DECODE_BYTES)} to read"
    return None


def for_session(parts):
    """`parts` copied as Session.deserialize takes them: the signature as bytes (it is kept against replays), the
    JSON parts as bytearrays for read_json to empty. Not the binary buffers after them: only widgets use them, and
    grading keeps no widget (the signature does not cover them either)."""
    return [bytes(parts[0]), *map(bytearray, parts[1:5])] if parts else []


def read_json(part):
    """A JSON part decoded as jupyter_client's json_unpacker decodes it (UTF-8, errors replaced, then json.loads);
    a bytearray is emptied once it is text, before the values are made."""
    text = part.decode("utf8", "replace") if isinstance(part, (bytes, bytearray)) else part
    if isinstance(part, bytearray):
        part.clear()
    return json.loads(text)


class _Counts:
    """Upper bounds read off a part as it came, strings included: its structural characters, its opening
    brackets, and the bytes a character of it may take once decoded (`width`: 1, 2 or 4)."""

    def __init__(self, part):
        self.structural = self.opens = 0
        ascii_only, escaped, wide, tail = True, False, False, b""
        for at in range(0, len(part), _CHUNK):
            chunk = bytes(part[at:at + _CHUNK])
            self.opens += chunk.count(b"[") + chunk.count(b"{")
            self.structural += chunk.count(b",") + chunk.count(b":")
            joined = tail + chunk  # an escape may straddle two chunks
            if b"\\u" in joined:
                escaped = True
                wide = wide or _ESCAPED_SURROGATE.search(joined) is not None
            if not chunk.isascii():
                ascii_only = False
                wide = wide or bool(chunk.translate(None, _BELOW_FOUR_BYTES))
            tail = chunk[-5:]
        self.structural += self.opens
        self.width = 4 if wide else 1 if ascii_only and not escaped else 2


def _outside_strings(part, room):
    """(JSON values, deepest nesting) of a part, counted outside its strings (each string one value), a chunk at a
    time: once past `room` values or DECODE_DEPTH, what is counted so far (the part is refused either way)."""
    values, depth, deepest, at, end = 0, 0, 0, 0, len(part)
    while at < end and values <= room and deepest <= limits.DECODE_DEPTH:
        stop = _TOKENS.match(part, at, min(end, at + _CHUNK)).end()
        if stop == at:  # a string starts here and runs past the chunk: skip it whole
            string = _STRING.match(part, at)
            at = string.end() if string else end  # unterminated: json.loads refuses it, nothing more to count
            continue
        rest, strings = _STRING.subn(b"", part[at:stop])
        values += max(strings, sum(rest.count(c) for c in _STRUCTURAL))  # a string follows one, or begins the part
        codes = np.frombuffer(rest, np.uint8)
        steps = np.isin(codes, list(_OPENS)).astype(np.int64) - np.isin(codes, list(_CLOSES))
        if steps.size:
            levels = np.cumsum(steps) + depth
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        at = stop
    return values, deepest
