"""A tournament between N engines, sans I/O: the schedule, the scores, Elo, the state (the
file: :mod:`~dxserial.tournament.spec`).

Nothing here opens a port or reads a clock; :mod:`dxserial.tournament.runner`
plays the games.  Decisions:

* **Schedule.**  A round robin pairs every two engines; a gauntlet pairs one engine with
  each of the others.  Each pairing plays every opening twice per round, once with each
  engine as White, so an opening favours nobody (no openings: the normal start).  Games are
  numbered in the order round, opening, colour, pairing, and the next game to start is the
  lowest-numbered one whose two engines are both free (an engine plays one game at a time).
* **Scores** are draughts points: 2 for a win, 1 for a draw, 0 for a loss; ``*`` (no
  result) scores nothing and is not counted for Elo.
* **Ratings** are the field's, jointly from every game (:mod:`~dxserial.tournament.rating`,
  Ordo's logistic model: docs/ratings.md), with 95% intervals and the likelihood of
  superiority over the next engine; no longer each engine's performance against opponents
  taken as rated 0, which misranks an unequal field.
* **State.**  After every game the finished games are written (atomically) to the state
  file; a resumed tournament plays only the games not in it.  The file records a fingerprint
  of the schedule so that a changed tournament file is refused instead of mixed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dxserial.errors import ConfigError
from dxserial.files import write_atomic
from dxserial.protocol.messages import Colour
from dxserial.tournament.rating import FieldRatings, RatingError, Tally, rate_field
from dxserial.tournament.spec import TournamentSpec

__all__ = [
    "Pairing",
    "Schedule",
    "Scores",
    "State",
    "game_lines",
    "ratings_json",
]

@dataclass(frozen=True)
class Pairing:
    """One scheduled game."""

    number: int
    white: str
    black: str
    opening: int  # index into the spec's openings
    round: int


class Schedule:
    """The games of a tournament and which of them may start now."""

    def __init__(self, spec: TournamentSpec) -> None:
        names = spec.names
        if spec.format == "gauntlet":
            pairs = [(spec.gauntlet or names[0], n) for n in names if n != spec.gauntlet]
        else:
            pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
        games: list[Pairing] = []
        for rnd in range(1, spec.rounds + 1):
            for index in range(len(spec.openings)):
                for flip in (False, True):
                    for a, b in pairs:
                        white, black = (b, a) if flip else (a, b)
                        games.append(Pairing(len(games) + 1, white, black, index, rnd))
        self.games = games
        self._numbers = {(g.round, g.opening, g.white, g.black): g.number for g in games}
        openings = [o.text for o in spec.openings]
        played: list[object] = [[asdict(g) for g in games], openings, spec.moves, spec.minutes]
        if spec.time_moves is not None:  # only then: a file of before keeps its fingerprint
            played.append(spec.time_moves)
        self.fingerprint = hashlib.sha256(json.dumps(played).encode()).hexdigest()[:16]

    def ready(
        self, done: Iterable[int], running: Iterable[Pairing], parallel: Iterable[str] = ()
    ) -> list[Pairing]:
        """Games that may start now, lowest number first: not done, engines both free.

        Engines named in ``parallel`` (run by the director, one process per game) may be
        in several games at once."""
        finished = set(done)
        many = set(parallel)
        busy_games = {g.number for g in running}
        busy = {n for g in running for n in (g.white, g.black)} - many
        out: list[Pairing] = []
        for game in self.games:
            if game.number in finished or game.number in busy_games:
                continue
            if game.white in busy or game.black in busy:
                continue
            out.append(game)
            busy |= {game.white, game.black} - many
        return out

    def partner(self, game: Pairing) -> Pairing:
        """The game of the same ballot (round, opening, engines) with colours reversed."""
        number = self._numbers[(game.round, game.opening, game.black, game.white)]
        return self.games[number - 1]

    def halves(
        self, ready: list[Pairing], done: Iterable[int], running: Iterable[Pairing]
    ) -> list[Pairing]:
        """Of ``ready``, the games whose ballot's other colour is done or in play: after an
        SPRT's verdict, no ballot is left played with one colour only."""
        begun = set(done) | {g.number for g in running}
        return [g for g in ready if self.partner(g).number in begun]

    def last_for(
        self, game: Pairing, done: Iterable[int], running: Iterable[int] = ()
    ) -> set[str]:
        """The engines of ``game`` that have no other game left for the process playing it
        (they get stop code 1): none unplayed, or only games ``running`` now, which other
        processes of the engine play (with concurrency, each game its own process)."""
        finished = set(done) | {game.number} | set(running)
        left = {n for g in self.games if g.number not in finished for n in (g.white, g.black)}
        return {n for n in (game.white, game.black) if n not in left}


@dataclass
class GameResultEntry:
    """A finished game as the state file keeps it."""

    number: int
    white: str
    black: str
    result: str  # 2-0, 1-1, 0-2 or *
    reason: str
    pdn: str | None = None  # file name in the PDN folder
    white_name: str = ""
    black_name: str = ""
    plies: int = -1  # moves played (-1: not known, a state file from before this field)


@dataclass
class _Line:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    unfinished: int = 0
    points: int = 0
    games: int = 0


class Scores:
    """Standings and crosstable from finished games (points 2/1/0)."""

    def __init__(self, names: list[str], games: Iterable[GameResultEntry] = ()) -> None:
        self.names = names
        self.lines = {n: _Line() for n in names}
        self.cross: dict[tuple[str, str], list[int]] = {}  # (me, them) -> [points, games]
        self.display = {n: n for n in names}
        self.finished: list[GameResultEntry] = []  # every game added, for the ratings
        self._rated: tuple[int, FieldRatings | str] | None = None
        for game in games:
            self.add(game)

    def add(self, game: GameResultEntry) -> None:
        self.finished.append(game)
        for me, them, colour in ((game.white, game.black, "w"), (game.black, game.white, "b")):
            line = self.lines[me]
            line.games += 1
            cell = self.cross.setdefault((me, them), [0, 0])
            cell[1] += 1
            if game.result == "1-1":
                line.draws += 1
                points = 1
            elif game.result == "*":
                line.unfinished += 1
                points = 0
            elif (game.result == "2-0") == (colour == "w"):
                line.wins += 1
                points = 2
            else:
                line.losses += 1
                points = 0
            line.points += points
            cell[0] += points
        for name, engine in ((game.white, game.white_name), (game.black, game.black_name)):
            if engine and engine != name:
                self.display[name] = f"{name} ({engine})"

    def order(self) -> list[str]:
        """Names by points, then by fewer games (more to come), then as listed."""
        return sorted(self.names, key=lambda n: (-self.lines[n].points, self.lines[n].games))

    def ratings(self) -> FieldRatings | str:
        """The field's ratings from every finished game, or why there are none yet (kept
        until the next game: the crosstable, the state and the live view all ask)."""
        if self._rated is not None and self._rated[0] == len(self.finished):
            return self._rated[1]
        tally = Tally(list(self.names))
        for game in self.finished:
            tally.add_result(game.white, game.black, game.result)
        try:
            rated: FieldRatings | str = rate_field(tally)
        except RatingError as exc:
            rated = str(exc)
        self._rated = (len(self.finished), rated)
        return rated

    def standings_line(self) -> str:
        return ", ".join(f"{n} {self.lines[n].points}" for n in self.order())

    def table(self, done: int, total: int) -> list[str]:
        """The crosstable: one row per engine, its points against each opponent."""
        order = self.order()
        width = max(len(self.display[n]) for n in order)
        cells = []
        for me in order:
            row = []
            for them in order:
                if me == them:
                    row.append("x")
                else:
                    pts, games = self.cross.get((me, them), [0, 0])
                    row.append(f"{pts}/{2 * games}" if games else ".")
            cells.append(row)
        cw = max(5, *(len(c) for row in cells for c in row))
        head = "  ".join(str(i + 1).rjust(cw) for i in range(len(order)))
        out = [
            f"crosstable after {done} of {total} game(s); scoring: win 2, draw 1, loss 0",
            f"  #  {'engine'.ljust(width)}  {head}   score  W-D-L-*    rating [95%]"
            + " " * 13 + "LOS",
        ]
        field = self.ratings()
        rated = field.by_name() if isinstance(field, FieldRatings) else {}
        for i, (me, row) in enumerate(zip(order, cells, strict=True), 1):
            line = self.lines[me]
            score = f"{line.points}/{2 * line.games}"
            wdl = f"{line.wins}-{line.draws}-{line.losses}-{line.unfinished}"
            mine = rated.get(me)
            rating = mine.text() if mine else "-"
            out.append(
                f"  {i}  {self.display[me].ljust(width)}  "
                + "  ".join(c.rjust(cw) for c in row)
                + f"  {score.rjust(6)}  {wdl.ljust(9)}  {rating.ljust(23)}  "
                + (mine.los_text() if mine else "-").rjust(3)
            )
        out.append(_ratings_note(field))
        return out


def ratings_json(field: FieldRatings | str) -> dict[str, Any]:
    """The ratings as the state file and the live view carry them."""
    if isinstance(field, str):
        return {"none": field}
    return field.to_json()


def _ratings_note(field: FieldRatings | str) -> str:
    """The line under the crosstable that says what its ratings are."""
    if isinstance(field, str):
        return f"rating: none yet ({field})"
    return field.note()


def game_lines(games: dict[int, GameResultEntry]) -> list[str]:
    """Every finished game with its result and why it ended (beside the crosstable)."""
    rows = [f"games ({len(games)}):"]
    for number in sorted(games):
        g = games[number]
        rows.append(f"  {number:>3}  {g.white} - {g.black}  {g.result}  ({g.reason})")
    return rows


@dataclass
class State:
    """What a resumed tournament needs: the finished games (written after every game)."""

    fingerprint: str
    games: dict[int, GameResultEntry] = field(default_factory=dict)
    #: Engines the director runs: per process slot its restarts, events and process group
    #: (a resumed tournament kills a group a crashed director left behind).
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Games started and not yet finished, by number: their engines' names. Written when a
    #: game starts and when it ends, so a resumed run knows which engines may still have a
    #: game open (None: a file from before this record, which cannot say).
    playing: dict[int, list[str]] | None = field(default_factory=dict)
    #: The field's ratings from the games so far (rating.FieldRatings.to_json, or why none):
    #: written for scripts and people; a resumed run computes them again from the games.
    ratings: dict[str, Any] | None = None
    #: On a cluster: each worker's health (games, forfeits, time losses, crashes, ...).
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, fingerprint: str) -> State:
        """The state at ``path``; :class:`ConfigError` if it is for another tournament."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(fingerprint)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read tournament state {path}: {exc}") from None
        if data.get("fingerprint") != fingerprint:
            raise ConfigError(
                f"{path} belongs to a different tournament (engines, openings or limits "
                "changed); use another pdn folder, or remove the file to start over"
            )
        games = {int(g["number"]): GameResultEntry(**g) for g in data.get("games", [])}
        playing: dict[int, list[str]] | None = None
        if "playing" in data:
            try:
                playing = {int(n): [str(e) for e in names]
                           for n, names in dict(data["playing"]).items()}
            except (TypeError, ValueError, AttributeError):
                raise ConfigError(f"cannot read tournament state {path}: 'playing' is not "
                                  "a table of game numbers and engine names") from None
        workers = data.get("workers", {})
        return cls(fingerprint, games, dict(data.get("engines", {})), playing,
                   dict(workers) if isinstance(workers, dict) else {})

    def may_have_a_game_open(self, name: str) -> str | None:
        """Why engine ``name`` may still have a game of the previous run open, or None."""
        if self.playing is None:
            return "the state file is from before dxserial recorded the games in play"
        for number, names in sorted(self.playing.items()):
            if name in names:
                return f"game {number} was in play when the previous run ended"
        return None

    def to_json(self) -> str:
        games = [asdict(self.games[n]) for n in sorted(self.games)]
        data: dict[str, Any] = {"fingerprint": self.fingerprint, "games": games}
        if self.engines:
            data["engines"] = self.engines
        data["playing"] = {str(n): names for n, names in sorted((self.playing or {}).items())}
        if self.ratings is not None:
            data["ratings"] = self.ratings
        if self.workers:
            data["workers"] = self.workers
        return json.dumps(data, indent=1) + "\n"

    def save(self, path: Path) -> None:
        write_atomic(path, self.to_json())


def colour_of(game: Pairing, name: str) -> Colour:
    return Colour.WHITE if game.white == name else Colour.BLACK
