"""Fuzz targets ``nulmodem`` (one :class:`NulModemLink`, random operations) and
``nulmodem-channel`` (two links joined by lossy lines); see :mod:`dxserial.testing.fuzz`."""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from dxserial.errors import FramingError, LinkDownError
from dxserial.protocol.framing import check_message
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)
from dxserial.testing.fuzz.registry import fuzz_target, one_line
from dxserial.testing.fuzz.samples import SEEDS
from dxserial.testing.lines import LossyLine

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


def _next_event(
    sends: list[tuple[float, str, bytes]],
    lines: dict[str, LossyLine],
    links: dict[str, NulModemLink],
) -> tuple[float, str, str] | None:
    """The earliest of: the next message sent, a byte arriving, an end's timer."""
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
    return best


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
        best = _next_event(sends, lines, links)
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
