"""The NULMODEM echo handshake: fake clock, byte by byte, two links joined in memory."""

from __future__ import annotations

import itertools
import logging
import random
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dxserial.errors import ConfigError, FramingError, LinkDownError
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkEvent,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemLink,
)
from dxserial.testing.lines import LossyLine

S, E = 0x02, 0x03

# ---------------------------------------------------------------- harness


class Sim:
    """Links "A" and "B" joined by two lines; one event (a byte or a timer) per step."""

    def __init__(
        self,
        a: NulModemLink,
        b: NulModemLink,
        ab: LossyLine | None = None,
        ba: LossyLine | None = None,
    ) -> None:
        self.now = 0.0
        self.links = {"A": a, "B": b}
        self.lines = {"A": ab or LossyLine(), "B": ba or LossyLine()}  # carries what that end writes
        self.wire: list[tuple[str, int]] = []  # every byte written, in order, by whom
        self.log: dict[str, list[LinkEvent]] = {"A": [], "B": []}
        self.steps = 0

    def pump(self) -> None:
        for name, link in self.links.items():
            data = link.data_to_send()
            self.wire += [(name, b) for b in data]
            self.lines[name].write(self.now, data)
            self.log[name] += link.events()

    def called(self, name: str) -> None:
        """After any call, nothing of that link is due any more (no busy loop)."""
        deadline = self.links[name].next_deadline()
        assert deadline is None or deadline > self.now, (name, deadline, self.now)
        self.pump()

    def send(self, name: str, raw: bytes) -> None:
        self.links[name].send(raw, self.now)
        self.called(name)

    def step(self) -> bool:
        self.pump()
        best: tuple[float, str, str] | None = None
        for name, line in self.lines.items():
            if line.in_flight and (best is None or line.in_flight[0][0] < best[0]):
                best = (line.in_flight[0][0], "byte", name)
        for name, link in self.links.items():
            d = link.next_deadline()
            if d is not None and (best is None or d < best[0]):
                best = (d, "poll", name)
        if best is None:
            return False
        t, kind, name = best
        self.now = max(self.now, t)
        if kind == "byte":
            _, b = self.lines[name].in_flight.popleft()
            name = "B" if name == "A" else "A"
            self.links[name].receive_data(bytes([b]), self.now)
        else:
            self.links[name].poll(self.now)
        self.called(name)
        self.steps += 1
        return True

    def run(self, until: Callable[[], bool] = lambda: False, max_time: float = 120.0) -> None:
        """Until ``until()``, nothing left to happen, or ``max_time`` (simulated)."""
        while not until() and self.now <= max_time:
            assert self.steps < 500_000, "simulation does not settle"
            if not self.step():
                return

    def quiet(self) -> bool:
        return all(link.idle for link in self.links.values()) and not any(
            line.in_flight for line in self.lines.values()
        )

    def received(self, name: str) -> list[bytes]:
        return [e.raw for e in self.log[name] if isinstance(e, MessageReceived)]

    def delivered(self, name: str) -> list[bytes]:
        return [e.raw for e in self.log[name] if isinstance(e, MessageDelivered)]

    def problems(self, name: str) -> list[str]:
        return [str(e.error) for e in self.log[name] if isinstance(e, LinkProblem)]

    def downs(self, name: str) -> list[LinkDown]:
        return [e for e in self.log[name] if isinstance(e, LinkDown)]


def pair(max_attempts: int = 5) -> tuple[NulModemLink, NulModemLink]:
    """Two default links whose random back-offs differ, as two real processes' would."""
    a = NulModemLink(rng=random.Random(1), max_attempts=max_attempts)
    b = NulModemLink(rng=random.Random(2), max_attempts=max_attempts)
    return a, b


def problems(events: list[LinkEvent]) -> list[str]:
    return [str(e.error) for e in events if isinstance(e, LinkProblem)]


def dedupe(items: list[bytes]) -> list[bytes]:
    return [x for i, x in enumerate(items) if i == 0 or items[i - 1] != x]


# ---------------------------------------------------------------- clean exchange


def test_clean_exchange_exact_wire_bytes() -> None:
    sim = Sim(*pair())
    sim.send("A", b"E00")
    sim.run(sim.quiet)
    frame = [S, *b"E00", E]
    # one byte, its echo, the next byte, its echo, ...
    assert sim.wire == [(who, b) for b in frame for who in ("A", "B")]
    assert sim.received("B") == [b"E00"]
    assert sim.delivered("A") == [b"E00"]
    assert sim.log["A"] == [MessageDelivered(b"E00")]
    assert sim.log["B"] == [MessageReceived(b"E00")]


def test_whole_game_both_directions() -> None:
    sim = Sim(*pair())
    sim.send("A", b"R01Scan 2.0                        Z001075A")
    sim.run(sim.quiet)
    sim.send("B", b"AScan 2.0                        0")
    sim.run(sim.quiet)
    sim.send("A", b"M0000342900")
    sim.send("A", b"Chello")  # queued behind the move
    sim.run(sim.quiet)
    assert sim.received("B") == [
        b"R01Scan 2.0                        Z001075A",
        b"M0000342900",
        b"Chello",
    ]
    assert sim.received("A") == [b"AScan 2.0                        0"]
    assert sim.problems("A") == sim.problems("B") == []


def test_sender_byte_by_byte_with_deadlines() -> None:
    link = NulModemLink(rng=random.Random(0))
    link.send(b"K1", now=10.0)
    assert link.data_to_send() == bytes([S])
    assert link.next_deadline() == 15.0
    assert link.queued == 1 and not link.idle
    link.receive_data(bytes([S]), 10.5)
    assert link.data_to_send() == b"K"
    assert link.next_deadline() == 15.5
    link.receive_data(b"K", 11.0)
    assert link.data_to_send() == b"1"
    link.receive_data(b"1", 11.5)
    assert link.data_to_send() == bytes([E])
    assert link.events() == []
    link.receive_data(bytes([E]), 12.0)
    assert link.events() == [MessageDelivered(b"K1")]
    assert link.data_to_send() == b""
    assert link.next_deadline() is None
    assert link.idle and link.queued == 0


def test_receiver_echoes_every_byte() -> None:
    link = NulModemLink()
    data = bytes([S]) + b"M0000342900" + bytes([E])
    for i, b in enumerate(data):
        link.receive_data(bytes([b]), i * 0.01)
        assert link.data_to_send() == bytes([b])
    assert link.events() == [MessageReceived(b"M0000342900")]
    assert link.idle


# ---------------------------------------------------------------- sender faults


def drive_sender(
    link: NulModemLink, echo: Callable[[int, int], int | None], until: float = 1000.0
) -> list[tuple[float, int]]:
    """Play the peer by hand: ``echo(position in frame, byte)`` -> echo byte or None (lost)."""
    now = 0.0
    writes: list[tuple[float, int]] = []
    pos = -1
    while now < until:
        out = link.data_to_send()
        if out:
            assert len(out) == 1  # one byte at a time, always
            writes.append((now, out[0]))
            pos = 0 if out[0] == S else pos + 1
            reply = echo(pos, out[0])
            if reply is not None:
                now += 0.01
                link.receive_data(bytes([reply]), now)
            continue
        deadline = link.next_deadline()
        if deadline is None:
            break
        assert deadline > now
        now = deadline
        link.poll(now)
    return writes


def test_every_echo_wrong_once() -> None:
    raw = b"M0000342900"
    frame = bytes([S]) + raw + bytes([E])
    link = NulModemLink(rng=random.Random(5), max_attempts=len(frame) + 1)
    link.send(raw, 0.0)
    spoiled: set[int] = set()

    def echo(pos: int, b: int) -> int:
        if pos not in spoiled:
            spoiled.add(pos)
            return b ^ 0x20  # 'M' -> 'm', '0' -> 0x10, S -> '"'
        return b

    writes = drive_sender(link, echo)
    events = link.events()
    assert [e for e in events if not isinstance(e, LinkProblem)] == [MessageDelivered(raw)]
    wrong = problems(events)
    assert len(wrong) == len(frame)
    for k, text in enumerate(wrong):
        assert f"wrong echo of byte {k + 1} of {len(frame)}" in text
    # every failed attempt starts over from S; the last attempt is clean
    starts = [t for t, b in writes if b == S]
    assert len(starts) == len(frame) + 1
    assert bytes(b for _, b in writes[-len(frame) :]) == frame
    # and waits a random back-off (0.05..0.5 s by default) before doing so
    fail_times = [t for t, b in writes if b == S][1:]
    previous_writes = [max(t for t, _ in writes if t < start) for start in fail_times]
    for start, before in zip(fail_times, previous_writes, strict=True):
        assert 0.05 <= start - (before + 0.01) <= 0.5


def test_lost_echo_times_out_and_resends_from_start() -> None:
    link = NulModemLink(rng=random.Random(0))
    link.send(b"K1", 0.0)
    assert link.data_to_send() == bytes([S])
    link.receive_data(bytes([S]), 0.1)
    assert link.data_to_send() == b"K"
    assert link.next_deadline() == pytest.approx(5.1)
    # the echo of 'K' never comes
    link.poll(5.0)
    assert link.data_to_send() == b"" and link.events() == []
    link.poll(5.1)
    events = link.events()
    assert len(events) == 1
    assert "no echo of 0x4b 'K' (byte 2 of 4) within 5 s" in problems(events)[0]
    assert "attempt 1 of 5" in problems(events)[0]
    assert link.data_to_send() == bytes([S])  # at once, from the start byte
    assert link.next_deadline() == pytest.approx(10.1)
    for t, b in ((5.2, S), (5.3, ord("K")), (5.4, ord("1")), (5.5, E)):
        link.receive_data(bytes([b]), t)
        link.data_to_send()
    assert link.events() == [MessageDelivered(b"K1")]


def test_link_down_after_max_attempts_with_nothing_answering() -> None:
    link = NulModemLink(rng=random.Random(0), max_attempts=5)
    link.send(b"Chello", 0.0)
    link.send(b"E00", 0.0)
    assert link.queued == 2
    writes = drive_sender(link, lambda pos, b: None)
    assert writes == [(0.0, S), (5.0, S), (10.0, S), (15.0, S), (20.0, S)]
    events = link.events()
    assert len(problems(events)) == 4
    down = events[-1]
    assert isinstance(down, LinkDown)
    assert isinstance(down.error, LinkDownError) and isinstance(down.error, TimeoutError)
    assert down.undelivered == (b"Chello", b"E00")
    assert "failed 5 times in a row" in str(down.error)
    assert link.queued == 0 and link.idle and link.next_deadline() is None
    # the link still works afterwards
    link.send(b"K1", 30.0)
    assert link.data_to_send() == bytes([S])


def test_a_peer_that_keeps_answering_badly_keeps_its_queue() -> None:
    """Past max_attempts, a peer whose bytes still arrive is alive: nothing is dropped,
    the retries back off further, and everything goes once the line clears."""
    link = NulModemLink(rng=random.Random(3), max_attempts=3, timeout=1.0, backoff=0.1)
    link.send(b"Chello", 0.0)
    link.send(b"E00", 0.0)
    garbled = 0

    def echo(pos: int, b: int) -> int:
        nonlocal garbled
        if pos == 1 and garbled < 12:  # the echo of 'C' arrives wrong, twelve times
            garbled += 1
            return b ^ 0x20
        return b

    writes = drive_sender(link, echo)
    events = link.events()
    assert not [e for e in events if isinstance(e, LinkDown)]
    assert [e.raw for e in events if isinstance(e, MessageDelivered)] == [b"Chello", b"E00"]
    assert any("past 3, but the peer spoke 0.00 s ago: keeping 2 queued message(s)" in p
               for p in problems(events))
    # past max_attempts the back-off doubles (0.1, 0.2, 0.4, 0.8 s, less jitter), up to timeout
    starts = [t for t, b in writes if b == S]
    waits = [b - a - 0.02 for a, b in itertools.pairwise(starts)]  # minus 2 echoes
    assert waits[2:6] == sorted(waits[2:6]) and waits[5] >= 0.4
    assert max(waits) <= 1.0


def test_a_peer_that_falls_silent_is_given_up_naming_every_message() -> None:
    link = NulModemLink(rng=random.Random(0), max_attempts=2, timeout=1.0)
    link.send(b"Chello", 0.0)
    assert link.data_to_send() == bytes([S])
    link.receive_data(b"x", 0.5)  # noise: the peer was there half a second in
    for n in range(1, 13):
        link.send(f"C{n}".encode(), 0.5)
    t = 0.5
    while not any(isinstance(e, LinkDown) for e in link.events()):
        deadline = link.next_deadline()
        assert deadline is not None and deadline < 30.0
        t = deadline
        link.poll(t)
        link.data_to_send()
    assert t >= 0.5 + 5 * 1.0  # not before five echo timeouts of silence
    link.send(b"Cafter", t)  # the link works on afterwards
    assert link.queued == 1


def test_link_down_names_what_was_dropped() -> None:
    link = NulModemLink(rng=random.Random(0), max_attempts=1, timeout=1.0)
    for n in range(12):
        link.send(f"C{n}".encode(), 0.0)
    link.data_to_send()
    link.poll(1.0)
    (down,) = [e for e in link.events() if isinstance(e, LinkDown)]
    assert len(down.undelivered) == 12
    text = str(down.error)
    assert "(nothing heard from it: is it running, at this speed? dxserial probe finds" in text
    assert "\n" not in text
    assert text.endswith(
        "12 message(s) not delivered: 'C0', 'C1', 'C2', 'C3', 'C4', 'C5', 'C6', 'C7', 'C8', "
        "'C9' and 2 more"
    )


# ---------------------------------------------------------------- receiver faults


def feed(link: NulModemLink, data: bytes, t0: float = 0.0) -> bytes:
    out = b""
    for i, b in enumerate(data):
        link.receive_data(bytes([b]), t0 + i * 0.01)
        out += link.data_to_send()
        assert link.pending <= 127
    return out


def test_start_byte_mid_message_restarts() -> None:
    link = NulModemLink()
    data = bytes([S]) + b"E0" + bytes([S]) + b"E00" + bytes([E])
    assert feed(link, data) == data
    events = link.events()
    assert len(events) == 2
    texts = problems(events)
    assert texts[0].startswith("start byte 0x02 in the middle of a message: starting over, 2")
    assert events[1] == MessageReceived(b"E00")


def test_overflow_dropped_then_next_message_fine() -> None:
    link = NulModemLink()
    overlong = bytes([S]) + b"C" * 128
    rest = bytes([S]) + b"K1" + bytes([E])
    # the E after the overflow is outside any message: not echoed
    assert feed(link, overlong + bytes([E]) + rest) == overlong + rest
    events = link.events()
    assert [e for e in events if not isinstance(e, LinkProblem)] == [MessageReceived(b"K1")]
    texts = problems(events)
    assert "more than 127 characters without the end byte 0x03" in texts[0]
    assert "stray byte" in texts[1]  # the E after the overflow: not delivered


def test_longest_message_received() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"C" * 127 + bytes([E]))
    assert link.events() == [MessageReceived(b"C" * 127)]


def test_overflow_hints_at_other_end_byte() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"Chi\x04" + b"x" * 130)
    assert "control byte 0x04 seen at offset 3" in problems(link.events())[0]


def test_peer_silent_mid_message() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"M00")
    assert link.pending == 3
    assert link.next_deadline() == pytest.approx(5.03)
    link.poll(5.03)
    assert (
        "peer silent for 5 s in the middle of a message: 3 characters" in problems(link.events())[0]
    )
    assert link.pending == 0 and link.idle


def test_message_with_high_byte_is_dropped() -> None:
    link = NulModemLink()
    data = bytes([S]) + b"M0\x9f0" + bytes([E])
    assert feed(link, data) == data  # echoed unchanged, so the sender sees it
    texts = problems(link.events())
    assert texts == ["message 'M0\\x9f0' dropped: byte 0x9f at offset 2: only 0x01..0x7f may occur"]


def test_stray_bytes_while_idle_are_reported_once_per_read_not_echoed() -> None:
    link = NulModemLink()
    link.receive_data(b"hello", 0.0)
    assert link.data_to_send() == b""
    events = link.events()
    assert len(events) == 1
    assert (
        "5 stray bytes 'hello' while waiting for the start byte 0x02: not echoed"
        in (problems(events)[0])
    )
    assert link.idle


def test_noise_is_a_warning_and_routine_trouble_is_not() -> None:
    """Garbage on the line is shown even with -q; a collision or a retry is not."""
    link = NulModemLink()
    link.receive_data(b"hello", 0.0)
    (stray,) = link.events()
    assert isinstance(stray, LinkProblem) and stray.noise and stray.level == logging.WARNING
    feed(link, bytes([S]) + b"M0\x9f0" + bytes([E]), 1.0)
    (spoiled,) = link.events()
    assert isinstance(spoiled, LinkProblem) and spoiled.level == logging.WARNING
    sender = NulModemLink(rng=random.Random(0))
    sender.send(b"K1", 0.0)
    sender.data_to_send()
    sender.poll(5.0)  # no echo: a retry, routine on a serial line
    (retry,) = sender.events()
    assert isinstance(retry, LinkProblem) and not retry.noise and retry.level == logging.INFO


def test_never_starts_sending_mid_receive() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"C")
    link.send(b"K1", 1.0)
    assert link.data_to_send() == b""  # the peer's message comes first
    link.receive_data(b"x", 1.1)
    assert link.data_to_send() == b"x"  # echo duty
    link.receive_data(bytes([E]), 1.2)
    # echo of E, then (only then) our own start byte
    assert link.data_to_send() == bytes([E, S])
    assert link.events() == [MessageReceived(b"Cx")]


# ---------------------------------------------------------------- end to end with faults


class SpoilOnce:
    """A line hook that garbles, once per position, the bytes for which ``target(pos, byte)``
    holds; ``pos`` counts from the last start byte that passed on that line."""

    def __init__(self, target: Callable[[int, int], bool]) -> None:
        self.target = target
        self.pos = -1
        self.done: set[int] = set()

    def __call__(self, b: int) -> int | None:
        self.pos = 0 if b == S else self.pos + 1
        if self.target(self.pos, b) and self.pos not in self.done:
            self.done.add(self.pos)
            return b ^ 0x40
        return b


def test_corrupted_echo_of_each_character_end_to_end() -> None:
    raw = b"M0000342900"
    hook = SpoilOnce(lambda pos, b: 1 <= pos <= len(raw))
    a, b = pair(max_attempts=20)
    sim = Sim(a, b, ba=LossyLine(hook=hook))
    sim.send("A", raw)
    sim.run(sim.quiet)
    assert sim.delivered("A") == [raw]
    assert sim.received("B") == [raw]  # E never came before a clean attempt
    assert len([p for p in sim.problems("A") if "wrong echo" in p]) == len(raw)


def test_corrupted_echo_of_end_delivers_twice() -> None:
    hook = SpoilOnce(lambda pos, b: b == E)
    sim = Sim(*pair(), ba=LossyLine(hook=hook))
    sim.send("A", b"Chello")
    sim.run(sim.quiet)
    assert sim.received("B") == [b"Chello", b"Chello"]  # expected at this layer
    assert sim.delivered("A") == [b"Chello"]
    assert len(sim.problems("A")) == 1


def drop_first(value: int) -> Callable[[int], int | None]:
    """A line hook that loses the first byte ``value`` written and passes all the rest."""
    dropped = False

    def hook(b: int) -> int | None:
        nonlocal dropped
        if b == value and not dropped:
            dropped = True
            return None
        return b

    return hook


def test_lost_start_byte_end_to_end() -> None:
    sim = Sim(*pair(), ab=LossyLine(hook=drop_first(S)))
    sim.send("A", b"K1")
    sim.run(sim.quiet)
    assert sim.received("B") == [b"K1"]
    assert sim.delivered("A") == [b"K1"]
    assert 5.0 < sim.now < 5.1  # one timeout, then straight through


def test_restart_garbled_into_end_delivers_a_short_message() -> None:
    # No checksum in NULMODEM: with STX/ETX one flipped bit turns the restarting S into E,
    # and the receiver delivers what it had. Documented; the layer-2 parser rejects it.
    echo_hook = SpoilOnce(lambda pos, b: pos == 3)  # garble the echo of '0' in "M00..."
    sent = {"starts": 0}

    def flip_second_start(b: int) -> int | None:
        if b == S:
            sent["starts"] += 1
            if sent["starts"] == 2:
                return b ^ 0x01  # 0x02 -> 0x03
        return b

    sim = Sim(*pair(), ab=LossyLine(hook=flip_second_start), ba=LossyLine(hook=echo_hook))
    sim.send("A", b"M0000342900")
    sim.run(sim.quiet)
    assert sim.received("B") == [b"M00", b"M0000342900"]
    assert sim.delivered("A") == [b"M0000342900"]


def lost_reports(events: list[LinkEvent]) -> list[bytes]:
    return [e.lost for e in events if isinstance(e, LinkProblem) and e.lost is not None]


def test_end_byte_garbled_into_start_both_ways_is_reported_lost() -> None:
    # S and E differ in one bit: the end byte of "Ctwo" arrives as a start byte, and B's
    # echo of it arrives at A as the end byte. A counts "Ctwo" delivered; B dropped it
    # ("start byte in the middle of a message"). Nothing on the line can tell; what comes
    # next can: A goes on with "Cthree" instead of sending "Ctwo" again.
    ends = {"n": 0}
    flipped = {"echo": False}

    def end_into_start(b: int) -> int | None:
        if b == E:
            ends["n"] += 1
            if ends["n"] == 2:
                return S
        return b

    def echo_into_end(b: int) -> int | None:
        if ends["n"] == 2 and b == S and not flipped["echo"]:
            flipped["echo"] = True
            return E
        return b

    sim = Sim(*pair(), ab=LossyLine(hook=end_into_start), ba=LossyLine(hook=echo_into_end))
    for raw in (b"Cone", b"Ctwo", b"Cthree"):
        sim.send("A", raw)
    sim.run(sim.quiet)
    assert sim.delivered("A") == [b"Cone", b"Ctwo", b"Cthree"]
    assert sim.received("B") == [b"Cone", b"Cthree"]
    (report,) = [e for e in sim.log["B"] if isinstance(e, LinkProblem) and e.lost]
    assert report.lost == b"Ctwo" and report.level == logging.ERROR
    assert "'Ctwo' was cut off by a start byte and not sent again" in str(report.error)


def test_a_message_started_over_is_not_reported_lost() -> None:
    # A character garbled on its way in: B holds a partial message with a wrong last
    # character, A sees the wrong echo and starts over; the same message follows.
    raw = b"M0000342900"
    a, b = pair(max_attempts=20)
    sim = Sim(a, b, ab=LossyLine(hook=SpoilOnce(lambda pos, byte: pos in (3, 7))))
    sim.send("A", raw)
    sim.send("A", b"K1")
    sim.run(sim.quiet)
    assert sim.received("B") == [raw, b"K1"]
    assert any("in the middle of a message" in p for p in sim.problems("B"))
    assert lost_reports(sim.log["B"]) == []


def test_a_message_dropped_for_a_bad_byte_is_lost_unless_sent_again() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"M0\x9f0" + bytes([E]) + bytes([S]) + b"M0000" + bytes([E]))
    assert lost_reports(link.events()) == []  # the same message again: started over
    link = NulModemLink()
    feed(link, bytes([S]) + b"M0\x9f0" + bytes([E]) + bytes([S]) + b"K1" + bytes([E]))
    events = link.events()
    assert lost_reports(events) == [b"M0\x9f0"]
    assert events[-1] == MessageReceived(b"K1")  # delivered all the same


# ---------------------------------------------------------------- collisions


@pytest.mark.parametrize("seed", range(40))
def test_simultaneous_start_no_livelock(seed: int) -> None:
    a = NulModemLink(rng=random.Random(seed))
    b = NulModemLink(rng=random.Random(seed + 1000))
    sim = Sim(a, b)
    a.send(b"Chello", 0.0)
    b.send(b"Cworld", 0.0)
    sim.run(sim.quiet)
    assert sim.received("A") == [b"Cworld"]
    assert sim.received("B") == [b"Chello"]
    assert sim.delivered("A") == [b"Chello"]
    assert sim.delivered("B") == [b"Cworld"]
    assert not sim.downs("A") and not sim.downs("B")
    # it really was a collision: both took the other's "C" for their own echo
    assert any("wrong echo of byte 3" in p for p in sim.problems("A"))
    assert sim.now < 10


def test_simultaneous_start_with_default_random_source() -> None:
    sim = Sim(NulModemLink(), NulModemLink())
    for _ in range(5):
        sim.send("A", b"Cfrom a")
        sim.send("B", b"Cfrom b")
        sim.run(sim.quiet)
    assert sim.received("A") == [b"Cfrom b"] * 5
    assert sim.received("B") == [b"Cfrom a"] * 5


def test_collision_with_a_peer_that_retries_at_once() -> None:
    # A DOS-era peer starts over immediately after a wrong echo: it wins, we receive first.
    a = NulModemLink(rng=random.Random(3))
    dos = NulModemLink(rng=random.Random(4), backoff=0.0)
    sim = Sim(a, dos)
    a.send(b"M0000342900", 0.0)
    dos.send(b"M0000352900", 0.0)
    sim.run(sim.quiet)
    assert sim.received("A") == [b"M0000352900"]
    assert sim.received("B") == [b"M0000342900"]
    first_a = sim.log["A"].index(MessageReceived(b"M0000352900"))
    assert first_a < sim.log["A"].index(MessageDelivered(b"M0000342900"))


def test_noise_on_idle_line_is_not_echoed() -> None:
    sim = Sim(*pair())
    sim.lines["A"].in_flight.append((0.0, ord("x")))
    sim.run()
    assert sim.quiet()
    assert sim.wire == []
    assert "1 stray byte 'x'" in sim.problems("B")[0]


def test_noise_start_byte_does_not_bounce_for_ever() -> None:
    # B echoes it as a start byte, A takes the echo for a peer's start byte and echoes it:
    # without the bounce rule the two would pass it back and forth for ever.
    sim = Sim(*pair())
    sim.lines["A"].in_flight.append((0.0, S))
    sim.run()
    assert sim.quiet()
    assert sim.wire == [("B", S), ("A", S)]
    assert "came straight back" in sim.problems("B")[0]
    # the link is usable again afterwards
    sim.send("A", b"K1")
    sim.run(sim.quiet)
    assert sim.received("B") == [b"K1"]


def test_two_noise_control_bytes_do_not_circulate() -> None:
    # Each end takes a different noise byte for a peer's start byte and echoes it; each
    # then gets the other's echo. The bounce rule stops the pair from circulating.
    sim = Sim(*pair())
    sim.lines["A"].in_flight.append((0.0, 0x05))
    sim.lines["B"].in_flight.append((0.0, 0x07))
    sim.run()
    assert sim.quiet()
    assert len(sim.wire) <= 4
    sim.send("A", b"K1")
    sim.send("B", b"K2")
    sim.run(sim.quiet)
    assert sim.received("B") == [b"K1"] and sim.received("A") == [b"K2"]


def test_our_own_frame_coming_round_is_not_echoed_again() -> None:
    """While 'Chello' waits for a retry, S 'C' S is our frame going round: the second S is
    not echoed; a peer's own message is still received and echoed as before."""
    link = NulModemLink(rng=random.Random(0), backoff=1.0)
    link.send(b"Chello", 0.0)
    assert link.data_to_send() == bytes([S])
    link.receive_data(b"x", 0.01)  # wrong echo: our message waits for a retry
    link.events()
    assert link.data_to_send() == b""
    assert feed(link, bytes([S]) + b"C", 0.02) == bytes([S]) + b"C"
    link.receive_data(bytes([S]), 0.05)
    assert link.data_to_send() == b""
    assert "the start of our own message: not echoed" in problems(link.events())[0]
    assert feed(link, bytes([S]) + b"K1" + bytes([E]), 0.06) == bytes([S]) + b"K1" + bytes([E])
    assert MessageReceived(b"K1") in link.events()


def test_our_whole_message_coming_round_is_not_received() -> None:
    """A start byte where the echo of E was due, then the rest of our own pending frame:
    our late echoes, not the peer's message (found by hypothesis: msgs=[b'0', b'1'],
    seed=796). Its end byte is not echoed, nothing is received, the message is retried."""
    link = NulModemLink(rng=random.Random(0))
    link.send(b"0", 0.0)
    assert link.data_to_send() == bytes([S])
    assert feed(link, bytes([S]) + b"0") == b"0" + bytes([E])  # echoes accepted
    link.receive_data(bytes([S]), 0.03)  # wrong echo of E: "the peer began a message"
    assert link.data_to_send() == bytes([S])
    assert feed(link, b"0" + bytes([E]), 0.04) == b"0"  # E not echoed
    events = link.events()
    assert not [e for e in events if isinstance(e, MessageReceived)]
    assert "after '0', our own message not yet delivered: not echoed" in problems(events)[-1]
    assert link.pending == 0
    deadline = link.next_deadline()
    assert deadline is not None and deadline < 1.0  # the retry, after the back-off
    link.poll(deadline)
    assert link.data_to_send() == bytes([S])


def test_a_stall_beyond_the_timeout_does_not_bring_our_message_back() -> None:
    """The example hypothesis found, replayed: the B->A line stalls 7 s, B's late echoes
    go round through A, and A once took its own '0' for a message from B."""
    msgs = [b"0", b"1"]
    a = NulModemLink(rng=random.Random(796), max_attempts=10**6)
    b = NulModemLink(rng=random.Random(797), max_attempts=10**6)
    p = 0.015625
    sim = Sim(a, b, faulty_line(798, p, p, 2 * p), faulty_line(799, p, p, 2 * p))
    for m in msgs:
        sim.send("A", m)
    sim.run(sim.quiet, max_time=50_000)
    assert sim.received("A") == []
    assert any("our own message not yet delivered" in t for t in sim.problems("A"))
    assert sim.delivered("A") == msgs and dedupe(sim.received("B")) == msgs


def test_a_peer_sending_our_pending_message_gets_it_through_on_its_retry() -> None:
    """B answers our 'E00' with the same 'E00' while we still wait for the echo of our E
    (it was lost): we cannot tell it from our own bytes come round, so we do not echo its
    E. B, which now refuses our 'E00' the same way, sends it again: taken the second time
    (refusing it each time, the two ends would pass the pair round for ever)."""
    sim = Sim(*pair(), ba=LossyLine(hook=drop_first(E)))
    sim.send("A", b"E00")
    sim.run(lambda: bool(sim.received("B")))
    sim.send("B", b"E00")  # B's answer, at once
    sim.run(sim.quiet)
    assert sim.delivered("A") == [b"E00"] and sim.delivered("B") == [b"E00"]
    assert sim.received("A") == [b"E00"]
    assert dedupe(sim.received("B")) == [b"E00"]
    assert any("our own message not yet delivered" in t for t in sim.problems("A"))
    assert any("came again: taken for the peer's" in t for t in sim.problems("A"))
    assert sim.now < 10.0  # no timeout spent on it, let alone a livelock


@pytest.mark.xfail(strict=True, reason="no echo handshake can tell which attempt an echo is for")
def test_known_limit_a_late_echo_of_start_confirms_a_garbled_start() -> None:
    """Found by hypothesis (1 in some 9000 examples): A's S stalls past the timeout, A's
    next S is garbled into 't' behind it and the echo of 't' is lost; the late echo of the
    first S confirms the second. A counts '00' delivered, B receives 't00' (a layer-2
    parser rejects it, unless the garbled first character is another message type)."""
    msgs = [b"00000000000", b"0000000", b"00"]
    a = NulModemLink(rng=random.Random(20359), max_attempts=10**6)
    b = NulModemLink(rng=random.Random(20360), max_attempts=10**6)
    line = [faulty_line(seed, 0.0390625, 0.03125, 0.03515625) for seed in (20361, 20362)]
    sim = Sim(a, b, *line)
    for m in msgs:
        sim.send("A", m)
    sim.run(sim.quiet, max_time=50_000)
    assert sim.delivered("A") == msgs
    assert dedupe(sim.received("B")) == msgs  # fails: [..., b'0000000', b't00']


@pytest.mark.xfail(strict=True, reason="found by hypothesis, not yet explained: see the note")
def test_known_limit_a_noisy_line_shows_the_second_message_before_the_first() -> None:
    """Found by hypothesis (a random example at a desk; CI's derandomized examples pass
    test_faulty_line_delivers_everything_in_order): with drops, corruption and delays of 3-5 %, A counts '0' then
    '00' delivered, in order, but B's receiver saw '00', '0', '00'.  The same on the code
    before session 6; the path that makes B take a frame of '00' first is not traced yet."""
    msgs = [b"0", b"00"]
    seed = 784739663
    a = NulModemLink(rng=random.Random(seed), max_attempts=10**6)
    b = NulModemLink(rng=random.Random(seed + 1), max_attempts=10**6)
    line = [faulty_line(s, 0.03125, 0.03125, 0.046875) for s in (seed + 2, seed + 3)]
    sim = Sim(a, b, *line)
    for m in msgs:
        sim.send("A", m)
    sim.run(sim.quiet, max_time=50_000)
    assert sim.delivered("A") == msgs
    assert dedupe(sim.received("B")) == msgs  # fails: [b'00', b'0', b'00']


def test_echoing_without_a_pause_is_bounded() -> None:
    # A start byte and a character, again and again (two ends passing them around): after
    # 4 timeouts without a pause the link stops echoing for one timeout, breaking the ring.
    link = NulModemLink()
    i = 0
    while True:
        t = i * 0.005
        link.receive_data(bytes([S]) if i % 2 == 0 else b"x", t)
        if link.data_to_send() == b"":
            break
        assert link.pending <= 1
        i += 1
    assert 20.0 <= t <= 20.005
    last = problems(link.events())[-1]
    assert "echoing for 20 s and " in last and "without a pause or a new message" in last
    assert link.pending == 0
    assert feed(link, bytes([S]) + b"K1" + bytes([E]), t + 1) == b""  # deaf for 5 s
    assert link.events() == []
    message = bytes([S]) + b"K1" + bytes([E])
    assert feed(link, message, t + 5) == message
    assert link.events() == [MessageReceived(b"K1")]


def test_a_busy_peer_is_not_cut_off() -> None:
    # 120 different messages with hardly a pause, over 40 s: progress, not a ring.
    link = NulModemLink()
    t = 0.0
    for n in range(120):
        message = bytes([S]) + b"C%03d" % n + bytes([E])
        assert feed(link, message, t) == message
        t += 0.35
    assert len([e for e in link.events() if isinstance(e, MessageReceived)]) == 120


def test_a_repeated_message_without_pause_is_cut_off() -> None:
    # What two ends passing one message around look like: the same message, again and again.
    link = NulModemLink()
    message = bytes([S]) + b"K1" + bytes([E])
    t = 0.0
    while feed(link, message, t) == message:
        t += 0.05
    assert 19.9 < t < 20.1
    assert "echoing for 20 s" in problems(link.events())[-1]


# ---------------------------------------------------------------- start-byte learning


def test_learns_peer_start_and_end_bytes() -> None:
    us = NulModemLink(rng=random.Random(1))
    peer = NulModemLink(start=0x01, end=0x04, learn_start=False, rng=random.Random(2))
    sim = Sim(us, peer)
    sim.send("B", b"K1")  # a CHAT would teach nothing: any text parses as one
    sim.run(sim.quiet)
    assert sim.received("A") == [b"K1"]
    texts = sim.problems("A")
    assert "control byte 0x01 on an idle line: echoed as a possible start byte" in texts[0]
    assert "start byte 0x01 and end byte 0x04: our messages now use the same" in texts[1]
    assert us.framing == (0x01, 0x04)
    # our messages now reach that peer, framed its way
    sim.wire.clear()
    sim.send("A", b"Cyes")
    sim.run(sim.quiet)
    assert sim.received("B") == [b"Cyes"]
    ours = [b for who, b in sim.wire if who == "A"]
    assert ours == [0x01, *b"Cyes", 0x04]
    # and a second message from the peer teaches nothing new
    sim.send("B", b"Cok")
    sim.run(sim.quiet)
    assert sim.received("A") == [b"K1", b"Cok"]
    assert len(sim.problems("A")) == 2


def test_learning_only_start_byte_keeps_configured_end() -> None:
    us = NulModemLink(rng=random.Random(1))
    peer = NulModemLink(start=0x01, end=E, learn_start=False, rng=random.Random(2))
    sim = Sim(us, peer)
    sim.send("B", b"K1")
    sim.run(sim.quiet)
    assert sim.received("A") == [b"K1"]
    assert us.framing == (0x01, E)


def test_speaking_first_to_a_peer_with_other_framing_fails_visibly() -> None:
    # Learning needs the peer to speak first. A peer that ignores our S does not echo the
    # rest either, so we see LinkDown instead of believing the message delivered.
    us = NulModemLink(rng=random.Random(1))
    peer = NulModemLink(start=0x01, end=0x04, learn_start=False, rng=random.Random(2))
    sim = Sim(us, peer)
    sim.send("A", b"Cab")
    sim.run(sim.quiet)
    assert sim.delivered("A") == []
    assert [d.undelivered for d in sim.downs("A")] == [(b"Cab",)]
    assert sim.received("B") == []
    assert all("stray byte '\\x02'" in p for p in sim.problems("B"))


def test_noise_control_byte_on_idle_line_teaches_nothing() -> None:
    link = NulModemLink()
    link.receive_data(b"\x05", 0.0)
    assert link.data_to_send() == b"\x05"
    assert "control byte 0x05 on an idle line" in problems(link.events())[0]
    link.poll(5.0)
    assert "peer silent" in problems(link.events())[0]
    assert link.framing == (S, E)
    assert feed(link, bytes([S]) + b"K1" + bytes([E]), 6.0)
    assert link.events() == [MessageReceived(b"K1")]
    assert link.framing == (S, E)


def test_control_bytes_of_a_noise_burst_are_reported_as_noise() -> None:
    """Seen on a vpair with `noise a 40`: each control byte on the idle line was an INFO line
    of its own beside the burst's one line; the bridge folds only noise into a burst."""
    link = NulModemLink()
    link.receive_data(b"\x0d\x0e\x13\x7f\x0c", 0.0)
    found = [e for e in link.events() if isinstance(e, LinkProblem)]
    assert found and all(e.noise for e in found)
    assert any("control byte 0x0d on an idle line" in str(e.error) for e in found)


def test_control_bytes_inside_a_standard_message_are_characters() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"C\x04x" + bytes([E]))
    assert link.events() == [MessageReceived(b"C\x04x")]
    assert link.framing == (S, E)


def test_noise_that_looks_like_framing_is_not_delivered() -> None:
    link = NulModemLink()
    data = b"\x05xy\x06"
    assert feed(link, data) == data  # echoed: it might have been a peer's message
    events = link.events()
    assert not any(isinstance(e, MessageReceived) for e in events)
    assert (
        "between start byte 0x05 and end byte 0x06 dropped: not a DXP message"
        in (problems(events)[-1])
    )
    assert link.framing == (S, E)
    feed(link, bytes([S]) + b"K1" + bytes([E]), 1.0)
    assert link.events() == [MessageReceived(b"K1")]


def test_unknown_start_byte_again_restarts_the_message() -> None:
    # Found by hypothesis: noise "\x01C " echoed back by the other end must not read as a
    # CHAT framed by 0x01 ... 0x01 (and teach that framing).
    link = NulModemLink()
    assert feed(link, b"\x01C \x01") == b"\x01C \x01"
    assert not any(isinstance(e, MessageReceived) for e in link.events())
    assert link.framing == (S, E) and link.pending == 0


def test_learning_stops_once_the_peer_has_spoken() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"K1" + bytes([E]))
    assert link.events() == [MessageReceived(b"K1")]
    assert feed(link, b"\x01Chi\x04", 1.0) == b""  # now just stray bytes
    texts = problems(link.events())
    assert len(texts) == 5
    assert "1 stray byte '\\x01'" in texts[0]
    assert link.framing == (S, E)


def test_learning_off_treats_other_start_bytes_as_strays() -> None:
    link = NulModemLink(learn_start=False)
    assert feed(link, b"\x01Chi\x04") == b""
    events = link.events()
    assert not any(isinstance(e, MessageReceived) for e in events)
    assert "stray byte" in problems(events)[0]


def test_zero_and_high_bytes_are_never_learned() -> None:
    link = NulModemLink()
    link.receive_data(b"\x00\x80\xff", 0.0)
    assert "3 stray bytes" in problems(link.events())[0]
    assert link.data_to_send() == b""
    assert link.idle and link.framing == (S, E)


# ---------------------------------------------------------------- API edges


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (b"", "empty message"),
        (b"C" * 128, "at most 127"),
        (b"C\x00", "byte 0x00"),
        (b"C\xe9", "byte 0xe9"),
        (b"C\x02", "start or end byte"),
        (b"C\tx", "start or end byte"),  # learning on: a learning peer would frame on it
    ],
)
def test_send_refuses(raw: bytes, text: str) -> None:
    link = NulModemLink()
    with pytest.raises(FramingError, match=text):
        link.send(raw, 0.0)
    assert link.queued == 0 and link.data_to_send() == b""


def test_send_allows_control_bytes_with_learning_off() -> None:
    link = NulModemLink(learn_start=False)
    link.send(b"C\tx", 0.0)
    assert link.queued == 1
    with pytest.raises(FramingError, match="start or end byte"):
        link.send(b"C\x03", 0.0)


def test_send_queue_is_bounded() -> None:
    link = NulModemLink()
    for i in range(1024):
        link.send(b"C%d" % i, 0.0)
    with pytest.raises(FramingError, match="send queue full: 1024 messages"):
        link.send(b"Cone more", 0.0)
    assert link.queued == 1024


def test_bad_settings() -> None:
    with pytest.raises(ConfigError):
        NulModemLink(start=3, end=3)
    with pytest.raises(ConfigError):
        NulModemLink(start=0)
    with pytest.raises(ConfigError):
        NulModemLink(timeout=0)
    with pytest.raises(ConfigError):
        NulModemLink(max_attempts=0)


def test_reset_resends_in_flight_message_from_start() -> None:
    link = NulModemLink()
    link.send(b"K1", 0.0)
    link.send(b"K2", 0.0)
    link.receive_data(bytes([S]), 0.1)
    assert link.data_to_send() == bytes([S, ord("K")])
    link.reset()
    assert link.queued == 2
    assert link.data_to_send() == b""
    assert link.next_deadline() == 0.1  # due at once
    link.poll(7.0)
    assert link.data_to_send() == bytes([S])
    assert link.next_deadline() == 12.0
    for t, b in enumerate(bytes([S]) + b"K1" + bytes([E]) + bytes([S]) + b"K2" + bytes([E])):
        link.receive_data(bytes([b]), 8.0 + t)
    assert [e for e in link.events() if not isinstance(e, LinkProblem)] == [
        MessageDelivered(b"K1"),
        MessageDelivered(b"K2"),
    ]


def test_reset_drops_partial_receive() -> None:
    link = NulModemLink()
    feed(link, bytes([S]) + b"M00")
    link.reset()
    assert link.pending == 0 and link.idle
    feed(link, b"1" + bytes([E]), 1.0)
    assert not any(isinstance(e, MessageReceived) for e in link.events())


# ---------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(
    chunks=st.lists(
        st.tuples(
            st.lists(
                st.one_of(
                    st.sampled_from([S, E, 0x01, 0x04, 0x00, 0x80, ord("C")]),
                    st.integers(0, 255),
                ),
                max_size=200,
            ).map(bytes),
            st.floats(0, 8),
        ),
        max_size=20,
    ),
    learn=st.booleans(),
)
def test_receiver_survives_any_bytes(chunks: list[tuple[bytes, float]], learn: bool) -> None:
    link = NulModemLink(learn_start=learn, rng=random.Random(0))
    now = 0.0
    for data, dt in chunks:
        now += dt
        link.poll(now)
        link.receive_data(data, now)
        out = link.data_to_send()
        # echoes only: what went out is what came in, minus swallowed bounces, in order
        it = iter(data)
        assert all(b in it for b in out)
        assert link.pending <= 127
        deadline = link.next_deadline()
        assert deadline is None or deadline > now
        for e in link.events():
            assert isinstance(e, MessageReceived | LinkProblem)
            if isinstance(e, MessageReceived):
                assert 1 <= len(e.raw) <= 127
                assert all(0x01 <= b <= 0x7F for b in e.raw)
            else:
                assert "\n" not in str(e.error)


@settings(max_examples=100, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("data"), st.binary(max_size=40)),
            st.tuples(st.just("send"), st.sampled_from([b"K1", b"E00", b"Chello"])),
            st.tuples(st.just("wait"), st.floats(0, 7)),
        ),
        max_size=60,
    )
)
def test_link_survives_any_mix_of_calls(ops: list[tuple[str, object]]) -> None:
    link = NulModemLink(rng=random.Random(0), max_queue=8)
    now = 0.0
    for kind, arg in ops:
        if kind == "data":
            assert isinstance(arg, bytes)
            link.receive_data(arg, now)
        elif kind == "send":
            assert isinstance(arg, bytes)
            if link.queued < 8:
                link.send(arg, now)
        else:
            assert isinstance(arg, float)
            now += arg
            link.poll(now)
        assert len(link.data_to_send()) <= 40 + 1
        link.events()
        assert link.pending <= 127 and link.queued <= 8
        deadline = link.next_deadline()
        assert deadline is None or deadline > now


messages = st.lists(
    st.text(alphabet="CEMK0123456789abc ", min_size=1, max_size=30).map(str.encode),
    min_size=2,
    max_size=8,
    unique=True,
)
fault_rate = st.floats(0.01, 0.05)


def faulty_line(
    seed: int, p_drop: float, p_corrupt: float, p_delay: float, max_delay: float = 8.0
) -> LossyLine:
    """Drops, corrupts and delays bytes; corruption never makes the end byte (see below)."""
    return LossyLine(
        rng=random.Random(seed),
        p_drop=p_drop,
        p_corrupt=p_corrupt,
        p_delay=p_delay,
        max_delay=max_delay,  # 8 s is beyond the timeout: late echoes happen
        # Noise that makes E ends a partial message: no echo handshake can catch that
        # (see test_restart_garbled_into_end_delivers_a_short_message).
        never=frozenset([E]),
    )


@settings(max_examples=40, deadline=None)
@given(
    msgs=messages,
    seed=st.integers(0, 2**32),
    p_drop=fault_rate,
    p_corrupt=fault_rate,
    p_delay=fault_rate,
)
def test_faulty_line_delivers_everything_in_order(
    msgs: list[bytes], seed: int, p_drop: float, p_corrupt: float, p_delay: float
) -> None:
    a = NulModemLink(rng=random.Random(seed), max_attempts=10**6)
    b = NulModemLink(rng=random.Random(seed + 1), max_attempts=10**6)
    sim = Sim(
        a,
        b,
        faulty_line(seed + 2, p_drop, p_corrupt, p_delay),
        faulty_line(seed + 3, p_drop, p_corrupt, p_delay),
    )
    for m in msgs:
        sim.send("A", m)
    sim.run(sim.quiet, max_time=50_000)
    assert sim.delivered("A") == msgs  # each exactly once, in order
    assert dedupe(sim.received("B")) == msgs  # intact, in order; repeats only back to back
    assert sim.received("A") == []


@settings(max_examples=25, deadline=None)
@given(
    msgs=messages,
    seed=st.integers(0, 2**32),
    p=fault_rate,
)
def test_faulty_line_both_directions(msgs: list[bytes], seed: int, p: float) -> None:
    a = NulModemLink(rng=random.Random(seed), max_attempts=10**6)
    b = NulModemLink(rng=random.Random(seed + 1), max_attempts=10**6)
    # Stalls stay under the 5 s timeout here: with both ends sending, a stall beyond it can
    # start a ring of late echoes (tests/testing/test_fuzz.py::test_known_bug_late_echoes_...).
    sim = Sim(a, b, faulty_line(seed + 2, p, p, p, 4.0), faulty_line(seed + 3, p, p, p, 4.0))
    from_a = [b"A" + m for m in msgs]
    from_b = [b"B" + m for m in msgs]
    for ma, mb in zip(from_a, from_b, strict=True):
        sim.send("A", ma)
        sim.send("B", mb)
    sim.run(sim.quiet, max_time=50_000)
    assert sim.delivered("A") == from_a
    assert sim.delivered("B") == from_b
    assert dedupe(sim.received("B")) == from_a
    assert dedupe(sim.received("A")) == from_b


@settings(max_examples=30, deadline=None)
@given(
    noise=st.lists(
        st.tuples(st.sampled_from("AB"), st.floats(0, 10), st.binary(min_size=1, max_size=6)),
        max_size=8,
    ),
    seed=st.integers(0, 2**32),
)
@example(noise=[("A", 0.0, b"\x01C ")], seed=0)
def test_noise_bursts_always_settle(noise: list[tuple[str, float, bytes]], seed: int) -> None:
    """Whatever noise hits both directions, the two ends fall quiet, then work."""
    a = NulModemLink(rng=random.Random(seed))
    b = NulModemLink(rng=random.Random(seed + 1))
    # a slow USB adapter (20 ms each way) keeps simulated rings short in steps
    sim = Sim(a, b, LossyLine(latency=0.02), LossyLine(latency=0.02))
    for side, t, data in sorted(noise, key=lambda n: n[1]):
        line = sim.lines[side]
        for i, byte in enumerate(data):
            line.in_flight.append((max(t + i * 0.001, line.last), byte))
            line.last = line.in_flight[-1][0]
    sim.run(max_time=10_000)
    assert sim.quiet()
    last = max((t for _, t, _ in noise), default=0.0)
    assert sim.now < last + 6 * 5  # the no-pause rule and the timeouts bound it
    sim.send("A", b"K1")
    sim.run(sim.quiet)
    sim.send("B", b"K2")
    sim.run(sim.quiet)
    assert sim.received("B")[-1:] == [b"K1"]
    assert sim.received("A")[-1:] == [b"K2"]


def test_heavy_faults_fixed_seeds() -> None:
    """The same property on fixed seeds with 5 % of every fault, so it surely bites."""
    rng = random.Random(7)
    retries = 0
    for seed in range(12):
        msgs = [b"M%04d%s" % (seed, bytes(rng.choice(b"0123456789") for _ in range(8)))]
        msgs += [b"C%d hello %d" % (seed, i) for i in range(4)]
        a = NulModemLink(rng=random.Random(seed), max_attempts=10**6)
        b = NulModemLink(rng=random.Random(seed + 100), max_attempts=10**6)
        sim = Sim(a, b, faulty_line(seed, 0.05, 0.05, 0.05), faulty_line(~seed, 0.05, 0.05, 0.05))
        for m in msgs:
            sim.send("A", m)
            sim.send("B", m.lower())
        sim.run(sim.quiet, max_time=100_000)
        assert sim.delivered("A") == msgs and dedupe(sim.received("B")) == msgs
        assert sim.delivered("B") == [m.lower() for m in msgs]
        assert dedupe(sim.received("A")) == [m.lower() for m in msgs]
        retries += sum("starting over" in p for p in sim.problems("A") + sim.problems("B"))
    assert retries > 200  # the line really was bad


# ---------------------------------------------------------------- framing only from evidence
# Issue 36 point 1: four bytes of noise, 07 43 4C 03, on an idle line were delivered as a CHAT
# 'L' and made 0x07 the start byte of every message after, for good.

NOISE = b"\x07CL\x03"


def test_noise_on_an_idle_line_in_one_read_is_no_message_and_teaches_nothing() -> None:
    link = NulModemLink(rng=random.Random(1))
    link.receive_data(NOISE, 0.0)
    assert link.data_to_send() == b"\x07"  # only the byte that might have begun a frame
    events = link.events()
    assert not any(isinstance(e, MessageReceived) for e in events)
    assert link.framing == (S, E)
    assert any(isinstance(e, LinkProblem) and e.noise for e in events)
    link.send(b"K1", 1.0)
    assert link.data_to_send() == bytes([S])  # our next message: the configured start byte


def test_noise_that_frames_a_chat_echo_by_echo_is_still_no_evidence() -> None:
    link = NulModemLink(rng=random.Random(1))
    feed(link, NOISE)  # as if paced by our echoes: a CHAT still proves no framing
    events = link.events()
    assert not any(isinstance(e, MessageReceived) for e in events)
    assert "a CHAT" in problems(events)[-1] and "framing not learned" in problems(events)[-1]
    assert link.framing == (S, E)


def test_a_whole_message_in_one_read_on_an_unknown_start_byte_is_noise() -> None:
    # A handshaking peer sends no byte before our echo of the one before: a frame that runs
    # ahead of the echoes is not a peer's, however well it parses; the rest is not echoed.
    link = NulModemLink(rng=random.Random(1))
    link.receive_data(b"\x07K1\x03", 0.0)
    assert link.data_to_send() == b"\x07"
    assert not any(isinstance(e, MessageReceived) for e in link.events())
    assert link.framing == (S, E)


def test_a_learned_framing_whose_start_byte_gets_no_echo_falls_back() -> None:
    link = NulModemLink(rng=random.Random(1), timeout=1.0)
    feed(link, b"\x07K1\x03")  # echo by echo, a strict message: learned
    assert link.events()[-1] == MessageReceived(b"K1")
    assert link.framing == (0x07, E)
    link.send(b"K0", 10.0)
    assert link.data_to_send() == b"\x07"
    link.poll(11.0)  # no echo of 0x07
    assert "back to the configured framing 0x02/0x03" in " ".join(problems(link.events()))
    assert link.framing == (S, E)
    link.poll(11.0)
    assert link.data_to_send() == bytes([S])  # tried again the configured way


def test_withdraw_stops_sending_a_message_the_peer_has() -> None:
    link = NulModemLink(rng=random.Random(1), timeout=1.0)
    link.send(b"K1", 0.0)
    link.send(b"K0", 0.0)
    assert link.data_to_send() == bytes([S])
    assert link.withdraw(b"K1")
    assert link.data_to_send() == bytes([S])  # the next one starts at once
    assert link.queued == 1
    assert not link.withdraw(b"K1")
    assert not any(isinstance(e, MessageDelivered) for e in link.events())


def test_after_a_reopen_a_message_written_whole_waits_for_the_peer_s_answer() -> None:
    """Found by the line soak: the cable pulled after the end byte went out, before its echo
    came back; sent again at once, the repeat reached a peer that had the message."""
    link = NulModemLink(rng=random.Random(1), timeout=1.0)
    link.send(b"K1", 0.0)
    frame = bytes([S]) + b"K1" + bytes([E])
    for i, b in enumerate(frame[:-1]):  # every echo but the end byte's
        assert link.data_to_send() == bytes([b])
        link.receive_data(bytes([b]), 0.01 * (i + 1))
    assert link.data_to_send() == bytes([E])  # the end byte is written
    link.reset()  # the port was lost and is back
    link.poll(0.5)
    assert link.data_to_send() == b""  # held: the peer may have it
    assert "sent again in 1 s unless it answers" in problems(link.events())[-1]
    deadline = link.next_deadline()
    assert deadline is not None and abs(deadline - 1.5) < 1e-9
    feed(link, bytes([S]) + b"K0" + bytes([E]), 0.6)  # its answer comes first
    assert MessageReceived(b"K0") in link.events()
    assert link.withdraw(b"K1")  # the caller: it answered, so it has it
    assert link.queued == 0
    link.poll(2.0)
    assert link.data_to_send() == b""


def test_after_a_reopen_a_message_cut_short_goes_again_at_once() -> None:
    link = NulModemLink(rng=random.Random(1), timeout=1.0)
    link.send(b"K1", 0.0)
    assert link.data_to_send() == bytes([S])
    link.receive_data(bytes([S]), 0.01)
    assert link.data_to_send() == b"K"
    link.reset()  # the end byte never went out: the peer cannot have it
    link.poll(0.5)
    assert link.data_to_send() == bytes([S])


def test_after_a_reopen_the_held_message_goes_when_the_peer_says_nothing() -> None:
    link = NulModemLink(rng=random.Random(1), timeout=1.0)
    link.send(b"K1", 0.0)
    frame = bytes([S]) + b"K1" + bytes([E])
    for i, b in enumerate(frame[:-1]):
        link.data_to_send()
        link.receive_data(bytes([b]), 0.01 * (i + 1))
    link.data_to_send()
    link.reset()
    link.poll(0.5)
    assert link.data_to_send() == b""
    link.poll(1.5)
    assert link.data_to_send() == bytes([S])  # sent again, as the handshake says
