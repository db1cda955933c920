"""``dxserial hub`` (defaults) in front of the strict stand-in (testing/strict.py, modelled on
GWD's ``dxp.c``): a Hub client plays whole games, several ``go``s, a ``stop`` then ``go``, a
``new-game`` after a finished one, and ``quit``; the strict engine never refuses a message,
and every move the client gets, but the stopped one, is the engine's.

Sans-I/O first, on a fake clock: the adapter and a :class:`StrictPlayer` that, like GWD,
reads nothing while it thinks (what reaches it then is read after its MOVE).  Then the
wiring, in process: :class:`HubAdapterRunner` with its Hub side on a pipe, the strict engine
run as ``dxserial engine`` runs it, over TCP both ways and on an in-process cable (NULMODEM
and NUL frames).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import os
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from dxserial.draughts import LegalMove, Position
from dxserial.engine.player import BackPolicy, PlayerConfig
from dxserial.engine.runner import RunResult
from dxserial.hub.adapter import AdapterConfig, HubAdapter, Log, SendDxp, SendHub, StartOver, Stop
from dxserial.hub.adapter_runner import HubAdapterRunner
from dxserial.protocol import hub
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.messages import Message, Move
from dxserial.protocol.session import Role
from dxserial.sim.memory import cable
from dxserial.testing.inproc import engine_task, until
from dxserial.testing.process import free_port
from dxserial.testing.strict import StrictError, StrictPlayer
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint
from dxserial.transports.stdio_lines import StdioLines

OURS = "dxserial played"


def strict_player(seed: int = 1, clock: Callable[[], float] | None = None) -> StrictPlayer:
    config = PlayerConfig(role=Role.FOLLOWER, name="Strict stand-in", depth=1, seed=seed,
                          backreq=BackPolicy.DECLINE)
    return StrictPlayer(config, clock=clock) if clock is not None else StrictPlayer(config)


def opponent(seed: int) -> Callable[[Position], LegalMove]:
    rng = random.Random(seed)
    return lambda position: rng.choice(position.legal_moves())


def pos_line(start: Position, moves: list[LegalMove]) -> str:
    return hub.format_line(hub.pos_line(start, moves))


# --------------------------------------------------------------------------- sans-I/O


@dataclass
class ThinkingStrict:
    """The strict engine with a think time: GWD reads nothing while it searches, so what
    reaches it then waits until its MOVE is sent."""

    think: float
    now: Callable[[], float]
    player: StrictPlayer = field(init=False)
    inbox: list[Message] = field(default_factory=list)
    due: list[tuple[float, Message]] = field(default_factory=list)  # its messages, when sent
    busy_until: float | None = None
    moves: list[Move] = field(default_factory=list)  # the MOVEs it sent

    def __post_init__(self) -> None:
        self.player = strict_player(clock=self.now)

    def deliver(self, msg: Message, now: float) -> None:
        if self.busy_until is not None:
            self.inbox.append(msg)
            return
        out = self.player.receive(msg)  # StrictError: the test fails, naming the message
        for sent in out:
            if isinstance(sent, Move):
                self.busy_until = now + self.think
                self.moves.append(sent)
            self.due.append((self.busy_until or now, sent))

    def tick(self, now: float) -> None:
        if self.busy_until is not None and now >= self.busy_until:
            self.busy_until = None
            inbox, self.inbox = self.inbox, []
            for msg in inbox:
                self.deliver(msg, now)

    def next_time(self) -> float | None:
        times = [t for t in (self.busy_until, self.player.deadline()) if t is not None]
        times += [t for t, _ in self.due[:1]]
        return min(times) if times else None


class Rig:
    """The adapter (defaults) and the strict engine on one fake clock."""

    def __init__(self, think: float) -> None:
        self.adapter = HubAdapter(AdapterConfig())
        self.now = 0.0
        self.engine = ThinkingStrict(think, lambda: self.now)
        self.lines: list[str] = []
        self.logs: list[str] = []
        self.stopped: Stop | None = None
        self._due: list[tuple[float, int, str]] = []
        self._seq = itertools.count()

    def hub(self, *texts: str) -> None:
        for text in texts:
            self._apply(self.adapter.hub_line(text, self.now))

    def hub_at(self, when: float, text: str) -> None:
        heapq.heappush(self._due, (when, next(self._seq), text))

    def _apply(self, actions: list[object]) -> None:
        for action in actions:
            if isinstance(action, SendDxp):
                self.engine.deliver(action.message, self.now)
            elif isinstance(action, SendHub):
                self.lines.append(hub.format_line(action.line))
            elif isinstance(action, Log):
                self.logs.append(action.text)
            elif isinstance(action, StartOver):
                raise AssertionError(f"a fresh connection: {action.why}")
            elif isinstance(action, Stop):
                self.stopped = action

    def step(self) -> None:
        engine = self.engine
        times = [t for t in (self.adapter.next_deadline(), engine.next_time()) if t is not None]
        times += [t for t, _, _ in self._due[:1]]
        assert times, f"stuck at {self.now}: {self.logs[-3:]}"
        self.now = max(self.now, min(times))
        assert self.now < 3600, self.logs[-5:]
        if self._due and self._due[0][0] <= self.now:
            self.hub(heapq.heappop(self._due)[2])
            return
        engine.tick(self.now)
        engine.player.poll(self.now)
        while engine.due and engine.due[0][0] <= self.now:
            _, msg = engine.due.pop(0)
            self._apply(self.adapter.dxp(msg, self.now))
        self._apply(self.adapter.poll(self.now))

    def done(self) -> str:
        """Run until the next ``done`` line; its move text."""
        count = len(self.lines)
        while not any(line.startswith("done") for line in self.lines[count:]):
            self.step()
        return next(line for line in self.lines[count:] if line.startswith("done")).split("=")[1]

    def settle(self) -> None:
        """Run until neither side has anything left to do."""
        while self.engine.due or self.engine.busy_until is not None or self._due:
            self.step()


def play(rig: Rig, start: Position, moves: list[LegalMove], plies: int, seed: int) -> int:
    """The engine answers every ``go`` for ``plies`` plies or to the game's end; the
    client's side is a random mover.  The number of the engine's moves."""
    position = start
    for move in moves:
        position = position.play(move)
    choose, engine_moves = opponent(seed), 0
    engine_colour = position.turn
    for _ in range(plies):
        if position.is_lost():
            break
        if position.turn is engine_colour:
            rig.hub(pos_line(start, moves), "go think")
            move = hub.parse_hub_move(position, rig.done())
            engine_moves += 1
        else:
            move = choose(position)
        moves.append(move)
        position = position.play(move)
    return engine_moves


@pytest.mark.parametrize("think", [0.0, 2.0])
def test_a_hub_session_in_front_of_the_strict_engine_is_all_the_engines_moves(
    think: float,
) -> None:
    rig = Rig(think)
    rig.hub("hub", "init", "new-game", "level move-time=1")
    start = Position.start()
    played = play(rig, start, moves := [], 200, seed=1)  # a whole game, to its end
    assert played > 20
    # Next: a new game, a stop 0.5 s into a search, then a go on the next position.
    rig.hub("new-game", "level move-time=5", pos_line(start, []), "go think")
    rig.hub_at(rig.now + 0.5, "stop")
    stopped = hub.parse_hub_move(start, rig.done())
    reply = start.play(stopped).legal_moves()[0]
    moves = [stopped, reply]
    rig.hub("level move-time=1")
    played += play(rig, start, moves, 30, seed=2)
    # A game from a position the engine plays Black in, then quit in the middle of it.
    rig.hub("new-game")
    black = start.play(start.legal_moves()[3])
    played += play(rig, black, [], 20, seed=3)
    rig.hub("quit")
    rig.settle()
    player = rig.engine.player
    assert player.refused is None
    ours = [line for line in rig.lines if OURS in line]
    if think:  # the stopped search: dxserial's move, named as such; all others the engine's
        assert len(ours) == 1 and "stopped by the client" in ours[0], ours
        assert rig.adapter.moves_played == played
    else:  # the engine's move came before the stop: nothing to stop (one more move)
        assert ours == [] and rig.adapter.moves_played == played + 1
    assert rig.stopped == Stop(0, "quit")
    assert player.done, player.outcome  # quit's GAMEEND (stop code 1), answered


def test_the_engine_ending_at_the_gamereqs_move_limit_gets_a_new_game_it_accepts() -> None:
    """The built-in follower claims a draw when the GAMEREQ's moves are played; the next
    go is a new game of that position, which the strict engine takes."""
    rig = Rig(0.5)
    rig.hub("hub", "init", "level time=120 moves=3")
    played = play(rig, Position.start(), [], 12, seed=4)
    assert played == 6 and rig.engine.player.refused is None
    assert not [line for line in rig.lines if OURS in line], rig.lines
    assert sum("a new game from this position" in text for text in rig.logs) >= 1, rig.logs
