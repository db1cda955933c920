"""A DXP engine as a Hub engine, sans-I/O: Hub lines and DXP messages in, actions out.

``dxserial hub ENDPOINT`` runs this machine (:mod:`dxserial.hub.adapter_runner`):
a Hub GUI or bot talks to it on stdin/stdout, and it is the DXP initiator towards the
engine at ENDPOINT.  Each ``go`` is played through that engine:

* the ``pos`` continues the running game when it is the game's last position plus one
  move of the GUI's side: that move goes to the engine as a MOVE;
* otherwise the running game is ended (GAMEEND) and a new one starts with a GAMEREQ of the
  ``pos`` (form A from the start position, else form B), the engine playing the side to
  move.  ``level`` gives that GAMEREQ's minutes and moves (see :func:`game_clock`) and
  the move's deadline;
* the engine's MOVE, checked on the board, is answered as ``done move=...``; its CHAT
  becomes an ``info text=...`` line.

When the engine gives no legal move (a ``stop``, the deadline, an illegal MOVE, a GAMEEND,
a refused GAMEREQ), the DXP game is ended with a GAMEEND and, since a Hub client waits for
``done`` whatever happens, dxserial answers with a move of its own short search, and says
so (``info text=`` to the client, a warning in the log): the client's game goes on, the
next ``go`` starts a fresh DXP game from that position.  ``new-game`` and ``quit`` (or
end of input) end the running game cleanly; quit's GAMEEND carries stop code 1.
``go ponder`` waits: ``ponder-hit`` plays it as a ``go``, ``stop`` answers with a move of
dxserial's own that the client throws away, and the DXP game is not touched.
"""

from __future__ import annotations

import enum
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dxserial import __version__
from dxserial.draughts import IllegalMoveError, Position
from dxserial.engine.search import choose_move
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
    "Stop",
    "game_clock",
]

#: Seconds an engine gets to answer our GAMEEND or GAMEREQ before we go on without it.
ANSWER_TIMEOUT = 10.0
#: Depth of dxserial's own search when the engine gave no move.
FALLBACK_DEPTH = 2


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


Action = SendHub | SendDxp | Log | Stop


@dataclass(frozen=True)
class AdapterConfig:
    name: str = "dxserial hub"
    minutes: int = 5  # GAMEREQ minutes when level gives no clock (depth, infinite)
    grace: float = 2.0  # seconds past a move's budget before the engine is out of time
    answer_timeout: float = ANSWER_TIMEOUT


def game_clock(level: hub.Level, default_minutes: int) -> tuple[int, int]:
    """The GAMEREQ's (minutes, moves) for a Hub ``level``.

    ``time=T [moves=N]`` is the engine's clock: T rounded up to whole minutes, N the
    moves field (0 without it).  ``move-time=X`` is a clock for 40 moves of X seconds.
    ``depth`` and ``infinite`` carry no clock: ``default_minutes``.  Never 0 minutes:
    a DXP engine reads 000 as no clock at all.
    """
    if level.time is not None:
        minutes = math.ceil((level.time + 40 * level.inc) / 60)
        return max(1, min(999, minutes)), min(999, level.moves or 0)
    if level.move_time is not None:
        return max(1, min(999, math.ceil(level.move_time * 40 / 60))), 0
    return default_minutes, 0


class _Phase(enum.Enum):
    IDLE = "no game"
    REQUESTED = "GAMEREQ sent"
    PLAYING = "playing"
    CLOSING = "our GAMEEND sent"
    STOPPED = "stopped"


@dataclass
class _Game:
    engine: Colour  # the engine's side
    positions: list[Position] = field(default_factory=list)

    @property
    def position(self) -> Position:
        return self.positions[-1]


class HubAdapter:
    """One Hub client and one DXP engine; see the module docstring."""

    def __init__(self, config: AdapterConfig | None = None) -> None:
        self.config = config or AdapterConfig()
        self.phase = _Phase.IDLE
        self.level = hub.Level()
        self._pos: hub.PosCommand | None = None
        self._game: _Game | None = None
        self._request: GameRequest | None = None
        self._go_target: Position | None = None  # a go waits for the engine's move
        self._go_deadline: float | None = None
        self._phase_deadline: float | None = None  # GAMEREQ or GAMEEND answer due
        self._after_close: Callable[[float], list[Action]] | None = None
        self._pondering = False  # 'go ponder' waits for ponder-hit or stop
        self.engine_name = ""
        self.moves_played = 0  # engine moves handed to the client
        self.fallbacks = 0  # moves dxserial chose itself

    # ------------------------------------------------------------------ clock

    def next_deadline(self) -> float | None:
        times = [t for t in (self._go_deadline, self._phase_deadline) if t is not None]
        return min(times) if times else None

    def poll(self, now: float) -> list[Action]:
        out: list[Action] = []
        if self._phase_deadline is not None and now >= self._phase_deadline:
            self._phase_deadline = None
            if self.phase is _Phase.CLOSING:
                out.append(Log("the engine did not answer our GAMEEND; going on", logging.WARNING))
                out += self._closed(now)
            elif self.phase is _Phase.REQUESTED:
                self.phase = _Phase.IDLE
                out += self._fallback("the engine did not answer the GAMEREQ", now)
        if self._go_deadline is not None and now >= self._go_deadline:
            self._go_deadline = None
            if self._go_target is not None:
                out += self._no_move("the engine gave no move in time", now, error=True)
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
        budget = self.level.budget()
        self._go_deadline = None if budget is None else now + budget + self.config.grace
        game = self._game
        if self.phase is _Phase.PLAYING and game is not None:
            last = game.position
            if last == target and last.turn is game.engine:
                return []  # the engine is already to move here
            if last.turn is not game.engine:
                for move in last.legal_moves():
                    if last.play(move) == target:
                        game.positions.append(target)
                        return [SendDxp(to_dxp_move(move))]
            return self._end_game(StopCode.CONTINUE, now, then=self._request_game)
        if self.phase in (_Phase.CLOSING, _Phase.REQUESTED):
            self._after_close = self._request_game
            return []
        return self._request_game(now)

    def _request_game(self, now: float) -> list[Action]:
        target = self._go_target
        if target is None:
            return []
        minutes, moves = game_clock(self.level, self.config.minutes)
        start = target == Position.start()
        request = GameRequest(
            name=self.config.name,
            follower_colour=target.turn,
            minutes=minutes,
            moves=moves,
            to_move=None if start else target.turn,
            position=None if start else target.pieces(),
        )
        self._request = request
        self.phase = _Phase.REQUESTED
        self._phase_deadline = now + self.config.answer_timeout
        return [SendDxp(request)]

    # ------------------------------------------------------------------ dxp side

    def dxp(self, msg: Message, now: float) -> list[Action]:
        """One message from the DXP engine."""
        if isinstance(msg, Chat):
            return [SendHub(hub.info_line({"text": f"{self.engine_name or 'engine'}: {msg.text}"}))]
        phase = self.phase
        if phase is _Phase.CLOSING:
            if isinstance(msg, GameEnd):
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
        self._phase_deadline = None
        self.engine_name = msg.name
        request = self._request
        if msg.code is not AcceptCode.ACCEPT or request is None or self._go_target is None:
            self.phase = _Phase.IDLE
            return self._fallback(
                f"the engine refused the game (GAMEACC code {msg.code.value})", now
            )
        self.phase = _Phase.PLAYING
        self._game = _Game(request.follower_colour, [self._go_target])
        return [Log(f"game started against {msg.name} from {self._go_target.to_fen()}")]

    def _their_move(self, game: _Game, msg: Move, now: float) -> list[Action]:
        try:
            move = match_dxp_move(game.position, msg)
        except IllegalMoveError as exc:
            return self._no_move(f"the engine played {exc}", now, error=True)
        game.positions.append(game.position.play(move))
        self._go_target = self._go_deadline = None
        self.moves_played += 1
        return [
            Log(f"engine: {describe_dxp_move(msg)}", logging.DEBUG),
            SendHub(hub.line("done", move=hub.format_hub_move(move))),
        ]

    def _their_end(self, msg: GameEnd, now: float) -> list[Action]:
        """The engine ended the game: answer, and if a go waits, answer it ourselves."""
        self.phase = _Phase.IDLE
        self._game = None
        stop = msg.stop
        out: list[Action] = [SendDxp(GameEnd(reason=EndReason.NONE, stop=StopCode.CONTINUE))]
        why = {"1": "resigned", "2": "claimed a draw", "3": "claimed a win"}.get(
            msg.reason.value, "ended the game"
        )
        if stop is StopCode.STOP:
            why += " and stops playing"
        if self._go_target is not None:
            out += self._fallback(f"the engine {why} (GAMEEND)", now)
        else:
            out.append(Log(f"the engine {why} (GAMEEND)", logging.WARNING))
        return out

    # ------------------------------------------------------------------ endings

    def _no_move(self, why: str, now: float, *, error: bool) -> list[Action]:
        """The engine will not give this go a move: end the DXP game, answer ourselves."""
        out: list[Action] = []
        if error:
            out.append(SendHub(hub.line("error", message=why)))
        out += self._end_game(StopCode.CONTINUE, now)
        return out + self._fallback(why, now)

    def _fallback(self, why: str, now: float) -> list[Action]:
        target = self._go_target
        self._go_target = self._go_deadline = None
        if target is None:
            return [Log(why, logging.WARNING)]
        move = choose_move(target, FALLBACK_DEPTH)
        if move is None:
            return [SendHub(hub.line("error", message=f"{why}; no legal move either"))]
        text = hub.format_hub_move(move)
        self.fallbacks += 1
        note = f"{why}; dxserial played {text} itself, the next go starts a new game"
        return [
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
        """Send our GAMEEND (even out of turn: stop, a timeout) and wait for its answer."""
        if self.phase not in (_Phase.PLAYING, _Phase.REQUESTED):
            return then(now) if then is not None else []
        self.phase = _Phase.CLOSING
        self._game = None
        self._after_close = then
        self._phase_deadline = now + self.config.answer_timeout
        return [SendDxp(GameEnd(reason=EndReason.NONE, stop=stop))]

    def _closed(self, now: float) -> list[Action]:
        self.phase = _Phase.IDLE
        self._phase_deadline = None
        then, self._after_close = self._after_close, None
        return then(now) if then is not None else []

    def _quit(self, now: float) -> list[Action]:
        self._pondering = False

        def leave(_now: float) -> list[Action]:
            self.phase = _Phase.STOPPED
            return [Stop(0, "quit")]

        self._go_target = self._go_deadline = None
        if self.phase in (_Phase.PLAYING, _Phase.REQUESTED):
            return self._end_game(StopCode.STOP, now, then=leave)
        if self.phase is _Phase.CLOSING:
            self._after_close = leave
            return []
        return leave(now)
