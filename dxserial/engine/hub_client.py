"""Our side of a Hub engine's dialogue, sans-I/O: the engine's lines in, ours out, events.

``dxserial engine PORT --hub CMD`` plays DXP with the built-in engine's dialogue and asks
a Hub engine (Scan 3.x, GWD, ``dxserial hub-engine``) for each move through this machine
(:mod:`dxserial.engine.hub_mover` moves its lines over the child's pipes).  It checks
what the engine says: an unreadable line, a known answer out of place (``done`` with no
search, ``ready`` twice) or an illegal ``done move=`` is a :class:`Failed` event naming
it; the caller ends its DXP game.  Lines an engine prints while it initialises, and
commands the protocol does not know, are ignored, as the protocol asks.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from dxserial.draughts import LegalMove, Position, pdn_in
from dxserial.game.thinking import Thinking
from dxserial.protocol import hub

__all__ = ["Done", "Failed", "HubClient", "Info", "Ready"]


@dataclass(frozen=True)
class Ready:
    """The handshake is over; ``name`` is the engine's ``id name=`` (may be empty)."""

    name: str


@dataclass(frozen=True)
class Done:
    """The engine's move, with what its last ``info`` lines of this search said of it."""

    move: LegalMove
    thinking: Thinking | None = None


@dataclass(frozen=True)
class Info:
    text: str


@dataclass(frozen=True)
class Failed:
    reason: str


Event = Ready | Done | Failed | Info


class _State(enum.Enum):
    NEW = "not started"
    HUB = "waiting for 'wait' after 'hub'"
    INIT = "waiting for 'ready' after 'init'"
    IDLE = "idle"
    SEARCHING = "searching"
    STOPPING = "waiting for 'done' after 'stop'"
    FAILED = "failed"


@dataclass
class HubClient:
    """One Hub engine seen from the GUI's chair."""

    state: _State = _State.NEW
    name: str = ""
    position: Position | None = None
    params: dict[str, str] = field(default_factory=dict)
    #: The running search's ``info`` so far: score, depth, pv (each from its latest line).
    heard: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.state is _State.FAILED

    @property
    def initialising(self) -> bool:
        """'wait' came: the engine takes 'init' now."""
        return self.state is _State.INIT

    @property
    def searching(self) -> bool:
        return self.state in (_State.SEARCHING, _State.STOPPING)

    def start(self) -> list[str]:
        self.state = _State.HUB
        return ["hub"]

    def new_game(self) -> list[str]:
        return ["new-game"] if self.state is _State.IDLE else []

    def think(
        self, start: Position, level: hub.Level, moves: Sequence[LegalMove] = ()
    ) -> list[str]:
        """Ask for a move in ``start`` after ``moves`` under ``level``."""
        if self.state is not _State.IDLE:
            raise RuntimeError(f"think() while {self.state.value}")
        self.state = _State.SEARCHING
        self.heard = {}
        position = start
        for move in moves:
            position = position.play(move)
        self.position = position
        return [
            hub.format_line(hub.pos_line(start, moves)),
            hub.format_line(level.to_line()),
            "go think",
        ]

    def stop(self) -> list[str]:
        if self.state is not _State.SEARCHING:
            return []
        self.state = _State.STOPPING
        return ["stop"]

    def quit(self) -> list[str]:
        return ["quit"]

    def receive(self, text: str) -> list[Event]:
        """One line from the engine."""
        if self.state is _State.FAILED or not text.strip():
            return []
        try:
            command = hub.parse_line(text)
        except hub.HubError as exc:
            if self.state is _State.INIT:
                return []  # "it might display some information here"
            return self._fail(f"unreadable line: {exc}")
        name = command.command
        state = self.state
        if name == "error":
            return [Info(f"error: {command.get('message') or text.strip()}")]
        if name == "info":
            if self.searching:
                self.heard.update(
                    (k, command.get(k) or "") for k in ("score", "depth", "pv") if command.has(k)
                )
            return []
        if name == "pong":
            return []
        if state is _State.HUB:
            if name == "id":
                self.name = command.get("name") or ""
                return []
            if name == "param":
                self.params[command.get("name") or "?"] = command.get("value") or ""
                return []
            if name == "wait":
                self.state = _State.INIT
                return []
        if state is _State.INIT:
            if name == "ready":
                self.state = _State.IDLE
                return [Ready(self.name)]
            return []  # information printed while initialising
        if name == "done" and self.searching:
            return self._done(command)
        if name in ("id", "param", "wait", "ready", "done"):
            return self._fail(f"'{text.strip()}' out of protocol ({state.value})")
        return []  # a command we do not know: ignored, as the protocol asks

    def _done(self, command: hub.HubLine) -> list[Event]:
        position = self.position
        assert position is not None
        try:
            text, _ponder = hub.parse_done(command)
            move = hub.parse_hub_move(position, text)
        except hub.HubError as exc:
            return self._fail(f"bad move: {exc}")
        self.state = _State.IDLE
        return [Done(move, self._thinking(position, move))]

    def _thinking(self, position: Position, move: LegalMove) -> Thinking | None:
        """The search's info as PDN: its PV as far as it is legal from ``move`` on (a PV
        that starts with another move is of an earlier pass and is left out)."""
        heard = self.heard
        thinking = Thinking.from_fields(heard.get("score"), heard.get("depth"), heard.get("pv"))
        if thinking is None:
            return None
        pv: list[str] = []
        at = position
        for text in thinking.pv:
            try:
                step = hub.parse_hub_move(at, text)
            except hub.HubError:
                break
            if not pv and step != move:
                break
            pv.append(pdn_in(at, step))
            at = at.play(step)
        return Thinking(thinking.score, thinking.depth, tuple(pv))

    def _fail(self, reason: str) -> list[Event]:
        self.state = _State.FAILED
        return [Failed(reason)]

    def expecting(self) -> str:
        """What the engine owes us now, for a timeout message."""
        return self.state.value
