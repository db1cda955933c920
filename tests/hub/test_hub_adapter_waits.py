"""``dxserial hub`` asks before it answers (hub/adapter.py, hub/clock.py), on a fake clock.

The engine here is a model of Scan 2.0's DXP side (read from its source): its search
blocks its input, so a GAMEEND that reaches it mid-search is read, and answered, only when
the search is over; it plans each move from the GAMEREQ's clock as Scan does (about 1.2 x
the time left over the moves to go, at most 30 of them, never more than a quarter of the
time left); and it ends the game itself when the GAMEREQ's moves are played.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from dataclasses import dataclass, field

import pytest

from dxserial.draughts import Position
from dxserial.hub.adapter import (
    AdapterConfig,
    HubAdapter,
    Log,
    SendDxp,
    SendHub,
    StartOver,
    Stop,
)
from dxserial.hub.clock import EngineClock, move_time_clock, offer_for, say_seconds
from dxserial.protocol import hub
from dxserial.protocol.dxp_moves import match_dxp_move, to_dxp_move
from dxserial.protocol.messages import (
    AcceptCode,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    StopCode,
)

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


def scan_think(left: float, moves_to_go: int) -> float:
    """Scan 2.0's usual time for a move (its 'time_0', opening phase)."""
    moves_left = min(30.0, moves_to_go) if moves_to_go else 30.0
    total = left if 0 < moves_to_go < 10 else left / 4
    alloc = left / moves_left * 1.2
    return max(0.0, min(alloc - 0.1, min(total, left) * 0.95 - 0.1))


@dataclass
class SearchFirstEngine:
    """A DXP follower that reads nothing while it searches (see the module docstring)."""

    slow: float = 1.0  # factor on its think time (4: Scan's 'unstable' searches)
    answers_gameend: bool = True
    out: list[tuple[float, Message]] = field(default_factory=list)
    inbox: list[Message] = field(default_factory=list)
    busy_until: float | None = None
    playing: bool = False
    colour: Colour = Colour.WHITE
    positions: list[Position] = field(default_factory=list)
    minutes: int = 0
    moves: int = 0
    left: float = 0.0
    thought: list[float] = field(default_factory=list)

    def deliver(self, msg: Message, now: float) -> None:
        if self.busy_until is not None:
            self.inbox.append(msg)
        else:
            self._handle(msg, now)

    def tick(self, now: float) -> None:
        if self.busy_until is None or now < self.busy_until:
            return
        self.busy_until = None
        position = self.positions[-1]
        move = position.legal_moves()[0]
        self.positions.append(position.play(move))
        self.out.append((now, to_dxp_move(move)))
        inbox, self.inbox = self.inbox, []
        for msg in inbox:
            self.deliver(msg, now)

    def _handle(self, msg: Message, now: float) -> None:
        if isinstance(msg, GameRequest):
            self.out.append((now, GameAccept(name="Scan-like", code=AcceptCode.ACCEPT)))
            self.playing, self.colour = True, msg.follower_colour
            start = Position.start()
            if msg.position is not None:
                assert msg.to_move is not None
                start = Position.from_dxp(msg.position, msg.to_move)
            self.positions = [start]
            self.minutes, self.moves, self.left = msg.minutes, msg.moves, msg.minutes * 60.0
            self._maybe_search(now)
        elif isinstance(msg, Move) and self.playing:
            position = self.positions[-1]
            self.positions.append(position.play(match_dxp_move(position, msg)))
            self._maybe_search(now)
        elif isinstance(msg, GameEnd):
            if self.playing and self.answers_gameend:
                self.out.append((now, GameEnd(reason=EndReason.NONE, stop=msg.stop)))
            self.playing = False

    def _maybe_search(self, now: float) -> None:
        position = self.positions[-1]
        if not self.playing or position.turn is not self.colour:
            return
        plies = len(self.positions) - 1
        if self.moves and plies >= 2 * self.moves:  # "N moves played": Scan ends the game
            self.out.append((now, GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)))
            self.playing = False
            return
        to_go = self.moves - (plies // 2) % self.moves if self.moves else 0
        think = scan_think(self.left, to_go) * self.slow
        self.left -= think
        self.thought.append(think)
        self.busy_until = now + think


class Rig:
    """The adapter and one engine on one fake clock: every message arrives when sent."""

    def __init__(self, engine: SearchFirstEngine, answer_timeout: float = 10.0) -> None:
        self.adapter = HubAdapter(AdapterConfig(grace=2.0, answer_timeout=answer_timeout))
        self.engine = engine
        self.now = 0.0
        self.lines: list[tuple[float, str]] = []
        self.logs: list[str] = []
        self.fresh: list[SearchFirstEngine] = []  # engines of later connections
        self._due: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self.stopped: Stop | None = None

    def hub(self, text: str) -> None:
        self._apply(self.adapter.hub_line(text, self.now))

    def hub_at(self, when: float, text: str) -> None:
        heapq.heappush(self._due, (when, next(self._seq), text))

    def _apply(self, actions: list[object]) -> None:
        for action in actions:
            if isinstance(action, SendDxp):
                self.engine.deliver(action.message, self.now)
            elif isinstance(action, SendHub):
                self.lines.append((self.now, hub.format_line(action.line)))
            elif isinstance(action, Log):
                self.logs.append(action.text)
            elif isinstance(action, StartOver):
                self.engine = SearchFirstEngine()  # a fresh connection: a fresh session
                self.fresh.append(self.engine)
                self._apply(self.adapter.reconnected(self.now))
            elif isinstance(action, Stop):
                self.stopped = action

    def run_until_done(self, limit: float = 600.0) -> str:
        """Run until the next ``done`` line; that line."""
        count = sum(1 for _, line in self.lines if line.startswith("done"))
        while sum(1 for _, line in self.lines if line.startswith("done")) == count:
            times = [t for t in (self.adapter.next_deadline(), self.engine.busy_until) if t]
            if self.engine.out:
                times.append(self.engine.out[0][0])
            if self._due:
                times.append(self._due[0][0])
            assert times and min(times) <= limit, f"stuck at {self.now}: {self.logs[-3:]}"
            self.now = max(self.now, min(times))
            if self._due and self._due[0][0] <= self.now:
                self.hub(heapq.heappop(self._due)[2])
                continue
            self.engine.tick(self.now)
            out, self.engine.out = self.engine.out, []
            for _, msg in out:
                self._apply(self.adapter.dxp(msg, self.now))
            self._apply(self.adapter.poll(self.now))
        return next(line for _, line in reversed(self.lines) if line.startswith("done"))

    def ours(self) -> list[str]:
        return [line for _, line in self.lines if "dxserial played" in line]


def pos_line(moves: list[str]) -> str:
    return f'pos pos={START} moves="{" ".join(moves)}"' if moves else f"pos pos={START}"


def test_stop_then_go_gets_the_engines_move_after_it_answers_the_old_gameend() -> None:
    rig = Rig(SearchFirstEngine())
    rig.hub(pos_line([]))
    rig.hub("level move-time=5")  # 48 moves in 4 minutes: Scan plans 9.5 s for move 1
    rig.hub("go think")
    rig.hub_at(1.0, "stop")
    first = rig.run_until_done()
    assert rig.ours() and first.startswith("done move=")  # stopped: dxserial's own, named
    reply = Position.start().play(hub.parse_hub_move(Position.start(), first.split("=")[1]))
    answer = hub.format_hub_move(reply.legal_moves()[0])
    rig.hub(pos_line([first.split("=")[1], answer]))
    rig.hub("level move-time=1")
    rig.hub("go think")
    assert any("this go waits up to" in text for text in rig.logs)
    done = rig.run_until_done()
    assert len(rig.ours()) == 1, rig.logs  # the second go: the engine's own move
    engine_move = rig.engine.positions[-2].legal_moves()[0]
    assert done == f"done move={hub.format_hub_move(engine_move)}"
    # It came after the engine finished the stopped search (9.5 s) and thought its own.
    assert rig.lines[-1][0] > 9.5
    assert not rig.fresh  # no fresh connection was needed


def test_an_engine_that_never_answers_the_old_gameend_is_asked_on_a_fresh_connection() -> None:
    rig = Rig(SearchFirstEngine(answers_gameend=False), answer_timeout=3.0)
    rig.hub(pos_line([]))
    rig.hub("level move-time=1")
    rig.hub("go think")
    rig.hub_at(0.5, "stop")
    first = rig.run_until_done().split("=")[1]
    reply = Position.start().play(hub.parse_hub_move(Position.start(), first))
    rig.hub(pos_line([first, hub.format_hub_move(reply.legal_moves()[0])]))
    rig.hub("go think")
    rig.run_until_done()
    assert len(rig.fresh) == 1 and len(rig.ours()) == 1
    assert any("starting over on a fresh connection" in text for text in rig.logs)
    assert rig.fresh[0].thought  # the fresh session's engine played the go's move


@pytest.mark.parametrize("slow", [1.0, 4.0])
def test_a_whole_game_at_move_time_1_is_the_engines_even_when_it_thinks_4x_longer(
    slow: float,
) -> None:
    """Scan's hard limit is 4x its usual time: under the clock it was offered (60 moves in
    a minute) each of its moves is its own, however its time is spread."""
    rig = Rig(SearchFirstEngine(slow=slow))
    played: list[str] = []
    position = Position.start()
    rig.hub("level move-time=1")
    while len(played) < 80 and not position.is_lost():
        if position.turn is Colour.WHITE:
            rig.hub(pos_line(played))
            rig.hub("go think")
            text = rig.run_until_done().split("=")[1]
            move = hub.parse_hub_move(position, text)
        else:
            move = position.legal_moves()[-1]
        played.append(hub.format_hub_move(move))
        position = position.play(move)
    assert rig.ours() == []
    if slow > 1:  # longer than the old per-move deadline (move-time 1 s + grace 2 s)
        assert max(rig.engine.thought) > 3.0
    assert sum(rig.engine.thought) <= 60.0


def test_a_game_the_engine_ends_at_the_gamereqs_move_limit_starts_again() -> None:
    rig = Rig(SearchFirstEngine())
    played: list[str] = []
    position = Position.start()
    rig.hub("level moves=3 time=120")
    for _ in range(4):  # the 4th engine move is past the GAMEREQ's 3
        rig.hub(pos_line(played))
        rig.hub("go think")
        text = rig.run_until_done().split("=")[1]
        move = hub.parse_hub_move(position, text)
        reply = position.play(move).legal_moves()[-1]
        played += [text, hub.format_hub_move(reply)]
        position = position.play(move).play(reply)
        rig.hub("level moves=3 time=120")
    assert rig.ours() == []
    assert any("limit of 3 moves: a new game from this position" in text for text in rig.logs)


@pytest.mark.parametrize(
    ("level", "minutes", "moves", "says"),
    [
        ("level move-time=1", 1, 60, "move-time=1"),
        ("level move-time=3", 2, 40, "move-time=3"),
        ("level move-time=5", 4, 48, "move-time=5"),
        ("level move-time=0.5", 1, 120, "move-time=0.5"),
        ("level moves=40 time=300", 5, 40, "moves=40 time=300"),
        ("level time=119", 1, 0, "time=119"),  # rounded down: never more than the client's
        ("level time=600 inc=5", 13, 0, "time=600 inc=5"),  # 600 + 40 x 5 s
        ("level depth=6", 5, 0, "no depth limit"),
        ("level nodes=100000", 5, 0, "no node limit"),
        ("level infinite", 5, 0, "infinite"),
    ],
)
def test_every_level_form_is_a_gamereq_clock_and_the_log_says_how(
    level: str, minutes: int, moves: int, says: str
) -> None:
    adapter = HubAdapter()
    adapter.hub_line(f"pos pos={START}", 0.0)
    assert adapter.hub_line(level, 0.0) == []
    out = adapter.hub_line("go think", 0.0)
    (request,) = [a.message for a in out if isinstance(a, SendDxp)]
    assert isinstance(request, GameRequest)
    assert (request.minutes, request.moves) == (minutes, moves)
    (note,) = [a for a in out if isinstance(a, Log)]
    assert says in note.text
    assert note.level == (logging.WARNING if "no " in says else logging.INFO)


def test_a_level_dxp_cannot_carry_is_refused_with_one_line() -> None:
    adapter = HubAdapter()
    (line,) = [a for a in adapter.hub_line("level moves=40", 0.0) if isinstance(a, SendHub)]
    assert hub.format_line(line.line).startswith("error message=")
    assert "no depth=, nodes=, move-time=, time= or infinite" in hub.format_line(line.line)


def test_the_clock_limit_never_exceeds_the_clients_own_clock() -> None:
    clock = EngineClock(offer_for(hub.Level(time=50.0), 5))  # 1 minute offered, 50 s real
    assert clock.limit(hub.Level(time=50.0)) == 50.0
    clock.spent(20.0)
    assert clock.limit(hub.Level(time=30.0)) == 30.0
    period = EngineClock(offer_for(hub.Level(move_time=3.0), 5))  # 40 moves in 2 minutes
    for _ in range(40):
        period.spent(3.0)
    assert period.left == 120.0  # a new period, as Scan's own clock
    assert offer_for(hub.Level(infinite=True), 5).timed is False


def test_move_time_clocks_fit_the_move_time_and_durations_read_well() -> None:
    for tenth in range(1, 300):
        move_time = tenth / 10
        minutes, moves = move_time_clock(move_time)
        assert 1 <= minutes <= 999 and 1 <= moves <= 999
        per_move = minutes * 60 / moves
        assert per_move >= move_time - 1e-9
        assert per_move <= max(move_time * 1.25, 60 / 80 + 1e-9), (move_time, minutes, moves)
    assert [say_seconds(x) for x in (59.9996, 2.5, 0.25, 3.0)] == ["60 s", "2.5 s", "0.25 s", "3 s"]
