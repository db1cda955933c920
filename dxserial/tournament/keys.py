"""Every key of a tournament file, with what it means: ``dxserial tournament --keys``.

A test holds this table to the keys the reader accepts (``tournament.spec.KNOWN_KEYS``,
``hosting.command.COMMAND_KEYS``), so a new setting cannot be added without saying here what
it does.  Keys that exclude others (``gauntlet``, ``sprt``, an engine's ``command``) are
shown commented out, so the example stays a file that reads.
"""

from __future__ import annotations

from dxserial.game import adjudication
from dxserial.tournament import ballots, hub_time

#: Top-level key -> (example value as TOML, what it means).
TOP: dict[str, tuple[str, str]] = {
    "event": ('"Lab round robin"', "the event's name (PDN Event tag, page title)"),
    "format": ('"round-robin"', 'or "gauntlet": one engine (gauntlet = "NAME") against all'),
    "gauntlet": ('"scan"', "with format = \"gauntlet\": the engine that plays everyone"),
    "rounds": ("1", "each pairing plays every opening this many times, both colours"),
    "minutes": ("5", "time control: minutes per player, sent in each GAMEREQ"),
    "time_moves": ("75", "time control: the moves those minutes are for (0: the game; "
                   "default: max_moves)"),
    "max_moves": ("75", "the director's move limit: a draw after this many full moves (0: none)"),
    "moves": ("75", "the old name of max_moves (give one of the two)"),
    "move_timeout": ("60", "seconds for one move or answer, else a forfeit"),
    "connect_timeout": ("30", "seconds for an engine to be reached at the start"),
    "concurrency": ("1", "games at the same time (--concurrency wins)"),
    "pdn": ('"games"', "folder (relative to the file): a PDN per game, event.pdn, the state"),
    "pdn_notes": ("false", "PDN with the referee's notes, clocks as prose instead of commands"),
    "openings": ('["", "1. 32-28 18-23"]', '"": the normal start; PDN moves or a FEN; or '
                 '"2-move": every 2-move ballot (docs/ballots.md)'),
    "openings_file": ('"book.txt"', "one FEN or PDN move list a line (relative to the file)"),
    **{key: (example, about) for key, (_, example, about) in ballots.KEYS.items()},
    **{key: (example, about) for key, (example, about) in adjudication.KEYS.items()},
    **{key: (example, about) for key, (_, example, about) in hub_time.KEYS.items()},
    "on_unreachable": ('"stop"', 'an engine not reached before its first game: "stop" or '
                       '"forfeit" its games'),
    "draw_rules": ('"fmjd"', 'FMJD\'s draw rules end games, or "off" (the move limit only)'),
    "on_false_claim": ('"loss"', 'a GAMEEND claim the position does not bear out: "loss" '
                       'or "as-claimed"'),
    "time_control": ('"on"', 'director\'s clocks from minutes/time_moves; "off"; "Ns": N s a game'),
    "clock_margin": ("0.3", "seconds a move not charged to the engine (the line's share)"),
    "sprt": ("{ elo0 = 0, elo1 = 5, alpha = 0.05, beta = 0.05 }",
             "two engines: play game pairs until the SPRT accepts H0 or H1"),
    "cluster": ('"tcp://10.0.0.5:8786"', "a Dask scheduler: games run on its workers "
                "(dxserial[cluster], docs/cluster.md; --cluster wins)"),
}

#: Keys of each [engines.NAME] table.
ENGINE: dict[str, tuple[str, str]] = {
    "endpoint": ('"tcp://10.0.0.22:27531"', "required: a serial port, tcp:// or listen://"),
    "link": ('"nulmodem"', 'on a serial endpoint: "nulmodem" or "nul" (else --link)'),
    "baud": ("2400", "on a serial endpoint: its speed (else --baud)"),
    "command": ('["./scan", "dxp"]', "instead of endpoint: an engine the director starts"),
    "speaks": ('"dxp-server"', 'with command: "dxp-server", "dxp-client", "dosbox", "hub"'),
    "cwd": ('"scan-3.1"', "with command: its working folder (relative to the file)"),
    "env": ('{ SCAN_THREADS = "1" }', "with command: environment variables added"),
    "files": ('{ "scan.ini" = "dxp-port = {port}" }', "with command: files written into cwd"),
    "max_restarts": ("10", "with command: failures before its games are forfeited"),
    "stop_grace": ("3", "with command: seconds from SIGTERM to SIGKILL"),
    "ready_timeout": ("30", "with command: seconds to be ready (else connect_timeout)"),
    "program": ('"DXENG.COM"', 'speaks = "dosbox": the DOS program (default DXENG.COM)'),
    "args": ('""', 'speaks = "dosbox": its arguments'),
    "cycles": ('"max"', 'speaks = "dosbox": DOSBox\'s cpu cycles'),
    "worker": ('"lab-pc-3"', "on a cluster: only the worker of this --name plays its games"),
    "resources": ("{ serial = 1 }", "on a cluster: worker resources each of its games holds "
                  "(dask worker --resources \"serial=1\")"),
}

#: Shown commented out: each needs or excludes something the example does not have.
COMMENTED = frozenset({"gauntlet", "sprt", "openings_file", "openings_seed", "moves",
                       *adjudication.KEYS, *hub_time.KEYS,
                       "time_moves", "cluster",
                       *list(ENGINE)[3:]})


def example() -> str:
    """A commented tournament file with every key."""
    width = max(len(f"{k} = {v}") for table in (TOP, ENGINE) for k, (v, _) in table.items())

    def lines(table: dict[str, tuple[str, str]]) -> list[str]:
        return [
            f"{'# ' if k in COMMENTED else ''}{f'{k} = {v}'.ljust(width)}  # {about}"
            for k, (v, about) in table.items()
        ]

    return "\n".join(
        ["# A tournament file (TOML): every key, with an example value.", *lines(TOP), "",
         "[engines.NAME]                # one table per engine, at least two", *lines(ENGINE)]
    )


__all__ = ["ENGINE", "TOP", "example"]
