"""Dialogue state of one DXP connection: whose turn it is, what is owed, who broke a rule.

Sans-I/O like h11: messages in, events out, no sockets and no clock.  A :class:`Dialogue` is
a neutral observer that sees every message with its sender (what a bridge or referee needs);
a :class:`Session` is one end's view of the same thing (what an engine needs).  Each
transition is a pure function from one immutable state to the next, listed in one table
(``_RULES``), so a violation leaves the state as it was.  The rules decided here where
DXP.md is silent (counting, take-backs, crossings with GAMEEND, duplicates, following the
wire): docs/dialogue.md.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from dxserial.errors import DialogueError, DuplicateMessageError
from dxserial.protocol.dialects import (
    GAMEEND_NOT_AWAITED,
    GAMEEND_REASON_ECHO,
    GAMEEND_UNANSWERED,
)
from dxserial.protocol.messages import (
    MESSAGE_TYPES,
    AcceptCode,
    BackAccept,
    BackCode,
    BackRequest,
    Chat,
    Colour,
    EndReason,
    GameAccept,
    GameEnd,
    GameRequest,
    Message,
    Move,
    StopCode,
    escape,
)

__all__ = [
    "Dialogue",
    "DialogueEvent",
    "GameAbandoned",
    "GameEnded",
    "GameRefused",
    "GameStarted",
    "HabitSeen",
    "MovePlayed",
    "Phase",
    "Role",
    "Session",
    "SessionStopped",
    "TakeBack",
    "TakeBackRefused",
]


class Role(enum.StrEnum):
    """The two ends of a DXP connection; the value is the name used to blame a side."""

    INITIATOR = "initiator"
    FOLLOWER = "follower"

    @property
    def other(self) -> Role:
        return Role.FOLLOWER if self is Role.INITIATOR else Role.INITIATOR


class Phase(enum.StrEnum):
    """Where the dialogue is; CHAT is allowed in every phase.

    * ``IDLE``: no game and no request pending; the initiator may send GAMEREQ. The start,
      and again after a GAMEACC code 2 or a GAMEEND exchange with both stop codes 0.
    * ``REQUESTED``: a GAMEREQ waits for the follower's GAMEACC.
    * ``PLAYING``: a game runs; the side to move sends MOVE or starts GAMEEND, either side may
      send BACKREQ.
    * ``BACK_REQUESTED``: a game runs and a BACKREQ waits for the other side's BACKACC.
    * ``ENDING``: the side to move sent GAMEEND; the other side owes the answering GAMEEND.
    * ``STOPPED``: GAMEACC code 1/3 or a stop code 1 ended the session; only CHAT may follow.
    """

    IDLE = "idle"
    REQUESTED = "requested"
    PLAYING = "playing"
    BACK_REQUESTED = "back-requested"
    ENDING = "ending"
    STOPPED = "stopped"

    @property
    def game_running(self) -> bool:
        """True while moves may still be played (a pending BACKREQ does not stop the game)."""
        return self in (Phase.PLAYING, Phase.BACK_REQUESTED)


_COLOUR_NAME = {Colour.WHITE: "White", Colour.BLACK: "Black"}
_DXP_TYPES = tuple(MESSAGE_TYPES.values())


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class DialogueEvent:
    """Base of what :meth:`Dialogue.handle` reports beyond the message itself."""


@dataclass(frozen=True)
class GameStarted(DialogueEvent):
    """GAMEACC code 0: the game of ``request`` runs, ``request.first_to_move`` moves first."""

    request: GameRequest
    accept: GameAccept


@dataclass(frozen=True)
class GameRefused(DialogueEvent):
    """GAMEACC code 1, 2 or 3; 1 and 3 are followed by :class:`SessionStopped`."""

    request: GameRequest
    code: AcceptCode


@dataclass(frozen=True)
class MovePlayed(DialogueEvent):
    """A MOVE by ``colour``; ``ply`` counts from 1 in this game, ``move_number`` as in PDN."""

    move: Move
    colour: Colour
    ply: int
    move_number: int


@dataclass(frozen=True)
class TakeBack(DialogueEvent):
    """BACKACC code 0: the game went back to ``move_number`` with ``to_move`` to play.

    ``ply`` is the number of plies left in the game, i.e. the position after that many moves.
    """

    move_number: int
    to_move: Colour
    ply: int
    requested_by: Role


@dataclass(frozen=True)
class TakeBackRefused(DialogueEvent):
    """BACKACC code 1 or 2: the game goes on as if nothing had been asked."""

    code: BackCode
    requested_by: Role


@dataclass(frozen=True)
class GameEnded(DialogueEvent):
    """A complete GAMEEND exchange. ``ended_by``/``colour`` sent ``initial``, so its reason
    (1 resign, 3 win) is theirs; ``stop`` is true if either stop code was 1."""

    initial: GameEnd
    answer: GameEnd
    stop: bool
    ended_by: Role
    colour: Colour
    plies: int


@dataclass(frozen=True)
class GameAbandoned(DialogueEvent):
    """A forwarded message (see :meth:`Dialogue.follow`) ended the game without a result."""

    reason: str


@dataclass(frozen=True)
class HabitSeen(DialogueEvent):
    """``role`` spoke a dialect (:mod:`dxserial.protocol.dialects`) that was taken as meant."""

    habit: str
    role: Role


@dataclass(frozen=True)
class SessionStopped(DialogueEvent):
    """No more games on this connection; ``reason`` says which message stopped it."""

    reason: str


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class _State:
    """Everything the dialogue knows; replaced whole, never mutated, so violations undo free."""

    phase: Phase = Phase.IDLE
    game: GameRequest | None = None  # the running game's request, or the last game's
    plies: int = 0  # plies of that game, net of take-backs
    pending: Message | None = None  # the R, E or B waiting for its answer
    awaiting: Role | None = None  # who owes that answer
    games_started: int = 0
    last_result: GameEnded | None = None
    stop_reason: str | None = None
    void_back_owed: Role | None = None  # may still answer a BACKREQ that a GAMEEND made void
    last_wire: dict[Role, bytes] = field(default_factory=dict)
    last_move: dict[Role, bytes] = field(default_factory=dict)  # this game, since a take-back


_Outcome = tuple[_State, list[DialogueEvent]]
_STATE_FIELDS = frozenset(_State.__dataclass_fields__)


def _evolve(s: _State, **changes: Any) -> _State:
    """``dataclasses.replace`` for the two changes every move makes (its ply, the sender's
    last message): a copy of the instance dict, without replace()'s walk over the fields
    and a frozen ``__init__`` (a tenth of judging a move)."""
    if not changes.keys() <= _STATE_FIELDS:
        raise TypeError(f"_State has no field(s) {sorted(changes.keys() - _STATE_FIELDS)}")
    new = object.__new__(_State)
    new.__dict__.update(s.__dict__, **changes)
    return new


class _Refused(Exception):
    """Internal: a rule said no; :meth:`Dialogue.handle` turns it into a DialogueError."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _game(s: _State) -> GameRequest:
    if s.game is None:  # pragma: no cover - the table only reaches here with a game
        raise AssertionError("no game")
    return s.game


def _colour_to_move(s: _State) -> Colour:
    first = _game(s).first_to_move
    return first if s.plies % 2 == 0 else first.other


def _move_number(s: _State) -> int:
    offset = 1 if _game(s).first_to_move is Colour.BLACK else 0
    return (s.plies + offset) // 2 + 1


def _ply_of(s: _State, move_number: int, to_move: Colour) -> int:
    """Plies played before position (move_number, to_move); the inverse of the two above."""
    offset = 1 if _game(s).first_to_move is Colour.BLACK else 0
    return 2 * (move_number - 1) + (1 if to_move is Colour.BLACK else 0) - offset


def _role_of(s: _State, colour: Colour) -> Role:
    return Role.INITIATOR if colour is _game(s).initiator_colour else Role.FOLLOWER


def _turn_role(s: _State) -> Role:
    return _role_of(s, _colour_to_move(s))


def _turn_text(s: _State) -> str:
    colour = _colour_to_move(s)
    return f"it is the {_role_of(s, colour)}'s turn ({_COLOUR_NAME[colour]} to move)"


def _owed_text(s: _State) -> str:
    assert s.awaiting is not None and s.pending is not None
    return f"the {s.awaiting} must answer the {s.awaiting.other}'s {s.pending.NAME} first"


# --------------------------------------------------------------------------- transitions


def _request(s: _State, msg: GameRequest, sender: Role) -> _Outcome:
    return replace(s, phase=Phase.REQUESTED, pending=msg, awaiting=Role.FOLLOWER), []


_STOPPING_ACCEPT = {
    AcceptCode.VERSION_DIFFERS: "GAMEACC code 1: protocol version differs",
    AcceptCode.REFUSE_ALL_GAMES: "GAMEACC code 3: the follower refuses all games",
}


def _accept(s: _State, msg: GameAccept, sender: Role) -> _Outcome:
    request = s.pending
    assert isinstance(request, GameRequest)
    done = replace(s, pending=None, awaiting=None)
    if msg.code is AcceptCode.ACCEPT:
        started = replace(
            done, phase=Phase.PLAYING, game=request, plies=0, games_started=s.games_started + 1
        )
        return started, [GameStarted(request, msg)]
    refused: list[DialogueEvent] = [GameRefused(request, msg.code)]
    if msg.code is AcceptCode.REFUSE_THIS_GAME:
        return replace(done, phase=Phase.IDLE), refused
    reason = _STOPPING_ACCEPT[msg.code]
    stopped = replace(done, phase=Phase.STOPPED, stop_reason=reason)
    return stopped, [*refused, SessionStopped(reason)]


def _move(s: _State, msg: Move, sender: Role) -> _Outcome:
    played = MovePlayed(msg, _colour_to_move(s), s.plies + 1, _move_number(s))
    return _evolve(s, plies=s.plies + 1), [played]


def _end(s: _State, msg: GameEnd, sender: Role) -> _Outcome:
    # From BACK_REQUESTED only the answerer gets here: the BACKACC it owes is now void.
    void = sender if s.phase is Phase.BACK_REQUESTED else s.void_back_owed
    ending = replace(s, phase=Phase.ENDING, pending=msg, awaiting=sender.other, void_back_owed=void)
    return ending, []


def _end_answer(s: _State, msg: GameEnd, sender: Role) -> _Outcome:
    initial = s.pending
    assert isinstance(initial, GameEnd)
    habits: list[DialogueEvent] = []
    if msg.reason is not EndReason.NONE:
        habits.append(HabitSeen(GAMEEND_REASON_ECHO, sender))
    stop = StopCode.STOP in (initial.stop, msg.stop)
    result = GameEnded(initial, msg, stop, sender.other, _colour_to_move(s), s.plies)
    ended = replace(s, pending=None, awaiting=None, last_result=result)
    if not stop:
        return replace(ended, phase=Phase.IDLE), [*habits, result]
    if initial.stop is msg.stop:
        by = "both sides"
    else:
        by = f"the {sender.other if initial.stop is StopCode.STOP else sender}"
    reason = f"GAMEEND stop code 1 from {by}"
    stopped = replace(ended, phase=Phase.STOPPED, stop_reason=reason)
    return stopped, [*habits, result, SessionStopped(reason)]


def _request_for_answer(s: _State, msg: GameRequest, sender: Role) -> _Outcome:
    """The initiator's next GAMEREQ instead of the GAMEEND answer: the game is over."""
    initial = s.pending
    assert isinstance(initial, GameEnd) and s.awaiting is not None
    if initial.stop is StopCode.STOP:
        raise _Refused(f"the game is ending with stop code 1: {_owed_text(s)}")
    implied = GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)
    silent = s.awaiting
    result = GameEnded(initial, implied, False, silent.other, _colour_to_move(s), s.plies)
    ended = replace(s, phase=Phase.IDLE, pending=None, awaiting=None, last_result=result)
    requested, events = _request(ended, msg, sender)
    # The initiator's own GAMEEND not waited for (GWD after a move limit), or the
    # follower's left unanswered (GWD's default): a habit of the initiator either way.
    habit = GAMEEND_NOT_AWAITED if silent is Role.FOLLOWER else GAMEEND_UNANSWERED
    return requested, [HabitSeen(habit, sender), result, *events]


def _back_request(s: _State, msg: BackRequest, sender: Role) -> _Outcome:
    if not 0 <= _ply_of(s, msg.move, msg.to_move) <= s.plies:
        now = _colour_to_move(s)
        raise _Refused(
            f"move {msg.move:03d} with {_COLOUR_NAME[msg.to_move]} to move is not a position "
            f"of this game (now move {_move_number(s):03d}, {_COLOUR_NAME[now]} to move)"
        )
    return replace(s, phase=Phase.BACK_REQUESTED, pending=msg, awaiting=sender.other), []


def _back_answer(s: _State, msg: BackAccept, sender: Role) -> _Outcome:
    request = s.pending
    assert isinstance(request, BackRequest)
    resumed = replace(s, phase=Phase.PLAYING, pending=None, awaiting=None)
    if msg.code is not BackCode.ACCEPTED:
        return resumed, [TakeBackRefused(msg.code, sender.other)]
    ply = _ply_of(s, request.move, request.to_move)
    back = TakeBack(request.move, request.to_move, ply, sender.other)
    return replace(resumed, plies=ply), [back]


def _crossed_back_request(s: _State, msg: BackRequest, sender: Role) -> _Outcome:
    # Sent before the GAMEEND arrived: void; its addressee may still answer it once.
    return replace(s, void_back_owed=sender.other), []


class _Who(enum.Enum):
    """Who may send a message that the phase allows (R/A are also checked by type)."""

    ANYONE = enum.auto()
    TO_MOVE = enum.auto()  # the side whose colour is to move
    AWAITED = enum.auto()  # the side that owes the answer to ``pending``
    AWAITED_TO_MOVE = enum.auto()  # the BACKREQ's addressee, if also to move (crossing)


_Apply = Callable[[_State, Any, Role], _Outcome]

# (phase, message type) -> who may send it, what it does. Anything missing is a violation.
_RULES: dict[tuple[Phase, str], tuple[_Who, _Apply]] = {
    (Phase.IDLE, "R"): (_Who.ANYONE, _request),
    (Phase.REQUESTED, "A"): (_Who.AWAITED, _accept),
    (Phase.PLAYING, "M"): (_Who.TO_MOVE, _move),
    (Phase.PLAYING, "E"): (_Who.TO_MOVE, _end),
    (Phase.PLAYING, "B"): (_Who.ANYONE, _back_request),
    (Phase.BACK_REQUESTED, "M"): (_Who.AWAITED_TO_MOVE, _move),
    (Phase.BACK_REQUESTED, "E"): (_Who.AWAITED_TO_MOVE, _end),
    (Phase.BACK_REQUESTED, "K"): (_Who.AWAITED, _back_answer),
    (Phase.ENDING, "E"): (_Who.AWAITED, _end_answer),
    (Phase.ENDING, "R"): (_Who.ANYONE, _request_for_answer),
    (Phase.ENDING, "B"): (_Who.AWAITED, _crossed_back_request),
}

# Types only one role may ever send, whatever the phase.
_ONLY_FROM = {"R": Role.INITIATOR, "A": Role.FOLLOWER}


def _check_sender(s: _State, who: _Who, sender: Role) -> None:
    """Raise if the table's ``who`` does not include ``sender`` right now."""
    if who in (_Who.TO_MOVE, _Who.AWAITED_TO_MOVE) and sender is not _turn_role(s):
        raise _Refused(_turn_text(s))
    if who in (_Who.AWAITED, _Who.AWAITED_TO_MOVE) and sender is not s.awaiting:
        if who is _Who.AWAITED:
            raise _Refused(_owed_text(s))
        assert s.pending is not None  # the side to move asked for a take-back itself
        raise _Refused(f"its {s.pending.NAME} waits for the {s.awaiting}'s answer")


def _why_not(s: _State, msg: Message) -> str:
    """The reason for a (phase, type) pair the table does not list."""
    if s.phase is Phase.STOPPED:
        return f"the session has stopped ({s.stop_reason}); only CHAT may follow"
    if s.phase is Phase.ENDING:
        return f"the game is ending: {_owed_text(s)}"
    if msg.TYPE == "A":
        return "there is no GAMEREQ to answer"
    if msg.TYPE == "K":
        return "there is no BACKREQ to answer"
    if s.phase is Phase.REQUESTED:
        return "the GAMEREQ still waits for the follower's GAMEACC"
    if msg.TYPE == "R":
        return "a game is running"
    if s.phase is Phase.BACK_REQUESTED:
        return f"a BACKREQ already waits for the {s.awaiting}'s BACKACC"
    return "no game is running"


def _step(s: _State, msg: Message, sender: Role) -> _Outcome:
    if isinstance(msg, Chat):
        return s, []
    if s.void_back_owed is sender:
        s = replace(s, void_back_owed=None)  # the allowance lasts one message
        if isinstance(msg, BackAccept):
            return s, []
    only = _ONLY_FROM.get(msg.TYPE)
    if only is not None and sender is not only:
        raise _Refused(f"only the {only} may send {msg.NAME}")
    rule = _RULES.get((s.phase, msg.TYPE))
    if rule is None:
        raise _Refused(_why_not(s, msg))
    who, apply = rule
    _check_sender(s, who, sender)
    return apply(s, msg, sender)


# --------------------------------------------------------------------------- public API


class Dialogue:
    """The dialogue of one connection as seen by a neutral observer (a bridge, a referee).

    Every message is passed with the role that sent it. Game facts (colours, move number,
    plies, last request) describe the running game, or the last one once it has ended.
    """

    def __init__(self) -> None:
        self._state = _State()

    def handle(self, msg: Message, sender: Role) -> list[DialogueEvent]:
        """Check ``msg`` from ``sender`` against the dialogue rules and apply it.

        Raises :class:`DialogueError` (``side`` = the sender's role) for a message at the
        wrong moment, :class:`DuplicateMessageError` if it is also a byte-for-byte repeat
        of the sender's previous message. Either way the state is left unchanged.
        """
        outcome = self.attempt(msg, sender)
        if isinstance(outcome, DialogueError):
            raise outcome
        return outcome

    def attempt(self, msg: Message, sender: Role) -> list[DialogueEvent] | DialogueError:
        """:meth:`handle` that returns the error instead of raising it (a referee judges
        every message, and most violations come in floods: no exception per message)."""
        if not isinstance(msg, _DXP_TYPES):
            raise TypeError(f"not a DXP message: {type(msg).__name__}")
        s = self._state
        wire = msg.wire
        if isinstance(msg, Move) and s.phase.game_running and s.last_move.get(sender) == wire:
            # Its from-square was vacated by the first one: no side can legally play the same
            # MOVE twice in a row, even when it is its turn again (the reply to the first
            # arrived before the NULMODEM repeat).
            return DuplicateMessageError(
                f"{sender} sent the same MOVE as its previous move ({escape(wire)}): "
                "a repeated delivery (NULMODEM retransmission?)",
                side=sender.value,
            )
        try:
            new, events = _step(s, msg, sender)
        except _Refused as refused:
            reason = refused.reason
            if s.last_wire.get(sender) == wire:
                why = f"{reason}: a repeated delivery (NULMODEM retransmission?)"
                return DuplicateMessageError(
                    f"{sender} sent the same {msg.NAME} again ({escape(wire)}) but {why}",
                    side=sender.value,
                    reason=why,
                )
            return DialogueError(
                f"{sender} sent {msg.NAME} but {reason}", side=sender.value, reason=reason
            )
        last_move = dict(new.last_move)
        if any(isinstance(e, (GameStarted, TakeBack)) for e in events):
            last_move = {}
        if isinstance(msg, Move):
            last_move[sender] = wire
        self._state = _evolve(new, last_wire={**new.last_wire, sender: wire}, last_move=last_move)
        return events

    def follow(self, msg: Message, sender: Role) -> list[DialogueEvent]:
        """``msg`` broke a rule but was delivered: take the state its receiver will be in.

        A GAMEREQ from the initiator abandons whatever game runs and is pending; a GAMEEND
        during a game waits for its answer; anything else leaves the game as it is.  Either
        way the message is now ``sender``'s previous one (duplicates are judged against
        what was delivered, not against what was accepted).
        """
        s = self._state
        events: list[DialogueEvent] = []
        if isinstance(msg, GameRequest) and sender is Role.INITIATOR:
            if s.phase in (Phase.PLAYING, Phase.BACK_REQUESTED, Phase.ENDING):
                events.append(GameAbandoned(f"the {sender} sent a new GAMEREQ"))
            if s.phase is not Phase.STOPPED:
                s = replace(s, phase=Phase.REQUESTED, pending=msg, awaiting=Role.FOLLOWER)
        elif isinstance(msg, GameEnd) and s.phase.game_running:
            s = replace(s, phase=Phase.ENDING, pending=msg, awaiting=sender.other)
        self._state = _evolve(s, last_wire={**s.last_wire, sender: msg.wire})
        return events

    def fork(self) -> Dialogue:
        """An independent copy (the state is immutable: this is cheap), to try a message on."""
        twin = Dialogue.__new__(Dialogue)
        twin._state = self._state
        return twin

    def may_be_repeat(self, msg: Message, sender: Role) -> bool:
        """Whether :meth:`handle` could take ``msg`` for a repeated delivery: the one verdict
        on which a forgiving referee keeps a message back, so the bridge judges such a
        message before forwarding it and any other one after."""
        wire = msg.wire
        s = self._state
        return s.last_wire.get(sender) == wire or (
            isinstance(msg, Move) and s.last_move.get(sender) == wire
        )

    @property
    def phase(self) -> Phase:
        return self._state.phase

    @property
    def to_move(self) -> Colour | None:
        """The colour to move while a game runs, else ``None``."""
        return _colour_to_move(self._state) if self._state.phase.game_running else None

    def turn_role(self) -> Role | None:
        """Who is to move (send MOVE or start GAMEEND) while a game runs, else ``None``.

        During a BACKREQ the side to move may still have to wait for the BACKACC it asked for.
        """
        return _turn_role(self._state) if self._state.phase.game_running else None

    def colour_of(self, role: Role) -> Colour | None:
        """The colour ``role`` plays in the running (or last) game."""
        game = self._state.game
        if game is None:
            return None
        return game.initiator_colour if role is Role.INITIATOR else game.follower_colour

    @property
    def initiator_colour(self) -> Colour | None:
        return self.colour_of(Role.INITIATOR)

    @property
    def follower_colour(self) -> Colour | None:
        return self.colour_of(Role.FOLLOWER)

    @property
    def game_request(self) -> GameRequest | None:
        """The accepted GAMEREQ of the running (or last) game; a pending one is ``pending``."""
        return self._state.game

    @property
    def move_number(self) -> int:
        """PDN move number of the position reached (0 before the first game)."""
        return _move_number(self._state) if self._state.game is not None else 0

    @property
    def plies(self) -> int:
        """Moves (plies) played in the running (or last) game, net of take-backs."""
        return self._state.plies

    @property
    def games_started(self) -> int:
        return self._state.games_started

    @property
    def last_result(self) -> GameEnded | None:
        """The last complete GAMEEND exchange."""
        return self._state.last_result

    @property
    def pending(self) -> Message | None:
        """The GAMEREQ, GAMEEND or BACKREQ that still waits for its answer."""
        return self._state.pending

    @property
    def awaiting(self) -> Role | None:
        """Who owes the answer to :attr:`pending`."""
        return self._state.awaiting

    @property
    def stop_reason(self) -> str | None:
        """Why the session stopped, once it has."""
        return self._state.stop_reason


class Session:
    """One end of a connection: our own messages go to :meth:`send`, the peer's to
    :meth:`receive`, so a violation blames us or the peer respectively."""

    def __init__(self, role: Role) -> None:
        self._role = role
        self._dialogue = Dialogue()

    @property
    def role(self) -> Role:
        return self._role

    @property
    def dialogue(self) -> Dialogue:
        return self._dialogue

    def send(self, msg: Message) -> list[DialogueEvent]:
        """Check a message we are about to send; a violation blames our role."""
        return self._dialogue.handle(msg, self._role)

    def receive(self, msg: Message) -> list[DialogueEvent]:
        """Check a message from the peer; a violation blames the peer's role."""
        return self._dialogue.handle(msg, self._role.other)

    @property
    def phase(self) -> Phase:
        return self._dialogue.phase

    @property
    def our_colour(self) -> Colour | None:
        return self._dialogue.colour_of(self._role)

    @property
    def our_turn(self) -> bool:
        """True if we may send MOVE or start GAMEEND now."""
        d = self._dialogue
        if d.phase is Phase.BACK_REQUESTED and d.awaiting is not self._role:
            return False  # we asked for a take-back and wait for the answer
        return d.turn_role() is self._role

    @property
    def must_answer(self) -> Message | None:
        """The peer's GAMEREQ, GAMEEND or BACKREQ that we owe an answer to, if any."""
        d = self._dialogue
        return d.pending if d.awaiting is self._role else None
