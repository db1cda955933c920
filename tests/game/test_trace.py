"""The trace file: new ones are private; an existing readable one is kept but named once."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from dxserial.game.trace import TraceWriter, read_trace


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_trace_is_readable_by_its_owner_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dxserial.game.trace")
    path = tmp_path / "trace.jsonl"
    writer = TraceWriter(path)
    writer.event("hello")
    writer.close()
    assert _mode(path) == 0o600
    assert writer.exposure is None and not caplog.records


@pytest.mark.parametrize(("mode", "who"), [(0o644, "others"), (0o640, "its group")])
def test_an_existing_readable_trace_is_kept_and_named_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, mode: int, who: str
) -> None:
    caplog.set_level(logging.INFO, logger="dxserial.game.trace")
    path = tmp_path / "trace.jsonl"
    path.write_text('{"kind":"event","text":"old"}\n')
    os.chmod(path, mode)
    writer = TraceWriter(path)
    writer.event("new")
    writer.close()
    assert _mode(path) == mode  # the owner chose it; we do not change it behind their back
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"trace file {path} is readable by {who} (mode {mode:04o}): it holds every message; "
        f"chmod 600 {path} if that is not intended"
    ]
    assert [r["text"] for r in read_trace(path)] == ["old", "new"]  # appended, not replaced
