"""Game records: what a referee saw, one :class:`GameRecord` per game.

:class:`Recorder` builds records from the referee's verdicts, sans-I/O like the referee;
:mod:`dxserial.game.pdn` turns them into PDN text and files and back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from dxserial.draughts import START_FEN, Position
from dxserial.errors import DxSerialError
from dxserial.game.clock import TimeControl
from dxserial.game.referee import GameResult, Verdict, ViolationKind
from dxserial.game.thinking import Thinking
from dxserial.protocol.dxp_moves import position_from_gamereq
from dxserial.protocol.messages import Colour, Message, escape
from dxserial.protocol.session import GameAbandoned, GameStarted, MovePlayed, Role, TakeBack

__all__ = [
    "GAME_TYPE",
    "MAX_LINE",
    "RESULTS",
    "VIOLATION_PREFIX",
    "GameRecord",
    "PdnError",
    "PlyClock",
    "RecordError",
    "RecordedMove",
    "Recorder",
    "time_control_tag",
]


GAME_TYPE = "20"  # PDN GameType of international draughts (10x10)
MAX_LINE = 80
RESULTS = ("2-0", "1-1", "0-2", "*")
VIOLATION_PREFIX = "violation: "  # comments that report a violation start with this
#: Referee notes that repeat what the tags or the board already say: the annotated form only.
NOTE_ONLY = ("game over: ", "move limit exceeded: ")


class RecordError(DxSerialError):
    """A game record could not be written or read (disk full, permission, missing file)."""


class PdnError(RecordError):
    """PDN text that cannot be read; says where (line) and what."""


@dataclass
class RecordedMove:
    """One ply: its PDN text and, from a live game, the raw DXP MOVE (escaped)."""

    text: str
    colour: Colour
    move_number: int
    dxp: str | None = None
    legal: bool = True


@dataclass(frozen=True)
class PlyClock:
    """The director's clock after one ply: both sides' seconds left, what it charged the
    mover, and what the mover's MOVE said it used (DXP's informational seconds)."""

    mover: Colour
    white: float
    black: float
    charged: float
    reported: int

    def left(self, colour: Colour) -> float:
        return self.white if colour is Colour.WHITE else self.black


@dataclass
class GameRecord:
    """One game.  ``comments[k]`` are the comments after ply ``k`` (0: before the first);
    ``notes[k]`` the commentary only the annotated form writes; ``clocks[k]`` the director's
    clock after ply ``k`` (only when it kept one)."""

    white: str = "?"
    black: str = "?"
    event: str = "?"
    site: str = "?"
    date: str = ""
    round: str = "?"
    game_number: int = 1
    started: datetime | None = None
    start_fen: str = START_FEN
    moves: list[RecordedMove] = field(default_factory=list)
    comments: dict[int, list[str]] = field(default_factory=dict)
    result: str = "*"
    termination: str = ""
    tags: dict[str, str] = field(default_factory=dict)  # other tags read from a file
    notes: dict[int, list[str]] = field(default_factory=dict)
    clocks: dict[int, PlyClock] = field(default_factory=dict)
    #: What the mover said of the move that made ply ``k`` (Hub engines only).
    thinking: dict[int, Thinking] = field(default_factory=dict)

    @property
    def plies(self) -> int:
        return len(self.moves)

    @property
    def start_position(self) -> Position:
        return Position.from_fen(self.start_fen)

    @property
    def custom_start(self) -> bool:
        """True if the game does not start from the normal start position (needs a FEN tag)."""
        return self.start_position != Position.start()

    def add_comment(self, text: str, ply: int | None = None, *, note: bool = False) -> None:
        """A comment after ``ply`` (default: after the last move so far); ``note``: commentary
        that only the annotated form writes (it repeats what tags or clocks say)."""
        at = self.plies if ply is None else ply
        (self.notes if note else self.comments).setdefault(at, []).append(text)

    def add_clock(self, reading: PlyClock) -> None:
        """The director's clock after the last move so far."""
        self.clocks[self.plies] = reading

    def violations(self) -> list[tuple[int, str]]:
        """(ply, text) of the comments that report a violation."""
        return [
            (ply, text[len(VIOLATION_PREFIX) :])
            for ply, texts in sorted(self.comments.items())
            for text in texts
            if text.startswith(VIOLATION_PREFIX)
        ]

    def truncate(self, plies: int) -> None:
        """Drop the moves after ``plies`` (a take-back); their comments move to ``plies``."""
        del self.moves[plies:]
        for texts in (self.comments, self.notes):
            for ply in sorted(k for k in texts if k > plies):
                texts.setdefault(plies, []).extend(texts.pop(ply))
        for ply in [k for k in self.clocks if k > plies]:
            del self.clocks[ply]
        for ply in [k for k in self.thinking if k > plies]:
            del self.thinking[ply]


def time_control_tag(seconds: float, moves: int) -> str:
    """PGN's TimeControl: ``moves/seconds`` for a period of that many moves (the same again
    after it), ``seconds`` for the whole game, ``-`` without a clock (the GAMEREQ's forms of
    :meth:`~dxserial.game.clock.TimeControl.tag`)."""
    return TimeControl(seconds, moves).tag()


# --------------------------------------------------------------------------- recorder


def _now() -> datetime:
    return datetime.now().astimezone()


class Recorder:
    """Turns the (message, sender, verdict) stream of a :class:`~dxserial.game.referee.Referee`
    into finished :class:`GameRecord`\\ s: :meth:`observe` returns one when a GAMEEND
    exchange ends a game, :meth:`abort` when the caller gives up on a running game (do
    that before feeding a new connection's messages: a new game replaces an open record).
    """

    def __init__(
        self, *, event: str = "DXP game", site: str = "?", clock: Callable[[], datetime] = _now
    ) -> None:
        self.event = event
        self.site = site
        self._clock = clock
        self._current: GameRecord | None = None
        self._decided: GameResult | None = None
        self._started = 0  # games recorded so far: each file gets its own number

    @property
    def current(self) -> GameRecord | None:
        """The record of the game being played, if any."""
        return self._current

    def observe(self, msg: Message, sender: Role, verdict: Verdict) -> GameRecord | None:
        """Add what ``verdict`` says about ``msg`` to the record; return it if the game ended."""
        for event in verdict.events:
            if isinstance(event, GameStarted):
                self._start(event, verdict)
            elif isinstance(event, TakeBack) and self._current is not None:
                self._current.truncate(event.ply)
                self._decided = None
        record = self._current
        if record is None:
            return None
        if verdict.applied and verdict.ply is not None and verdict.colour is not None:
            move_number = next(
                (e.move_number for e in verdict.events if isinstance(e, MovePlayed)), 0
            )
            record.moves.append(
                RecordedMove(
                    text=verdict.pdn or "?",
                    colour=verdict.colour,
                    move_number=move_number,
                    dxp=escape(msg.wire),
                    legal=verdict.ok,
                )
            )
        if not verdict.ok:
            not_played = not verdict.applied and verdict.kind is ViolationKind.ILLEGAL_MOVE
            suffix = " (not played)" if not_played else ""
            record.add_comment(f"{VIOLATION_PREFIX}{verdict.who}: {verdict.problem}{suffix}")
        for note in verdict.notes:
            record.add_comment(note, note=note.startswith(NOTE_ONLY))
        if verdict.result is not None:
            self._decided = verdict.result
        if verdict.game_ended is not None and verdict.result is not None:
            return self._finish(verdict.result)
        abandoned = next((e for e in verdict.events if isinstance(e, GameAbandoned)), None)
        if abandoned is not None:
            return self.abort(abandoned.reason)
        return None

    def abort(self, reason: str) -> GameRecord | None:
        """End the running game without a GAMEEND exchange (connection lost, match over).

        The result is ``*`` unless the board had already decided the game (the side to
        move has no legal move): then that result stands and ``reason`` is noted.
        """
        if self._current is None:
            return None
        if self._decided is not None and self._decided.result != "*":
            self._current.add_comment(f"game cut short: {reason}")
            return self._finish(self._decided)
        return self._finish(GameResult("*", reason))

    def _start(self, event: GameStarted, verdict: Verdict) -> None:
        request, accept = event.request, event.accept
        names = {Role.INITIATOR: request.name or "?", Role.FOLLOWER: accept.name or "?"}
        white = Role.FOLLOWER if request.follower_colour is Colour.WHITE else Role.INITIATOR
        started = self._clock()
        self._decided = verdict.result
        self._started += 1
        self._current = GameRecord(
            white=names[white],
            black=names[white.other],
            event=self.event,
            site=self.site,
            date=started.strftime("%Y.%m.%d"),
            round=str(self._started),
            game_number=self._started,
            started=started,
            start_fen=position_from_gamereq(request).to_fen(),
        )
        self._current.tags["TimeControl"] = time_control_tag(60.0 * request.minutes, request.moves)

    def _finish(self, result: GameResult) -> GameRecord:
        record = self._current
        assert record is not None
        record.result = result.result
        record.termination = result.reason
        self._current = None
        self._decided = None
        return record
