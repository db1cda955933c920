"""The built-in engine as a sans-I/O player: messages from the peer in, messages to send out.

A :class:`Player` is what ``dxserial engine`` runs on a port, and what tests wire to another
player in memory.  It keeps a :class:`~dxserial.protocol.session.Session` for its role (so
it never speaks out of turn) and one position per ply (a take-back is a slice); the clock is
passed in.  The rules it follows where DXP leaves a choice (move limit, stop codes, thinking
time, repeated GAMEREQs, dialects, and how it answers a violation without ending the
session, up to :data:`MAX_VIOLATIONS`): docs/engine.md.
"""

from __future__ import annotations

import enum
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial import __version__
from dxserial.draughts import IllegalMoveError, LegalMove, Position, RulesError
from dxserial.engine.mover import MoverFailed, MoveSource
from dxserial.engine.search import MAX_DEPTH, choose_move
from dxserial.errors import ConfigError, DialogueError, DuplicateMessageError, ProtocolError
from dxserial.game.referee import gameend_result
from dxserial.game.thinking import Thinking
from dxserial.protocol.dialects import DEFAULT_GAMEEND_TIMEOUT, GAMEEND_UNANSWERED
from dxserial.protocol.dxp_moves import match_dxp_move, position_from_gamereq, to_dxp_move
from dxserial.protocol.messages import (
    NAME_LEN,
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
    colour_name,
)
from dxserial.protocol.session import (
    DialogueEvent,
    GameEnded,
    GameRefused,
    GameStarted,
    HabitSeen,
    Phase,
    Role,
    Session,
    TakeBack,
)
from dxserial.protocol.tolerance import (
    Habits,
    late_answer,
    leaving_answers,
    silence_as_answer,
)

__all__ = [
    "DEFAULT_DEPTH",
    "DEFAULT_NAME",
    "MAX_DEPTH",
    "MAX_VIOLATIONS",
    "TIME_SHARE",
    "BackPolicy",
    "GameBegun",
    "GameOver",
    "NoAnswer",
    "Note",
    "PeerError",
    "Player",
    "PlayerConfig",
    "PlayerEvent",
    "check_depth",
    "check_name",
    "make_chat",
]

DEFAULT_NAME = f"dxserial {__version__}"
DEFAULT_DEPTH = 3
_MAX_SECONDS = 9999
#: Violations in a row (no accepted message between) after which the player gives up.
MAX_VIOLATIONS = 5
#: Messages that only make sense while a game runs: the peer believes one does.
_GAME_MESSAGES = (Move, BackRequest, BackAccept, GameEnd)
#: A move may take at most 1/TIME_SHARE of the time left on the player's clock.
TIME_SHARE = 20


class BackPolicy(enum.StrEnum):
    """How the player answers a BACKREQ."""

    ACCEPT = "accept"  # K0, and the game goes back
    DECLINE = "decline"  # K1: take-back not supported


def check_name(name: str) -> str:
    """An engine name DXP can carry: 1..32 printable ASCII characters, no leading blank."""
    if not 1 <= len(name) <= NAME_LEN:
        raise ConfigError(f"name {name!r}: must be 1 to {NAME_LEN} characters")
    if not all(0x20 <= ord(c) < 0x7F for c in name):
        raise ConfigError(f"name {name!r}: only printable ASCII characters")
    if name.startswith(" "):
        raise ConfigError(f"name {name!r}: must not start with a blank")
    return name


def check_depth(depth: int, option: str = "depth") -> int:
    """A search depth the engine can finish: 1..MAX_DEPTH plies (each costs 3-5x the last)."""
    if not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(
            f"{option} {depth}: must be 1..{MAX_DEPTH} (each ply multiplies the search time "
            "by 3 to 5)"
        )
    return depth


@dataclass(frozen=True)
class PlayerConfig:
    """What the player is told.  The game options (``games`` .. ``colour``) are the
    initiator's; a follower takes them from each GAMEREQ."""

    role: Role
    name: str = DEFAULT_NAME
    depth: int = DEFAULT_DEPTH
    backreq: BackPolicy = BackPolicy.ACCEPT
    games: int = 2
    minutes: int = 5
    moves: int = 75
    colour: Colour = Colour.WHITE  # the follower's colour in the first game
    seed: int | None = None
    answer_timeout: float = 10.0  # initiator: seconds a GAMEREQ may wait for its GAMEACC
    gameend_timeout: float = DEFAULT_GAMEEND_TIMEOUT  # our GAMEEND's answer, at most
    #: With a move source that reports its thinking (a Hub engine): a CHAT of it before
    #: each MOVE, for a director that asked for it (dxserial.game.thinking).
    tell_thinking: bool = False
    #: A Fischer increment (seconds) the director adds after each of our moves: counted in
    #: the time left told to the move source (the GAMEREQ cannot say it).
    increment: float = 0.0

    def __post_init__(self) -> None:
        check_name(self.name)
        if not self.answer_timeout > 0:
            raise ConfigError(f"answer timeout {self.answer_timeout}: must be > 0 seconds")
        if not self.gameend_timeout > 0:
            raise ConfigError(f"GAMEEND timeout {self.gameend_timeout}: must be > 0 seconds")
        check_depth(self.depth)
        if self.games < 1:
            raise ConfigError(f"games {self.games}: must be at least 1")
        if not 0 <= self.minutes <= 999:
            raise ConfigError(f"minutes {self.minutes}: must be 0..999")
        if not 0 <= self.moves <= 999:
            raise ConfigError(f"moves {self.moves}: must be 0..999 (0: no limit)")


# --------------------------------------------------------------------------- events


@dataclass(frozen=True)
class PlayerEvent:
    """Base of what :meth:`Player.events` reports for the runner to log or print."""


@dataclass(frozen=True)
class Note(PlayerEvent):
    """Something worth a log line (a CHAT, an ignored duplicate, a take-back)."""

    text: str
    level: int = logging.INFO


@dataclass(frozen=True)
class NoAnswer(PlayerEvent):
    """Our GAMEREQ has waited ``waited`` seconds for a GAMEACC; ``repeated``: sent again."""

    waited: float
    repeated: bool


@dataclass(frozen=True)
class GameBegun(PlayerEvent):
    number: int
    our_colour: Colour
    opponent: str


@dataclass(frozen=True)
class GameOver(PlayerEvent):
    """A finished game: PDN ``result`` (``2-0``, ``1-1``, ``0-2``, ``*``) and why."""

    number: int
    result: str
    reason: str
    plies: int
    our_colour: Colour

    @property
    def line(self) -> str:
        return f"game {self.number}: {self.result} ({self.reason})"


class PeerError(ProtocolError):
    """The peer broke the protocol or the rules; ``farewell`` is a CHAT telling it why."""

    def __init__(self, message: str, *, side: str, farewell: Chat | None = None) -> None:
        super().__init__(message, side=side)
        self.farewell = farewell


def make_chat(text: str) -> Chat:
    """A CHAT of ``text`` that DXP can carry (see :meth:`Chat.carrying`)."""
    return Chat.carrying(text)


# --------------------------------------------------------------------------- the player


@dataclass
class _Game:
    number: int
    positions: list[Position] = field(default_factory=list)  # [k]: after k plies
    used: float = 0.0  # seconds our moves of this game took
    moved: int = 0  # our moves of this game

    @property
    def position(self) -> Position:
        return self.positions[-1]


class Player:
    """One DXP engine; the rules it plays by are in docs/engine.md."""

    def __init__(
        self,
        config: PlayerConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        mover: MoveSource | None = None,
    ):
        self.config = config
        self._mover = mover  # moves from elsewhere (a Hub engine) instead of our search
        self.session = Session(config.role)
        self._clock = clock
        self._rng = random.Random(config.seed)
        self._cancel = threading.Event()
        self._events: list[PlayerEvent] = []
        self._game: _Game | None = None
        self._games = 0  # games started (follower) or offered (initiator)
        self._turn_since = clock()
        self._requested_at = self._turn_since  # when our pending GAMEREQ was (re)sent
        self.games_begun = 0  # games that started (GAMEACC code 0)
        self.games_finished = 0  # games whose GAMEEND exchange was completed
        self._finished = False
        self._closing: StopCode | None = None  # our unasked GAMEEND waits for its answer
        self._violations = 0  # in a row
        self._ended_at = 0.0  # when our GAMEEND (or our forced one) went out
        self._late_answer = False  # its answer was given up on: one late GAMEEND is swallowed
        self._habits = Habits(config.role.other.value)  # dialects named so far
        self.outcome: str | None = None  # why the session ended, once it has
        self.ok = True  # False if it ended without playing what was asked (refused)

    # ------------------------------------------------------------------ state

    @property
    def role(self) -> Role:
        return self.config.role

    @property
    def done(self) -> bool:
        """The session is over: nothing more will be sent or expected."""
        return self._finished or self.session.phase is Phase.STOPPED

    @property
    def current_game(self) -> int | None:
        """The number of the game being played (moves or its GAMEEND exchange), else None."""
        phase = self.session.phase
        if self._game is None or not (phase.game_running or phase is Phase.ENDING):
            return None
        return self._game.number

    @property
    def position(self) -> Position | None:
        return self._game.position if self._game is not None else None

    def now(self) -> float:
        """The player's clock (the one :meth:`deadline` and :meth:`poll` speak of)."""
        return self._clock()

    def deadline(self) -> float | None:
        """When :meth:`poll` has something to do (our GAMEREQ or our GAMEEND is overdue)."""
        if self.done:
            return None
        d = self.session.dialogue
        if self._closing is not None or (d.phase is Phase.ENDING and d.awaiting is not self.role):
            return self._ended_at + self.config.gameend_timeout
        if self.role is not Role.INITIATOR:
            return None
        if self.session.phase is not Phase.REQUESTED:
            return None
        return self._requested_at + self.config.answer_timeout

    def poll(self, now: float, *, repeat: bool = False) -> list[Message]:
        """Time has passed: report an overdue GAMEACC (:class:`NoAnswer`) and, with
        ``repeat``, return the GAMEREQ to send again.  The next report is a timeout later."""
        deadline = self.deadline()
        if deadline is None or now < deadline:
            return []
        if self._closing is not None or self.session.phase is Phase.ENDING:
            return self._unanswered()
        self._requested_at = now
        self._events.append(NoAnswer(self.config.answer_timeout, repeat))
        request = self.session.dialogue.pending
        if repeat and isinstance(request, GameRequest):
            return [request]  # a repeat: the dialogue already has it
        return []

    def _unanswered(self) -> list[Message]:
        """Our GAMEEND had no answer in time (GWD's habit): taken as answered, stop code 0."""
        self._late_answer = True
        if self._closing is not None:
            self._habit(GAMEEND_UNANSWERED)
            return self._closed(StopCode.CONTINUE, answered=True)
        self._handle(silence_as_answer(self.session))
        return self._after()

    def hung_up_for_answer(self) -> bool:
        """The peer hung up while our GAMEEND with stop code 1 waited for its answer (an
        engine that never answers one): it was told to stop and did.  True if so; the
        silence is then the answer and the session is over."""
        if not leaving_answers(self.session):
            return False
        self._unanswered()
        return True

    def _habit(self, habit: str) -> None:
        text = self._habits.note(habit)
        if text is not None:
            self._note(text)

    def events(self) -> list[PlayerEvent]:
        out, self._events = self._events, []
        return out

    # ------------------------------------------------------------------ input

    def start(self) -> list[Message]:
        """What to send once the link is up: the first GAMEREQ of an initiator."""
        self._turn_since = self._clock()
        if self.role is Role.INITIATOR and self.session.phase is Phase.IDLE and not self._games:
            return self._offer()
        return []

    def receive(self, msg: Message) -> list[Message]:
        """Take one message from the peer; return the messages to send, in order.

        A violation is answered as docs/engine.md says; :class:`PeerError` only after
        :data:`MAX_VIOLATIONS` in a row.
        """
        self._turn_since = self._clock()
        peer = self.role.other
        if isinstance(msg, Chat):
            self._note(f"chat from the {peer}: {msg.text}")
            return []
        if self._late_answer:
            self._late_answer = False
            if late_answer(self.session, msg):
                self._note(f"the {peer}'s late answer to our GAMEEND swallowed")
                return []
        if isinstance(msg, GameEnd) and self.session.phase is Phase.IDLE and self._closing is None:
            # Someone closes a game we do not have (a bridge or director that restarted
            # makes sure no old game is open): answer it, nothing is wrong.
            self._note(f"the {peer} closed a game we do not have (GAMEEND while idle): answered")
            return [GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE)]
        if self._closing is not None:
            if isinstance(msg, GameEnd):
                return self._closed(msg.stop)
            if not (isinstance(msg, GameRequest) and self.role is Role.FOLLOWER):
                return self._violation(
                    f"{peer} sent {msg.NAME} before answering our GAMEEND (ignored)", None
                )
            self._closing = None  # a new game instead of the answer: fine
        try:
            events = self.session.receive(msg)
        except DuplicateMessageError as exc:
            self._note(f"ignored: {exc}", logging.WARNING)
            return []
        except DialogueError as exc:
            return self._violation(str(exc), msg)
        out: list[Message] = []
        if isinstance(msg, GameRequest):
            out += self._answer_request(msg)
        elif isinstance(msg, Move):
            illegal = self._apply_move(msg)
            if illegal is not None:
                return self._violation(illegal, msg)
        elif isinstance(msg, BackRequest):
            out += self._answer_back_request(msg)
        elif isinstance(msg, GameEnd) and self.session.must_answer is msg:
            out += self._send(GameEnd(reason=EndReason.NONE, stop=self._stop_wish()))
        self._violations = 0
        self._handle(events)
        return out + self._after()

    def invalid(self, reason: str) -> list[Message]:
        """The peer sent something that is not a DXP message; a violation like any other."""
        self._turn_since = self._clock()
        return self._violation(f"{self.role.other} sent an invalid message: {reason}", None)

    def cancel(self) -> None:
        """Stop a running search at once (thread-safe); every later search is cancelled too."""
        self._cancel.set()

    def abandon(self) -> list[Message]:
        """Leaving (a signal): end the game and the session if it is our move to do so."""
        phase = self.session.phase
        if phase.game_running and self.session.our_turn:
            return self._send(GameEnd(reason=EndReason.NONE, stop=StopCode.STOP))
        if phase is Phase.ENDING and self.session.must_answer is not None:
            return self._send(GameEnd(reason=EndReason.NONE, stop=StopCode.STOP))
        return []

    # ------------------------------------------------------------------ helpers

    def _note(self, text: str, level: int = logging.INFO) -> None:
        self._events.append(Note(text, level))

    def _violation(self, reason: str, msg: Message | None) -> list[Message]:
        """Tell the peer why, close the game it or we believe runs, and stay ready.

        ``msg`` is the offending message, ``None`` when it is only to be counted (ignored
        while our GAMEEND waits for its answer, or not a DXP message at all).
        """
        self._violations += 1
        peer = self.role.other
        if self._violations >= MAX_VIOLATIONS:
            raise PeerError(
                f"{peer} broke the protocol {self._violations} times in a row, last: {reason}",
                side=peer.value,
                farewell=make_chat(
                    f"{self.config.name}: giving up after {self._violations} protocol "
                    f"violations in a row; last: {reason}"
                ),
            )
        self._note(reason, logging.WARNING)
        if self._closing is not None:
            return []  # counted, not answered: the peer is still to answer our GAMEEND
        out: list[Message] = [make_chat(f"{self.config.name}: {reason}")]
        phase = self.session.phase
        if phase.game_running:
            stop = self._stop_wish()
            self._abandon_game(reason)
        elif isinstance(msg, _GAME_MESSAGES) and phase in (Phase.IDLE, Phase.REQUESTED):
            stop = StopCode.CONTINUE  # the peer's game only: ours, if any, is not touched
        else:
            return out
        out.append(GameEnd(reason=EndReason.NONE, stop=stop))
        self._ended_at = self._clock()
        if isinstance(msg, GameEnd):
            # Our GAMEEND answers the peer's: nothing more to wait for.
            self._closing = stop
            return out + self._closed(msg.stop, answered=True)
        self._closing = stop
        return out

    def _abandon_game(self, reason: str) -> None:
        """End the running game on our side at once: ``*``, and a fresh dialogue."""
        game = self._game
        our = self.session.our_colour
        assert game is not None and our is not None
        plies = self.session.dialogue.plies
        self._events.append(GameOver(game.number, "*", f"abandoned: {reason}", plies, our))
        self.session = Session(self.role)

    def _closed(self, their_stop: StopCode, *, answered: bool = False) -> list[Message]:
        """The GAMEEND exchange we forced is complete: stop, offer, or wait, as due."""
        ours = self._closing
        assert ours is not None
        self._closing = None
        if not answered:
            self._violations = 0
            self._note(f"the {self.role.other} answered our GAMEEND")
        if StopCode.STOP in (ours, their_stop):
            if ours is their_stop:
                who = "both sides"
            else:
                who = f"the {self.role if ours is StopCode.STOP else self.role.other}"
            self._finished = True
            self.outcome = f"GAMEEND stop code 1 from {who}"
            return []
        request = self.session.dialogue.pending
        if self.role is Role.INITIATOR and isinstance(request, GameRequest):
            self._requested_at = self._clock()
            return [request]  # the peer closed its game; now it can take ours
        return self._after()

    def _send(self, msg: Message) -> list[Message]:
        """Check our own message against the dialogue (a violation here is our bug)."""
        self._handle(self.session.send(msg))
        if isinstance(msg, GameEnd):
            self._ended_at = self._clock()
        return [msg]

    def _handle(self, events: list[DialogueEvent]) -> None:
        for event in events:
            if isinstance(event, HabitSeen):
                self._habit(event.habit)
            elif isinstance(event, GameStarted):
                self._begin(event)
            elif isinstance(event, GameRefused):
                self._note(
                    f"the follower refused game {self._games} (GAMEACC code {event.code.value})",
                    logging.WARNING,
                )
                if event.code is not AcceptCode.REFUSE_THIS_GAME:
                    self.ok = False
            elif isinstance(event, TakeBack):
                assert self._game is not None
                del self._game.positions[event.ply + 1 :]
                self._note(
                    f"take-back to move {event.move_number}, {colour_name(event.to_move)} "
                    f"to move (asked by the {event.requested_by})"
                )
            elif isinstance(event, GameEnded):
                self._end(event)

    def _after(self) -> list[Message]:
        """Whatever is due now: our move, the next GAMEREQ, or nothing."""
        phase = self.session.phase
        if phase is Phase.STOPPED:
            if self.outcome is None:
                self.outcome = self.session.dialogue.stop_reason
            return []
        if phase.game_running and self.session.our_turn:
            return self._play()
        if self._closing is not None:
            return []  # the peer is still to answer our GAMEEND
        if phase is Phase.IDLE and self.role is Role.INITIATOR and not self._finished:
            if self._games < self.config.games:
                return self._offer()
            # Only a refused last game (GAMEACC code 2) gets here: the last game's GAMEEND
            # exchange always stops the session.
            self._finished = True
            self.ok = False
            self.outcome = f"the follower refused game {self._games}; no games are left"
        return []

    # ------------------------------------------------------------------ games

    def _offer(self) -> list[Message]:
        self._games += 1
        first = self.config.colour
        colour = first if self._games % 2 == 1 else first.other
        request = GameRequest(
            name=self.config.name,
            follower_colour=colour,
            minutes=self.config.minutes,
            moves=self.config.moves,
        )
        self._requested_at = self._clock()
        return self._send(request)

    def _answer_request(self, request: GameRequest) -> list[Message]:
        if request.version != 1:
            return self._send(GameAccept(name=self.config.name, code=AcceptCode.VERSION_DIFFERS))
        try:
            position_from_gamereq(request)
        except RulesError as exc:
            self._note(f"refused a game from an impossible position: {exc}", logging.WARNING)
            return self._send(GameAccept(name=self.config.name, code=AcceptCode.REFUSE_THIS_GAME))
        return self._send(GameAccept(name=self.config.name, code=AcceptCode.ACCEPT))

    def _begin(self, event: GameStarted) -> None:
        if self.role is Role.FOLLOWER:
            self._games += 1
            opponent = event.request.name
        else:
            opponent = event.accept.name
        self.games_begun += 1
        self._game = _Game(self._games, [position_from_gamereq(event.request)])
        colour = self.session.our_colour
        assert colour is not None
        self._events.append(GameBegun(self._games, colour, opponent))

    def _apply_move(self, msg: Move) -> str | None:
        """Play the peer's move on our board; if it is illegal, say why (nothing changes)."""
        game = self._game
        assert game is not None
        try:
            move = match_dxp_move(game.position, msg)
        except IllegalMoveError as exc:
            return f"{self.role.other} played {exc} (position {game.position.to_fen()})"
        game.positions.append(game.position.play(move))
        return None

    def _answer_back_request(self, msg: BackRequest) -> list[Message]:
        if self.session.must_answer is not msg:
            return []  # void: it crossed our GAMEEND
        if self.config.backreq is BackPolicy.ACCEPT:
            return self._send(BackAccept(code=BackCode.ACCEPTED))
        return self._send(BackAccept(code=BackCode.NOT_SUPPORTED))

    def _limit_reached(self) -> bool:
        request = self.session.dialogue.game_request
        return bool(request and request.moves and self.session.dialogue.plies >= 2 * request.moves)

    def _stop_wish(self) -> StopCode:
        if self.role is Role.INITIATOR and self._games >= self.config.games:
            return StopCode.STOP
        return StopCode.CONTINUE

    def _play(self) -> list[Message]:
        game = self._game
        assert game is not None
        position = game.position
        if position.is_lost():
            return self._send(GameEnd(reason=EndReason.RESIGN, stop=self._stop_wish()))
        if self._limit_reached():
            return self._send(GameEnd(reason=EndReason.DRAW, stop=self._stop_wish()))
        if self._mover is not None:
            try:
                move: LegalMove | None = self._moved(game)
            except MoverFailed as exc:  # no move: end the game and the session
                # Logged below error level: the session's result line is the one error.
                self._note(f"ending the game and the session: {exc}", logging.INFO)
                self.ok, self.outcome = False, str(exc)
                return self._send(GameEnd(reason=EndReason.NONE, stop=StopCode.STOP))
        else:
            move = choose_move(
                position,
                self.config.depth,
                self._rng,
                cancel=self._cancel,
                deadline=self._deadline(game),
                clock=self._clock,
            )
        assert move is not None  # is_lost() was false
        spent = max(0.0, self._clock() - self._turn_since)
        game.used += spent
        game.moved += 1
        msg = to_dxp_move(move, min(_MAX_SECONDS, round(spent)))
        out: list[Message] = []
        thinking = getattr(self._mover, "thinking", None) if self.config.tell_thinking else None
        if isinstance(thinking, Thinking):
            out += self._send(make_chat(thinking.to_chat()))
        out += self._send(msg)
        game.positions.append(position.play(move))
        return out

    def _moved(self, game: _Game) -> LegalMove:
        """Our move from the move source, told the GAMEREQ's clock as it stands."""
        assert self._mover is not None
        request = self.session.dialogue.game_request
        left = moves_left = None
        if request is not None and request.minutes:
            spent = game.used + max(0.0, self._clock() - self._turn_since)
            gained = self.config.increment * game.moved
            left = max(0.0, float(request.minutes) * 60 + gained - spent)
        if request is not None and request.moves:
            moves_left = max(1, request.moves - self.session.dialogue.plies // 2)
        return self._mover.choose(
            game.number,
            game.positions,
            seconds_left=left,
            moves_left=moves_left,
            cancel=self._cancel,
        )

    def _deadline(self, game: _Game) -> float | None:
        """When this move's search must end: a share of the time left on our clock."""
        request = self.session.dialogue.game_request
        if request is None or not request.minutes:
            return None
        left = max(0.0, float(request.minutes) * 60 - game.used)
        return self._turn_since + left / TIME_SHARE

    def _end(self, event: GameEnded) -> None:
        game = self._game
        assert game is not None
        position = game.position
        reason = event.initial.reason
        colour = event.colour
        name = colour_name(colour)
        claimed = gameend_result(reason, colour, name)
        if position.is_lost():
            result = _win_for(position.turn.other)
            why = f"{colour_name(position.turn)} has no legal move"
        elif reason is EndReason.DRAW and self._limit_reached():
            result, why = "1-1", "draw: move limit reached"
        elif claimed is not None:
            result, why = claimed.result, claimed.reason
        else:
            result, why = "*", f"no result: {name} ended the game"
        our = self.session.our_colour
        assert our is not None
        self.games_finished += 1
        self._events.append(GameOver(game.number, result, why, event.plies, our))


def _win_for(colour: Colour) -> str:
    return "2-0" if colour is Colour.WHITE else "0-2"
