"""Every key of a tournament file, declared once: its default, kind, bounds, an example
and what it means.  :mod:`~dxserial.tournament.spec` reads and checks the file by
:data:`FILE_KEYS`; ``dxserial tournament --keys`` shows them (:func:`example`).

A new key is one :class:`~dxserial.setting.Setting` in :data:`FILE_KEYS` (and, when it is
more than a value, its reading in ``spec``).  Keys that exclude others (``gauntlet``,
``sprt``, an engine's ``command``) are shown commented out, so the example stays a file
that reads.  A test holds :data:`ENGINE` to the keys the engine tables take.
"""

from __future__ import annotations

from dxserial.game import adjudication
from dxserial.game.arbiter import DRAW_RULES, ON_FALSE_CLAIM, ArbiterSettings
from dxserial.line_settings import LINK_KINDS
from dxserial.processes.command import COMMAND_SETTINGS, KIND_SETTINGS
from dxserial.setting import Setting
from dxserial.tournament import ballots, hub_time

_ARBITER = ArbiterSettings()

#: Every top-level key but the [engines.NAME] tables, in the order --keys shows them.
FILE_KEYS: tuple[Setting, ...] = (
    Setting("event", "dxserial tournament", example='"Lab round robin"',
            about="the event's name (PDN Event tag, page title)"),
    Setting("format", "round-robin", choices=("round-robin", "gauntlet"),
            about='or "gauntlet": one engine (gauntlet = "NAME") against all'),
    Setting("gauntlet", None, example='"scan"',
            about="with format = \"gauntlet\": the engine that plays everyone"),
    Setting("rounds", 1, kind=int, minimum=1, maximum=999,
            about="each pairing plays every opening this many times, both colours"),
    Setting("minutes", 5, kind=int, minimum=0, maximum=999,
            about="time control: minutes per player, sent in each GAMEREQ"),
    Setting("time_moves", None, kind=int, minimum=0, maximum=999, example="75",
            about="time control: the moves those minutes are for (0: the game; default: "
            "max_moves)"),
    Setting("max_moves", 75, kind=int, minimum=0, maximum=999,
            about="the director's move limit: a draw after this many full moves (0: none)"),
    Setting("moves", None, kind=int, minimum=0, maximum=999, example="75",
            about="the old name of max_moves (give one of the two)"),
    Setting("move_timeout", 60.0, kind=float, minimum=0, above=True,
            about="seconds for one move or answer, else a forfeit"),
    Setting("connect_timeout", 30.0, kind=float, minimum=0, above=True,
            about="seconds for an engine to be reached at the start"),
    Setting("concurrency", 1, kind=int, minimum=1, maximum=999,
            about="games at the same time (--concurrency wins)"),
    Setting("pdn", "games", about="folder (relative to the file): a PDN per game, event.pdn, "
            "the state"),
    Setting("pdn_notes", False, kind=bool,
            about="PDN with the referee's notes, clocks as prose instead of commands"),
    Setting("openings", (), kind=list, example='["", "1. 32-28 18-23"]',
            about='"": the normal start; PDN moves or a FEN; or "2-move": every 2-move '
            "ballot (docs/ballots.md)"),
    Setting("openings_file", None, example='"book.txt"',
            about="one FEN or PDN move list a line (relative to the file)"),
    # Keys that are more than a value, each checked by its own reader (kind object: the
    # reader's words, not a generic check): the ballots' order, adjudication, Hub time.
    *(Setting(key, default, kind=object, example=example, about=about)
      for key, (default, example, about) in ballots.KEYS.items()),
    *(Setting(key, None, kind=object, example=example, about=about)
      for key, (example, about) in adjudication.KEYS.items()),
    *(Setting(key, default, kind=object, example=example, about=about)
      for key, (default, example, about) in hub_time.KEYS.items()),
    Setting("on_unreachable", "stop", choices=("stop", "forfeit"),
            about='an engine not reached before its first game: "stop" or "forfeit" its games'),
    Setting("draw_rules", _ARBITER.draw_rules, choices=DRAW_RULES,
            about='FMJD\'s draw rules end games, or "off" (the move limit only)'),
    Setting("on_false_claim", _ARBITER.on_false_claim, choices=ON_FALSE_CLAIM,
            about='a GAMEEND claim the position does not bear out: "loss" or "as-claimed"'),
    Setting("time_control", _ARBITER.time_control,
            about='director\'s clocks from minutes/time_moves; "off"; "Ns": N s a game'),
    Setting("clock_margin", _ARBITER.clock_margin, kind=float,
            about="seconds a move not charged to the engine (the line's share)"),
    Setting("sprt", None, kind=dict, example="{ elo0 = 0, elo1 = 5, alpha = 0.05, beta = 0.05 }",
            about="two engines: play game pairs until the SPRT accepts H0 or H1"),
    Setting("cluster", None, example='"tcp://10.0.0.5:8786"',
            about="a Dask scheduler: games run on its workers (dxserial[cluster], "
            "docs/cluster.md; --cluster wins)"),
)
#: Each key's default, written once here (``dxserial match`` takes the same for its options).
DEFAULTS: dict[str, object] = {one.key: one.default for one in FILE_KEYS}
#: Top-level key -> (example value as TOML, what it means).
TOP: dict[str, tuple[str, str]] = {one.key: (one.toml_example, one.meaning) for one in FILE_KEYS}

#: The keys of an [engines.NAME] table that names where the engine is.
ENDPOINT_KEYS: tuple[Setting, ...] = (
    Setting("endpoint", None, example='"tcp://10.0.0.22:27531"',
            about="required: a serial port, tcp:// or listen://"),
    Setting("link", None, choices=LINK_KINDS, example='"nulmodem"',
            about='on a serial endpoint: "nulmodem" or "nul" (else --link)'),
    Setting("baud", None, kind=int, minimum=1, example="2400",
            about="on a serial endpoint: its speed (else --baud)"),
)
#: The keys of any engine table that say where its games may run on a cluster.
PLACEMENT: tuple[Setting, ...] = (
    Setting("worker", None, example='"lab-pc-3"',
            about="on a cluster: only the worker of this --name plays its games"),
    Setting("resources", None, kind=dict, example="{ serial = 1 }",
            about="on a cluster: worker resources each of its games holds (dask worker "
            '--resources "serial=1")'),
)
#: Keys of each [engines.NAME] table -> (example value as TOML, what it means).
ENGINE: dict[str, tuple[str, str]] = {
    one.key: (one.toml_example, one.meaning)
    for one in (*ENDPOINT_KEYS, *COMMAND_SETTINGS, *(s for k in KIND_SETTINGS.values() for s in k),
                *PLACEMENT)
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


__all__ = ["DEFAULTS", "ENGINE", "FILE_KEYS", "TOP", "example"]
