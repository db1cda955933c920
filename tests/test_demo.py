"""``dxserial demo`` as a new user runs it: a real subprocess that ends with a result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dxserial.draughts import Position, parse_pdn_move
from dxserial.record import read_pdn


def test_demo_plays_a_game_through_the_bridge_and_shows_it(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--moves", "8", "--baud", "0",
         "--pdn", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "virtual null-modem cable:" in out and "(NULMODEM) <-> 127.0.0.1:" in out
    assert "TCP engine offers a game: 8 moves" in out
    assert "DOS engine accepts" in out
    assert "White to move" in out and "+------" in out  # boards between the moves
    assert "result: game 1: " in out
    assert '[GameType "20"]' in out
    (pdn,) = list(tmp_path.glob("*.pdn"))
    (record,) = read_pdn(pdn)
    position = Position.start()
    for move in record.moves:
        position = position.play(parse_pdn_move(position, move.text))
    assert record.result in ("2-0", "1-1", "0-2")
    assert "!!" not in out  # the referee found nothing wrong


def test_demo_on_an_emulated_9600_baud_line_without_boards() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--moves", "3", "--no-board"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "(9600 baud)" in result.stdout
    assert "+------" not in result.stdout
    assert "result: game 1: 1-1 (draw: move limit reached)" in result.stdout


def test_demo_rejects_bad_options_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--moves", "0"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == "dxserial: error: --moves 0: must be 1..999"


def test_demo_rejects_a_depth_it_could_not_finish() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", "demo", "--depth", "12", "--no-board"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "dxserial: error: --depth 12: must be 1..10 (each ply multiplies the search time by 3 to 5)"
    )
