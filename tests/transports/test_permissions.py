"""Advice for a device we may not open names the device's own group and the command."""

from __future__ import annotations

import grp
import os
from pathlib import Path

import pytest

from dxserial.transports import permissions
from dxserial.transports.permissions import permission_denied


def _device(tmp_path: Path, gid: int, mode: int = 0o660) -> str:
    path = tmp_path / "ttyUSB0"
    path.write_text("")
    try:
        os.chown(path, -1, gid)
    except PermissionError:
        pytest.skip("this user may not give a file another group")
    os.chmod(path, mode)
    return str(path)


def _other_group() -> grp.struct_group:
    """A group this user is not in, other than root."""
    mine = set(os.getgroups()) | {os.getgid()}
    for entry in grp.getgrall():
        if entry.gr_gid not in mine and entry.gr_gid != 0:
            return entry
    pytest.skip("no group this user is not in")


def test_advice_names_the_devices_group_and_the_command(tmp_path: Path) -> None:
    group = _other_group()
    device = _device(tmp_path, group.gr_gid)
    text = permission_denied(device)
    assert text == (
        f"cannot open {device}: permission denied — it belongs to group {group.gr_name}: "
        f"run sudo usermod -aG {group.gr_name} $USER, then log out and back in"
    )
    assert "\n" not in text


def test_a_group_the_database_does_not_know_is_named_by_number(tmp_path: Path) -> None:
    known = {g.gr_gid for g in grp.getgrall()}
    gid = next(n for n in range(54321, 60000) if n not in known)
    device = _device(tmp_path, gid)
    assert f"sudo usermod -aG {gid} $USER" in permission_denied(device)


def test_joined_but_not_yet_in_this_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = _other_group()
    device = _device(tmp_path, group.gr_gid)
    monkeypatch.setattr(permissions, "in_group_db", lambda gid: gid == group.gr_gid)
    text = permission_denied(device)
    assert f"you are in group {group.gr_name}, but this login session is not yet" in text
    assert "usermod" not in text


@pytest.mark.parametrize("mode", [0o600, 0o640])
def test_no_group_access_means_joining_would_not_help(tmp_path: Path, mode: int) -> None:
    group = _other_group()
    device = _device(tmp_path, group.gr_gid, mode)
    text = permission_denied(device)
    assert f"it is {mode:04o} and group {group.gr_name}, so joining that group would not help" in text
    assert "usermod" not in text and "dxserial udev install" in text


def test_root_group_is_never_advised(tmp_path: Path) -> None:
    device = _device(tmp_path, 0)
    text = permission_denied(device)
    assert "usermod" not in text and "group root, so joining that group would not help" in text


def test_a_device_that_vanished(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone")
    assert permission_denied(missing) == (
        f"cannot open {missing}: permission denied — check its owner and mode with ls -l {missing}"
    )
