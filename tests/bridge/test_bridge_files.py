"""Trace and PDN files are written by a thread of their own: a slow disk never holds the
line up, and what it cannot keep up with is counted in the trace, not silently lost."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.bridge.files import FileWriter
from dxserial.game.record import GameRecord
from dxserial.game.trace import TraceWriter
from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.process import wait_until
from dxserial.testing.rig import RigFactory

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


class SlowTrace(TraceWriter):
    """A trace file on a disk that stalls until the test lets it go."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.stalled = threading.Event()
        self.release = threading.Event()

    def write_lines(self, lines: list[str]) -> None:
        self.stalled.set()
        self.release.wait(10)
        super().write_lines(lines)


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_stalled_disk_never_blocks_and_the_gap_is_written_down(tmp_path: Path) -> None:
    trace = SlowTrace(tmp_path / "trace.jsonl")
    writer = FileWriter(trace, None, max_lines=100)
    writer.trace({"kind": "message", "n": 0})
    assert trace.stalled.wait(10)  # the thread is stuck in the disk with line 0
    for n in range(1, 251):  # the event loop goes on: none of these calls waits
        writer.trace({"kind": "message", "n": n})
    trace.release.set()
    writer.close()
    got = records(tmp_path / "trace.jsonl")
    kept = [r["n"] for r in got if r["kind"] == "message"]
    assert kept == list(range(0, 101))  # line 0, then the 100 that fitted in memory
    gap = [r for r in got if r["kind"] == "trace-gap"]
    assert len(gap) == 1 and gap[0]["skipped"] == 150


def test_everything_queued_is_written_before_close_returns(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path / "trace.jsonl")
    writer = FileWriter(trace, None)
    for n in range(1000):
        writer.trace({"kind": "message", "n": n})
    writer.close()
    assert [r["n"] for r in records(tmp_path / "trace.jsonl")] == list(range(1000))


def test_a_killed_bridge_leaves_a_trace_that_replays(rig_factory: RigFactory) -> None:
    rig = rig_factory()
    req = f"R01{'Probe'.ljust(32)}Z005075A".encode()
    acc = f"A{'Other'.ljust(32)}0".encode()
    with NulModemPeer(rig.peer_path, seed=4) as peer, DxpClient("127.0.0.1", rig.port) as client:
        peer.send(req)
        assert client.expect() == req
        client.send(acc)
        assert peer.expect() == acc
        peer.send(b"M0000322800")
        assert client.expect() == b"M0000322800"

        def written() -> bool:
            text = rig.trace_path.read_text()
            return text.count('"action":"delivered"') == 3

        wait_until(written, what="the writer thread to catch up")
        rig.bridge.proc.send_signal(signal.SIGKILL)
        rig.bridge.wait(10)
    out = run_in_process("replay", rig.trace_path)
    assert out.returncode == 0, out.stderr
    assert "32-28" in out.stdout


def test_a_client_ending_games_in_a_loop_cannot_fill_the_disk(tmp_path: Path) -> None:
    writer = FileWriter(None, tmp_path, max_records_per_minute=3)
    for n in range(5):
        writer.record(GameRecord(white="a", black="b", game_number=n + 1))
    writer.close()
    assert len(list(tmp_path.glob("*.pdn"))) == 3
