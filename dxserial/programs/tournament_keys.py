"""Every key of a tournament file, with what it means: ``dxserial tournament --keys``.

A test holds this table to the keys the reader accepts (``tournament._DEFAULTS``), so a new
setting cannot be added without saying here what it does.
"""

from __future__ import annotations

#: Top-level key -> (example value as TOML, what it means).
TOP: dict[str, tuple[str, str]] = {
    "event": ('"Lab round robin"', "the event's name (PDN Event tag, page title)"),
    "format": ('"round-robin"', 'or "gauntlet": one engine (gauntlet = "NAME") against all'),
    "gauntlet": ('"scan"', "with format = \"gauntlet\": the engine that plays everyone"),
    "rounds": ("1", "each pairing plays every opening this many times, both colours"),
    "minutes": ("5", "per player, sent in each GAMEREQ"),
    "moves": ("75", "move limit: a draw after this many full moves (0: none)"),
    "move_timeout": ("60", "seconds for one move or answer, else a forfeit"),
    "connect_timeout": ("30", "seconds for an engine to be reached at the start"),
    "concurrency": ("1", "games at the same time (--concurrency wins)"),
    "pdn": ('"games"', "folder (relative to the file): a PDN per game, event.pdn, the state"),
    "openings": ('["", "1. 32-28 18-23"]', '"": the normal start; PDN moves or a FEN'),
}

#: Keys of each [engines.NAME] table.
ENGINE: dict[str, tuple[str, str]] = {
    "endpoint": ('"tcp://10.0.0.22:27531"', "required: a serial port, tcp:// or listen://"),
    "link": ('"nulmodem"', 'on a serial endpoint: "nulmodem" or "nul" (else --link)'),
    "baud": ("2400", "on a serial endpoint: its speed (else --baud)"),
}


def example() -> str:
    """A commented tournament file with every key."""
    width = max(len(f"{k} = {v}") for table in (TOP, ENGINE) for k, (v, _) in table.items())

    def lines(table: dict[str, tuple[str, str]]) -> list[str]:
        # gauntlet only goes with format = "gauntlet": shown, but commented out.
        return [
            f"{'# ' if k == 'gauntlet' else ''}{f'{k} = {v}'.ljust(width)}  # {about}"
            for k, (v, about) in table.items()
        ]

    return "\n".join(
        ["# A tournament file (TOML): every key, with an example value.", *lines(TOP), "",
         "[engines.NAME]                # one table per engine, at least two", *lines(ENGINE)]
    )


__all__ = ["ENGINE", "TOP", "example"]
