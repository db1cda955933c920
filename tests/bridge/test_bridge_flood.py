"""A flood of one kind of log line is summarised, not written line by line."""

from __future__ import annotations

from dxserial.bridge import FloodGuard


def test_burst_then_counted_then_summarised() -> None:
    guard = FloodGuard(burst=3, window=10.0)
    shown = [guard.allow("dialogue tcp->serial", t)[0] for t in range(6)]
    assert shown == [True, True, True, False, False, False]
    assert guard.allow("invalid serial->tcp", 5.0) == (True, 0)  # another kind, own budget
    # A new window: this line is shown, and the 3 hidden before it are to be summarised.
    assert guard.allow("dialogue tcp->serial", 10.0) == (True, 3)


def test_drain_reports_what_is_still_hidden() -> None:
    guard = FloodGuard(burst=1, window=60.0)
    for t in range(4):
        guard.allow("duplicate serial->tcp", float(t))
    assert guard.drain() == [("duplicate serial->tcp", 3)]
    assert guard.drain() == []
