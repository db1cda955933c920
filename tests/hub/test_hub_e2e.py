"""pydraughts' HubEngine drives ``dxserial hub`` through whole games against DXP engines:
the built-in engine on a NULMODEM virtual pair, and DXENG.COM (a real DOS program) in
DOSBox.  Every move the DXP engine plays reaches pydraughts as a legal ``done`` move."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dxserial.processes import dos_engine as dosbox_engine
from dxserial.testing.process import free_port, listening, wait_until
from dxserial.testing.rig import start_serial_engine

pytest.importorskip("draughts")

from draughts.engine import HubEngine, Limit
from hubgame import DXSERIAL, close, needs_script, play

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

ROOT = Path(__file__).resolve().parent.parents[1]


@pytest.fixture
def clients() -> Iterator[list[HubEngine]]:
    started: list[HubEngine] = []
    yield started
    for client in started:
        close(client)


@needs_script
def test_pydraughts_plays_a_whole_game_through_dxserial_hub_on_a_nulmodem_pair(
    tmp_path: Path, clients: list[HubEngine]
) -> None:
    vpair, engine, end = start_serial_engine(tmp_path, 3, "--depth", "2")
    with vpair, engine:
        client = HubEngine([DXSERIAL, "hub", end, "--echo-timeout", "2", "-q"])
        clients.append(client)
        assert client.id["name"] == '"dxserial hub"'  # pydraughts keeps the quotes
        client.init()
        game = play(client, seed=3, limit=Limit(movetime=0.05), max_plies=300)
        assert all("text" not in info for info in game.infos)  # no move of dxserial's own
        client.quit()
        assert client.p.wait(timeout=15) == 0
        engine.out.expect("game 1:", timeout=10)
        assert engine.wait(timeout=15) == 0  # quit's GAMEEND stop code 1 ends its session
    assert game.winner is not None, f"unfinished after {game.plies} plies"
    assert game.engine_moves >= 10


needs_dos = pytest.mark.skipif(
    shutil.which("dosbox") is None or shutil.which("bcc") is None,
    reason=f"needs dosbox and bcc ({dosbox_engine.INSTALL})",
)


@needs_dos
@needs_script
def test_pydraughts_plays_dxeng_com_in_dosbox_through_dxserial_hub(
    tmp_path: Path, clients: list[HubEngine], monkeypatch: pytest.MonkeyPatch
) -> None:
    build = tmp_path / "build"
    subprocess.run(["sh", str(ROOT / "dos" / "build.sh"), str(build)], check=True, timeout=60)
    monkeypatch.setenv(dosbox_engine.ENGINE_ENV, str(build / dosbox_engine.PROGRAM))
    port = free_port()
    run = dosbox_engine.prepare(
        tmp_path / "c",
        dosbox_engine.serial_line(port, dosbox_listens=True, transparent=True),
        dosbox_engine.engine_args(role="f", idle=30),
        cycles=20000,
    )
    dos = subprocess.Popen(
        run.argv,
        env=run.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: listening(port), timeout=20, what="DOSBox listening")
        client = HubEngine([DXSERIAL, "hub", f"socket://127.0.0.1:{port}", "-q"])
        clients.append(client)
        client.init()
        game = play(client, seed=7, limit=Limit(movetime=1), max_plies=60, engine_is_white=False)
        assert all("text" not in info for info in game.infos), game.infos
        client.quit()
        assert client.p.wait(timeout=15) == 0
        dos.wait(30)
    finally:
        if dos.poll() is None:
            dos.kill()
        dos.wait()
    log = run.log_text()
    assert game.engine_moves >= 10, log
    for bad in ("RETRY", "GIVEUP", "ILLEGAL", "NOISE", "OVERFLOW"):
        assert bad not in log, log
    assert log.rstrip().endswith("BYE done"), log
