"""The live page as a lab reads it (issue 40), in a real headless Chromium at 1300 x 1000:
the game in play on top, a finished game folded into the games table and opened by a click,
the standings whole, a game in play's result reading "in play", the ratings (a bound for an
engine with no points, never an infinity) and the LLR chart beside."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dxserial.draughts import Position
from dxserial.draughts.notation import pdn_moves
from dxserial.testing.browser import CHROMIUM_MISSING, Browser
from dxserial.tournament.charts import llr_svg, ratings_svg
from dxserial.tournament.event import GameResultEntry, Scores, ratings_json
from dxserial.tournament.rating import FieldRatings

pytest.importorskip("aiohttp", reason="the web view needs aiohttp (pip install dxserial[web])")
pytestmark = pytest.mark.e2e

NAMES = ["alpha", "beta", "gamma", "nil"]


def standings(games: list[GameResultEntry]) -> dict[str, Any]:
    scores = Scores(NAMES, games)
    field = scores.ratings()
    assert isinstance(field, FieldRatings)
    return {
        "kind": "standings", "table": scores.table(len(games), 12),
        "ratings": ratings_json(field),
        "charts": {"ratings.svg": ratings_svg(field),
                   "sprt-llr.svg": llr_svg([0.3, 0.8, 1.1], -2.94, 2.94)},
    }


def finished() -> list[GameResultEntry]:
    results = {("alpha", "beta"): "1-1", ("alpha", "gamma"): "2-0", ("beta", "gamma"): "1-1",
               ("gamma", "alpha"): "1-1", ("beta", "alpha"): "0-2", ("gamma", "beta"): "2-0"}
    games = [GameResultEntry(n, w, b, r, "test", None, "Eng 1.0", "Eng 1.0")
             for n, ((w, b), r) in enumerate(results.items(), 1)]
    for name in ("alpha", "beta", "gamma"):  # nil loses every game: no points
        games.append(GameResultEntry(len(games) + 1, name, "nil", "2-0", "test"))
    return games


@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_the_lab_page_puts_play_first_and_folds_finished_games(tmp_path: Path) -> None:
    from dxserial.live.web import start_web

    browser = Browser(tmp_path / "profile")
    server = await start_web("127.0.0.1:0", [], lambda line: None, "Lab")
    try:
        await browser.start()
        await browser.call("Emulation.setDeviceMetricsOverride", width=1300, height=1000,
                           deviceScaleFactor=1, mobile=False)
        await browser.call("Page.navigate", url=server.address)
        await browser.wait_for("document.getElementById('status').textContent === 'live'")
        start = Position.start().to_fen()
        server.publish({"kind": "game", "number": 1, "white": "alpha", "black": "beta",
                        "fen": start, "minutes": 5})
        server.publish({"kind": "result", "number": 1, "result": "1-1", "reason": "agreed"})
        server.publish({"kind": "game", "number": 2, "white": "gamma", "black": "nil",
                        "fen": start, "minutes": 5})
        said: list[dict[str, Any] | None] = [  # a Hub engine's, a DXP engine's, depth only
            {"score": 0.35, "depth": 12, "pv": []}, None, {"score": None, "depth": 7}]
        position = Position.start()
        for ply, thinking in enumerate(said):
            move, text = pdn_moves(position)[0]
            position = position.play(move)
            server.publish({"kind": "move", "number": 2, "pdn": text, "fen": position.to_fen(),
                            "colour": "Black" if ply % 2 else "White", "thinking": thinking})
        server.publish(standings(finished()))
        await browser.wait_for("document.querySelectorAll('#charts svg').length === 2")
        evals = await browser.evaluate(
            "[...document.querySelectorAll('#game-2 .ply')].filter(p => p.firstChild)"
            ".map(p => p.querySelector('.eval')?.textContent ?? null)")
        assert evals == ["+0.35/12", None, "depth 7"]  # nothing beside the DXP engine's move
        pv = await browser.evaluate("document.querySelector('#game-2 .pv').textContent")
        assert pv == f"last move {text}: depth 7"
        assert await browser.evaluate("document.querySelector('#game-1 .eval, #game-1 .pv')") is None
        on_top = await browser.evaluate(
            "[...document.querySelectorAll('#games .game')].map(c => +c.dataset.number)")
        assert on_top == [2]  # the game in play; game 1 is folded away
        assert await browser.evaluate("document.getElementById('game-1').offsetParent") is None
        results = await browser.evaluate(
            "[...document.querySelectorAll('#list tbody tr')].map(r => r.lastChild.textContent)")
        assert results == ["1-1", "in play"]
        await browser.evaluate("document.querySelector('#list tr[data-number=\"1\"]').click()")
        await browser.wait_for("document.getElementById('game-1').closest('#list') !== null")
        assert await browser.evaluate("document.getElementById('game-1').offsetParent !== null")
        # The standings fit their column whole; the engine with no points shows a bound.
        fits = await browser.evaluate(
            "document.getElementById('table').getBoundingClientRect().right"
            " <= document.getElementById('left').getBoundingClientRect().right + 1")
        assert fits
        assert await browser.evaluate("document.documentElement.scrollWidth <= 1300")  # no sideways
        chart_width = await browser.evaluate("document.getElementById('charts').clientWidth")
        assert chart_width >= 320
        table = await browser.evaluate("document.getElementById('table').textContent")
        assert "inf" not in table and "< " in table and "rating [95%]" in table
        chart = await browser.evaluate("document.querySelector('#charts').innerHTML")
        assert 'data-name="nil" data-bound="upper"' in chart and 'data-bound="H1"' in chart
        await browser.screenshot(Path(os.environ.get("DXSERIAL_LAB_SHOT", tmp_path / "lab.png")))
    finally:
        await server.close()
        await browser.close()
