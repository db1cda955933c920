"""``--web``: the live view in a real headless Chromium shows every game's board as it
ends up in the PDN files, updated as the moves happen (the page was loaded before the
first move)."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dxserial.draughts import Position
from dxserial.draughts.notation import parse_pdn_move
from dxserial.game.record import GameRecord, read_pdn
from dxserial.programs.live import LiveView
from dxserial.testing.browser import CHROMIUM_MISSING, Browser
from dxserial.testing.process import Cli

BENCH = Path(__file__).resolve().parent.parent / "bench"

pytest.importorskip("aiohttp", reason="the web view needs aiohttp (pip install dxserial[web])")


def final_board(record: GameRecord) -> dict[int, str]:
    """The position after the last move of a PDN record: square -> w, b, W, B."""
    position = record.start_position
    for move in record.moves:
        position = position.play(parse_pdn_move(position, move.text))
    return board_of(position)


def board_of(position: Position) -> dict[int, str]:
    out = {}
    for sq in range(1, 51):
        bit = 1 << sq
        if position.white & bit:
            out[sq] = "W" if position.kings & bit else "w"
        elif position.black & bit:
            out[sq] = "B" if position.kings & bit else "b"
    return out


@pytest.fixture
async def browser(tmp_path: Path) -> AsyncIterator[Browser]:
    b = Browser(tmp_path / "profile")
    try:
        await b.start()
        yield b
    finally:
        await b.close()


@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_the_page_follows_a_match_move_by_move(tmp_path: Path, browser: Browser) -> None:
    pdn = tmp_path / "pdn"
    procs: list[Cli] = []
    try:
        a = Cli("engine", "listen://127.0.0.1:0", "--role", "follower", "--depth", "1", "--seed", "1")
        procs.append(a)
        port_a = re.search(r":(\d+)$", a.out.expect("engine ready", timeout=20))
        assert port_a
        match = Cli(
            "match", f"tcp://127.0.0.1:{port_a.group(1)}", "listen://127.0.0.1:0",
            "--games", "2", "--moves", "3", "--pdn", str(pdn), "--web", "127.0.0.1:0",
        )
        procs.append(match)
        url = match.out.expect("web view: ", timeout=20).split()[-1]
        listening = match.out.expect("engine B: listening on", timeout=20)
        port_b = re.search(r":(\d+)$", listening)
        assert port_b
        await browser.call("Page.navigate", url=url)
        await browser.wait_for("document.getElementById('status').textContent === 'live'")
        assert await browser.evaluate("document.querySelectorAll('.game').length") == 0
        # Only now does engine B arrive and the games start: what the page shows came live.
        b = Cli("engine", f"tcp://127.0.0.1:{port_b.group(1)}", "--role", "follower", "--depth", "1", "--seed", "2")
        procs.append(b)
        assert match.wait(60) == 0
        shown = await browser.wait_for(
            "(() => { const cards = [...document.querySelectorAll('.game')];"
            " if (cards.length < 2 || cards.some(c => !c.dataset.result)) return null;"
            " return cards.map(c => ({number: +c.dataset.number, result: c.dataset.result,"
            "   plies: +c.dataset.plies, squares: Object.fromEntries([...c.querySelectorAll('.square')]"
            "   .filter(g => g.dataset.piece).map(g => [g.dataset.square, g.dataset.piece]))})); })()"
        )
        await browser.wait_for("document.getElementById('status').textContent.startsWith('finished')")
        # bench/web-view.png is this screenshot: DXSERIAL_SCREENSHOT=1 refreshes it.
        shot = BENCH if os.environ.get("DXSERIAL_SCREENSHOT") == "1" else tmp_path
        await browser.screenshot(shot / "web-view.png")
    finally:
        for proc in reversed(procs):
            proc.stop()
            proc.__exit__(None, None, None)
    records = {int(r.round): r for path in pdn.glob("*.pdn") for r in read_pdn(path)}
    assert sorted(records) == [1, 2]
    for card in shown:
        record = records[card["number"]]
        assert card["result"] == record.result and card["plies"] == record.plies > 0
        assert {int(k): v for k, v in card["squares"].items()} == final_board(record)
    table = await browser.evaluate("document.getElementById('table').textContent")
    assert "results after 2 game(s)" in table


def test_live_view_keeps_moves_clocks_and_results() -> None:
    live = LiveView("Lab")
    start = Position.start().to_fen()
    assert live.apply({"kind": "move", "number": 1}) is None  # no such game yet
    live.apply({"kind": "game", "number": 1, "white": "A", "black": "B", "fen": start, "minutes": 2})
    update = live.apply({"kind": "move", "number": 1, "pdn": "32-28", "colour": "White", "fen": "W:B:W28", "seconds": 7})
    assert update is not None and update["game"]["moves"] == ["32-28"]
    assert update["game"]["left"] == {"White": 113, "Black": 120}
    live.apply({"kind": "result", "number": 1, "result": "2-0", "reason": "test"})
    snap = live.snapshot()
    assert snap["games"][0]["result"] == "2-0" and snap["games"][0]["fen"] == "W:B:W28"
    assert live.apply({"kind": "standings", "table": ["x"]}) == {"type": "standings", "table": ["x"]}
