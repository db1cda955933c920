"""Fuzz targets for the sans-I/O core: only dxserial's own errors may come out.

Everything a peer controls passes through four pieces of code, and each gets a
property-based target (hypothesis): ``parser``, ``framer``, ``nulmodem``,
``nulmodem-channel`` and ``dialogue`` (:data:`TARGETS`).  Bugs found in code the targets do
not own are listed in :data:`KNOWN_BUGS` and pinned by ``xfail(strict=True)`` tests.  This
module imports hypothesis, a test extra, at its top: only tests and bench import it.  What
each target checks and how to run them longer: docs/fuzz.md.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
import string
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dxserial.errors import (
    DialogueError,
    DuplicateMessageError,
    FramingError,
    LinkDownError,
    MessageError,
)
from dxserial.protocol.framing import (
    SAMPLE_LEN,
    FrameDropped,
    FrameReceived,
    NulFramer,
    check_message,
)
from dxserial.protocol.messages import (
    MESSAGE_TYPES,
    NORMALISED,
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    Piece,
    StopCode,
    encode,
    parse,
)
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)
from dxserial.protocol.session import Dialogue, DialogueEvent, GameStarted, Phase, Role
from dxserial.testing.lines import LossyLine

# ================================================================== the target registry


@dataclass
class Target:
    """One fuzz target: a property ``body`` and the strategies of its arguments.

    ``test(**settings)`` builds the hypothesis test (pytest runs it with ``examples``;
    bench/fuzz.py runs it in rounds until its time is up). ``calls`` counts examples run.
    """

    name: str
    summary: str
    body: Callable[..., None]
    strategies: dict[str, st.SearchStrategy[Any]]
    examples: int
    calls: int = 0

    def test(self, **options: Any) -> Callable[[], None]:
        @functools.wraps(self.body)
        def counted(*args: Any, **kwargs: Any) -> None:
            self.calls += 1
            self.body(*args, **kwargs)

        options.setdefault("deadline", None)
        options.setdefault("suppress_health_check", [HealthCheck.too_slow])
        wrapped: Callable[[], None] = settings(**options)(given(**self.strategies)(counted))
        return wrapped


    def short_test(self) -> Callable[[], None]:
        """The test pytest runs: ``examples`` examples."""
        return self.test(max_examples=self.examples)


TARGETS: dict[str, Target] = {}

#: ``test_known_bug_*`` tests of tests/test_fuzz.py (strict xfail) and why they fail.
KNOWN_BUGS: dict[str, str] = {}


def fuzz_target(
    name: str, summary: str, *, examples: int, **strategies: st.SearchStrategy[Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``body`` as target ``name`` in :data:`TARGETS`."""

    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        TARGETS[name] = Target(name, summary, body, strategies, examples)
        return body

    return decorate


def one_line(text: str) -> None:
    assert text and "\n" not in text and "\r" not in text, repr(text)


# ================================================================== real messages


def find_spec_dir() -> Path:
    """tests/data of the source checkout (absent from an installed package: the messages
    built in below are used alone then)."""
    return Path(__file__).resolve().parents[2] / "tests" / "data"


_FALLBACK = (
    b"R01Scan 2.0                        Z001075A",
    b"R01DXP Client                      W002075B"
    b"Wzzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww",
    b"AScan 2.0                        0",
    b"M0000342900",
    b"M001205250422122320",
    b"E20",
    b"Chello",
    b"B005Z",
    b"K0",
)


def real_messages() -> tuple[bytes, ...]:
    """Every message of vectors.json and the Scan game (plus a few built in), no repeats."""
    found: list[bytes] = []
    spec = find_spec_dir()
    if spec.is_dir():
        vectors = json.loads((spec / "vectors.json").read_text())
        found += [v["message"].encode("latin-1") for v in vectors]
        for line in (spec / "scan-vs-scan-game.jsonl").read_text().splitlines():
            if line.strip():
                found.append(json.loads(line)["message"].encode("latin-1"))
    found += _FALLBACK
    return tuple(dict.fromkeys(found))


SEEDS = real_messages()

# ================================================================== messages by fields

_NAME_CHARS = string.ascii_letters + string.digits + " .-_()"
_names = st.text(_NAME_CHARS, min_size=1, max_size=32).map(str.rstrip).filter(
    lambda s: bool(s) and not s.startswith(" ")
)
_colours = st.sampled_from(Colour)
_squares = st.integers(1, 50)


_positions = st.one_of(
    st.just("zzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww"),
    st.text("ewWzZ", min_size=50, max_size=50),
)


@st.composite
def game_requests(draw: st.DrawFn) -> GameRequest:
    form_b = draw(st.booleans())
    return GameRequest(
        version=draw(st.sampled_from([1, 1, 1, 2, 99])),
        name=draw(_names),
        follower_colour=draw(_colours),
        minutes=draw(st.integers(0, 999)),
        moves=draw(st.integers(0, 999)),
        to_move=draw(_colours) if form_b else None,
        position=tuple(Piece(c) for c in draw(_positions)) if form_b else None,
    )


_capture_lists = st.lists(_squares, unique=True, max_size=20)


@st.composite
def moves(draw: st.DrawFn) -> Move:
    src = draw(_squares)
    dst = draw(_squares)
    captured = [sq for sq in draw(_capture_lists) if sq not in (src, dst)]
    return Move(
        seconds=draw(st.integers(0, 9999)), from_square=src, to_square=dst, captured=tuple(captured)
    )


def game_accepts(codes: st.SearchStrategy[AcceptCode] | None = None) -> st.SearchStrategy[Any]:
    codes = st.sampled_from(AcceptCode) if codes is None else codes
    return st.builds(GameAccept, name=_names, code=codes)


def game_ends(reasons: st.SearchStrategy[EndReason] | None = None) -> st.SearchStrategy[Any]:
    reasons = st.sampled_from(EndReason) if reasons is None else reasons
    return st.builds(GameEnd, reason=reasons, stop=st.sampled_from(StopCode))


def back_requests(numbers: st.SearchStrategy[int] | None = None) -> st.SearchStrategy[Any]:
    numbers = st.integers(1, 999) if numbers is None else numbers
    return st.builds(BackRequest, move=numbers, to_move=_colours)


chats = st.builds(Chat, text=st.text(st.characters(min_codepoint=1, max_codepoint=127),
                                     min_size=1, max_size=126))
back_accepts = st.builds(BackAccept, code=st.sampled_from(BackCode))

any_message: st.SearchStrategy[Message] = st.one_of(
    game_requests(), game_accepts(), moves(), game_ends(), chats, back_requests(), back_accepts
)


def with_raw(msg: Message) -> Message:
    """The message as it arrives from a peer: parsed from its bytes, ``raw`` set."""
    return parse(encode(msg))


# ================================================================== 1. the parser

_INTERESTING = b"\x00\x01\x02\x03\x09\x0a\x0d\x1b\x7f\x80\xff 0123456789.-+eEwWzZABCKMRx"
_interesting_bytes = st.one_of(st.sampled_from(_INTERESTING), st.integers(0, 255))


@st.composite
def mutated_messages(draw: st.DrawFn) -> bytes:
    """A real (or field-built) message with a few byte-level mutations."""
    base = draw(st.one_of(st.sampled_from(SEEDS), any_message.map(encode)))
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(
            ("flip", "replace", "replace", "insert", "delete", "cut", "splice", "repeat")
        ))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "replace" and data:
            data[pos] = draw(_interesting_bytes)
        elif op == "insert":
            data[pos:pos] = bytes([draw(_interesting_bytes)]) * draw(st.integers(1, 3))
        elif op == "delete" and data:
            del data[pos : pos + draw(st.integers(1, 3))]
        elif op == "cut":
            del data[pos:]
        elif op == "splice":
            other = draw(st.sampled_from(SEEDS))
            data[pos:] = other[draw(st.integers(0, len(other))) :]
        elif op == "repeat":
            data += data[pos:]
    return bytes(data)


_LENGTHS = {
    "R": (42, 43, 44, 93, 94, 95),
    "A": (33, 34, 35),
    "M": tuple(range(9, 54)),
    "E": (2, 3, 4),
    "C": (1, 2, 3, 126, 127, 128),
    "B": (4, 5, 6),
    "K": (1, 2, 3),
}
_field_chars = st.one_of(
    st.sampled_from(b"0123456789"), st.sampled_from(b" .WZABezw"), st.integers(1, 127)
)


@st.composite
def typed_messages(draw: st.DrawFn) -> bytes:
    """A type letter and a body of about the right length, mostly digits and field letters."""
    kind = draw(st.sampled_from(sorted(_LENGTHS)))
    n = draw(st.sampled_from(_LENGTHS[kind]))
    body = draw(st.lists(_field_chars, min_size=n - 1, max_size=n - 1))
    return kind.encode() + bytes(body)


_FIELDS = {  # [start, end) of each fixed field after the type letter
    "R": ((1, 3), (3, 35), (35, 36), (36, 39), (39, 42), (42, 43), (43, 44), (44, 94)),
    "A": ((1, 33), (33, 34)),
    "M": ((1, 5), (5, 7), (7, 9), (9, 11), *((11 + 2 * i, 13 + 2 * i) for i in range(20))),
    "E": ((1, 2), (2, 3)),
    "C": (),
    "B": ((1, 4), (4, 5)),
    "K": ((1, 2),),
}
_field_alphabets = st.sampled_from(["0123456789.", "0123456789 .-+eWZABewz\x01\x7f"])


@st.composite
def field_mutations(draw: st.DrawFn) -> bytes:
    """A valid message (a GAMEREQ half the time) with one field overwritten in place by
    characters of the same count, often digits and a dot: number-like but not numbers."""
    data = bytearray(encode(draw(st.one_of(game_requests(), any_message))))
    spans = [(a, b) for a, b in _FIELDS[chr(data[0])] if b <= len(data)]
    if spans:
        a, b = draw(st.sampled_from(spans))
        text = draw(st.text(draw(_field_alphabets), min_size=b - a, max_size=b - a))
        data[a:b] = text.encode("ascii")
    return bytes(data)


parser_inputs = st.one_of(
    st.binary(max_size=200), mutated_messages(), mutated_messages(), typed_messages(),
    field_mutations(),
)


def check_parse(data: bytes, strict: bool) -> Message | None:
    try:
        msg = parse(data, strict=strict)
    except MessageError as exc:
        one_line(str(exc))
        assert exc.offset is None or 0 <= exc.offset <= len(data), (exc.offset, len(data))
        assert exc.msg_type is None or (data and exc.msg_type == chr(data[0]))
        return None
    assert type(msg) is MESSAGE_TYPES[chr(data[0])]
    assert msg.raw == data and msg.wire == data
    for warning in msg.warnings:
        one_line(warning)
    again = encode(msg)
    if any(w.endswith(NORMALISED) for w in msg.warnings):  # a dialect: the normal layout
        assert parse(again, strict=False) == msg, (again, data)
        return msg
    assert again == data, (again, data)
    assert parse(again, strict=strict) == msg
    return msg


@fuzz_target(
    "parser",
    "parse() strict and lenient on arbitrary bytes, near-valid messages, overwritten "
    "fields and byte mutations of the vectors and the Scan game",
    examples=700,
    data=parser_inputs,
)
def fuzz_parser(data: bytes) -> None:
    strict = check_parse(data, strict=True)
    lenient = check_parse(data, strict=False)
    if strict is not None:
        assert lenient == strict and strict.warnings == ()
    elif lenient is not None:
        assert lenient.warnings, "accepted leniently without a warning, yet refused strictly"


# ================================================================== 2. the NUL framer


@st.composite
def framer_streams(draw: st.DrawFn) -> bytes:
    kinds = st.sampled_from(("message", "message", "empty", "overlong", "high", "binary"))
    frames: list[bytes] = []
    for kind in draw(st.lists(kinds, max_size=12)):
        if kind == "message":
            frames.append(bytes(draw(st.lists(st.integers(1, 127), min_size=1, max_size=140))))
        elif kind == "empty":
            frames.append(b"")
        elif kind == "overlong":
            frames.append(bytes([draw(st.integers(1, 255))]) * draw(st.integers(100, 5000)))
        elif kind == "high":
            head = bytes(draw(st.lists(st.integers(1, 127), max_size=140)))
            frames.append(head + bytes([draw(st.integers(0x80, 0xFF))]) + draw(st.binary()))
        else:
            frames.append(draw(st.binary(max_size=60)))
    stream = b"\x00".join(frames)
    return stream + (b"\x00" if draw(st.booleans()) else b"")


def reference_split(stream: bytes, max_len: int) -> tuple[list[bytes | None], bytes]:
    """The plain model: each NUL ends a frame; a frame is good if 1..max_len bytes < 0x80.

    Returns the frames in order (``None`` for one the framer must drop) and the unfinished
    tail (a bad tail is reported at once, so it is in the list as ``None`` too).
    """
    *frames, tail = stream.split(b"\x00")
    out: list[bytes | None] = [f if 0 < len(f) <= max_len and f.isascii() else None
                               for f in frames]
    if tail and not (len(tail) <= max_len and tail.isascii()):
        out.append(None)
    return out, tail


@fuzz_target(
    "framer",
    "NulFramer on random streams (NULs, bytes >= 0x80, overlong runs) in random chunks, "
    "against a reference split",
    examples=250,
    stream=framer_streams(),
    cuts=st.lists(st.integers(0, 20_000), max_size=30),
    max_len=st.one_of(st.just(127), st.integers(1, 200)),
)
def fuzz_framer(stream: bytes, cuts: list[int], max_len: int) -> None:
    framer = NulFramer(max_len=max_len)
    events: list[FrameReceived | FrameDropped] = []
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    for a, b in itertools.pairwise(points):
        events += framer.feed(stream[a:b])
        assert framer.pending <= max_len
        partial = stream[:b].rsplit(b"\x00", 1)[-1]
        good = len(partial) <= max_len and partial.isascii()
        assert framer.pending == (len(partial) if good else 0)
    expected, tail = reference_split(stream, max_len)
    assert len(events) == len(expected), (events, expected)
    pieces = stream.split(b"\x00")
    for event, want, piece in zip(events, expected, pieces, strict=False):
        assert isinstance(event, FrameReceived | FrameDropped)
        if want is None:
            assert isinstance(event, FrameDropped), (event, piece)
            assert isinstance(event.error, FramingError)
            one_line(str(event.error))
            assert len(event.data) <= SAMPLE_LEN and piece.startswith(event.data)
        else:
            assert event == FrameReceived(want)
    for piece in pieces[:-1]:  # check_message and the framer agree on every frame
        try:
            check_message(piece, max_len)
            assert piece in [e.raw for e in events if isinstance(e, FrameReceived)]
        except FramingError as exc:
            one_line(str(exc))
    closing = framer.close()
    assert framer.pending == 0
    if tail and not (len(tail) <= max_len and tail.isascii()):
        assert closing == []  # already reported when it went bad
    elif tail:
        assert len(closing) == 1 and isinstance(closing[0], FrameDropped)
        assert closing[0].data == tail[:SAMPLE_LEN]
    else:
        assert closing == []


# ================================================================== 3. one NULMODEM link


@st.composite
def link_settings(draw: st.DrawFn) -> dict[str, Any]:
    framing_bytes = st.one_of(st.sampled_from([0x02, 0x03, 0x01, 0x04, 0x1B, 0x7F, 0x80, 0xFF]),
                              st.integers(1, 255))
    start = draw(framing_bytes)
    end = draw(framing_bytes.filter(lambda b: b != start))
    return {
        "start": start,
        "end": end,
        "timeout": draw(st.one_of(st.sampled_from([5.0, 0.5]), st.floats(0.001, 10))),
        "max_attempts": draw(st.integers(1, 6)),
        "max_len": draw(st.one_of(st.just(127), st.integers(1, 127))),
        "learn_start": draw(st.booleans()),
        "backoff": draw(st.one_of(st.sampled_from([0.0, 0.5]), st.floats(0, 3))),
        "max_queue": draw(st.integers(1, 6)),
        "rng": random.Random(draw(st.integers(0, 2**16))),
    }


def _line_bytes(extra: list[int]) -> st.SearchStrategy[bytes]:
    return st.lists(
        st.one_of(st.sampled_from([*extra, 0x00, 0x01, 0x02, 0x03, 0x04, 0x7F, 0x80, 0xFF,
                                   ord("C"), ord("M"), ord("0")]),
                  st.integers(0, 255)),
        max_size=60,
    ).map(bytes)


_outgoing = st.one_of(
    st.sampled_from(SEEDS),
    st.binary(max_size=140),
    st.lists(st.integers(1, 127), min_size=1, max_size=130).map(bytes),
    st.just(b""),
)

link_ops = st.lists(
    st.one_of(
        st.tuples(st.just("send"), _outgoing),
        st.tuples(st.just("data"), _line_bytes([])),
        st.tuples(st.just("echo"), st.integers(0, 3), st.one_of(st.none(), st.integers(1, 255))),
        st.tuples(st.just("frame"), _outgoing, st.booleans()),
        st.tuples(st.just("wait"), st.one_of(st.sampled_from([0.0, 1e-6]), st.floats(0, 20))),
        st.tuples(st.just("deadline")),
        st.tuples(st.just("reset")),
    ),
    max_size=80,
)


@dataclass
class LinkModel:
    """What the link must report: deliveries and LinkDowns in the order messages went in."""

    link: NulModemLink
    max_len: int
    max_queue: int
    start: int
    end: int
    fifo: deque[bytes] = field(default_factory=deque)
    now: float = 0.0
    last_out: bytes = b""
    due_now: bool = False  # after reset() a queued message is due at once, until a call

    def drain(self, bound: int) -> None:
        out = self.link.data_to_send()
        assert len(out) <= bound, (len(out), bound)
        if out:
            self.last_out = out
        for event in self.link.events():
            self.check_event(event)
        assert self.link.queued == len(self.fifo) <= self.max_queue
        assert self.link.pending <= self.max_len
        deadline = self.link.next_deadline()
        if deadline is not None:
            assert isinstance(deadline, float) and math.isfinite(deadline), deadline
            assert deadline >= self.now if self.due_now else deadline > self.now, (
                deadline,
                self.now,
            )

    def check_event(self, event: object) -> None:
        if isinstance(event, MessageReceived):
            raw = event.raw
            assert 1 <= len(raw) <= self.max_len
            assert all(0x01 <= b <= 0x7F for b in raw), raw
            assert self.start not in raw and self.end not in raw, raw
        elif isinstance(event, MessageDelivered):
            assert self.fifo and event.raw == self.fifo.popleft(), (event, self.fifo)
        elif isinstance(event, LinkDown):
            assert isinstance(event.error, LinkDownError)
            one_line(str(event.error))
            assert event.undelivered == tuple(self.fifo) and event.undelivered
            self.fifo.clear()
        else:
            assert isinstance(event, LinkProblem), event
            assert isinstance(event.error, FramingError)
            one_line(str(event.error))


@fuzz_target(
    "nulmodem",
    "one NulModemLink: random send/receive_data/poll/reset with random bytes, echoes, times "
    "and settings, then silence",
    examples=250,
    config=link_settings(),
    ops=link_ops,
)
def fuzz_nulmodem(config: dict[str, Any], ops: list[tuple[Any, ...]]) -> None:
    link = NulModemLink(**config)
    m = LinkModel(link, config["max_len"], config["max_queue"], config["start"], config["end"])
    for op in ops:
        kind = op[0]
        if kind == "send":
            raw: bytes = op[1]
            full = link.queued >= config["max_queue"]
            try:
                link.send(raw, m.now)
            except FramingError as exc:
                one_line(str(exc))
            else:
                assert not full
                check_message(raw, config["max_len"])  # send accepted only a valid message
                m.fifo.append(raw)
                m.due_now = False
            m.drain(1)
        elif kind in ("data", "echo", "frame"):
            if kind == "data":
                data = op[1]
            elif kind == "echo":  # play the peer: echo what the link wrote, maybe garbled
                data = bytearray(m.last_out[op[1] :] if op[1] < len(m.last_out) else m.last_out)
                if data and op[2] is not None:
                    data[-1] = (data[-1] + op[2]) % 256
                data = bytes(data)
            else:  # a whole message from the peer, framed our way or the configured way
                s, e = link.framing if op[2] else (config["start"], config["end"])
                data = bytes([s]) + op[1] + bytes([e])
            link.receive_data(data, m.now)
            m.due_now = False
            m.drain(len(data) + 1)
        elif kind == "wait":
            m.now += op[1]
            link.poll(m.now)
            m.due_now = False
            m.drain(1)
        elif kind == "deadline":
            deadline = link.next_deadline()
            if deadline is not None:
                m.now = max(m.now, deadline)
            link.poll(m.now)
            m.due_now = False
            m.drain(1)
        else:
            link.reset()
            m.due_now = True
            m.drain(0)
    # The line falls silent: every timer runs out, every message is delivered or given up.
    for _ in range(10 * config["max_attempts"] + 20):
        deadline = link.next_deadline()
        if deadline is None:
            break
        m.now = max(m.now, deadline)
        link.poll(m.now)
        m.due_now = False
        m.drain(1)
    else:
        raise AssertionError(f"timers still running at {m.now}: {link.next_deadline()}")
    assert not m.fifo and link.queued == 0 and link.idle and link.pending == 0


# ================================================================== 4. two links, a lossy line


def _channel_messages(tag: bytes) -> st.SearchStrategy[list[bytes]]:
    body = st.one_of(
        st.text("CEMK0123456789abc ", min_size=1, max_size=30).map(str.encode),
        st.lists(st.integers(0x20, 0x7E), min_size=1, max_size=126).map(bytes),
    )
    return st.lists(body.map(lambda b: tag + b), max_size=5, unique=True)


@st.composite
def channel_settings(draw: st.DrawFn) -> dict[str, Any]:
    baud = draw(st.sampled_from([1200, 9600, 115200]))
    start, end = draw(st.sampled_from([(0x02, 0x03), (0x01, 0x04), (0x1B, 0x1D), (0x80, 0x81)]))
    return {
        "baud": baud,
        "start": start,
        "end": end,
        "timeout": draw(st.one_of(st.sampled_from([0.5, 5.0]), st.floats(0.1, 5))),
        "backoff": draw(st.floats(0.05, 1)),
        "learn_start": draw(st.booleans()),
        "latency": draw(st.floats(0, 0.01)),
        # expected faults of each kind per attempt of the longest frame: some get through
        "faults": draw(st.tuples(*[st.floats(0, 0.5)] * 3)),
        # longest stall of a line, in timeouts; beyond one, echoes arrive late and can go
        # round between the two ends (test_late_echoes_do_not_go_round)
        "stall": draw(st.one_of(st.floats(0, 0.9), st.floats(1, 2.5))),
        "seed": draw(st.integers(0, 2**32)),
    }


def longest_frame_time(msgs: list[bytes], baud: int) -> float:
    """Seconds to send the longest message once with every echo, at the line's pace."""
    return max((len(m) + 2 for m in msgs), default=0) * 2 * 10 / baud


@fuzz_target(
    "nulmodem-channel",
    "two NulModemLinks over lines that drop, corrupt and stall bytes, messages from both "
    "ends at random times",
    examples=60,
    config=channel_settings(),
    from_a=_channel_messages(b"A"),
    from_b=_channel_messages(b"B"),
    times=st.lists(st.floats(0, 30), min_size=10, max_size=10),
)
def fuzz_nulmodem_channel(
    config: dict[str, Any], from_a: list[bytes], from_b: list[bytes], times: list[float]
) -> None:
    log, settled = run_channel(config, from_a, from_b, times)
    check_channel(log, from_a, from_b)
    assert settled, "the two ends never fall quiet"
    assert delivered(log, "A") == from_a and delivered(log, "B") == from_b
    assert dedupe(received(log, "B")) == from_a and dedupe(received(log, "A")) == from_b


def delivered(log: dict[str, list[LinkEvent]], name: str) -> list[bytes]:
    return [e.raw for e in log[name] if isinstance(e, MessageDelivered)]


def received(log: dict[str, list[LinkEvent]], name: str) -> list[bytes]:
    return [e.raw for e in log[name] if isinstance(e, MessageReceived)]


def dedupe(items: list[bytes]) -> list[bytes]:
    return [x for i, x in enumerate(items) if i == 0 or items[i - 1] != x]


def check_channel(
    log: dict[str, list[LinkEvent]], from_a: list[bytes], from_b: list[bytes]
) -> None:
    """Safety, whether or not the ends settled: nothing lost, reordered, invented or
    delivered to its own sender; repeats only back to back."""
    downs = [e for e in log["A"] + log["B"] if isinstance(e, LinkDown)]
    assert not downs, downs
    for name, peer, sent in (("A", "B", from_a), ("B", "A", from_b)):
        done = delivered(log, name)
        assert done == sent[: len(done)], (name, "delivered", done, "sent", sent)
        arrived = dedupe(received(log, peer))
        assert arrived == sent[: len(arrived)], (peer, "received", arrived, "sent", sent)


def run_channel(
    config: dict[str, Any],
    from_a: list[bytes],
    from_b: list[bytes],
    times: list[float],
    trace: Callable[[float, str, str, object], None] | None = None,
    max_steps: int = 400_000,
) -> tuple[dict[str, list[LinkEvent]], bool]:
    """Play the two ends until nothing is left to happen (or ``max_steps`` events);
    return each end's events, and whether the two ends fell quiet."""
    seed, baud = config["seed"], config["baud"]
    longest = max((len(m) for m in from_a + from_b), default=1) + 2
    per_byte = [f / (2 * longest) for f in config["faults"]]  # 2 transits per frame byte
    link_kw = {k: config[k] for k in ("start", "end", "timeout", "backoff", "learn_start")}
    links = {
        "A": NulModemLink(rng=random.Random(seed), max_attempts=10**6, **link_kw),
        "B": NulModemLink(rng=random.Random(seed + 1), max_attempts=10**6, **link_kw),
    }
    lines = {
        name: LossyLine(
            rng=random.Random(f"{seed}{name}"), byte_time=10 / baud, latency=config["latency"],
            p_drop=per_byte[0], p_corrupt=per_byte[1], p_delay=per_byte[2],
            max_delay=config["stall"] * link_kw["timeout"], never=frozenset([config["end"]]),
        )
        for name in links
    }
    # each end sends its messages in list order, at random times; the two ends interleave
    sends = sorted(
        [*zip(sorted(times[:5]), "A" * len(from_a), from_a, strict=False),
         *zip(sorted(times[5:]), "B" * len(from_b), from_b, strict=False)],
        key=lambda s: s[0],
    )
    log: dict[str, list[LinkEvent]] = {"A": [], "B": []}
    now = 0.0
    for _ in range(max_steps):
        for name, link in links.items():
            out = link.data_to_send()
            if trace and out:
                trace(now, name, "write", out)
            lines[name].write(now, out)
            events = link.events()
            if trace:
                for e in events:
                    trace(now, name, "event", e)
            log[name] += events
        best: tuple[float, str, str] | None = None
        if sends:
            best = (sends[0][0], "send", sends[0][1])
        for name, line in lines.items():
            if line.in_flight and (best is None or line.in_flight[0][0] < best[0]):
                best = (line.in_flight[0][0], "byte", name)
        for name, link in links.items():
            deadline = link.next_deadline()
            if deadline is not None and (best is None or deadline < best[0]):
                best = (deadline, "poll", name)
        if best is None:
            break
        now = max(now, best[0])
        kind, name = best[1], best[2]
        if kind == "send":
            links[name].send(sends.pop(0)[2], now)
        elif kind == "byte":
            _, byte = lines[name].in_flight.popleft()
            name = "B" if name == "A" else "A"
            if trace:
                trace(now, name, "read", bytes([byte]))
            links[name].receive_data(bytes([byte]), now)
        else:
            links[name].poll(now)
        deadline = links[name].next_deadline()
        assert deadline is None or deadline > now, "a timer due now after the call"
    else:
        return log, False
    return log, True


# ================================================================== 5. the dialogue


def snapshot(d: Dialogue) -> tuple[object, ...]:
    return (
        d.phase, d.to_move, d.turn_role(), d.plies, d.move_number, d.games_started, d.pending,
        d.awaiting, d.last_result, d.stop_reason, d.game_request,
        d.colour_of(Role.INITIATOR), d.colour_of(Role.FOLLOWER),
    )


_roles = st.sampled_from(Role)
# Strategies built once: building them per step costs more than drawing from them.
_requests = game_requests()
_accepts_mostly_0 = game_accepts(st.sampled_from([AcceptCode.ACCEPT] * 4 + list(AcceptCode)))
_moves = moves()
_ends = game_ends()
_answers_mostly_0 = game_ends(st.sampled_from([EndReason.NONE] * 4 + list(EndReason)))
_back_offsets = st.integers(-3, 1)  # around the current move number
_early_back = back_requests(st.integers(1, 4))
_anything = st.tuples(_roles, any_message)
_rolls = st.integers(0, 99)
_hi = Chat(text="hi")


def draw_message(
    data: st.DataObject, d: Dialogue, sent: dict[Role, Message]
) -> tuple[Role, Message]:
    """Mostly what the dialogue expects next (so games start, end and go back), else any
    message from any role, a CHAT, or a side's last message again (a NULMODEM repeat)."""
    roll = data.draw(_rolls, label="roll")
    phase, turn, awaiting = d.phase, d.turn_role(), d.awaiting
    sender: Role
    msg: Message
    if roll < 10:
        sender, msg = data.draw(_anything, label="anything")
    elif roll < 14:
        sender, msg = data.draw(_roles, label="role"), _hi
    elif roll < 24 and sent:
        sender = data.draw(st.sampled_from(sorted(sent)), label="repeat")
        return sender, sent[sender]
    elif phase is Phase.IDLE:
        sender, msg = Role.INITIATOR, data.draw(_requests)
    elif phase is Phase.REQUESTED:
        sender, msg = Role.FOLLOWER, data.draw(_accepts_mostly_0)
    elif phase is Phase.BACK_REQUESTED and awaiting is not None and roll < 60:
        sender, msg = awaiting, data.draw(back_accepts)
    elif phase.game_running and turn is not None:
        if roll < 80:
            sender, msg = turn, data.draw(_moves)
        elif roll < 90:
            sender, msg = turn, data.draw(_ends)
        else:
            number = max(1, d.move_number + data.draw(_back_offsets))
            sender = data.draw(_roles)
            msg = BackRequest(move=number, to_move=data.draw(_colours))
    elif phase is Phase.ENDING and awaiting is not None:
        sender = awaiting
        msg = data.draw(_answers_mostly_0) if roll < 85 else data.draw(_early_back)
    else:
        sender, msg = data.draw(_anything, label="anything")
    return sender, with_raw(msg)


@fuzz_target(
    "dialogue",
    "Dialogue.handle on message sequences from both roles, steered to games, take-backs, "
    "endings and repeats",
    examples=100,
    data=st.data(),
    length=st.integers(1, 80),
)
def fuzz_dialogue(data: st.DataObject, length: int) -> None:
    d = Dialogue()
    accepted: dict[Role, Message] = {}  # each side's last accepted message
    for _ in range(length):
        sender, msg = draw_message(data, d, accepted)
        # "unchanged" is checked on the private state too: it is replaced, never mutated
        state, before, games_before = d._state, snapshot(d), d.games_started
        try:
            events = d.handle(msg, sender)
        except DialogueError as exc:
            assert d._state is state and snapshot(d) == before
            assert exc.side == sender.value
            one_line(str(exc))
            previous = accepted.get(sender)
            repeat = previous is not None and previous.wire == msg.wire
            if isinstance(exc, DuplicateMessageError):
                assert repeat or isinstance(msg, Move), (msg, previous)
            else:
                assert not repeat, "a refused repeat must be a DuplicateMessageError"
            assert not isinstance(msg, Chat), "CHAT is allowed at any time"
            continue
        after = snapshot(d)
        assert all(isinstance(e, DialogueEvent) for e in events)
        assert d.plies >= 0 and d.games_started >= games_before
        if isinstance(msg, Chat):
            assert events == [] and after == before
        if before[0] is Phase.STOPPED:
            assert d.phase is Phase.STOPPED and isinstance(msg, Chat | BackAccept)
        if d.phase.game_running:
            assert d.to_move is not None and d.turn_role() is not None
        else:
            assert d.to_move is None and d.turn_role() is None
        started = any(isinstance(e, GameStarted) for e in events)
        assert started == (before[0] is Phase.REQUESTED and d.phase is Phase.PLAYING)
        accepted[sender] = msg
