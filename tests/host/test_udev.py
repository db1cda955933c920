"""The shipped udev rules, systemd unit and example config, and ``dxserial udev``.

Runs as root here, where permission checks always pass; the permission tests therefore
either drop CAP_DAC_OVERRIDE from a child process (a failure root really meets) or stub
``udev_install.may_write`` (the os.access check) for the message a normal user sees.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from helpers import build_wheel, run_dxserial
from typer.main import get_command
from typer.testing import CliRunner

from dxserial.cli import app, udev_cmd
from dxserial.cli.bridge_cmd import CONFIG_KEYS
from dxserial.errors import ConfigError
from dxserial.host.udev import files as udev_files
from dxserial.host.udev import install as udev_install
from dxserial.host.udev import lint as udev_lint
from dxserial.host.udev.files import Kind

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

REPO = Path(__file__).resolve().parent.parent.parent
RULES = "etc/udev/rules.d/70-dxserial.rules"
UNIT = "etc/systemd/system/dxserial@.service"
BRIDGE_KEYS = set(CONFIG_KEYS)  # what `dxserial bridge --config` accepts

runner = CliRunner()


@pytest.fixture(autouse=True)
def _installable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' own dxserial may live under /root or /tmp (a CI clone): in-process
    installs skip that check; tests/host/test_udev.py::test_install_refuses_* make it."""
    monkeypatch.setattr(udev_cmd, "unit_cannot_run", lambda exe, *, this: None)


def line_of(text: str, needle: str) -> int:
    """1-based number of the first line containing ``needle``."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# --- the shipped files -------------------------------------------------------------------


def test_shipped_rules_pass_the_checker() -> None:
    text = udev_files.shipped_text(Kind.rules)
    assert udev_lint.check_rules(text) == []
    assert udev_lint.count_rules(text) > 10


def test_rules_claim_exactly_the_adapters_and_placeholders_the_code_knows() -> None:
    text = udev_files.shipped_text(Kind.rules)
    chip_lines = re.findall(
        r'ATTRS\{idVendor\}=="(\w+)", ATTRS\{idProduct\}=="([\w|]+)", ENV\{DXSERIAL_CHIP\}', text
    )
    claimed = {(vid, pid) for vid, pids in chip_lines for pid in pids.split("|")}
    expected = {(vid, pid) for vid, pids in udev_files.ADAPTERS.values() for pid in pids}
    assert claimed == expected
    # The FTDI latency rule covers the same FTDI products.
    ftdi = re.search(
        r'DRIVER=="ftdi_sio", ATTRS\{idVendor\}=="0403", ATTRS\{idProduct\}=="([\w|]+)"', text
    )
    assert ftdi and set(ftdi.group(1).split("|")) == set(udev_files.ADAPTERS["ftdi"][1])
    placeholders = re.search(r'ENV\{ID_SERIAL_SHORT\}=="(A50285BI[^"]*)"', text)
    assert placeholders and tuple(placeholders.group(1).split("|")) == udev_files.PLACEHOLDER_SERIALS


def test_rules_set_what_the_bridge_needs() -> None:
    text = udev_files.shipped_text(Kind.rules)
    for needle in (
        'SYMLINK+="dxserial/$env{DXSERIAL_NAME}"',
        'GROUP="dialout", MODE="0660"',
        'ENV{ID_MM_DEVICE_IGNORE}="1"',
        'ATTR{latency_timer}="1"',
        'TAG+="systemd", ENV{SYSTEMD_WANTS}+="dxserial@$env{DXSERIAL_NAME}.service"',
    ):
        assert needle in text


def test_unit_runs_the_bridge_unprivileged_and_binds_to_the_adapter() -> None:
    text = udev_install.render(Kind.unit, exe="/opt/dxserial/bin/dxserial")
    lines = set(text.splitlines())
    for line in (
        "ExecStart=/opt/dxserial/bin/dxserial bridge --config /etc/dxserial/%I.toml",
        "ConditionPathExists=/etc/dxserial/%I.toml",
        "BindsTo=dev-dxserial-%i.device",
        "Restart=on-failure",
        "DynamicUser=yes",
        "SupplementaryGroups=dialout",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "StateDirectory=dxserial",
        "LogsDirectory=dxserial",
    ):
        assert line in lines, line
    assert "@DXSERIAL@" not in text


def test_example_config_uses_only_bridge_option_names() -> None:
    text = udev_install.render(Kind.config, name="sn_A10K3XYZ_00")
    data = tomllib.loads(text)
    assert data["port"] == "/dev/dxserial/sn_A10K3XYZ_00"
    assert data["link"] == "nulmodem" and data["baud"] == 9600
    assert data["listen"] == "127.0.0.1:27531"
    assert set(data) <= BRIDGE_KEYS
    # Commented-out keys too: "# dtr = 1" etc.
    commented = set(re.findall(r"^# (\w+) = ", text, re.MULTILINE))
    assert commented <= BRIDGE_KEYS
    group = get_command(app)
    bridge = group.commands["bridge"]  # type: ignore[attr-defined]
    options = {opt for param in bridge.params for opt in param.opts}
    for key in set(data) | commented:
        if key != "port":  # the port is the bridge's argument
            assert "--" + key.replace("_", "-") in options, key


def test_render_substitutes_group_and_checks_names() -> None:
    assert udev_install.render(Kind.rules) == udev_files.shipped_text(Kind.rules)
    assert 'GROUP="uucp"' in udev_install.render(Kind.rules, group="uucp")
    assert "SupplementaryGroups=uucp" in udev_install.render(Kind.unit, exe="/x", group="uucp")
    with pytest.raises(ConfigError):
        udev_install.render(Kind.config, name="usb-1-2")  # "-" is escaped in unit names
    with pytest.raises(ConfigError):
        udev_install.render(Kind.rules, group="bad group")


def test_predicted_names_follow_the_rules() -> None:
    assert udev_files.predicted_name("A10K3XYZ", "00", "1", "2") == "sn_A10K3XYZ_00"
    assert udev_files.predicted_name("A10K3XYZ", "01", "1", "2") == "sn_A10K3XYZ_01"
    # Placeholder serials and serials with characters a unit name escapes: by USB socket.
    assert udev_files.predicted_name("A50285BI", "00", "1", "1.4") == "usb1_1.4_00"
    assert udev_files.predicted_name("0001", None, "3", "2") == "usb3_2_00"
    assert udev_files.predicted_name("AB-12", "00", "1", "2") == "usb1_2_00"
    assert udev_files.predicted_name("AB 12", "00", "1", "2") == "sn_AB_12_00"  # usb_id: "_"
    assert udev_files.predicted_name(None, "00", None, None) is None
    for name in ("sn_A10K3XYZ_00", "usb1_1.4_00"):
        assert udev_files.NAME_RE.fullmatch(name)


def test_unit_cannot_run_under_a_home_or_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert udev_install.unit_cannot_run("/usr/local/bin/dxserial", this=False) is None
    home = udev_install.unit_cannot_run("/home/ann/.local/bin/dxserial", this=False)
    assert home and "/home/ann/.local/bin/dxserial is under /home" in home and "ProtectHome" in home
    tmp = udev_install.unit_cannot_run("/tmp/clone/.venv/bin/dxserial", this=False)
    assert tmp and "PrivateTmp=yes" in tmp
    # A venv's python that is a symlink into a home directory (as pyenv makes it):
    fake_home = tmp_path / "home"
    (fake_home / "bin").mkdir(parents=True)
    (fake_home / "bin/python3").write_text("")
    venv = tmp_path / "opt/venv/bin"
    venv.mkdir(parents=True)
    (venv / "python3").symlink_to(fake_home / "bin/python3")
    (venv / "dxserial").write_text(f"#!{venv / 'python3'}\nprint()\n")
    monkeypatch.setattr(udev_install, "_HOMES", (str(fake_home),))
    monkeypatch.setattr(udev_install, "_TMPS", ())
    found = udev_install.unit_cannot_run(str(venv / "dxserial"), this=False)
    assert found and found.startswith(f"{fake_home / 'bin/python3'} is under {fake_home}")


def test_install_refuses_a_dxserial_the_unit_cannot_reach(tmp_path: Path) -> None:
    """Issue 24: it wrote a unit that could not start (PrivateTmp, ProtectHome)."""
    script = tmp_path / "dxserial"  # under /tmp: PrivateTmp=yes hides it from the unit
    script.write_text("#!/usr/bin/python3\n")
    root = tmp_path / "root"
    result = run_dxserial("udev", "install", "--root", str(root), "--exec", str(script))
    assert result.returncode == 2
    assert result.stderr.startswith(f"dxserial: error: not installing: {script} is under /tmp")
    assert len(result.stderr.splitlines()) == 1
    assert not root.exists()  # refused before writing anything


def test_install_with_names_mentions_no_example_it_did_not_write(tmp_path: Path) -> None:
    named = runner.invoke(app, ["udev", "install", "--root", str(tmp_path), "--name", "sn_X_00"])
    assert named.exit_code == 0, named.output
    assert not (tmp_path / "etc/dxserial/example.toml").exists()
    assert "example.toml" not in named.output
    bare = runner.invoke(app, ["udev", "install", "--root", str(tmp_path / "b")])
    assert "(example: /etc/dxserial/example.toml)" in bare.output


# --- the checker -------------------------------------------------------------------------


def test_check_rejects_a_typo_key_with_its_line(tmp_path: Path) -> None:
    text = udev_files.shipped_text(Kind.rules)
    broken = text.replace('SUBSYSTEM!="tty"', 'SUBSYTEM!="tty"')
    path = tmp_path / "70-broken.rules"
    path.write_text(broken)
    number = line_of(broken, 'SUBSYTEM!="tty"')
    result = runner.invoke(app, ["udev", "check", str(path), "--no-udevadm"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{path}:{number}: column 1: unknown key 'SUBSYTEM' (did you mean SUBSYSTEM?)"
    ]


def test_check_rejects_wrong_operators(tmp_path: Path) -> None:
    text = udev_files.shipped_text(Kind.rules)
    broken = text.replace('GROUP="dialout"', 'GROUP=="dialout"').replace(
        'SUBSYSTEMS=="usb", ATTRS{idVendor}=="067b"', 'SUBSYSTEMS="usb", ATTRS{idVendor}=="067b"'
    )
    path = tmp_path / "broken.rules"
    path.write_text(broken)
    subsystems = line_of(broken, 'SUBSYSTEMS="usb"')
    group = line_of(broken, "GROUP==")
    result = runner.invoke(app, ["udev", "check", str(path), "--no-udevadm"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{path}:{subsystems}: column 1: SUBSYSTEMS can only be matched (== or !=), "
        "not assigned with =",
        f"{path}:{group}: column 1: GROUP can only be assigned (= or :=), not matched with ==",
    ]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ('KERNEL=="ttyUSB0" GROUP="x"\n', 1, 19, "expected ','"),
        ('KERNEL=="ttyUSB0", SYMLINK+=foo\n', 1, 29, "must be in double quotes"),
        ('KERNEL=="ttyUSB0", SYMLINK+="foo\n', 1, 29, "no closing quote"),
        ('KERNEL=="x", GOTO="nowhere"\n', 1, 14, 'GOTO "nowhere" has no LABEL after it'),
        ('LABEL="back"\nKERNEL=="x", GOTO="back"\n', 2, 14, "has no LABEL after it"),
        ('IMPORT{magic}="x"\n', 1, 1, "expected one of builtin"),
        ('ENV="x"\n', 1, 1, "needs a {...} part"),
        ('KERNEL{x}=="y"\n', 1, 1, "takes no {...} part"),
        ('ENV{X}-="1"\n', 1, 1, "operator -= is not allowed with ENV"),
        ('MODE="rw"\n', 1, 1, "not an octal mode"),
        ('TEST{rw}=="x"\n', 1, 1, "octal mode mask"),
        ('KERNEL=="ttyUSB0", \\\n  SYMLNK+="x"\n', 2, 3, "unknown key 'SYMLNK'"),
        ('KERNEL~"x"\n', 1, 7, "expected an operator"),
    ],
)
def test_checker_problems(text: str, line: int, column: int, message: str) -> None:
    problems = udev_lint.check_rules(text)
    assert len(problems) == 1, problems
    assert (problems[0].line, problems[0].column) == (line, column)
    assert message in problems[0].message


def test_checker_accepts_the_usual_forms() -> None:
    text = (
        "# comment\n\n"
        'ACTION=="remove", GOTO="end"\n'
        'SUBSYSTEMS=="usb", IMPORT{builtin}="usb_id", IMPORT{builtin}="hwdb --subsystem=usb"\n'
        'KERNEL=="ttyUSB[0-9]*", \\\n  ATTR{power/control}="on", OPTIONS+="link_priority=10"\n'
        'TEST{0644}=="/etc/x", RUN+="/bin/true", SYMLINK-="a", TAG-="b", ENV{.X}:="1"\n'
        'ATTR{x}=e"\\n", PROGRAM=="/bin/id", RESULT=="0", CONST{virt}=="none", MODE="$env{M}"\n'
        'LABEL="end"\n'
    )
    assert udev_lint.check_rules(text) == []


def test_check_without_file_checks_the_shipped_rules() -> None:
    result = runner.invoke(app, ["udev", "check", "--no-udevadm"])
    assert result.exit_code == 0, result.output
    count = udev_lint.count_rules(udev_files.shipped_text(Kind.rules))
    assert result.output.endswith(f"70-dxserial.rules: ok ({count} rules)\n")


def test_udevadm_verify_where_it_exists() -> None:
    result = udev_lint.udevadm_verify(Path(str(udev_files.shipped_file(Kind.rules))))
    if result.ok is None:
        pytest.skip(result.output)
    assert result.ok, result.output
    cli = runner.invoke(app, ["udev", "check"])
    assert cli.exit_code == 0 and "udevadm verify: ok" in cli.output


_UDEV_TEST_SCRIPT = """\
set -e
mount -t tmpfs none /run
mount -t tmpfs none /dev
mountpoint -q /run && mountpoint -q /dev
mkdir -p /run/udev/rules.d
cp "$1" /run/udev/rules.d/70-dxserial.rules
udevadm test --action=add /sys/devices/virtual/mem/null 2>&1
"""


def _udev_parse(tmp_path: Path, text: str) -> str:
    """Let udev's own parser read ``text``, with throw-away /dev and /run (nothing leaks)."""
    rules = tmp_path / "test.rules"
    rules.write_text(text)
    result = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", _UDEV_TEST_SCRIPT,
         "sh", str(rules)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if result.returncode != 0 or "70-dxserial.rules" not in result.stdout:
        pytest.skip(f"udevadm test in a private mount namespace did not run: {result.stderr}")
    return result.stdout


@pytest.mark.skipif(
    shutil.which("udevadm") is None or shutil.which("unshare") is None or os.geteuid() != 0,
    reason="needs udevadm, unshare and root",
)
def test_udev_own_parser_accepts_the_rules_and_rejects_a_typo(tmp_path: Path) -> None:
    """udevadm before 254 has no verify, but `udevadm test` parses every rules file."""
    good = _udev_parse(tmp_path, udev_files.shipped_text(Kind.rules))
    assert not [line for line in good.splitlines() if "70-dxserial.rules:" in line]
    broken = udev_files.shipped_text(Kind.rules).replace('SUBSYSTEM!="tty"', 'SUBSYTEM!="tty"')
    bad = _udev_parse(tmp_path, broken)
    number = line_of(broken, "SUBSYTEM")
    assert f"70-dxserial.rules:{number} Invalid key 'SUBSYTEM'" in bad


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    unit = tmp_path / "dxserial@sn_TEST_00.service"
    unit.write_text(udev_install.render(Kind.unit, exe=sys.executable))
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(unit)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert not re.search(r"Unknown|Invalid|Failed to parse|ignoring", result.stderr), result.stderr


# --- install / uninstall -----------------------------------------------------------------


def test_install_into_a_root_and_uninstall_only_ours(tmp_path: Path) -> None:
    root = tmp_path / "root"
    mine = root / "etc/dxserial/sn_MINE_00.toml"
    mine.parent.mkdir(parents=True)
    mine.write_text('port = "/dev/dxserial/sn_MINE_00"\n')
    result = runner.invoke(
        app, ["udev", "install", "--root", str(root), "--name", "sn_A10K3XYZ_00",
              "--name", "sn_MINE_00"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"wrote     {root / RULES}" in result.output
    assert "udevadm control --reload" in result.output
    assert "systemctl daemon-reload" in result.output
    rules = (root / RULES).read_text()
    assert rules.startswith("# dxserial-managed sha256=")
    assert rules.split("\n", 1)[1] == udev_files.shipped_text(Kind.rules)
    exe = udev_install.dxserial_executable()
    assert exe == shutil.which("dxserial") or exe.endswith("-m dxserial")
    unit = (root / UNIT).read_text()
    assert f"ExecStart={exe} bridge --config /etc/dxserial/%I.toml\n" in unit
    config = tomllib.loads((root / "etc/dxserial/sn_A10K3XYZ_00.toml").read_text())
    assert config["port"] == "/dev/dxserial/sn_A10K3XYZ_00"
    assert mine.read_text() == 'port = "/dev/dxserial/sn_MINE_00"\n'  # kept
    assert f"kept      {mine}" in result.output

    again = runner.invoke(
        app, ["udev", "install", "--root", str(root), "--exec", "/opt/d/bin/dxserial"]
    )
    assert again.exit_code == 0, again.output
    assert f"unchanged {root / RULES}" in again.output
    assert f"updated   {root / UNIT}" in again.output  # ours, so replaced
    assert "ExecStart=/opt/d/bin/dxserial bridge" in (root / UNIT).read_text()
    assert (root / "etc/dxserial/example.toml").is_file()

    # Someone edits the example, and another package owns a rules file next to ours.
    example = root / "etc/dxserial/example.toml"
    example.write_text(example.read_text() + "# tuned\n")
    other = root / "etc/udev/rules.d/99-other.rules"
    other.write_text('KERNEL=="x", GROUP="y"\n')
    gone = runner.invoke(app, ["udev", "uninstall", "--root", str(root)])
    assert gone.exit_code == 0, gone.output
    assert not (root / RULES).exists() and not (root / UNIT).exists()
    assert not (root / "etc/dxserial/sn_A10K3XYZ_00.toml").exists()
    assert example.exists() and mine.exists() and other.exists()
    assert f"kept      {example} (edited since it was installed; kept)" in gone.output
    assert runner.invoke(app, ["udev", "uninstall", "--root", str(root)]).output.startswith("kept")


def test_install_does_not_replace_a_foreign_rules_file_without_force(tmp_path: Path) -> None:
    rules = tmp_path / RULES
    rules.parent.mkdir(parents=True)
    rules.write_text('KERNEL=="ttyUSB0", SYMLINK+="engine"\n')
    result = runner.invoke(app, ["udev", "install", "--root", str(tmp_path)])
    assert result.exit_code == 1
    assert (
        f"conflict  {rules} (not written by dxserial; use --force to replace it)" in result.output
    )
    assert not (tmp_path / UNIT).exists()  # nothing written at all
    forced = runner.invoke(app, ["udev", "install", "--root", str(tmp_path), "--force"])
    assert forced.exit_code == 0, forced.output
    assert udev_install.ownership(rules.read_text()) == "ours"


def test_install_where_a_directory_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "etc").write_text("not a directory\n")
    result = run_dxserial("udev", "install", "--root", str(tmp_path), "--exec", "/usr/bin/dxserial")
    assert result.returncode == 2
    assert result.stderr.strip() == f"dxserial: error: {tmp_path / 'etc'} is not a directory"


_WITHOUT_DAC = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for capability in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
    if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
        sys.exit(99)
os.execv(sys.executable, [sys.executable, "-m", "dxserial", *sys.argv[1:]])
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="as a normal user a read-only folder suffices")
def test_install_without_permission_exits_77_with_the_sudo_line(tmp_path: Path) -> None:
    """Root without CAP_DAC_OVERRIDE (as in some containers) meets a real EACCES."""
    target = tmp_path / "target"
    target.mkdir()
    target.chmod(0o555)
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_DAC, "udev", "install", "--root", str(target),
         "--name", "sn_X_00", "--exec", "/usr/bin/dxserial"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if result.returncode == 99:
        pytest.skip("cannot drop capabilities here")
    assert result.returncode == udev_install.EXIT_NOPERM, result.stderr
    exe = udev_install.dxserial_executable()
    lines = result.stderr.splitlines()
    assert (
        lines[0]
        == f"dxserial: cannot write {target}/etc/udev/rules.d: no permission to write in {target}"
    )
    assert lines[1:3] == [
        "Run it as root:",
        f"  sudo {exe} udev install --root {target} --name sn_X_00 --exec /usr/bin/dxserial",
    ]
    assert list(target.iterdir()) == []


def test_permission_denied_as_a_normal_user_would_see_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(udev_install, "may_write", lambda directory: False)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = runner.invoke(app, ["udev", "install", "--root", str(tmp_path), "--group", "uucp"])
    assert result.exit_code == 77
    exe = udev_install.dxserial_executable()
    assert result.output.splitlines()[1:] == [
        "Run it as root:",
        f"  sudo {exe} udev install --root {tmp_path} --group uucp",
    ]
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    monkeypatch.setattr(udev_cmd, "unit_cannot_run", lambda exe, *, this: None)  # undone too
    assert runner.invoke(app, ["udev", "install", "--root", str(tmp_path)]).exit_code == 0
    monkeypatch.setattr(udev_install, "may_write", lambda directory: False)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    gone = runner.invoke(app, ["udev", "uninstall", "--root", str(tmp_path)])
    assert gone.exit_code == 77
    assert f"  sudo {exe} udev uninstall --root {tmp_path}" in gone.output.splitlines()
    assert (tmp_path / RULES).exists()


# --- print and packaging -----------------------------------------------------------------


def test_print_shows_rendered_files() -> None:
    unit = runner.invoke(app, ["udev", "print", "unit", "--exec", "/opt/d/bin/dxserial"])
    assert unit.exit_code == 0
    assert "ExecStart=/opt/d/bin/dxserial bridge --config /etc/dxserial/%I.toml" in unit.output
    rules = runner.invoke(app, ["udev", "print"])
    assert rules.output == udev_files.shipped_text(Kind.rules)
    config = runner.invoke(app, ["udev", "print", "config", "--name", "usb1_1.4_00"])
    assert 'port = "/dev/dxserial/usb1_1.4_00"' in config.output


def test_wheel_ships_the_files_and_the_installed_package_finds_them(tmp_path: Path) -> None:
    with build_wheel(tmp_path) as archive:
        names = set(archive.namelist())
        for filename in (udev_files.RULES_FILE, udev_files.UNIT_FILE, udev_files.EXAMPLE_FILE):
            member = f"dxserial/_data/udev/{filename}"
            assert member in names
            assert archive.read(member).decode() == (REPO / "udev" / filename).read_text()
        archive.extractall(tmp_path / "site")
    # -S: no site-packages, so the editable checkout cannot answer instead.
    found = subprocess.run(
        [sys.executable, "-S", "-c",
         "from dxserial.host.udev.files import Kind, shipped_file; print(shipped_file(Kind.unit))"],
        env={**os.environ, "PYTHONPATH": str(tmp_path / "site")},
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == str(tmp_path / "site/dxserial/_data/udev/dxserial@.service")
