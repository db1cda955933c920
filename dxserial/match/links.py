"""The engines' connections in a match or tournament, on the one driver.

An :class:`MatchEngine` is one engine (its :class:`~dxserial.match.engine.Engine`
state) and, while connected, its port.  An :class:`EngineDesk` holds one
:class:`~dxserial.drive.driver.Driver` with a side (a layer-1 link) per engine connection,
opens and closes them, and runs each game's
:class:`~dxserial.match.machine.GameConductor` on it: what an engine's link reports
goes to the game it plays in, or, between games, marks it gone (a lost link) or is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial.drive.actions import Action, Hangup, Log, Send
from dxserial.drive.driver import Driver
from dxserial.drive.machine import BaseMachine
from dxserial.match.engine import Engine, claims_initiator, read
from dxserial.match.machine import GameConductor
from dxserial.protocol.messages import GameRequest, escape
from dxserial.protocol.nulmodem import LinkProblem
from dxserial.transports.base import Port
from dxserial.transports.endpoints import EngineEndpoint

__all__ = ["EngineDesk", "Interrupted", "MatchEngine", "Playing"]

log = logging.getLogger("dxserial.match.runner")


class Interrupted(Exception):
    """The match was asked to stop (a signal) while an engine was being reached."""


@dataclass(eq=False)
class MatchEngine(Engine):
    """One follower engine: its endpoint, and while connected, its port.

    It outlives a :class:`~dxserial.match.runner.Match` when a tournament hands it from
    one pairing to the next.  ``slot`` is its side's name on the desk's driver (a match's
    two are engines "A" and "B"; the word "side" is the driver's and the bridge's).
    """

    endpoint: EngineEndpoint = field(kw_only=True)
    slot: str = field(default="", kw_only=True)
    port: Port | None = field(default=None, kw_only=True)
    reader: asyncio.Task[None] | None = field(default=None, kw_only=True)
    generation: int = field(default=0, kw_only=True)

    def __post_init__(self) -> None:
        self.reports_thinking = self.endpoint.reports_thinking


class Playing:
    """One game on the desk: its conductor, which slot is its side "A" and "B", and what
    the match does with the actions that are not the driver's (lines, news, hang-ups) and
    after each of the game's answers (``after``: show its status)."""

    def __init__(
        self,
        game: GameConductor,
        a: MatchEngine,
        b: MatchEngine,
        handle: Callable[[Action], None],
        after: Callable[[], None],
    ) -> None:
        self.game = game
        self.sides = {"A": a, "B": b}
        self.handle = handle
        self.after = after
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def carry(self, actions: list[Action]) -> list[Action]:
        """The conductor's actions in the driver's side names; the rest to the match."""
        out: list[Action] = []
        for action in actions:
            if isinstance(action, Send):
                out.append(Send(self.sides[action.side].slot, action.raw, action.checked))
            elif isinstance(action, Log):
                out.append(action)
            else:
                self.handle(action)
        self.after()
        if self.game.over and not self.done.done():
            self.done.set_result(None)
        return out


class _Switch(BaseMachine[str]):
    """The driver's machine: each slot's input to the game that has it, else idle rules."""

    def __init__(self) -> None:
        self.sides: dict[str, MatchEngine] = {}  # slot -> side
        self.seats: dict[str, tuple[Playing, str]] = {}  # slot -> (game, "A"/"B")
        self.playing: list[Playing] = []

    def seat(self, playing: Playing) -> None:
        self.playing.append(playing)
        for name, side in playing.sides.items():
            self.seats[side.slot] = (playing, name)

    def unseat(self, playing: Playing) -> None:
        if playing in self.playing:
            self.playing.remove(playing)
        for slot in [s for s, (p, _) in self.seats.items() if p is playing]:
            del self.seats[slot]

    def to_game(
        self, slot: str, call: Callable[[GameConductor, str], list[Action]]
    ) -> list[Action] | None:
        seat = self.seats.get(slot)
        if seat is None:
            return None
        playing, name = seat
        return playing.carry(call(playing.game, name))

    def receive(self, slot: str, raw: bytes, now: float) -> list[Action]:
        out = self.to_game(slot, lambda g, s: g.receive(s, raw, now))
        if out is not None:
            return out
        side = self.sides[slot]
        msg = read(raw)
        if isinstance(msg, GameRequest):  # kept as evidence for its next game
            out = []
            claims_initiator(side, msg, out)
            return out
        return [Log(logging.INFO, f"engine {side.label} between games: {escape(raw)} (dropped)")]

    def left(self, slot: str, now: float, why: str = "") -> list[Action]:
        out = self.to_game(slot, lambda g, s: g.left(s, now, why))
        if out is None:
            self.sides[slot].gone = why
        return out or []

    def delivered(self, slot: str, raw: bytes, now: float) -> list[Action]:
        out = self.to_game(slot, lambda g, s: g.delivered(s, raw, now))
        if out is None:
            self.sides[slot].delivered = (raw, now)
        return out or []

    def undelivered(self, slot: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.to_game(slot, lambda g, s: g.undelivered(s, raws, why, now)) or []

    def link_down(self, slot: str, raws: list[bytes], why: str, now: float) -> list[Action]:
        return self.left(slot, now, f"the engine stopped answering: {why}")

    def line_problem(self, slot: str, problem: LinkProblem, now: float) -> list[Action]:
        return [Log(problem.level, f"engine {self.sides[slot].label} line: {problem.error}")]

    def next_deadline(self) -> float | None:
        due = [d for p in self.playing if (d := p.game.next_deadline()) is not None]
        return min(due) if due else None

    def poll(self, now: float) -> list[Action]:
        out: list[Action] = []
        for playing in list(self.playing):
            out += playing.carry(playing.game.poll(now))
        return out


class EngineDesk:
    """The engines' connections on one driver, and the games played over them."""

    def __init__(self) -> None:
        self.switch = _Switch()
        self.driver: Driver[str] = Driver(self.switch, log=log)
        self._closing: set[asyncio.Task[None]] = set()

    def _slot(self, side: MatchEngine) -> str:
        if not side.slot:
            taken = set(self.switch.sides)
            slot, n = side.label, 1
            while slot in taken:
                n += 1
                slot = f"{side.label}#{n}"
            side.slot = slot
        self.switch.sides[side.slot] = side
        return side.slot

    async def connect(self, side: MatchEngine, timeout: float, stopping: asyncio.Event) -> None:
        """Open the engine's endpoint (a stop request cuts a long wait short)."""
        opening = asyncio.ensure_future(side.endpoint.open(timeout))
        stop = asyncio.ensure_future(stopping.wait())
        await asyncio.wait({opening, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not opening.done():
            opening.cancel()
            await asyncio.gather(opening, stop, return_exceptions=True)
            raise Interrupted
        await asyncio.gather(stop, return_exceptions=True)
        port = opening.result()
        slot = self._slot(side)
        side.generation += 1
        self.driver.add_side(slot, side.endpoint.make_link())
        side.port = port
        side.joined()
        self.driver.attach(slot, port)
        side.reader = asyncio.create_task(self._read(side, slot, port))
        log.info("engine %s connected: %s", side.label, side.endpoint.describe())

    async def _read(self, side: MatchEngine, slot: str, port: Port) -> None:
        why = await self.driver.read(slot, port)
        if side.port is port:
            text = str(why) if why else "the engine closed the connection"
            self.driver.act(lambda now: self.switch.left(slot, now, text))

    async def close(self, side: MatchEngine, timeout: float = 5.0) -> None:
        """Close the engine's connection after the last messages reached it (a final
        GAMEEND; at most ``timeout`` seconds); its endpoint stays ready for the next one."""
        port, reader = side.port, side.reader
        side.port = side.reader = None
        side.connected = False
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        if port is not None:
            pump = self.driver.pump(side.slot)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while pump.port is not None and pump.link.queued and loop.time() < deadline:
                await asyncio.sleep(0.01)
            await pump.close()
            await side.endpoint.release(port)

    def hang_up(self, side: MatchEngine) -> None:
        """:meth:`close` in the background (a game's hang-up)."""
        task = asyncio.ensure_future(self.close(side))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def seat(
        self,
        game: GameConductor,
        a: MatchEngine,
        b: MatchEngine,
        handle: Callable[[Action], None],
        after: Callable[[], None],
    ) -> Playing:
        """``game`` between ``a`` and ``b``: their links' reports go to it from now on."""
        playing = Playing(game, a, b, self._hangups(a, b, handle), after)
        self.switch.seat(playing)
        return playing

    async def play(self, playing: Playing, first: Callable[[float], list[Action]]) -> None:
        """Run the game until it is over, starting with ``first`` (its begin, or its stop)."""
        try:
            self.act(playing, first)
            await playing.done
        finally:
            self.switch.unseat(playing)
        await asyncio.gather(*self._closing, return_exceptions=True)

    def _hangups(
        self, a: MatchEngine, b: MatchEngine, handle: Callable[[Action], None]
    ) -> Callable[[Action], None]:
        sides = {"A": a, "B": b}

        def carry(action: Action) -> None:
            if isinstance(action, Hangup):
                self.hang_up(sides[action.side])
            else:
                handle(action)

        return carry

    def act(self, playing: Playing, call: Callable[[float], list[Action]]) -> None:
        """Give ``playing``'s game an input now (a stop)."""
        self.driver.act(lambda now: playing.carry(call(now)))

    async def shutdown(self) -> None:
        await asyncio.gather(*self._closing, return_exceptions=True)
        await self.driver.close()

