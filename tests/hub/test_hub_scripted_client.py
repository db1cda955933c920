"""``dxserial hub`` over TCP driven by a scripted Hub client (dxserial/testing/hub_client.py):
against the built-in engine always, and against Scan's DXP mode when a Scan binary is
named (``DXSERIAL_SCAN_DXP=/path/to/scan``, its scan.ini and data/ beside it or one folder
up, as Scan 2.0's source tree has them)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dxserial.draughts import LegalMove, Position
from dxserial.testing.hub_client import ScriptedHubClient, play_game, stop_then_go
from dxserial.testing.process import Cli, free_port, wait_until

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

HUB = [sys.executable, "-m", "dxserial", "hub"]


def random_mover(seed: int) -> Callable[[Position], LegalMove]:
    rng = random.Random(seed)

    def choose(position: Position) -> LegalMove:
        return rng.choice(position.legal_moves())

    return choose


@pytest.fixture
def builtin_engine() -> Iterator[int]:
    port = free_port()
    with Cli(
        "engine", f"listen://127.0.0.1:{port}", "--role", "follower", "--depth", "2",
        "--seed", "5",
    ) as engine:
        engine.out.expect("engine ready", timeout=20)
        yield port


def test_stop_then_go_and_a_game_through_dxserial_hub_are_the_engines_moves(
    builtin_engine: int, tmp_path: Path,
) -> None:
    with (tmp_path / "hub.log").open("wb") as log:
        client = ScriptedHubClient(
            [*HUB, f"tcp://127.0.0.1:{builtin_engine}", "-v"], stderr=log, timeout=60
        )
        try:
            assert client.handshake() == "dxserial hub"
            # (the stopped go may still be the engine's: its MOVE can beat our 'stop')
            _stopped, then = stop_then_go(client, first="level move-time=2", stop_after=0.0)
            assert not then.ours, then.lines
            tally = play_game(client, "level move-time=0.2", random_mover(2), max_plies=60)
            assert tally.engine_moves >= 10 and tally.replaced == 0, tally.answers
            assert client.quit() == 0
        finally:
            if client.proc.poll() is None:
                client.proc.kill()
                client.proc.wait()


SCAN = os.environ.get("DXSERIAL_SCAN_DXP", "")


def _beside(binary: Path, name: str) -> Path:
    for folder in (binary.parent, binary.parent.parent):
        if (folder / name).exists():
            return folder / name
    raise AssertionError(f"no {name} beside {binary} or one folder up")


@pytest.mark.skipif(not SCAN, reason="set DXSERIAL_SCAN_DXP to a Scan 2.0/3.x binary")
def test_scan_in_dxp_mode_behind_dxserial_hub_plays_every_move_itself(tmp_path: Path) -> None:
    binary = Path(SCAN).resolve()
    port = free_port()
    work = tmp_path / "scan"
    work.mkdir()
    (work / "data").symlink_to(_beside(binary, "data"))
    ini = _beside(binary, "scan.ini").read_text().splitlines()
    keep = [line for line in ini if not line.split("=")[0].strip().startswith("dxp-")]
    (work / "scan.ini").write_text(
        "\n".join([*keep, "dxp-server = true", "dxp-host = 127.0.0.1", f"dxp-port = {port}",
                   "dxp-initiator = false", "dxp-board = false", "dxp-search = false"]) + "\n"
    )
    out = work / "scan.out"
    with out.open("wb") as sink:
        scan = subprocess.Popen([str(binary), "dxp"], cwd=work, stdin=subprocess.DEVNULL,
                                stdout=sink, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: b"waiting for a connection" in out.read_bytes(), timeout=60,
                   what="Scan listening")  # a probe connection would be its only one
        with (tmp_path / "hub.log").open("wb") as log:
            client = ScriptedHubClient([*HUB, f"tcp://127.0.0.1:{port}", "-v"], stderr=log)
            client.handshake()
            for _ in range(2):
                _stopped, then = stop_then_go(client)
                assert not then.ours, then.lines
            tally = play_game(client, "level move-time=1", random_mover(1))
            assert tally.replaced == 0, [a.lines for a in tally.answers if a.ours]
            client.quit()
    finally:
        if scan.poll() is None:
            scan.kill()
        scan.wait()
        shutil.rmtree(work, ignore_errors=True)
