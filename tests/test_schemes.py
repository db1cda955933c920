"""One answer for a mistyped ``SCHEME://`` on every command, listing the real choices."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dxserial.engine.endpoint import EndpointKind, parse_engine_endpoint
from dxserial.errors import ConfigError
from dxserial.transports.dosbox import SCHEMES as DOSBOX_SCHEMES
from dxserial.transports.schemes import SCHEMES, choices, lookup

ENDPOINT_CHOICES = (
    "use one of: tcp://, listen://, socket://, dosbox://, dosbox-listen://, rfc2217://, hwgrep:// "
    "or a device path"
)


@pytest.mark.parametrize(
    ("argv", "offer"),
    [
        (["engine", "tcpp://127.0.0.1:27531", "--role", "follower"], ENDPOINT_CHOICES),
        (["match", "tcpp://127.0.0.1:1", "tcp://127.0.0.1:2"], ENDPOINT_CHOICES),
        (["bridge", "tcpp://127.0.0.1:1"], "use one of: socket://, dosbox://, dosbox-listen://, rfc2217://, hwgrep:// or a device path"),
        (["selftest", "tcpp://127.0.0.1:1"], "use one of: socket://"),
    ],
)
def test_unknown_scheme_names_it_and_lists_the_choices(argv: list[str], offer: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dxserial", *argv],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stdout == ""  # failed before any "ready" line
    (line,) = result.stderr.splitlines()
    assert line.startswith("dxserial: error: unknown scheme 'tcpp://'")
    assert offer in line


def test_every_scheme_in_the_table_is_accepted_where_it_belongs() -> None:
    for scheme in SCHEMES:
        assert lookup(f"{scheme.name.upper()}://h:1", endpoints=True) == scheme
        if not scheme.serial:
            with pytest.raises(ConfigError, match="is an engine endpoint, not a serial port"):
                lookup(f"{scheme.name}://h:1", endpoints=False)
    assert lookup("/dev/ttyUSB0", endpoints=False) is None
    assert set(DOSBOX_SCHEMES) == {"dosbox", "dosbox-listen"}
    assert choices(endpoints=True) in ENDPOINT_CHOICES


def test_endpoint_kinds_come_from_the_table() -> None:
    assert parse_engine_endpoint("tcp://127.0.0.1:9").kind is EndpointKind.TCP
    assert parse_engine_endpoint("listen://127.0.0.1:0").kind is EndpointKind.LISTEN
    assert parse_engine_endpoint("dosbox://127.0.0.1:5555").kind is EndpointKind.SERIAL
    assert parse_engine_endpoint("/dev/ttyUSB0").kind is EndpointKind.SERIAL
    assert parse_engine_endpoint("rfc2217://10.0.0.2:7000").kind is EndpointKind.SERIAL
