"""The strict stand-in as a process, against programs as a user runs them: ``dxserial
bridge`` started afresh, killed mid-game and started again; ``dxserial match``;
``dxserial tournament`` with it as a command engine.  It ends with status 1 on the first
message DXP does not allow where it is, so each of these says: nothing was sent to it
that it had not caused."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dxserial.standins.strict import command
from dxserial.testing.process import Cli, LineReader, wait_until
from dxserial.testing.rig import TEST_BRIDGE_ARGS, Bridge, Vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


class Strict:
    """``python -m dxserial.standins.strict ENDPOINT ARGS``; its stderr in ``log``."""

    def __init__(self, log: Path, endpoint: str, *args: str) -> None:
        self.log = log
        self._err = log.open("a")
        self.proc = subprocess.Popen(command(endpoint, *args), stdout=subprocess.PIPE,
                                     stderr=self._err, text=True)
        assert self.proc.stdout is not None
        self.out = LineReader(self.proc.stdout)
        self.ready = self.out.expect("engine ready", timeout=20)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.out.join()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self._err.close()

    def said(self) -> str:
        return self.log.read_text()


@contextmanager
def strict(log: Path, endpoint: str, *args: str) -> Iterator[Strict]:
    made = Strict(log, endpoint, *args)
    try:
        yield made
    finally:
        made.close()


def tcp_engine(port: int, seed: int, *extra: str) -> Cli:
    proc = Cli("engine", f"tcp://127.0.0.1:{port}", "--role", "initiator", "--depth", "1",
               "--seed", str(seed), "--games", "1", "--moves", "4", "--time", "1", *extra)
    proc.out.expect("engine ready", timeout=20)
    return proc


def own_messages(bridge: Bridge) -> list[str]:
    """What the bridge said of its own accord (not a message changed on someone's behalf)."""
    records = [json.loads(line) for line in bridge.trace_path.read_text().splitlines()]
    return [r["raw"] for r in records
            if r.get("action") == "sent-by-bridge" and "on_behalf_of" not in r]


def undelivered(bridge: Bridge) -> set[int]:
    """The messages for the serial engine whose fate the trace does not tell yet."""
    records = [json.loads(line) for line in bridge.trace_path.read_text().splitlines()]
    sent = {r["id"] for r in records if str(r.get("direction", "")).endswith("->serial")
            and r.get("action") in ("queued", "sent-by-bridge")}
    return sent - {r["id"] for r in records if r.get("action") in ("delivered", "lost")}


def moves(bridge: Bridge) -> int:
    return sum('"type":"MOVE"' in line and '"queued"' in line
               for line in bridge.trace_path.read_text().splitlines())


def test_a_strict_serial_engine_plays_through_bridges_started_afresh_and_killed(
    tmp_path: Path,
) -> None:
    runs = [tmp_path / f"run{n}" for n in (1, 2, 3)]
    for run in runs:
        run.mkdir()
    with Vpair(tmp_path) as vpair, strict(tmp_path / "strict.log", vpair.path_b) as engine:
        # Started afresh twice (no record of an open game): the GAMEREQ goes out first.
        for run, seed in ((runs[0], 2), (runs[1], 3)):
            with Bridge(run, vpair.path_a, *TEST_BRIDGE_ARGS, serial_check=True) as bridge:
                with tcp_engine(bridge.port, seed) as tcp:
                    assert tcp.wait(60) == 0, (tcp.out.lines, engine.said())
                # Stopped only once its last GAMEEND reached the engine (else the record
                # rightly stays open, and the next run ends that game first).
                wait_until(lambda: not undelivered(bridge), timeout=20,
                           what="the last messages delivered")
            assert own_messages(bridge) == []  # the stop code changed, nothing else
        # Killed mid-game: the next run's record says a game was open, so that game is
        # ended (a GAMEEND where the strict engine waits for a move: allowed) first.
        with Bridge(runs[2], vpair.path_a, *TEST_BRIDGE_ARGS, serial_check=True) as bridge, \
                tcp_engine(bridge.port, 4, "--moves", "40"):
            wait_until(lambda: moves(bridge) >= 4 and moves(bridge) % 2 == 0, timeout=30,
                       what="a few moves, the strict engine's turn to wait")
            bridge.proc.kill()
            bridge.proc.wait(10)
        again = tmp_path / "run4"
        again.mkdir()
        with Bridge(again, vpair.path_a, *TEST_BRIDGE_ARGS, serial_check=True) as bridge:
            with tcp_engine(bridge.port, 5) as tcp:
                assert tcp.wait(60) == 0, (tcp.out.lines, engine.said())
            assert "ending game left open by the previous run (state file" in bridge.log()
        assert engine.proc.poll() is None, engine.said()  # alive: nothing it did not allow


def test_match_plays_strict_engines_on_tcp_and_on_a_serial_line(tmp_path: Path) -> None:
    with Vpair(tmp_path) as vpair, strict(tmp_path / "serial.log", vpair.path_b) as serial, \
            strict(tmp_path / "tcp.log", "listen://127.0.0.1:0") as tcp:
        port = re.search(r"127\.0\.0\.1:(\d+)", tcp.ready)
        assert port is not None
        with Cli("match", f"tcp://127.0.0.1:{port.group(1)}", vpair.path_a, "--games", "2",
                 "--moves", "5", "--time", "1", "--echo-timeout", "2",
                 "--max-attempts", "1000", "--pdn", str(tmp_path / "pdn")) as match:
            match.out.expect("results after 2 game(s)", timeout=90)
            assert match.wait(30) == 0, (match.out.lines, serial.said(), tcp.said())
    assert "strict engine:" not in serial.said() + tcp.said()
    assert len(list((tmp_path / "pdn").glob("*.pdn"))) == 2


def test_tournament_plays_strict_command_engines(tmp_path: Path) -> None:
    file = tmp_path / "lab.toml"
    table = "".join(
        f"[engines.{name}]\ncommand = {json.dumps(argv)}\nspeaks = \"{speaks}\"\n"
        for name, argv, speaks in (
            ("server", command("listen://127.0.0.1:{port}", "--seed", "1"), "dxp-server"),
            ("client", command("tcp://127.0.0.1:{port}", "--seed", "2"), "dxp-client"),
        )
    )
    file.write_text('event = "Strict"\nmoves = 4\nminutes = 1\nmove_timeout = 5\n'
                    'pdn = "games"\n' + table)
    with Cli("tournament", str(file)) as director:
        assert director.wait(120) == 0, director.out.drain()
        out = director.out.drain()
    played = [line for line in out if re.match(r"\[\d+/\d+\] game \d+:", line)]
    assert len(played) == 2 and not [x for x in out if "forfeit" in x or "failed" in x], out
    logs = "".join(p.read_text() for p in (tmp_path / "games").glob("*.log"))
    assert "strict engine:" not in logs
