"""``--web`` on match, tournament and bridge: the live view in a real headless Chromium
shows every game's board as it ends up in the PDN files, updated as the moves happen (the
page was loaded before the first move)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from dxserial.draughts import Position
from dxserial.draughts.notation import parse_pdn_move
from dxserial.game.pdn import read_pdn
from dxserial.game.record import GameRecord
from dxserial.live.view import LiveView
from dxserial.testing.browser import CHROMIUM_MISSING, Browser
from dxserial.testing.process import Cli, wait_until
from dxserial.testing.rig import RigFactory

BENCH = Path(__file__).resolve().parent.parent.parent / "bench"

#: What each game card shows, read from the page once every game on it has a result.
CARDS = (
    "(() => { const cards = [...document.querySelectorAll('.game')];"
    " if (cards.length < %d || cards.some(c => !c.dataset.result)) return null;"
    " return cards.map(c => ({number: +c.dataset.number, result: c.dataset.result,"
    "   head: c.querySelector('.head').textContent, clock: c.querySelector('.clock').textContent,"
    "   moves: c.querySelector('.moves').textContent,"
    "   plies: +c.dataset.plies, squares: Object.fromEntries([...c.querySelectorAll('.square')]"
    "   .filter(g => g.dataset.piece).map(g => [g.dataset.square, g.dataset.piece]))})); })()"
)

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


@pytest.mark.e2e
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
        shown = await browser.wait_for(CARDS % 2)
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
    assert not await browser.evaluate("document.getElementById('standings').hidden")


@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_the_page_follows_a_game_through_the_bridge(
    tmp_path: Path, browser: Browser, rig_factory: RigFactory
) -> None:
    pdn = tmp_path / "pdn"
    rig = rig_factory(bridge_args=("--pdn", str(pdn), "--web", "127.0.0.1:0", "--pass-stop"))
    url = next(line for line in rig.out.lines if line.startswith("web view: ")).split()[-1]
    await browser.call("Page.navigate", url=url)
    await browser.wait_for("document.getElementById('status').textContent === 'live'")
    assert await browser.evaluate("document.title") == f"dxserial bridge {rig.serial_path} (live)"
    # The engines arrive only now: whatever the page shows, it saw happen.
    with Cli(
        "engine", rig.peer_path, "--role", "follower", "--link", "nulmodem", "--seed", "1",
        "--depth", "1", "--echo-timeout", "2", "--max-attempts", "1000",
    ) as serial:
        serial.out.expect("engine ready", timeout=20)
        with Cli(
            "engine", f"tcp://127.0.0.1:{rig.port}", "--role", "initiator", "--games", "1",
            "--moves", "3", "--time", "2", "--depth", "1", "--seed", "2", "--name", "Tcpeng",
        ) as tcp:
            assert tcp.wait(60) == 0
            assert serial.wait(30) == 0
    (card,) = await browser.wait_for(CARDS % 1)
    wait_until(lambda: len(list(pdn.glob("*.pdn"))) == 1, timeout=10, what="the PDN file")
    rig.close()  # the page is told the bridge stopped; the trace is complete
    await browser.wait_for("document.getElementById('status').textContent.startsWith('finished')")
    (record,) = read_pdn(next(pdn.glob("*.pdn")))
    assert card["result"] == record.result != "*" and card["plies"] == record.plies > 0
    assert {int(k): v for k, v in card["squares"].items()} == final_board(record)
    assert card["moves"].split() == record_moves(record)
    assert await browser.evaluate("document.getElementById('standings').hidden")  # none to show
    white_side = "tcp" if record.white == "Tcpeng" else "serial"
    black_side = "serial" if white_side == "tcp" else "tcp"
    assert card["head"] == f"Game 1: {record.white} ({white_side}) - {record.black} ({black_side})"
    # The clocks: the GAMEREQ's 2 minutes less the seconds each side's MOVEs reported.
    seconds = [
        r["fields"]["seconds"] for r in rig.trace()  # type: ignore[index]
        if r.get("type") == "MOVE" and r["action"] == "queued"
    ]
    white, black = (120 - sum(seconds[0::2]), 120 - sum(seconds[1::2]))
    assert card["clock"] == f"White {clock(white)}  Black {clock(black)}"


@pytest.mark.e2e
@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_the_page_follows_a_tournament_to_its_crosstable(tmp_path: Path, browser: Browser) -> None:
    names = ("alpha", "beta")
    spec = tmp_path / "lab.toml"
    spec.write_text(
        'event = "Lab live"\nmoves = 2\nminutes = 1\nmove_timeout = 10\npdn = "games"\n'
        + "".join(f'[engines.{n}]\nendpoint = "listen://127.0.0.1:0"\n' for n in names)
    )
    procs: list[Cli] = []
    try:
        director = Cli("tournament", str(spec), "--web", "127.0.0.1:0")
        procs.append(director)
        url = director.out.expect("web view: ", timeout=20).split()[-1]
        ports = {}
        for _ in names:
            found = re.search(r"engine (\w+): listening on .*:(\d+)$", director.out.expect("engine ", timeout=20))
            assert found
            ports[found.group(1)] = found.group(2)
        await browser.call("Page.navigate", url=url)
        await browser.wait_for("document.getElementById('status').textContent === 'live'")
        assert await browser.evaluate("document.querySelectorAll('.game').length") == 0
        for seed, name in enumerate(names, 1):  # only now can a game start
            procs.append(Cli(
                "engine", f"tcp://127.0.0.1:{ports[name]}", "--role", "follower", "--depth", "1",
                "--seed", str(seed), "--name", name,
            ))
        assert director.wait(60) == 0
        shown = await browser.wait_for(CARDS % 2)
        await browser.wait_for("document.getElementById('status').textContent.startsWith('finished')")
    finally:
        for proc in reversed(procs):
            proc.stop()
            proc.__exit__(None, None, None)
    games = tmp_path / "games"
    assert sorted(card["number"] for card in shown) == [1, 2]  # one game with each as White
    for card in shown:
        (record,) = read_pdn(next(games.glob(f"*-g{card['number']}.pdn")))
        assert card["result"] == record.result and card["plies"] == record.plies > 0
        assert {int(k): v for k, v in card["squares"].items()} == final_board(record)
        white, black = card["head"].split(": ", 1)[1].split(" - ")
        assert white.startswith(record.white) and black.startswith(record.black)
    table = await browser.evaluate("document.getElementById('table').textContent")
    assert table.startswith("crosstable after 2 of 2 game(s)")
    # DXP engines tell no score: no eval beside a move, no PV line, nothing made up.
    assert await browser.evaluate("document.querySelector('.eval, .pv, .game.thinks')") is None


#: Each card's move cells (move, and its eval where the mover told one) and its PV line.
THINKING = (
    "[...document.querySelectorAll('.game')].map(c => ({head: c.querySelector('.head')"
    ".textContent, thinks: c.classList.contains('thinks'), pv: c.querySelector('.pv')?.textContent"
    " ?? null, plies: [...c.querySelectorAll('.ply')].filter(p => p.firstChild).map(p =>"
    " [p.firstChild.textContent.trim(), p.querySelector('.eval')?.textContent ?? null])}))"
)


@pytest.mark.e2e
@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_the_page_shows_a_hub_engines_thinking_beside_its_moves(
    tmp_path: Path, browser: Browser
) -> None:
    """Two built-in Hub engines and one DXP engine: each Hub engine's move has its eval and
    depth beside it, as in the PDN's [%eval]; the DXP engine's moves have nothing."""
    spec = tmp_path / "lab.toml"
    spec.write_text(
        'event = "Thinking"\nmax_moves = 4\nminutes = 1\nmove_timeout = 20\npdn = "games"\n'
        + "".join(f'[engines.{name}]\nspeaks = "hub"\ncommand = ["{sys.executable}", "-m", '
                  f'"dxserial", "hub-engine", "--depth", "{depth}"]\n'
                  for name, depth in (("two", 2), ("three", 3)))
        + '[engines.dxp]\nendpoint = "listen://127.0.0.1:0"\n'
    )
    procs: list[Cli] = []
    try:
        director = Cli("tournament", str(spec), "--web", "127.0.0.1:0")
        procs.append(director)
        url = director.out.expect("web view: ", timeout=20).split()[-1]
        found = re.search(r"engine dxp: listening on .*:(\d+)$",
                          director.out.expect("engine dxp: listening", timeout=30))
        assert found
        await browser.call("Page.navigate", url=url)
        await browser.wait_for("document.getElementById('status').textContent === 'live'")
        # Only now can the DXP engine's games start, so the director is still running.
        procs.append(Cli("engine", f"tcp://127.0.0.1:{found.group(1)}", "--role", "follower",
                         "--depth", "1", "--seed", "1", "--name", "dxp"))
        assert director.wait(120) == 0, director.out.lines[-20:]
        await browser.wait_for(CARDS % 6)
        shown = await browser.evaluate(THINKING)
        await browser.call("Emulation.setDeviceMetricsOverride", width=1300, height=1000,
                           deviceScaleFactor=1, mobile=False)
        assert await browser.evaluate("document.documentElement.scrollWidth <= 1300")
        await browser.screenshot(tmp_path / "thinking.png")
    finally:
        for proc in reversed(procs):
            proc.stop()
            proc.__exit__(None, None, None)
    records = {int(r.round): r for path in (tmp_path / "games").glob("*-g*.pdn")
               for r in read_pdn(path)}
    assert len(shown) == len(records) == 6
    for card in shown:
        number = int(card["head"].split(":")[0].split()[-1])
        record = records[number]
        assert [move for move, _ in card["plies"]] == [m.text for m in record.moves]
        for ply, (_, said) in enumerate(card["plies"], 1):
            white = ply % 2 == 1
            mover = record.white if white else record.black
            thinking = record.thinking.get(ply)
            if mover.startswith("dxp"):  # a DXP engine: an empty cell, nothing made up
                assert said is None and thinking is None
            elif thinking is None:  # a forced move: no search, no info
                assert said is None
            else:  # the PDN's [%eval S,D] is from White's side, as the page shows it
                assert thinking.score is not None and thinking.depth in (2, 3)
                score = (thinking.score if white else -thinking.score) + 0.0  # no -0.00
                assert said == f"{'+' if score > 0 else ''}{score:.2f}/{thinking.depth}"
        hub_game = not (record.white.startswith("dxp") or record.black.startswith("dxp"))
        if hub_game:
            assert card["thinks"] and any(said for _, said in card["plies"])
        last = record.thinking.get(record.plies)
        if last is None:
            assert card["pv"] is None
        else:
            assert card["pv"].startswith(f"last move {record.moves[-1].text}: ")
            assert card["pv"].endswith("pv " + " ".join(last.pv))
    assert any(card["thinks"] for card in shown)


@pytest.mark.e2e
@pytest.mark.skipif(CHROMIUM_MISSING is not None, reason=str(CHROMIUM_MISSING))
async def test_the_serve_page_heads_its_lines_table_lines_and_keeps_it_in_the_window(
    tmp_path: Path, browser: Browser
) -> None:
    """Issue 38 point 16: the rig's table is "Lines", not "Standings", and fits the window
    (long states cut as --status cuts them; a table too wide for the side goes on top)."""
    rig = tmp_path / "rig.toml"
    rig.write_text(
        f'status = "{tmp_path}/serve.sock"\n'
        + "".join(f'[lines.line{i}]\nport = "/dev/dxserial/sn_A10K3XYZ_0{i}"\n'  # not here
                  f'listen = "127.0.0.1:0"\n' for i in range(3)))
    with Cli("serve", str(rig), "--web", "127.0.0.1:0") as serve:
        url = serve.out.expect("web view: ", timeout=20).split()[-1]
        await browser.call("Page.navigate", url=url)
        await browser.wait_for("document.getElementById('status').textContent === 'live'")
        await browser.wait_for("!document.getElementById('standings').hidden")
        heading = await browser.evaluate("document.getElementById('table-heading').textContent")
        assert heading == "Lines"
        caption = await browser.evaluate("document.querySelector('#table caption').textContent")
        assert caption == "3 line(s), 0 running"
        fits = await browser.evaluate(
            "document.getElementById('table').scrollWidth <= document.body.clientWidth")
        assert fits is True
        assert serve.stop() == 0


def clock(seconds: int) -> str:
    return f"{seconds // 60}:{seconds % 60:02}"


def record_moves(record: GameRecord) -> list[str]:
    """The move list as the page writes it: '1. 32-28 17-21 2. ...'."""
    out = []
    for i, move in enumerate(record.moves):
        if i % 2 == 0:
            out.append(f"{i // 2 + 1}.")
        out.append(move.text)
    return out


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
    assert live.apply({"kind": "standings", "table": ["x"]}) == {
        "type": "standings", "table": ["x"], "heading": "Standings"}


def test_live_view_follows_a_take_back_and_keeps_the_board_it_knows() -> None:
    live = LiveView("Bridge")
    start = Position.start().to_fen()
    live.apply({"kind": "game", "number": 1, "white": "A", "black": "B", "fen": start, "minutes": 0.5})
    live.apply({"kind": "move", "number": 1, "pdn": "32-28", "colour": "White", "fen": "W:B:W28", "seconds": 3})
    update = live.apply({"kind": "move", "number": 1, "pdn": "17-23", "colour": "Black", "fen": None})
    assert update is not None and update["game"]["fen"] == "W:B:W28"  # unknown: the last board stays
    assert update["game"]["left"] == {"White": 27, "Black": 30}  # half a minute each
    update = live.apply({"kind": "takeback", "number": 1, "ply": 0, "fen": start})
    assert update is not None and update["game"]["moves"] == [] and update["game"]["fen"] == start
