"""Ratings of a field: the joint maximum-likelihood ratings agree with Ordo's on the same
games (Ordo's output recorded in tests/data/ratings, with the command line that made it)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dxserial.game.pdn import read_pdn
from dxserial.tournament.charts import llr_svg, ratings_svg
from dxserial.tournament.rating import RatingError, Tally, rate_field

DATA = Path(__file__).parent.parent / "data" / "ratings"


def field_tally() -> Tally:
    tally = Tally()
    for game in read_pdn(DATA / "field.pdn"):
        tally.add_result(game.white, game.black, game.result)
    return tally


def ordo_table(name: str) -> dict[str, tuple[float, float | None, float | None]]:
    """Ordo's rows: name -> (rating, error or None for the anchor, CFS % or None)."""
    out: dict[str, tuple[float, float | None, float | None]] = {}
    for line in (DATA / name).read_text().splitlines():
        if line.startswith("#") or ":" not in line or not line.split()[0].isdigit():
            continue
        left, right = line.split(":", 1)
        cells = right.split()
        error = None if cells[1].startswith("-") else float(cells[1])
        cfs = None if cells[-1] == "---" else float(cells[-1])
        out[left.split()[1]] = (float(cells[0]), error, cfs)
    return out


@pytest.mark.parametrize(("recorded", "anchor"), [("ordo-mean.txt", None), ("ordo-anchor.txt", "d1")])
def test_ratings_agree_with_ordo_on_the_same_games(recorded: str, anchor: str | None) -> None:
    ordo = ordo_table(recorded)
    field = rate_field(field_tally(), anchor=anchor)
    assert [r.name for r in field.engines] == list(ordo)  # the same ranking
    for r in field.engines:
        rating, error, cfs = ordo[r.name]
        assert r.rating == pytest.approx(rating, abs=0.15)  # Ordo prints one decimal
        assert r.low is not None and r.high is not None
        if error is None:  # the anchor: exactly its rating
            assert r.low == r.high == r.rating == 0
            continue
        # Ordo's error is from 2000 simulated tournaments, ours from the Hessian: the
        # same 95% half-width within a tenth (each is within a few % of the other).
        assert (r.high - r.low) / 2 == pytest.approx(error, rel=0.1)
        if cfs is not None:
            assert r.los is not None and 100 * r.los == pytest.approx(cfs, abs=4)


def test_a_draw_is_half_a_point_and_the_anchor_moves_the_field() -> None:
    tally = Tally()
    for _ in range(3):
        tally.add_result("a", "b", "2-0")
        tally.add_result("b", "a", "1-1")
        tally.add_result("a", "b", "0-2")
    # a: 3 wins, 3 draws, 3 losses: level with b
    field = rate_field(tally)
    assert [round(r.rating, 6) for r in field.engines] == [0, 0]
    lifted = rate_field(tally, anchor="b", anchor_rating=1500)
    assert {r.name: round(r.rating, 6) for r in lifted.engines} == {"a": 1500, "b": 1500}


def test_a_field_rates_by_whom_it_beat_not_by_its_score() -> None:
    # a and c both score 50%: a against the strong engine, c against the weak one.
    tally = Tally()
    for _ in range(4):
        tally.add_result("a", "strong", "1-1")
        tally.add_result("c", "weak", "1-1")
        tally.add_result("strong", "weak", "2-0")
    tally.add_result("weak", "strong", "1-1")
    rated = rate_field(tally).by_name()
    assert tally.total("a") == tally.total("c") == (2.0, 4)
    assert rated["a"].rating == pytest.approx(rated["strong"].rating)
    assert rated["a"].rating - rated["c"].rating > 300


def test_an_engine_with_no_points_gets_a_bound_not_an_infinity() -> None:
    tally = field_tally()
    for opponent in ("d1", "d2", "d3", "d4"):
        tally.add_result(opponent, "zero", "2-0")
        tally.add_result("zero", opponent, "0-2")
    field = rate_field(tally)
    last = field.engines[-1]
    assert last.name == "zero" and last.bound == "upper" and last.low is None
    assert last.high is not None and math.isfinite(last.high) and last.rating < last.high
    assert last.text().startswith("< ") and "inf" not in last.text()
    assert last.rating < field.by_name()["d1"].rating  # eight losses: below the weakest
    svg = ratings_svg(field)
    assert 'data-name="zero" data-bound="upper"' in svg and "inf" not in svg


def test_a_field_the_games_do_not_connect_is_refused_in_one_line() -> None:
    tally = Tally()
    tally.add_result("a", "b", "1-1")
    tally.add_result("c", "d", "1-1")
    with pytest.raises(RatingError, match="do not connect the field"):
        rate_field(tally)
    with pytest.raises(RatingError, match="anchor 'x'"):
        rate_field(field_tally(), anchor="x")


def test_the_llr_chart_draws_the_curve_between_its_bounds() -> None:
    svg = llr_svg([0.4, 0.9, 1.7, 3.1], -2.94, 2.94)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert 'data-bound="H1"' in svg and 'data-bound="H0"' in svg
    assert svg.count(",") >= 5  # the start and four pairs on the polyline
    assert "LLR 3.10 after 4 pair(s)" in svg


def test_the_rate_command_prints_the_field_and_says_what_it_could_not_do(tmp_path: Path) -> None:
    from helpers import run_in_process

    svg = tmp_path / "field.svg"
    done = run_in_process("rate", DATA / "field.pdn", "--anchor", "d1", "--anchor-rating", "1000",
                          "--svg", svg)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "60 game(s), 4 engine(s) from 1 file(s)"
    assert [line.split()[1] for line in lines[2:6]] == ["d4", "d3", "d2", "d1"]
    assert "+1000 (anchor)" in lines[5] and "+1442 [" in lines[2]  # Ordo: 442.1 above d1
    assert "anchored: d1 at 1000" in lines[6]
    assert svg.read_text().startswith("<svg") and lines[-1] == f"chart: {svg}"
    wrong = run_in_process("rate", DATA / "field.pdn", "--anchor", "d9")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "'d9'" in wrong.stderr
    missing = run_in_process("rate", tmp_path / "none.pdn")
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    empty = tmp_path / "empty.pdn"
    empty.write_text('[White "a"]\n[Black "b"]\n[Result "*"]\n\n*\n')
    unrated = run_in_process("rate", empty)
    assert unrated.returncode == 1 and "no finished game" in unrated.stderr
