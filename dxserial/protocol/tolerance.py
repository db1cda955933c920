"""The dialects one end of a connection tolerates (``dxserial engine``, ``dxserial match``):
shared so both read a silent or echoing peer the same way as the bridge does."""

from __future__ import annotations

from dxserial.protocol.dialects import GAMEEND_UNANSWERED, habit_text
from dxserial.protocol.messages import EndReason, GameEnd, Message, StopCode
from dxserial.protocol.session import DialogueEvent, HabitSeen, Phase, Session

__all__ = [
    "Habits",
    "awaits_gameend_answer",
    "late_answer",
    "leaving_answers",
    "silence_as_answer",
]


class Habits:
    """Names each dialect of one peer once: ``note()`` gives the text the first time only."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self._seen: set[str] = set()

    def note(self, habit: str) -> str | None:
        if habit in self._seen:
            return None
        self._seen.add(habit)
        return f"note: the {self.peer} {habit_text(habit)}"

    def notes(self, events: list[DialogueEvent]) -> list[str]:
        """The notes for the habits these dialogue events show, each once."""
        out = [self.note(e.habit) for e in events if isinstance(e, HabitSeen)]
        return [text for text in out if text is not None]


def awaits_gameend_answer(session: Session) -> bool:
    """Our GAMEEND waits for the peer's answer."""
    d = session.dialogue
    return d.phase is Phase.ENDING and d.awaiting is session.role.other


def silence_as_answer(session: Session) -> list[DialogueEvent]:
    """The peer let our GAMEEND go unanswered for the timeout (GWD's habit): take its
    silence as the answer (reason 0, stop code 0) and say which habit that was."""
    assert awaits_gameend_answer(session)
    events = session.receive(GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE))
    return [HabitSeen(GAMEEND_UNANSWERED, session.role.other), *events]


def late_answer(session: Session, msg: Message) -> bool:
    """``msg`` is a GAMEEND that can only be a late answer to one taken as answered."""
    return isinstance(msg, GameEnd) and session.must_answer is None and not (
        session.phase.game_running and not session.our_turn
    )


def leaving_answers(session: Session) -> bool:
    """The peer hangs up while our GAMEEND with stop code 1 waits for its answer: it was
    told to stop and did (an engine that never answers a GAMEEND): no failure."""
    pending = session.dialogue.pending
    return (
        awaits_gameend_answer(session)
        and isinstance(pending, GameEnd)
        and pending.stop is StopCode.STOP
    )
