"""The built-in engine as a Hub engine, sans-I/O: Hub lines in, lines and searches out.

``dxserial hub-engine`` runs it on stdin/stdout (:mod:`dxserial.hub_engine.runner`),
so the tests, and anyone with a Hub GUI or pydraughts, have a Hub engine of their own.
The machine never searches itself: a ``go`` returns a :class:`Think` action, the runner
searches (in a thread, so ``stop`` and ``ping`` are read meanwhile) and hands the move
back to :meth:`HubEngine.searched`.  ``stop`` returns :class:`CutSearch`: the search then
plays the best move of its deepest finished pass at once, and ``done`` still follows, as
the protocol asks.  ``go ponder`` and ``go analyze`` search like ``go think`` (the
protocol lets an engine answer at any time); ``ponder-hit`` is then late and ignored.

Time: ``level depth=N`` searches N plies; ``move-time``, ``time``/``moves``/``inc`` give a
deadline (a share of the clock, see :meth:`~dxserial.protocol.hub.Level.budget`) for a
search to ``--depth`` (the built-in DXP engine's rule: its depth, never past its time);
``nodes=`` (no node counter here) searches to ``--depth``; ``infinite`` searches until
``stop`` (or the deepest depth).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from dxserial import __version__
from dxserial.draughts import LegalMove, Position
from dxserial.engine.search import MAN, MAX_DEPTH
from dxserial.protocol import hub

#: The score a won game is reported as (men): the search's win is a huge number.
WON = 99.0

__all__ = ["CutSearch", "HubEngine", "Log", "Quit", "Send", "Think"]


@dataclass(frozen=True)
class Send:
    """Write this line to the client."""

    line: hub.HubLine


@dataclass(frozen=True)
class Think:
    """Search ``position`` to ``depth`` plies, ending by ``deadline`` (on the runner's clock)."""

    position: Position
    depth: int
    deadline: float | None


@dataclass(frozen=True)
class CutSearch:
    """End the running search now and answer with its best move so far."""


@dataclass(frozen=True)
class Log:
    text: str
    level: int = logging.WARNING


@dataclass(frozen=True)
class Quit:
    """The client said quit: leave (cancelling a search)."""


Action = Send | Think | CutSearch | Log | Quit


class HubEngine:
    """One Hub session of the built-in engine (see the module docstring)."""

    def __init__(self, *, name: str = "dxserial", depth: int = 3) -> None:
        self.name = name
        self.depth = depth
        self.position: Position | None = None
        self.level = hub.Level(depth=depth)
        self.searching = False
        self.searches = 0

    def receive(self, text: str, now: float) -> list[Action]:
        """One line from the client; a line it cannot read is answered with ``error``."""
        try:
            command = hub.parse_line(text)
            return self._command(command, now)
        except hub.HubError as exc:
            return [Send(hub.line("error", message=str(exc))), Log(f"hub: {exc}")]

    def searched(
        self, move: LegalMove | None, seconds: float, *, score: int | None = None, depth: int = 0
    ) -> list[Action]:
        """The runner's search ended with ``move`` (``None``: no legal move); ``score``
        (100 a man, the mover's side) and ``depth``: its deepest finished pass, if any."""
        self.searching = False
        self.searches += 1
        if move is None:
            text = "the position has no legal move"
            return [Send(hub.line("error", message=text)), Log(f"hub: {text}")]
        fields: dict[str, object] = {}
        if score is not None and depth:
            fields["depth"] = depth
            fields["score"] = f"{max(-WON, min(WON, score / MAN)):.2f}"
            fields["pv"] = hub.format_hub_move(move)
        fields["time"] = round(seconds, 3)
        info = hub.info_line(fields)
        return [Send(info), Send(hub.line("done", move=hub.format_hub_move(move)))]

    def _command(self, command: hub.HubLine, now: float) -> list[Action]:
        name = command.command
        if name == "quit":
            return [Quit()]
        if name == "ping":
            return [Send(hub.line("pong"))]
        if self.searching:
            if name == "stop":
                return [CutSearch()]
            if name == "ponder-hit":
                return []
            raise hub.HubError(f"{name!r} during a search (only ping, ponder-hit and stop)")
        if name == "hub":
            return [
                Send(hub.line("id", name=self.name, version=__version__, author="dxserial")),
                Send(
                    hub.line(
                        "param", name="depth", value=self.depth, type="int", min=1, max=MAX_DEPTH
                    )
                ),
                Send(hub.line("wait")),
            ]
        if name == "set-param":
            return self._set_param(command)
        if name == "init":
            return [Send(hub.line("ready"))]
        if name == "new-game":
            self.position = None
            return []
        if name == "pos":
            self.position = None  # a bad pos leaves none: the next go is refused
            self.position = hub.parse_pos(command).position
            return []
        if name == "level":
            self.level = hub.parse_level(command)
            return []
        if name == "go":
            return self._go(now)
        if name in ("stop", "ponder-hit"):
            return []  # a search that already answered
        return [Log(f"hub: ignored unknown command {name!r}", logging.INFO)]

    def _set_param(self, command: hub.HubLine) -> list[Action]:
        if command.get("name") != "depth":
            return [Log(f"hub: ignored {command}", logging.INFO)]
        raw = command.get("value") or ""
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_DEPTH:
            raise hub.HubError(f"set-param depth: {raw!r} is not 1..{MAX_DEPTH}")
        self.depth = int(raw)
        self.level = hub.Level(depth=self.depth)
        return []

    def _go(self, now: float) -> list[Action]:
        if self.position is None:
            raise hub.HubError("go before pos")
        level = self.level
        if level.depth is not None:
            depth, deadline = max(1, min(level.depth, MAX_DEPTH)), None
        elif level.nodes is not None:  # no node counter here: its own depth
            depth, deadline = self.depth, None
        else:
            budget = level.budget()  # a clock: as the DXP engine, --depth within the time
            depth = MAX_DEPTH if budget is None else self.depth
            deadline = None if budget is None else now + budget
        self.searching = True
        return [Think(self.position, depth, deadline)]
