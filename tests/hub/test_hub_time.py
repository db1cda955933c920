"""Fischer increments and a time per move: the director's clock keeps them, a Hub engine
is told them by 'level', the PDN's TimeControl says 60+2 or *5; a DXP engine cannot be told
and a file that asks for them with one is refused in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.draughts.pieces import Colour
from dxserial.errors import ConfigError
from dxserial.game.clock import GameClock, TimeControl
from dxserial.match.rules import MatchConfig
from dxserial.processes.command import launch
from dxserial.tournament.spec import TournamentSpec

W, B = Colour.WHITE, Colour.BLACK
HUB = '[engines.{0}]\nspeaks = "hub"\ncommand = ["{1}", "-m", "dxserial", "hub-engine"]\n'
HUBS = HUB.format("one", sys.executable) + HUB.format("two", sys.executable)


def test_fischer_adds_the_increment_after_each_move_made_in_time() -> None:
    clock = GameClock(TimeControl(10.0, increment=2.0))
    clock.start(W, 0.0)
    clock.stop(W, 3.0)
    assert clock.left(W, 3.0) == pytest.approx(9.0)  # 10 - 3 + 2
    clock.start(W, 10.0)
    clock.stop(W, 25.0)  # over its time: the flag fell, no increment saves it
    assert clock.left(W, 25.0) < 0 and clock.fallen(25.0) is W


def test_a_time_per_move_is_each_moves_own() -> None:
    clock = GameClock(TimeControl(5.0, per_move=True, margin=0.5))
    clock.start(W, 0.0)
    clock.stop(W, 4.0)
    clock.start(B, 4.0)
    clock.stop(B, 4.1)
    clock.start(W, 4.1)  # 1 s was left: a new move has 5 s again
    assert clock.left(W, 4.1) == pytest.approx(5.0)
    assert clock.flag_at() == pytest.approx(4.1 + 5.5)


@pytest.mark.parametrize(("control", "tag"), [
    (TimeControl(300.0, increment=2.0), "300+2"),
    (TimeControl(5.0, per_move=True), "*5"),
    (TimeControl(300.0, 40), "40/300"),
    (TimeControl(300.0), "300"),
])
def test_the_pdn_timecontrol_forms(control: TimeControl, tag: str) -> None:
    assert control.tag() == tag


def test_the_match_config_makes_the_clock() -> None:
    fischer = MatchConfig(minutes=1, increment=2.0).control()
    assert fischer is not None and (fischer.seconds, fischer.moves, fischer.increment) == (
        60.0, 0, 2.0)
    per_move = MatchConfig(minutes=1, move_time=0.5).control()
    assert per_move is not None and per_move.per_move and per_move.seconds == 0.5


def test_hub_engines_are_told_through_their_follower(tmp_path: Path) -> None:
    spec = TournamentSpec.from_toml("minutes = 5\nincrement = 2\n" + HUBS)
    assert spec.hub_time.increment == 2.0
    command = spec.engines[0].command
    assert command is not None
    argv = launch(command, 4567, tmp_path).argv
    assert argv[argv.index("--increment") + 1] == "2" and argv.index("--hub") > argv.index(
        "--increment")
    spec = TournamentSpec.from_toml("move_time = 0.5\n" + HUBS)
    command = spec.engines[1].command
    assert command is not None
    argv = launch(command, 4567, tmp_path).argv
    assert argv[argv.index("--move-time") + 1] == "0.5"


@pytest.mark.parametrize(("head", "says"), [
    ("increment = 2\n", "engine 'gwd' cannot be told it: a DXP GAMEREQ carries only minutes"),
    ("move_time = 5\n", "move_time: engine 'gwd' cannot be told it"),
])
def test_a_dxp_engine_is_refused_in_one_line(head: str, says: str) -> None:
    text = head + HUB.format("scan", sys.executable) + (
        '[engines.gwd]\nendpoint = "tcp://127.0.0.1:27531"\n')
    with pytest.raises(ConfigError) as err:
        TournamentSpec.from_toml(text)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("head", "says"), [
    ("increment = 2\nmove_time = 5\n", "give one of the two"),
    ("increment = 2\ntime_moves = 40\n", "leave out time_moves"),
    ("increment = -1\n", "increment must be a number of seconds >= 0"),
    ("move_time = 0\n", "move_time must be a number of seconds > 0"),
])
def test_bad_time_settings_are_one_line(head: str, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        TournamentSpec.from_toml(head + HUBS)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_the_follower_options_need_a_hub_engine() -> None:
    done = run_in_process("engine", "tcp://127.0.0.1:1", "--role", "follower", "--increment", "2")
    assert done.returncode != 0
    assert "need --hub (a DXP GAMEREQ carries only minutes and moves" in done.stderr


@pytest.mark.e2e
@pytest.mark.parametrize(("head", "level", "tag"), [
    ("minutes = 1\nincrement = 2\n", "inc=2", "60+2"),
    ("move_time = 0.5\n", "move-time=0.5", "*0.5"),
])
def test_a_tournament_of_hub_engines_keeps_and_tells_the_clock(
    tmp_path: Path, head: str, level: str, tag: str,
) -> None:
    from helpers import run_dxserial

    from dxserial.game.pdn import read_pdn

    heard = tmp_path / "heard.txt"  # what the Hub engines were told
    engine = f'tee -a {heard} | {sys.executable} -m dxserial hub-engine --depth 2'
    table = "".join(f'[engines.{n}]\nspeaks = "hub"\ncommand = ["sh", "-c", "{engine}"]\n'
                    for n in ("a", "b"))
    file = tmp_path / "lab.toml"
    file.write_text("max_moves = 4\n" + head + table)
    done = run_dxserial("tournament", file, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    levels = [line for line in heard.read_text().splitlines() if line.startswith("level")]
    assert levels and all(level in line for line in levels), levels
    games = read_pdn(tmp_path / "games" / "event.pdn")
    assert [g.tags["TimeControl"] for g in games] == [tag, tag]
    if level == "inc=2":  # Fischer: each side's time grows by 2 s a move played fast
        clocks = [c for c in games[0].comments.get(4, []) if "%clock" in c]
        assert clocks and "0:01:04" in clocks[0], games[0].comments


@pytest.mark.parametrize(("args", "says"), [
    (("--increment", "2"), "dxserial match: increment: engine 'tcp://127.0.0.1:1' cannot be "
     "told it: a DXP GAMEREQ carries only minutes and moves (only speaks = \"hub\" engines "
     "are told more, by 'level'); use --time and --time-moves"),
    (("--move-time", "5"), "move_time: engine 'tcp://127.0.0.1:1' cannot be told it"),
    (("--adjudicate-resign", "4,3"), "engine 'tcp://127.0.0.1:1' reports no scores"),
    (("--adjudicate-draw", "40,8"), "--adjudicate-draw '40,8': give AFTER_MOVE,MOVES,MARGIN"),
])
def test_dxserial_match_refuses_what_a_dxp_engine_cannot_be_told(
    args: tuple[str, ...], says: str,
) -> None:
    done = run_in_process("match", "tcp://127.0.0.1:1", "tcp://127.0.0.1:2", *args)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert says in line
