"""Every setting of ``dxserial hub``, declared once, in the order of its --help: its options,
their checks and one-line errors, and docs/commands/hub.md's table come from here; each
default is the adapter's (:class:`~dxserial.hub.adapter.AdapterConfig`) or the line's
(:mod:`dxserial.line_settings`).  Why: docs/settings.md.
"""

from __future__ import annotations

import dataclasses

from dxserial.cli.common import HUB_QUIET_HELP, HUB_VERBOSE_HELP
from dxserial.cli.options import ENDPOINT_HELP, said
from dxserial.engine.player import check_name
from dxserial.hub.adapter import AdapterConfig
from dxserial.line_settings import BAUD, LINK, NULMODEM_LINE
from dxserial.setting import Setting
from dxserial.transports.endpoints import LinkOptions

__all__ = ["SETTINGS"]

LINE = "DXP line"
_ADAPTER = AdapterConfig()

SETTINGS: tuple[Setting, ...] = (
    Setting("endpoint", None, ENDPOINT_HELP, argument=True, metavar="ENDPOINT"),
    LINK,
    dataclasses.replace(BAUD, panel=LINE),
    *(dataclasses.replace(one, panel=LINE) for one in NULMODEM_LINE),
    Setting("connect_timeout", LinkOptions().connect_timeout, "tcp://: keep trying to connect "
            "for this many seconds.", kind=float, minimum=0, above=True, panel=LINE,
            show_default=True),
    Setting("name", _ADAPTER.name, "Our name: in the Hub 'id' answer and the GAMEREQ.",
            parse=said(check_name), show_default=True),
    Setting("minutes", _ADAPTER.minutes, "GAMEREQ minutes when the client's 'level' has no "
            "clock (depth=, nodes=, infinite). 'level move-time=X' becomes N moves in "
            "ceil(N*X/60) minutes (N from 40 to 80, as close to X a move as whole minutes allow: "
            "move-time=1 is 60 moves in 1 minute); 'level time=T moves=N inc=I' T plus the "
            "increments rounded down to minutes, and N. See docs/hub.md.", kind=int, minimum=1,
            maximum=999, show_default=True),
    Setting("grace", _ADAPTER.grace, "Seconds past the engine's time on the clock it was "
            "offered (the GAMEREQ's) before it counts as out of time: its game is ended "
            "(GAMEEND) and dxserial answers the client with a move of its own, saying so.",
            kind=float, minimum=0, above=True, show_default=True),
    Setting("answer_timeout", _ADAPTER.answer_timeout, "Seconds the engine gets to answer a "
            "GAMEREQ, or a GAMEEND (after the search it may be busy with); a go that waited "
            "that long starts over on a fresh connection.", kind=float, minimum=0, above=True,
            show_default=True),
    Setting("verbose", 0, HUB_VERBOSE_HELP, kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
    Setting("quiet", False, HUB_QUIET_HELP, kind=bool, flags=("--quiet", "-q"),
            show_default=True),
)
