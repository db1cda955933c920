"""Each worker's health in a tournament on a cluster: games, forfeits, time losses,
crashes, games lost with the worker (killed or hung) and the mean time per move; and which
worker stands out (a bad host biases a test).  Sans-I/O: the director feeds it outcomes.

A worker stands out when its time losses (or its crashes) are at least :data:`AT_LEAST` and
more than :data:`TIMES` times as frequent per game as on all the other workers together
(with one added to theirs, so that a clean field does not make every first loss news).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["AT_LEAST", "TIMES", "Health", "WorkerHealth"]

AT_LEAST = 2
TIMES = 3.0


@dataclass
class WorkerHealth:
    games: int = 0
    forfeits: int = 0
    time_losses: int = 0
    crashes: int = 0
    #: Games this worker was lost (killed) or hung in: played again elsewhere.
    lost: int = 0
    seconds: float = 0.0
    plies: int = 0

    def per_move(self) -> float | None:
        return self.seconds / self.plies if self.plies else None


class Health:
    """Per worker (its name) the figures of the games it played in this run."""

    def __init__(self) -> None:
        self.workers: dict[str, WorkerHealth] = {}

    def _of(self, worker: str) -> WorkerHealth:
        return self.workers.setdefault(worker, WorkerHealth())

    def add(self, worker: str, *, plies: int, seconds: float, forfeits: int = 0,
            time_losses: int = 0, crashes: int = 0) -> None:
        """A game this worker played to its end."""
        one = self._of(worker)
        one.games += 1
        one.plies += plies
        one.seconds += seconds
        one.forfeits += forfeits
        one.time_losses += time_losses
        one.crashes += crashes

    def lose(self, worker: str) -> None:
        """A game in play on ``worker`` when it was lost or found hung."""
        self._of(worker).lost += 1

    def table(self) -> list[str]:
        """The per-worker table, as text lines (beside the crosstable)."""
        if not self.workers:
            return []
        width = max(6, *(len(w) for w in self.workers))
        rows = [f"{'worker':<{width}}  games  forfeits  time losses  crashes  lost  s/move"]
        for name in sorted(self.workers):
            one = self.workers[name]
            per = one.per_move()
            rows.append(
                f"{name:<{width}}  {one.games:>5}  {one.forfeits:>8}  {one.time_losses:>11}  "
                f"{one.crashes:>7}  {one.lost:>4}  {'-' if per is None else f'{per:.3f}':>6}"
            )
        return rows

    def standing_out(self) -> list[str]:
        """One line per worker whose time losses or crashes stand out (see the module)."""
        lines = []
        for name in sorted(self.workers):
            one = self.workers[name]
            others = [h for w, h in self.workers.items() if w != name]
            games = sum(h.games for h in others)
            if not one.games or not games:
                continue
            for what, mine, theirs in (
                ("time losses", one.time_losses, sum(h.time_losses for h in others)),
                ("crashes", one.crashes, sum(h.crashes for h in others)),
            ):
                rate, usual = mine / one.games, (theirs + 1) / games
                if mine >= AT_LEAST and rate > TIMES * usual:
                    lines.append(
                        f"worker {name} stands out: {mine} {what} in {one.games} game(s) "
                        f"({100 * rate:.0f}%), the other workers {theirs} in {games} "
                        f"({100 * theirs / games:.0f}%): check its host (load, engine build)"
                    )
        return lines

    def state(self) -> dict[str, dict[str, Any]]:
        """For tournament-state.json: per worker its figures and mean time per move."""
        out: dict[str, dict[str, Any]] = {}
        for name, one in sorted(self.workers.items()):
            per = one.per_move()
            out[name] = {**asdict(one), "seconds": round(one.seconds, 3),
                         "per_move": None if per is None else round(per, 4)}
        return out

    def load(self, saved: dict[str, Any]) -> None:
        """Figures of an earlier run of this event (``--resume``) to go on from."""
        for name, data in saved.items():
            if not isinstance(data, dict):
                continue
            one = self._of(str(name))
            for field in ("games", "forfeits", "time_losses", "crashes", "lost", "plies"):
                value = data.get(field)
                if isinstance(value, int):
                    setattr(one, field, value)
            seconds = data.get("seconds")
            if isinstance(seconds, (int, float)):
                one.seconds = float(seconds)
