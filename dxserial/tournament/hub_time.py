"""Time controls a GAMEREQ cannot carry: ``increment`` (Fischer) and ``move_time``.

A DXP GAMEREQ says minutes and a number of moves, nothing else, so a DXP engine can be
told nothing more and a file that sets either key while an engine is not a Hub engine is
refused in one line.  A Hub engine hears them from its follower (``level inc=`` or
``level move-time=``, see :mod:`dxserial.engine.hub_mover`); the director's clock keeps them
(:mod:`dxserial.game.clock`), and the PDN's TimeControl says ``300+2`` or ``*5``.  Each
key's name, default, check and help are together in :data:`KEYS`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dxserial.errors import ConfigError
from dxserial.processes.command import KINDS

if TYPE_CHECKING:
    from dxserial.tournament.spec import EngineEntry

__all__ = ["KEYS", "HubTime"]

#: key -> (default, example as TOML, help).
KEYS: dict[str, tuple[Any, str, str]] = {
    "increment": (0, "2", "Hub engines only: Fischer, seconds added after each move to "
                  "minutes for the game (PDN TimeControl 300+2)"),
    "move_time": (None, "5", "Hub engines only: seconds for each move instead of minutes "
                  "(PDN TimeControl *5)"),
}


@dataclass(frozen=True)
class HubTime:
    increment: float = 0.0
    move_time: float | None = None

    @property
    def on(self) -> bool:
        return bool(self.increment) or self.move_time is not None

    @classmethod
    def checked(cls, data: dict[str, Any], engines: Sequence[EngineEntry], source: str,
                plain: str = "minutes and time_moves") -> HubTime:
        """From a file's keys (or a command's options: ``plain`` names what a DXP engine
        can be told there); :class:`ConfigError` in one line."""
        numbers: dict[str, float | None] = {}
        for key, (default, _, _) in KEYS.items():
            value = data.get(key, default)
            ok = value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                                   and math.isfinite(value) and value >= 0)
            if ok and key == "move_time" and value is not None:
                ok = value > 0
            if not ok:
                need = ">= 0" if key == "increment" else "> 0"
                raise ConfigError(f"{source}: {key} must be a number of seconds {need}, "
                                  f"not {value!r}")
            numbers[key] = None if value is None else float(value)
        found = cls(numbers["increment"] or 0.0, numbers["move_time"])
        if found.increment and found.move_time is not None:
            raise ConfigError(f"{source}: increment and move_time: give one of the two")
        if found.increment and data.get("time_moves"):
            raise ConfigError(f"{source}: increment is for minutes for the whole game: "
                              "leave out time_moves (or give time_moves = 0)")
        if found.on:
            key = "increment" if found.increment else "move_time"
            for engine in engines:
                if engine.command is None or not KINDS[engine.command.speaks].reports_thinking:
                    raise ConfigError(
                        f"{source}: {key}: engine {engine.name!r} cannot be told it: a DXP "
                        "GAMEREQ carries only minutes and moves (only speaks = \"hub\" "
                        f"engines are told more, by 'level'); use {plain}"
                    )
        return found

    def told(self, engine: EngineEntry) -> EngineEntry:
        """``engine`` with the time control its follower must tell it (Hub engines)."""
        if not self.on or engine.command is None:
            return engine
        extra = {**engine.command.extra, "increment": self.increment,
                 "move_time": self.move_time}
        return dataclasses.replace(
            engine, command=dataclasses.replace(engine.command, extra=extra))
