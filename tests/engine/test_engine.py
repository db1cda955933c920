"""The built-in player, sans I/O: two players wired together in memory under a referee's
eye, and one player driven message by message through each rule it follows."""

from __future__ import annotations

import logging

import pytest
from helpers import FOL, INI, W, Z, wire_texts

from dxserial.draughts import Position
from dxserial.engine.player import (
    MAX_DEPTH,
    MAX_VIOLATIONS,
    BackPolicy,
    GameBegun,
    GameOver,
    NoAnswer,
    Note,
    PeerError,
    Player,
    PlayerConfig,
    PlayerEvent,
)
from dxserial.engine.search import SearchCancelled
from dxserial.errors import ConfigError
from dxserial.game.referee import Policy, Referee
from dxserial.protocol.dxp_moves import to_dxp_move
from dxserial.protocol.messages import (
    BackAccept,
    BackCode,
    Chat,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    Piece,
    StopCode,
    parse,
)
from dxserial.protocol.session import Phase, Role


def m(text: str) -> Message:
    return parse(text.encode("ascii"))


def game_overs(events: list[PlayerEvent]) -> list[GameOver]:
    return [e for e in events if isinstance(e, GameOver)]


def play_out(initiator: Player, follower: Player, limit: int = 5000) -> tuple[Referee, list[str]]:
    """Deliver every message, in order, through a strict referee; return it and the results."""
    referee = Referee(Policy.STRICT)
    players = {INI: initiator, FOL: follower}
    queue = [(INI, msg) for msg in initiator.start()]
    results: list[str] = []
    for _ in range(limit):
        if not queue:
            break
        sender, msg = queue.pop(0)
        received = parse(msg.wire)  # what the wire carries, as the peer would read it
        verdict = referee.observe(received, sender)
        assert verdict.ok, verdict.text
        if verdict.game_ended is not None:
            assert verdict.result is not None
            results.append(verdict.result.result)
        queue += [(sender.other, reply) for reply in players[sender.other].receive(received)]
    assert not queue, "the players were still talking"
    return referee, results


def test_two_players_play_several_games_to_the_end() -> None:
    initiator = Player(PlayerConfig(role=INI, games=3, moves=0, depth=3, seed=1))
    follower = Player(PlayerConfig(role=FOL, depth=1, seed=2))
    referee, results = play_out(initiator, follower)
    assert referee.game == 3
    assert referee.dialogue.phase is Phase.STOPPED
    assert initiator.done and follower.done and initiator.ok
    ours = game_overs(initiator.events())
    theirs = game_overs(follower.events())
    assert [g.number for g in ours] == [1, 2, 3]
    assert [g.result for g in ours] == [g.result for g in theirs] == results
    # Without a move limit every game is decided on the board, and the deeper search wins.
    assert all("has no legal move" in g.reason for g in ours)
    for game in ours:
        won = (game.result == "2-0") == (game.our_colour is W)
        assert won, game
    # The follower's colour alternates: White in game 1 (the default --colour W).
    assert [g.our_colour for g in theirs] == [W, Z, W]


def test_move_limit_ends_games_as_draws_and_the_last_exchange_stops() -> None:
    initiator = Player(PlayerConfig(role=INI, games=2, moves=10, colour=Z, seed=3))
    follower = Player(PlayerConfig(role=FOL, seed=4))
    referee, results = play_out(initiator, follower)
    assert results == ["1-1", "1-1"]
    ours = game_overs(initiator.events())
    assert all(g.plies == 20 and g.reason == "draw: move limit reached" for g in ours)
    last = referee.dialogue.last_result
    assert last is not None and last.stop
    # White is to move at the limit and ends the game: the follower in game 2 (colour Z first).
    assert last.initial == GameEnd(reason=EndReason.DRAW, stop=StopCode.CONTINUE)
    assert last.ended_by is FOL
    assert last.answer.stop is StopCode.STOP


def test_follower_accepts_and_moves_first_as_white() -> None:
    player = Player(PlayerConfig(role=FOL, name="Probe", seed=1))
    out = player.receive(m(f"R01{'Tester':<32}W005075A"))
    assert wire_texts(out)[0] == f"A{'Probe':<32}0"
    assert isinstance(out[1], Move)
    begun = [e for e in player.events() if isinstance(e, GameBegun)]
    assert begun == [GameBegun(1, W, "Tester")]


def test_follower_refuses_another_protocol_version() -> None:
    player = Player(PlayerConfig(role=FOL, name="Probe"))
    out = player.receive(m(f"R02{'Tester':<32}Z005075A"))
    assert wire_texts(out) == [f"A{'Probe':<32}1"]
    assert player.done


def test_follower_resigns_when_it_has_no_legal_move() -> None:
    # Black to move; its only man (square 5, on the edge) is blocked by a white man on 10,
    # which cannot be taken because 14 behind it is occupied too.
    squares = [Piece.EMPTY] * 50
    squares[4] = Piece.BLACK_MAN
    squares[9] = Piece.WHITE_MAN
    squares[13] = Piece.WHITE_MAN
    position = Position.from_dxp(squares, Z)
    assert position.is_lost()
    request = GameRequest(
        name="Tester", follower_colour=Z, minutes=5, moves=75, to_move=Z, position=tuple(squares)
    )
    player = Player(PlayerConfig(role=FOL))
    out = player.receive(parse(request.wire))
    assert [type(x) for x in out] == [GameAccept, GameEnd]
    assert out[1] == GameEnd(reason=EndReason.RESIGN, stop=StopCode.CONTINUE)
    out = player.receive(m("E01"))
    assert out == []
    (over,) = game_overs(player.events())
    assert over.line == "game 1: 2-0 (Black has no legal move)"
    assert player.done


def test_follower_answers_gameend_and_waits_for_the_next_game() -> None:
    player = Player(PlayerConfig(role=FOL))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    assert player.receive(m("M0000322800")) != []
    out = player.receive(m("E10"))
    assert out == [GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)]
    (over,) = game_overs(player.events())
    assert (over.result, over.reason) == ("0-2", "White resigned")
    assert player.session.phase is Phase.IDLE and not player.done


def test_initiator_takes_a_gameend_answer_with_a_reason() -> None:
    """pydraughts answers a GAMEEND with the reason it received, not 0."""
    initiator = Player(PlayerConfig(role=INI, games=1, moves=1, colour=Z))
    initiator.start()
    first = initiator.receive(m(f"A{'Peer':<32}0"))  # we are White: our first move
    assert isinstance(first[0], Move)
    assert initiator.receive(m("M0000192300")) == [
        GameEnd(reason=EndReason.DRAW, stop=StopCode.STOP)
    ]
    assert initiator.receive(m("E21")) == []
    notes = [e for e in initiator.events() if isinstance(e, Note)]
    assert any("taken as the answer" in n.text and n.level == logging.INFO for n in notes)
    assert initiator.done


def test_backreq_accept_goes_back_and_moves_again() -> None:
    player = Player(PlayerConfig(role=FOL, seed=5, backreq=BackPolicy.ACCEPT))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    reply = player.receive(m("M0000322800"))
    assert len(reply) == 1 and isinstance(reply[0], Move)
    out = player.receive(m("B001Z"))  # back to move 1, Black to move: before our reply
    assert out[0] == BackAccept(code=BackCode.ACCEPTED)
    assert isinstance(out[1], Move)  # Black to move again: it plays
    assert player.position is not None and player.position.turn is W
    assert player.session.dialogue.plies == 2


def test_backreq_decline_answers_k1_and_nothing_changes() -> None:
    player = Player(PlayerConfig(role=FOL, seed=5, backreq=BackPolicy.DECLINE))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    player.receive(m("M0000322800"))
    assert player.receive(m("B001W")) == [BackAccept(code=BackCode.NOT_SUPPORTED)]
    assert player.session.dialogue.plies == 2


def test_chat_is_noted_and_duplicates_are_ignored() -> None:
    player = Player(PlayerConfig(role=FOL))
    assert player.receive(m("Chello")) == []
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    player.receive(m("M0000322800"))
    assert player.receive(m("M0000322800")) == []  # a NULMODEM retransmission
    texts = [e.text for e in player.events() if isinstance(e, Note)]
    assert texts[0] == "chat from the initiator: hello"
    assert any(t.startswith("ignored: ") for t in texts)


def test_a_restarted_follower_closes_the_peers_game_and_stays_ready() -> None:
    """A MOVE at a fresh follower: the peer's game is closed, not the follower's session."""
    player = Player(PlayerConfig(role=FOL, name="Probe"))
    chat, end = player.receive(m("M0000322800"))
    assert isinstance(chat, Chat) and "initiator sent MOVE but" in chat.text
    assert len(chat.text) <= 126 and chat.text.isprintable()
    assert end == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    assert player.receive(m("E00")) == []  # the peer's answer: swallowed
    assert not player.done and game_overs(player.events()) == []
    out = player.receive(m(f"R01{'Tester':<32}Z005075A"))
    assert wire_texts(out) == [f"A{'Probe':<32}0"]


def test_an_illegal_move_ends_the_game_and_the_next_one_is_played() -> None:
    player = Player(PlayerConfig(role=FOL, seed=1))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    chat, end = player.receive(m("M0000051000"))  # no White piece on 5
    assert isinstance(chat, Chat) and "illegal move 5-10: no White piece on square 5" in chat.text
    assert end == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    (over,) = game_overs(player.events())
    assert over.result == "*" and over.reason.startswith("abandoned: initiator played illegal")
    assert player.receive(m("E00")) == []
    out = player.receive(m(f"R01{'Tester':<32}W005075A"))
    assert isinstance(out[0], GameAccept) and isinstance(out[1], Move)  # game 2, White
    assert player.games_begun == 2 and player.games_finished == 0


def test_a_new_gamereq_is_taken_instead_of_the_answer() -> None:
    """A restarted initiator does not answer our GAMEEND: it offers a game."""
    player = Player(PlayerConfig(role=FOL, seed=1))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    player.receive(m("M0000322800"))  # we answered with a move: the initiator's turn
    again = m(f"R01{'Tester':<32}W005075A")
    chat, end = player.receive(again)  # out of turn while a game runs: it is ended
    assert isinstance(chat, Chat) and isinstance(end, GameEnd)
    out = player.receive(m(f"R01{'Tester':<32}W005001A"))
    assert isinstance(out[0], GameAccept)


def test_initiator_abandons_on_a_violation_and_offers_its_next_game() -> None:
    player = Player(PlayerConfig(role=INI, games=2, colour=W, seed=1))
    player.start()
    player.receive(m(f"A{'Peer':<32}0"))  # the follower is White, to move
    assert isinstance(player.receive(m("M0000322800"))[0], Move)
    chat, end = player.receive(m(f"R01{'Peer':<32}W005075A"))  # a GAMEREQ to an initiator
    assert isinstance(chat, Chat)
    assert end == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    assert player.receive(m("M0000312700")) == []  # crossed our GAMEEND: ignored
    (request,) = player.receive(m("E00"))
    assert isinstance(request, GameRequest) and request.follower_colour is Z


def test_initiator_abandoning_its_last_game_stops_the_session() -> None:
    player = Player(PlayerConfig(role=INI, games=1, colour=W, seed=1))
    player.start()
    player.receive(m(f"A{'Peer':<32}0"))
    _chat, end = player.receive(m("M0000051000"))  # illegal
    assert end == GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)
    assert player.receive(m("E00")) == []
    assert player.done and player.outcome == "GAMEEND stop code 1 from the initiator"


def test_a_gameend_that_implies_a_game_is_answered_and_the_gamereq_sent_again() -> None:
    player = Player(PlayerConfig(role=INI, games=1))
    (request,) = player.start()
    chat, end, again = player.receive(m("E10"))  # a follower still in an old game
    assert isinstance(chat, Chat)
    assert end == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)  # the answer
    assert again == request  # its game is closed: now it can take ours
    assert player.receive(m(f"A{'Peer':<32}0")) == []  # accepted; the follower is White
    assert player.session.phase is Phase.PLAYING


def test_a_gameacc_to_a_follower_gets_a_chat_only() -> None:
    player = Player(PlayerConfig(role=FOL))
    (chat,) = player.receive(m(f"A{'Peer':<32}0"))
    assert isinstance(chat, Chat) and "GAMEACC" in chat.text


def test_a_peer_that_keeps_violating_is_given_up_on() -> None:
    player = Player(PlayerConfig(role=FOL))
    sent = player.receive(m("M0000322800"))  # 1: answered with CHAT and GAMEEND
    assert len(sent) == 2
    for text in ("M0000312700", "Chello", "M0000332900", "M0000342900"):  # 2..4: ignored
        assert player.receive(m(text)) == []  # (a CHAT is not a legal message in between)
    with pytest.raises(PeerError) as info:
        player.receive(m("M0000352900"))  # 5 in a row
    assert str(info.value).startswith("initiator broke the protocol 5 times in a row, last: ")
    assert isinstance(info.value.farewell, Chat) and len(info.value.farewell.text) <= 126


def test_a_legal_message_resets_the_count_of_violations() -> None:
    player = Player(PlayerConfig(role=FOL, seed=1))
    for game in range(MAX_VIOLATIONS + 1):
        assert len(player.receive(m(f"A{'Peer':<32}{game % 2}"))) == 1  # a CHAT each
        player.receive(m(f"R01{'Tester':<32}Z005075A"))  # accepted: the count starts over
        player.receive(m("E00"))  # the initiator ends the game at once (White to move)
    assert player.games_finished == MAX_VIOLATIONS + 1


def test_invalid_message_in_a_game_ends_it() -> None:
    player = Player(PlayerConfig(role=FOL))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    chat, end = player.invalid("'Mxx': not a move")
    assert isinstance(chat, Chat) and "invalid message" in chat.text
    assert isinstance(end, GameEnd)


def test_a_restarted_follower_and_the_initiator_recover_and_play_on() -> None:
    """Two players in memory; the follower is replaced by a fresh one in the middle of game 1."""
    initiator = Player(PlayerConfig(role=INI, games=2, moves=5, seed=1))
    follower = Player(PlayerConfig(role=FOL, seed=2))
    queue: list[tuple[Role, Message]] = [(INI, msg) for msg in initiator.start()]
    delivered = 0
    while queue:
        sender, msg = queue.pop(0)
        delivered += 1
        assert delivered < 1000, "the players kept talking"
        if delivered == 6:
            follower = Player(PlayerConfig(role=FOL, seed=3))  # restarted: knows no game
        receiver = follower if sender is INI else initiator
        queue += [(sender.other, reply) for reply in receiver.receive(parse(msg.wire))]
    assert initiator.done and follower.done
    ours = game_overs(initiator.events())
    assert [g.number for g in ours] == [1, 2]
    assert ours[0].result == "*"  # game 1 was closed by the restarted follower
    assert ours[1].reason == "draw: move limit reached"  # game 2 was played to its end


def test_seconds_field_is_the_time_used() -> None:
    now = [100.0]

    def clock() -> float:
        now[0] += 3.4  # every look at the clock: 3.4 s later
        return now[0]

    # Depth 1: one pass, so the search itself never looks at this clock.
    player = Player(PlayerConfig(role=FOL, seed=1, depth=1), clock=clock)
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    (reply,) = player.receive(m("M0000322800"))
    assert isinstance(reply, Move) and reply.seconds == 3


def test_a_deep_search_answers_within_its_share_of_the_clock() -> None:
    """5 minutes a game: a move may take 15 s; this clock says a minute passes per look."""
    now = [0.0]

    def clock() -> float:
        now[0] += 60.0
        return now[0]

    player = Player(PlayerConfig(role=FOL, seed=1, depth=MAX_DEPTH), clock=clock)
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    (reply,) = player.receive(m("M0000322800"))
    assert isinstance(reply, Move)
    assert player.position is not None and player.position.turn is W  # it really moved


def test_cancel_stops_the_search_and_leaves_the_move_to_us() -> None:
    player = Player(PlayerConfig(role=FOL, seed=1, depth=MAX_DEPTH))
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    player.cancel()
    with pytest.raises(SearchCancelled):
        player.receive(m("M0000322800"))
    assert player.session.our_turn  # nothing was sent: leaving, it ends the game itself
    assert player.abandon() == [GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)]


def test_initiator_alternates_colours_and_gives_its_moves() -> None:
    player = Player(PlayerConfig(role=INI, games=2, minutes=7, moves=40, colour=Z, name="Ini"))
    (request,) = player.start()
    assert wire_texts([request]) == [f"R01{'Ini':<32}Z007040A"]
    player.receive(m(f"A{'Peer':<32}0"))
    position = player.position
    assert position is not None and position.turn is Z  # we played White's first move
    reply = to_dxp_move(position.legal_moves()[0])
    player.receive(reply)
    out = player.receive(m("E10"))  # the follower ends game 1: ours says go on
    assert out[0] == GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    assert isinstance(out[1], GameRequest) and out[1].follower_colour is W


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"name": ""}, "name"),
        ({"name": "x" * 33}, "name"),
        ({"name": " lead"}, "blank"),
        ({"depth": 0}, "depth"),
        ({"depth": 11}, "depth 11: must be 1..10"),
        ({"games": 0}, "games"),
        ({"moves": 1000}, "moves"),
    ],
)
def test_bad_config(kwargs: dict[str, object], text: str) -> None:
    with pytest.raises(ConfigError, match=text):
        PlayerConfig(role=FOL, **kwargs)  # type: ignore[arg-type]


def test_refused_game_ends_the_initiator() -> None:
    player = Player(PlayerConfig(role=INI, games=2))
    player.start()
    assert player.receive(m(f"A{'Peer':<32}3")) == []
    assert player.done and not player.ok
    assert player.session.phase is Phase.STOPPED
    assert player.outcome is not None and "code 3" in player.outcome


def test_initiator_offers_the_next_game_after_a_refusal() -> None:
    player = Player(PlayerConfig(role=INI, games=2, colour=W))
    player.start()
    (again,) = player.receive(m(f"A{'Peer':<32}2"))  # not this game: the next one comes
    assert isinstance(again, GameRequest) and again.follower_colour is Z
    assert player.receive(m(f"A{'Peer':<32}2")) == []
    assert player.done and not player.ok
    assert player.outcome == "the follower refused game 2; no games are left"


def test_unanswered_gamereq_is_reported_once_per_timeout() -> None:
    now = [100.0]
    player = Player(PlayerConfig(role=INI, answer_timeout=10), clock=lambda: now[0])
    (request,) = player.start()
    assert player.deadline() == 110.0
    assert player.poll(109.9, repeat=True) == [] and player.events() == []
    # NUL link: reported and sent again ...
    assert player.poll(110.0, repeat=True) == [request]
    assert player.events() == [NoAnswer(10, repeated=True)]
    # ... then not again before another timeout has passed, however often it is polled.
    assert player.poll(115.0, repeat=True) == [] and player.events() == []
    # NULMODEM (the link repeats its own frames): reported, nothing sent.
    assert player.poll(120.0) == []
    assert player.events() == [NoAnswer(10, repeated=False)]
    player.receive(m(f"A{'Peer':<32}0"))
    assert player.deadline() is None  # answered: nothing more to wait for


def test_a_follower_ignores_the_repeat_of_a_gamereq_it_answered() -> None:
    initiator = Player(PlayerConfig(role=INI, colour=Z, seed=1))
    follower = Player(PlayerConfig(role=FOL, seed=2))
    (request,) = initiator.start()
    (accept,) = follower.receive(request)
    assert isinstance(accept, GameAccept)
    (repeat,) = initiator.poll(initiator.now() + 10, repeat=True)  # the answer is late
    assert follower.receive(repeat) == []
    assert any("ignored: " in e.text for e in follower.events() if isinstance(e, Note))
    first = initiator.receive(accept)  # the late GAMEACC: the game goes on as if nothing was
    assert isinstance(first[0], Move)
    assert isinstance(follower.receive(first[0])[0], Move)


def test_only_an_initiator_waiting_for_gameacc_has_a_deadline() -> None:
    assert Player(PlayerConfig(role=FOL)).deadline() is None
    with pytest.raises(ConfigError, match="answer timeout"):
        PlayerConfig(role=INI, answer_timeout=0)


def test_current_game_is_known_while_it_is_played_only() -> None:
    player = Player(PlayerConfig(role=FOL, seed=1))
    assert player.current_game is None
    player.receive(m(f"R01{'Tester':<32}Z005075A"))
    assert player.current_game == 1
    player.receive(m("E00"))
    assert player.current_game is None and player.games_finished == 1
