"""A bridge rig for end-to-end tests: `dxserial vpair` + `dxserial bridge` as real processes."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers import Cli, LineReader


@dataclass
class Rig:
    serial_path: str
    peer_path: str
    port: int
    bridge: subprocess.Popen[str]
    out: LineReader
    log_path: Path
    trace_path: Path
    vpair: Cli

    def log(self) -> str:
        return self.log_path.read_text()

    def trace(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.trace_path.read_text().splitlines()]


def start_vpair(tmp_path: Path, *extra: str) -> tuple[Cli, str, str]:
    a, b = str(tmp_path / "ttyA"), str(tmp_path / "ttyB")
    vpair = Cli("vpair", a, b, *extra)
    try:
        vpair.out.expect("vpair ready", timeout=20)
    except BaseException:
        vpair.__exit__(None, None, None)
        raise
    return vpair, a, b


def start_bridge(tmp_path: Path, serial: str, *extra: str) -> tuple[subprocess.Popen[str], LineReader, int]:
    log = (tmp_path / "bridge.log").open("a")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dxserial", "bridge", serial, "--listen", "127.0.0.1:0",
         "--echo-timeout", "0.5", "--max-attempts", "1000",
         "--trace", str(tmp_path / "trace.jsonl"), "-vv", *extra],
        stdout=subprocess.PIPE, stderr=log, text=True,
    )
    assert proc.stdout is not None
    out = LineReader(proc.stdout)
    try:
        ready = out.expect("bridge ready", timeout=20)
        match = re.search(r"listening on 127\.0\.0\.1:(\d+)", ready)
        assert match, ready
    except BaseException:
        proc.kill()  # never leave a bridge running behind a failed test
        proc.wait()
        raise
    return proc, out, int(match.group(1))


RigFactory = Callable[..., Rig]


@contextmanager
def rig_factory_for(tmp_path: Path) -> Iterator[RigFactory]:
    """Start rigs on demand; every process is gone when the block ends."""
    started: list[Rig] = []

    def make(vpair_args: tuple[str, ...] = (), bridge_args: tuple[str, ...] = ()) -> Rig:
        vpair, a, b = start_vpair(tmp_path, *vpair_args)
        try:
            proc, out, port = start_bridge(tmp_path, a, *bridge_args)
        except BaseException:
            vpair.stop()
            vpair.__exit__(None, None, None)
            raise
        rig = Rig(a, b, port, proc, out, tmp_path / "bridge.log", tmp_path / "trace.jsonl", vpair)
        started.append(rig)
        return rig

    try:
        yield make
    finally:
        for rig in started:
            stop_rig(rig)


def stop_rig(rig: Rig) -> None:
    if rig.bridge.poll() is None:
        rig.bridge.send_signal(signal.SIGTERM)
        try:
            rig.bridge.wait(10)
        except subprocess.TimeoutExpired:
            rig.bridge.kill()
            rig.bridge.wait()
    rig.out.join()
    if rig.bridge.stdout is not None:
        rig.bridge.stdout.close()
    rig.vpair.stop()
    rig.vpair.__exit__(None, None, None)


def start_serial_engine(tmp_path: Path, seed: int, *extra: str) -> tuple[Cli, Cli, str]:
    """`dxserial vpair` and the built-in engine (follower, NULMODEM) on its end B.

    Returns the vpair, the engine and end A, where a bridge or a match opens the line.
    The caller stops both processes.
    """
    vpair, a, b = start_vpair(tmp_path)
    engine = Cli(
        "engine", b, "--role", "follower", "--link", "nulmodem", "--seed", str(seed),
        "--echo-timeout", "0.5", "--max-attempts", "1000", *extra,
    )
    engine.out.expect("engine ready", timeout=20)
    return vpair, engine, a
