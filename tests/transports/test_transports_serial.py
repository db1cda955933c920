"""Serial links under asyncio on real ptys from VirtualPair (never pyserial's loop://)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import grp
import logging
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from dxserial.errors import ConfigError, PortError
from dxserial.sim.vpair import VirtualPair
from dxserial.transports.base import Port
from dxserial.transports.openers import open_serial
from dxserial.transports.serial import SerialPort, SerialSettings, port_error

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

ALL_BYTES = bytes(range(256))


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[VirtualPair]:
    with VirtualPair(str(tmp_path / "a"), str(tmp_path / "b")) as vp:
        yield vp


@pytest.fixture
async def links(pair: VirtualPair) -> AsyncIterator[tuple[SerialPort, SerialPort]]:
    a = await open_serial(pair.path_a, SerialSettings())
    b = await open_serial(pair.path_b, SerialSettings())
    yield a, b
    await a.close()
    await b.close()


async def read_n(link: Port, n: int, timeout: float = 5.0) -> bytes:
    got = b""
    async with asyncio.timeout(timeout):
        while len(got) < n:
            chunk = await link.read()
            assert chunk, f"end of file after {len(got)} bytes"
            got += chunk
    return got


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"baudrate": 0}, "baud rate must be positive"),
        ({"baudrate": 9600.5}, "whole number"),
        ({"bytesize": 9}, "data bits must be 5, 6, 7 or 8"),
        ({"parity": "X"}, "parity must be N, E, O, M or S"),
        ({"stopbits": 3}, "stop bits must be 1, 1.5 or 2"),
        ({"rtscts": "yes"}, "rtscts must be true or false"),
        ({"dtr": 1}, "dtr must be true, false or unset"),
    ],
)
def test_bad_settings_say_what_is_allowed(kwargs: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError, match=words) as info:
        SerialSettings(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_settings_defaults_are_dxp_9600_8n1() -> None:
    settings = SerialSettings(parity="e")
    assert settings.parity == "E"
    assert str(SerialSettings()) == "9600 8N1"
    assert SerialSettings().exclusive is True


# ---------------------------------------------------------------- data


async def test_every_byte_value_crosses_both_ways(links: tuple[SerialPort, SerialPort]) -> None:
    a, b = links
    assert isinstance(a, Port)
    await a.write(ALL_BYTES)
    assert await read_n(b, 256) == ALL_BYTES
    await b.write(ALL_BYTES[::-1])
    assert await read_n(a, 256) == ALL_BYTES[::-1]


async def test_reads_return_chunks_as_they_come(links: tuple[SerialPort, SerialPort]) -> None:
    a, b = links
    for message in (b"R01", b"\x02A\x03", b"M0012061100"):
        await b.write(message)
        assert await read_n(a, len(message)) == message  # before the next one is written


async def test_a_large_write_waits_for_a_slow_line_without_errors(
    links: tuple[SerialPort, SerialPort], caplog: pytest.LogCaptureFixture
) -> None:
    a, b = links
    data = os.urandom(300_000)  # far more than the pty buffers: the fd must block
    writer = asyncio.create_task(a.write(data))
    assert await read_n(b, len(data), timeout=20) == data
    await writer
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# ---------------------------------------------------------------- unplug / replug


async def test_unplug_fails_a_pending_read_and_replug_works_again(
    pair: VirtualPair, links: tuple[SerialPort, SerialPort]
) -> None:
    a, _ = links
    reading = asyncio.create_task(a.read())
    await asyncio.to_thread(pair.unplug, "a")
    with pytest.raises(PortError, match=r"lost: device disconnected .*unplugged"):
        await asyncio.wait_for(reading, 5)
    assert not os.path.lexists(pair.path_a)
    with pytest.raises(PortError, match="lost"):
        await a.write(b"x")
    with pytest.raises(PortError, match="no such device"):
        await open_serial(pair.path_a)

    await asyncio.to_thread(pair.replug, "a")
    again = await open_serial(pair.path_a)
    try:
        _, b = links
        await b.write(b"back again")
        assert await read_n(again, 10) == b"back again"
    finally:
        await again.close()


async def test_unplug_fails_a_write_too(
    pair: VirtualPair, links: tuple[SerialPort, SerialPort]
) -> None:
    a, _ = links
    await asyncio.to_thread(pair.unplug, "a")
    with pytest.raises(PortError):
        async with asyncio.timeout(5):
            while True:  # the first write may land before the hang-up is noticed
                await a.write(b"x")


async def test_read_after_close_is_end_of_file(links: tuple[SerialPort, SerialPort]) -> None:
    a, _ = links
    await a.close()
    await a.close()
    assert await a.read() == b""
    with pytest.raises(PortError, match="closed"):
        await a.write(b"x")


# ---------------------------------------------------------------- open errors


async def test_missing_port(tmp_path: Path) -> None:
    with pytest.raises(PortError, match="no such device") as info:
        await open_serial(str(tmp_path / "ttyUSB9"))
    assert info.value.errno == errno.ENOENT
    assert isinstance(info.value, OSError)


async def test_busy_port_with_exclusive_lock(pair: VirtualPair) -> None:
    first = await open_serial(pair.path_a, SerialSettings(exclusive=True))
    try:
        with pytest.raises(PortError, match="busy") as info:
            await open_serial(pair.path_a, SerialSettings(exclusive=True))
        assert "\n" not in str(info.value)
    finally:
        await first.close()
    second = await open_serial(pair.path_a, SerialSettings(exclusive=True))
    await second.close()


def test_permission_error_names_the_devices_own_group(tmp_path: Path) -> None:
    device = tmp_path / "ttyUSB0"
    device.write_text("")
    os.chmod(device, 0o660)
    with contextlib.suppress(KeyError, PermissionError):  # a group other than root's
        os.chown(device, -1, grp.getgrnam("dialout").gr_gid)
    if device.stat().st_gid == 0:
        pytest.skip("cannot give the file a group other than root here")
    group = grp.getgrgid(device.stat().st_gid).gr_name
    error = port_error(str(device), OSError(errno.EACCES, "Permission denied"))
    text = str(error)
    assert text.startswith(f"cannot open {device}: permission denied")
    assert f"sudo usermod -aG {group} $USER" in text
    assert "\n" not in text
    assert error.errno == errno.EACCES


@pytest.mark.parametrize(
    ("code", "words"),
    [(errno.EBUSY, "busy"), (errno.ENXIO, "not present"), (errno.EIO, "unplugged")],
)
def test_other_open_errors_are_one_line(code: int, words: str) -> None:
    error = port_error("/dev/ttyS0", OSError(code, os.strerror(code)))
    assert words in str(error) and "\n" not in str(error)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
async def test_real_permission_denied(pair: VirtualPair) -> None:
    device = pair.device("a")
    assert device is not None
    os.chmod(device, 0)
    with pytest.raises(PortError, match="permission denied"):
        await open_serial(pair.path_a)


async def test_not_a_serial_device(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(PortError, match="not a serial device"):
        await open_serial(str(tmp_path / "file"))
    with pytest.raises(PortError, match="not a serial device"):
        await open_serial(str(tmp_path))


@pytest.mark.parametrize("url", ["loop://", "spy:///dev/ttyS0"])
async def test_urls_without_a_file_descriptor_are_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="no file descriptor"):
        await open_serial(url)


async def test_modem_lines_on_a_pty_are_skipped(
    pair: VirtualPair, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="dxserial.transports.serial")
    link = await open_serial(pair.path_a, SerialSettings(dtr=False, rts=True))
    try:
        link.set_dtr(True)
        await link.send_break(0.01)
        assert any("DTR not supported" in r.getMessage() for r in caplog.records)
    finally:
        await link.close()


# ---------------------------------------------------------------- socket:// (DOSBox)


async def test_socket_url_talks_to_a_tcp_server() -> None:
    received: asyncio.Queue[bytes] = asyncio.Queue()

    async def dosbox(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"\x02R\x03")
        await writer.drain()
        await received.put(await reader.readexactly(3))
        writer.close()

    server = await asyncio.start_server(dosbox, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        link = await open_serial(f"socket://127.0.0.1:{port}")
        try:
            sock = link.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            assert await read_n(link, 3) == b"\x02R\x03"
            await link.write(b"\x02R\x03")
            assert await asyncio.wait_for(received.get(), 5) == b"\x02R\x03"
            with pytest.raises(PortError, match="closed the connection"):
                await asyncio.wait_for(link.read(), 5)  # DOSBox went away
        finally:
            await link.close()
    finally:
        server.close()
        await server.wait_closed()


async def test_socket_url_refused_and_malformed() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    with pytest.raises(PortError, match="connection refused"):
        await open_serial(f"socket://127.0.0.1:{port}")
    with pytest.raises(ConfigError, match="socket://HOST:PORT"):
        await open_serial("socket://127.0.0.1")
