"""A match game conducted alone: bytes in, actions out, a fake clock; no processes, no sockets.

The test plays both engines: it reads what the conductor sends to each side and answers
with the bytes an engine would send.
"""

from __future__ import annotations

from dxserial.drive.actions import Action, Done, Hangup, News, Say, Send
from dxserial.game.arbiter import ArbiterSettings
from dxserial.game.news import GameOpened, MoveMade
from dxserial.game.pdn import to_pdn
from dxserial.match.engine import Engine
from dxserial.match.machine import GameConductor
from dxserial.match.rules import MatchConfig
from dxserial.protocol.messages import (
    Chat,
    Colour,
    EndReason,
    GameEnd,
    GameRequest,
    Message,
    StopCode,
    parse,
)


def accept(name: str) -> bytes:
    return f"A{name:<32}0".encode()


class Game:
    """A conductor, both engines connected, and what it sent each of them."""

    def __init__(self, **config: object) -> None:
        settings: dict[str, object] = {"games": 1, "moves": 2, "move_timeout": 10.0}
        settings.update(config)
        self.a, self.b = Engine("A"), Engine("B")
        self.conductor = GameConductor(
            1, self.a, self.b, MatchConfig(**settings),  # type: ignore[arg-type]
            white="A", last={"A", "B"},
        )
        self.now = 1000.0
        for side in ("A", "B"):
            assert self.conductor.joined(side, self.now) == []
        self.sent: dict[str, list[bytes]] = {"A": [], "B": []}
        self.actions: list[Action] = []
        self.apply(self.conductor.begin(self.now))

    def apply(self, actions: list[Action]) -> None:
        self.actions += actions
        for action in actions:
            if isinstance(action, Send):
                self.sent[action.side].append(action.raw)

    def take(self, side: str) -> list[Message]:
        """What the conductor sent ``side`` since the last look."""
        out = [parse(raw) for raw in self.sent[side]]
        self.sent[side].clear()
        return out

    def send(self, side: str, raw: bytes, after: float = 0.5) -> None:
        self.now += after
        self.apply(self.conductor.receive(side, raw, self.now))

    def wait(self, seconds: float) -> None:
        """Let time pass, the timer firing at each deadline on the way."""
        until = self.now + seconds
        while (due := self.conductor.next_deadline()) is not None and due <= until:
            self.now = max(self.now, due)
            self.apply(self.conductor.poll(self.now))
        self.now = until

    def said(self) -> list[str]:
        return [a.text for a in self.actions if isinstance(a, Say)]

    def start(self) -> None:
        """Both engines accept."""
        (req_a,), (req_b,) = self.take("A"), self.take("B")
        assert isinstance(req_a, GameRequest) and req_a.follower_colour is Colour.WHITE
        assert isinstance(req_b, GameRequest) and req_b.follower_colour is Colour.BLACK
        self.send("A", accept("Alpha"))
        self.send("B", accept("Beta"))


def test_a_whole_game_is_relayed_byte_for_byte_and_ends_at_the_move_limit() -> None:
    game = Game()
    game.start()
    for side, other, move in (
        ("A", "B", b"M0003312600"), ("B", "A", b"M0001202500"),
        ("A", "B", b"M0000363100"), ("B", "A", b"M0002192400"),
    ):
        game.send(side, move)
        assert game.sent[other] == [move]  # relayed as it came
        game.take(other)
    # The move limit (2 moves) is reached: a draw.  dxserial is to move towards B and
    # tells it so; A, to move, ends the game from its side.
    assert game.take("B") == [GameEnd(reason=EndReason.DRAW, stop=StopCode.STOP)]
    assert game.take("A") == []
    game.send("A", b"E21")
    assert game.take("A") == [GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)]
    assert not game.conductor.over  # B has not answered yet
    game.send("B", b"E01")
    assert game.conductor.over
    assert game.conductor.result is not None
    assert game.conductor.result.result == "1-1"
    assert game.conductor.result.reason == "draw: move limit of 2 moves reached"
    assert game.conductor.plies == 4
    assert game.said() == ["game 1: White Alpha (A) vs Black Beta (B)"]
    news = [a.news for a in game.actions if isinstance(a, News)]
    assert isinstance(news[0], GameOpened) and news[0].white == "Alpha"
    assert [n.pdn for n in news if isinstance(n, MoveMade)] == ["31-26", "20-25", "36-31", "19-24"]
    assert isinstance(game.actions[-1], Done)
    # Both were told stop code 1: both connections are closed.
    assert {a.side for a in game.actions if isinstance(a, Hangup)} == {"A", "B"}
    record = game.conductor.record
    assert record is not None and [m.text for m in record.moves][:2] == ["31-26", "20-25"]
    # The director's clock after each move, kept apart from what the MOVE said (3 s).
    clock = record.clocks[1]
    assert (clock.mover, clock.white, clock.black, clock.reported) == (Colour.WHITE, 299.8, 300, 3)
    text = to_pdn(record)
    assert "1. 31-26 {[%emt 0:00:03]} 20-25 {[%clock W0:05:00 b0:05:00]} 2. 36-31" in text
    assert "clock: 0.20 s, 299.8 s left; engine says 3 s" in to_pdn(record, annotated=True)


def test_the_gamereq_offers_the_time_control_and_the_director_keeps_the_limit() -> None:
    game = Game(moves=2, time_moves=40, minutes=1)  # 1 minute for 40 moves; a draw at move 2
    (req,) = game.take("A")
    assert isinstance(req, GameRequest) and (req.minutes, req.moves) == (1, 40)
    game.take("B")
    game.send("A", accept("Alpha"))
    game.send("B", accept("Beta"))
    for side, move in (("A", b"M0003312600"), ("B", b"M0001202500"),
                       ("A", b"M0000363100"), ("B", b"M0002192400")):
        game.send(side, move)
    assert game.conductor.result is not None
    assert game.conductor.result.reason == "draw: move limit of 2 moves reached"
    by_default = Game(moves=30)  # the GAMEREQ's moves follow the move limit
    (req,) = by_default.take("A")
    assert isinstance(req, GameRequest) and (req.minutes, req.moves) == (5, 30)


def test_an_early_move_waits_for_the_other_engine_to_accept() -> None:
    game = Game()
    game.take("A"), game.take("B")
    game.send("A", accept("Alpha"))
    game.send("A", b"M0000322800")  # before B has accepted
    assert game.sent["B"] == []
    game.send("B", accept("Beta"))
    assert game.take("B") == [parse(b"M0000322800")]


def test_an_illegal_move_loses_is_not_relayed_and_its_sender_is_told_why() -> None:
    game = Game()
    game.start()
    game.send("A", b"M0000322800")
    game.take("B")
    game.send("B", b"M0000010700")  # 1-7: 7 holds a black man
    result = game.conductor.result
    assert result is not None and result.result == "2-0"
    assert result.reason.startswith("Black Beta (B) played an illegal move 1-7: ")
    chat, end = game.take("B")
    assert isinstance(chat, Chat) and chat.text.startswith("referee: illegal move 1-7")
    assert end == GameEnd(reason=EndReason.WIN, stop=StopCode.STOP)  # the absent opponent
    assert game.take("A") == [GameEnd(reason=EndReason.RESIGN, stop=StopCode.STOP)]
    game.send("B", b"E01")
    assert not game.conductor.over
    game.send("A", b"E01")
    assert game.conductor.over


def test_no_move_within_the_move_timeout_forfeits_the_game() -> None:
    game = Game(arbiter=ArbiterSettings(time_control="off"))
    game.start()
    game.send("A", b"M0000322800")
    game.take("B")
    game.wait(9.0)
    assert game.conductor.result is None  # still waiting for Black
    game.wait(1.5)
    result = game.conductor.result
    assert result is not None and result.result == "2-0"
    assert result.reason == "Black Beta (B) forfeits: no move within 10 s"
    assert "engine Beta (B) failed: no move within 10 s" in game.said()
    # The failed engine is hung up; White is told its opponent resigned.
    assert Hangup("B", "no move within 10 s") in game.actions
    assert game.take("A") == [GameEnd(reason=EndReason.RESIGN, stop=StopCode.STOP)]
    game.send("A", b"E01")
    assert game.conductor.over


def test_a_flag_fall_loses_on_time_and_both_engines_are_told() -> None:
    game = Game(arbiter=ArbiterSettings(time_control="5s"), move_timeout=60.0)
    game.start()
    game.send("A", b"M0000322800", after=1.0)
    game.take("B")
    game.wait(4.0)
    assert game.conductor.result is None
    game.wait(2.0)  # 5 s and the 0.3 s margin are gone
    result = game.conductor.result
    assert result is not None and result.result == "2-0"
    assert result.reason.startswith("Black Beta (B) lost on time (5 s for the game")
    (chat_a, end_a), (chat_b,) = game.take("A"), game.take("B")
    assert isinstance(chat_a, Chat) and chat_a.text.startswith("referee: Black Beta (B) lost")
    assert isinstance(chat_b, Chat) and chat_b.text == chat_a.text
    assert end_a == GameEnd(reason=EndReason.RESIGN, stop=StopCode.STOP)  # B is to move


def test_the_clock_starts_where_the_link_delivered_the_move() -> None:
    game = Game(arbiter=ArbiterSettings(time_control="5s"), move_timeout=60.0)
    game.start()
    game.send("A", b"M0000322800", after=1.0)
    (relayed,) = game.sent["B"]
    game.take("B")
    game.now += 2.0  # a slow line: the move reached B 2 s after it was sent
    game.apply(game.conductor.delivered("B", relayed, game.now))
    game.wait(4.0)  # 6 s after the send, 4 s after the delivery: B's flag stands
    assert game.conductor.result is None
    game.send("B", b"M0000192300")
    assert game.take("A") == [parse(b"M0000192300")]


def test_a_gameend_never_answered_is_answered_by_silence_after_the_gameend_timeout() -> None:
    game = Game(gameend_timeout=2.0)
    game.start()
    game.send("A", b"M0000322800")
    game.take("B")
    game.send("B", b"M0000010700")  # illegal: B loses; both are sent GAMEEND
    assert game.take("B")[-1] == GameEnd(reason=EndReason.WIN, stop=StopCode.STOP)
    game.send("A", b"E01")  # A answers
    assert not game.conductor.over  # B does not
    game.wait(2.5)
    assert game.conductor.over  # its silence was the answer
    assert game.b.late_answer and game.b.failure is None
    notes = [a for a in game.actions if getattr(a, "text", "").startswith("engine B: note")]
    assert notes  # the habit is named once


def test_a_gameend_exchange_not_finished_in_time_fails_the_engine() -> None:
    game = Game(gameend_timeout=30.0)
    game.start()
    game.send("A", b"M0000322800")
    game.take("B")
    game.send("B", b"M0000010700")
    game.wait(10.5)  # A (to move) never sends its GAMEEND within the move timeout
    assert game.conductor.over
    assert game.a.failure == "did not finish the GAMEEND exchange in time"
    assert any(isinstance(a, Hangup) and a.side == "A" for a in game.actions)


def test_a_stale_game_at_the_offer_is_closed_and_the_game_offered_again() -> None:
    game = Game()
    game.take("B")
    (request,) = game.take("A")
    game.send("A", b"E00")  # still in a game of a director that crashed
    answer, again = game.take("A")
    assert answer == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    assert again == request
    game.send("A", accept("Alpha"))
    game.send("B", accept("Beta"))
    game.send("A", b"M0000322800")
    assert game.take("B") == [parse(b"M0000322800")]


def test_an_engine_marked_stale_is_asked_to_close_its_old_game_before_the_offer() -> None:
    a, b = Engine("A", stale=True), Engine("B")
    a.joined()
    b.joined()
    conductor = GameConductor(1, a, b, MatchConfig(games=1), white="A")
    actions = conductor.begin(0.0)
    assert [x.raw for x in actions if isinstance(x, Send)] == [b"E00"]
    actions = conductor.receive("B", b"Cwaiting", 0.1)  # kept for the offer
    actions = conductor.receive("A", b"E00", 0.2)
    assert [x.raw[:1] for x in actions if isinstance(x, Send)] == [b"R", b"R"]
    assert not a.stale


def test_a_stop_ends_the_game_unfinished_with_a_short_exchange() -> None:
    game = Game()
    game.start()
    game.send("A", b"M0000322800")
    game.take("B")
    game.apply(game.conductor.stop(game.now))
    result = game.conductor.result
    assert result is not None and result.result == "*" and game.conductor.interrupted
    assert game.take("A") == [GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)]
    game.wait(2.5)  # B (to move) says nothing: the grace is over
    assert game.conductor.over


def test_a_lost_link_during_the_game_forfeits_it() -> None:
    game = Game()
    game.start()
    game.apply(game.conductor.left("A", game.now, "reset by peer"))
    result = game.conductor.result
    assert result is not None and result.result == "0-2"
    assert result.reason == "White Alpha (A) forfeits: link lost: reset by peer"
    assert game.take("B") == [GameEnd(reason=EndReason.RESIGN, stop=StopCode.STOP)]


def test_a_link_lost_before_the_accept_is_said_after_the_games_header() -> None:
    """Issue 38 point 10: the header first, then the engine's failure, then the result."""
    game = Game()
    game.take("A"), game.take("B")
    game.send("A", accept("Alpha"))
    game.apply(game.conductor.left("B", game.now, "the engine stopped answering"))
    said = game.said()
    header = next(i for i, line in enumerate(said) if line.startswith("game 1: White "))
    failed = next(i for i, line in enumerate(said) if line.startswith("engine B failed: "))
    assert header < failed, said
