"""The arbiter's settings for a match or tournament, and the words it records.

One place for the keys a match (options) and a tournament (file keys) share: whether
FMJD's draw rules end games, how a false GAMEEND claim scores, the director's clock and
the line's margin.  The rules themselves live in :mod:`dxserial.draughts.draw_rules`,
the claim checks in :mod:`dxserial.game.claims`, the clock in :mod:`dxserial.game.clock`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dxserial.draughts.pieces import Colour, colour_name
from dxserial.errors import ConfigError
from dxserial.game.clock import GameClock, TimeControl
from dxserial.game.referee import GameResult

__all__ = [
    "ArbiterSettings",
    "clock_left",
    "time_loss",
]

DRAW_RULES = ("fmjd", "off")
ON_FALSE_CLAIM = ("loss", "as-claimed")


@dataclass(frozen=True)
class ArbiterSettings:
    """``time_control``: ``on`` (the GAMEREQ's minutes and moves), ``off`` (no clock: the
    per-move timeout only), or ``<N>s`` (the director gives N seconds a game, whatever the
    GAMEREQ says: for quick lab runs)."""

    draw_rules: str = "fmjd"
    on_false_claim: str = "loss"
    time_control: str = "on"
    clock_margin: float = 0.3

    KEYS = ("draw_rules", "on_false_claim", "time_control", "clock_margin")

    @classmethod
    def checked(
        cls, values: Mapping[str, Any], name: Callable[[str], str] = str
    ) -> ArbiterSettings:
        """From ``values`` (missing keys: defaults); ``name(key)`` is how an error names a
        key (``--draw-rules`` on the command line, ``draw_rules`` in a file)."""
        base = cls()
        get = {k: values.get(k, getattr(base, k)) for k in cls.KEYS}
        for key, allowed in (("draw_rules", DRAW_RULES), ("on_false_claim", ON_FALSE_CLAIM)):
            if get[key] not in allowed:
                raise ConfigError(
                    f"{name(key)}: {get[key]!r} is not {' or '.join(map(repr, allowed))}"
                )
        margin = get["clock_margin"]
        if not isinstance(margin, int | float) or isinstance(margin, bool) or not 0 <= margin < 60:
            raise ConfigError(f"{name('clock_margin')}: must be seconds, 0 <= margin < 60")
        text = get["time_control"]
        if not isinstance(text, str) or _game_seconds(text) is None:
            raise ConfigError(
                f"{name('time_control')}: {text!r} is not 'on', 'off' or seconds (above 0) such"
                " as '20s'"
            )
        return cls(str(get["draw_rules"]), str(get["on_false_claim"]), text, float(margin))

    @property
    def fmjd(self) -> bool:
        return self.draw_rules == "fmjd"

    def control(self, minutes: float, moves: int) -> TimeControl | None:
        """The clock's time control for a GAMEREQ with ``minutes`` and ``moves``."""
        seconds = _game_seconds(self.time_control)
        if self.time_control == "off" or (seconds == 0 and not minutes):
            return None  # off, or a GAMEREQ without time (minutes 000): nothing to keep
        if seconds:
            return TimeControl(seconds, 0, self.clock_margin)
        return TimeControl.from_gamereq(minutes, moves, self.clock_margin)


def _game_seconds(text: str) -> float | None:
    """0 for ``on``/``off``, N for ``Ns``; None if the text is neither."""
    if text in ("on", "off"):
        return 0.0
    if not text.endswith("s"):
        return None
    try:
        seconds = float(text[:-1])
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds > 0 else None


def time_loss(colour: Colour, title: str, clock: GameClock, now: float) -> GameResult:
    """The result when ``colour``'s flag falls."""
    control = clock.control
    over = -clock.left(colour, now)
    return GameResult.win_for(
        colour.other,
        f"{colour_name(colour)} {title} lost on time ({control.describe()}, {over:.1f} s over)",
    )


def clock_left(clock: GameClock, now: float) -> dict[str, float]:
    """Both sides' seconds left, for the live view (``left`` of a game card)."""
    return {colour_name(c): round(max(0.0, clock.left(c, now)), 1) for c in Colour}
