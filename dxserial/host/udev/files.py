"""The files that ship with dxserial for udev and systemd, and the names their rules give.

Both halves of ``dxserial udev`` start here: the installer renders these files and the
linter checks the rules file by default; ``dxserial ports`` predicts the /dev/dxserial/
name of each adapter the rules claim.  The shipped files sit inside the installed package,
or in the ``udev/`` folder of a source checkout.
"""

from __future__ import annotations

import re
from enum import StrEnum
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from dxserial.errors import DxSerialError

RULES_FILE = "70-dxserial.rules"
UNIT_FILE = "dxserial@.service"
SERVE_UNIT_FILE = "dxserial-serve.service"
EXAMPLE_FILE = "example.toml"

#: The adapters the rules file claims: chip family -> (USB vendor id, product ids).
#: Kept equal to the "which adapters" lines of the rules file (a test compares them).
ADAPTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ftdi": ("0403", ("6001", "6010", "6011", "6014", "6015")),
    "pl2303": ("067b", ("2303", "23a3")),
    "ch34x": ("1a86", ("7523", "5523")),
    "cp210x": ("10c4", ("ea60", "ea70")),
}

#: Serial numbers that do not tell two adapters apart (the rules file lists the same).
PLACEHOLDER_SERIALS: tuple[str, ...] = (
    "A50285BI", "0", "00", "000", "0000", "00000000",
    "1", "01", "001", "0001", "1234", "12345678",
)  # fmt: skip

#: Adapter names: what systemd leaves unescaped in a unit name, so that
#: dev-dxserial-NAME.device and dxserial@NAME.service need no \\x2d escapes.
NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.]{0,99}")


class Kind(StrEnum):
    """The shipped files."""

    rules = "rules"
    unit = "unit"
    config = "config"
    serve = "serve"  # the unit of `dxserial serve RIG.toml`


_FILES = {
    Kind.rules: RULES_FILE, Kind.unit: UNIT_FILE, Kind.config: EXAMPLE_FILE,
    Kind.serve: SERVE_UNIT_FILE,
}


# --- the shipped files ------------------------------------------------------------------


def shipped_file(kind: Kind) -> Traversable:
    """The shipped file: inside the installed package, else in a checkout's ``udev/``.

    A wheel carries the files as ``dxserial/_data/udev/`` (hatch force-include); an
    editable install imports the package from the checkout, where they sit in ``udev/``.
    """
    name = _FILES[kind]
    packaged = resources.files("dxserial") / "_data" / "udev" / name
    if packaged.is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "udev" / name
    if checkout.is_file():
        return checkout
    raise DxSerialError(
        f"{name} is missing from this installation of dxserial "
        f"(looked in {packaged} and {checkout}); reinstall dxserial"
    )


def shipped_text(kind: Kind) -> str:
    return shipped_file(kind).read_text(encoding="utf-8")



# --- names the rules give ---------------------------------------------------------------


def adapter_family(vid: str | None, pid: str | None) -> str | None:
    """The chip family the rules file claims for this VID:PID, or ``None``."""
    if vid is None or pid is None:
        return None
    for family, (vendor, products) in ADAPTERS.items():
        if vid.lower() == vendor and pid.lower() in products:
            return family
    return None


def udev_serial(raw: str | None) -> str | None:
    """The serial number as udev's usb_id builtin passes it on (ID_SERIAL_SHORT).

    usb_id turns runs of white space into one "_" and other characters outside
    ``0-9A-Za-z#+-.:=@_`` into "_"; this mirrors that closely enough to predict names.
    """
    if raw is None:
        return None
    text = "_".join(raw.split())
    text = re.sub(r"[^0-9A-Za-z#+\-.:=@_]", "_", text)
    return text or None


def serial_usable(serial: str | None) -> bool:
    """Whether the rules name an adapter after this (udev-cleaned) serial number."""
    return bool(
        serial and re.fullmatch(r"[A-Za-z0-9_]+", serial) and serial not in PLACEHOLDER_SERIALS
    )


def predicted_name(
    serial: str | None, interface: str | None, busnum: str | None, devpath: str | None
) -> str | None:
    """The /dev/dxserial/ name the rules give a claimed adapter (see 70-dxserial.rules)."""
    iface = interface or "00"
    cleaned = udev_serial(serial)
    if serial_usable(cleaned):
        return f"sn_{cleaned}_{iface}"
    if busnum and devpath:
        return f"usb{busnum}_{devpath}_{iface}"
    return None
