"""What a match game is played under, and the conductor's rulings that need no state.

The settings (:class:`MatchConfig`, :class:`GameStart`, :class:`FailurePolicy`) and the
pure decisions of :class:`~dxserial.match.machine.GameConductor`: a GAMEEND's result,
a forfeit, a clock started where the link delivered the move.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from dataclasses import dataclass, field
from pathlib import Path

from dxserial.drive.actions import Log
from dxserial.engine.player import DEFAULT_NAME
from dxserial.game.adjudication import Adjudication
from dxserial.game.arbiter import ArbiterSettings
from dxserial.game.clock import GameClock, TimeControl
from dxserial.game.referee import GameResult, Referee, false_claim_scored, gameend_result
from dxserial.match.engine import Engine
from dxserial.protocol.dialects import DEFAULT_GAMEEND_TIMEOUT
from dxserial.protocol.messages import Colour, EndReason, Piece, colour_name

__all__ = [
    "FailurePolicy",
    "GameStart",
    "MatchConfig",
    "claim_result",
    "clean_name",
    "clock_from_delivery",
    "failure_result",
]


#: How long a new engine connection is listened to before the director's first GAMEREQ.
LISTEN_FIRST = 0.3


class FailurePolicy(enum.StrEnum):
    STOP = "stop"
    CONTINUE = "continue"


@dataclass(frozen=True)
class MatchConfig:
    games: int = 2
    #: The time control the GAMEREQ offers: minutes per player for ``time_moves`` moves
    #: (0: for the whole game; None: as many as the move limit, where DXP lets an engine
    #: end the game anyway); the director's clock reads it so (``arbiter.time_control``).
    minutes: int = 5
    time_moves: int | None = None
    #: The director's move limit: a draw after this many full moves (0: none).
    moves: int = 75
    pdn_dir: Path = Path("games")
    on_engine_failure: FailurePolicy = FailurePolicy.STOP
    move_timeout: float = 60.0
    connect_timeout: float = 30.0
    name: str = DEFAULT_NAME
    event: str = "dxserial match"
    log_messages: bool = False
    #: PDN White/Black: the engines' labels (a tournament's names) instead of their own names.
    label_players: bool = False
    #: Draw rules, false claims, the director's clock (see dxserial.game.arbiter).
    arbiter: ArbiterSettings = field(default_factory=ArbiterSettings)
    #: Where every game starts (None: the normal start position).
    start: GameStart | None = None
    #: Seconds an engine may leave our GAMEEND unanswered before its silence is the answer.
    gameend_timeout: float = DEFAULT_GAMEEND_TIMEOUT
    #: Seconds a new connection is listened to before the first GAMEREQ: an engine set up
    #: as initiator sends its own at once (see dxserial.match.initiators).
    listen_first: float = LISTEN_FIRST
    #: PDN with the referee's notes, the clock as prose instead of commands (docs/pdn.md).
    pdn_notes: bool = False
    #: Time controls only Hub engines are told of (``level``; not in a GAMEREQ): a Fischer
    #: increment in seconds, or seconds per move (then ``minutes`` is not the clock's).
    increment: float = 0.0
    move_time: float | None = None
    #: Games ended on the engines' scores (Hub engines only; off by default).
    adjudication: Adjudication = field(default_factory=Adjudication)

    def control(self) -> TimeControl | None:
        """The director's clock for a game: the arbiter's reading of the GAMEREQ, with the
        increment, or the time per move instead."""
        control = self.arbiter.control(self.minutes, self.period)
        if self.move_time is not None:
            if self.arbiter.time_control == "off":
                return None
            return TimeControl(self.move_time, 0, self.arbiter.clock_margin, per_move=True)
        if control is not None and self.increment:
            control = dataclasses.replace(control, moves=0, increment=self.increment)
        return control

    @property
    def period(self) -> int:
        """The GAMEREQ's moves: ``time_moves``, by default the move limit."""
        return self.moves if self.time_moves is None else self.time_moves


@dataclass(frozen=True)
class GameStart:
    """Where a game starts: the normal start, or an opening's position (GAMEREQ form B)."""

    position: tuple[Piece, ...] | None = None
    to_move: Colour | None = None
    label: str = ""  # the opening as the user wrote it, for the PDN and the display


def clock_from_delivery(
    clock: GameClock, engine: Engine, colour: Colour, move: bytes | None
) -> Log | None:
    """Start ``colour``'s running clock where the link delivered it ``move``, the move it
    answers (the clock was started when the move was sent); the log line if it did."""
    if clock.running is colour and engine.delivered is not None and move is not None:
        raw, at = engine.delivered
        if raw == move and at > clock.since:
            text = (f"{colour_name(colour)}'s clock from the delivery, "
                    f"{1000 * (at - clock.since):.1f} ms after the send")
            clock.start(colour, at)
            return Log(logging.DEBUG, text)
    return None


def claim_result(
    referee: Referee, reason: EndReason, colour: Colour, title: str, on_false_claim: str
) -> tuple[GameResult, EndReason]:
    """The result of a GAMEEND an engine sent during the game, and the reason its opponent
    is told (a false claim scored as a loss resigns)."""
    who = f"{colour_name(colour)} {title}"
    claimed = referee.claim_result(reason, colour, who)
    result = referee.decided or claimed or gameend_result(reason, colour, who) or GameResult(
        "*", f"no result: {who} ended the game without a reason"
    )
    result = false_claim_scored(result, colour, on_false_claim)
    told = reason
    if result.false_claim and result.winner is colour.other:
        told = EndReason.RESIGN
    return result, told


def failure_result(white: Engine, black: Engine) -> GameResult:
    """The result when an engine failed: its opponent wins by forfeit (``*`` if both)."""
    failed = [e for e in (white, black) if e.failure]
    if not failed:
        return GameResult("*", "match interrupted")
    if len(failed) == 2:
        return GameResult("*", f"both engines failed: {white.failure}; {black.failure}")
    loser = failed[0]
    colour = Colour.WHITE if loser is white else Colour.BLACK
    return GameResult.win_for(
        colour.other, f"{colour_name(colour)} {loser.title} forfeits: {loser.failure}"
    )


def clean_name(name: str, fallback: str) -> str:
    name = name.strip()
    return name[:32] if name else fallback
