"""How an engine on a serial line speaks DXP, found out by listening and asking: no I/O here.

A DOS-era engine gives no clue about its layer 1 (NULMODEM or NUL, which start and end
bytes, which speed).  :class:`Prober` decides what to send and what the answers prove; a
runner moves the bytes, reopens the port at the speed asked for (:class:`Open`) and passes
the time in, so tests run it on a fake clock against a simulated peer.  It listens first,
then asks speed by speed; the order, what counts as proof, the verdicts and the limits:
docs/probe.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

from dxserial.errors import ConfigError, MessageError
from dxserial.protocol.messages import (
    AcceptCode,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    StopCode,
    escape,
    parse,
)
from dxserial.sim.uart import garble

#: Speeds in the order they are tried: DXP's default first, then the likely ones.
DEFAULT_SPEEDS = (9600, 19200, 2400, 4800, 38400, 1200, 57600, 115200)
#: Start and end byte pairs, most likely first.
PAIRS = ((0x02, 0x03), (0x01, 0x04), (0x1B, 0x1C), (0x1E, 0x1F))
#: Every byte that may be a start or end byte: a control byte (never 0x00, a line break).
CONTROL = (*range(0x01, 0x20), 0x7F)
CHAT_TEXT = "dxserial probe"
#: Sent after a candidate end byte: only a receiver still inside a message echoes it.
CLOSED_CHECK = b"?"

Verdict = Literal["found", "not found", "ambiguous"]


@dataclass(frozen=True)
class Open:
    """Close the port and open it again at ``speed``; then call :meth:`Prober.opened`."""

    speed: int


@dataclass(frozen=True)
class Write:
    data: bytes


@dataclass(frozen=True)
class Progress:
    """One line for the user: what is being tried now."""

    text: str


Action = Open | Write | Progress


@dataclass(frozen=True)
class Finding:
    """What the probe concluded, and why."""

    verdict: Verdict
    link: Literal["nulmodem", "nul"] | None = None
    speed: int | None = None
    start: int | None = None
    end: int | None = None
    evidence: tuple[str, ...] = ()
    tried: tuple[str, ...] = ()
    #: What the probe did to the engine's dialogue, for the user.
    left: str = ""
    interrupted: bool = False


@dataclass(frozen=True)
class ProbeSettings:
    """How long to listen and wait; which speeds to try (``vary_speed``: can we set one)."""

    speeds: tuple[int, ...] = DEFAULT_SPEEDS
    vary_speed: bool = True
    listen: float = 6.0
    wait: float = 0.3
    answer_wait: float = 1.0
    timeout: float = 90.0
    name: str = "dxserial probe"

    def __post_init__(self) -> None:
        if not self.speeds or any(s <= 0 for s in self.speeds):
            raise ConfigError("speeds must be positive whole numbers")
        for what, value in (
            ("listen", self.listen),
            ("wait", self.wait),
            ("answer wait", self.answer_wait),
            ("timeout", self.timeout),
        ):
            if not (value >= 0 and math.isfinite(value)):
                raise ConfigError(f"{what} {value}: must be a number of seconds >= 0")
        if not self.wait > 0 or not self.timeout > 0:
            raise ConfigError("wait and timeout must be > 0 seconds")


# A step of the script yields the time it wants to be woken (None: only by opened()).
_Step = Generator[float | None, None, None]


class _Done(Exception):
    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.verdict)
        self.finding = finding


@dataclass
class _Evidence:
    lines: list[str] = field(default_factory=list)
    tried: list[str] = field(default_factory=list)
    garbled: list[int] = field(default_factory=list)  # speeds that gave garbage
    hinted: list[int] = field(default_factory=list)  # speeds the garbage points to
    echo_all: str | None = None  # a start byte echoed but never closed


class Prober:
    """The probe's decisions (docs/probe.md).

    Call :meth:`start`, then :meth:`feed` with bytes read, :meth:`poll` at
    :meth:`next_deadline`, and :meth:`opened` after carrying out an :class:`Open`; take
    :meth:`actions` after each call and carry them out in order.  :attr:`finding` is set
    when it is done; :meth:`interrupt` ends it early with what is known.
    """

    def __init__(self, settings: ProbeSettings | None = None) -> None:
        self.s = settings or ProbeSettings()
        self.finding: Finding | None = None
        self._now = 0.0
        self._deadline = math.inf
        self._wake: float | None = None
        self._out: list[Action] = []
        self._rx = bytearray()
        self._chunks: list[tuple[float, bytes]] = []  # passive phase: for bursts
        self._awaiting_open = False
        self._speed = self.s.speeds[0]
        self._ev = _Evidence()
        self._script: _Step | None = None
        self._echo_latency = 0.0

    # ------------------------------------------------------------------ public API

    @property
    def done(self) -> bool:
        return self.finding is not None

    def start(self, now: float) -> None:
        self._now = now
        self._deadline = now + self.s.timeout
        self._script = self._run()
        self._resume()

    def opened(self, now: float) -> None:
        """The port is open at the speed last asked for; input read before is gone."""
        self._now = now
        self._awaiting_open = False
        self._rx.clear()
        self._resume()

    def feed(self, data: bytes, now: float) -> None:
        self._now = now
        if self._awaiting_open or self.done:
            return
        self._rx += data
        self._chunks.append((now, bytes(data)))
        self._resume()

    def poll(self, now: float) -> None:
        self._now = now
        self._resume()

    def next_deadline(self) -> float | None:
        if self.done:
            return None
        if self._wake is None:
            return None if self._awaiting_open else self._deadline
        return min(self._wake, self._deadline)

    def actions(self) -> list[Action]:
        out, self._out = self._out, []
        return out

    def interrupt(self, now: float) -> Finding:
        """Stop now (Ctrl-C): the verdict from what is known so far."""
        self._now = now
        if self.finding is None:
            self._close(self._give_up(interrupted=True))
        assert self.finding is not None
        return self.finding

    # ------------------------------------------------------------------ driving the script

    def _resume(self) -> None:
        if self.finding is not None or self._script is None:
            return
        if self._now >= self._deadline:
            self._close(self._give_up())
            return
        try:
            self._wake = self._script.send(None)
        except StopIteration:
            self._close(self._give_up())
        except _Done as done:
            self._close(done.finding)

    def _close(self, finding: Finding) -> None:
        self.finding = finding
        if self._script is not None:
            self._script.close()
            self._script = None

    def _wait(self, seconds: float, until: Callable[[], bool]) -> _Step:
        """Wait until ``until()`` holds or ``seconds`` pass."""
        end = self._now + seconds
        while not until() and self._now < end:
            yield end

    def _until_quiet(self, quiet: float = 0.05) -> _Step:
        """Wait until no byte has arrived for ``quiet`` seconds (a burst is over)."""
        while True:
            n = len(self._rx)
            yield from self._wait(quiet, partial(self._grown, n))
            if len(self._rx) == n:
                return

    def _grown(self, n: int, done: Callable[[], bool] | None = None) -> bool:
        return len(self._rx) != n or (done is not None and done())

    def _settle(self) -> _Step:
        """Let whatever is still arriving (late echoes, an answer) pass, then forget it.

        A lone control byte is an initiator's start byte waiting for its echo: served.
        """
        yield from self._until_quiet(max(0.05, 4 * self._char))
        if len(self._rx) == 1 and self._rx[0] in CONTROL:
            b = self._rx.pop(0)
            yield from self._heard_start(self._at, b)
        self._rx.clear()

    @property
    def _at(self) -> str:
        return f"{self._speed} baud" if self.s.vary_speed else "this line"

    def _collect(self, done: Callable[[], bool]) -> _Step:
        """Wait for an answer: up to ``answer_wait`` after the last byte that came."""
        while not done():
            n = len(self._rx)
            yield from self._wait(self.s.answer_wait, partial(self._grown, n, done))
            if len(self._rx) == n and not done():
                return

    def _write(self, data: bytes) -> None:
        self._out.append(Write(data))

    def _say(self, text: str) -> None:
        self._out.append(Progress(text))

    def _open(self, speed: int) -> _Step:
        self._speed = speed
        self._awaiting_open = True
        self._out.append(Open(speed))
        while self._awaiting_open:
            yield None

    @property
    def _char(self) -> float:
        return 10.0 / self._speed

    # ------------------------------------------------------------------ the script

    def _run(self) -> _Step:
        yield from self._open(self.s.speeds[0])
        if self.s.listen > 0:
            yield from self._listen()
        speeds = self._order()
        common = [s for s, _ in PAIRS]
        for speed in speeds:
            yield from self._try_speed(speed, common, nul=True)
        rest = [b for b in CONTROL if b not in common]
        for speed in speeds:
            if speed not in self._ev.garbled:
                yield from self._try_speed(speed, rest, nul=False)

    def _order(self) -> list[int]:
        if not self.s.vary_speed:
            return [self._speed]
        ev = self._ev
        hinted = [s for s in ev.hinted if s in self.s.speeds]
        plain = [s for s in self.s.speeds if s not in hinted and s not in ev.garbled]
        garbled = [s for s in self.s.speeds if s in ev.garbled and s not in hinted]
        return list(dict.fromkeys(hinted + plain + garbled))

    def _try_speed(self, speed: int, starts: list[int], *, nul: bool) -> _Step:
        if speed != self._speed:
            yield from self._open(speed)
        at = f"{speed} baud" if self.s.vary_speed else "this line"
        if nul:
            self._say(f"{at}: NUL frames, a CHAT")
            self._ev.tried.append(f"{at} NUL (CHAT)")
            if (yield from self._nul_chat(at)) == "garbled":
                return
        names = " ".join(f"0x{b:02x}" for b in starts)
        self._say(f"{at}: NULMODEM, start bytes {names}")
        self._ev.tried.append(f"{at} NULMODEM start {names}")
        if (yield from self._nulmodem(at, starts)) == "garbled":
            return
        if nul:
            self._say(f"{at}: NUL frames, a GAMEREQ")
            self._ev.tried.append(f"{at} NUL (GAMEREQ)")
            yield from self._nul_gamereq(at)

    # ------------------------------------------------------------------ passive

    def _listen(self) -> _Step:
        at = f"{self._speed} baud" if self.s.vary_speed else "this line"
        self._say(f"listening at {at} for {self.s.listen:g} s (an initiator speaks first)")
        end = self._now + self.s.listen
        while self._now < end:
            yield from self._wait(end - self._now, lambda: bool(self._rx))
            if not self._rx:
                break
            # Let the burst finish: a NUL frame comes whole, a NULMODEM start byte alone
            # (its sender waits for the echo).
            yield from self._until_quiet()
            data = bytes(self._rx)
            if b"\0" in data and any(_parse(raw) for raw in data.split(b"\0")[:-1]):
                yield from self._heard_nul(at, data)
            elif len(data) == 1 and data[0] in CONTROL:
                self._rx.clear()
                yield from self._heard_start(at, data[0])
            else:
                self._rx.clear()
                self._garbage(at, data, lone=True)

    def _heard_nul(self, at: str, data: bytes) -> _Step:
        *frames, tail = data.split(b"\0")
        self._rx[:] = tail
        for raw in frames:
            msg = _parse(raw)
            if msg is None:
                if raw:
                    self._garbage(at, raw, lone=False)
                continue
            self._ev.lines.append(
                f"at {at} the engine sent {msg.NAME} '{escape(raw)}' in a NUL frame"
            )
            left = "nothing was sent to the engine"
            if isinstance(msg, GameRequest):
                self._write(self._refusal().wire + b"\0")
                left = (
                    "its GAMEREQ was answered with GAMEACC code 2 (not this game, a next one "
                    "may follow): it is ready to offer its next game"
                )
            raise _Done(self._found("nul", None, None, left))
        yield from ()

    def _heard_start(self, at: str, start: int) -> _Step:
        """Echo a lone control byte and receive the message it begins, as a receiver."""
        self._write(bytes([start]))
        raw = bytearray()
        while True:
            yield from self._wait(max(2.0, 10 * self.s.wait), lambda: bool(self._rx))
            if not self._rx:
                if raw:
                    self._garbage(at, bytes([start]) + raw, lone=False)
                return
            b = self._rx.pop(0)
            self._write(bytes([b]))
            if b in CONTROL and b != start and raw:
                end = b
                break
            if b == start:
                raw.clear()
            elif b == 0 or b >= 0x80 or len(raw) >= 127:
                self._garbage(at, bytes([start]) + raw + bytes([b]), lone=False)
                return
            else:
                raw.append(b)
        msg = _parse(bytes(raw))
        if msg is None:
            self._garbage(at, bytes([start]) + raw + bytes([end]), lone=False)
            return
        self._ev.lines.append(
            f"at {at} the engine sent start byte 0x{start:02x}, {msg.NAME} '{escape(bytes(raw))}' "
            f"and end byte 0x{end:02x}, each only after our echo of the byte before"
        )
        left = "nothing was sent to the engine beyond the echoes"
        if isinstance(msg, GameRequest):
            answer = bytes([start]) + self._refusal().wire + bytes([end])
            ok = yield from self._echoed(answer)
            left = (
                "its GAMEREQ was answered with GAMEACC code 2 (not this game, a next one may "
                "follow): it is ready to offer its next game"
                if ok
                else "its GAMEREQ was answered with GAMEACC code 2, but not every echo of that "
                "answer came back: it may still wait for an answer"
            )
        raise _Done(self._found("nulmodem", start, end, left))

    def _garbage(self, at: str, data: bytes, *, lone: bool) -> None:
        """Bytes that make no sense at this speed: the speed is wrong; which fits them?"""
        speed = self._speed
        if speed not in self._ev.garbled:
            self._ev.garbled.append(speed)
        text = f"at {at}: garbage '{escape(data[:24])}'{'...' if len(data) > 24 else ''}"
        if lone and self.s.vary_speed:
            fits = [
                (other, b)
                for other in self.s.speeds
                if other != speed
                for b in CONTROL
                if garble(bytes([b]), other, speed) == data
            ]
            for other, _ in fits:
                if other not in self._ev.hinted:
                    self._ev.hinted.append(other)
            if fits:
                guesses = ", ".join(f"0x{b:02x} at {other}" for other, b in fits[:4])
                text += f" (what a start byte sent at another speed looks like: {guesses})"
        self._ev.lines.append(text)

    # ------------------------------------------------------------------ active

    def _nul_chat(self, at: str) -> Generator[float | None, None, str]:
        yield from self._settle()
        sent = b"\0" + Chat(text=CHAT_TEXT).wire + b"\0"
        self._write(sent)
        yield from self._collect(self._has_frame)
        if self._echo_of(sent):
            return "echo"
        yield from self._settle_start()
        answered = self._frames(at)
        if answered:
            self._ev.lines.append(
                f"at {at} our CHAT in a NUL frame was answered with "
                + ", ".join(f"{m.NAME} '{escape(m.raw)}'" for m in answered)
            )
            raise _Done(self._found("nul", None, None, "it received one CHAT; no game was started"))
        if self._speed in self._ev.garbled:
            return "garbled"
        return "nothing"

    def _settle_start(self) -> _Step:
        """Only a lone control byte came: an initiator's start byte; serve it."""
        if len(self._rx) == 1 and self._rx[0] in CONTROL:
            yield from self._until_quiet(max(0.05, 4 * self._char))
            if len(self._rx) == 1:
                b = self._rx.pop(0)
                yield from self._heard_start(self._at, b)

    def _has_frame(self) -> bool:
        return any(self._rx.split(b"\0")[:-1])

    def _echo_of(self, sent: bytes) -> bool:
        """What came back is our own bytes: a NULMODEM receiver inside a message echoes
        them (garbage from earlier speeds can leave it there).  Not an answer."""
        data = bytes(self._rx)
        if data and data in sent:
            self._rx.clear()
            return True
        return False

    def _frames(self, at: str) -> list[Message]:
        """Valid DXP frames received (the rest is noted as garbage)."""
        data = bytes(self._rx)
        self._rx.clear()
        if not data:
            return []
        *frames, tail = data.split(b"\0")
        self._rx += tail
        good = [m for m in (_parse(raw) for raw in frames) if m is not None]
        if not good and any(frames):
            self._garbage(at, data, lone=False)
        return good

    def _nul_gamereq(self, at: str) -> _Step:
        yield from self._settle()
        request = GameRequest(name=self.s.name, follower_colour=Colour.BLACK, minutes=5, moves=0)
        sent = b"\0" + request.wire + b"\0"
        self._write(sent)
        seen: list[Message] = []
        accept: GameAccept | None = None
        while accept is None:
            yield from self._collect(self._has_frame)
            if self._echo_of(sent):
                return
            got = self._frames(at)
            if not got:
                break
            seen += got
            accept = next((m for m in got if isinstance(m, GameAccept)), None)
        if not seen:
            return
        said = ", ".join(f"{m.NAME} '{escape(m.raw)}'" for m in seen)
        self._ev.lines.append(f"at {at} our GAMEREQ in a NUL frame was answered with {said}")
        if accept is None:
            left = "it received a GAMEREQ and answered without a GAMEACC; no game was started"
        elif accept.code is not AcceptCode.ACCEPT:
            left = f"it refused the game offered (GAMEACC code {accept.code.value}); no game ran"
        else:
            left = yield from self._end_game(at)
        raise _Done(self._found("nul", None, None, left))

    def _end_game(self, at: str) -> Generator[float | None, None, str]:
        """Our GAMEREQ was accepted and we are White, to move: end the game at once."""
        self._write(GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE).wire + b"\0")
        answer: GameEnd | None = None
        while answer is None:
            yield from self._collect(self._has_frame)
            got = self._frames(at)
            if not got:
                break
            answer = next((m for m in got if isinstance(m, GameEnd)), None)
        if answer is None:
            return (
                "a game was started (GAMEREQ accepted) and ended with GAMEEND reason 0, stop "
                "code 0, but its answering GAMEEND did not come: check the engine is ready"
            )
        return (
            "a game was started and ended: our GAMEREQ was accepted, our GAMEEND (reason 0, "
            f"stop code 0) answered with '{escape(answer.raw)}': it is ready for a new game"
        )

    def _echoed(self, data: bytes) -> Generator[float | None, None, bool | None]:
        """Send ``data`` a byte at a time, each after the echo of the one before.

        ``True``: every echo right; ``None``: no echo of some byte; ``False``: a wrong one.
        """
        for b in data:
            self._rx.clear()
            sent = self._now
            self._write(bytes([b]))
            yield from self._wait(self.s.wait, lambda: bool(self._rx))
            if not self._rx:
                return None
            if self._rx[0] != b or len(self._rx) > 1:
                return False
            self._echo_latency = max(self._echo_latency, self._now - sent)
        self._rx.clear()
        return True

    def _nulmodem(self, at: str, starts: list[int]) -> Generator[float | None, None, str]:
        yield from self._settle()
        idle = yield from self._make_idle(at)
        if idle is None:
            raise _Done(self._give_up())
        if idle is False:
            return "garbled"
        for start in starts:
            got = yield from self._echoed(bytes([start]))
            if got is None:
                continue
            if got is False:
                self._garbage(at, bytes(self._rx) or b"?", lone=False)
                return "garbled"
            yield from self._find_end(at, start)
            return "open"
        return "nothing"

    def _make_idle(self, at: str) -> Generator[float | None, None, bool | None]:
        """Make sure no receiver over there is inside a message, which would echo our
        start-byte candidates as characters.  ``True``: idle (our ``?`` was not echoed);
        ``None``: it echoes everything; ``False``: garbage came back.

        A receiver inside a message (left there by garbage from another speed) echoes
        ``?``: then 128 more characters overflow its buffer, which DXP says drops the
        message and waits for the next start byte.
        """
        for attempt in range(2):
            got = yield from self._echoed(CLOSED_CHECK)
            if got is None:
                return True
            if got is False:
                self._garbage(at, bytes(self._rx) or b"?", lone=False)
                return False
            if attempt == 0:
                self._ev.lines.append(
                    f"at {at} a '?' was echoed: a NULMODEM receiver was inside a message; "
                    "overflowing it with 128 characters"
                )
                self._write(CLOSED_CHECK * 128)
                yield from self._settle()
        self._ev.echo_all = (
            f"at {at} every byte was echoed, even after more characters than a message can "
            "hold: the engine echoes everything, so its start and end bytes cannot be told "
            "from echoes"
        )
        return None

    def _find_end(self, at: str, start: int) -> _Step:
        """``start`` was echoed: the peer is inside a message; which byte closes it?"""
        body = Chat(text=CHAT_TEXT).wire
        paired = [e for s, e in PAIRS if s == start]
        ends = [e for e in dict.fromkeys([*paired, start + 1, *CONTROL]) if e in CONTROL]
        first = True
        for end in ends:
            if end == start:
                continue
            frame = (b"" if first else bytes([start])) + body + bytes([end])
            first = False
            got = yield from self._echoed(frame)
            if got is not True:
                first = True  # whatever the peer holds, the next attempt starts with S
                continue
            self._rx.clear()
            self._write(CLOSED_CHECK)
            quiet = max(self.s.wait, 4 * self._echo_latency + 4 * self._char)
            yield from self._wait(quiet, lambda: bool(self._rx))
            if self._rx and self._rx[0] in CONTROL:
                # Not our byte back but a start byte: the engine's receiver is idle (the end
                # byte closed our message) and it began a message of its own.
                self._ev.lines.append(
                    f"at {at} after start byte 0x{start:02x}, '{escape(body)}' and end byte "
                    f"0x{end:02x}, all echoed, the engine began a message of its own"
                )
                b = self._rx.pop(0)
                self._rx.clear()
                yield from self._heard_start(at, b)
            if not self._rx:
                self._ev.lines.append(
                    f"at {at} start byte 0x{start:02x}, the CHAT '{escape(body)}' and end byte "
                    f"0x{end:02x} were echoed byte for byte, and the byte after the end byte "
                    "was not: the engine's receiver took the message as complete"
                )
                raise _Done(
                    self._found("nulmodem", start, end, "it received one CHAT; no game was started")
                )
        self._ev.echo_all = (
            f"at {at} start byte 0x{start:02x} and every character after it were echoed, "
            "but so was a byte after every end byte tried: the engine echoes everything, "
            "or its end byte is not a control byte"
        )
        raise _Done(self._give_up())

    # ------------------------------------------------------------------ verdicts

    def _refusal(self) -> GameAccept:
        return GameAccept(name=self.s.name, code=AcceptCode.REFUSE_THIS_GAME)

    def _found(
        self, link: Literal["nulmodem", "nul"], start: int | None, end: int | None, left: str
    ) -> Finding:
        return Finding(
            "found",
            link=link,
            speed=self._speed if self.s.vary_speed else None,
            start=start,
            end=end,
            evidence=tuple(self._ev.lines),
            tried=tuple(self._ev.tried),
            left=left,
        )

    def _give_up(self, *, interrupted: bool = False) -> Finding:
        ev = self._ev
        if ev.echo_all is not None:
            return Finding(
                "ambiguous",
                link="nulmodem",
                speed=self._speed if self.s.vary_speed else None,
                evidence=(*ev.lines, ev.echo_all),
                tried=tuple(ev.tried),
                left="it received CHAT characters that no end byte closed (it drops them)",
                interrupted=interrupted,
            )
        garbage = [line for line in ev.lines if "garbage" in line]
        verdict: Verdict = "ambiguous" if garbage else "not found"
        return Finding(
            verdict, evidence=tuple(ev.lines), tried=tuple(ev.tried), interrupted=interrupted
        )


def _parse(raw: bytes) -> Message | None:
    if not raw:
        return None
    try:
        return parse(raw, strict=False)
    except MessageError:
        return None
