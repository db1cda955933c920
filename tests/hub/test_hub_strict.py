"""``dxserial hub`` (defaults) in front of the strict stand-in (standins/strict.py, modelled on
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
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dxserial.draughts import LegalMove, Position
from dxserial.engine.player import BackPolicy, PlayerConfig
from dxserial.engine.runner import RunResult
from dxserial.hub.adapter import AdapterConfig, HubAdapter, Log, SendDxp, SendHub, StartOver, Stop
from dxserial.hub.runner import HubAdapterRunner
from dxserial.protocol import hub
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.messages import AcceptCode, GameAccept, GameRequest, Message, Move
from dxserial.protocol.session import Role
from dxserial.sim.memory import cable
from dxserial.standins.strict import StrictPlayer, Wait
from dxserial.standins.strict import command as strict_command
from dxserial.testing.hub_client import ScriptedHubClient, play_game, stop_then_go
from dxserial.testing.inproc import engine_task, until
from dxserial.testing.process import free_port
from dxserial.testing.rig import Vpair
from dxserial.transports.endpoints import EngineEndpoint, LinkOptions, parse_engine_endpoint
from dxserial.transports.stdio_lines import StdioLines

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

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
    played = play(rig, start, [], 200, seed=1)  # a whole game, to its end
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
        assert any("this go waits up to" in text for text in rig.logs)  # for the answer
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



class RefusesSetUps(StrictPlayer):
    """A strict follower that refuses every game not from the start position (GAMEACC code
    2, "refuse this game but play a next one"), as a program without form B may."""

    def receive(self, msg: Message) -> list[Message]:
        if isinstance(msg, GameRequest) and msg.position is not None:
            assert self.waiting_for is Wait.GAMEREQ
            return [GameAccept(name=self.config.name, code=AcceptCode.REFUSE_THIS_GAME)]
        return super().receive(msg)


@pytest.mark.parametrize("then", ["stop", "quit"])
def test_a_search_ended_before_the_gameacc_sends_no_gameend_to_an_engine_that_refused(
    then: str,
) -> None:
    """A ``stop`` (or ``quit``) that comes before the engine's GAMEACC: no game is open
    until it comes, so dxserial's GAMEEND waits for it.  The engine refused: a GAMEEND
    then would reach an engine that waits for a GAMEREQ (GWD: fatal)."""
    rig = Rig(0.0)
    rig.engine.player = RefusesSetUps(rig.engine.player.config, clock=lambda: rig.now)
    start = Position.start()
    set_up = start.play(start.legal_moves()[0])
    rig.hub("hub", "init", "level move-time=1", pos_line(set_up, []), "go think", then)
    rig.settle()
    assert rig.engine.player.refused is None
    if then == "stop":  # and the next go, from the start: the engine's game and move
        rig.hub(pos_line(start, []), "go think")
        rig.done()
        rig.settle()
        assert rig.engine.player.refused is None and rig.adapter.moves_played == 1
    else:
        assert rig.stopped == Stop(0, "quit")


def test_a_search_stopped_before_the_gameacc_ends_the_game_once_it_is_accepted() -> None:
    rig = Rig(1.0)
    start = Position.start()
    rig.hub("hub", "init", "level move-time=1", pos_line(start, []), "go think", "stop")
    assert rig.lines[-1].startswith("done")  # at once: the client stopped it
    rig.settle()
    assert rig.engine.player.refused is None
    assert rig.engine.player.games_finished == 1  # accepted, then ended by our GAMEEND
    assert any("waits for the engine's GAMEACC" in text for text in rig.logs), rig.logs


# --------------------------------------------------------------------------- wiring


class HubPipe:
    """The Hub client's end of an in-process ``dxserial hub``: lines into a pipe (its
    stdin), its stdout kept line by line."""

    def __init__(self) -> None:
        read, self._write = os.pipe()
        self.out: list[str] = []
        self._part = ""
        self.lines = StdioLines(stdin=os.fdopen(read, "rb", buffering=0),
                                stdout=self)  # type: ignore[arg-type]

    def write(self, text: str) -> int:  # stdout
        self._part += text
        *whole, self._part = self._part.split("\n")
        self.out += whole
        return len(text)

    def flush(self) -> None:
        return None

    def say(self, *texts: str) -> None:
        os.write(self._write, "".join(f"{text}\n" for text in texts).encode())

    def close(self) -> None:
        os.close(self._write)

    async def answer(self, *texts: str, prefix: str = "done") -> str:
        count = len(self.out)
        self.say(*texts)
        assert await until(lambda: any(line.startswith(prefix) for line in self.out[count:]),
                           lambda: len(self.out)), self.out[-5:]
        return next(line for line in self.out[count:] if line.startswith(prefix))


async def play_over_the_pipe(pipe: HubPipe, start: Position, plies: int, seed: int,
                             *, stop: bool = False) -> int:
    """As :func:`play`, through the running ``dxserial hub``; ``stop``: the first go is
    stopped at once.  The number of ``go``s."""
    position, moves, choose, gos = start, list[LegalMove](), opponent(seed), 0
    for ply in range(plies):
        if position.is_lost():
            break
        if position.turn is start.turn:
            texts = [pos_line(start, moves), "go think", *(["stop"] if stop and not ply else [])]
            move = hub.parse_hub_move(position, (await pipe.answer(*texts)).split("=")[1])
            gos += 1
        else:
            move = choose(position)
        moves.append(move)
        position = position.play(move)
    return gos


@asynccontextmanager
async def strict_behind_hub(where: str) -> AsyncIterator[
        tuple[HubPipe, asyncio.Task[RunResult], asyncio.Task[RunResult], StrictPlayer]]:
    """``dxserial hub`` (defaults) in this loop with the strict engine at ``where``: tcp (it
    listens), listen (the hub listens), nulmodem or nul (an in-process cable)."""
    player = strict_player(seed=7)
    link = where if where in ("nulmodem", "nul") else "nulmodem"
    options = LinkOptions(link=link,  # type: ignore[arg-type]
                          nulmodem=NulModemSettings(timeout=0.3, max_attempts=1000))
    pipe = HubPipe()
    port = free_port()
    with cable(f"hubstrict-{where}-{port}") as line:
        engine: asyncio.Task[RunResult] | None = None
        if where == "tcp":
            engine = engine_task(player, f"listen://127.0.0.1:{port}")
            endpoint = f"tcp://127.0.0.1:{port}"
        elif where == "listen":
            endpoint = f"listen://127.0.0.1:{port}"
        else:
            engine = engine_task(player, line.open("b"), options)
            endpoint = f"memory://{line.name}"
        runner = HubAdapterRunner(
            HubAdapter(AdapterConfig()),
            EngineEndpoint(parse_engine_endpoint(endpoint), options), lines=pipe.lines,
        )
        task = asyncio.get_running_loop().create_task(runner.run(), name="hub")
        if engine is None:
            await asyncio.sleep(0)  # the hub's listener first: it is bound in run()
            engine = engine_task(player, f"tcp://127.0.0.1:{port}")
        try:
            yield pipe, task, engine, player
        finally:
            for running in (task, engine):
                running.cancel()
            await asyncio.gather(task, engine, return_exceptions=True)
            pipe.close()


@pytest.mark.parametrize("where", ["tcp", "listen", "nulmodem", "nul"])
async def test_dxserial_hub_plays_whole_games_with_the_strict_engine(where: str) -> None:
    async with strict_behind_hub(where) as (pipe, hub_task, engine, player):
        await pipe.answer("hub", prefix="wait")
        await pipe.answer("init", prefix="ready")
        pipe.say("new-game", "level move-time=1")
        start = Position.start()
        gos = await play_over_the_pipe(pipe, start, 200, seed=1)  # a whole game
        assert gos > 20
        pipe.say("new-game")
        gos += await play_over_the_pipe(pipe, start, 12, seed=2, stop=True)  # stop, then go
        pipe.say("new-game")
        black = start.play(start.legal_moves()[2])  # the engine plays Black
        gos += await play_over_the_pipe(pipe, black, 12, seed=3)
        pipe.say("quit")  # in the middle of that game: GAMEEND with stop code 1
        assert (await asyncio.wait_for(hub_task, 30)) == RunResult(0, "quit")
        result = await asyncio.wait_for(engine, 30)
    assert player.refused is None and result.code == 0, (player.refused, result)
    ours = [line for line in pipe.out if OURS in line]
    assert all("stopped by the client" in line for line in ours) and len(ours) <= 1, ours
    assert player.games_finished == 3


async def test_a_quit_with_no_game_open_is_a_hang_up_and_nothing_the_engine_must_refuse(
) -> None:
    """After ``new-game`` no DXP game runs, and DXP has nothing to end a session with then
    (a GAMEEND where a GAMEREQ is awaited kills GWD): ``dxserial hub`` only hangs up."""
    async with strict_behind_hub("tcp") as (pipe, hub_task, engine, player):
        await pipe.answer("hub", prefix="wait")
        pipe.say("init", "level move-time=1")
        await play_over_the_pipe(pipe, Position.start(), 3, seed=5)
        pipe.say("new-game", "quit")
        assert (await asyncio.wait_for(hub_task, 30)) == RunResult(0, "quit")
        result = await asyncio.wait_for(engine, 30)
    assert player.refused is None and player.games_finished == 1
    assert result.message.startswith("link lost"), result  # its only complaint: the hang-up


# --------------------------------------------------------------------------- processes


def test_dxserial_hub_on_a_serial_line_plays_the_strict_engine_process(tmp_path: Path) -> None:
    """Processes as a user runs them: ``dxserial vpair``, the strict engine on one end,
    ``dxserial hub`` (defaults) on the other, a scripted Hub client in front."""
    err = tmp_path / "strict.log"
    with Vpair(tmp_path) as vpair, err.open("w") as sink:
        engine = subprocess.Popen(strict_command(vpair.path_b), stdout=subprocess.DEVNULL,
                                  stderr=sink)
        try:
            with (tmp_path / "hub.log").open("wb") as log:
                client = ScriptedHubClient([sys.executable, "-m", "dxserial", "hub",
                                            vpair.path_a, "-v"], stderr=log, timeout=60)
                try:
                    client.handshake()
                    _stopped, then = stop_then_go(client, first="level move-time=2",
                                                  stop_after=0.0)
                    assert not then.ours, then.lines
                    tally = play_game(client, "level move-time=0.2", opponent(6),
                                      max_plies=40)
                    assert tally.engine_moves == 20 and tally.replaced == 0, tally.answers
                    assert client.quit() == 0  # mid-game: GAMEEND with stop code 1
                finally:
                    if client.proc.poll() is None:
                        client.proc.kill()
                        client.proc.wait()
            assert engine.wait(30) == 0, err.read_text()
        finally:
            if engine.poll() is None:
                engine.kill()
            engine.wait()
    assert "strict engine:" not in err.read_text()
