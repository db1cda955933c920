"""The bridge's record of the serial engine's game (bridge/statefile.py): where it lives, what
it holds, and a run that finds its previous run's game open ending that game first; a file
or folder that cannot serve is said in one line and never stops a default run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_in_process

from dxserial.bridge.statefile import (
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


def test_one_file_per_line_named_after_the_port_as_given() -> None:
    folder = Path("/s")
    assert state_file(folder, "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0") == Path(
        "/s/serial-dev-serial-by-id-usb-FTDI_FT232R-if00-port0.json")
    assert state_file(folder, "dosbox://127.0.0.1:5000") == Path(
        "/s/serial-dosbox-127.0.0.1-5000.json")


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


def test_a_foreign_state_file_is_a_warning_taken_as_no_game_and_replaced(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    path = state / "serial-memory-foreign.json"
    path.write_text("not json")
    with BridgeThread(tmp_path, serial_check=True, state_dir=state, name="foreign") as bridge, \
            DxpClient("127.0.0.1", bridge.port) as client:
        client.send(REQ)
        assert bridge.peer.expect() == REQ  # no evidence: at once
    assert "not a dxserial state record" in bridge.log()
    assert json.loads(path.read_text())["game"] == "open"
