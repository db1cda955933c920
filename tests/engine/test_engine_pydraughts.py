"""An independent DXP implementation against ours, through the real bridge:

    pydraughts DXPEngine (initiator, TCP) -- dxserial bridge -- vpair -- dxserial engine
                                                              (NULMODEM, follower)

pydraughts 0.6.7 busy-waits in Python threads, so it runs in a subprocess (a script written
to tmp_path) that the test watches line by line and kills at the end.  What its code shows:

* ``DXPEngine.play(board)`` is called when the engine is to move: the first call sends the
  GAMEREQ (form B, follower colour = the side to move, moves field = 'max-moves') and
  then the opponent's last move; each call waits for the engine's MOVE.
* ``quit()`` sends ``E01`` (reason 0, stop 1) whoever is to move, then sleeps 7 s in
  ``close()``; the script sends the GAMEEND itself when pydraughts' side is to move.
* It answers a GAMEEND with the reason it received (``E11`` after our ``E10``): a dialogue
  violation, so the game is arranged to end on pydraughts' move: its side plays randomly
  but never leaves our engine without a move, and the engine's search wins.
* Its ``receive()`` never sees end of file (it compares bytes with ``""``) and spins.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dxserial.game.pdn import read_pdn
from dxserial.testing.process import Cli, LineReader
from dxserial.testing.rig import read_counts, start_serial_engine

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

pytest.importorskip("draughts")  # pydraughts (a test extra)

SCRIPT = r"""
import random
import sys
import time

import draughts
from draughts.engine import DXPEngine  # (importing draughts.engines.dxp first is circular)

port, seed, max_moves = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
engine = DXPEngine(options={"engine-opened": True, "ip": "127.0.0.1", "port": port,
                            "max-moves": max_moves})
board = draughts.Board()
rng = random.Random(seed)
while True:
    if board.is_over():
        break  # pydraughts' side (White) has no legal move
    if max_moves and len(board.move_stack) >= 2 * max_moves:
        break
    moves = list(board.legal_moves())
    keep = []
    for move in moves:  # never leave the engine without a move (see the test's docstring)
        after = board.copy()
        after.push(move)
        if not after.is_over():
            keep.append(move)
    board.push(rng.choice(keep or moves))
    print("WHITE", board.move_stack[-1].pdn_move, flush=True)
    if board.is_over():
        print("ENGINE HAS NO MOVE", flush=True)
        break
    reply = engine.play(board).move
    if reply is None:
        print("NO REPLY", flush=True)
        sys.exit(3)
    board.push(reply)
    print("BLACK", reply.pdn_move, flush=True)
print("END", len(board.move_stack), board.winner(), flush=True)
engine.sender.gameend()  # E01: what quit() sends, without its 7 s sleep
print("SENT E01", flush=True)
time.sleep(120)
"""


@pytest.fixture
def processes() -> Iterator[list[Cli | subprocess.Popen[str]]]:
    started: list[Cli | subprocess.Popen[str]] = []
    yield started
    for proc in reversed(started):
        if isinstance(proc, Cli):
            proc.stop()
            proc.__exit__(None, None, None)
        else:
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def test_pydraughts_plays_a_whole_game_through_the_bridge(
    tmp_path: Path, processes: list[Cli | subprocess.Popen[str]]
) -> None:
    vpair, engine, a = start_serial_engine(tmp_path, 5, "-v")
    processes += [vpair, engine]
    bridge = Cli(
        "bridge",
        a,
        "--listen",
        "127.0.0.1:0",
        "--echo-timeout",
        "0.5",
        "--max-attempts",
        "1000",
        "--referee",
        "warn",
        "--pdn",
        str(tmp_path / "bridge-pdn"),
        "-v",
    )
    processes.append(bridge)
    ready = bridge.out.expect("bridge ready", timeout=20)
    match = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
    assert match, ready
    script = tmp_path / "pydraughts_client.py"
    script.write_text(SCRIPT)
    client = subprocess.Popen(
        [sys.executable, str(script), match.group(1), "11", "100"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    processes.append(client)
    assert client.stdout is not None
    out = LineReader(client.stdout)
    end = out.expect("END", timeout=60)
    out.expect("SENT E01", timeout=10)
    result = engine.out.expect("game 1:", timeout=30)
    # pydraughts' E01 ended its own session: the serial engine stays for the next TCP engine.
    assert engine.proc.poll() is None
    assert engine.stop() == 0, engine.stderr()  # stopped by hand after a finished game
    plies = int(end.split()[1])
    assert plies > 10
    assert result == "game 1: 0-2 (White has no legal move)"
    assert "in  R01DXP Client" in engine.stderr()
    assert bridge.stop() == 0
    bridge_log = bridge.stderr()
    (tmp_path / "bridge.log").write_text(bridge_log)  # for a look after a failure
    assert "broke the dialogue" not in bridge_log
    assert "invalid message" not in bridge_log
    counts = read_counts(bridge_log)
    assert counts, bridge_log[-2000:]
    assert counts["violations"] == 0 and counts["invalid"] == 0
    # The bridge's own referee recorded the same game, move for move.
    (record,) = read_pdn(next((tmp_path / "bridge-pdn").glob("*.pdn")))
    assert (record.result, record.plies, record.violations()) == ("0-2", plies, [])
    assert record.white == "DXP Client"
