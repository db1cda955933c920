"""``dxserial ports`` against a fake sysfs/dev/proc tree, and once for real on this machine.

The fake tree copies the layout of the kernel: the tty's ``device`` link leads to the
usb-serial port (where ftdi_sio puts ``latency_timer``), whose parent is the USB interface
(``bInterfaceNumber``, the driver link) and whose grandparent is the USB device (ids,
strings, ``busnum``, ``devpath``). ttyS0 sits behind the serial core's "port"/"ctrl"
devices (kernel 6.5+) on a pnp device driven by "serial".
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from helpers import run_in_process
from typer.testing import CliRunner

from dxserial.cli import app
from dxserial.errors import ConfigError
from dxserial.host import ports

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets

runner = CliRunner()

KEYS = {
    "device", "target", "kind", "links", "by_id", "vid", "pid", "manufacturer", "product",
    "serial_number", "interface", "usb_path", "driver", "latency_timer_ms", "adapter",
    "dxserial_name", "in_use_by", "in_use_by_complete", "can_open", "owner", "group", "mode",
    "hints",
}  # fmt: skip


@dataclass
class Tree:
    sys: Path
    dev: Path
    proc: Path


def _files(folder: Path, **values: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in values.items():
        (folder / name).write_text(value + "\n")


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


def _usb_tty(
    tree: Tree, usb: str, tty: str, driver: str, port_driver: str, *, latency: str | None = None,
    **device: str,
) -> None:  # fmt: skip
    """A USB device, its interface 0, a usb-serial port and the tty, with class links."""
    bus = tree.sys / "bus"
    usb_dir = tree.sys / "devices/pci0000:00/0000:00:14.0/usb1" / usb
    _files(usb_dir, bNumInterfaces=" 1", **device)
    interface = usb_dir / f"{usb}:1.0"
    _files(interface, bInterfaceNumber="00", bInterfaceClass="ff")
    _link(interface / "driver", bus / "usb/drivers" / driver)
    _link(interface / "subsystem", bus / "usb")
    port = interface / tty
    _files(port, **({"latency_timer": latency} if latency is not None else {}))
    _link(port / "driver", bus / "usb-serial/drivers" / port_driver)
    _link(port / "subsystem", bus / "usb-serial")
    _tty(tree, port, tty)


def _tty(tree: Tree, port: Path, tty: str, **values: str) -> None:
    tty_dir = port / "tty" / tty
    _files(tty_dir, dev="188:0", **values)
    _link(tty_dir / "device", port)
    _link(tty_dir / "subsystem", tree.sys / "class/tty")
    _link(tree.sys / "class/tty" / tty, tty_dir)
    (tree.dev / tty).write_text("")


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    t = Tree(tmp_path / "sys", tmp_path / "dev", tmp_path / "proc")
    for folder in (
        "bus/usb/drivers/ftdi_sio", "bus/usb/drivers/ch341", "bus/usb/drivers/cp210x",
        "bus/usb-serial/drivers/ftdi_sio", "bus/usb-serial/drivers/ch341-uart",
        "bus/usb-serial/drivers/cp210x", "bus/pnp/drivers/serial",
        "bus/serial-base/drivers/port", "bus/serial-base/drivers/ctrl",
        "bus/platform/drivers/serial8250", "class/tty",
    ):  # fmt: skip
        (t.sys / folder).mkdir(parents=True)
    t.dev.mkdir()
    _usb_tty(
        t, "1-2", "ttyUSB0", "ftdi_sio", "ftdi_sio", latency="16", idVendor="0403",
        idProduct="6001", manufacturer="FTDI", product="FT232R USB UART", serial="A10K3XYZ",
        busnum="1", devpath="2",
    )  # fmt: skip
    _usb_tty(
        t, "1-1.4", "ttyUSB1", "ch341", "ch341-uart", idVendor="1a86", idProduct="7523",
        product="USB Serial", busnum="1", devpath="1.4",
    )  # fmt: skip
    _usb_tty(
        t, "1-3", "ttyUSB2", "cp210x", "cp210x", idVendor="10c4", idProduct="ea60",
        manufacturer="Silicon Labs", product="CP2102 USB to UART Bridge Controller",
        serial="0001", busnum="1", devpath="3",
    )  # fmt: skip
    # ttyS0: a 16550A on a pnp device, behind the serial core's ctrl and port devices.
    pnp = t.sys / "devices/pnp0/00:01"
    _files(pnp, id="PNP0501")
    _link(pnp / "driver", t.sys / "bus/pnp/drivers/serial")
    _link(pnp / "subsystem", t.sys / "bus/pnp")
    ctrl = pnp / "00:01:0"
    port = ctrl / "00:01:0.0"
    for folder, driver in ((ctrl, "ctrl"), (port, "port")):
        folder.mkdir(parents=True)
        _link(folder / "driver", t.sys / "bus/serial-base/drivers" / driver)
        _link(folder / "subsystem", t.sys / "bus/serial-base")
    _tty(t, port, "ttyS0", type="4")
    # ttyS1: a legacy placeholder without a UART (type 0); tty0: a virtual console.
    placeholder = t.sys / "devices/platform/serial8250"
    placeholder.mkdir(parents=True)
    _link(placeholder / "driver", t.sys / "bus/platform/drivers/serial8250")
    _tty(t, placeholder, "ttyS1", type="0")
    _files(t.sys / "devices/virtual/tty/tty0", dev="4:0")
    _link(t.sys / "class/tty/tty0", t.sys / "devices/virtual/tty/tty0")
    # udev's links.
    _link(t.dev / "serial/by-id/usb-FTDI_FT232R_USB_UART_A10K3XYZ-if00-port0", t.dev / "ttyUSB0")
    _link(t.dev / "serial/by-path/pci-0000:00:14.0-usb-0:2:1.0-port0", t.dev / "ttyUSB0")
    _link(t.dev / "serial/by-id/usb-1a86_USB_Serial-if00-port0", t.dev / "ttyUSB1")
    _link(t.dev / "dxserial/sn_A10K3XYZ_00", t.dev / "ttyUSB0")
    # Processes: 4242 (dosbox) holds ttyUSB1; 4243 holds nothing of interest.
    _files(t.proc / "4242", comm="dosbox")
    (t.proc / "4242/fd").mkdir()
    (t.proc / "4242/fd/0").symlink_to("/dev/null")
    (t.proc / "4242/fd/7").symlink_to(t.dev / "ttyUSB1")
    _files(t.proc / "4243", comm="bash")
    (t.proc / "4243/fd").mkdir()
    (t.proc / "4243/fd/1").symlink_to("/dev/pts/3")
    (t.proc / "sys").mkdir()
    return t


def listed(tree: Tree, **kwargs: object) -> dict[str, ports.PortInfo]:
    found = ports.list_ports(sys_root=tree.sys, dev_root=tree.dev, proc_root=tree.proc, **kwargs)  # type: ignore[arg-type]
    return {Path(p.device).name: p for p in found}


def test_every_column_from_the_fake_tree(tree: Tree) -> None:
    found = listed(tree)
    assert list(found) == ["ttyS0", "ttyUSB0", "ttyUSB1", "ttyUSB2"]  # no ttyS1, no tty0

    ftdi = found["ttyUSB0"]
    assert ftdi.device == str(tree.dev / "ttyUSB0") == ftdi.target
    assert (ftdi.kind, ftdi.vid, ftdi.pid) == ("usb-serial", "0403", "6001")
    assert (ftdi.manufacturer, ftdi.product) == ("FTDI", "FT232R USB UART")
    assert (ftdi.serial_number, ftdi.interface, ftdi.usb_path) == ("A10K3XYZ", "00", "1-2")
    assert ftdi.driver == "ftdi_sio"
    assert ftdi.latency_timer_ms == 16
    assert ftdi.adapter == "ftdi" and ftdi.dxserial_name == "sn_A10K3XYZ_00"
    assert ftdi.links == (
        str(tree.dev / "serial/by-id/usb-FTDI_FT232R_USB_UART_A10K3XYZ-if00-port0"),
        str(tree.dev / "serial/by-path/pci-0000:00:14.0-usb-0:2:1.0-port0"),
        str(tree.dev / "dxserial/sn_A10K3XYZ_00"),
    )
    assert ftdi.by_id == ftdi.links[:1]
    assert ftdi.holders == () and ftdi.holders_complete
    assert ftdi.can_open and ftdi.mode == "-rw-r--r--"
    assert any("latency timer 16 ms" in h for h in ftdi.hints)

    ch340 = found["ttyUSB1"]
    assert (ch340.vid, ch340.pid, ch340.product, ch340.serial_number) == (
        "1a86", "7523", "USB Serial", None,
    )  # fmt: skip
    assert ch340.manufacturer is None
    assert ch340.driver == "ch341" and ch340.latency_timer_ms is None
    assert ch340.dxserial_name == "usb1_1.4_00"  # no serial number: named by USB socket
    assert ch340.holders == (ports.Holder(4242, "dosbox"),)
    assert any("in use by dosbox (pid 4242)" in h for h in ch340.hints)

    cp210x = found["ttyUSB2"]
    assert cp210x.serial_number == "0001" and cp210x.dxserial_name == "usb1_3_00"
    assert any("shared by many adapters" in h for h in cp210x.hints)
    assert cp210x.links == ()

    uart = found["ttyS0"]
    assert (uart.kind, uart.driver, uart.vid, uart.dxserial_name) == ("uart", "serial", None, None)
    assert uart.hints == ()


def test_holders_that_cannot_be_seen_are_admitted(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ports.list_fds

    def denied(fd_dir: Path) -> list[str]:
        if fd_dir.parent.name == "4242":
            raise PermissionError(13, "Permission denied")
        return real(fd_dir)

    monkeypatch.setattr(ports, "list_fds", denied)
    found = listed(tree)
    assert found["ttyUSB1"].holders == ()
    assert not found["ttyUSB1"].holders_complete
    result = runner.invoke(app, ["ports", *_roots(tree)])
    assert "in use    not that you can see (root sees all)" in result.output


def test_access_hints(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    node = tree.dev / "ttyUSB0"
    os.chown(node, 0, 20)  # group dialout on Debian-like systems
    node.chmod(0o660)
    monkeypatch.setattr(ports.os, "access", lambda path, mode: False)
    monkeypatch.setattr(ports, "group_name", lambda gid: "dialout")
    monkeypatch.setattr(ports, "_gid", lambda group: 20)
    monkeypatch.setattr(ports, "in_group_db", lambda gid: False)
    ftdi = listed(tree)["ttyUSB0"]
    assert not ftdi.can_open and ftdi.group == "dialout" and ftdi.mode == "-rw-rw----"
    assert ftdi.hints[0] == (
        "only root and group dialout may open it: `sudo usermod -aG dialout $USER`, "
        "then log out and back in"
    )
    monkeypatch.setattr(ports, "in_group_db", lambda gid: True)
    monkeypatch.setattr(ports.os, "getgroups", lambda: [0])
    assert (
        listed(tree)["ttyUSB0"]
        .hints[0]
        .startswith("you are in group dialout, but this login session is not yet")
    )


def _roots(tree: Tree) -> list[str]:
    return ["--sys-root", str(tree.sys), "--dev-root", str(tree.dev), "--proc-root", str(tree.proc)]


def test_cli_json_and_text(tree: Tree) -> None:
    result = runner.invoke(app, ["ports", "--json", *_roots(tree)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [Path(d["device"]).name for d in data] == ["ttyS0", "ttyUSB0", "ttyUSB1", "ttyUSB2"]
    for entry in data:
        assert set(entry) == KEYS
    ftdi = data[1]
    assert ftdi["vid"] == "0403" and ftdi["latency_timer_ms"] == 16
    assert ftdi["dxserial_name"] == "sn_A10K3XYZ_00"
    assert data[2]["in_use_by"] == [{"pid": 4242, "command": "dosbox"}]

    text = runner.invoke(app, ["ports", *_roots(tree)])
    assert text.exit_code == 0
    block = text.output.split("\n\n")[1]
    assert (
        block.splitlines()[0] == f"{tree.dev}/ttyUSB0  usb-serial  0403:6001  FTDI FT232R USB UART"
    )
    assert "    serial    A10K3XYZ" in block
    assert "    usb       1-2, interface 00" in block
    assert "    driver    ftdi_sio, latency timer 16 ms" in block
    assert (
        "    dxserial  /dev/dxserial/sn_A10K3XYZ_00  (configuration: /etc/dxserial/sn_A10K3XYZ_00.toml)"
        in block
    )
    assert "    in use    no" in block
    assert "/dev/dxserial/usb1_1.4_00  (after `dxserial udev install`; configuration" in text.output
    assert "    access    you may open it (-rw-r--r-- root:root)" in block


def test_no_ports_says_how_to_look(tmp_path: Path) -> None:
    empty = Tree(tmp_path / "sys", tmp_path / "dev", tmp_path / "proc")
    result = runner.invoke(app, ["ports", *_roots(empty)])
    assert result.exit_code == 0
    assert result.output.startswith("No serial ports found.")
    assert "brltty" in result.output and "dmesg" in result.output
    assert json.loads(runner.invoke(app, ["ports", "--json", *_roots(empty)]).output) == []


def test_include_a_vpair_end(tree: Tree, tmp_path: Path) -> None:
    """A pty behind a link, as `dxserial vpair` publishes it; this process holds it open."""
    master, slave = os.openpty()
    try:
        link = tmp_path / "engine-a"
        link.symlink_to(os.ttyname(slave))
        found = ports.list_ports(
            sys_root=tree.sys, dev_root=tree.dev, include=[str(link)]
        )  # real /proc
        (entry,) = [p for p in found if p.device == str(link)]
        assert entry.kind == "pty" and entry.target == os.ttyname(slave)
        assert os.getpid() in {h.pid for h in entry.holders}
        assert not any("in use" in h for h in entry.hints)
        # A link to a port that is listed already becomes one of its links.
        again = ports.list_ports(
            sys_root=tree.sys, dev_root=tree.dev, proc_root=tree.proc,
            include=[str(tree.dev / "dxserial/sn_A10K3XYZ_00")],
        )  # fmt: skip
        assert len(again) == 4
    finally:
        os.close(master)
        os.close(slave)
    with pytest.raises(ConfigError, match="no such file"):
        ports.list_ports(sys_root=tree.sys, dev_root=tree.dev, include=[str(tmp_path / "gone")])


def test_pyserial_fills_in_what_the_scan_missed(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    from serial.tools import list_ports

    extra = tree.dev / "ttyACM0"
    extra.write_text("")
    fake = [
        SimpleNamespace(device=str(extra), vid=0x2341, pid=0x0043, manufacturer="Arduino",
                        product=None, serial_number="95530343"),
        SimpleNamespace(device=str(tree.dev / "ttyUSB1"), vid=0x1A86, pid=0x7523,
                        manufacturer="QinHeng", product="ignored", serial_number=None),
    ]  # fmt: skip
    monkeypatch.setattr(list_ports, "comports", lambda: fake)
    found = listed(tree, use_pyserial=True)
    assert found["ttyACM0"].vid == "2341" and found["ttyACM0"].manufacturer == "Arduino"
    assert found["ttyUSB1"].manufacturer == "QinHeng"  # was missing
    assert found["ttyUSB1"].product == "USB Serial"  # sysfs wins where it knew


def test_real_run_on_this_machine() -> None:
    result = run_in_process("ports", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert isinstance(data, list)
    for entry in data:
        assert set(entry) == KEYS
        assert entry["device"].startswith("/dev/")
    text = run_in_process("ports")
    assert text.returncode == 0, text.stderr
    assert text.stdout.strip()
