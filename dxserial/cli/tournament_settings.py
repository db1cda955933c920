"""Every setting of ``dxserial tournament``, declared once, in the order of its --help: its
options, their checks and one-line errors, and docs/commands/tournament.md's table come from
here.  An option that overrides a key of the tournament file (``--concurrency``,
``--cluster``) is the file's declaration (:data:`~dxserial.tournament.keys.FILE_KEYS`) with
the option's help and no default (the file's then holds); the serial line's are
:mod:`dxserial.line_settings`'.  Why: docs/settings.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import typer

from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP
from dxserial.cli.options import ALLOW, WEB, said
from dxserial.engine.player import DEFAULT_NAME, check_name
from dxserial.line_settings import BAUD, LINK, NULMODEM_LINE
from dxserial.setting import Setting
from dxserial.tournament.keys import FILE_KEYS
from dxserial.tournament.spec import check_cluster

__all__ = ["SETTINGS"]

_FILE = {one.key: one for one in FILE_KEYS}
_START, _END, _ECHO, _ATTEMPTS = NULMODEM_LINE


def _print_keys(value: bool) -> None:
    if value:
        from dxserial.tournament.keys import example

        typer.echo(example())
        raise typer.Exit()


def _file(key: str, help: str, **changes: Any) -> Setting:
    """The tournament file's key ``key`` as an option that wins over the file's value."""
    return dataclasses.replace(_FILE[key], default=None, help=help, **changes)


def _cluster(value: Any, flag: str) -> str:
    return check_cluster(value, flag)


SETTINGS: tuple[Setting, ...] = (
    Setting("file", None, "The tournament file (TOML; --keys shows every key).", kind=Path,
            argument=True, metavar="FILE"),
    Setting("keys", False, "Print every key of the tournament file, with an example, and exit.",
            kind=bool, action=_print_keys),
    Setting("resume", False, "Continue the tournament whose state is in the pdn folder.",
            kind=bool),
    _file("concurrency", "Games at the same time (default: the file's, else 1); an endpoint "
          "engine plays one at a time, an engine dxserial runs gets its own process for each "
          "game. On a cluster: at most this many games in flight (default: the workers' "
          "threads and one waiting on each worker)."),
    _file("cluster", "Play the games as tasks on the workers of this Dask scheduler (else the "
          "file's cluster key; needs dxserial[cluster], see docs/cluster.md).",
          metavar="tcp://HOST:PORT", parse=_cluster),
    WEB,
    ALLOW,
    LINK,
    BAUD,
    dataclasses.replace(_ECHO, panel=None),
    dataclasses.replace(_ATTEMPTS, panel=None),
    Setting("name", DEFAULT_NAME, "Initiator name sent in GAMEREQs.", parse=said(check_name),
            show_default=True),
    Setting("verbose", 0, VERBOSE_HELP, kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
    Setting("quiet", False, QUIET_HELP, kind=bool, flags=("--quiet", "-q"), show_default=True),
)
