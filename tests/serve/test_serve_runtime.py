"""The runtime folder of ``dxserial serve`` (its status socket) must be the user's own and
private: a folder another user made first is never used (issue #36, point 6)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dxserial.errors import ConfigError
from dxserial.serve import status
from dxserial.serve.rig import parse_rig
from dxserial.serve.status import find_socket, runtime_dir, socket_path

RIG = '[lines.a]\nport = "memory://a"\nlisten = "127.0.0.1:0"\n'


@pytest.fixture
def squat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``/tmp/dxserial-UID`` stands at ``tmp_path/tmp-dxserial``; HOME is ``tmp_path/home``."""
    shared = tmp_path / "tmp-dxserial"
    monkeypatch.setattr(status, "shared_tmp_dir", lambda uid=None: shared)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return shared


def env_of(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}  # no RUNTIME_DIRECTORY, no XDG_RUNTIME_DIR


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_daemon_makes_its_folder_0700(squat: Path, tmp_path: Path) -> None:
    found = runtime_dir(env_of(tmp_path), create=True)
    assert found.path == squat and found.note is None and mode(squat) == 0o700


def test_a_folder_of_its_own_open_to_others_is_made_0700_and_said(
    squat: Path, tmp_path: Path
) -> None:
    squat.mkdir()
    squat.chmod(0o777)
    assert runtime_dir(env_of(tmp_path)).path != squat  # a client does not trust it
    found = runtime_dir(env_of(tmp_path), create=True)
    assert found.path == squat and mode(squat) == 0o700
    assert found.note == f"runtime folder {squat} had mode 0777: made 0700 (the user's own)"


def test_a_squatted_tmp_folder_is_not_used_by_daemon_or_client(
    squat: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir(mode=0o777)
    squat.symlink_to(elsewhere)  # what another user could have put there first
    spec = parse_rig(RIG, tmp_path / "rig.toml")
    fallback = tmp_path / "home" / ".local" / "state" / "dxserial" / "run"
    assert find_socket(spec, env_of(tmp_path)).parent != squat  # no forged rows read
    found = socket_path(spec, env_of(tmp_path), create=True)
    assert found.path == fallback / "serve-rig.sock" and mode(fallback) == 0o700
    assert found.note == (f"runtime folder {squat} is a symbolic link: not used (another user "
                          f"may have made it); the status socket is in {fallback}")
    assert find_socket(spec, env_of(tmp_path)) == fallback / "serve-rig.sock"


def test_a_folder_of_another_user_is_refused() -> None:
    here = Path(os.getcwd())
    assert status._private(here, os.getuid() + 1, create=False)[0] == (
        f"belongs to uid {os.getuid()}, not to uid {os.getuid() + 1}")


def test_a_folder_the_system_names_that_is_not_private_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    link = tmp_path / "link"
    link.symlink_to(folder)
    with pytest.raises(ConfigError) as exc:
        runtime_dir({"RUNTIME_DIRECTORY": str(link)}, create=True)
    assert str(exc.value) == (f"runtime folder {link} is a symbolic link: it must be this user's "
                              "own folder, mode 0700 (or name the socket with 'status' in the "
                              "rig file)")


def test_status_of_a_rig_file_nested_too_deep_is_its_one_line_mistake(tmp_path: Path) -> None:
    """--status reads what it can of a broken rig file (the daemon runs on the file it last
    read): a file of nested brackets gave a RecursionError traceback there."""
    from dxserial.errors import ConfigError
    from dxserial.serve.status import spec_for_status

    rig = tmp_path / "rig.toml"
    rig.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    spec, mistake = spec_for_status(rig)
    assert spec.status is None and isinstance(mistake, ConfigError)
    assert "nested more than" in str(mistake) and "\n" not in str(mistake)
