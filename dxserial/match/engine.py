"""One engine of a match as the conductor sees it: its dialogue, its dialects, its failure.

Sans-I/O: :class:`Engine` holds what outlives a game on one connection (the dialogue, the
habits already named, a silence taken as an answer); :func:`send` and :func:`intake` check
messages against the dialogue and say what to do as actions (CHAT logged, BACKREQ declined,
anything out of turn dropped, a lost link a failure).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from dxserial.drive.actions import Action, Log, Say, Send
from dxserial.errors import DialogueError, DuplicateMessageError, MessageError
from dxserial.game.thinking import Thinking
from dxserial.match.initiators import forfeit_reason, named_line
from dxserial.protocol.messages import (
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    GameRequest,
    Message,
    escape,
    parse,
)
from dxserial.protocol.session import Phase, Role, Session
from dxserial.protocol.tolerance import Habits, late_answer, leaving_answers

__all__ = [
    "Engine",
    "Invalid",
    "Lost",
    "Payload",
    "claims_initiator",
    "fail_as_initiator",
    "intake",
    "read",
    "send",
]


@dataclass(frozen=True)
class Lost:
    """The engine's connection is gone."""

    reason: str


@dataclass(frozen=True)
class Invalid:
    """Bytes from the engine that are no DXP message."""

    raw: bytes
    error: str


Payload = Message | Lost | Invalid


def read(raw: bytes) -> Message | Invalid:
    """One message from an engine, parsed as leniently as engines write them."""
    try:
        return parse(raw, strict=False)
    except MessageError as exc:
        return Invalid(raw, str(exc))


@dataclass(eq=False)
class Engine:
    """A follower engine of the match: its label ("A", or a tournament's name) and, while
    connected, its dialogue with us (we are the initiator)."""

    label: str
    name: str = ""
    connected: bool = False
    session: Session = field(default_factory=lambda: Session(Role.INITIATOR))
    failure: str | None = None  # failed during a game (it loses that game)
    gone: str | None = None  # left between games or after the last one
    #: The engine may still be in a game of a director that crashed (``--resume``): the
    #: next game first closes it (GAMEEND 0, see :mod:`dxserial.match.machine`).
    stale: bool = False
    #: The last message the link confirmed delivered to the engine, and when (the clock's
    #: start: NULMODEM's end-byte echo came back, or TCP wrote it).
    delivered: tuple[bytes, float] | None = None
    #: Its dialects, named once (see :mod:`dxserial.protocol.tolerance`).
    habits: Habits = field(default_factory=lambda: Habits("engine"))
    late_answer: bool = False  # its silence was taken as the GAMEEND answer
    #: Its own GAMEREQ on this connection (escaped): the evidence that it is set up as
    #: initiator (see :mod:`dxserial.match.initiators`); and whether the user was told.
    initiator: str | None = None
    initiator_named: bool = False
    #: It tells its thinking by CHAT before each move (see dxserial.game.thinking); the
    #: thinking told for the move to come.
    reports_thinking: bool = False
    thinking: Thinking | None = None
    #: Lines said before the game's header (its first line): held until it is said.
    unheaded: list[Action] | None = None

    @property
    def usable(self) -> bool:
        return self.connected and self.failure is None and self.gone is None

    @property
    def title(self) -> str:
        return f"{self.name} ({self.label})" if self.name else self.label

    def joined(self) -> None:
        """A new connection: a new dialogue."""
        self.connected, self.session = True, Session(Role.INITIATOR)
        self.initiator = None

    def fail(self, reason: str, out: list[Action]) -> None:
        """The engine loses this game for ``reason`` (only its first failure counts)."""
        if self.failure is None:
            self.failure = reason
            line = Say(f"engine {self.title} failed: {reason}")
            (self.unheaded if self.unheaded is not None else out).append(line)


def claims_initiator(engine: Engine, msg: GameRequest, out: list[Action]) -> None:
    """The engine sent a GAMEREQ: it is set up as initiator.  Kept as evidence (the next
    game is not offered to it) and named in one line the first time."""
    engine.initiator = escape(msg.wire)
    if engine.name == "":
        engine.name = msg.name.strip()
    if not engine.initiator_named:
        engine.initiator_named = True
        out.append(Log(logging.WARNING, named_line(engine.label, msg.name, engine.initiator)))
    else:
        out.append(Log(logging.INFO, f"engine {engine.label} sent its own GAMEREQ again "
                       f"'{engine.initiator}' (set up as initiator)"))


def fail_as_initiator(engine: Engine, out: list[Action]) -> None:
    """The engine loses this game for being the initiator (nothing is sent to it)."""
    engine.fail(forfeit_reason(engine.name), out)


def send(engine: Engine, side: str, msg: Message, level: int, out: list[Action]) -> None:
    """Send ``msg`` to the engine on ``side``; the dialogue is checked first (a violation is
    our bug)."""
    if not engine.usable:
        return
    engine.session.send(msg)
    out.append(Log(level, f"-> {engine.label}: {escape(msg.wire)} ({msg.NAME})"))
    out.append(Send(side, msg.wire))


def intake(
    engine: Engine, side: str, payload: Payload, level: int, out: list[Action]
) -> Message | None:
    """Check one message from the engine against its dialogue; None if nothing to act on.

    CHAT is logged, BACKREQ answered with K1, anything invalid or out of turn logged and
    dropped (a strict referee relays nothing of it).  A lost link fails the engine.
    """
    label = engine.label
    if isinstance(payload, Lost):
        s = engine.session
        if s.phase in (Phase.IDLE, Phase.STOPPED) or leaving_answers(s):
            # Between games or after the last one: leaving is no failure (yet).
            out.append(Log(logging.INFO, f"engine {label} left: {payload.reason}"))
            engine.gone = payload.reason
        else:
            engine.fail(f"link lost: {payload.reason}", out)
        return None
    if isinstance(payload, Invalid):
        out.append(Log(
            logging.WARNING,
            f"engine {label} sent an invalid message '{escape(payload.raw)}' (dropped): "
            f"{payload.error}",
        ))
        return None
    msg = payload
    out.append(Log(level, f"<- {label}: {escape(msg.wire)} ({msg.NAME})"))
    if isinstance(msg, Chat):
        told = Thinking.from_chat(msg.text) if engine.reports_thinking else None
        if told is not None:
            engine.thinking = told
            out.append(Log(logging.DEBUG, f"engine {label}: {msg.text}"))
        else:
            out.append(Log(logging.INFO, f"chat from engine {label}: {msg.text}"))
        return None
    if engine.late_answer:
        engine.late_answer = False
        if late_answer(engine.session, msg):
            out.append(Log(logging.INFO, f"engine {label}: its late GAMEEND answer swallowed"))
            return None
    try:
        for note in engine.habits.notes(engine.session.receive(msg)):
            out.append(Log(logging.INFO, f"engine {label}: {note}"))
    except DuplicateMessageError as exc:
        out.append(Log(logging.WARNING, f"engine {label}: {exc} (dropped)"))
        return None
    except DialogueError as exc:
        out.append(Log(logging.WARNING, f"engine {label}: {exc} (not relayed)"))
        return None
    if isinstance(msg, BackRequest):
        out.append(Log(logging.INFO, f"engine {label} asked for a take-back: declined (K1)"))
        send(engine, side, BackAccept(code=BackCode.NOT_SUPPORTED), level, out)
        return None
    return msg
