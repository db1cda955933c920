"""Stand-in dialects end to end, as a user runs things: through ``dxserial bridge`` against
the built-in engine on a virtual null-modem pair, and under ``dxserial match``.  The combos
are few on purpose; every dialect, role and referee mode is covered in process
(test_dialects.py)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dxserial.game.pdn import read_pdn
from dxserial.testing.process import PY, Cli, LineReader, wait_until
from dxserial.testing.rig import RigFactory, start_serial_engine

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


@contextmanager
def stand_in(dialect: str, endpoint: str, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``python -m dxserial.standins.dialects``; yields it and its ready line."""
    proc = subprocess.Popen(
        [PY, "-m", "dxserial.standins.dialects", dialect, endpoint, *args],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert proc.stdout is not None
    out = LineReader(proc.stdout)
    try:
        yield proc, out.expect("engine ready", timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        out.join()
        proc.stdout.close()


def pdn_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.pdn"))


@pytest.mark.parametrize(
    ("dialect", "role", "referee", "link"),
    [("silent", "initiator", "warn", "nulmodem"), ("echo", "follower", "strict", "nul")],
)
def test_a_dialect_through_the_bridge_plays_two_games_and_nobody_is_blamed(
    rig_factory: RigFactory, tmp_path: Path, dialect: str, role: str, referee: str, link: str
) -> None:
    games = tmp_path / "games"
    rig = rig_factory(bridge_args=("--referee", referee, "--link", link, "--pdn", str(games)))
    serial_role = "follower" if role == "initiator" else "initiator"
    with Cli("engine", rig.peer_path, "--role", serial_role, "--link", link, "--depth", "1",
             "--games", "2", "--moves", "5", "--time", "1", "--echo-timeout", "2",
             "--max-attempts", "1000") as serial:
        serial.out.expect("engine ready", timeout=20)
        with stand_in(dialect, f"tcp://127.0.0.1:{rig.port}", "--role", role, "--games", "2",
                      "--moves", "5"):
            wait_until(lambda: len(pdn_files(games)) == 2, timeout=60, what="two PDN files")
    records = [read_pdn(path)[0] for path in pdn_files(games)]
    assert sorted(r.game_number for r in records) == [1, 2]
    assert all(not r.violations() for r in records)
    log = rig.log()
    assert " WARNING " not in log, log
    assert "note: the tcp engine" in log  # the habit, named
    dropped = [json.loads(line) for line in rig.trace_path.read_text().splitlines()
               if '"dropped"' in line]
    assert all(r["reason"] in ("consumed", "replaced") for r in dropped), dropped


def test_match_against_an_engine_that_never_answers_a_gameend_plays_all_games(
    tmp_path: Path,
) -> None:
    vpair, serial, end_a = start_serial_engine(tmp_path, 31)
    pdn = tmp_path / "pdn"
    with vpair, serial, stand_in("silent", "listen://127.0.0.1:0", "--games", "2") as (_, ready):
        port = re.search(r"127\.0\.0\.1:(\d+)", ready)
        assert port is not None
        with Cli("match", f"tcp://127.0.0.1:{port.group(1)}", end_a, "--games", "2",
                 "--moves", "5", "--time", "1", "--pdn", str(pdn), "--gameend-timeout", "1",
                 "--echo-timeout", "2", "--max-attempts", "1000") as match:
            match.out.expect("results after 2 game(s)", timeout=90)
            assert match.wait(30) == 0, match.out.lines
            lines = match.out.lines
    assert len([line for line in lines if re.match(r"game \d: [^W]", line)]) == 2, lines
    assert len(pdn_files(pdn)) == 2
