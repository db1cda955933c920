"""Short form of the fault suite (bench/faults.py): the real bridge on a bad line and with
awkward TCP peers, every message counted.

Each test runs `dxserial vpair` and `dxserial bridge` as processes, a NULMODEM (or NUL
frame) engine on the other end of the cable and DXP clients over TCP, streams distinct
CHATs both ways, and checks what arrived: everything once on TCP; everything once at the
serial engine after it drops a NULMODEM repeat of the message right before (as a real
engine does); nothing lost unless the bridge said so; the bridge's memory bounded where
a stalled peer would make it grow.  No speed is asserted.  `python3 bench/faults.py` runs
the long form (more messages, every rate).
"""

from __future__ import annotations

import faults  # bench/faults.py (bench/ is on pytest's pythonpath)
import pytest
from faults import Row

#: The bridge's RSS may grow this much at most while a peer stalls: far below what
#: buffering the stalled messages in the bridge would take.
MEMORY_BOUND_MIB = 8.0


def by_direction(rows: list[Row]) -> dict[str, Row]:
    return {row.direction: row for row in rows}


def assert_all_once(row: Row, *, corruption: bool = False) -> None:
    """Every message arrived exactly once, nothing lost, nothing twice.

    On a corrupting line a character garbled on its way *and* in its echo is invisible to
    the echo handshake (NULMODEM has no checksum): the message then arrives garbled
    instead.  Such a message is told apart (same length, one character different) and is
    the only loss allowed.

    No duplicate may reach either engine after its own dedup: NULMODEM repeats of a CHAT
    are dropped by the bridge too (the two chat_repeat tests at the end pin the cases).
    """
    what = f"{row.scenario}, {row.direction}: {row}"
    assert row.extra.get("complete", True), f"streams did not finish: {what}"
    assert row.twice == 0 and row.missed == 0, f"delivered twice: {what}"
    assert row.reported == 0, f"the bridge reported losses: {what}"
    if corruption:
        assert row.lost == row.replaced, f"lost: {what}"
        assert row.once + row.twice == row.sent - row.replaced, what
    else:
        assert row.lost == 0, f"lost: {what}"
        assert row.once + row.twice == row.sent, what
        assert row.garbled == 0, f"garbled: {what}"


@pytest.mark.parametrize(("rate", "messages", "longest"), [(0.001, 30, 24), (0.01, 10, 8)])
def test_drop_and_corrupt(rate: float, messages: int, longest: int) -> None:
    """Drop and corrupt, each at ``rate`` per byte and direction (5 %: long form only)."""
    rows = by_direction(faults.line_faults(messages, drop=rate, corrupt=rate, seed=21,
                                           longest=longest, stall=30.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row, corruption=True)
    if rate >= 0.01:  # the line really was bad (at 0.1 % a short run may see no fault)
        assert rows["serial->tcp"].extra["dropped"] > 0
        assert rows["serial->tcp"].extra["corrupted"] > 0


def test_serial_end_unplugged_and_replugged_repeatedly() -> None:
    rows = by_direction(faults.unplug_replug(150, cycles=3, down=0.5, every=1.0, seed=22,
                                             stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    assert rows["serial->tcp"].extra["cycles"] == 3
    assert rows["serial->tcp"].extra["reopens"] == 3


def test_tcp_clients_hang_up_mid_message() -> None:
    rows = by_direction(faults.tcp_hangups(60, clients=3, seed=23, stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    assert rows["tcp->serial"].extra["cut_reported"] == 3  # each cut-off message is logged


def test_tcp_clients_reset_mid_message() -> None:
    """A reset connection loses what the bridge already wrote into it (TCP has no receipt);
    what the clients sent, and everything after, still arrives once."""
    rows = by_direction(faults.tcp_hangups(60, clients=3, abrupt=True, seed=24,
                                           stall=20.0, limit=120.0))
    assert_all_once(rows["tcp->serial"])
    s2t = rows["serial->tcp"]
    assert s2t.extra["complete"]
    assert s2t.twice == s2t.missed and s2t.garbled == 0
    assert s2t.once + s2t.twice + s2t.lost == s2t.sent
    # the cut-off message is reported when the bridge read it before the reset
    assert rows["tcp->serial"].extra["cut_reported"] <= 3


def test_tcp_client_silent_for_long() -> None:
    """'Long' here: 4 s, many NULMODEM echo timeouts (0.3 s) and bridge reopen intervals."""
    rows = by_direction(faults.idle_client(20, idle=4.0, seed=25, stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    assert rows["serial->tcp"].extra["kept"], "the bridge dropped a silent client"


def test_tcp_client_stops_reading_nulmodem_line() -> None:
    rows = by_direction(faults.slow_reader(200, seed=26, settle=1.5, stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    assert rows["serial->tcp"].extra["stalled_growth_mib"] < MEMORY_BOUND_MIB
    assert rows["serial->tcp"].growth_mib < MEMORY_BOUND_MIB


def test_tcp_client_stops_reading_backpressure_reaches_the_serial_engine() -> None:
    """A NUL-frame line is fast enough to fill the stalled client's socket quickly: the
    bridge must then stop taking messages off the line (the engine's writes wait) and stay
    small.  (The client announces Ethernet's segment size: see dxserial.testing.peers.DxpClient.)"""
    n = 8000
    rows = by_direction(faults.slow_reader(n, length=120, link="nul", seed=27, settle=1.5,
                                           stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    s2t = rows["serial->tcp"]
    assert s2t.extra["taken"] < n, "the bridge took everything: no backpressure"
    assert s2t.extra["stalled_growth_mib"] < MEMORY_BOUND_MIB
    assert s2t.growth_mib < MEMORY_BOUND_MIB


def test_serial_engine_hangs_backpressure_reaches_the_tcp_client() -> None:
    n = 8000
    rows = by_direction(faults.serial_hangs(n, length=120, link="nul", seed=28, settle=1.5,
                                            stall=20.0, limit=120.0))
    for row in rows.values():
        assert_all_once(row)
    t2s = rows["tcp->serial"]
    assert t2s.extra["taken"] < n, "the bridge read everything: no backpressure"
    assert t2s.extra["stalled_growth_mib"] < MEMORY_BOUND_MIB


def test_chat_repeat_right_after_is_dropped() -> None:
    (row,) = faults.chat_repeat(0.5, seed=29)
    assert row.once == 1 and row.twice == 0
    assert row.repeats == 1


def test_chat_repeat_after_several_failed_attempts_is_dropped() -> None:
    """Failed attempts on a noisy line (or a pulled cable) can delay a repeat for long."""
    (row,) = faults.chat_repeat(2.0, seed=30)
    assert row.once == 1 and row.twice == 0
    assert row.repeats == 1


def test_chat_repeat_after_a_tcp_message_crossed_is_dropped() -> None:
    s2t, t2s = faults.chat_repeat(0.3, crossed=True, seed=31)
    assert t2s.once == 1, t2s  # the crossing message reached the serial engine
    assert s2t.twice == 0, f"the repeat reached TCP: {s2t}"
