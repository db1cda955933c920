"""Every setting of ``dxserial match``, declared once, in the order of its --help: its
options, their checks and one-line errors, and docs/commands/match.md's table come from here.

A key that means what it means in a tournament file (the time control, the move limit,
the timeouts, the arbiter, Hub time, adjudication) is the file's declaration
(:data:`~dxserial.tournament.keys.FILE_KEYS`) with the option's own help; the serial line's
are :mod:`dxserial.line_settings`'.  Why: docs/settings.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP
from dxserial.cli.options import ALLOW, ENDPOINT_HELP, WEB, said
from dxserial.engine.player import DEFAULT_NAME, check_name
from dxserial.errors import ConfigError
from dxserial.files import output_dir
from dxserial.line_settings import BAUD, LINK, LINK_KINDS, NULMODEM_LINE
from dxserial.match.rules import FailurePolicy
from dxserial.protocol.dialects import DEFAULT_GAMEEND_TIMEOUT
from dxserial.setting import Setting
from dxserial.tournament.keys import FILE_KEYS
from dxserial.tournament.spec import Opening, parse_opening

__all__ = ["ARBITER", "SERIAL", "SETTINGS", "adjudication_table"]

SERIAL = "Serial lines and NULMODEM"
ARBITER = "Arbiter"
_FILE = {one.key: one for one in FILE_KEYS}


def _file(key: str, help: str, **changes: Any) -> Setting:
    """The tournament file's key ``key`` as an option of ``match`` (its help, its flag)."""
    return dataclasses.replace(_FILE[key], help=help, **changes)


def _pdn(value: Any, flag: str) -> Path:
    return output_dir(Path(value), "PDN folder", create=False)  # made with its first game


def _policy(value: Any, flag: str) -> FailurePolicy:
    return FailurePolicy(value)


def _opening(value: Any) -> Opening:
    return parse_opening(str(value))


def adjudication_table(names: tuple[str, ...]) -> Callable[[Any, str], dict[str, object]]:
    """``--adjudicate-draw 40,8,0.05`` as the file's table ``{after_move = 40, ...}``."""
    def parse(text: Any, flag: str) -> dict[str, object]:
        parts = [p.strip() for p in str(text).split(",")]
        if len(parts) != len(names):
            raise ConfigError(f"{flag} {text!r}: give {','.join(n.upper() for n in names)}")
        values: dict[str, object] = {}
        for name, part in zip(names, parts, strict=True):
            try:
                values[name] = (float(part) if "." in part or name in ("margin", "score")
                                else int(part))
            except ValueError:
                raise ConfigError(f"{flag} {text!r}: {name} {part!r} is not a number") from None
        return values
    return parse


_MAX_MOVES = _FILE["max_moves"].default

SETTINGS: tuple[Setting, ...] = (
    Setting("endpoint_a", None, ENDPOINT_HELP, argument=True, metavar="ENDPOINT_A"),
    Setting("endpoint_b", None, "The other engine.", argument=True, metavar="ENDPOINT_B"),
    Setting("games", 2, "Games to play; A has White in odd games.", kind=int, minimum=1,
            show_default=True),
    _file("minutes", "Time control: minutes per player, sent in each GAMEREQ.",
          flags=("--time",), show_default=True),
    _file("time_moves", "Time control: the moves those minutes are for, sent in each GAMEREQ "
          "(0: the whole game); the director's clock gives the same time again after them. DXP "
          "lets an engine end the game once they are played. [default: --max-moves]"),
    _file("max_moves", "The director's move limit: a game is a draw after this many full "
          f"moves (0: none). [default: {_MAX_MOVES}]"),
    _file("moves", "The old name of --max-moves.", hidden=True),
    _file("pdn", "Directory for one PDN file per game (created if needed).", kind=Path,
          parse=_pdn, show_default=True),
    _file("pdn_notes", "PDN for people: the referee's notes too, and the clocks as prose "
          "comments instead of clock commands (default: the movetext and clock commands other "
          "programs read; docs/pdn.md).", show_default=True),
    Setting("on_engine_failure", "stop", "When an engine fails or vanishes it loses that "
            "game; then 'stop' the match (exit 1) or 'continue' (its endpoint is opened again "
            "for the next game).", choices=("stop", "continue"), parse=_policy,
            show_default=True),
    _file("move_timeout", "Seconds an engine may take for one move or answer.",
          show_default=True),
    Setting("gameend_timeout", DEFAULT_GAMEEND_TIMEOUT, "Seconds a GAMEEND of ours may wait "
            "for the engine's answer; then its silence is the answer (some engines, GWD by "
            "default, never answer one) and the next game goes on.", kind=float, minimum=0,
            above=True, show_default=True),
    _file("connect_timeout", "Seconds to reach an engine (tcp:// retries, listen:// waits).",
          show_default=True),
    LINK,
    *(Setting(f"link_{side}", None, f"Layer 1 for engine {side.upper()} only.",
              choices=LINK_KINDS, panel=SERIAL) for side in "ab"),
    BAUD,
    *(dataclasses.replace(one, panel=SERIAL) for one in NULMODEM_LINE),
    Setting("opening", "", "Where every game starts: a FEN (W:WK46,K47:BK3) or PDN moves from "
            "the start (sent as a GAMEREQ with the position). Default: the normal start.",
            parse=said(_opening)),
    _file("draw_rules", "'fmjd': FMJD's draw rules end a game (threefold repetition, 25 king "
          "moves, 16-move and 5-move endgames); 'off': only the move limit.", panel=ARBITER,
          show_default=True),
    _file("on_false_claim", "A GAMEEND draw or win claim the position does not bear out: "
          "'loss' for the claimant, or 'as-claimed' (recorded as false either way).",
          panel=ARBITER, show_default=True),
    _file("time_control", "'on': dxserial keeps each engine's clock from --time (and "
          "--time-moves); a flag fall loses on time. 'off': no clock (only --move-timeout). "
          "'Ns': N seconds a game on the director's clock, whatever --time says.",
          panel=ARBITER, show_default=True),
    _file("clock_margin", "Seconds a move not charged to the engine: the line's share of each "
          "move.", panel=ARBITER, show_default=True),
    _file("increment", "Hub engines only (speaks = \"hub\" in --engines): a Fischer increment, "
          "seconds added after each move to --time for the game; told by 'level inc=', kept by "
          "the director's clock, PDN TimeControl 300+2. A DXP engine cannot be told it: "
          "refused.", kind=float, minimum=0, cli_default=0.0, panel=ARBITER, show_default=True),
    _file("move_time", "Hub engines only: seconds for each move instead of --time ('level "
          "move-time=', PDN TimeControl *5). A DXP engine cannot be told it: refused.",
          kind=float, minimum=0, above=True, panel=ARBITER),
    _file("adjudicate_draw", "Hub engines only: a draw once both scores stay within MARGIN men "
          "for MOVES moves each, from move AFTER on ('40,8,0.05'); Termination names it.",
          kind=str, parse=adjudication_table(("after_move", "moves", "margin")),
          metavar="AFTER,MOVES,MARGIN", panel=ARBITER),
    _file("adjudicate_resign", "Hub engines only: a loss once one side's score stays at or "
          "below -SCORE for MOVES moves and its opponent's at or above +SCORE ('4,3.0').",
          kind=str, parse=adjudication_table(("moves", "score")), metavar="MOVES,SCORE",
          panel=ARBITER),
    WEB,
    ALLOW,
    Setting("engines", None, "A TOML file of [engines.NAME] tables (as in a tournament file: "
            "endpoint, or command + speaks for an engine dxserial starts, watches and "
            "restarts); ENDPOINT_A and ENDPOINT_B may then be names from it.", kind=Path),
    Setting("name", DEFAULT_NAME, "Initiator name sent in GAMEREQs.", parse=said(check_name),
            show_default=True),
    Setting("verbose", 0, VERBOSE_HELP, kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
    Setting("quiet", False, QUIET_HELP, kind=bool, flags=("--quiet", "-q"), show_default=True),
)
