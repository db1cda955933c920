"""Ratings of a field, sans I/O: one maximum-likelihood rating per engine from every game.

The model is Ordo's (and the logistic Elo of :mod:`~dxserial.tournament.sprt`): an engine
rated ``d`` above its opponent expects the score ``1 / (1 + 10^(-d/400))`` per game, a draw
is half a point (draughts' 2-1-0 counts 1, 1/2, 0), and the ratings are those under which
every engine's expected score equals its score.  Anchored at the field's mean (or one
engine), with 95% intervals from the Hessian and the likelihood of superiority (LOS) of each
engine over the next in the ranking.  Why each choice, and the check against Ordo:
``docs/ratings.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dxserial.errors import DxSerialError
from dxserial.tournament.sprt import logistic_score

__all__ = [
    "FieldRatings",
    "Rated",
    "RatingError",
    "Tally",
    "rate_field",
]

#: Elo per natural-log unit of the odds: 400 / ln 10.
_SCALE = 400.0 / math.log(10.0)
#: 1.96: the two-sided 95% normal quantile.
_Z95 = 1.959963984540054


class RatingError(DxSerialError):
    """The games cannot rate the field (one line: which engines, and why)."""


@dataclass
class Tally:
    """Every game between the engines, as points: ``score[(a, b)]`` is a's score against b
    (win 1, draw 1/2), ``games[(a, b)]`` their games (both orders keep the same count)."""

    names: list[str] = field(default_factory=list)
    score: dict[tuple[str, str], float] = field(default_factory=dict)
    games: dict[tuple[str, str], int] = field(default_factory=dict)
    #: Draws by pairing: with the score, they give each pairing's wins, draws and losses.
    draws: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, white: str, black: str, white_score: float) -> None:
        """One finished game; ``white_score`` is 1, 1/2 or 0."""
        for name in (white, black):
            if name not in self.names:
                self.names.append(name)
        for me, them, s in ((white, black, white_score), (black, white, 1.0 - white_score)):
            self.score[(me, them)] = self.score.get((me, them), 0.0) + s
            self.games[(me, them)] = self.games.get((me, them), 0) + 1
            if white_score == 0.5:
                self.draws[(me, them)] = self.draws.get((me, them), 0) + 1

    def add_result(self, white: str, black: str, result: str) -> bool:
        """A draughts result ("2-0", "1-1", "0-2"; chess's "1-0" too); False for "*"."""
        points = {"2-0": 1.0, "1-0": 1.0, "1-1": 0.5, "1/2-1/2": 0.5, "0-2": 0.0, "0-1": 0.0}
        if result not in points or white == black:
            return False
        self.add(white, black, points[result])
        return True

    def total(self, name: str, among: Iterable[str] | None = None) -> tuple[float, int]:
        """``name``'s score and games against ``among`` (default: everyone)."""
        them = set(self.names if among is None else among) - {name}
        s = sum(self.score.get((name, o), 0.0) for o in them)
        n = sum(self.games.get((name, o), 0) for o in them)
        return s, n


@dataclass(frozen=True)
class Rated:
    """One engine's rating.  ``low``/``high`` are its 95% interval; an engine that scored
    nothing (or everything) has no finite maximum-likelihood rating: ``bound`` is "upper"
    (or "lower"), ``rating`` is where a score that extreme is even odds, and only the one
    bound its games give is finite (the other is None)."""

    name: str
    rating: float
    low: float | None
    high: float | None
    score: float  # points, a win 1, a draw 1/2
    games: int
    los: float | None = None  # P(stronger than the next engine in the ranking)
    bound: str | None = None  # None, "upper" (no points) or "lower" (every point)

    def text(self) -> str:
        """``+35 [-12, +81]``, or ``< -493`` for an engine with no points."""
        if self.bound == "upper" and self.high is not None:
            return f"< {_signed(self.high)}"
        if self.bound == "lower" and self.low is not None:
            return f"> {_signed(self.low)}"
        if self.low == self.high == self.rating:
            return f"{_signed(self.rating)} (anchor)"
        low = "?" if self.low is None else _signed(self.low)
        high = "?" if self.high is None else _signed(self.high)
        return f"{_signed(self.rating)} [{low}, {high}]"

    def los_text(self) -> str:
        return "-" if self.los is None else f"{100 * self.los:.0f}%"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name, "rating": round(self.rating, 1),
            "low": None if self.low is None else round(self.low, 1),
            "high": None if self.high is None else round(self.high, 1),
            "score": self.score, "games": self.games,
            "los": None if self.los is None else round(self.los, 4), "bound": self.bound,
        }


@dataclass(frozen=True)
class FieldRatings:
    """The field, strongest first."""

    engines: list[Rated]
    anchor: str | None  # an engine's name, or None: the field's mean
    anchor_rating: float
    dispersion: float  # observed per-game score variance / the binomial one (docs/ratings.md)

    def by_name(self) -> dict[str, Rated]:
        return {r.name: r for r in self.engines}

    def anchor_text(self) -> str:
        where = f"{self.anchor} at" if self.anchor else "the field's mean at"
        return f"{where} {self.anchor_rating:g}"

    def table(self) -> list[str]:
        width = max([6, *(len(r.name) for r in self.engines)])
        out = [f"  #  {'engine'.ljust(width)}  rating [95%]            points  games   LOS"]
        for i, r in enumerate(self.engines, 1):
            out.append(
                f"  {i:<2} {r.name.ljust(width)}  {r.text().ljust(22)}  {_points(r.score):>6}"
                f"  {r.games:>5}  {r.los_text():>4}"
            )
        return out

    def note(self) -> str:
        return (
            f"rating: joint maximum likelihood, logistic (Ordo's model), anchored: "
            f"{self.anchor_text()}; [95%] from the Hessian x the games' dispersion "
            f"{self.dispersion:.2f}; LOS: likelihood the engine is stronger than the next"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "model": "logistic maximum likelihood (Ordo's), draws as half points",
            "anchor": self.anchor, "anchor_rating": self.anchor_rating,
            "interval": "95%, Hessian x dispersion", "dispersion": round(self.dispersion, 4),
            "engines": [r.to_json() for r in self.engines],
        }


def _signed(x: float) -> str:
    return f"{round(x) + 0:+d}"  # + 0: no "-0"


def _points(x: float) -> str:
    return f"{x:g}"


def _expect(d: float) -> float:
    """Expected score at a rating difference ``d`` (Elo)."""
    if d < -3000:
        return 0.0
    if d > 3000:
        return 1.0
    return logistic_score(d)


def rate_field(
    tally: Tally, *, anchor: str | None = None, anchor_rating: float = 0.0
) -> FieldRatings:
    """The ratings of every engine of ``tally`` that played; :class:`RatingError` when the
    games split it into groups that cannot be compared (or the anchor is not one of them)."""
    names = [n for n in tally.names if tally.total(n)[1] > 0]
    if not names:
        raise RatingError("no finished game to rate")
    if anchor is not None and anchor not in names:
        known = ", ".join(names)
        raise RatingError(f"anchor {anchor!r} played no rated game here (engines: {known})")
    core, extremes = _peel(tally, names)
    _connected(tally, core)
    ratings = _fit(tally, core)
    bounds: dict[str, tuple[str, float]] = {}
    for name, kind in reversed(extremes):  # the last peeled played the core itself
        ratings[name], bounds[name] = _extreme(tally, name, kind, ratings)
    cov, dispersion = _covariance(tally, core, ratings)
    shift = anchor_rating - (
        ratings[anchor] if anchor is not None else sum(ratings.values()) / len(ratings)
    )
    index = {n: i for i, n in enumerate(core)}
    mean_var = [sum(row) / len(core) for row in cov]  # cov(r_i, mean of the core)
    mean_mean = sum(mean_var) / len(core)

    def variance(name: str) -> float:
        i = index[name]
        if anchor is None:  # the mean of the core is the gauge the covariance is in
            return max(0.0, cov[i][i] - 2 * mean_var[i] + mean_mean)
        if anchor in index:
            a = index[anchor]
            return max(0.0, cov[i][i] + cov[a][a] - 2 * cov[i][a])
        return cov[i][i] - 2 * mean_var[i] + mean_mean  # an extreme anchor: as the mean

    rated: list[Rated] = []
    for name in names:
        score, games = tally.total(name)
        r = ratings[name] + shift
        if name in bounds:
            kind, edge = bounds[name]
            low, high = (None, edge + shift) if kind == "upper" else (edge + shift, None)
            rated.append(Rated(name, r, low, high, score, games, bound=kind))
            continue
        if len(core) == 1 and anchor != name:  # rated only against the extremes: no spread
            rated.append(Rated(name, r, None, None, score, games))
            continue
        margin = _Z95 * math.sqrt(variance(name)) if name != anchor else 0.0
        rated.append(Rated(name, r, r - margin, r + margin, score, games))
    rated.sort(key=lambda x: -x.rating)
    return FieldRatings(_with_los(rated, index, cov), anchor, anchor_rating, dispersion)


def _with_los(
    rated: list[Rated], index: dict[str, int], cov: list[list[float]]
) -> list[Rated]:
    """Each engine with its LOS over the next one (both in the joint fit; else None)."""
    out: list[Rated] = []
    for i, one in enumerate(rated):
        los = None
        if i + 1 < len(rated):
            nxt = rated[i + 1]
            if one.name in index and nxt.name in index:
                a, b = index[one.name], index[nxt.name]
                var = cov[a][a] + cov[b][b] - 2 * cov[a][b]
                los = _los(one.rating - nxt.rating, var)
        out.append(Rated(one.name, one.rating, one.low, one.high, one.score, one.games, los,
                         one.bound))
    return out


def _los(diff: float, var: float) -> float:
    if var <= 0:
        return 0.5 if diff == 0 else (1.0 if diff > 0 else 0.0)
    return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def _peel(tally: Tally, names: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Engines with no points (or every point) against the rest, taken out one at a time
    (their maximum-likelihood rating is infinite); what remains is rated jointly."""
    core = list(names)
    extremes: list[tuple[str, str]] = []
    while len(core) > 1:
        for name in core:
            score, games = tally.total(name, core)
            if games and score == 0:
                extremes.append((name, "upper"))
                break
            if games and score == games:
                extremes.append((name, "lower"))
                break
        else:
            return core, extremes
        core.remove(extremes[-1][0])
    return core, extremes


def _connected(tally: Tally, core: list[str]) -> None:
    """Every engine of the core reaches every other by games in which points went both
    ways (strongly connected); otherwise one group's ratings are unbounded against
    another's, and the field is refused, naming the groups."""
    if len(core) < 2:
        return

    def reach(start: str, forward: bool) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            me = todo.pop()
            for o in core:
                if o in seen:
                    continue
                key = (o, me) if forward else (me, o)  # o took points from me: me -> o
                if tally.score.get(key, 0.0) > 0:
                    seen.add(o)
                    todo.append(o)
        return seen

    first = core[0]
    both = reach(first, True) & reach(first, False)
    if len(both) < len(core):
        rest = [n for n in core if n not in both]
        raise RatingError(
            "the games do not connect the field: no points went both ways between "
            f"{', '.join(sorted(both))} and {', '.join(rest)} (play games between them)"
        )


def _fit(tally: Tally, core: list[str]) -> dict[str, float]:
    """Newton's method on the log-likelihood, the first engine held at 0, steps capped
    at 400 Elo: converges in a few steps for any connected field."""
    k = len(core)
    r = [0.0] * k
    for _ in range(200):
        grad, hess = _derivatives(tally, core, r)
        step = _solve([row[1:] for row in hess[1:]], [-g for g in grad[1:]])
        step = [0.0, *step]
        biggest = max(abs(s) for s in step)
        if biggest > 400:
            step = [s * 400 / biggest for s in step]
        r = [a + b for a, b in zip(r, step, strict=True)]
        if biggest < 1e-7:
            break
    return dict(zip(core, r, strict=True))


def _derivatives(
    tally: Tally, core: Sequence[str], r: Sequence[float]
) -> tuple[list[float], list[list[float]]]:
    """Gradient and Hessian of the log-likelihood in Elo (each game a Bernoulli trial of
    its score)."""
    k = len(core)
    grad = [0.0] * k
    hess = [[0.0] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1, k):
            n = tally.games.get((core[i], core[j]), 0)
            if not n:
                continue
            e = _expect(r[i] - r[j])
            g = (tally.score[(core[i], core[j])] - n * e) / _SCALE
            w = n * e * (1.0 - e) / _SCALE**2
            grad[i] += g
            grad[j] -= g
            hess[i][i] -= w
            hess[j][j] -= w
            hess[i][j] += w
            hess[j][i] += w
    return grad, hess


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (tens of engines: no numpy needed)."""
    n = len(b)
    m = [[*row, v] for row, v in zip(a, b, strict=True)]
    for c in range(n):
        p = max(range(c, n), key=lambda i: abs(m[i][c]))
        if abs(m[p][c]) < 1e-300:
            raise RatingError("the games do not determine the ratings (singular system)")
        m[c], m[p] = m[p], m[c]
        for i in range(c + 1, n):
            f = m[i][c] / m[c][c]
            if f:
                for j in range(c, n + 1):
                    m[i][j] -= f * m[c][j]
    x = [0.0] * n
    for i in range(n - 1, -1, -1):
        x[i] = (m[i][n] - sum(m[i][j] * x[j] for j in range(i + 1, n))) / m[i][i]
    return x


def _covariance(
    tally: Tally, core: list[str], ratings: dict[str, float]
) -> tuple[list[list[float]], float]:
    """The ratings' covariance in the gauge "mean of the core = 0": the pseudo-inverse of
    the Fisher information, times the dispersion (draws make a game's score vary less
    than a win-or-loss trial's; docs/ratings.md)."""
    k = len(core)
    r = [ratings[n] for n in core]
    _, hess = _derivatives(tally, core, r)
    info = [[-h for h in row] for row in hess]
    observed = expected = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            n = tally.games.get((core[i], core[j]), 0)
            if not n:
                continue
            e = _expect(r[i] - r[j])
            s = tally.score[(core[i], core[j])]
            d = tally.draws.get((core[i], core[j]), 0)
            wins = s - d / 2  # i's wins
            losses = n - wins - d
            observed += wins * (1 - e) ** 2 + d * (0.5 - e) ** 2 + losses * e**2
            expected += n * e * (1 - e)
    games = sum(tally.games.get((core[i], core[j]), 0) for i in range(k) for j in range(i + 1, k))
    if games > k - 1 and observed > 0:
        dispersion = observed / expected * games / (games - (k - 1))
    else:
        dispersion = 1.0  # no spread seen (or no games): the widest, a win-or-loss trial
    if k == 1:
        return [[0.0]], dispersion
    shifted = [[info[i][j] + 1.0 / k for j in range(k)] for i in range(k)]
    inverse = _invert(shifted)
    return [
        [(inverse[i][j] - 1.0 / k) * dispersion for j in range(k)] for i in range(k)
    ], dispersion


def _invert(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    cols = [_solve(a, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def _extreme(
    tally: Tally, name: str, kind: str, ratings: dict[str, float]
) -> tuple[float, tuple[str, float]]:
    """An engine with no points ("upper": only an upper bound) or every point ("lower"),
    rated against the engines it played that are rated already: as Ordo does, where a
    result that extreme has even odds; its 95% bound where it has 2.5%.  One game's
    chance of no points is taken as 1 - E (a loss), of every point as E."""
    opponents = [(o, n) for (me, o), n in tally.games.items() if me == name and o in ratings]

    def chance(x: float) -> float:
        logp = 0.0
        for o, n in opponents:
            e = _expect(x - ratings[o])
            p = 1.0 - e if kind == "upper" else e
            if p <= 0:
                return 0.0
            logp += n * math.log(p)
        return math.exp(logp)

    def where(target: float) -> float:
        # chance() rises with x for "lower" (a winner), falls for "upper": bisect.
        centre = sum(ratings[o] for o, _ in opponents) / len(opponents)
        lo, hi = centre - 4000.0, centre + 4000.0
        for _ in range(100):
            mid = (lo + hi) / 2
            above = chance(mid) > target
            if above == (kind == "lower"):
                hi = mid
            else:
                lo = mid
        return (lo + hi) / 2

    return where(0.5), (kind, where(0.025))
