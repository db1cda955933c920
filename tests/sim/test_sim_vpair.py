"""VirtualPair in-process: real ptys, real bytes, real clocks (lower bounds only)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dxserial.errors import ConfigError, PortError
from dxserial.sim.lane import BITS_PER_CHAR, DirectionStats
from dxserial.sim.vpair import VirtualPair
from dxserial.testing.fdio import open_raw, read_available, read_exactly, write_all
from dxserial.testing.process import wait_until

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

ALL_BYTES = bytes(range(256))


@pytest.fixture
def paths(tmp_path: Path) -> tuple[str, str]:
    return str(tmp_path / "a"), str(tmp_path / "b")


@pytest.fixture
def pair(paths: tuple[str, str]) -> Iterator[VirtualPair]:
    with VirtualPair(*paths) as vp:
        yield vp


@pytest.fixture
def ends(pair: VirtualPair) -> Iterator[tuple[int, int]]:
    fd_a, fd_b = open_raw(pair.path_a), open_raw(pair.path_b)
    yield fd_a, fd_b
    os.close(fd_a)
    os.close(fd_b)


def test_links_point_at_ptys_and_go_away_on_close(paths: tuple[str, str]) -> None:
    with VirtualPair(*paths) as vp:
        assert os.readlink(paths[0]) == vp.device("a")
        assert os.readlink(paths[1]) == vp.device("b")
        assert vp.device("a") != vp.device("b")
        assert str(vp.device("a")).startswith("/dev/pts/")
    assert not os.path.lexists(paths[0])
    assert not os.path.lexists(paths[1])


def test_every_byte_value_crosses_both_ways_unchanged(
    pair: VirtualPair, ends: tuple[int, int]
) -> None:
    fd_a, fd_b = ends
    write_all(fd_a, ALL_BYTES * 4)
    assert read_exactly(fd_b, 1024) == ALL_BYTES * 4
    write_all(fd_b, ALL_BYTES[::-1] * 4)
    assert read_exactly(fd_a, 1024) == ALL_BYTES[::-1] * 4
    assert pair.stats.a_to_b == DirectionStats(relayed=1024)
    assert pair.stats.b_to_a == DirectionStats(relayed=1024)


def test_nothing_is_echoed_back_to_the_sender(ends: tuple[int, int]) -> None:
    fd_a, fd_b = ends
    write_all(fd_a, b"\r\nM0012061100\x00")
    assert read_exactly(fd_b, 14) == b"\r\nM0012061100\x00"  # no CR/LF translation
    write_all(fd_b, b"x")
    assert read_exactly(fd_a, 1) == b"x"  # the first thing A reads is B's byte


def test_pacing_delays_each_byte_by_a_character_time(paths: tuple[str, str]) -> None:
    baud = 2400
    char_time = BITS_PER_CHAR / baud
    with VirtualPair(*paths, baud=baud) as vp:
        fd_a, fd_b = open_raw(vp.path_a), open_raw(vp.path_b)
        try:
            data = b"R01Scan" * 6  # 42 characters
            start = time.monotonic()
            write_all(fd_a, data)
            first = read_exactly(fd_b, 1)
            first_at = time.monotonic()
            rest = read_exactly(fd_b, len(data) - 1)
            last_at = time.monotonic()
            assert first + rest == data
            assert first_at - start >= char_time
            assert last_at - start >= len(data) * char_time
        finally:
            os.close(fd_a)
            os.close(fd_b)


def test_echo_round_trip_takes_two_character_times(paths: tuple[str, str]) -> None:
    baud = 1200
    char_time = BITS_PER_CHAR / baud
    with VirtualPair(*paths, baud=baud) as vp:
        fd_a, fd_b = open_raw(vp.path_a), open_raw(vp.path_b)
        stop = threading.Event()

        def echo() -> None:  # the NULMODEM receiver: every byte back, unchanged
            while not stop.is_set():
                data = read_available(fd_b)
                if data:
                    write_all(fd_b, data)
                else:
                    time.sleep(0.0005)

        echoer = threading.Thread(target=echo, daemon=True)
        echoer.start()
        try:
            for byte in b"\x02M\x03":
                start = time.monotonic()
                write_all(fd_a, bytes([byte]))
                assert read_exactly(fd_a, 1) == bytes([byte])
                assert time.monotonic() - start >= 2 * char_time
        finally:
            stop.set()
            echoer.join()
            os.close(fd_a)
            os.close(fd_b)


def _run_faults(
    paths: tuple[str, str], seed: int, chunk: int, data: bytes, **faults: float
) -> tuple[DirectionStats, bytes]:
    with VirtualPair(*paths, seed=seed, **faults) as vp:
        fd_a, fd_b = open_raw(vp.path_a), open_raw(vp.path_b)
        try:
            received = bytearray()
            for i in range(0, len(data), chunk):
                write_all(fd_a, data[i : i + chunk])
                received += read_available(fd_b)

            def all_accounted() -> bool:
                received.extend(read_available(fd_b))
                s = vp.stats.a_to_b
                return s.dropped + s.relayed == len(data) and len(received) == s.relayed

            wait_until(all_accounted, what="every byte relayed or dropped")
            return vp.stats.a_to_b, bytes(received)
        finally:
            os.close(fd_a)
            os.close(fd_b)


def test_drop_is_reproducible_with_a_seed_whatever_the_chunking(paths: tuple[str, str]) -> None:
    data = bytes(range(1, 128)) * 80  # 10160 DXP-like characters
    stats1, got1 = _run_faults(paths, 7, 1000, data, drop=0.1)
    stats2, got2 = _run_faults(paths, 7, 127, data, drop=0.1)
    assert stats1 == stats2
    assert got1 == got2
    assert 0.07 * len(data) < stats1.dropped < 0.13 * len(data)
    assert stats1.corrupted == 0
    _, got3 = _run_faults(paths, 8, 1000, data, drop=0.1)
    assert got3 != got1


def test_corrupt_flips_exactly_one_bit(paths: tuple[str, str]) -> None:
    data = bytes(range(256)) * 40
    stats, got = _run_faults(paths, 11, 4096, data, corrupt=0.05)
    assert stats.dropped == 0 and stats.relayed == len(data) == len(got)
    changed = [(a, b) for a, b in zip(data, got, strict=True) if a != b]
    assert len(changed) == stats.corrupted
    assert 0.03 * len(data) < stats.corrupted < 0.07 * len(data)
    assert all((a ^ b).bit_count() == 1 for a, b in changed)
    _, got_again = _run_faults(paths, 11, 1, data[:512], corrupt=0.05)
    assert got_again == got[:512]


def test_unplug_removes_the_link_and_hangs_up_the_holder(
    pair: VirtualPair, ends: tuple[int, int]
) -> None:
    fd_a, fd_b = ends
    pair.unplug("a")
    assert not os.path.lexists(pair.path_a)
    assert not pair.plugged("a") and pair.device("a") is None
    assert os.read(fd_a, 10) == b""  # end of file, at once: the adapter is gone
    with pytest.raises(OSError):
        os.write(fd_a, b"x")
    write_all(fd_b, b"into the void")
    wait_until(lambda: pair.stats.b_to_a.lost == 13, what="bytes counted as lost")
    pair.unplug("a")  # again: nothing to do

    pair.replug("a")
    assert os.path.islink(pair.path_a)
    assert pair.device("a") is not None
    fd_new = open_raw(pair.path_a)
    try:
        write_all(fd_b, b"hello")
        assert read_exactly(fd_new, 5) == b"hello"  # nothing of the lost bytes
        write_all(fd_new, b"back")
        assert read_exactly(fd_b, 4) == b"back"
    finally:
        os.close(fd_new)


def test_bytes_for_an_end_nobody_has_open_wait_for_it(pair: VirtualPair) -> None:
    fd_a = open_raw(pair.path_a)
    try:
        write_all(fd_a, b"early bird")
        wait_until(lambda: pair.stats.a_to_b.relayed == 10, what="bytes relayed")
        fd_b = open_raw(pair.path_b)
        try:
            assert read_exactly(fd_b, 10) == b"early bird"
        finally:
            os.close(fd_b)
    finally:
        os.close(fd_a)


def test_a_slow_reader_holds_the_writer_back_without_loss(
    pair: VirtualPair, ends: tuple[int, int]
) -> None:
    fd_a, fd_b = ends
    data = os.urandom(400_000)  # far more than the kernel and relay buffers together
    writer = threading.Thread(target=write_all, args=(fd_a, data), daemon=True)
    writer.start()
    # B reads nothing yet: once bytes reach B's kernel buffer, every buffer on the way
    # is filling, and the writer cannot finish until B reads.
    wait_until(lambda: pair.stats.a_to_b.relayed >= 4096, what="bytes waiting at B")
    assert writer.is_alive()
    assert read_exactly(fd_b, len(data), timeout=20) == data
    writer.join(5)
    assert not writer.is_alive()


def test_path_in_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        VirtualPair(str(tmp_path / "nope" / "a"), str(tmp_path / "b")).start()
    assert not os.path.lexists(tmp_path / "b")


def test_existing_file_is_refused_but_an_old_pty_link_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("mine")
    with pytest.raises(ConfigError, match="not a link to a pseudo-terminal"):
        VirtualPair(str(tmp_path / "a"), str(tmp_path / "b")).start()
    assert (tmp_path / "a").read_text() == "mine"
    os.symlink("/dev/pts/999", tmp_path / "c")  # left behind by a killed vpair
    with VirtualPair(str(tmp_path / "c"), str(tmp_path / "b")) as vp:
        assert os.readlink(tmp_path / "c") == vp.device("a")


def test_bad_arguments(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with pytest.raises(ConfigError):
        VirtualPair(a, a)
    with pytest.raises(ConfigError):
        VirtualPair(a, b, drop=1.5)
    with pytest.raises(ConfigError):
        VirtualPair(a, b, baud=0)
    with pytest.raises(PortError):
        VirtualPair(a, b).unplug("a")  # not started


def test_random_seed_is_reported(paths: tuple[str, str]) -> None:
    vp = VirtualPair(*paths, drop=0.5)
    assert isinstance(vp.seed, int)


def _set_speed(fd: int, baud: int) -> None:
    """What pyserial does on open: both speeds of the tty set with tcsetattr."""
    import termios

    attrs = termios.tcgetattr(fd)
    attrs[4] = attrs[5] = getattr(termios, f"B{baud}")
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


MESSAGE = b"\x02R01dxserial probe\x03"


def test_ends_at_different_speeds_receive_what_a_uart_would(paths: tuple[str, str]) -> None:
    from dxserial.sim.uart import garble

    with VirtualPair(*paths, baud_a=9600, baud_b=2400) as vp:
        fd_a, fd_b = open_raw(vp.path_a), open_raw(vp.path_b)
        try:
            expected = garble(MESSAGE, 9600, 2400)
            write_all(fd_a, MESSAGE)
            assert read_exactly(fd_b, len(expected)) == expected != MESSAGE
            back = garble(MESSAGE, 2400, 9600)
            write_all(fd_b, MESSAGE)
            assert read_exactly(fd_a, len(back)) == back
            wait_until(lambda: vp.stats.a_to_b.mismatched == len(MESSAGE), what="stats")
        finally:
            os.close(fd_a)
            os.close(fd_b)


def test_termios_speeds_set_on_each_end_are_honoured(paths: tuple[str, str]) -> None:
    from dxserial.sim.uart import garble

    with VirtualPair(*paths, termios_speed=True) as vp:
        fd_a, fd_b = open_raw(vp.path_a), open_raw(vp.path_b)
        try:
            _set_speed(fd_a, 9600)
            _set_speed(fd_b, 2400)
            assert (vp.speed("a"), vp.speed("b")) == (9600, 2400)
            expected = garble(MESSAGE, 9600, 2400)
            write_all(fd_a, MESSAGE)
            assert read_exactly(fd_b, len(expected)) == expected
            _set_speed(fd_b, 9600)  # the program on B agrees now: clean bytes again
            write_all(fd_a, MESSAGE)
            assert read_exactly(fd_b, len(MESSAGE)) == MESSAGE
        finally:
            os.close(fd_a)
            os.close(fd_b)
