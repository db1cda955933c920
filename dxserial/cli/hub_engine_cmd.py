"""``dxserial hub-engine``: the built-in engine speaks the Hub protocol on stdin/stdout.

Its options are made from :data:`SETTINGS`, and checked by it.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import HUB_QUIET_HELP, HUB_VERBOSE_HELP, configure_logging
from dxserial.cli.options import parameters
from dxserial.engine.player import MAX_DEPTH, check_depth
from dxserial.hub_engine.engine import HubEngine
from dxserial.hub_engine.runner import run_hub_engine
from dxserial.setting import Setting, checked

__all__ = ["SETTINGS", "hub_engine_command"]


def _depth(value: Any, option: str) -> int:
    return check_depth(value, option)


#: The engine's own defaults (its name, its depth), written once in HubEngine.
_DEFAULT = {k: p.default for k, p in inspect.signature(HubEngine).parameters.items()}

#: Every setting of ``dxserial hub-engine``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("depth", _DEFAULT["depth"], f"Search depth in plies (1..{MAX_DEPTH}); 'level depth=N' "
            "replaces it, 'level move-time=' / 'time=' search to this depth but never past the "
            "time, 'level infinite' until 'stop'.", kind=int, parse=_depth, show_default=True),
    Setting("name", _DEFAULT["name"], "Engine name in the 'id' answer.", show_default=True),
    Setting("seed", None, "Seed for choosing among equal moves (default: random).", kind=int),
    Setting("verbose", 0, HUB_VERBOSE_HELP, kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
    Setting("quiet", False, HUB_QUIET_HELP, kind=bool, flags=("--quiet", "-q"),
            show_default=True),
)


def hub_engine_command(**given: Any) -> None:
    """Speak the Hub protocol (Scan 3.x, Hub GUI, pydraughts) on stdin/stdout with the
    built-in engine.

    Answers hub, init, pos, level, go, stop, ping, new-game and quit; a line it cannot read
    gets 'error message=...' and the session goes on. Exits 0 on quit or end of input.
    """
    verbose = given["verbose"]
    configure_logging(verbose - 1 if verbose else 0, given["quiet"] or not verbose)
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    engine = HubEngine(name=values["name"], depth=values["depth"])
    raise typer.Exit(runtime.run(run_hub_engine(engine, values["seed"])))


hub_engine_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("hub-engine")(hub_engine_command)
