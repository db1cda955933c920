"""A DXP engine as a Hub engine, sans-I/O: Hub lines and DXP messages in, actions out.

``dxserial hub ENDPOINT`` runs this machine (:mod:`dxserial.hub.runner`):
a Hub GUI or bot talks to it on stdin/stdout, and it is the DXP initiator towards the
engine at ENDPOINT.  Each ``go`` is played through that engine:

* the ``pos`` continues the running game when it is the game's last position plus one
  move of the GUI's side: that move goes to the engine as a MOVE;
* otherwise the running game is ended (GAMEEND) and a new one starts with a GAMEREQ of the
  ``pos`` (form A from the start position, else form B), the engine playing the side to
  move.  ``level`` gives that GAMEREQ's minutes and moves (:mod:`dxserial.hub.clock`),
  and the engine is held to that clock, no other;
* the engine's MOVE, checked on the board, is answered as ``done move=...``; its CHAT
  becomes an ``info text=...`` line.

dxserial answers a ``go`` with a move of its own only when the engine had the position and
its time and gave no legal move (a ``stop``, its clock run out, an illegal MOVE, a GAMEEND,
a refused GAMEREQ), and says so (``info text=`` to the client, a warning in the log).
A ``go`` whose game cannot start yet (the previous game's GAMEEND not answered: an engine
may answer it only when its search is over) waits for the answer, as long as the stopped
search's clock and ``answer_timeout`` allow and within the client's own clock; then it
starts over on a fresh connection (:class:`StartOver`).  Either is said in the log.  When
the engine ends a game at the GAMEREQ's move limit while a ``go`` waits, a new game starts
from that position.  ``new-game`` and ``quit`` (or end of input) end the running game
cleanly; quit's GAMEEND carries stop code 1.  ``go ponder`` waits: ``ponder-hit`` plays it
as a ``go``, ``stop`` answers with a move of dxserial's own that the client throws away,
and the DXP game is not touched.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial import __version__
from dxserial.draughts import IllegalMoveError, Position
from dxserial.engine.search import choose_move
from dxserial.hub.clock import ClockOffer, EngineClock, game_clock, offer_for
from dxserial.hub.clock import say_seconds as _seconds
from dxserial.protocol import hub
from dxserial.protocol.dxp_moves import describe_dxp_move, match_dxp_move, to_dxp_move
from dxserial.protocol.messages import (
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
)

__all__ = [
    "AdapterConfig",
    "HubAdapter",
    "Log",
    "SendDxp",
    "SendHub",
    "StartOver",
    "Stop",
    "Withdraw",
    "game_clock",
]

#: Seconds an engine gets to answer our GAMEEND or GAMEREQ before we go on without it.
ANSWER_TIMEOUT = 10.0
#: The shortest wait for the first answer of an engine that has said nothing yet: a
#: GAMEREQ takes about a second to cross a 2400-baud NULMODEM line.
SILENT_MIN = 3.0
#: Depth of dxserial's own search when the engine gave no move.
FALLBACK_DEPTH = 2


def _budget(level: hub.Level) -> float | None:
    """Seconds of the client's own time one go may take (None: the level sets none)."""
    if level.move_time is not None:
        return level.move_time
    if level.time is not None:
        return (level.time + level.inc) / 2
    return None


@dataclass(frozen=True)
class SendHub:
    line: hub.HubLine


@dataclass(frozen=True)
class SendDxp:
    message: Message


@dataclass(frozen=True)
class Log:
    text: str
    level: int = logging.INFO


@dataclass(frozen=True)
class Stop:
    """Leave: exit ``code`` with the one-line ``message``."""

    code: int
    message: str


@dataclass(frozen=True)
class StartOver:
    """Close the connection to the engine and open a fresh one; then call
    :meth:`HubAdapter.reconnected` (or :meth:`HubAdapter.link_lost` if it cannot be had)."""

    why: str


@dataclass(frozen=True)
class Withdraw:
    """Stop sending what waits for the engine (a GAMEREQ a silent line never took)."""


Action = SendHub | SendDxp | Log | Stop | StartOver | Withdraw


@dataclass(frozen=True)
class AdapterConfig:
    name: str = "dxserial hub"
    minutes: int = 5  # GAMEREQ minutes when level gives no clock (depth, nodes, infinite)
    grace: float = 2.0  # seconds past the engine's clock before it is out of time
    answer_timeout: float = ANSWER_TIMEOUT


class _Phase(enum.Enum):
    IDLE = "no game"
    REQUESTED = "GAMEREQ sent"
    PLAYING = "playing"
    CLOSING = "our GAMEEND sent"
    RECONNECTING = "opening a fresh connection"
    STOPPED = "stopped"


@dataclass
class _Game:
    engine: Colour  # the engine's side
    clock: EngineClock
    moves_limit: int  # the GAMEREQ's moves field (0: none)
    positions: list[Position] = field(default_factory=list)

    @property
    def position(self) -> Position:
        return self.positions[-1]

    @property
    def at_limit(self) -> bool:
        """The GAMEREQ's moves are played (an engine may end the game here)."""
        return bool(self.moves_limit) and len(self.positions) - 1 >= 2 * self.moves_limit - 1


class HubAdapter:
    """One Hub client and one DXP engine; see the module docstring."""

    def __init__(self, config: AdapterConfig | None = None) -> None:
        self.config = config or AdapterConfig()
        self.phase = _Phase.IDLE
        self.level = hub.Level()
        self._pos: hub.PosCommand | None = None
        self._game: _Game | None = None
        self._request: GameRequest | None = None
        self._offer: ClockOffer | None = None
        self._go_target: Position | None = None  # a go waits for the engine's move
        self._go_deadline: float | None = None  # set only while the engine has the position
        self._thinking_since: float | None = None
        self._phase_deadline: float | None = None  # GAMEREQ or GAMEEND answer due
        self._wait_limit: float | None = None  # a waiting go starts over from here
        self._after_close: Callable[[float], list[Action]] | None = None
        self._held_end: GameEnd | None = None  # our GAMEEND, held until the GAMEACC
        self._started_over = False  # this go already had a fresh connection
        self._pondering = False  # 'go ponder' waits for ponder-hit or stop
        self.engine_name = ""
        self.moves_played = 0  # engine moves handed to the client
        self.fallbacks = 0  # moves dxserial chose itself
        self.fresh_connections = 0
        #: The engine said something on this connection: a fresh one may help it; a line
        #: that never spoke is not helped by one (nothing there, another speed).
        self._heard = False

    # ------------------------------------------------------------------ clock

    def next_deadline(self) -> float | None:
        times = [
            t
            for t in (self._go_deadline, self._phase_deadline, self._wait_limit)
            if t is not None
        ]
        return min(times) if times else None

    def poll(self, now: float) -> list[Action]:
        out: list[Action] = []
        if self._wait_limit is not None and now >= self._wait_limit:
            self._wait_limit = None
            if self.phase in (_Phase.CLOSING, _Phase.REQUESTED) and self._go_target is not None:
                self._phase_deadline = None
                return self._unanswered(now)
        if self._phase_deadline is not None and now >= self._phase_deadline:
            self._phase_deadline = None
            if self._go_target is not None and self.phase in (_Phase.CLOSING, _Phase.REQUESTED):
                return self._unanswered(now)
            if self.phase is _Phase.CLOSING:
                out.append(Log("the engine did not answer our GAMEEND; going on", logging.WARNING))
                out += self._closed(now)
            elif self.phase is _Phase.REQUESTED:
                self.phase = _Phase.IDLE
        if self._go_deadline is not None and now >= self._go_deadline:
            self._go_deadline = None
            if self._go_target is not None:
                spent = now - (self._thinking_since or now)
                why = f"the engine gave no move in {_seconds(spent)} (its clock ran out)"
                out += self._no_move(why, now, error=True)
        return out

    # ------------------------------------------------------------------ hub side

    def hub_line(self, text: str, now: float) -> list[Action]:
        try:
            command = hub.parse_line(text)
            return self._hub(command, now)
        except hub.HubError as exc:
            return [
                SendHub(hub.line("error", message=str(exc))),
                Log(f"hub: {exc}", logging.WARNING),
            ]

    def hub_closed(self, now: float) -> list[Action]:
        """End of input: the client has gone; quit."""
        return self._quit(now)

    def _hub(self, command: hub.HubLine, now: float) -> list[Action]:
        name = command.command
        if name == "ping":
            return [SendHub(hub.line("pong"))]
        if name == "quit":
            return self._quit(now)
        if self._pondering:
            return self._ponder_command(name, now)
        if self._go_target is not None:
            if name == "stop":
                return self._no_move("stopped by the client", now, error=False)
            if name == "ponder-hit":
                return []
            raise hub.HubError(f"{name!r} during a search (only ping, ponder-hit and stop)")
        if name == "hub":
            return [
                SendHub(hub.line("id", name=self.config.name, version=__version__)),
                SendHub(hub.line("wait")),
            ]
        if name == "init":
            return [SendHub(hub.line("ready"))]
        if name == "pos":
            self._pos = None  # a bad pos leaves none: the next go is refused, not misplayed
            self._pos = hub.parse_pos(command)
            return []
        if name == "level":
            self.level = hub.parse_level(command)
            return []
        if name == "go" and command.first == "ponder":
            if self._pos is None:
                raise hub.HubError("go before pos")
            self._pondering = True  # the engine thinks on our time only after ponder-hit
            return []
        if name == "go":
            return self._go(now)
        if name == "new-game":
            return self._end_game(StopCode.CONTINUE, now)
        if name in ("stop", "ponder-hit", "set-param"):
            return []
        return [Log(f"hub: ignored unknown command {name!r}")]

    def _ponder_command(self, name: str, now: float) -> list[Action]:
        """``go ponder`` waits: the guessed move is played to the engine on ponder-hit; a
        stop (the guess was wrong) is answered without touching the DXP game."""
        if name == "ponder-hit":
            self._pondering = False
            return self._go(now)
        if name == "stop":
            self._pondering = False
            assert self._pos is not None
            move = choose_move(self._pos.position, FALLBACK_DEPTH)
            if move is None:
                return [SendHub(hub.line("error", message="ponder position has no legal move"))]
            return [SendHub(hub.line("done", move=hub.format_hub_move(move)))]
        raise hub.HubError(f"{name!r} during a search (only ping, ponder-hit and stop)")

    def _go(self, now: float) -> list[Action]:
        if self._pos is None:
            raise hub.HubError("go before pos")
        target = self._pos.position
        if target.is_lost():
            raise hub.HubError(f"go in a position without a legal move ({target.to_fen()})")
        self._go_target = target
        self._started_over = False
        game = self._game
        if self.phase is _Phase.PLAYING and game is not None:
            last = game.position
            if last == target and last.turn is game.engine:
                self._engine_has_it(game, now)
                return []  # the engine is already to move here
            if last.turn is not game.engine:
                for move in last.legal_moves():
                    if last.play(move) == target:
                        game.positions.append(target)
                        self._engine_has_it(game, now)
                        return [SendDxp(to_dxp_move(move))]
            return self._end_game(StopCode.CONTINUE, now, then=self._request_game)
        if self.phase in (_Phase.CLOSING, _Phase.REQUESTED, _Phase.RECONNECTING):
            self._after_close = self._request_game
            return self._wait_for_start(now)
        return self._request_game(now)

    def _wait_for_start(self, now: float) -> list[Action]:
        """This go's game cannot start yet: wait, within the client's clock."""
        if self.phase is _Phase.RECONNECTING:
            return [Log("this go waits for the fresh connection to the engine")]
        due = self._phase_deadline if self._phase_deadline is not None else now
        limit = due
        level = self.level
        if level.time is not None:  # the client's clock runs: use at most half of it
            limit = min(due, now + (level.time + level.inc) / 2)
        self._wait_limit = limit
        what = "our GAMEEND" if self.phase is _Phase.CLOSING else "our GAMEREQ"
        return [
            Log(
                f"this go waits up to {_seconds(limit - now)} for the engine to answer {what} "
                "(an engine may finish its search first); then a fresh connection"
            )
        ]

    def _unanswered(self, now: float) -> list[Action]:
        """A go waited for the engine's answer in vain: a fresh connection, once."""
        what = "our GAMEEND" if self.phase is _Phase.CLOSING else "the GAMEREQ"
        self._wait_limit = None
        if not self._heard and not self._started_over:  # a fresh connection to a silent
            # line would be another wait for nothing
            self.phase = _Phase.IDLE
            self._held_end = None
            self._game = None
            return [Withdraw(), *self._fallback(
                f"the engine did not answer {what}, and has said nothing since the connection "
                "opened: is it running, on this link type (and on a serial line at this speed: "
                "dxserial probe finds how it speaks)?", now, error=True)]
        if self._started_over:
            self.phase = _Phase.IDLE
            return self._fallback(
                f"the engine did not answer {what} on a fresh connection either", now,
                error=True,
            )
        self._started_over = True
        self.phase = _Phase.RECONNECTING
        self._held_end = None
        self._game = None
        self._after_close = self._request_game
        self.fresh_connections += 1
        why = f"the engine did not answer {what} in time: starting over on a fresh connection"
        return [Log(why, logging.WARNING), StartOver(why)]

    def reconnected(self, now: float) -> list[Action]:
        """The fresh connection is up: no game runs on it; a waiting go's game starts."""
        if self.phase is not _Phase.RECONNECTING:
            return []
        self._heard = False
        return [Log("fresh connection to the engine is up"), *self._closed(now)]

    def _request_game(self, now: float) -> list[Action]:
        target = self._go_target
        if target is None:
            return []
        offer = offer_for(self.level, self.config.minutes)
        start = target == Position.start()
        request = GameRequest(
            name=self.config.name,
            follower_colour=target.turn,
            minutes=offer.minutes,
            moves=offer.moves,
            to_move=None if start else target.turn,
            position=None if start else target.pieces(),
        )
        self._request = request
        self._offer = offer
        self.phase = _Phase.REQUESTED
        self._phase_deadline = now + self.config.answer_timeout
        if not self._heard:  # a line that never spoke: within the client's time for the go
            budget = _budget(self.level)  # (not under SILENT_MIN: a slow line's GAMEREQ)
            if budget is not None:
                self._phase_deadline = min(self._phase_deadline, now + max(budget, SILENT_MIN))
        level = logging.WARNING if offer.approximate else logging.INFO
        return [
            Log(f"GAMEREQ: {offer.describe()} (level {offer.reading})", level),
            SendDxp(request),
        ]

    def _engine_has_it(self, game: _Game, now: float) -> None:
        """The engine has the position and is to move: its clock runs from now."""
        self._thinking_since = now
        limit = game.clock.limit(self.level)
        self._go_deadline = None if limit is None else now + limit + self.config.grace

    # ------------------------------------------------------------------ dxp side

    def dxp(self, msg: Message, now: float) -> list[Action]:
        """One message from the DXP engine."""
        self._heard = True
        if isinstance(msg, Chat):
            return [SendHub(hub.info_line({"text": f"{self.engine_name or 'engine'}: {msg.text}"}))]
        phase = self.phase
        if phase is _Phase.RECONNECTING:
            return [Log(f"ignored {msg.NAME} from the old connection")]
        if phase is _Phase.CLOSING:
            if self._held_end is not None and isinstance(msg, GameAccept):
                return self._accepted_to_end(msg, now)
            if isinstance(msg, GameEnd) and self._held_end is None:
                return self._closed(now)
            return [Log(f"ignored {msg.NAME} while our GAMEEND waits for its answer")]
        if isinstance(msg, GameEnd):
            return self._their_end(msg, now)
        if isinstance(msg, BackRequest) and phase is _Phase.PLAYING:
            # A Hub client cannot take moves back: "not supported", and both go on.
            return [SendDxp(BackAccept(code=BackCode.NOT_SUPPORTED)), Log("declined a BACKREQ")]
        if phase is _Phase.REQUESTED and isinstance(msg, GameAccept):
            return self._accepted(msg, now)
        game = self._game
        theirs = game is not None and game.position.turn is game.engine
        if phase is _Phase.PLAYING and game is not None and theirs and isinstance(msg, Move):
            return self._their_move(game, msg, now)
        return [Log(f"ignored {msg.NAME} from the engine ({phase.value})", logging.WARNING)]

    def dxp_invalid(self, reason: str, now: float) -> list[Action]:
        self._heard = True
        out: list[Action] = [Log(f"the engine sent an invalid message: {reason}", logging.WARNING)]
        if self._go_target is not None and self.phase is _Phase.PLAYING:
            out += self._no_move(f"the engine sent an invalid message: {reason}", now, error=True)
        return out

    def link_lost(self, reason: str, now: float) -> list[Action]:
        text = f"lost the DXP engine: {reason}"
        out: list[Action] = [SendHub(hub.line("error", message=text))]
        self.phase = _Phase.STOPPED
        return [*out, Stop(1, text)]

    def _accepted(self, msg: GameAccept, now: float) -> list[Action]:
        self._phase_deadline = self._wait_limit = None
        self.engine_name = msg.name
        request, offer = self._request, self._offer
        if (
            msg.code is not AcceptCode.ACCEPT
            or request is None
            or offer is None
            or self._go_target is None
        ):
            self.phase = _Phase.IDLE
            return self._fallback(
                f"the engine refused the game (GAMEACC code {msg.code.value})", now
            )
        self.phase = _Phase.PLAYING
        game = _Game(request.follower_colour, EngineClock(offer), offer.moves, [self._go_target])
        self._game = game
        self._engine_has_it(game, now)
        return [Log(f"game started against {msg.name} from {self._go_target.to_fen()}")]

    def _their_move(self, game: _Game, msg: Move, now: float) -> list[Action]:
        try:
            move = match_dxp_move(game.position, msg)
        except IllegalMoveError as exc:
            return self._no_move(f"the engine played {exc}", now, error=True)
        game.positions.append(game.position.play(move))
        game.clock.spent(now - (self._thinking_since or now))
        self._go_target = self._go_deadline = self._thinking_since = None
        self.moves_played += 1
        return [
            Log(f"engine: {describe_dxp_move(msg)}", logging.DEBUG),
            SendHub(hub.line("done", move=hub.format_hub_move(move))),
        ]

    def _their_end(self, msg: GameEnd, now: float) -> list[Action]:
        """The engine ended the game: answer, and if a go waits, answer it ourselves
        (unless the game only reached the GAMEREQ's move limit: then a new game)."""
        game = self._game
        self.phase = _Phase.IDLE
        self._game = None
        self._go_deadline = self._thinking_since = None
        stop = msg.stop
        out: list[Action] = [SendDxp(GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE))]
        why = {"1": "resigned", "2": "claimed a draw", "3": "claimed a win"}.get(
            msg.reason.value, "ended the game"
        )
        if stop is StopCode.STOP:
            why += " and stops playing"
        limit = game is not None and game.at_limit and stop is not StopCode.STOP
        if self._go_target is not None and game is not None and limit:
            note = (
                f"the engine {why} (GAMEEND) at the GAMEREQ's limit of "
                f"{game.moves_limit} moves: a new game from this position"
            )
            return [*out, Log(note), *self._request_game(now)]
        if self._go_target is not None:
            out += self._fallback(f"the engine {why} (GAMEEND)", now)
        else:
            out.append(Log(f"the engine {why} (GAMEEND)", logging.WARNING))
        return out

    # ------------------------------------------------------------------ endings

    def _no_move(self, why: str, now: float, *, error: bool) -> list[Action]:
        """The engine will not give this go a move: end the DXP game, answer ourselves."""
        out = self._end_game(StopCode.CONTINUE, now)
        return out + self._fallback(why, now, error=error)

    def _fallback(self, why: str, now: float, *, error: bool = False) -> list[Action]:
        target = self._go_target
        self._go_target = self._go_deadline = self._thinking_since = self._wait_limit = None
        if target is None:
            return [Log(why, logging.WARNING)]
        out: list[Action] = [SendHub(hub.line("error", message=why))] if error else []
        move = choose_move(target, FALLBACK_DEPTH)
        if move is None:
            return [SendHub(hub.line("error", message=f"{why}; no legal move either"))]
        text = hub.format_hub_move(move)
        self.fallbacks += 1
        note = f"{why}; dxserial played {text} itself, the next go starts a new game"
        return [
            *out,
            Log(note, logging.WARNING),
            SendHub(hub.info_line({"text": note})),
            SendHub(hub.line("done", move=text)),
        ]

    def _end_game(
        self,
        stop: StopCode,
        now: float,
        then: Callable[[float], list[Action]] | None = None,
    ) -> list[Action]:
        """Send our GAMEEND (even out of turn: stop, a timeout) and wait for its answer.

        An engine that is searching may answer only when its search is over: it gets
        until its move's deadline, then ``answer_timeout`` more."""
        if self.phase not in (_Phase.PLAYING, _Phase.REQUESTED):
            return then(now) if then is not None else []
        searching_until = self._go_deadline if self._thinking_since is not None else None
        requested = self.phase is _Phase.REQUESTED
        self.phase = _Phase.CLOSING
        self._game = None
        self._go_deadline = self._thinking_since = None
        self._after_close = then
        self._phase_deadline = max(now, searching_until or now) + self.config.answer_timeout
        end = GameEnd(reason=EndReason.NONE, stop=stop)
        if requested:  # no game is open before the GAMEACC: an engine that refuses waits
            self._held_end = end  # for a GAMEREQ then, and a GAMEEND would be out of turn
            return [Log("our GAMEEND waits for the engine's GAMEACC (no game is open before it)")]
        return [SendDxp(end)]

    def _accepted_to_end(self, msg: GameAccept, now: float) -> list[Action]:
        """The GAMEACC to a game we already mean to end: end it now, or nothing to end."""
        end, self._held_end = self._held_end, None
        assert end is not None
        if msg.code is AcceptCode.ACCEPT:  # it is searching: it may answer after that
            offer = self._offer
            limit = EngineClock(offer).limit(self.level) if offer is not None else None
            search = 0.0 if limit is None else limit + self.config.grace
            self._phase_deadline = now + search + self.config.answer_timeout
            return [Log("the engine accepted the game we end: our GAMEEND goes out now"),
                    SendDxp(end)]
        return [Log(f"the engine refused the game (GAMEACC code {msg.code.value}): "
                    "no game to end"), *self._closed(now)]

    def _closed(self, now: float) -> list[Action]:
        self.phase = _Phase.IDLE
        self._held_end = None
        self._phase_deadline = self._wait_limit = None
        then, self._after_close = self._after_close, None
        return then(now) if then is not None else []

    def _quit(self, now: float) -> list[Action]:
        self._pondering = False

        def leave(_now: float) -> list[Action]:
            self.phase = _Phase.STOPPED
            return [Stop(0, "quit")]

        self._go_target = self._go_deadline = self._thinking_since = self._wait_limit = None
        if self.phase is _Phase.REQUESTED and not self._heard:  # no game open on a silent line
            return [Withdraw(), *leave(now)]
        if self.phase in (_Phase.PLAYING, _Phase.REQUESTED):
            return self._end_game(StopCode.STOP, now, then=leave)
        if self.phase in (_Phase.CLOSING, _Phase.RECONNECTING):
            self._after_close = leave
            if self._held_end is not None:  # not sent yet: it says we stop
                self._held_end = GameEnd(reason=EndReason.NONE, stop=StopCode.STOP)
            if self.phase is _Phase.RECONNECTING:
                return leave(now)
            return []
        return leave(now)
