"""An engine set up as initiator: what to tell the user, and the setting to change.

The director (``dxserial match``, ``tournament``) is the initiator: it offers every game.
An engine set up as initiator sends its own GAMEREQ as soon as it is connected (GWD with
``--dxp_initiator=true``, its default) and then waits for a GAMEACC; a GAMEREQ sent to it
on top of its own is a protocol error it may die of.  The director says nothing more to
it, names it once, and the game is forfeited (or the event stopped) as the failure policy
says.
"""

from __future__ import annotations

__all__ = ["advice", "forfeit_reason", "named_line"]

#: Engine name (as its GAMEREQ gives it, lower case, its first word) -> the setting to change.
SETTINGS: dict[str, str] = {
    "gwd": "start GWD with --dxp_initiator=false",
    "scan": "set dxp-initiator = false in scan.ini",
}
GENERIC = "set it up as the follower (it waits for the GAMEREQ)"


def advice(name: str) -> str:
    """The setting to change for the engine called ``name`` (its GAMEREQ's name field)."""
    words = name.strip().lower().split()
    return SETTINGS.get(words[0], GENERIC) if words else GENERIC


def forfeit_reason(name: str) -> str:
    """Why the engine loses the game, short (a game result's reason)."""
    return (f"set up as initiator: it sent its own GAMEREQ, the director is the initiator "
            f"({advice(name)})")


def named_line(label: str, name: str, raw: str) -> str:
    """The one line the first time: which engine, who is the initiator, what to change."""
    called = f" ({name.strip()})" if name.strip() else ""
    return (
        f"engine {label}{called} is set up as the initiator: it sent its own GAMEREQ "
        f"'{raw}' when the director connected, but the director is the initiator here and "
        f"offers every game; {advice(name)} (nothing more is sent to it: its games are "
        "forfeited as the failure policy says)"
    )
