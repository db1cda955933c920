"""Fuzz targets for the sans-I/O core on a short budget (the whole file takes seconds):
only dxserial's own errors may come out.

The targets live in :mod:`dxserial.testing.fuzz`, where ``python3 bench/fuzz.py`` finds
them too for its long runs; here each runs its ``examples``, and the reproducers of what
they found stay pinned.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from dxserial.errors import MessageError
from dxserial.protocol.messages import parse
from dxserial.protocol.nulmodem import MessageReceived, NulModemLink
from dxserial.testing.fuzz import KNOWN_BUGS, TARGETS
from dxserial.testing.fuzz.nulmodem import check_channel, received, run_channel

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

test_fuzz_parser = TARGETS["parser"].short_test()
test_fuzz_framer = TARGETS["framer"].short_test()
test_fuzz_nulmodem = TARGETS["nulmodem"].short_test()
test_fuzz_nulmodem_channel = TARGETS["nulmodem-channel"].short_test()
test_fuzz_dialogue = TARGETS["dialogue"].short_test()


def test_every_target_runs_here() -> None:
    """A target added to the registry without a test line above would never run in CI."""
    here = {name for name in globals() if name.startswith("test_fuzz_")}
    assert here == {f"test_fuzz_{name.replace('-', '_')}" for name in TARGETS}


def test_known_bugs_are_pinned_here() -> None:
    """bench/fuzz.py reports KNOWN_BUGS; each must be a strict xfail test of this file."""
    pinned = {name for name in globals() if name.startswith("test_known_bug_")}
    assert pinned == set(KNOWN_BUGS)


def test_the_harness_needs_no_test_extras() -> None:
    """dxserial.testing (all but its fuzz targets) imports neither hypothesis nor pytest, so
    the bench and an installed package run it without the test extras."""
    code = (
        "import sys\n"
        "import dxserial.cli, dxserial.testing.process, dxserial.testing.fdio\n"
        "import dxserial.testing.peers, dxserial.testing.rig, dxserial.testing.lines\n"
        "import dxserial.testing.ser2net, dxserial.testing.browser\n"
        "print(sorted({'hypothesis', 'pytest'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("minutes", [b"00.", b"1.0", b".25"])
def test_lenient_minutes_that_cannot_be_written_back_are_refused(minutes: bytes) -> None:
    """Found by this fuzzer: such minutes used to parse but encode to other bytes."""
    data = b"R01Scan 2.0                        Z" + minutes + b"075A"
    with pytest.raises(MessageError, match="minutes"):
        parse(data, strict=False)


def test_slow_long_message_is_not_cut_off() -> None:
    link = NulModemLink(timeout=0.5)
    frame = b"\x02" + b"C" * 127 + b"\x03"
    for i, b in enumerate(frame):  # one character per 20 ms: 1200 baud plus a little
        link.receive_data(bytes([b]), i * 0.02)
        assert link.data_to_send() == bytes([b]), f"byte {i} not echoed"
    assert MessageReceived(b"C" * 127) in link.events()


def test_late_echoes_do_not_go_round() -> None:
    """After a collision, a line that stalls longer than the echo timeout brings back late
    echoes; each end used to echo the other's, carrying both messages round for minutes
    and handing each end its own message (A received b'A0' dozens of times)."""
    config = {
        "baud": 1200, "start": 0x80, "end": 0x81, "timeout": 3.2519256332124136,
        "backoff": 0.05, "learn_start": False, "latency": 0.0,
        "faults": (0.0, 0.0, 0.23826543196671474), "stall": 1.3227741317242476, "seed": 98,
    }
    log, settled = run_channel(config, [b"A0"], [b"B0"], [0.0] * 10)
    assert settled
    assert b"A0" not in received(log, "A") and b"B0" not in received(log, "B")
    check_channel(log, [b"A0"], [b"B0"])
    # the ring is cut at once: each end gets the other's message once, not again and again
    assert received(log, "A") == [b"B0"] and received(log, "B") == [b"A0"]




def test_a_strictly_valid_name_padded_with_zeros_is_read_leniently_as_a_dialect() -> None:
    # Found by the parser target: 28 bytes and '0000' are a 32-byte name strictly, and a
    # name padded with '0' leniently; both readings are kept, the lenient one names it.
    TARGETS["parser"].body(b"A" + b"\x01" * 28 + b"00000")
    lenient = parse(b"A" + b"Kingsrow" + b"0" * 24 + b"0", strict=False)
    assert lenient.name == "Kingsrow" and any("padded with '0'" in w for w in lenient.warnings)
    assert parse(b"A" + b"Kingsrow" + b"0" * 24 + b"0").name == "Kingsrow" + "0" * 24
