"""``dxserial match``: two built-in engines, one on a virtual serial pair (NULMODEM) and one
on TCP, play each other through dxserial; and what happens when one of them vanishes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pdn_check import both_read

from dxserial.cli.display import TerminalProgress
from dxserial.game.pdn import read_pdn
from dxserial.match.standings import Standing, results_table
from dxserial.testing.process import Cli, LineReader
from dxserial.testing.rig import start_serial_engine

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


class Proc:
    """A ``python -m dxserial`` process whose stdout and stderr are both read line by line."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dxserial", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.out = LineReader(self.proc.stdout)
        self.err = LineReader(self.proc.stderr)

    def wait(self, timeout: float = 30.0) -> int:
        return self.proc.wait(timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.out.join()
        self.err.join()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def started() -> Iterator[list[Cli | Proc]]:
    procs: list[Cli | Proc] = []
    yield procs
    for proc in reversed(procs):
        if isinstance(proc, Cli):
            proc.stop()
            proc.__exit__(None, None, None)
        else:
            proc.close()


def tcp_engine(procs: list[Cli | Proc], *extra: str) -> tuple[Cli, int]:
    engine = Cli("engine", "listen://127.0.0.1:0", "--role", "follower", *extra)
    procs.append(engine)
    ready = engine.out.expect("engine ready", timeout=20)
    match = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
    assert match, ready
    return engine, int(match.group(1))


def test_serial_engine_against_tcp_engine(tmp_path: Path, started: list[Cli | Proc]) -> None:
    vpair, serial_engine, a = start_serial_engine(tmp_path, 1)
    started += [vpair, serial_engine]
    tcp, port = tcp_engine(started, "--seed", "2")
    pdn = tmp_path / "pdn"
    match = Proc(
        "match",
        f"tcp://127.0.0.1:{port}",
        a,
        "--games",
        "3",
        "--max-moves",
        "20",
        "--pdn",
        str(pdn),
        "--echo-timeout",
        "0.5",
        "--max-attempts",
        "1000",
    )
    started.append(match)
    assert match.wait(60) == 0
    lines = all_lines(match.out)
    results = [line for line in lines if re.match(r"game \d: [^W]", line)]
    assert len(results) == 3, lines
    assert all(line.split()[2] in ("2-0", "1-1", "0-2") for line in results), results
    assert "game 1: White dxserial 0.1.0 (A) vs Black dxserial 0.1.0 (B)" in lines
    assert "game 2: White dxserial 0.1.0 (B) vs Black dxserial 0.1.0 (A)" in lines
    table = lines[lines.index(next(x for x in lines if x.startswith("results after 3"))) :]
    assert table[2].split()[:2] == ["A", "dxserial"] and table[3].split()[0] == "B"
    # Both engines were told to stop (stop code 1) and left cleanly.
    assert tcp.wait(20) == 0 and serial_engine.wait(20) == 0
    files = sorted(pdn.glob("*.pdn"))
    assert len(files) == 3
    for number, path in enumerate(sorted(files, key=lambda p: p.name[-6:]), 1):
        (record,) = read_pdn(path)
        assert record.round == str(number) and record.result in ("2-0", "1-1", "0-2")
        assert record.plies > 0 and not record.violations()
        # The time control follows the move limit: 5 minutes for 20 moves, kept by the
        # director, its readings in the file as lidraughts writes them.
        assert record.tags["TimeControl"] == "20/300" and "[%clock " in path.read_text()
        both_read(path)
        with Cli("replay", str(path)) as replay:
            assert replay.wait(30) == 0
            summary = all_lines(replay.out)
        assert summary[-1] == "1 game, 0 violations", summary


def all_lines(reader: LineReader) -> list[str]:
    """Every line of a stream whose process has exited."""
    while True:
        try:
            reader.expect("", timeout=10)
        except AssertionError:
            return reader.lines


def _vanishing_match(
    tmp_path: Path, started: list[Cli | Proc], policy: str
) -> tuple[Proc, Cli, Cli]:
    victim, port_a = tcp_engine(started, "--seed", "3")
    survivor, port_b = tcp_engine(started, "--seed", "4")
    match = Proc(
        "match",
        f"tcp://127.0.0.1:{port_a}",
        f"tcp://127.0.0.1:{port_b}",
        "--games",
        "2",
        "--moves",
        "75",
        "--pdn",
        str(tmp_path / "pdn"),
        "--on-engine-failure",
        policy,
        "--connect-timeout",
        "1",
        "-v",
    )
    started.append(match)
    moves = 0
    while moves < 5:  # engine A (White in game 1) has played a few moves
        moves += "<- A: M" in match.err.expect("", timeout=20)
    victim.proc.send_signal(signal.SIGKILL)
    return match, victim, survivor


def test_vanished_engine_stops_the_match(tmp_path: Path, started: list[Cli | Proc]) -> None:
    match, _, survivor = _vanishing_match(tmp_path, started, "stop")
    failed = match.out.expect("engine dxserial 0.1.0 (A) failed: link lost", timeout=20)
    # Killed, its connection ends as the kernel closes it: a close, or a reset if bytes
    # were still unread.
    assert "the engine closed the connection" in failed or "connection reset" in failed
    result = match.out.expect("game 1: 0-2", timeout=20)
    assert "White dxserial 0.1.0 (A) forfeits: link lost" in result
    assert match.wait(30) == 1
    error = match.err.expect("dxserial: error:", timeout=10)
    assert "match stopped after 1 game(s): engine dxserial 0.1.0 (A): link lost" in error
    assert "(--on-engine-failure stop)" in error
    # The other engine got the GAMEEND exchange with stop code 1 and left cleanly.
    assert survivor.out.expect("game 1:") == "game 1: 0-2 (White resigned)"
    assert survivor.wait(20) == 0
    (path,) = (tmp_path / "pdn").glob("*.pdn")
    (record,) = read_pdn(path)
    assert record.result == "0-2" and "forfeits" in record.termination
    both_read(path)  # a forfeit, as pydraughts reads it


def test_vanished_engine_forfeits_and_the_match_goes_on(
    tmp_path: Path, started: list[Cli | Proc]
) -> None:
    match, _, _ = _vanishing_match(tmp_path, started, "continue")
    match.out.expect("game 1: 0-2 (White dxserial 0.1.0 (A) forfeits: link lost", timeout=20)
    line = match.out.expect("game 2: 2-0", timeout=20)
    assert "Black dxserial 0.1.0 (A) forfeits: cannot reach it" in line
    assert match.wait(30) == 0
    match.out.expect("results after 2 game(s)")
    rows = [match.out.expect("  ") for _ in range(3)][1:]
    assert rows[0].split()[1:7] == ["dxserial", "0.1.0", "0", "0", "2", "0"]
    assert rows[1].split()[1:7] == ["dxserial", "0.1.0", "2", "0", "0", "0"]
    assert len(list((tmp_path / "pdn").glob("*.pdn"))) == 2


def test_progress_plain_and_live() -> None:
    out: list[str] = []
    plain = TerminalProgress(out.append, live=False)
    plain.update("game 1/2: move 3")
    plain.line("game 1: 2-0 (x)")
    assert out == ["game 1: 2-0 (x)\n"]
    out.clear()
    live = TerminalProgress(out.append, live=True)
    live.update("game 1/2: move 3")
    live.line("game 1: 2-0 (x)")
    live.clear()
    assert "".join(out) == (
        "\r\x1b[Kgame 1/2: move 3\r\x1b[Kgame 1: 2-0 (x)\n\r\x1b[Kgame 1/2: move 3\r\x1b[K"
    )


def test_results_table() -> None:
    a = Standing("A", "Scan 2.0", "tcp://127.0.0.1:27531", wins=2, draws=1, losses=0)
    b = Standing("B", "Moby Dam", "/dev/ttyUSB0", wins=0, draws=1, losses=2)
    rows = results_table([a, b], 3)
    assert rows[0] == "results after 3 game(s); scoring: win 2, draw 1, loss 0"
    assert rows[2].split() == [
        "A",
        "Scan",
        "2.0",
        "2",
        "1",
        "0",
        "0",
        "5/6",
        "(tcp://127.0.0.1:27531)",
    ]
    assert rows[3].split()[-2:] == ["1/6", "(/dev/ttyUSB0)"]
