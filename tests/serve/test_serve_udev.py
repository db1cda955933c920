"""``dxserial udev install --serve RIG.toml``: one systemd unit for the whole rig."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from dxserial.cli.app import app
from dxserial.host.udev.install import ownership, uninstall

RIG = '[lines.a]\nport = "/dev/ttyUSB0"\nlisten = "0.0.0.0:27531"\n'


def test_install_serve_writes_one_unit_that_serves_and_reloads_the_rig(tmp_path: Path) -> None:
    root = tmp_path / "root"
    rig = root / "etc/dxserial/rig.toml"  # the rig file of the system under --root
    rig.parent.mkdir(parents=True)
    rig.write_text(RIG)
    result = CliRunner().invoke(app, ["udev", "install", "--root", str(root), "--serve",
                                      str(rig), "--exec", "/opt/dxserial/bin/dxserial"])
    assert result.exit_code == 0, result.output
    unit = root / "etc/systemd/system/dxserial-serve.service"
    text = unit.read_text()
    assert "ExecStart=/opt/dxserial/bin/dxserial serve /etc/dxserial/rig.toml\n" in text
    assert "ExecReload=/bin/kill -HUP $MAINPID\n" in text
    assert "RuntimeDirectory=dxserial" in text and "WantedBy=multi-user.target" in text
    assert ownership(text) == "ours"
    assert "systemctl enable --now dxserial-serve.service" in result.output
    assert not (root / "etc/udev").exists()  # the rig's unit only: no per-adapter files
    assert [a.verb for a in uninstall(root)] == ["remove"] and not unit.exists()


def test_install_serve_refuses_a_rig_file_with_a_mistake_or_a_hidden_path(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    rig = root / "etc/dxserial/rig.toml"
    rig.parent.mkdir(parents=True)
    rig.write_text(RIG.replace("listen", "lissen"))
    runner = CliRunner()
    args = ["udev", "install", "--root", str(root), "--exec", "/opt/dxserial/bin/dxserial"]
    bad = runner.invoke(app, [*args, "--serve", str(rig)])
    assert bad.exit_code == 1 and "unknown key 'lissen'" in str(bad.exception or bad.output)
    hidden = runner.invoke(app, [*args, "--serve", "/home/me/rig.toml"])
    assert hidden.exit_code == 1
    assert "cannot read files under /home" in str(hidden.exception or hidden.output)
    assert not (root / "etc/systemd").exists()
