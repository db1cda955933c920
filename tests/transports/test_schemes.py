"""One answer for a mistyped ``SCHEME://`` on every command, listing the real choices."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.errors import ConfigError
from dxserial.transports.dosbox import SCHEMES as DOSBOX_SCHEMES
from dxserial.transports.endpoints import EndpointKind, parse_engine_endpoint
from dxserial.transports.schemes import SCHEMES, address, choices, lookup

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
    result = run_in_process(*argv)
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


@pytest.mark.parametrize("typo", ["tcp:/127.0.0.1:27531", "tcp:127.0.0.1:27531", "127.0.0.1:27531"])
def test_a_url_typo_is_not_taken_for_a_device(typo: str) -> None:
    """Issue 24: these said 'cannot open ...: no such device — check ... plugged in'."""
    result = run_in_process("engine", typo, "--role", "follower")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"dxserial: error: {typo}: not a device; did you mean tcp://127.0.0.1:27531?"
    ]


def test_typos_everywhere_a_port_or_endpoint_is_read() -> None:
    with pytest.raises(ConfigError, match=r"did you mean socket://h:5555 or rfc2217://h:5555 "
                       r"\(a serial port over TCP; a TCP engine goes in --connect h:5555\)\?"):
        lookup("h:5555", endpoints=False)  # a serial port: tcp:// would be refused there
    with pytest.raises(ConfigError, match="'tcp://' is an engine endpoint, not a serial port"):
        lookup("tcp:/h:1", endpoints=False)
    with pytest.raises(ConfigError, match=r"did you mean listen://\[::1\]:0\?"):
        parse_engine_endpoint("listen:[::1]:0")
    with pytest.raises(ConfigError, match=r"did you mean rfc2217://h:1\?"):
        lookup("RFC2217:/h:1", endpoints=False)
    for path in ("/dev/ttyUSB0", "COM3", "/tmp/ttyA", "dev/serial/by-id/usb-FTDI:x"):
        assert lookup(path, endpoints=True) is None


def test_options_taking_host_port_accept_their_own_scheme() -> None:
    assert address("tcp://127.0.0.1:27531", "--connect", ("tcp",)) == "127.0.0.1:27531"
    assert address("listen://0.0.0.0:1", "--listen", ("tcp", "listen")) == "0.0.0.0:1"
    assert address("http://127.0.0.1:8080/", "--web", ("http",)) == "127.0.0.1:8080"
    assert address("[::1]:8080", "--web", ("http",)) == "[::1]:8080"
    with pytest.raises(ConfigError, match=r"--web https://h:1: expected HOST:PORT \(or http://"):
        address("https://h:1", "--web", ("http",))
    with pytest.raises(ConfigError, match=r"--connect listen://h:1: expected HOST:PORT \(or tcp://"):
        address("listen://h:1", "--connect", ("tcp",))
    for typo in ("tcp:/127.0.0.1:27531", "tcp:127.0.0.1:27531"):
        with pytest.raises(ConfigError, match=r"did you mean tcp://127\.0\.0\.1:27531\?"):
            address(typo, "--connect", ("tcp",))
    with pytest.raises(ConfigError, match=r"did you mean http://127\.0\.0\.1:8080\?"):
        address("http:/127.0.0.1:8080", "--web", ("http",))
    assert address("localhost:27531", "--connect", ("tcp",)) == "localhost:27531"


@pytest.mark.e2e  # binds the --web port
def test_bridge_takes_tcp_and_http_urls_for_its_addresses(tmp_path: Path) -> None:
    """These said 'bad address ...: write an IPv6 address in brackets, [::1]:27531'."""
    missing = str(tmp_path / "ttyNope")
    result = run_in_process("bridge", missing, "--connect", "tcp://127.0.0.1:1", "--web", "http://127.0.0.1:0")
    assert result.returncode == 1  # the addresses were taken; the port is what is missing
    assert "bad address" not in result.stderr and "ttyNope" in result.stderr


def test_every_serial_scheme_has_an_opener_that_imports() -> None:
    import inspect

    from dxserial.transports.openers import opener
    from dxserial.transports.schemes import DEVICE_OPENER

    for scheme in SCHEMES:
        assert bool(scheme.opener) == scheme.serial, scheme.name
        if scheme.serial:
            assert inspect.iscoroutinefunction(opener(scheme.opener)), scheme.name
    assert inspect.iscoroutinefunction(opener(DEVICE_OPENER))


@pytest.mark.parametrize("given", ["tcp:127.0.0.1:27531", "tcp://127.0.0.1:27531"])
def test_a_tcp_engine_as_the_bridges_port_is_sent_to_connect_or_listen(given: str) -> None:
    """Issue 38 point 13: socat's `tcp:h:p` as the port is quoted as typed, with the options
    a TCP engine goes in."""
    result = run_in_process("bridge", given)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"dxserial: error: {given}: 'tcp://' is an engine endpoint")
    assert "--connect 127.0.0.1:27531" in line and "--listen 127.0.0.1:27531" in line
