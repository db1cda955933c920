"""dxserial's ratings of a field next to Ordo's, on the same games (docs/ratings.md).

Ordo is not shipped: build it from its public source under /tmp (``make`` in a clone of
github.com/michiguel/Ordo) and give its path.  The PDN games are written as a PGN of tags
and results (Ordo reads PGN; the moves play no part in a rating), Ordo rates them on the
standard Elo curve (``-z 200.24``: 76% at 200.24, the curve of ``400 log10``) with the
field's mean at 0, and both tables are printed side by side as Markdown::

    python3 bench/ordo_check.py --ordo /tmp/ordo/ordo games/event.pdn
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from dxserial.game.pdn import read_pdn
from dxserial.tournament.rating import FieldRatings, Tally, rate_field

#: Ordo's options for the comparison: mean 0, the 400-log10 curve, 95% errors from 2000
#: simulated tournaments with the draw rate fitted, the LOS-like CFS column.
ORDO_OPTIONS = ["-a", "0", "-z", "200.24", "-s", "2000", "-D", "-J", "-q"]

_CHESS = {"2-0": "1-0", "0-2": "0-1", "1-1": "1/2-1/2"}


def games_of(paths: list[Path]) -> list[tuple[str, str, str]]:
    """(white, black, result) of every finished game in the PDN files."""
    out = []
    for path in paths:
        for record in read_pdn(path):
            if record.result in _CHESS:
                out.append((record.white, record.black, record.result))
    return out


def to_pgn(games: list[tuple[str, str, str]]) -> str:
    parts = []
    for white, black, result in games:
        chess = _CHESS[result]
        parts.append(f'[White "{white}"]\n[Black "{black}"]\n[Result "{chess}"]\n\n{chess}\n')
    return "\n".join(parts)


def run_ordo(ordo: Path, games: list[tuple[str, str, str]]) -> str:
    with tempfile.TemporaryDirectory() as folder:
        pgn = Path(folder) / "games.pgn"
        pgn.write_text(to_pgn(games), encoding="utf-8")
        done = subprocess.run(
            [str(ordo), "-p", str(pgn), *ORDO_OPTIONS],
            capture_output=True, text=True, check=True, timeout=300,
        )
    return done.stdout


def parse_ordo(text: str) -> dict[str, tuple[float, float, float | None]]:
    """Ordo's table: name -> (rating, error, CFS % over the next row or None)."""
    out: dict[str, tuple[float, float, float | None]] = {}
    for line in text.splitlines():
        if ":" not in line or not line.strip()[:1].isdigit():
            continue
        left, right = line.split(":", 1)
        name = left.split(None, 1)[1].strip()
        cells = right.split()
        cfs = None if cells[-1] == "---" else float(cells[-1])
        out[name] = (float(cells[0]), float(cells[1]), cfs)
    return out


def ours(games: list[tuple[str, str, str]]) -> FieldRatings:
    tally = Tally()
    for white, black, result in games:
        tally.add_result(white, black, result)
    return rate_field(tally)


def compare(field: FieldRatings, ordo: dict[str, tuple[float, float, float | None]]) -> str:
    rows = [
        "| engine | dxserial rating [95%] | Ordo rating +/- error | difference | "
        "dxserial half-width | LOS | Ordo CFS |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in field.engines:
        rating, error, cfs = ordo.get(r.name, (float("nan"), float("nan"), None))
        half = "-" if r.low is None or r.high is None else f"{(r.high - r.low) / 2:.1f}"
        rows.append(
            f"| {r.name} | {r.text()} | {rating:+.1f} +/- {error:.1f} | "
            f"{r.rating - rating:+.1f} | {half} | {r.los_text()} | "
            f"{'-' if cfs is None else f'{cfs:.0f}%'} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ordo", type=Path, required=True, help="Ordo built from its source")
    parser.add_argument("files", type=Path, nargs="+", help="PDN files")
    args = parser.parse_args(argv)
    games = games_of(args.files)
    text = run_ordo(args.ordo, games)
    print(f"{len(games)} games; ordo {' '.join(ORDO_OPTIONS)}\n")
    print(text.strip() + "\n")
    print(compare(ours(games), parse_ordo(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
