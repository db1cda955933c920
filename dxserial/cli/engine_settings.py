"""Every setting of ``dxserial engine``, declared once, in the order of its --help: its
options, their checks and one-line errors, and docs/commands/engine.md's table come from
here; the serial line's are :mod:`dxserial.line_settings`'.  Why: docs/settings.md.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP
from dxserial.cli.options import ENDPOINT_HELP
from dxserial.engine.player import MAX_DEPTH, BackPolicy, PlayerConfig, check_depth
from dxserial.errors import ConfigError
from dxserial.line_settings import BAUD, LINK, NULMODEM_LINE, NULMODEM_PANEL
from dxserial.protocol.links import NulModemSettings
from dxserial.protocol.messages import Colour
from dxserial.protocol.session import Role
from dxserial.setting import Setting
from dxserial.transports.endpoints import LinkOptions

__all__ = ["INITIATOR", "SETTINGS", "parse_colour"]

INITIATOR = "Initiator: the games it offers"
_START, _END, _ECHO, _ATTEMPTS = NULMODEM_LINE


def parse_colour(value: Any, option: str) -> Colour:
    text = str(value).strip().upper()
    if text in ("W", "WHITE"):
        return Colour.WHITE
    if text in ("Z", "B", "BLACK"):
        return Colour.BLACK
    raise ConfigError(f"{option}: {value!r} is not W (white) or Z (black)")


def _role(value: Any, option: str) -> Role:
    return Role(value)


def _backreq(value: Any, option: str) -> BackPolicy:
    return BackPolicy(value)


def _depth(value: Any, option: str) -> int:
    return check_depth(value, option)


_PLAYER = {f.name: f.default for f in dataclasses.fields(PlayerConfig)}


def _setting(key: str, help: str, default: Any = None, **declared: Any) -> Setting:
    """A setting whose default is the built-in player's (PlayerConfig's) when it has it."""
    default = _PLAYER.get(key, default)
    kind = type(default) if isinstance(default, bool | int | float | str) else str
    declared.setdefault("kind", kind)
    declared.setdefault("show_default", True)
    return Setting(key, default, help, **declared)


SETTINGS = (
    _setting("endpoint", ENDPOINT_HELP, argument=True, metavar="ENDPOINT", show_default=False),
    _setting("role", "'follower' (answers GAMEREQs) or 'initiator' (offers games).",
             kind=str, show_default=False, required=True,
             choices=(Role.FOLLOWER.value, Role.INITIATOR.value),
             parse=_role),
    LINK,
    BAUD,
    _START,
    _END,
    _setting("learn_start", "NULMODEM: also take a peer's other control byte for its start "
             "byte when it speaks first (as the bridge does). --no-learn-start answers only "
             "--start-byte and --end-byte, as a DOS program that knows no other would: a peer "
             "for testing 'dxserial probe'.", NulModemSettings().learn_start,
             flags=("--learn-start/--no-learn-start",), panel=NULMODEM_PANEL),
    _ECHO,
    _ATTEMPTS,
    _setting("connect_timeout", "tcp://: keep trying to connect for this many seconds.",
             LinkOptions().connect_timeout, minimum=0, above=True),
    _setting("name", "Engine name sent in GAMEREQ/GAMEACC."),
    _setting("depth", f"Search depth in plies (1..{MAX_DEPTH}); a move never takes more than "
             "1/20 of the time left on the engine's clock (GAMEREQ minutes).", parse=_depth),
    _setting("seed", "Seed for choosing among equal moves (default: random).", kind=int,
             show_default=False),
    _setting("backreq", "Answer a BACKREQ: 'accept' (K0, go back) or 'decline' (K1).",
             kind=str, cli_default=BackPolicy.ACCEPT.value,
             choices=tuple(p.value for p in BackPolicy), parse=_backreq),
    _setting("games", "Initiator: games to offer.", minimum=1, panel=INITIATOR),
    _setting("minutes", "Initiator: minutes per player in GAMEREQ.", flags=("--time",),
             minimum=0, maximum=999, panel=INITIATOR),
    _setting("moves", "Initiator: moves field of GAMEREQ. Either role ends a game as a draw "
             "(GAMEEND reason 2) when it is to move after that many full moves; 0: no limit.",
             minimum=0, maximum=999, panel=INITIATOR),
    _setting("colour", "Initiator: the follower's colour in game 1 (W or Z); alternates.",
             kind=str, cli_default="W", parse=parse_colour, panel=INITIATOR),
    _setting("answer_timeout", "Initiator: seconds to wait for a GAMEACC before saying nothing "
             "answered (and, on TCP or --link nul, sending the GAMEREQ again); it keeps waiting.",
             minimum=0, above=True),
    _setting("hub", "Take the moves from the Hub engine that CMD starts ('scan hub', 'dxserial "
             "hub-engine'), on its stdin/stdout, under the GAMEREQ's clock ('level time=' the "
             "time left); the DXP dialogue stays the built-in engine's. A Hub engine that dies, "
             "breaks the protocol or plays an illegal move ends the game (GAMEEND) and the "
             "session: exit 1 with one line. Its 'id' name is used unless --name is given.",
             metavar="CMD", show_default=False),
    _setting("increment", "With --hub: a Fischer increment (seconds) the director adds after "
             "each move: told to the Hub engine ('level time=LEFT inc=S') and counted in the "
             "time left. A GAMEREQ cannot carry it (a tournament adds it for speaks = \"hub\").",
             minimum=0),
    _setting("move_time", "With --hub: seconds for each move ('level move-time=S') instead of "
             "the GAMEREQ's clock (a tournament adds it for speaks = \"hub\").", kind=float,
             minimum=0, above=True, show_default=False),
    _setting("tell_thinking", "With --hub: before each MOVE, a CHAT with the Hub engine's "
             "score, depth and principal variation ('thinking score=0.35 depth=12 pv=32-28 "
             "17-22'), for a dxserial director that records them (the director adds it for "
             "speaks = \"hub\")."),
    _setting("gameend_timeout", "Seconds a GAMEEND of ours may wait for the peer's answer; then "
             "its silence is the answer (some engines, GWD by default, never answer one) and "
             "the next game goes on.", minimum=0, above=True),
    _setting("verbose", VERBOSE_HELP, 0, flags=("--verbose", "-v"), count=True),
    _setting("quiet", QUIET_HELP, False, flags=("--quiet", "-q")),
)
