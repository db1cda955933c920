"""A tournament's openings by name and in order: ``openings = "2-move"``, ``openings_order``,
``openings_seed``, ``openings_start``.

Each key's name, default, check and help are kept together in :data:`KEYS` (the reader in
:mod:`~dxserial.tournament.spec` and ``--keys`` both take them from here).  The order is
applied to the list of openings, before the schedule: every opening is still played with
both colours by each pairing (:class:`~dxserial.tournament.event.Schedule`), and the
ordered list is part of the schedule's fingerprint, so ``--resume`` with another seed or
start is refused rather than mixed.  docs/ballots.md says why.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from dxserial.draughts.ballots import two_move_ballots
from dxserial.errors import ConfigError

__all__ = ["KEYS", "NAMED", "BallotOrder", "named_openings", "ordered"]

#: ``openings = "NAME"``: the list it stands for, or why it needs a file.
NAMED: dict[str, str] = {
    "2-move": "every 2-move ballot (81), generated from the rules",
    "3-move": "needs the shared file: openings_file = \"3-move ballots uniq matchfile.fen\"",
}

#: key -> (default, example as TOML, help).  Checks are in :func:`BallotOrder.from_dict`.
KEYS: dict[str, tuple[Any, str, str]] = {
    "openings_order": ("sequential", '"sequential"', '"sequential" (as listed) or "random" '
                       "(shuffled with openings_seed)"),
    "openings_seed": (0, "42", "the seed of openings_order = \"random\" (a whole number)"),
    "openings_start": (1, "1", "play the openings from number N of the (ordered) list on"),
}


def named_openings(name: str, source: str) -> list[str]:
    """The openings ``openings = name`` stands for; :class:`ConfigError` if none."""
    if name == "2-move":
        return two_move_ballots()
    if name == "3-move":
        raise ConfigError(
            f'{source}: openings = "3-move": the 3-move ballots are a selection, not a rule '
            f'(331 of the 447 three-ply positions); give the shared list as openings_file = '
            f'"3-move ballots uniq matchfile.fen"'
        )
    known = ", ".join(f'"{n}"' for n in NAMED)
    raise ConfigError(
        f"{source}: openings = {name!r}: give a list of FEN or PDN moves, or one of {known}"
    )


@dataclass(frozen=True)
class BallotOrder:
    """In which order the openings are played, and from which one on."""

    order: str = "sequential"
    seed: int = 0
    start: int = 1  # 1 = the first

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str) -> BallotOrder:
        order = data.get("openings_order", KEYS["openings_order"][0])
        if order not in ("sequential", "random"):
            raise ConfigError(
                f'{source}: openings_order must be "sequential" or "random", not {order!r}'
            )
        numbers = {}
        for key, low in (("openings_seed", 0), ("openings_start", 1)):
            value = data.get(key, KEYS[key][0])
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ConfigError(f"{source}: {key} must be a whole number >= {low}, not {value!r}")
            numbers[key] = value
        if "openings_seed" in data and order != "random":
            raise ConfigError(f'{source}: openings_seed needs openings_order = "random"')
        return cls(order, numbers["openings_seed"], numbers["openings_start"])

    def describe(self, count: int) -> str:
        how = "in order" if self.order == "sequential" else f"shuffled (seed {self.seed})"
        start = f", from number {self.start}" if self.start > 1 else ""
        return f"{count} opening(s) {how}{start}"


def ordered(openings: list[str], how: BallotOrder, source: str) -> list[str]:
    """``openings`` in the order ``how`` says, from its start on."""
    out = list(openings)
    if how.order == "random":
        random.Random(how.seed).shuffle(out)
    if how.start > len(out):
        raise ConfigError(
            f"{source}: openings_start = {how.start}, but there are {len(out)} opening(s)"
        )
    return out[how.start - 1:]
