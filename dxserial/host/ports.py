"""The serial ports of this machine, with what matters before bridging one.

For each port: the stable links that point at it, the USB facts (VID:PID, maker, product,
serial number, driver), the FTDI latency timer, the /dev/dxserial name the shipped udev
rules give it, which processes hold it open, and whether this user may open it.

The facts come from sysfs, /dev and /proc, whose roots are parameters so tests can build
a fake tree. pyserial's ``serial.tools.list_ports`` reads the same sysfs files but only
under the real /sys; on the real system its answer is merged in, so a port that this
module's scan missed still shows up.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dxserial.errors import ConfigError
from dxserial.host.udev.files import (
    PLACEHOLDER_SERIALS,
    adapter_family,
    predicted_name,
    udev_serial,
)
from dxserial.transports.permissions import UDEV_HINT, group_name, in_group_db

#: Folders of udev's stable links: by-id (maker, product, serial), by-path, ours.
LINK_DIRS = ("serial/by-id", "serial/by-path", "dxserial")

NO_PORTS_HELP = """\
No serial ports found.
  - Plug the adapter in, then `journalctl -k -n 30` (or `sudo dmesg | tail -30`): a line
    such as "... converter now attached to ttyUSB0" names the port. `lsusb` shows whether
    the USB device is seen at all; if it is but no ttyUSB appears, its driver is missing.
  - A CH340 that appears and is gone a second later ("usbfs: interface 0 claimed by ch341
    while 'brltty' sets config"): brltty took it. Remove brltty if nobody uses a braille
    display (`sudo apt remove brltty`); see firmware_notes/port-grabbers.md in the source.
  - A `dxserial vpair` end or another pseudo-terminal is not listed by itself: pass its
    path with --include PATH."""


@dataclass(frozen=True)
class Holder:
    """A process that has the port open."""

    pid: int
    command: str


@dataclass(frozen=True)
class PortInfo:
    """One serial port. ``None`` means "not known" or "does not apply" (e.g. no USB)."""

    device: str
    target: str
    kind: str  # "usb-serial", "usb-acm", "uart", "pty" or "other"
    links: tuple[str, ...] = ()
    vid: str | None = None
    pid: str | None = None
    manufacturer: str | None = None
    product: str | None = None
    serial_number: str | None = None
    interface: str | None = None
    usb_path: str | None = None
    driver: str | None = None
    latency_timer_ms: int | None = None
    latency_timer_file: str | None = None
    adapter: str | None = None
    dxserial_name: str | None = None
    holders: tuple[Holder, ...] = ()
    holders_complete: bool = True
    can_open: bool = False
    owner: str | None = None
    group: str | None = None
    mode: str | None = None
    hints: tuple[str, ...] = field(default_factory=tuple)

    @property
    def by_id(self) -> tuple[str, ...]:
        return tuple(link for link in self.links if "/serial/by-id/" in link)

    def as_dict(self) -> dict[str, Any]:
        """Stable keys for ``dxserial ports --json``."""
        return {
            "device": self.device,
            "target": self.target,
            "kind": self.kind,
            "links": list(self.links),
            "by_id": list(self.by_id),
            "vid": self.vid,
            "pid": self.pid,
            "manufacturer": self.manufacturer,
            "product": self.product,
            "serial_number": self.serial_number,
            "interface": self.interface,
            "usb_path": self.usb_path,
            "driver": self.driver,
            "latency_timer_ms": self.latency_timer_ms,
            "adapter": self.adapter,
            "dxserial_name": self.dxserial_name,
            "in_use_by": [{"pid": h.pid, "command": h.command} for h in self.holders],
            "in_use_by_complete": self.holders_complete,
            "can_open": self.can_open,
            "owner": self.owner,
            "group": self.group,
            "mode": self.mode,
            "hints": list(self.hints),
        }


def list_ports(
    *,
    sys_root: Path = Path("/sys"),
    dev_root: Path = Path("/dev"),
    proc_root: Path = Path("/proc"),
    include: Sequence[str] = (),
    use_pyserial: bool | None = None,
) -> list[PortInfo]:
    """Every serial port with a device behind it, plus the ``include`` paths (ptys).

    ``use_pyserial`` defaults to "only when looking at the real /sys".
    """
    ports = [
        _from_sysfs(name, folder, sys_root, dev_root) for name, folder in _sysfs_ttys(sys_root)
    ]
    if use_pyserial is None:
        use_pyserial = sys_root == Path("/sys")
    if use_pyserial:
        ports = _merge_pyserial(ports)
    links = _links(dev_root)
    ports = [replace(p, links=tuple(links.get(p.target, ()))) for p in ports]
    for path in include:
        ports = _include(ports, path)
    wanted = {p.target for p in ports} | {p.device for p in ports}
    holders, complete = scan_holders(proc_root, wanted)
    result = []
    for port in ports:
        found = holders.get(port.target, []) + [
            h for h in holders.get(port.device, []) if port.device != port.target
        ]
        port = replace(port, holders=tuple(found), holders_complete=complete)
        port = _with_access(port)
        result.append(replace(port, hints=_hints(port)))
    return sorted(result, key=lambda p: _natural(p.device))


def _natural(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _sysfs_ttys(sys_root: Path) -> Iterable[tuple[str, Path]]:
    """(name, port device folder) of each tty that has a device behind it.

    Virtual consoles, ptmx and /dev/console have no ``device`` link; legacy ttyS ports
    without a UART behind them report ``type`` 0 (PORT_UNKNOWN) and are left out too.
    """
    class_dir = sys_root / "class" / "tty"
    try:
        names = sorted(os.listdir(class_dir))
    except OSError:
        return
    for name in names:
        device_link = class_dir / name / "device"
        if not device_link.exists():
            continue
        if _read(class_dir / name / "type") == "0":
            continue
        yield name, Path(os.path.realpath(device_link))


def _subsystem(device_dir: Path) -> str | None:
    link = device_dir / "subsystem"
    return os.path.basename(os.path.realpath(link)) if link.exists() else None


def _driver(device_dir: Path) -> str | None:
    link = device_dir / "driver"
    return os.path.basename(os.path.realpath(link)) if link.exists() else None


def _from_sysfs(name: str, port_dir: Path, sys_root: Path, dev_root: Path) -> PortInfo:
    device = dev_root / name
    subsystem = _subsystem(port_dir)
    interface_dir: Path | None = None
    usb_dir: Path | None = None
    devices_root = sys_root / "devices"
    for folder in (port_dir, *port_dir.parents):
        if folder == devices_root or folder == folder.parent:
            break
        if interface_dir is None and (folder / "bInterfaceNumber").is_file():
            interface_dir = folder
        if (folder / "idVendor").is_file():
            usb_dir = folder
            break
    if usb_dir is not None:
        kind = "usb-acm" if subsystem == "usb" else "usb-serial"
        vid = _read(usb_dir / "idVendor")
        pid = _read(usb_dir / "idProduct")
        serial = _read(usb_dir / "serial")
        interface = _read(interface_dir / "bInterfaceNumber") if interface_dir else None
        latency_file = port_dir / "latency_timer"
        latency = _read(latency_file)
        adapter = adapter_family(vid, pid) if kind == "usb-serial" else None
        name_guess = None
        if adapter is not None:
            name_guess = predicted_name(
                serial, interface, _read(usb_dir / "busnum"), _read(usb_dir / "devpath")
            )
        return PortInfo(
            device=str(device),
            target=os.path.realpath(device),
            kind=kind,
            vid=vid,
            pid=pid,
            manufacturer=_read(usb_dir / "manufacturer"),
            product=_read(usb_dir / "product"),
            serial_number=serial,
            interface=interface,
            usb_path=usb_dir.name,
            driver=_driver(interface_dir) if interface_dir else _driver(port_dir),
            latency_timer_ms=int(latency) if latency and latency.isdigit() else None,
            latency_timer_file=str(latency_file) if latency is not None else None,
            adapter=adapter,
            dxserial_name=name_guess,
        )
    # A UART on the main board or a PCI card: the first driver that is not the serial
    # core's own "port"/"ctrl" layer (kernel 6.5+) names the hardware's driver.
    driver = None
    for folder in (port_dir, *port_dir.parents):
        if folder == devices_root or folder == folder.parent:
            break
        if _subsystem(folder) != "serial-base" and _driver(folder):
            driver = _driver(folder)
            break
    return PortInfo(device=str(device), target=os.path.realpath(device), kind="uart", driver=driver)


def _merge_pyserial(ports: list[PortInfo]) -> list[PortInfo]:
    """Add what pyserial knows and the sysfs scan did not (real system only)."""
    try:
        from serial.tools import list_ports as pyserial_ports
    except ImportError:  # pragma: no cover - pyserial is a dependency
        return ports
    by_target = {p.target: i for i, p in enumerate(ports)}
    merged = list(ports)
    for info in pyserial_ports.comports():
        facts = _pyserial_facts(info)
        target = os.path.realpath(info.device)
        if target in by_target:
            index = by_target[target]
            current = merged[index]
            missing = {k: v for k, v in facts.items() if getattr(current, k) is None}
            merged[index] = replace(current, **missing)
        else:
            kind = "usb-serial" if facts["vid"] else "other"
            merged.append(PortInfo(device=info.device, target=target, kind=kind, **facts))
            by_target[target] = len(merged) - 1
    return merged


def _pyserial_facts(info: Any) -> dict[str, Any]:
    vid = f"{info.vid:04x}" if isinstance(info.vid, int) else None
    pid = f"{info.pid:04x}" if isinstance(info.pid, int) else None
    return {
        "vid": vid,
        "pid": pid,
        "manufacturer": info.manufacturer,
        "product": info.product,
        "serial_number": info.serial_number,
    }


def _links(dev_root: Path) -> dict[str, list[str]]:
    """target -> the symlinks under /dev/serial/by-id, by-path and /dev/dxserial."""
    found: dict[str, list[str]] = {}
    for sub in LINK_DIRS:
        folder = dev_root / sub
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in entries:
            link = folder / entry
            if link.is_symlink():
                found.setdefault(os.path.realpath(link), []).append(str(link))
    return found


def _include(ports: list[PortInfo], path: str) -> list[PortInfo]:
    """Add a pty (a ``dxserial vpair`` end) or other path given with --include."""
    if not os.path.exists(path):
        raise ConfigError(f"--include {path}: no such file (is the vpair running?)")
    if os.path.isdir(path):
        raise ConfigError(
            f"--include {path}: a directory, not a port; name a pty (a dxserial vpair end) "
            "or a serial device"
        )
    target = os.path.realpath(path)
    for index, port in enumerate(ports):
        if port.target == target:
            if path not in port.links and path != port.device:
                ports = list(ports)
                ports[index] = replace(port, links=(*port.links, path))
            return ports
    kind = "pty" if target.startswith("/dev/pts/") else "other"
    return [*ports, PortInfo(device=path, target=target, kind=kind)]


def scan_holders(proc_root: Path, wanted: set[str]) -> tuple[dict[str, list[Holder]], bool]:
    """Processes whose open files include a wanted path, and whether all could be seen.

    Another user's /proc/PID/fd is unreadable without root; such processes are counted
    as unseen, so "nobody holds it" is only claimed when every process was looked at.
    """
    found: dict[str, list[Holder]] = {}
    complete = True
    try:
        pids = [entry for entry in os.listdir(proc_root) if entry.isdigit()]
    except OSError:
        return found, False
    for pid in pids:
        fd_dir = proc_root / pid / "fd"
        try:
            fds = list_fds(fd_dir)
        except PermissionError:
            complete = False
            continue
        except OSError:  # the process ended meanwhile
            continue
        hits = set()
        for fd in fds:
            try:
                target = os.readlink(fd_dir / fd)
            except OSError:
                continue
            if target in wanted:
                hits.add(target)
        if hits:
            command = _read(proc_root / pid / "comm") or "?"
            for target in hits:
                found.setdefault(target, []).append(Holder(int(pid), command))
    return found, complete


def list_fds(fd_dir: Path) -> list[str]:
    """The open file descriptors of one process (a separate function so tests can deny it)."""
    return os.listdir(fd_dir)


def _with_access(port: PortInfo) -> PortInfo:
    try:
        st = os.stat(port.device)
    except OSError:
        return replace(port, can_open=False)
    can_open = os.access(port.device, os.R_OK | os.W_OK)
    return replace(
        port,
        can_open=can_open,
        owner=_user_name(st.st_uid),
        group=group_name(st.st_gid),
        mode=stat.filemode(st.st_mode),
    )


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _hints(port: PortInfo) -> tuple[str, ...]:
    hints: list[str] = []
    if not os.path.exists(port.device):
        hints.append(f"{port.device} does not exist: the driver made no device node (dmesg?)")
    elif not port.can_open:
        group = port.group or "dialout"
        gid = _gid(group)
        if gid is not None and in_group_db(gid) and gid not in os.getgroups():
            hints.append(
                f"you are in group {group}, but this login session is not yet: log out and "
                f"back in (or run `newgrp {group}`)"
            )
        elif port.group and port.group != "root":
            hints.append(
                f"only {port.owner} and group {group} may open it: `sudo usermod -aG {group} "
                "$USER`, then log out and back in"
            )
        else:
            hints.append(
                f"not readable and writable for you ({port.mode} {port.owner}:{port.group}); "
                f"{UDEV_HINT}"
            )
    if port.holders and port.kind != "pty":
        who = ", ".join(f"{h.command} (pid {h.pid})" for h in port.holders)
        hints.append(f"in use by {who}: two programs on one port each get part of the bytes")
    if port.latency_timer_ms is not None and port.latency_timer_ms > 1:
        hints.append(
            f"FTDI latency timer {port.latency_timer_ms} ms: NULMODEM waits for every echo, "
            "so each character may wait that long; the dxserial udev rules set 1 ms "
            f"(now: echo 1 | sudo tee {port.latency_timer_file})"
        )
    cleaned = udev_serial(port.serial_number)
    if port.adapter and cleaned in PLACEHOLDER_SERIALS:
        hints.append(
            f"serial number {port.serial_number} is shared by many adapters: it is named "
            "after its USB socket instead, so keep it in the same socket"
        )
    if port.kind == "usb-serial" and port.vid and port.adapter is None:
        hints.append(
            f"70-dxserial.rules does not claim {port.vid}:{port.pid}; add it by copying one of "
            "the rules file's adapter lines (`dxserial udev print rules`)"
        )
    return tuple(hints)


def _gid(group: str) -> int | None:
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        return None
