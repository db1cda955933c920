"""``dxserial rate FILES...``: the ratings of every engine in a set of PDN files.

The rating is :mod:`dxserial.tournament.rating`'s (Ordo's model, docs/ratings.md); this
module only reads the files and prints.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.errors import ConfigError
from dxserial.files import write_atomic
from dxserial.game.pdn import read_pdn
from dxserial.setting import Setting, checked
from dxserial.tournament.charts import ratings_svg
from dxserial.tournament.rating import RatingError, Tally, rate_field

#: Every setting of ``dxserial rate``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("files", None, "PDN files (dxserial's event.pdn, or any other PDN of finished "
            "games).", kind=Path, many=True, argument=True),
    Setting("anchor", "", "Hold this engine (its PDN name) at --anchor-rating; default: the "
            "field's mean.", metavar="NAME", show_default=True),
    Setting("anchor_rating", 0.0, "The rating of the anchor (the engine, or the field's mean).",
            kind=float, metavar="ELO", show_default=True),
    Setting("svg", None, "Also write the ratings with their intervals as an SVG chart to FILE.",
            kind=Path, metavar="FILE", show_default=True),
)


def rate_command(**given: Any) -> None:
    """Rate every engine of the PDN files jointly, with 95% intervals and LOS.

    One maximum-likelihood rating per engine from every finished game (Ordo's
    logistic model; a win 1, a draw 1/2: draughts' 2-1-0), anchored at the field's
    mean or at one engine; 95% intervals from the Hessian, and the likelihood of
    superiority of each engine over the next. Games without a result ('*') are
    left out; an engine with no points (or every point) gets a bound. Exit 1 (one
    line) when a file cannot be read or the games cannot rate the field.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    files, anchor, anchor_rating, svg = values.values()
    tally = Tally()
    games = unfinished = 0
    for path in files:
        for record in read_pdn(path):
            if tally.add_result(record.white, record.black, record.result):
                games += 1
            else:
                unfinished += 1
    try:
        field = rate_field(tally, anchor=anchor or None, anchor_rating=anchor_rating)
    except RatingError as exc:
        if "anchor" in str(exc):
            raise ConfigError(f"--anchor: {exc}") from None
        raise
    skipped = f"; {unfinished} without a result left out" if unfinished else ""
    print(f"{games} game(s), {len(field.engines)} engine(s) from {len(files)} file(s){skipped}")
    for line in field.table():
        print(line)
    print(field.note())
    if svg is not None:
        try:
            write_atomic(svg, ratings_svg(field))
        except OSError as exc:
            raise RatingError(f"cannot write {svg}: {exc.strerror or exc}") from None
        print(f"chart: {svg}")


rate_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("rate")(rate_command)
