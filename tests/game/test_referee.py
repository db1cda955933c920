"""The referee: a real game passes, each kind of violation is caught and named, results."""

from __future__ import annotations

import pytest
from helpers import FOL, INI, W, Z, end, move, request, wire
from hypothesis import given, settings
from hypothesis import strategies as st

from dxserial.draughts import START_FEN, Position, Rejection
from dxserial.game.referee import (
    Policy,
    Referee,
    Verdict,
    ViolationKind,
    chat_for,
    false_claim_scored,
)
from dxserial.protocol.dxp_moves import to_dxp_move
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    Message,
    Move,
    encode,
    parse,
)
from dxserial.protocol.session import GameStarted, MovePlayed, Phase, Role

ACCEPT = wire(GameAccept(name="Follower", code=AcceptCode.ACCEPT))


def started(fen: str | None = None, *, follower: Colour = Z, **kw: object) -> Referee:
    """A referee that saw a GAMEREQ (normal start or ``fen``) and its acceptance."""
    policy = kw.pop("policy", Policy.WARN)
    assert isinstance(policy, Policy)
    referee = Referee(policy)
    moves = kw.pop("moves", 0)
    assert isinstance(moves, int)
    assert referee.observe(request(fen, follower=follower, moves=moves), INI).ok
    verdict = referee.observe(ACCEPT, FOL)
    assert verdict.ok
    assert any(isinstance(e, GameStarted) for e in verdict.events)
    return referee


def play_all(referee: Referee, moves: list[tuple[Role, Move]]) -> list[Verdict]:
    return [referee.observe(m, who) for who, m in moves]


# --------------------------------------------------------------------------- the real game


def test_scan_game_has_no_violation(scan_game: list[dict[str, str]]) -> None:
    referee = Referee()
    verdicts = [
        referee.observe(parse(item["message"].encode("ascii")), Role(item["from"]))
        for item in scan_game
    ]
    bad = [v.text for v in verdicts if not v.ok]
    assert bad == []
    assert all(v.checked for v in verdicts)
    results = [v.result for v in verdicts if v.game_ended is not None]
    assert len(results) == 1 and results[0] is not None
    assert results[0].result == "1-1"
    assert "draw" in results[0].reason
    assert referee.game == 2  # the second game started (and was cut off)
    plies = [v.ply for v in verdicts if isinstance(v.message, Move)]
    assert plies[:150] == list(range(1, 151))
    # In the second game the follower has White and moves first.
    second = [v for v in verdicts[-2:]]
    assert [v.colour for v in second] == [W, Z]
    assert second[0].who == "follower (White)"
    assert referee.dialogue.phase is Phase.PLAYING
    # 75 moves each: the move limit is reached, not passed.  At ply 120 Black has a king and
    # a man against White's lone king: 5 more moves each and the 5-move rule ends the game
    # (Scan plays on and claims the draw at the move limit: borne out).
    noted = [(v.ply, v.notes) for v in verdicts if v.notes]
    assert [ply for ply, _ in noted] == [130]
    assert noted[0][1][0].startswith("game over: draw by the 5-move rule (FMJD Annex 1, art. 6)")
    assert results[0].reason == "draw claimed by White (initiator), borne out: 5-move rule"


def test_every_move_gives_pdn_and_position_before(scan_game: list[dict[str, str]]) -> None:
    referee = Referee()
    previous = None
    for item in scan_game[:12]:
        verdict = referee.observe(parse(item["message"].encode("ascii")), Role(item["from"]))
        if isinstance(verdict.message, Move):
            assert verdict.fen_before == (previous or Position.start()).to_fen()
            assert verdict.pdn and verdict.move is not None
            previous = referee.position
    assert referee.position is not None and previous == referee.position


# --------------------------------------------------------------------------- violations


@pytest.mark.parametrize("policy", [Policy.WARN, Policy.STRICT])
def test_illegal_move_is_named(policy: Policy) -> None:
    referee = started(policy=policy)
    verdict = referee.observe(move(18, 23), INI)
    assert not verdict.ok
    assert verdict.kind is ViolationKind.ILLEGAL_MOVE
    assert verdict.reason is Rejection.NO_PIECE
    assert verdict.fen_before == Position.start().to_fen()
    assert verdict.text.startswith("initiator (White) played 18-23: illegal move: no White piece")
    assert verdict.text.endswith(f"(position {Position.start().to_fen()})")
    assert verdict.problem.startswith("illegal move 18-23: no White piece on square 18")
    chat = chat_for(verdict)
    assert isinstance(chat, Chat) and chat.text.startswith("referee: illegal move 18-23")
    assert 1 <= len(chat.text) <= 126
    parse(encode(chat))  # a valid CHAT on the wire


def test_strict_illegal_move_changes_nothing() -> None:
    referee = started(policy=Policy.STRICT)
    verdict = referee.observe(move(18, 23), INI)
    assert not verdict.applied and verdict.events == ()
    assert referee.dialogue.plies == 0 and referee.dialogue.turn_role() is INI
    assert referee.position == Position.start()
    # The same side may now play a legal move, judged from the same position.
    assert referee.observe(move(32, 28), INI).ok
    assert referee.dialogue.plies == 1


def test_quiet_move_when_capture_is_compulsory() -> None:
    referee = started("W:W28,32:B23,1", policy=Policy.STRICT)
    verdict = referee.observe(move(32, 27), INI)
    assert verdict.kind is ViolationKind.ILLEGAL_MOVE
    assert verdict.reason is Rejection.CAPTURE_COMPULSORY
    assert "a capture of 1 piece is compulsory" in verdict.text
    assert referee.observe(move(28, 19, 23), INI).ok


def test_too_few_captured_is_named() -> None:
    referee = started("W:W15:B8,19,20,1")
    verdict = referee.observe(move(15, 24, 20), INI)
    assert verdict.reason is Rejection.TOO_FEW_CAPTURED


def test_move_out_of_turn() -> None:
    referee = started()
    verdict = referee.observe(move(19, 23), FOL)
    assert verdict.kind is ViolationKind.OUT_OF_TURN
    assert not verdict.applied
    assert verdict.text.startswith("follower (Black) sent MOVE 19-23 out of turn: ")
    assert "initiator's turn (White to move)" in verdict.text
    assert chat_for(verdict).text.startswith("referee: MOVE 19-23 out of turn")
    assert referee.dialogue.plies == 0 and referee.position == Position.start()


def test_move_before_any_game() -> None:
    referee = Referee()
    verdict = referee.observe(move(32, 28), INI)
    assert verdict.kind is ViolationKind.OUT_OF_TURN
    assert verdict.who == "initiator" and verdict.fen_before is None
    assert "no game is running" in verdict.text


def test_duplicate_move() -> None:
    referee = started()
    assert referee.observe(move(32, 28), INI).ok
    verdict = referee.observe(move(32, 28), INI)
    assert verdict.kind is ViolationKind.DUPLICATE
    assert not verdict.applied
    assert "duplicate" in verdict.text
    assert referee.dialogue.plies == 1
    assert referee.observe(move(19, 23), FOL).ok


def test_form_b_start_with_black_to_move() -> None:
    fen = "B:W28,32,33:B12,18,19"
    referee = started(fen, follower=W)  # the initiator plays Black and moves first
    assert referee.position == Position.from_fen(fen)
    first = referee.observe(move(19, 23), INI)
    assert first.ok and first.colour is Z and first.who == "initiator (Black)"
    played = next(e for e in first.events if isinstance(e, MovePlayed))
    assert (played.ply, played.move_number) == (1, 1)
    assert referee.position is not None and referee.position.turn is W
    reply = referee.observe(move(28, 19, 23), FOL)  # compulsory capture
    assert reply.ok and reply.colour is W
    played = next(e for e in reply.events if isinstance(e, MovePlayed))
    assert played.move_number == 2


def test_take_back_restores_the_earlier_position() -> None:
    referee = started(policy=Policy.STRICT)
    line = [(INI, move(32, 28)), (FOL, move(19, 23)), (INI, move(28, 19, 23)), (FOL, move(14, 23, 19))]
    positions = [referee.position]
    for who, m in line:
        assert referee.observe(m, who).ok
        positions.append(referee.position)
    # Back to move 2 with White to move: the position after two plies.
    assert referee.observe(wire(BackRequest(move=2, to_move=W)), FOL).ok
    verdict = referee.observe(wire(BackAccept(code=BackCode.ACCEPTED)), INI)
    assert verdict.ok and any("take-back to move 2" in n for n in verdict.notes)
    assert referee.position == positions[2]
    assert referee.dialogue.plies == 2
    # Moves are judged from the restored position.
    assert referee.observe(move(28, 22), INI).kind is ViolationKind.ILLEGAL_MOVE
    assert referee.observe(move(28, 19, 23), INI).ok


def test_refused_take_back_changes_nothing() -> None:
    referee = started()
    assert referee.observe(move(32, 28), INI).ok
    assert referee.observe(wire(BackRequest(move=1, to_move=W)), INI).ok
    assert referee.observe(wire(BackAccept(code=BackCode.NOT_SUPPORTED)), FOL).ok
    assert referee.dialogue.plies == 1
    assert referee.observe(move(19, 23), FOL).ok


# --------------------------------------------------------------------------- warn policy


def test_warn_illegal_move_makes_the_record_unreliable() -> None:
    referee = started(policy=Policy.WARN)
    assert referee.observe(move(32, 28), INI).ok
    bad = referee.observe(move(19, 25), FOL)  # 19 and 25 are not neighbours
    assert bad.kind is ViolationKind.ILLEGAL_MOVE and bad.applied
    assert any("record unreliable from ply 2" in n for n in bad.notes)
    assert referee.unreliable_from == 2 and referee.dialogue.plies == 2
    later = referee.observe(move(28, 23), INI)  # judged for turn only
    assert later.ok and not later.checked and later.fen_before is None
    out_of_turn = referee.observe(move(19, 24), INI)
    assert out_of_turn.kind is ViolationKind.OUT_OF_TURN  # the dialogue is still judged
    # Take back to before the illegal move: judged on the board again.
    assert referee.observe(wire(BackRequest(move=1, to_move=Z)), FOL).ok
    back = referee.observe(wire(BackAccept(code=BackCode.ACCEPTED)), INI)
    assert "record reliable again" in back.notes
    assert referee.unreliable_from is None
    assert referee.position == Position.start().play(
        next(m for m in Position.start().legal_moves() if m.key == (32, 28, frozenset()))
    )
    assert referee.observe(move(19, 23), FOL).ok


def test_warn_unreliable_game_ending_without_reason_is_unfinished() -> None:
    referee = started(policy=Policy.WARN)
    referee.observe(move(18, 23), INI)
    assert referee.observe(end("0"), FOL).ok
    final = referee.observe(end("0"), INI)
    assert final.result is not None and final.result.result == "*"
    assert "unknown" in final.result.reason


# --------------------------------------------------------------------------- results


@pytest.mark.parametrize(
    ("reason", "result"), [("1", "0-2"), ("2", "1-1"), ("3", "2-0")]
)
def test_results_from_reason_codes(reason: str, result: str) -> None:
    referee = started()  # the initiator plays White and is to move
    assert referee.observe(end(reason), INI).ok
    verdict = referee.observe(end("0"), FOL)
    assert verdict.ok and verdict.game_ended is not None
    assert verdict.result is not None and verdict.result.result == result
    assert referee.dialogue.phase is Phase.IDLE


def test_resign_by_black() -> None:
    referee = started()
    assert referee.observe(move(32, 28), INI).ok
    assert referee.observe(end("1"), FOL).ok
    verdict = referee.observe(end("0"), INI)
    assert verdict.result is not None and verdict.result.result == "2-0"
    assert verdict.result.reason == "Black (follower) resigned"


def test_reason_zero_in_open_position_is_unfinished() -> None:
    referee = started()
    referee.observe(end("0", "1"), INI)
    verdict = referee.observe(end("0"), FOL)
    assert verdict.result is not None and verdict.result.result == "*"
    assert referee.dialogue.phase is Phase.STOPPED


def test_game_over_when_side_to_move_has_no_legal_move() -> None:
    referee = started("W:W28:B23", policy=Policy.STRICT)
    last = referee.observe(move(28, 19, 23), INI)
    assert last.ok
    assert last.result is not None and last.result.result == "2-0"
    assert "game over: Black has no legal move" in last.notes
    assert referee.decided == last.result
    # Black (to move) has no move: any MOVE is illegal; it may end the game.
    assert referee.observe(move(23, 28), FOL).kind is ViolationKind.ILLEGAL_MOVE
    assert referee.observe(end("0"), FOL).ok
    verdict = referee.observe(end("0"), INI)
    assert verdict.result is not None and verdict.result.result == "2-0"
    assert verdict.result.reason == "Black has no legal move"


def test_game_over_at_the_start() -> None:
    referee = Referee()
    referee.observe(request("B:W28,32:B"), INI)  # Black to move without a piece
    verdict = referee.observe(ACCEPT, FOL)
    assert verdict.result is not None and verdict.result.result == "2-0"
    assert "game over: Black has no legal move" in verdict.notes


def test_move_limit_is_reported_once() -> None:
    referee = started(moves=1)
    notes = [
        v.notes
        for v in play_all(
            referee,
            [(INI, move(32, 28)), (FOL, move(19, 23)), (INI, move(28, 19, 23)), (FOL, move(14, 23, 19))],
        )
    ]
    assert notes[0] == () and notes[1] == ()
    assert len(notes[2]) == 1 and "move limit exceeded: move 2" in notes[2][0]
    assert notes[3] == ()


# --------------------------------------------------------------------------- robustness


def test_not_a_message_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        Referee().observe("M0000322800", INI)  # type: ignore[arg-type]


def test_chat_for_needs_a_violation_and_stays_short() -> None:
    referee = started()
    ok = referee.observe(move(32, 28), INI)
    with pytest.raises(ValueError):
        chat_for(ok)
    long_problem = Verdict(
        message=ok.message, sender=INI, who="x", text="x",
        kind=ViolationKind.ILLEGAL_MOVE, problem="y" * 300,
    )
    assert len(chat_for(long_problem).text) == 126


_START_MOVES = [to_dxp_move(m) for m in Position.start().legal_moves()]
_ANY = st.one_of(
    st.sampled_from(
        [request(), request(START_FEN, follower=W), ACCEPT, end("0"), end("1"), end("2", "1"),
         wire(BackRequest(move=1, to_move=W)), wire(BackAccept(code=BackCode.ACCEPTED)),
         wire(GameAccept(name="F", code=AcceptCode.REFUSE_THIS_GAME)), wire(Chat(text="hi"))]
    ),
    st.sampled_from(_START_MOVES).map(wire),
    st.builds(
        lambda f, t: move(f, t), st.integers(1, 50), st.integers(1, 50)
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_ANY, st.sampled_from([INI, FOL])), max_size=30),
    st.sampled_from(list(Policy)),
)
def test_referee_never_raises_for_peer_messages(
    stream: list[tuple[Message, Role]], policy: Policy
) -> None:
    referee = Referee(policy)
    for msg, sender in stream:
        verdict = referee.observe(msg, sender)
        assert verdict.ok or verdict.problem
        if not verdict.ok:
            assert len(chat_for(verdict).text) <= 126


# --------------------------------------------------------------------------- draw rules, claims


def test_a_draw_rule_decides_the_game_and_a_reason_zero_gameend_gets_it() -> None:
    referee = started("W:WK46,K47:BK3")
    line = [(46, 41), (3, 8), (41, 36), (8, 2), (36, 31), (2, 7), (31, 26), (7, 1), (26, 21)]
    for i, (a, b) in enumerate(line):
        verdict = referee.observe(move(a, b), INI if i % 2 == 0 else FOL)
        assert verdict.ok and verdict.result is None
    verdict = referee.observe(move(1, 6), FOL)
    assert verdict.result is not None and verdict.result.result == "1-1"
    assert verdict.result.rule == "5-move rule"
    assert verdict.notes[0].startswith("game over: draw by the 5-move rule")
    assert referee.decided == verdict.result
    referee.observe(end("0"), INI)
    ended = referee.observe(end("0"), FOL)
    assert ended.result == verdict.result


def test_draw_rules_off_leave_the_game_running() -> None:
    referee = Referee(draw_rules=False)
    referee.observe(request("W:WK46,K47:BK3"), INI)
    referee.observe(ACCEPT, FOL)
    line = [(46, 41), (3, 8), (41, 36), (8, 2), (36, 31), (2, 7), (31, 26), (7, 1), (26, 21), (1, 6)]
    verdicts = [referee.observe(move(a, b), INI if i % 2 == 0 else FOL) for i, (a, b) in enumerate(line)]
    assert all(v.result is None for v in verdicts) and referee.decided is None
    # ...but a claim is still checked against them.
    claim = referee.claim_result(EndReason.DRAW, W, "White")
    assert claim is not None and not claim.false_claim and "5-move rule" in claim.reason


def test_take_back_undoes_a_draw_count() -> None:
    referee = started("W:WK46,16,26:BK4,25,35")
    for i, (a, b) in enumerate([(46, 41), (4, 9), (41, 46), (9, 4), (46, 41), (4, 9)]):
        referee.observe(move(a, b), INI if i % 2 == 0 else FOL)
    referee.observe(wire(BackRequest(move=1, to_move=W)), INI)
    referee.observe(wire(BackAccept(code=BackCode.ACCEPTED)), FOL)
    # Back at the start (seen once again now: the take-back returns to it, no new count).
    for i, (a, b) in enumerate([(46, 41), (4, 9), (41, 46), (9, 4)]):
        verdict = referee.observe(move(a, b), INI if i % 2 == 0 else FOL)
    assert verdict.result is None  # twice, not three times, since the take-back


@pytest.mark.parametrize(
    ("fen", "reason", "false"),
    [
        ("W:WK46,K47:BK3", "2", True),  # no count has run out, no move makes one
        ("W:WK1,50:B45", "3", False),  # Black's man on 45 is blocked by 50: no move
        ("W:W31-50:B1-20", "3", True),  # the start: Black can move
    ],
)
def test_claims_are_checked_on_the_position(fen: str, reason: str, false: bool) -> None:
    referee = started(fen)
    referee.observe(end(reason), INI)
    verdict = referee.observe(end("0"), FOL)
    result = verdict.result
    assert result is not None and result.false_claim is false
    assert ("false claim" in result.reason) is false


def test_a_false_claim_scores_as_the_setting_says() -> None:
    referee = started()  # the start: White to move claims the win
    claim = referee.claim_result(EndReason.WIN, W, "White A")
    assert claim is not None and claim.false_claim and claim.result == "2-0"
    assert false_claim_scored(claim, W, "as-claimed") == claim
    lost = false_claim_scored(claim, W, "loss")
    assert lost.result == "0-2" and lost.false_claim
    assert lost.reason == "White A claimed the win, false claim: Black can still move; scored as a loss"
    founded = referee.claim_result(EndReason.RESIGN, W, "White A")
    assert founded is not None and false_claim_scored(founded, W, "loss") == founded


def test_a_claim_with_no_game_is_not_checked_and_says_why() -> None:
    claim = Referee().claim_result(EndReason.DRAW, Colour.WHITE, "White (A)")
    assert claim is not None and not claim.false_claim
    assert claim.reason == "draw claimed by White (A), not checked: the position is unknown (no game)"
