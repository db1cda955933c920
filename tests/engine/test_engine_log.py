"""An engine's log is capped (its tail kept, the cut said at the top) and mode 0600, like
PDN and trace (issue #36, point 9)."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest

from dxserial.transports.child import CappedLog, Child


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_log_past_its_limit_keeps_its_tail_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "eng.log"
    out = CappedLog(path, limit=1000)
    lines = [f"line {n:04d}\n".encode() for n in range(1000)]  # 10 kB through a 1 kB log
    cuts = sum(out.write(line) for line in lines)
    out.close()
    text = path.read_bytes()
    assert cuts > 1 and len(text) <= 1000
    head, *kept = text.decode().splitlines()
    assert head.startswith("--- dxserial: this log passed 1000 bytes: the first ")
    assert kept[-1] == "line 0999" and all(k.startswith("line ") for k in kept)
    dropped = int(head.split("the first ")[1].split(" ")[0])
    assert dropped + sum(len(k) + 1 for k in kept) == 10 * 1000  # every byte: kept or counted
    assert mode(path) == 0o600


def test_an_older_log_is_made_0600_and_cut_if_too_long(tmp_path: Path) -> None:
    path = tmp_path / "eng.log"
    path.write_text("old\n" * 1000)
    path.chmod(0o644)
    CappedLog(path, limit=1000).close()
    assert mode(path) == 0o600 and path.stat().st_size <= 1000
    assert path.read_text().splitlines()[-1] == "old"


@pytest.mark.e2e
async def test_a_chatty_engine_s_log_stays_under_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "eng.log"
    chatty = "import sys\nfor n in range(200000): print(f'thinking {n}')\nprint('last words')"
    child = await Child.start([sys.executable, "-c", chatty], cwd=tmp_path, env=dict(os.environ),
                              log=path, log_limit=64 * 1024)
    assert await asyncio.wait_for(child.wait(), 60) == 0
    text = path.read_text()
    assert len(text.encode()) <= 64 * 1024 and mode(path) == 0o600
    assert text.startswith("--- dxserial: this log passed 65536 bytes: the first ")
    assert text.splitlines()[-1] == "last words" and child.log_tail(1) == "last words"
    await child.stop()
