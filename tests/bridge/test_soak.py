"""Short form of the soak run (bench/soak.py): built-in engines play a few short games
through the bridge over NULMODEM on an emulated 115200-baud line, the bridge writing PDN.

Every game record must replay legally from its start position, its result must agree with
the final position and with both engines, nothing may be lost or refused on the way, and
the bridge must not keep file descriptors from one game to the next.  `python3
bench/soak.py --games 300` is the long form.
"""

from __future__ import annotations

import pytest
import soak  # bench/soak.py (bench/ is on pytest's pythonpath)

pytestmark = pytest.mark.e2e  # the soak runs dxserial vpair and the bridge as processes


def test_short_soak_records_replay_legally_and_fds_stay_flat() -> None:
    result = soak.soak(5, moves=10, baud=115200, depths=(1, 3), every=1, timeout=90.0)
    summary = soak.table(result)
    assert not result.problems, summary
    assert result.recorded == 5, summary
    assert result.replayed_legally == 5, summary
    assert result.consistent == 5, summary
    assert all(c.plies == 20 and c.result == "1-1" for c in result.checks), summary
    assert result.exit_codes == {"initiator": 0, "follower": 0}, summary
    counters = result.counters
    assert counters["serial->tcp"] == counters["tcp->serial"] == 5 * 12, summary
    assert counters["lost"] == counters["invalid"] == counters["violations"] == 0, summary
    assert len(result.session) >= 4, summary  # a sample after games 1..4 at least
    assert result.fd_growth <= 0, summary
