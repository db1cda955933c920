"""SPRT on game pairs, sans I/O: is engine A stronger than B by elo1, or not by more than elo0?

The model is the one Stockfish's fishtest and fastchess (``-sprt model=logistic``) use: a
generalised SPRT on the *pentanomial* distribution of game pairs (the same opening played
with both colours), Elo in the logistic model.  For a pair, A's score over its two games
(win 1, draw 1/2, loss 0; a draughts 2-0 is a win) is one of 0, 1/2, 1, 3/2, 2, taken per
game as a = 0, 1/4, 1/2, 3/4, 1.  For each hypothesis the expected score
s = 1 / (1 + 10^(-elo/400)) is fixed and the distribution closest (maximum likelihood) to
the observed frequencies with that mean is p_i = f_i / (1 + theta (a_i - s)), theta solving
sum f_i (a_i - s) / (1 + theta (a_i - s)) = 0 (M. Van den Bergh, "Comments on Normalized
Elo", proposition 1.1).  LLR = N sum f_i log(p1_i / p0_i) over N pairs; an empty cell counts
as 1e-3 of a pair, as in those tools.  Bounds are Wald's: log(beta / (1 - alpha)) and
log((1 - beta) / alpha).  The Elo estimate and its 95% interval come from the pairs' mean
and variance (the pentanomial variance, smaller than the trinomial one when pairs correlate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dxserial.config import unknown_key
from dxserial.errors import ConfigError

__all__ = [
    "PAIR_SCORES",
    "SprtConfig",
    "SprtState",
    "logistic_elo",
    "logistic_llr",
    "parse_sprt",
]

#: A's score per game in a pair whose two games gave it 0, 1/2, 1, 3/2 or 2 points.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
_EMPTY = 1e-3


@dataclass(frozen=True)
class SprtConfig:
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)


def parse_sprt(data: Any, source: str) -> SprtConfig:
    """The ``sprt = { elo0 = 0, elo1 = 5, alpha = 0.05, beta = 0.05 }`` table, checked."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: sprt must be a table: sprt = {{ elo0 = 0, elo1 = 5 }}")
    known = ("elo0", "elo1", "alpha", "beta")
    for key in data:
        if key not in known:
            raise unknown_key(f"{source}: sprt", key, known, "sprt takes elo0, elo1, alpha and "
                              "beta", word="setting")
    values = {**SprtConfig().__dict__, **data}
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values.values()):
        raise ConfigError(f"{source}: sprt: elo0, elo1, alpha and beta must be numbers")
    cfg = SprtConfig(*(float(values[k]) for k in ("elo0", "elo1", "alpha", "beta")))
    if not cfg.elo0 < cfg.elo1:
        raise ConfigError(f"{source}: sprt: elo0 must be below elo1")
    if not (0 < cfg.alpha < 1 and 0 < cfg.beta < 1 and cfg.alpha + cfg.beta < 1):
        raise ConfigError(f"{source}: sprt: alpha and beta must be in (0, 1), their sum < 1")
    return cfg


def logistic_score(elo: float) -> float:
    """The expected score fraction at an Elo difference in the logistic model."""
    return float(1.0 / (1.0 + 10.0 ** (-elo / 400.0)))


def logistic_elo(score: float) -> float:
    """The Elo difference a score fraction means in the logistic model (+-inf at 1 and 0)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _closest(freqs: list[float], s: float) -> list[float]:
    """The distribution on PAIR_SCORES with mean ``s`` most likely to give ``freqs``."""
    d = [a - s for a in PAIR_SCORES]
    lo, hi = -1.0 / max(d), -1.0 / min(d)  # 1 + theta d_i > 0 for every i

    def slope(theta: float) -> float:  # decreasing in theta
        return sum(f * di / (1.0 + theta * di) for f, di in zip(freqs, d, strict=True))

    for _ in range(200):
        mid = (lo + hi) / 2
        if slope(mid) > 0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    theta = (lo + hi) / 2
    return [f / (1.0 + theta * di) for f, di in zip(freqs, d, strict=True)]


def logistic_llr(counts: list[int], elo0: float, elo1: float) -> float:
    """LLR of H1 (elo1) against H0 (elo0) for pentanomial ``counts`` (0 .. 2 points)."""
    if sum(counts) == 0:
        return 0.0
    cells = [c if c else _EMPTY for c in counts]
    total = sum(cells)
    freqs = [c / total for c in cells]
    p0, p1 = _closest(freqs, logistic_score(elo0)), _closest(freqs, logistic_score(elo1))
    return total * sum(f * math.log(b / a) for f, a, b in zip(freqs, p0, p1, strict=True))


@dataclass
class SprtState:
    """The test so far: feed finished pairs with :meth:`add_pair`, read the verdict."""

    config: SprtConfig
    penta: list[int] = field(default_factory=lambda: [0] * 5)  # A's 0, 1/2, 1, 3/2, 2 points
    #: The LLR after each pair, in the order the pairs were finished (the chart's curve).
    history: list[float] = field(default_factory=list)

    def add_pair(self, first: float, second: float) -> None:
        """A's scores (1, 1/2, 0) in the pair's two games."""
        self.penta[round(2 * (first + second))] += 1
        self.history.append(self.llr())

    @property
    def pairs(self) -> int:
        return sum(self.penta)

    def llr(self) -> float:
        return logistic_llr(self.penta, self.config.elo0, self.config.elo1)

    def verdict(self) -> str | None:
        """"H1" (A is better by elo1), "H0" (not better than elo0), or None (play on)."""
        if self.pairs == 0:
            return None
        llr = self.llr()
        if llr >= self.config.upper:
            return "H1"
        if llr <= self.config.lower:
            return "H0"
        return None

    def elo(self) -> tuple[float, float, float]:
        """A's Elo over B and its 95% interval, from the pairs' mean and variance."""
        n = self.pairs
        if n == 0:
            return 0.0, -math.inf, math.inf
        mean = sum(c * a for c, a in zip(self.penta, PAIR_SCORES, strict=True)) / n
        var = sum(c * (a - mean) ** 2 for c, a in zip(self.penta, PAIR_SCORES, strict=True)) / n
        margin = 1.96 * math.sqrt(var / n)
        return logistic_elo(mean), logistic_elo(mean - margin), logistic_elo(mean + margin)

    def line(self) -> str:
        cfg = self.config
        elo, low, high = self.elo()
        verdict = self.verdict()
        what = {"H1": "H1 accepted", "H0": "H0 accepted", None: "running"}[verdict]
        return (
            f"SPRT [{cfg.elo0:g}, {cfg.elo1:g}] {what}: LLR {self.llr():.2f} "
            f"({cfg.lower:.2f}, {cfg.upper:.2f}); pairs {self.pairs}, pentanomial "
            f"[{', '.join(map(str, self.penta))}]; Elo {_fmt(elo)} [{_fmt(low)}, {_fmt(high)}]"
        )


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x + 0.0:+.1f}"

