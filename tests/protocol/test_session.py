"""The DXP dialogue rules: a real Scan-vs-Scan game, one test per violated rule, fuzzing."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, TypeVar

import pytest
from helpers import FOL, INI, W, Z
from hypothesis import given, settings
from hypothesis import strategies as st

from dxserial.errors import DialogueError, DuplicateMessageError
from dxserial.protocol.messages import (
    AcceptCode,
    BackCode,
    GameEnd,
    GameRequest,
    Message,
    Move,
    parse,
)
from dxserial.protocol.session import (
    Dialogue,
    GameEnded,
    GameRefused,
    GameStarted,
    HabitSeen,
    MovePlayed,
    Phase,
    Role,
    Session,
    SessionStopped,
    TakeBack,
    TakeBackRefused,
)

T = TypeVar("T", bound=Message)
START = "z" * 20 + "e" * 10 + "w" * 20


def msg(text: str) -> Message:
    return parse(text.encode("ascii"))


def typed(text: str, cls: type[T]) -> T:
    m = msg(text)
    assert isinstance(m, cls)
    return m


def req(follower: str = "Z", to_move: str | None = None) -> GameRequest:
    """A GAMEREQ: form A, or form B (start position) with ``to_move`` to play first."""
    head = f"R01{'Tester':<32}{follower}005000"
    return typed(head + ("A" if to_move is None else f"B{to_move}{START}"), GameRequest)


ACC = {code: msg(f"A{'Follower':<32}{code}") for code in "0123"}
M1, M2, M3, M4 = (
    typed(t, Move) for t in ("M0000342900", "M0000202400", "M0000322800", "M0000192300")
)
E20, E00 = typed("E20", GameEnd), typed("E00", GameEnd)


def snapshot(d: Dialogue) -> tuple[Any, ...]:
    """Every public fact of a dialogue, to check that a violation changed nothing."""
    return (
        d.phase,
        d.to_move,
        d.turn_role(),
        d.initiator_colour,
        d.follower_colour,
        d.game_request,
        d.move_number,
        d.plies,
        d.games_started,
        d.last_result,
        d.pending,
        d.awaiting,
        d.stop_reason,
    )


def play(d: Dialogue, *steps: tuple[Role, Message]) -> list[Any]:
    events: list[Any] = []
    for sender, m in steps:
        events += d.handle(m, sender)
    return events


def started(follower: str = "Z", to_move: str | None = None) -> Dialogue:
    """A dialogue with a game just accepted (initiator White unless told otherwise)."""
    d = Dialogue()
    play(d, (INI, req(follower, to_move)), (FOL, ACC["0"]))
    return d


def violation(d: Dialogue, m: Message, sender: Role, word: str) -> DialogueError:
    """Assert that ``m`` from ``sender`` is refused, blamed on ``sender``, state untouched."""
    before = snapshot(d)
    with pytest.raises(DialogueError) as info:
        d.handle(m, sender)
    assert info.value.side == sender.value
    assert word in str(info.value)
    assert snapshot(d) == before
    return info.value


# --------------------------------------------------------------------------- a real game


@pytest.fixture(scope="module")
def scan_lines() -> list[tuple[Role, Message]]:
    spec = Path(__file__).resolve().parent.parent / "data"
    lines = (spec / "scan-vs-scan-game.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [(Role(r["from"]), parse(r["message"].encode("ascii"))) for r in records]


def test_scan_game_passes_every_view(scan_lines: list[tuple[Role, Message]]) -> None:
    assert len(scan_lines) == 159
    observer, ini, fol = Dialogue(), Session(INI), Session(FOL)
    events: list[Any] = []
    for sender, m in scan_lines:
        events += observer.handle(m, sender)
        (ini.send if sender is INI else ini.receive)(m)
        (fol.send if sender is FOL else fol.receive)(m)
    for view in (ini.dialogue, fol.dialogue):
        assert snapshot(view) == snapshot(observer)

    result = observer.last_result
    assert result is not None
    assert (result.initial.wire, result.answer.wire, result.stop) == (b"E20", b"E00", False)
    assert (result.ended_by, result.colour, result.plies) == (INI, W, 150)
    assert [e for e in events if isinstance(e, GameEnded)] == [result]

    assert observer.games_started == 2
    assert observer.phase is Phase.PLAYING
    request = observer.game_request
    assert request is not None and request.follower_colour is W
    assert (observer.initiator_colour, observer.follower_colour) == (Z, W)
    assert observer.plies == 2 and observer.move_number == 2 and observer.to_move is W
    assert ini.our_colour is Z and fol.our_turn and not ini.our_turn

    moves = [e for e in events if isinstance(e, MovePlayed)]
    assert len(moves) == 152
    assert moves[149].ply == 150 and moves[149].move_number == 75 and moves[149].colour is Z
    assert moves[150].colour is W and moves[150].ply == 1


# --------------------------------------------------------------------------- each rule


def test_violation_text_names_side_rule_and_turn() -> None:
    d = started()
    err = violation(d, M1, FOL, "turn")
    assert err.args[0] == "follower sent MOVE but it is the initiator's turn (White to move)"


def test_moves_alternate_and_are_counted() -> None:
    d = started()
    events = play(d, (INI, M1), (FOL, M2), (INI, M3))
    assert events[-1] == MovePlayed(M3, W, 3, 2)
    assert (d.plies, d.move_number, d.to_move, d.turn_role()) == (3, 2, Z, FOL)
    violation(d, M4, INI, "follower's turn (Black to move)")
    d.handle(M4, FOL)


def test_move_before_game() -> None:
    d = Dialogue()
    violation(d, M1, INI, "no game is running")
    d.handle(req(), INI)
    violation(d, M1, INI, "GAMEACC")


def test_gamereq_from_follower() -> None:
    violation(Dialogue(), req(), FOL, "only the initiator")


def test_gameacc_without_gamereq() -> None:
    violation(Dialogue(), ACC["0"], FOL, "no GAMEREQ to answer")
    violation(started(), ACC["0"], FOL, "no GAMEREQ to answer")


def test_gameacc_from_initiator() -> None:
    d = Dialogue()
    d.handle(req(), INI)
    violation(d, ACC["0"], INI, "only the follower")


def test_second_gamereq_while_game_runs_or_pending() -> None:
    violation(started(), req("W"), INI, "game is running")
    d = Dialogue()
    d.handle(req(), INI)
    violation(d, req("W"), INI, "still waits")


def test_gameend_only_from_side_to_move() -> None:
    d = started()
    violation(d, msg("E00"), FOL, "initiator's turn")
    d.handle(M1, INI)
    violation(d, msg("E10"), INI, "follower's turn")
    assert d.handle(msg("E10"), FOL) == []
    assert d.phase is Phase.ENDING and d.awaiting is INI


def test_gameend_answer_with_the_reason_it_answers_is_the_answer_named_as_a_habit() -> None:
    d = started()
    d.handle(msg("E20"), INI)
    events = d.handle(msg("E20"), FOL)  # GWD, pydraughts: the reason echoed
    assert events == [
        HabitSeen("gameend-reason-echo", FOL), GameEnded(E20, msg("E20"), False, INI, W, 0)
    ]
    assert d.phase is Phase.IDLE


def test_the_initiator_s_next_gamereq_answers_an_unanswered_gameend() -> None:
    d = started()
    d.handle(M1, INI)
    d.handle(msg("E10"), FOL)  # Black resigns; GWD as initiator never answers
    events = d.handle(req("W"), INI)
    assert events[0] == HabitSeen("gameend-unanswered", INI)
    assert isinstance(events[1], GameEnded) and events[1].ended_by is FOL
    assert d.phase is Phase.REQUESTED and d.awaiting is FOL
    d2 = started()
    d2.handle(msg("E01"), INI)  # stop code 1: no next game, the answer is owed
    violation(d2, req("W"), INI, "stop code 1")


def test_a_forwarded_violation_is_followed_not_carried_on() -> None:
    d = started()
    d.handle(M1, INI)
    d.handle(msg("E10"), FOL)
    violation(d, msg("M0000312600"), INI, "game is ending")
    assert d.follow(msg("M0000312600"), INI) == []  # nothing a receiver can act on
    assert d.phase is Phase.ENDING
    d2 = started()
    violation(d2, msg("E00"), FOL, "initiator's turn")
    assert d2.follow(msg("E00"), FOL) == []
    assert d2.phase is Phase.ENDING and d2.awaiting is INI  # the receiver will answer it
    d3 = started()
    events = d3.follow(req("W"), INI)  # a GAMEREQ that was delivered mid-game
    assert [type(e).__name__ for e in events] == ["GameAbandoned"]
    assert d3.phase is Phase.REQUESTED
    assert d3.handle(msg(f"A{'x'.ljust(32)}0"), FOL)  # the next game starts cleanly


def test_gameend_answer_comes_from_the_other_side() -> None:
    d = started()
    d.handle(msg("E20"), INI)
    violation(d, msg("E00"), INI, "follower must answer")
    violation(d, M1, INI, "game is ending")
    assert d.handle(msg("E00"), FOL) == [GameEnded(E20, E00, False, INI, W, 0)]
    assert d.phase is Phase.IDLE and d.to_move is None
    violation(d, msg("E00"), FOL, "no game")  # answered already: nothing more to answer
    d.handle(req("W"), INI)  # the initiator may start the next game


@pytest.mark.parametrize(("first", "answer"), [("E01", "E00"), ("E00", "E01"), ("E31", "E01")])
def test_only_chat_after_stop_code_1(first: str, answer: str) -> None:
    d = started()
    d.handle(msg(first), INI)
    events = d.handle(msg(answer), FOL)
    assert isinstance(events[0], GameEnded) and events[0].stop
    assert isinstance(events[1], SessionStopped)
    assert d.phase is Phase.STOPPED
    for sender, m in [
        (INI, req()),
        (FOL, ACC["0"]),
        (INI, M1),
        (FOL, msg("E00")),
        (INI, msg("B001W")),
    ]:
        violation(d, m, sender, "stopped")
    violation(d, msg("K0"), FOL, "only CHAT")
    assert d.handle(msg("Cbye"), FOL) == [] and d.handle(msg("Cbye"), INI) == []


@pytest.mark.parametrize("code", ["1", "3"])
def test_gameacc_1_or_3_stops_the_session(code: str) -> None:
    d = Dialogue()
    d.handle(req(), INI)
    events = d.handle(ACC[code], FOL)
    assert events[0] == GameRefused(req(), AcceptCode(code))
    assert isinstance(events[1], SessionStopped) and f"code {code}" in events[1].reason
    assert d.phase is Phase.STOPPED and d.games_started == 0
    violation(d, req(), INI, "stopped")
    d.handle(msg("Cstill talking"), INI)


def test_gameacc_2_allows_another_gamereq() -> None:
    d = Dialogue()
    d.handle(req(), INI)
    assert d.handle(ACC["2"], FOL) == [GameRefused(req(), AcceptCode.REFUSE_THIS_GAME)]
    assert d.phase is Phase.IDLE
    violation(d, M1, INI, "no game")
    events = play(d, (INI, req("W")), (FOL, ACC["0"]))
    assert isinstance(events[0], GameStarted)
    assert d.turn_role() is FOL and d.games_started == 1


def test_backreq_outside_a_game() -> None:
    violation(Dialogue(), msg("B001W"), INI, "no game")
    d = Dialogue()
    d.handle(req(), INI)
    violation(d, msg("B001W"), FOL, "GAMEACC")
    d = started()
    d.handle(msg("E00"), INI)
    violation(d, msg("B001W"), INI, "follower must answer")  # the GAMEEND sender itself


def test_backacc_without_backreq() -> None:
    violation(started(), msg("K0"), FOL, "no BACKREQ")
    violation(Dialogue(), msg("K1"), INI, "no BACKREQ")


def test_backacc_0_goes_back_and_changes_side_to_move() -> None:
    d = started()
    play(d, (INI, M1), (FOL, M2), (INI, M3))  # Black (follower) to move at move 2
    d.handle(msg("B002W"), FOL)  # back to move 2, White to move: undo one ply
    assert d.phase is Phase.BACK_REQUESTED and d.awaiting is INI
    violation(d, msg("K0"), FOL, "initiator must answer")
    violation(d, msg("B001W"), INI, "already waits")
    events = d.handle(msg("K0"), INI)
    assert events == [TakeBack(2, W, 2, FOL)]
    assert (d.phase, d.to_move, d.turn_role(), d.plies, d.move_number) == (
        Phase.PLAYING,
        W,
        INI,
        2,
        2,
    )
    violation(d, M4, FOL, "initiator's turn")
    d.handle(M3, INI)


@pytest.mark.parametrize("code", ["1", "2"])
def test_backacc_1_2_change_nothing(code: str) -> None:
    d = started()
    play(d, (INI, M1), (FOL, M2))
    before = snapshot(d)
    d.handle(msg("B001W"), INI)
    assert d.handle(msg(f"K{code}"), FOL) == [TakeBackRefused(BackCode(code), INI)]
    assert snapshot(d) == before


def test_backreq_to_a_position_the_game_never_had() -> None:
    d = started()
    d.handle(M1, INI)
    violation(d, msg("B002W"), FOL, "not a position")  # in the future
    violation(started(to_move="Z"), msg("B001W"), INI, "not a position")  # Black began


def test_during_backreq_requester_waits_but_addressee_may_move() -> None:
    d = started()
    d.handle(msg("B001W"), FOL)  # follower asks while the initiator is thinking
    violation(d, M2, FOL, "initiator's turn")
    d.handle(M1, INI)  # crossed the BACKREQ on the wire: still accepted
    violation(d, M2, FOL, "waits for the initiator's answer")
    violation(d, msg("E00"), FOL, "waits")
    assert d.handle(msg("K0"), INI) == [TakeBack(1, W, 0, FOL)]
    assert d.plies == 0 and d.turn_role() is INI


def test_backreq_crossing_gameend_is_void() -> None:
    # The addressee ends the game instead of answering: the BACKREQ is void,
    # and its late BACKACC is still accepted once.
    d = started()
    play(d, (FOL, msg("B001W")), (INI, msg("E00")))
    assert (d.phase, d.awaiting) == (Phase.ENDING, FOL)
    play(d, (FOL, msg("E00")), (INI, msg("K1")))
    assert d.phase is Phase.IDLE
    violation(d, msg("K1"), INI, "no BACKREQ")
    # The side that owes the GAMEEND answer asked before it saw the GAMEEND.
    d = started()
    play(d, (INI, msg("E00")), (FOL, msg("B001W")), (FOL, msg("E00")), (INI, msg("K2")))
    assert d.phase is Phase.IDLE and d.last_result is not None


def test_duplicate_move_is_reported_and_ignored() -> None:
    d = started()
    d.handle(M1, INI)
    before = snapshot(d)
    with pytest.raises(DuplicateMessageError) as info:
        d.handle(msg("M0000342900"), INI)
    assert info.value.side == "initiator" and "same MOVE" in str(info.value)
    assert snapshot(d) == before
    with pytest.raises(DuplicateMessageError):  # delivered a third time
        d.handle(M1, INI)
    d.handle(M2, FOL)
    assert d.plies == 2


def test_repeat_of_own_previous_move_is_a_duplicate_even_in_turn() -> None:
    """The NULMODEM repeat can arrive after the reply: in turn, yet never a legal move."""
    d = started()
    play(d, (INI, M1), (FOL, M2))
    before = snapshot(d)
    with pytest.raises(DuplicateMessageError) as info:
        d.handle(M1, INI)
    assert "same MOVE as its previous move" in str(info.value)
    assert snapshot(d) == before
    d.handle(M3, INI)
    assert d.plies == 3


def test_a_new_game_may_open_with_the_same_move() -> None:
    d = started()
    play(d, (INI, M1), (FOL, msg("E00")), (INI, msg("E00")))
    play(d, (INI, req()), (FOL, ACC["0"]), (INI, M1))
    assert d.plies == 1


def test_different_out_of_turn_move_is_not_a_duplicate() -> None:
    d = started()
    d.handle(M1, INI)
    with pytest.raises(DialogueError) as info:
        d.handle(M3, INI)
    assert not isinstance(info.value, DuplicateMessageError)


@pytest.mark.parametrize(
    "steps",
    [
        [(INI, req())],  # GAMEREQ delivered twice
        [(INI, req()), (FOL, ACC["0"])],  # GAMEACC
        [(INI, req()), (FOL, ACC["0"]), (INI, msg("E20"))],  # the first GAMEEND
        [(INI, req()), (FOL, ACC["0"]), (INI, msg("E00")), (FOL, msg("E00"))],  # the answer
        [(INI, req()), (FOL, ACC["0"]), (INI, msg("B001W"))],  # BACKREQ
    ],
)
def test_duplicates_of_other_messages(steps: list[tuple[Role, Message]]) -> None:
    d = Dialogue()
    play(d, *steps)
    sender, last = steps[-1]
    with pytest.raises(DuplicateMessageError):
        d.handle(parse(last.wire), sender)


def test_repeated_chat_is_accepted() -> None:
    d = started()
    for _ in range(3):
        assert d.handle(msg("Chello"), FOL) == []
    d.handle(M1, INI)


def test_chat_in_every_phase_from_either_side() -> None:
    d = Dialogue()
    steps = [
        (INI, req()),
        (FOL, ACC["0"]),
        (INI, msg("B001W")),
        (FOL, msg("K1")),
        (INI, msg("E01")),
    ]
    for sender, m in [*steps, (FOL, msg("E00"))]:
        for side in (INI, FOL):
            assert d.handle(msg("Cx"), side) == []
        d.handle(m, sender)
    assert d.phase is Phase.STOPPED


@pytest.mark.parametrize(("follower", "black"), [("W", INI), ("Z", FOL)])
def test_form_b_black_to_move_moves_first(follower: str, black: Role) -> None:
    d = started(follower, to_move="Z")
    assert d.to_move is Z and d.turn_role() is black and d.move_number == 1
    violation(d, M2, black.other, "(Black to move)")
    assert d.handle(M2, black) == [MovePlayed(M2, Z, 1, 1)]
    assert d.move_number == 2 and d.turn_role() is black.other
    d.handle(msg("B001Z"), black)
    assert d.handle(msg("K0"), black.other) == [TakeBack(1, Z, 0, black)]


def test_session_blames_us_on_send_and_the_peer_on_receive() -> None:
    s = Session(FOL)
    s.receive(req())
    assert s.must_answer == req()
    s.send(ACC["0"])
    assert s.our_colour is Z and not s.our_turn and s.must_answer is None
    with pytest.raises(DialogueError) as sent:
        s.send(M2)
    assert sent.value.side == "follower"
    s.receive(M1)
    with pytest.raises(DialogueError) as received:
        s.receive(M3)
    assert received.value.side == "initiator"
    assert s.our_turn and s.phase is Phase.PLAYING
    s.send(msg("B001W"))
    assert not s.our_turn  # we asked for a take-back: wait for the BACKACC


def test_built_messages_work_like_parsed_ones() -> None:
    request = GameRequest(name="Built", follower_colour=W, minutes=5, moves=0)
    d = Dialogue()
    d.handle(request, INI)
    d.handle(ACC["0"], FOL)
    d.handle(Move(from_square=34, to_square=29), FOL)
    with pytest.raises(DuplicateMessageError):
        d.handle(Move(from_square=34, to_square=29), FOL)


def test_non_dxp_message_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        Dialogue().handle(Message(), INI)


# --------------------------------------------------------------------------- fuzzing

POOL: list[Message] = [
    *(req(f, t) for f in "WZ" for t in (None, "W", "Z")),
    *[ACC["0"]] * 4,
    *ACC.values(),
    M1,
    M2,
    M3,
    *(msg(f"E{r}{s}") for r in "0123" for s in "01"),
    msg("Chi"),
    *(msg(f"B00{n}{c}") for n in "123" for c in "WZ"),
    *(msg(f"K{c}") for c in "012"),
]
GROUPS: dict[str, list[Message]] = {}
for _m in POOL:
    GROUPS.setdefault(_m.TYPE, []).append(_m)
# Types weighted so that games start and run for a while; accept code 0 is the likeliest.
# A step is a type from _TYPES, a message of its group, and a sender pick (0-2: the side
# that has something to do, 3: the other), drawn as one choice from a flat list in which
# each (message, pick) is as frequent as those three draws make it (type weight x lcm /
# group size): one hypothesis draw a step instead of three, whose cost was most of the
# test's time.
_TYPES = [*"MMMMM", *GROUPS]
_LCM = math.lcm(*(len(g) for g in GROUPS.values()))
STEPS: list[tuple[Message, int]] = [
    (m, pick)
    for t in GROUPS
    for m in GROUPS[t]
    for _ in range(_TYPES.count(t) * _LCM // len(GROUPS[t]))
    for pick in range(4)
]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_dialogues_raise_only_dialogue_errors(data: st.DataObject) -> None:
    """Any well-formed message from either side: only DialogueErrors, never a changed state
    on one, and the observer and a Session agree. Senders lean towards the side that has
    something to do, so games get played, but any side may speak at any time."""
    d, mine = Dialogue(), Session(INI)
    step = st.sampled_from(STEPS)
    for _ in range(data.draw(st.integers(0, 150), label="length")):
        m, pick = data.draw(step, label="message, sender")
        likely = d.awaiting or d.turn_role() or INI
        sender = likely.other if pick == 3 else likely
        before = snapshot(d)
        try:
            events = d.handle(m, sender)
        except DialogueError as err:
            assert err.side == sender.value
            assert snapshot(d) == before
            with pytest.raises(type(err)):
                (mine.send if sender is INI else mine.receive)(m)
        else:
            assert (mine.send if sender is INI else mine.receive)(m) == events
            running = d.phase.game_running
            assert (d.to_move is not None) == running == (d.turn_role() is not None)
            assert (d.awaiting is not None) == (d.pending is not None)
            assert d.plies >= 0 and (d.move_number >= 1) == (d.games_started > 0)
        assert snapshot(mine.dialogue) == snapshot(d)


def test_the_side_asked_for_a_take_back_may_not_move_out_of_turn() -> None:
    """Issue 21: the addressee of a BACKREQ may move only when it is to move (its MOVE may
    have crossed the BACKREQ); out of turn its MOVE is refused and changes nothing, and the
    take-back it owes still goes through."""
    d = started()
    d.handle(M1, INI)  # the follower is to move ...
    d.handle(msg("B001W"), FOL)  # ... and asks the initiator to take back instead
    error = violation(d, M3, INI, "")  # the initiator may answer, not move
    assert error.side == INI.value and d.plies == 1 and d.turn_role() is FOL
    assert d.handle(msg("K0"), INI) == [TakeBack(1, W, 0, FOL)]
    assert d.plies == 0 and d.turn_role() is INI
