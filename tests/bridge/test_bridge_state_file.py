"""The bridge's record of the serial engine's game (bridge/statefile.py): where it lives, what
it holds, and a run that finds its previous run's game open ending that game first; a file
or folder that cannot serve is said in one line and never stops a default run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.bridge.statefile import (
    find_record,
    legacy_state_file,
    port_identity,
    read_record,
    record_fields,
    state_dir,
    state_file,
    write_record,
)
from dxserial.errors import ConfigError
from dxserial.testing.inproc import BridgeThread
from dxserial.testing.peers import DxpClient

NAME = "Tester".ljust(32)
REQ = f"R01{NAME}Z005075A".encode()
ACC = f"A{'Serial'.ljust(32)}0".encode()


def test_the_folder_is_the_option_else_systemd_s_else_the_user_s() -> None:
    env = {"STATE_DIRECTORY": "/var/lib/dxserial:/var/lib/other", "XDG_STATE_HOME": "/x",
           "HOME": "/home/u"}
    assert state_dir(Path("/opt/s"), env).path == Path("/opt/s")
    assert state_dir(None, env).path == Path("/var/lib/dxserial")
    del env["STATE_DIRECTORY"]
    assert state_dir(None, env).path == Path("/x/dxserial")
    env["XDG_STATE_HOME"] = "relative/dir"  # the XDG spec: ignored
    assert state_dir(None, env).path == Path("/home/u/.local/state/dxserial")
    assert state_dir(None, env).source == "~/.local/state"


def test_one_file_per_line_named_after_the_port_s_identity(tmp_path: Path) -> None:
    folder = Path("/s")
    by_id = "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0"
    assert port_identity(by_id) == by_id  # the link itself, not the tty behind it
    assert state_file(folder, port_identity(by_id)).name.startswith(
        "serial-dev-serial-by-id-usb-FTDI_FT232R-if00-port0-")
    assert state_file(folder, "dosbox://127.0.0.1:5000").name.startswith(
        "serial-dosbox-127.0.0.1-5000-")
    assert port_identity("/dev/ttyUSB0", "A10K3XYZ") == "usb-serial:A10K3XYZ"
    # A tty is named by its by-id link where udev made one: a replug to ttyUSB3 is the same line.
    links = tmp_path / "by-id"
    links.mkdir()
    tty = tmp_path / "ttyUSB3"
    tty.write_text("")
    (links / "usb-FTDI_X_A1-if00-port0").symlink_to(tty)
    assert port_identity(str(tty), by_id=links) == str(links / "usb-FTDI_X_A1-if00-port0")
    assert port_identity(str(tmp_path / "ttyUSB9"), by_id=links) == str(tmp_path / "ttyUSB9")


#: The look-alike ports of issue #36 point 3: each pair shared one state file.
LOOK_ALIKES = [
    ("/a/x/y/A", "/a/x-y/A"),
    ("ttyUSB0", "./ttyUSB0"),
    ("/dev/serial/by-id/usb-FTDI A1-if00-port0", "/dev/serial/by-id/usb-FTDI-A1-if00-port0"),
    ("socket://10.0.0.5:4000", "socket-10.0.0.5-4000"),
    ("/a/" + "b" * 180 + "/one", "/a/" + "b" * 180 + "/two"),
]


@pytest.mark.parametrize(("one", "two"), LOOK_ALIKES)
def test_look_alike_ports_have_files_of_their_own(
    one: str, two: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    first = port_identity(one)
    assert port_identity("./" + one if "/" not in one else one) == first  # one file, one name
    monkeypatch.chdir(tmp_path / "b")  # a relative name is another file in another folder
    second = port_identity(two)
    folder = tmp_path / "state"
    assert first != second
    assert state_file(folder, first) != state_file(folder, second)
    # Line 1 leaves a game open; line 2 finds no game of its own, and its write leaves
    # line 1's record as it was.
    mine = find_record(folder, one, first).path
    write_record(mine, record_fields(one, open=True, now=1700000000.0, identity=first))
    other = find_record(folder, two, second)
    assert other.record is None and other.warning is None
    write_record(other.path, record_fields(two, open=False, now=1700000001.0, identity=second))
    found = find_record(folder, one, first)
    assert found.record is not None and found.record.open


def test_a_record_of_another_port_is_ignored_with_one_warning(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    path = state_file(folder, "memory://one")
    write_record(path, record_fields("memory://two", open=True, now=1700000000.0,
                                     identity="memory://two"))
    found = find_record(folder, "memory://one", "memory://one")
    assert found.record is None and found.path == path
    assert found.warning == (f"state file {path} is the record of memory://two, not of "
                             "memory://one: ignored, taken as no game open; it is replaced when "
                             "the next game starts")


def test_an_old_file_is_read_when_its_port_matches_and_only_then(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    for port in ("/a/x/y/A", "/a/x-y/A"):  # once one file, "serial-a-x-y-A.json"
        assert legacy_state_file(folder, port) == folder / "serial-a-x-y-A.json"
    write_record(folder / "serial-a-x-y-A.json",
                 record_fields("/a/x/y/A", open=True, now=1700000000.0))
    mine = find_record(folder, "/a/x/y/A", port_identity("/a/x/y/A"))
    assert mine.record is not None and mine.record.open
    assert mine.legacy == folder / "serial-a-x-y-A.json" and mine.warning is None
    other = find_record(folder, "/a/x-y/A", port_identity("/a/x-y/A"))
    assert other.record is None and other.legacy is None
    assert other.warning is not None and "is the record of /a/x/y/A, not of /a/x-y/A" in \
        other.warning


BAD_RECORDS = [
    '{"version": 1, "port": "memory://bad", "game": "open", "since": 1e400}',
    '{"version": 1, "port": "memory://bad", "game": "open", "since": NaN}',
    '{"version": 1, "port": "memory://bad", "game": "open", "since": -Infinity}',
    '{"version": 1, "port": "memory://bad", "game": "open", "since": 1e300}',
    '{"version": 1, "port": "memory://bad", "game": "open", "since": "yesterday"}',
    '{"version": 1, "port": "memory://bad", "game": "open", "since": true}',
    '{"version": 1, "port": 7, "game": "open", "since": 1}',
    '{"version": 1, "port": "memory://bad", "game": 1, "since": 1}',
    '{"version": true, "port": "memory://bad", "game": "open", "since": 1}',
    '{"version": 1, "port": "memory://bad", "game": "open", "since": 1, "identity": []}',
    '["open"]',
    '"open"',
    "[" * 60000,
    "{\"version\": 1,",
    "\u0000garbage",
]


@pytest.mark.parametrize("text", BAD_RECORDS)
def test_every_value_is_checked_one_warning_naming_the_file(text: str, tmp_path: Path) -> None:
    folder = tmp_path / "state"
    path = state_file(folder, "memory://bad")
    folder.mkdir()
    path.write_text(text)
    found = find_record(folder, "memory://bad", "memory://bad")
    assert found.record is None and found.warning is not None
    assert found.warning.startswith(f"state file {path}: not a dxserial state record (")
    assert "\n" not in found.warning


def test_a_record_round_trips_and_a_foreign_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "serial-x.json"
    assert read_record(path) is None
    write_record(path, record_fields("/dev/ttyUSB0", open=True, now=1700000000.0))
    record = read_record(path)
    assert record is not None and record.open and record.port == "/dev/ttyUSB0"
    path.write_text("[1, 2]")
    with pytest.raises(ConfigError, match=r"^state file .*: not a dxserial state record"):
        read_record(path)


def test_a_state_dir_that_cannot_be_a_folder_is_the_one_line_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_in_process("bridge", "memory://nowhere", "--state-dir", str(blocker))
    assert result.returncode == 2  # a setting the user gave: a usage error
    assert result.stderr.strip() == (
        f"dxserial: error: cannot create state folder (--state-dir) {blocker}: it is a file, "
        "not a directory; name a folder (it is created if missing)"
    )


@pytest.mark.e2e
def test_a_default_folder_that_cannot_be_made_is_a_warning_and_the_bridge_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    with BridgeThread(tmp_path, serial_check=True, state_dir=None) as bridge, \
            DxpClient("127.0.0.1", bridge.port) as client:
        client.send(REQ)
        assert bridge.peer.expect() == REQ
    assert "keeps no record of the serial engine's game across runs" in bridge.log()


@pytest.mark.e2e
def test_a_run_that_finds_its_previous_run_s_game_open_ends_it_first(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first, second = tmp_path / "run1", tmp_path / "run2"
    first.mkdir()
    second.mkdir()
    with BridgeThread(first, serial_check=True, state_dir=state, name="line") as bridge, \
            DxpClient("127.0.0.1", bridge.port) as client:
        client.send(REQ)
        assert bridge.peer.expect() == REQ
        bridge.peer.send(ACC)
        assert client.expect() == ACC
        client.send(b"M0000322800")
        assert bridge.peer.expect() == b"M0000322800"
        (path,) = state.glob("*.json")
        assert json.loads(path.read_text())["game"] == "open"  # written as the game began
    # The bridge stopped mid-game; the serial engine still has that game.
    with BridgeThread(second, serial_check=True, state_dir=state, name="line") as bridge, \
            DxpClient("127.0.0.1", bridge.port) as client:
        client.send(REQ)
        assert bridge.peer.expect() == b"E00"  # the old game is ended first
        bridge.peer.send(b"E00")
        assert bridge.peer.expect() == REQ
        bridge.peer.send(ACC)
        assert client.expect() == ACC
        log = bridge.log()
    assert f"ending game left open by the previous run (state file {path}, game open since" \
        in log
    said = [r for r in bridge.trace() if r.get("action") == "sent-by-bridge"]
    assert said[0]["raw"] == "E00" and f"state file {path}" in str(said[0]["why"])


@pytest.mark.e2e
@pytest.mark.parametrize("text", [
    "not json", '{"version": 1, "port": "memory://foreign", "game": "open", "since": 1e400}'])
def test_a_foreign_state_file_is_a_warning_taken_as_no_game_and_replaced(
    text: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    path = state_file(state, "memory://foreign")
    path.write_text(text)
    with BridgeThread(tmp_path, serial_check=True, state_dir=state, name="foreign") as bridge, \
            DxpClient("127.0.0.1", bridge.port) as client:
        client.send(REQ)
        assert bridge.peer.expect() == REQ  # no evidence: at once
    warned = [line for line in bridge.log().splitlines() if "not a dxserial state record" in line]
    assert len(warned) == 1 and f"state file {path}" in warned[0], bridge.log()
    replaced = json.loads(path.read_text())  # the bridge's own record, the game it began
    assert replaced["game"] == "open" and math.isfinite(replaced["since"]), replaced


def test_a_link_whose_device_changes_on_a_replug_keeps_its_line_s_record(tmp_path: Path) -> None:
    """Found by the line soak: a vpair's end (like a udev link) points at another
    /dev/pts/N after each replug; named by the device behind it, the restarted bridge looked
    for another file, found no record of the open game and sent a GAMEREQ into it."""
    first, second = tmp_path / "pts1", tmp_path / "pts5"
    first.touch()
    second.touch()
    link = tmp_path / "ttyA"
    link.symlink_to(first)
    before = port_identity(str(link), by_id=tmp_path / "no-by-id")
    link.unlink()
    link.symlink_to(second)  # plugged back in: the same name, another device
    assert port_identity(str(link), by_id=tmp_path / "no-by-id") == before == str(link)
