"""What a spectator sees on the live page (issue 24, item 8), in a real headless Chromium:
the clock of the side to move running, the move list growing and scrolled to the last move,
the last move on the board, square numbers, the standings as a table, a list of the games.

The events are the ones a tournament publishes, sent by the test at its own pace, so the
screenshots (start, mid-game, after the game) show each state. DXSERIAL_SCREENSHOT=1 writes
them to bench/ (linked from docs/live-view.md); otherwise to the test's temporary folder.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from dxserial.draughts import Position
from dxserial.draughts.notation import pdn_moves
from dxserial.live.view import LiveView, to_move
from dxserial.testing.browser import CHROMIUM_MISSING, Browser
from dxserial.tournament.event import GameResultEntry, Scores

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

pytest.importorskip("aiohttp", reason="the web view needs aiohttp (pip install dxserial[web])")

BENCH = Path(__file__).resolve().parent.parent.parent / "bench"
NAMES = ["alpha", "beta", "gamma"]


def game_moves(seed: int, plies: int) -> list[tuple[str, str, str]]:
    """(pdn, colour, fen after) for a game of legal moves chosen at random."""
    rng, position, out = random.Random(seed), Position.start(), []
    for ply in range(plies):
        legal = pdn_moves(position)
        if not legal:
            break
        move, text = rng.choice(legal)
        position = position.play(move)
        out.append((text, "White" if ply % 2 == 0 else "Black", position.to_fen()))
    return out


def running_below(side: str, seconds: int) -> str:
    """JavaScript: game 1's running clock is ``side``'s and shows less than ``seconds``
    (but not much less: it started there)."""
    return (
        "(() => { const t = document.querySelector('#game-1 .side.run')?.textContent || '';"
        f" const m = t.match(/^{side} (\\d+):(\\d\\d)$/); if (!m) return false;"
        f" const s = 60 * +m[1] + +m[2]; return s < {seconds} && s > {seconds} - 30; }})()"
    )


def standings(finished: list[GameResultEntry]) -> dict[str, Any]:
    scores = Scores(NAMES, finished)
    return {"kind": "standings", "table": scores.table(len(finished), 6)}


def test_to_move_follows_the_fen_and_stops_with_the_result() -> None:
    live = LiveView()
    start = Position.start().to_fen()
    update = live.apply({"kind": "game", "number": 1, "white": "a", "black": "b", "fen": start,
                         "minutes": 5})
    assert update and update["game"]["to_move"] == "White"
    assert update["game"]["left"] == {"White": 300, "Black": 300}
    (text, colour, fen), = game_moves(1, 1)
    update = live.apply({"kind": "move", "number": 1, "pdn": text, "colour": colour, "fen": fen,
                         "seconds": 4})
    assert update and update["game"]["to_move"] == "Black" == to_move({"fen": fen, "result": None})
    update = live.apply({"kind": "result", "number": 1, "result": "2-0", "reason": "x"})
    assert update and update["game"]["to_move"] is None


async def _watch(browser: Browser, tmp_path: Path) -> None:
    from dxserial.live.web import start_web

    server = await start_web("127.0.0.1:0", [], lambda line: None, "Lab live")
    shots = BENCH if os.environ.get("DXSERIAL_SCREENSHOT") == "1" else tmp_path
    try:
        await browser.call("Page.navigate", url=server.address)
        await browser.wait_for("document.getElementById('status').textContent === 'live'")
        start = Position.start().to_fen()
        publish = server.publish
        publish(standings([]))
        publish({"kind": "game", "number": 1, "white": "alpha", "black": "beta", "fen": start,
                 "minutes": 5})
        # Start: White's clock runs on the page, though no move reported any seconds.
        first = await browser.wait_for("document.querySelector('#game-1 .side.run')?.textContent")
        assert first.startswith("White ")  # 5:00, ticking
        await browser.wait_for(running_below("White", 300), timeout=20)
        assert await browser.evaluate("document.querySelectorAll('#game-1 text.number').length") == 50
        await browser.screenshot(shots / "web-view-start.png")

        # Mid-game: game 2 over, game 3 started, game 1 at move 30 with Black to move.
        publish({"kind": "game", "number": 2, "white": "gamma", "black": "alpha", "fen": start,
                 "minutes": 5})
        for text, colour, fen in game_moves(2, 24):
            publish({"kind": "move", "number": 2, "pdn": text, "colour": colour, "fen": fen,
                     "seconds": 3})
        publish({"kind": "result", "number": 2, "result": "1-1", "reason": "move limit reached"})
        done = [GameResultEntry(2, "gamma", "alpha", "1-1", "move limit")]
        publish(standings(done))
        moves = game_moves(1, 59)  # 30 rows: more than the list shows at once
        for text, colour, fen in moves:
            publish({"kind": "move", "number": 1, "pdn": text, "colour": colour, "fen": fen,
                     "seconds": 2})
        publish({"kind": "game", "number": 3, "white": "beta", "black": "gamma", "fen": start,
                 "minutes": 5})
        await browser.wait_for(f"document.querySelector('#game-1').dataset.plies === '{len(moves)}'")
        last = await browser.evaluate(
            "[...document.querySelectorAll('#game-1 .square[data-last]')].map(g => +g.dataset.square)"
        )
        squares = [int(n) for n in moves[-1][0].replace("x", "-").split("-")]
        assert sorted(last) == sorted({squares[0], squares[-1]})
        assert await browser.evaluate("document.querySelector('#game-1 .ply.last').textContent") == (
            moves[-1][0] + " "
        )
        scrolled = ("(() => { const m = document.querySelector('#game-1 .moves');"
                    " return m.scrollHeight > m.clientHeight"
                    " && m.scrollTop + m.clientHeight >= m.scrollHeight - 1; })()")
        assert await browser.evaluate(scrolled)  # the list overflows and shows its last move
        assert await browser.evaluate("document.querySelector('#game-1').dataset.toMove") == "Black"
        await browser.wait_for(running_below("Black", 300 - 29 * 2), timeout=20)  # it runs
        heads = await browser.evaluate("[...document.querySelectorAll('#table th')].map(t => t.textContent)")
        assert heads[:2] == ["#", "engine"] and "score" in heads
        rows = await browser.evaluate("[...document.querySelectorAll('#table tbody tr')].length")
        assert rows == len(NAMES)
        listed = await browser.evaluate(
            "[...document.querySelectorAll('#list tbody tr')].map(r => r.textContent)"
        )
        assert len(listed) == 3 and "1-1" in listed[1]
        assert not await browser.evaluate("document.getElementById('games-list').hidden")
        await browser.screenshot(shots / "web-view-mid.png")

        # After: game 1 ends; its clocks stop at what was reported.
        publish({"kind": "result", "number": 1, "result": "2-0", "reason": "Black resigned"})
        publish({"kind": "result", "number": 3, "result": "*", "reason": "stopped"})
        done.append(GameResultEntry(1, "alpha", "beta", "2-0", "no move"))
        publish(standings(done))
        await browser.wait_for("document.querySelector('#game-1').dataset.result === '2-0'")
        assert not await browser.evaluate("document.querySelector('#game-1 .side.run')")
        clock = await browser.evaluate("document.querySelector('#game-1 .clock').textContent")
        assert clock == "White 4:00  Black 4:02"  # 30 and 29 moves of 2 s
        await browser.screenshot(shots / "web-view-after.png")
    finally:
        await server.close()


@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_a_spectator_sees_the_game_run(tmp_path: Path) -> None:
    browser = Browser(tmp_path / "profile")
    try:
        await browser.start()
        await _watch(browser, tmp_path)
    finally:
        await browser.close()
