"""Every path (and engine endpoint) a user names: a bad one is one line that says what to do.

Each case fails before anything starts (no port is opened, no game is played), so the
whole family runs as quick subprocesses, exactly as a user meets them.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from helpers import run_dxserial, run_in_process

from dxserial.errors import ConfigError
from dxserial.files import output_dir, problem, read_text

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

# Each case: the command (with FILE, DIR and TMP filled in) and words the error must hold.
CASES = {
    "demo --pdn names a file": (["demo", "--no-board", "--pdn", "FILE"], "is a file, not a directory"),
    "demo --pdn below a file": (["demo", "--no-board", "--pdn", "FILE/sub"], "a part of the path is a file"),
    "demo --pdn cannot be created": (["demo", "--no-board", "--pdn", "/proc/dxserial-nope"], "no such file or directory"),
    "match --pdn names a file": (["match", "tcp://127.0.0.1:9", "tcp://127.0.0.1:9", "--pdn", "FILE"], "is a file, not a directory"),
    "bridge --pdn names a file": (["bridge", "/dev/null", "--pdn", "FILE"], "is a file, not a directory"),
    "bridge --trace names a folder": (["bridge", "/dev/null", "--trace", "DIR"], "it is a directory"),
    "bridge --trace in a missing folder": (["bridge", "/dev/null", "--trace", "TMP/missing/t.jsonl"], "create its folder first"),
    "bridge --config binary garbage": (["bridge", "/dev/null", "--config", "BINARY"], "not UTF-8 text"),
    "bridge --config a folder": (["bridge", "/dev/null", "--config", "DIR"], "it is a directory"),
    "bridge --config missing": (["bridge", "/dev/null", "--config", "TMP/nope.toml"], "no such file"),
    "bridge --config endless": (["bridge", "/dev/null", "--config", "/dev/zero"], "larger than"),
    "bridge --config wrong type": (["bridge", "/dev/null", "--config", "WRONG"], "expected a whole number"),
    "bridge --config a table": (["bridge", "/dev/null", "--config", "TABLE"], "unknown key 'serial'"),
    "bridge --config nan seconds": (["bridge", "/dev/null", "--config", "NAN"], "--echo-timeout must be > 0"),
    "replay a folder": (["replay", "DIR"], "it is a directory"),
    "replay missing": (["replay", "TMP/nope.jsonl"], "no such file"),
    "udev check a folder": (["udev", "check", "DIR", "--no-udevadm"], "it is a directory"),
    "udev check binary garbage": (["udev", "check", "BINARY", "--no-udevadm"], "not UTF-8 text"),
    "vpair below a file": (["vpair", "FILE/a", "TMP/b"], "does not exist"),
    "engine on a missing port": (["engine", "TMP/ttyNope", "--role", "follower"], "no such device"),
    "engine on a folder": (["engine", "DIR", "--role", "follower"], "not a serial device"),
    "ports --include a folder": (["ports", "--include", "DIR"], "a directory, not a port"),
    "engine listen:// on a foreign address": (["engine", "listen://192.0.2.1:27531", "--role", "follower"], "no interface of this machine has that address"),
    "ports --include missing": (["ports", "--include", "TMP/nope"], "no such file"),
}


def fill(arg: str, tmp: Path) -> str:
    names = {"FILE": "a-file", "DIR": "a-dir", "BINARY": "garbage.toml", "WRONG": "wrong.toml",
             "TABLE": "table.toml", "NAN": "nan.toml"}
    for word, name in names.items():
        arg = arg.replace(word, str(tmp / name))
    return arg.replace("TMP", str(tmp))


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_path_is_one_line_with_advice_and_exit_2(case: str, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-dir").mkdir()
    (tmp_path / "garbage.toml").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "wrong.toml").write_text('baud = "fast"\n')
    (tmp_path / "table.toml").write_text("[serial]\nbaud = 9600\n")
    (tmp_path / "nan.toml").write_text("echo_timeout = nan\n")
    argv, words = CASES[case]
    result = run_in_process(*(fill(a, tmp_path) for a in argv))
    # A port or address that is not there (yet) is 1: the unit restarts, an adapter may appear.
    # replay's file is its job's input, not a setting: 1, as its help says (issue 38 point 2).
    assert result.returncode == (1 if case.startswith(("engine", "replay")) else 2), result.stderr
    assert result.stderr.startswith("dxserial: error: "), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert words in result.stderr
    assert "ready" not in result.stdout  # nothing was started


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_config_says_to_make_it_readable(tmp_path: Path) -> None:
    conf = tmp_path / "rig.toml"
    conf.write_text('port = "/dev/null"\n')
    conf.chmod(0)
    result = run_dxserial("bridge", "--config", str(conf))
    assert result.returncode == 2
    assert "permission denied; make it readable" in result.stderr


def test_permission_problems_say_what_to_do() -> None:
    """The same words when running as root hides the case from the subprocess tests."""
    denied = PermissionError(errno.EACCES, "Permission denied")
    assert str(problem("read", "config file", "/etc/x.toml", denied, "hint")) == (
        "cannot read config file /etc/x.toml: permission denied; "
        "make it readable for the user dxserial runs as"
    )
    assert "choose a folder you may write to" in str(problem("create", "PDN folder", "/x", denied, ""))


def test_helpers_accept_good_paths(tmp_path: Path) -> None:
    assert output_dir(tmp_path / "new" / "games", "PDN folder").is_dir()
    (tmp_path / "c.toml").write_text("baud = 2400\n")
    assert read_text(tmp_path / "c.toml", "config file", "") == "baud = 2400\n"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["engine", "tcp://127.0.0.1:9", "--role", "follower", "--connect-timeout", "nan"], "--connect-timeout must be > 0"),
        (["engine", "tcp://127.0.0.1:9", "--role", "follower", "--echo-timeout", "nan"], "--echo-timeout must be > 0"),
        (["match", "tcp://127.0.0.1:9", "tcp://127.0.0.1:9", "--move-timeout", "nan"], "--move-timeout must be > 0, not nan"),
        (["vpair", "a", "b", "--unplug-every", "nan"], "must be positive"),
    ],
)
def test_not_a_number_is_refused_before_anything_starts(argv: list[str], words: str) -> None:
    """nan passes every "<= 0" check and then waits forever (or fails deep inside)."""
    result = run_in_process(*argv)
    assert result.returncode == 2
    assert result.stderr.strip() == f"dxserial: error: {words}" or words in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_checking_a_folder_without_creating_it(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    assert not output_dir(tmp_path / "new" / "games", "PDN folder", create=False).exists()
    with pytest.raises(ConfigError, match="it is a file, not a directory"):
        output_dir(tmp_path / "a-file", "PDN folder", create=False)
    with pytest.raises(ConfigError, match="a part of the path is a file"):
        output_dir(tmp_path / "a-file" / "games", "PDN folder", create=False)
