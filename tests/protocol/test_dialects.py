"""Each stand-in dialect against the built-in engine, in process: the stand-in on the TCP
side of a sans-I/O relay, the built-in engine on the serial side, a fake clock.  Both roles,
both referee modes, a line that repeats (NULMODEM) and one that does not (NUL)."""

from __future__ import annotations

import logging
from collections import deque

import pytest

from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.bridge.relay import Relay, RelaySettings
from dxserial.drive.actions import Log, News, Send, Trace, WriteRecord
from dxserial.engine.player import Note, Player, PlayerConfig
from dxserial.game.record import GameRecord
from dxserial.live.view import LiveView
from dxserial.protocol.messages import Colour, GameEnd, Message, parse
from dxserial.protocol.session import Role
from dxserial.standins.dialects import DIALECTS, DialectPlayer


class Duel:
    """A relay between a stand-in (TCP) and the built-in engine (serial), on a fake clock."""

    def __init__(self, dialect: str, stand_in: Role, referee: str, repeats: bool) -> None:
        self.now = 0.0
        clock = lambda: self.now  # noqa: E731
        self.relay = Relay(RelaySettings(
            referee=referee, record=True, serial_repeats=repeats, news=True,  # type: ignore[arg-type]
            check_serial_state=True,
        ))
        common = {"games": 2, "minutes": 1, "moves": 12, "depth": 1}
        self.players: dict[Side, Player] = {
            TCP: DialectPlayer(PlayerConfig(role=stand_in, seed=3, **common), dialect,  # type: ignore[arg-type]
                               clock=clock),
            SERIAL: Player(PlayerConfig(role=stand_in.other, seed=4, **common), clock=clock),  # type: ignore[arg-type]
        }
        self.logs: list[tuple[int, str]] = []
        self.trace: list[dict[str, object]] = []
        self.records: list[GameRecord] = []
        self.view = LiveView()
        self._wire: deque[tuple[Side, Message]] = deque()
        self.apply(self.relay.joined(TCP, 0.0, "stand-in"))
        for side, player in self.players.items():
            self._wire.extend((side, msg) for msg in player.start())

    def apply(self, actions: list[object]) -> None:
        for action in actions:
            if isinstance(action, Send):
                self.apply(self.relay.delivered(action.side, action.raw, self.now))
                player = self.players[action.side]
                replies = player.receive(parse(action.raw, strict=False))
                self._wire.extend((action.side, msg) for msg in replies)
            elif isinstance(action, Log):
                self.logs.append((action.level, action.text))
            elif isinstance(action, Trace):
                self.trace.append(action.fields)
            elif isinstance(action, WriteRecord):
                self.records.append(action.record)
            elif isinstance(action, News):
                self.view.apply(action.news.event())

    def run(self, limit: int = 5000) -> None:
        for _ in range(limit):
            if self._wire:
                side, msg = self._wire.popleft()
                self.now += 0.01
                self.apply(self.relay.receive(side, msg.wire, self.now))
                self.apply(self.relay.settle())
                continue
            deadlines = [d for d in (
                self.relay.next_deadline(), *(p.deadline() for p in self.players.values())
            ) if d is not None]
            if not deadlines or all(p.done for p in self.players.values()):
                return
            self.now = max(self.now, min(deadlines))
            self.apply(self.relay.poll(self.now))
            for side, player in self.players.items():
                self._wire.extend((side, msg) for msg in player.poll(self.now))
        raise AssertionError("still talking")

    def notes(self) -> list[str]:
        return [t for level, t in self.logs if "note:" in t]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    ("stand_in", "referee", "repeats"),
    [(Role.INITIATOR, "warn", True), (Role.FOLLOWER, "strict", False),
     (Role.FOLLOWER, "warn", True), (Role.INITIATOR, "strict", False)],
)
def test_a_dialect_plays_two_games_with_two_records_and_nobody_blamed(
    dialect: str, stand_in: Role, referee: str, repeats: bool
) -> None:
    duel = Duel(dialect, stand_in, referee, repeats)
    duel.run()
    assert [r.game_number for r in duel.records] == [1, 2]
    assert all(r.result != "*" and not r.violations() for r in duel.records)
    assert [t for level, t in duel.logs if level >= logging.WARNING] == []
    dropped = [r for r in duel.trace if r.get("action") == "dropped"]
    # Only answers to the bridge, and a TCP stop code the bridge changed (traced as such).
    assert all(r["reason"] in ("consumed", "replaced") for r in dropped), dropped
    serial = duel.players[SERIAL]
    assert serial.games_finished == 2
    assert not [e for e in serial.events() if isinstance(e, Note) and e.level >= logging.WARNING]
    habit = {"echo": "answers a GAMEEND with the reason", "silent": "does not answer a GAMEEND",
             "cumulative": "total time it used", "wide": "40 characters"}[dialect]
    named = [n for n in duel.notes() if habit in n]
    if stand_in is Role.FOLLOWER or dialect in ("echo", "cumulative"):
        assert len(named) == 1, duel.notes()  # named once in the session, as a note
    else:  # an initiator sends no GAMEACC; whether its silence shows depends on who ends
        assert len(named) <= 1


def test_cumulative_times_are_read_as_totals_by_the_live_view() -> None:
    duel = Duel("cumulative", Role.INITIATOR, "warn", True)
    duel.run()
    card = duel.view.games[2]
    stand_in_colour = "White" if card["white"].endswith("(tcp)") else "Black"
    moves = (len(card["moves"]) + (stand_in_colour == "White")) // 2
    assert card["used"][stand_in_colour] == 3 * moves  # its last total, not the sum of totals
    assert any("MOVE times are its totals" in text
               for texts in duel.records[1].notes.values() for text in texts)  # --pdn-notes


def test_the_built_in_engine_takes_silence_as_the_answer_after_its_timeout() -> None:
    now = [0.0]
    initiator = Player(PlayerConfig(role=Role.INITIATOR, games=2, moves=1, depth=1,
                                    colour=Colour.BLACK, gameend_timeout=5.0),
                       clock=lambda: now[0])
    initiator.start()
    first = initiator.receive(parse(f"A{'GWD':<32}0".encode()))  # we play White
    ended = initiator.receive(parse(b"M0000192300"))
    assert isinstance(ended[-1], GameEnd)  # the move limit: a draw, our GAMEEND
    assert first and initiator.deadline() == pytest.approx(5.0)
    now[0] = 5.0
    [request] = initiator.poll(now[0])
    assert request.wire.startswith(b"R01")  # silence was the answer: the next game
    assert initiator.receive(parse(b"E00")) == []  # a late answer after all: swallowed
    initiator.receive(parse(f"A{'GWD':<32}0".encode()))
    assert initiator.current_game == 2  # game 2 goes on
    texts = [e.text for e in initiator.events() if isinstance(e, Note)]
    assert sum("does not answer a GAMEEND" in t for t in texts) == 1


def test_a_peer_that_hangs_up_instead_of_answering_our_last_gameend_ends_the_session() -> None:
    initiator = Player(PlayerConfig(role=Role.INITIATOR, games=1, moves=1, depth=1,
                                    colour=Colour.BLACK))
    initiator.start()
    initiator.receive(parse(f"A{'GWD':<32}0".encode()))
    [end] = initiator.receive(parse(b"M0000192300"))
    assert isinstance(end, GameEnd) and end.stop.value == "1"  # the last game: stop
    assert initiator.hung_up_for_answer()  # told to stop, it stopped: no lost link
    assert initiator.done and initiator.ok and initiator.games_finished == 1
