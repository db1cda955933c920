"""A flood of one kind of warning is summarised, not written line by line."""

from __future__ import annotations

import logging

import pytest

from dxserial.bridge import FloodGuard


def test_burst_then_counted_then_summarised(caplog: pytest.LogCaptureFixture) -> None:
    guard = FloodGuard(burst=3, window=10.0)
    shown = [guard.allow("dialogue tcp->serial", t) for t in range(6)]
    assert shown == [True, True, True, False, False, False]
    assert guard.allow("invalid serial->tcp", 5.0)  # another kind has its own budget
    with caplog.at_level(logging.WARNING, logger="dxserial.bridge"):
        assert guard.allow("dialogue tcp->serial", 10.0)  # a new window
    assert "3 more 'dialogue tcp->serial' warnings" in caplog.text


def test_drain_reports_what_is_still_hidden() -> None:
    guard = FloodGuard(burst=1, window=60.0)
    for t in range(4):
        guard.allow("duplicate serial->tcp", float(t))
    assert guard.drain(5.0) == [("duplicate serial->tcp", 3)]
    assert guard.drain(6.0) == []
