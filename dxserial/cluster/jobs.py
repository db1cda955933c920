"""A game as a task and its outcome, as plain picklable data (no Dask here).

A :class:`GameJob` carries everything a worker needs to play one game on its own host with
the same conductor and arbiter as the director would: both engines' tables, the link
options, the match settings and the start position.  A :class:`GameOutcome` carries back
what the director records: the result, the PDN text and the engines' log lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dxserial.match.rules import GameStart, MatchConfig
from dxserial.tournament.spec import EngineEntry
from dxserial.transports.endpoints import LinkOptions

__all__ = ["PLAYING_TOPIC", "SLACK", "STARTED_TOPIC", "EngineNotStarted", "GameJob",
           "GameOutcome", "Placement", "place", "placement", "silence_bound", "tally"]

#: The topic a worker's "game N started here" events go to (the director names replays).
STARTED_TOPIC = "dxserial-game-started"
#: The topic of a worker's words while it plays a game (the director's evidence it lives).
PLAYING_TOPIC = "dxserial-game-playing"
#: Seconds added to a silence bound: the words' way through the scheduler, a busy host.
SLACK = 5.0


class EngineNotStarted(Exception):
    """An engine of the game could not be started or reached on the worker's host: the
    game was not played (the director stops the event; --resume plays it)."""


@dataclass(frozen=True)
class GameJob:
    number: int
    white: EngineEntry
    black: EngineEntry
    options: LinkOptions
    config: MatchConfig
    start: GameStart
    #: Engines that get stop code 1 (no further game on this connection).
    last: frozenset[str]


@dataclass(frozen=True)
class GameOutcome:
    number: int
    result: str
    reason: str
    plies: int
    white_name: str
    black_name: str
    worker: str
    pdn_name: str | None = None
    pdn_text: str = ""
    #: Engine name -> what its process wrote during this game (command engines).
    logs: dict[str, str] = field(default_factory=dict)
    #: The game's time on the worker (GAMEREQ to the end), for the mean time per move.
    seconds: float = 0.0
    #: Sides that forfeited, lost on time (flag or no move in time), crashed (their link
    #: or process ended mid-game): the worker's health, per :func:`tally`.
    forfeits: int = 0
    time_losses: int = 0
    crashes: int = 0
    #: The engines the worker keeps after this game (their table names).
    kept: tuple[str, ...] = ()


def tally(reason: str, failures: list[str | None]) -> tuple[int, int, int]:
    """Forfeits, time losses and crashes of one game, from its result's reason and each
    side's failure: a flag fallen or no move in time is a time loss; a failure that is
    neither a time loss nor a refused game (a link or process that ended) a crash."""
    failed = [f for f in failures if f]
    forfeits = reason.count(" forfeits: ")
    timeouts = sum(1 for f in failed if f.startswith("no move within"))
    time_losses = timeouts + reason.count(" lost on time")
    crashes = sum(1 for f in failed if not f.startswith(("no move within", "refused game",
                                                         "cannot reach")))
    return forfeits, time_losses, crashes


def silence_bound(config: MatchConfig, *, first: bool) -> float:
    """The longest a worker playing a game under ``config`` may say nothing while alive.

    A move takes at most the move timeout (or the whole clock, when shorter), and the
    GAMEEND exchange at most its own timeout: the conductor on the worker ends the game
    (a time loss) rather than wait longer, and says so.  Before the first word come the
    engines' start (``connect_timeout``) and the GAMEACC (a move timeout).
    """
    move = min(config.move_timeout, 60.0 * config.minutes) if config.minutes > 0 \
        else config.move_timeout
    bound = max(move, config.gameend_timeout) + SLACK
    if first:
        bound += config.connect_timeout + config.move_timeout
    return bound


@dataclass(frozen=True)
class Placement:
    """Where a game may run: worker names (empty: any) and the resources it holds."""

    workers: tuple[str, ...] = ()
    resources: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        parts = [f"worker {w}" for w in self.workers]
        parts += [f"{k}={v:g}" for k, v in sorted(self.resources.items())]
        return ", ".join(parts) or "any worker"


def placement(engine: EngineEntry) -> Placement:
    """Where one engine's games may run, as its table says."""
    workers = (engine.worker,) if engine.worker is not None else ()
    return Placement(workers, dict(engine.resources))


def place(white: EngineEntry, black: EngineEntry) -> Placement:
    """A game's placement: its engines' workers (one at most) and their resources summed
    (two engines on serial lines hold two lines); ValueError when they name two workers."""
    workers = {e.worker for e in (white, black) if e.worker is not None}
    if len(workers) > 1:
        raise ValueError(
            f"engines {white.name} and {black.name} are bound to different workers "
            f"({', '.join(sorted(workers))}): their games cannot run anywhere"
        )
    resources: dict[str, float] = {}
    for engine in (white, black):
        for name, amount in engine.resources:
            resources[name] = resources.get(name, 0.0) + amount
    return Placement(tuple(sorted(workers)), resources)
