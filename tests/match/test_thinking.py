"""A Hub engine's thinking beside its moves: the Hub client keeps its info, the follower
tells it by CHAT, the director records it from an engine it started as a Hub engine (and
from no other), the PDN carries it as [%eval S,D] [%pv ...], and both readers read it back."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_conductor import Game

from dxserial.draughts import Position
from dxserial.engine.hub_client import Done, HubClient
from dxserial.game.news import MoveMade
from dxserial.game.pdn import parse_pdn, to_pdn
from dxserial.game.thinking import Thinking, eval_command, parse_eval
from dxserial.protocol import hub
from dxserial.protocol.messages import MAX_CHAT_TEXT


def test_the_chat_form_reads_back_and_fits_dxp() -> None:
    said = Thinking(0.35, 12, ("32-28", "17-22", "28x17"))
    assert said.to_chat() == "thinking score=0.35 depth=12 pv=32-28 17-22 28x17"
    assert Thinking.from_chat(said.to_chat()) == said
    long = Thinking(-1.5, 30, tuple(["32-28", "17-22"] * 40))
    text = long.to_chat()
    assert len(text) <= MAX_CHAT_TEXT and text.endswith(("32-28", "17-22"))  # whole moves
    assert Thinking.from_chat(text) == Thinking(-1.5, 30, long.pv[: len(text.split()) - 3])
    for other in ("hello", "thinking", "thinking score=x", "thinkingscore=1", ""):
        assert Thinking.from_chat(other) is None


def test_the_pdn_commands_are_from_whites_side() -> None:
    said = Thinking(0.35, 12, ("17-22",))
    assert eval_command(said, white_moved=False) == "[%eval -0.35,12] [%pv 17-22]"
    assert parse_eval("[%eval -0.35,12] [%pv 17-22] [%clock w0:01:00 B0:01:00]", False) == said
    assert eval_command(Thinking(depth=7), True) == ""  # no score: no eval


def test_the_hub_client_gives_the_last_info_with_done_and_its_pv_as_pdn() -> None:
    client = HubClient()
    client.start()
    client.receive("wait")
    client.receive("ready")
    client.think(Position.start(), hub.Level(depth=5))
    client.receive('info depth=4 score=0.10 pv="31-27 16-21"')
    client.receive('info depth=6 score=-0.01 pv="32-28 17-22 28x17x22"')
    client.receive("info time=0.5 nps=1000")  # a later line without a score keeps it
    (done,) = client.receive("done move=32-28")
    assert isinstance(done, Done)
    assert done.thinking == Thinking(-0.01, 6, ("32-28", "17-22", "28x17"))
    client.think(Position.start(), hub.Level(depth=5))
    client.receive('info depth=3 score=0.2 pv="31-27"')  # a PV of another move: left out
    (done,) = client.receive("done move=32-28")
    assert isinstance(done, Done) and done.thinking == Thinking(0.2, 3, ())
    client.think(Position.start(), hub.Level(depth=5))
    (done,) = client.receive("done move=32-28")
    assert isinstance(done, Done) and done.thinking is None  # no info: nothing made up


def _play_with_chats(reports: bool) -> Game:
    game = Game(moves=1)
    game.a.reports_thinking = game.b.reports_thinking = reports
    game.start()
    game.send("A", b"Cthinking score=0.35 depth=9 pv=33-28 18-23", after=0.0)
    game.send("A", b"M0000332800")
    game.take("B")
    game.send("B", b"Cthinking score=0.10 depth=8", after=0.0)
    game.send("B", b"M0000182300")
    return game


def test_the_director_records_the_thinking_an_engine_it_started_as_hub_told() -> None:
    game = _play_with_chats(reports=True)
    record = game.conductor.record
    assert record is not None
    assert record.thinking == {1: Thinking(0.35, 9, ("33-28", "18-23")), 2: Thinking(0.1, 8)}
    moves = [a.news for a in game.actions if hasattr(a, "news") and isinstance(a.news, MoveMade)]
    assert [m.event()["thinking"] for m in moves] == [
        {"score": 0.35, "depth": 9, "pv": ["33-28", "18-23"]},
        {"score": -0.1, "depth": 8, "pv": []},  # Black's +0.10 from White's side
    ]
    text = to_pdn(record)
    assert "1. 33-28 {[%eval 0.35,9] [%pv 33-28 18-23]} 18-23" in text
    assert "{[%eval -0.10,8] [%clock W0:10:00 b0:10:00]}" in text
    (back,) = parse_pdn(text)
    assert back.thinking == record.thinking
    assert not any("%eval" in t for texts in back.comments.values() for t in texts)


def test_a_dxp_engine_gets_nothing_recorded_from_a_chat() -> None:
    game = _play_with_chats(reports=False)
    record = game.conductor.record
    assert record is not None and record.thinking == {}
    assert "%eval" not in to_pdn(record)


@pytest.mark.e2e
def test_hub_engines_in_a_tournament_leave_their_scores_in_the_pdn(tmp_path: Path) -> None:
    from helpers import run_dxserial
    from pdn_check import both_read

    from dxserial.game.pdn import read_pdn

    table = "".join(
        f'[engines.{name}]\nspeaks = "hub"\ncommand = ["{sys.executable}", "-m", "dxserial", '
        f'"hub-engine", "--depth", "{depth}"]\n'
        for name, depth in (("two", 2), ("three", 3))
    )
    file = tmp_path / "lab.toml"
    file.write_text("max_moves = 8\nminutes = 1\n" + table)
    done = run_dxserial("tournament", file, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    event = tmp_path / "games" / "event.pdn"
    games = read_pdn(event)
    assert len(games) == 2
    for game in games:
        # Every move but a forced one (a single legal move: no search, no info) has it.
        assert len(game.thinking) >= game.plies // 2
        assert all(t.score is not None and t.depth in (2, 3) for t in game.thinking.values())
        assert all(t.pv[:1] == (game.moves[ply - 1].text,) for ply, t in game.thinking.items())
    both_read(event, games=2)  # pydraughts reads the file with the commands in it


def test_the_live_view_keeps_the_thinking_of_each_move() -> None:
    from dxserial.live.view import LiveView

    game = _play_with_chats(reports=True)
    view = LiveView()
    for action in game.actions:
        news = getattr(action, "news", None)
        if news is not None:
            view.apply(news.event())
    (shown,) = view.snapshot()["games"]
    assert shown["moves"] == ["33-28", "18-23"]
    assert shown["thinking"] == [
        {"score": 0.35, "depth": 9, "pv": ["33-28", "18-23"]},
        {"score": -0.1, "depth": 8, "pv": []},
    ]
    plain = _play_with_chats(reports=False)
    view = LiveView()
    for action in plain.actions:
        news = getattr(action, "news", None)
        if news is not None:
            view.apply(news.event())
    assert view.snapshot()["games"][0]["thinking"] == [None, None]  # a DXP engine: nothing


@pytest.mark.e2e
@pytest.mark.skipif("DXSERIAL_SCAN" not in __import__("os").environ,
                    reason="set DXSERIAL_SCAN to a Scan 3.x binary (its scan.ini and data/ beside it)")
def test_scan_in_hub_mode_leaves_its_scores_and_pv_in_the_pdn(tmp_path: Path) -> None:
    import os

    from helpers import run_dxserial
    from pdn_check import both_read

    from dxserial.game.pdn import read_pdn

    scan = Path(os.environ["DXSERIAL_SCAN"]).absolute()
    file = tmp_path / "lab.toml"
    file.write_text(
        'max_moves = 8\nminutes = 1\nincrement = 1\nopenings = ["1. 32-28 19-23"]\n'
        f'[engines.scan]\nspeaks = "hub"\ncommand = ["{scan}", "hub"]\ncwd = "{scan.parent}"\n'
        f'[engines.builtin]\nspeaks = "hub"\ncommand = ["{sys.executable}", "-m", "dxserial", '
        '"hub-engine", "--depth", "2"]\n'
    )
    done = run_dxserial("tournament", file, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    event = tmp_path / "games" / "event.pdn"
    games = read_pdn(event)
    scans = [t for g in games for ply, t in g.thinking.items()
             if (g.white == "scan") == (g.moves[ply - 1].colour.name == "WHITE")]
    assert scans and all(t.score is not None for t in scans)
    assert any(t.depth and t.depth > 3 and len(t.pv) > 2 for t in scans)  # its searches
    both_read(event, games=2)
