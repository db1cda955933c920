"""An engine set up as initiator (GWD's default, ``--dxp_initiator=true``) sends its own GAMEREQ
when the director connects: it is named in one line the first time (which engine, that the
director is the initiator, the setting to change), gets no GAMEREQ of ours on top of its
own, and loses its games as the failure policy says; never a bare "link lost"."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from dxserial.drive.actions import Action, Hangup, Log, Send
from dxserial.match.engine import Engine
from dxserial.match.initiators import advice
from dxserial.match.machine import GameConductor
from dxserial.match.rules import FailurePolicy, MatchConfig
from dxserial.protocol.messages import GameRequest, parse
from dxserial.standins.initiator import command as initiator
from dxserial.testing.process import Cli

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

GWD_REQUEST = (b"R01GWD 8.100 material              Z001075BW" + b"z" * 20 + b"e" * 10
               + b"w" * 20)
ENGINE = [sys.executable, "-m", "dxserial", "engine"]


def conductor(policy: FailurePolicy = FailurePolicy.STOP) -> tuple[GameConductor, Engine]:
    a, b = Engine("A"), Engine("B")
    config = MatchConfig(games=1, moves=2, move_timeout=10.0, on_engine_failure=policy)
    game = GameConductor(1, a, b, config, white="A", last={"A", "B"})
    for side in ("A", "B"):
        game.joined(side, 0.0)
    return game, b


def sent(actions: list[Action], side: str) -> list[bytes]:
    return [a.raw for a in actions if isinstance(a, Send) and a.side == side]


def warnings(actions: list[Action]) -> list[str]:
    return [a.text for a in actions if isinstance(a, Log) and a.level >= logging.WARNING]


def test_a_gamereq_before_the_offer_gets_none_of_ours_and_forfeits_the_game() -> None:
    game, b = conductor()
    early = game.receive("B", GWD_REQUEST, 0.1)  # read before the game began
    out = early + game.begin(0.2)
    assert sent(out, "B") == []  # not a GAMEREQ, not a GAMEEND: nothing
    assert all(not isinstance(parse(raw), GameRequest) for raw in sent(out, "A"))
    (line,) = warnings(out)
    assert line.startswith("engine B (GWD 8.100 material) is set up as the initiator")
    assert "the director is the initiator" in line and "--dxp_initiator=false" in line
    assert game.over and game.result is not None and game.result.result == "2-0"
    assert "set up as initiator" in game.result.reason and "link lost" not in game.result.reason
    assert b.failure is not None and "--dxp_initiator=false" in b.failure


def test_a_gamereq_that_crosses_ours_ends_the_offer_with_nothing_more_to_it() -> None:
    game, b = conductor(FailurePolicy.CONTINUE)
    out = game.begin(0.0)
    assert [type(parse(raw)) for raw in sent(out, "B")] == [GameRequest]
    out = game.receive("B", GWD_REQUEST, 0.05)
    assert sent(out, "B") == []
    assert len(warnings(out)) == 1
    assert b.failure is not None and b.failure.startswith("set up as initiator")
    assert game.result is not None and game.result.result == "2-0"  # B forfeits
    assert any(isinstance(a, Hangup) and a.side == "B" for a in out)


def test_the_line_is_said_once_per_engine_and_names_known_settings() -> None:
    game, b = conductor(FailurePolicy.CONTINUE)
    first = game.receive("B", GWD_REQUEST, 0.0) + game.begin(0.0)
    again, _ = conductor(FailurePolicy.CONTINUE)
    again.engines["B"] = b  # the same engine's next game (a tournament keeps it)
    b.joined()
    second = again.receive("B", GWD_REQUEST, 1.0)
    assert len(warnings(first)) == 1 and warnings(second) == []
    assert advice("Scan 3.1") == "set dxp-initiator = false in scan.ini"
    assert "follower" in advice("Kingsrow")


def table(name: str, argv: list[str], speaks: str) -> str:
    return f"[engines.{name}]\ncommand = {json.dumps(argv)}\nspeaks = \"{speaks}\"\n"


def test_a_match_stops_at_an_initiator_engine_in_one_line_and_never_offers_it_a_game(
    tmp_path: Path,
) -> None:
    file = tmp_path / "engines.toml"
    file.write_text(
        table("deep", [*ENGINE, "listen://127.0.0.1:{port}", "--role", "follower", "--depth",
                       "1"], "dxp-server")
        + table("gwd", initiator("listen://127.0.0.1:{port}"), "dxp-server")
    )
    cli = Cli("match", "--engines", str(file), "deep", "gwd", "--games", "2", "--moves", "4",
              "--pdn", str(tmp_path / "games"))
    cli.wait(60)
    err = cli.stderr()
    out = cli.out.drain()
    cli.close()
    assert cli.proc.returncode == 1, out
    named = [line for line in err.splitlines() if "is set up as the initiator" in line]
    assert len(named) == 1 and "start GWD with --dxp_initiator=false" in named[0], err
    (game,) = [line for line in out if line.startswith("game 1: 2-0")]
    assert "forfeits: set up as initiator" in game and "link lost" not in game
    assert "dxserial: error: match stopped after 1 game(s): engine GWD" in err
    log = (tmp_path / "games" / "gwd.log").read_text()
    assert "initiator: received" not in log and "FATAL" not in log  # we said nothing to it


def test_a_tournament_forfeits_each_game_of_an_initiator_engine_and_names_it_once(
    tmp_path: Path,
) -> None:
    file = tmp_path / "event.toml"
    file.write_text(
        "rounds = 2\nmoves = 4\nminutes = 1\nmove_timeout = 5\nconnect_timeout = 20\n"
        + table("deep", [*ENGINE, "listen://127.0.0.1:{port}", "--role", "follower",
                         "--depth", "1"], "dxp-server")
        + table("gwd", initiator("tcp://127.0.0.1:{port}"), "dxp-client")
    )
    cli = Cli("tournament", str(file))
    cli.wait(90)
    err = cli.stderr()
    out = cli.out.drain()
    cli.close()
    named = [line for line in err.splitlines() if "is set up as the initiator" in line]
    assert len(named) == 1, err
    games = json.loads((tmp_path / "games" / "tournament-state.json").read_text())["games"]
    assert len(games) == 4, out
    assert all("set up as initiator" in g["reason"] for g in games), games
    assert not any("link lost" in g["reason"] for g in games), games
    log = (tmp_path / "games" / "gwd.log").read_text()
    assert log.count("initiator: sent") == 4 and "initiator: received" not in log
