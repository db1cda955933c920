"""``dxserial hub-engine``: the built-in engine in Hub mode, sans-I/O and driven by pydraughts."""

from __future__ import annotations

import os
import subprocess

import pytest

from dxserial.draughts import Position
from dxserial.hub_engine.engine import CutSearch, HubEngine, Quit, Send, Think
from dxserial.protocol import hub

pytest.importorskip("draughts")

from hubgame import needs_script

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

START = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww"


def _lines(actions: list[object]) -> list[str]:
    return [hub.format_line(a.line) for a in actions if isinstance(a, Send)]


def test_the_handshake_names_the_engine_and_its_parameter() -> None:
    engine = HubEngine(name="dx", depth=3)
    out = _lines(engine.receive("hub", 0.0))
    assert out[0].startswith("id name=dx ")
    assert out[1].startswith("param name=depth value=3 type=int")
    assert out[-1] == "wait"
    assert engine.receive("set-param name=depth value=5", 0.0) == []
    assert engine.depth == 5
    assert _lines(engine.receive("init", 0.0)) == ["ready"]
    assert _lines(engine.receive("ping", 0.0)) == ["pong"]


def test_level_sets_the_depth_or_the_deadline_of_the_search() -> None:
    engine = HubEngine(depth=3)
    engine.receive(f'pos pos={START} moves="32-28 19-23"', 0.0)
    (think,) = engine.receive("go think", 10.0)
    assert isinstance(think, Think) and (think.depth, think.deadline) == (3, None)
    assert think.position == Position.from_fen("W:W28,31,33-50:B1-18,20,23")
    engine.searched(think.position.legal_moves()[0], 0.1)
    engine.receive("level move-time=0.5", 0.0)
    (think,) = engine.receive("go think", 10.0)
    assert isinstance(think, Think) and think.deadline == pytest.approx(10.5)
    done = _lines(engine.searched(think.position.legal_moves()[0], 0.5))
    assert done[-1] == "done move=28x19x23"
    engine.receive("level nodes=100000", 0.0)  # no node counter: its own depth, no clock
    (think,) = engine.receive("go think", 20.0)
    assert isinstance(think, Think) and (think.depth, think.deadline) == (3, None)


def test_stop_cuts_the_search_and_done_still_follows() -> None:
    engine = HubEngine()
    engine.receive("level infinite", 0.0)
    engine.receive(f"pos pos={START}", 0.0)
    (think,) = engine.receive("go analyze", 0.0)
    assert isinstance(think, Think) and think.deadline is None
    assert _lines(engine.receive("ping", 0.0)) == ["pong"]
    assert engine.receive("stop", 0.0) == [CutSearch()]
    assert _lines(engine.searched(think.position.legal_moves()[0], 1.0))[-1].startswith("done ")
    assert engine.receive("stop", 0.0) == []  # late: the search already answered
    assert engine.receive("quit", 0.0) == [Quit()]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('pos pos="W', "cannot read the arguments"),
        ("pos pos=Wxyz", "not 51"),
        ("go think", "go before pos"),
        ("level speed=fast", "no depth="),
        ("set-param name=depth value=99", "is not 1..10"),
    ],
)
def test_a_bad_line_is_answered_with_one_error_and_the_session_goes_on(
    text: str, says: str
) -> None:
    engine = HubEngine()
    out = _lines(engine.receive(text, 0.0))
    assert len(out) == 1 and out[0].startswith("error message=") and says in out[0]
    assert _lines(engine.receive("ping", 0.0)) == ["pong"]


def test_only_ping_stop_and_ponder_hit_are_taken_during_a_search() -> None:
    engine = HubEngine()
    engine.receive(f"pos pos={START}", 0.0)
    engine.receive("go think", 0.0)
    (error,) = _lines(engine.receive(f"pos pos={START}", 0.0))
    assert "during a search" in error
    assert engine.receive("ponder-hit", 0.0) == []


@needs_script
def test_pydraughts_plays_a_whole_game_against_the_hub_engine() -> None:
    from draughts.engine import HubEngine as PydraughtsHub
    from draughts.engine import Limit
    from hubgame import DXSERIAL, close, play

    client = PydraughtsHub([DXSERIAL, "hub-engine", "--seed", "5", "-q"])
    try:
        assert client.id["name"] == "dxserial"
        client.init()
        client.ping()
        game = play(client, seed=5, limit=Limit(movetime=0.02), max_plies=300)
        client.quit()
        assert client.p.wait(timeout=10) == 0
    finally:
        close(client)
    assert game.winner is not None, f"unfinished after {game.plies} plies"
    assert game.engine_moves >= 10
    assert all("time" in info for info in game.infos)


@needs_script
def test_end_of_input_is_a_quit() -> None:
    from hubgame import DXSERIAL

    proc = subprocess.run(
        [DXSERIAL, "hub-engine", "-q"], input="hub\n", capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[-1] == "wait"


@needs_script
def test_stdin_from_dev_null_is_an_end_of_input_not_a_crash() -> None:
    """Found walking the docs (issue 38): `dxserial hub-engine < /dev/null` aborted in the
    event loop (a character device that is not a terminal)."""
    from hubgame import DXSERIAL

    with open(os.devnull, "rb") as nothing:
        proc = subprocess.run([DXSERIAL, "hub-engine", "-q"], stdin=nothing,
                              capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


@needs_script
def test_an_overlong_line_on_a_pipe_is_one_error_and_the_next_line_is_read() -> None:
    from hubgame import DXSERIAL

    text = "hub\n" + "x" * 1_000_000 + "\nping\nquit\n"
    proc = subprocess.run(
        [DXSERIAL, "hub-engine", "-q"], input=text, capture_output=True, text=True, timeout=30
    )
    errors = [ln for ln in proc.stdout.splitlines() if ln.startswith("error")]
    assert errors == [f'error message="line of more than {hub.MAX_LINE} characters"']
    assert proc.stdout.splitlines()[-1] == "pong"
