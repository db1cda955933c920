"""A USB adapter found by its serial number, so a replugged adapter finds its line again.

udev's ``/dev/serial/by-id`` link carries the serial number in its name and keeps that name
across replugs (the tty behind it may change from ttyUSB0 to ttyUSB3): it is the answer
when there is one.  Without udev's links, sysfs says which tty has an adapter with that
serial number; that path holds only until the adapter is replugged.
"""

from __future__ import annotations

import os
from pathlib import Path


def find_serial_number(
    serial: str, *, dev_root: Path = Path("/dev"), sys_root: Path = Path("/sys")
) -> str | None:
    """The port of the USB adapter whose serial number is ``serial`` (None: not plugged in)."""
    by_id = dev_root / "serial" / "by-id"
    try:
        names = sorted(os.listdir(by_id))
    except OSError:
        names = []
    for name in names:  # usb-FTDI_FT232R_USB_UART_A1B2C3D4-if00-port0
        stem = name.rsplit("-if", 1)[0]
        if stem.endswith(f"_{serial}") or stem == f"usb-{serial}":
            return str(by_id / name)
    ttys = sys_root / "class" / "tty"
    try:
        entries = sorted(os.listdir(ttys))
    except OSError:
        return None
    for entry in entries:
        device = ttys / entry / "device"
        if not device.exists():  # a virtual console, a pty: no hardware behind it
            continue
        folder = Path(os.path.realpath(device))
        for up in (folder, *folder.parents):
            if up == up.parent or up.name == "devices":
                break
            if (up / "idVendor").is_file():
                try:
                    found = (up / "serial").read_text(errors="replace").strip()
                except OSError:
                    found = None
                if found == serial:
                    return str(dev_root / entry)
                break
    return None


__all__ = ["find_serial_number"]
