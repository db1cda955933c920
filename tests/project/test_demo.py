"""``dxserial demo`` as a new user runs it: a real subprocess that ends with a result."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.draughts import Position, parse_pdn_move
from dxserial.game.pdn import read_pdn
from dxserial.testing.process import LineReader

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


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
    result = run_in_process("demo", "--moves", "0")
    assert result.returncode == 2
    assert result.stderr.strip() == "dxserial: error: --moves 0: must be 1..999"


def test_demo_rejects_a_depth_it_could_not_finish() -> None:
    result = run_in_process("demo", "--depth", "12", "--no-board")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "dxserial: error: --depth 12: must be 1..10 (each ply multiplies the search time by 3 to 5)"
    )


@contextmanager
def demo_process(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], LineReader]]:
    """``dxserial demo`` with its own TMPDIR, so that what it leaves behind can be seen."""
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dxserial", "demo", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        yield proc, LineReader(proc.stdout)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def stop(proc: subprocess.Popen[str], sig: int) -> tuple[int, str]:
    """Signal the demo; its exit code and stderr (it fails the test if it hangs on)."""
    proc.send_signal(sig)
    try:
        code = proc.wait(10)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the demo ignored signal {sig} for 10 s") from None
    assert proc.stderr is not None
    return code, proc.stderr.read()


def test_ctrl_c_during_a_deep_search_stops_at_once_and_says_so(tmp_path: Path) -> None:
    """Was: Ctrl-C waited for the search (minutes at depth 12), then exited 130 silently."""
    with demo_process(tmp_path, "--depth", "10", "--no-board") as (proc, out):
        out.expect("<-- serial  A", timeout=30)  # accepted: the TCP engine thinks at depth 10
        code, err = stop(proc, signal.SIGINT)
    assert code == 130
    assert re.fullmatch(
        r"dxserial: demo interrupted by Ctrl-C after \d+ moves? of the game; nothing was kept\n",
        err,
    ), err
    assert list((tmp_path / "tmp").iterdir()) == []


def test_sigterm_removes_the_temporary_directory_and_says_what_was_kept(tmp_path: Path) -> None:
    """Was: SIGTERM killed the demo outright and left dxserial-demo-* behind every time."""
    pdn = tmp_path / "games"
    with demo_process(tmp_path, "--no-board", "--pdn", str(pdn)) as (proc, out):
        cable = out.expect("virtual null-modem cable:", timeout=30)
        out.expect("<-- serial  M", timeout=30)  # the DOS engine has moved
        code, err = stop(proc, signal.SIGTERM)
    assert code == 143
    temp = re.search(r"(/\S*dxserial-demo-[^/]+)/", cable)
    assert temp is not None and not Path(temp.group(1)).exists()
    assert list((tmp_path / "tmp").iterdir()) == []
    (kept,) = pdn.glob("*.pdn")
    assert re.fullmatch(
        rf"dxserial: demo stopped by SIGTERM after \d+ moves of the game; the unfinished "
        rf"game is in {re.escape(str(kept))}\n",
        err,
    ), err
    (record,) = read_pdn(kept)
    assert record.result == "*"
