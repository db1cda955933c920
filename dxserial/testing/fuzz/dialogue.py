"""Fuzz target ``dialogue``: random message sequences from random roles through
:class:`Dialogue` (see :mod:`dxserial.testing.fuzz`)."""

from __future__ import annotations

from hypothesis import strategies as st

from dxserial.errors import DialogueError, DuplicateMessageError
from dxserial.protocol.messages import (
    AcceptCode,
    BackAccept,
    BackRequest,
    Chat,
    EndReason,
    Message,
    Move,
)
from dxserial.protocol.session import Dialogue, DialogueEvent, GameStarted, Phase, Role
from dxserial.testing.fuzz.registry import fuzz_target, one_line
from dxserial.testing.fuzz.samples import (
    any_message,
    back_accepts,
    back_requests,
    colours,
    game_accepts,
    game_ends,
    game_requests,
    moves,
    with_raw,
)


def snapshot(d: Dialogue) -> tuple[object, ...]:
    return (
        d.phase, d.to_move, d.turn_role(), d.plies, d.move_number, d.games_started, d.pending,
        d.awaiting, d.last_result, d.stop_reason, d.game_request,
        d.colour_of(Role.INITIATOR), d.colour_of(Role.FOLLOWER),
    )


_roles = st.sampled_from(Role)
# Strategies built once: building them per step costs more than drawing from them.
_requests = game_requests()
_accepts_mostly_0 = game_accepts(st.sampled_from([AcceptCode.ACCEPT] * 4 + list(AcceptCode)))
_moves = moves()
_ends = game_ends()
_answers_mostly_0 = game_ends(st.sampled_from([EndReason.NONE] * 4 + list(EndReason)))
_back_offsets = st.integers(-3, 1)  # around the current move number
_early_back = back_requests(st.integers(1, 4))
_anything = st.tuples(_roles, any_message)
_rolls = st.integers(0, 99)
_hi = Chat(text="hi")


def draw_message(
    data: st.DataObject, d: Dialogue, sent: dict[Role, Message]
) -> tuple[Role, Message]:
    """Mostly what the dialogue expects next (so games start, end and go back), else any
    message from any role, a CHAT, or a side's last message again (a NULMODEM repeat)."""
    roll = data.draw(_rolls, label="roll")
    phase, turn, awaiting = d.phase, d.turn_role(), d.awaiting
    sender: Role
    msg: Message
    if roll < 10:
        sender, msg = data.draw(_anything, label="anything")
    elif roll < 14:
        sender, msg = data.draw(_roles, label="role"), _hi
    elif roll < 24 and sent:
        sender = data.draw(st.sampled_from(sorted(sent)), label="repeat")
        return sender, sent[sender]
    elif phase is Phase.IDLE:
        sender, msg = Role.INITIATOR, data.draw(_requests)
    elif phase is Phase.REQUESTED:
        sender, msg = Role.FOLLOWER, data.draw(_accepts_mostly_0)
    elif phase is Phase.BACK_REQUESTED and awaiting is not None and roll < 60:
        sender, msg = awaiting, data.draw(back_accepts)
    elif phase.game_running and turn is not None:
        if roll < 80:
            sender, msg = turn, data.draw(_moves)
        elif roll < 90:
            sender, msg = turn, data.draw(_ends)
        else:
            number = max(1, d.move_number + data.draw(_back_offsets))
            sender = data.draw(_roles)
            msg = BackRequest(move=number, to_move=data.draw(colours))
    elif phase is Phase.ENDING and awaiting is not None:
        sender = awaiting
        msg = data.draw(_answers_mostly_0) if roll < 85 else data.draw(_early_back)
    else:
        sender, msg = data.draw(_anything, label="anything")
    return sender, with_raw(msg)


@fuzz_target(
    "dialogue",
    "Dialogue.handle on message sequences from both roles, steered to games, take-backs, "
    "endings and repeats",
    examples=100,
    data=st.data(),
    length=st.integers(1, 80),
)
def fuzz_dialogue(data: st.DataObject, length: int) -> None:
    d = Dialogue()
    accepted: dict[Role, Message] = {}  # each side's last accepted message
    for _ in range(length):
        sender, msg = draw_message(data, d, accepted)
        # "unchanged" is checked on the private state too: it is replaced, never mutated
        state, before, games_before = d._state, snapshot(d), d.games_started
        try:
            events = d.handle(msg, sender)
        except DialogueError as exc:
            assert d._state is state and snapshot(d) == before
            assert exc.side == sender.value
            one_line(str(exc))
            previous = accepted.get(sender)
            repeat = previous is not None and previous.wire == msg.wire
            if isinstance(exc, DuplicateMessageError):
                assert repeat or isinstance(msg, Move), (msg, previous)
            else:
                assert not repeat, "a refused repeat must be a DuplicateMessageError"
            assert not isinstance(msg, Chat), "CHAT is allowed at any time"
            continue
        after = snapshot(d)
        assert all(isinstance(e, DialogueEvent) for e in events)
        assert d.plies >= 0 and d.games_started >= games_before
        if isinstance(msg, Chat):
            assert events == [] and after == before
        if before[0] is Phase.STOPPED:
            assert d.phase is Phase.STOPPED and isinstance(msg, Chat | BackAccept)
        if d.phase.game_running:
            assert d.to_move is not None and d.turn_role() is not None
        else:
            assert d.to_move is None and d.turn_role() is None
        started = any(isinstance(e, GameStarted) for e in events)
        assert started == (before[0] is Phase.REQUESTED and d.phase is Phase.PLAYING)
        accepted[sender] = msg
