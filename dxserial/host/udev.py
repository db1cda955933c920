"""The udev rules, systemd unit and example configuration that ship with dxserial.

Users expect a bridge to come up by itself when they plug in their USB-serial adapter.
This module finds the shipped files (inside the installed package, or in the ``udev/``
folder of a source checkout), renders them for this machine, installs and uninstalls them
without touching files a person wrote or edited, and checks a udev rules file with a
syntax check of its own (``udevadm verify`` only exists from systemd 254 on).

Every installed file starts with a marker line holding the SHA-256 of the rest, so
``uninstall`` removes a file only while it is still exactly what ``install`` wrote.
"""

from __future__ import annotations

import difflib
import errno
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

from dxserial.errors import ConfigError, DxSerialError

RULES_FILE = "70-dxserial.rules"
UNIT_FILE = "dxserial@.service"
EXAMPLE_FILE = "example.toml"

#: Where ``install`` puts each file, relative to the root (``/`` normally).
RULES_DIR = Path("etc/udev/rules.d")
UNIT_DIR = Path("etc/systemd/system")
CONFIG_DIR = Path("etc/dxserial")

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
_GROUP_RE = re.compile(r"[a-z_][a-z0-9_-]{0,31}")

EXIT_NOPERM = 77  # sysexits.h EX_NOPERM: what install/uninstall return without permission

_MARKER_RE = re.compile(r"# dxserial-managed sha256=([0-9a-f]{64})\b[^\n]*\n")
_MARKER_TEXT = (
    "# dxserial-managed sha256={digest}: `dxserial udev uninstall` removes this file while it "
    "is unchanged; delete this line to keep it.\n"
)


class Kind(StrEnum):
    """The three shipped files."""

    rules = "rules"
    unit = "unit"
    config = "config"


_FILES = {Kind.rules: RULES_FILE, Kind.unit: UNIT_FILE, Kind.config: EXAMPLE_FILE}


class InstallPermissionError(DxSerialError, PermissionError):
    """Writing or removing a file needs more rights than this process has."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path
        self.reason = reason


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
    checkout = Path(__file__).resolve().parents[2] / "udev" / name
    if checkout.is_file():
        return checkout
    raise DxSerialError(
        f"{name} is missing from this installation of dxserial "
        f"(looked in {packaged} and {checkout}); reinstall dxserial"
    )


def shipped_text(kind: Kind) -> str:
    return shipped_file(kind).read_text(encoding="utf-8")


def dxserial_executable() -> str:
    """The command that starts this dxserial, as an absolute path for ExecStart and sudo.

    sudo's secure_path and a unit's environment rarely include a virtualenv's bin folder,
    so a bare ``dxserial`` would not be found there.
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if os.path.basename(argv0) == "dxserial":
        found = argv0 if os.sep in argv0 else shutil.which(argv0)
        if found:
            return os.path.abspath(found)
    found = shutil.which("dxserial")
    if found:
        return os.path.abspath(found)
    return f"{sys.executable} -m dxserial"


#: What the unit cannot see: ProtectHome=yes hides these ...
_HOMES = ("/root", "/home", "/run/user")
#: ... and PrivateTmp=yes gives it empty ones of its own.
_TMPS = ("/tmp", "/var/tmp")


def unit_cannot_run(exe: str, *, this: bool) -> str | None:
    """Why the unit could not start ``exe``, naming the path; ``None`` if it can.

    Checks the program, the interpreter on a script's ``#!`` line, and (``this``: ``exe``
    is this dxserial) this interpreter and this package, each also with its symlinks
    resolved: a venv's python is often a link into a home directory (pyenv).
    """
    program = exe.split()[0]
    paths = [program]
    try:
        with open(program, "rb") as handle:
            first = handle.readline(512)
        if first.startswith(b"#!"):
            paths.append(first[2:].decode("utf-8", "replace").split()[0])
    except (OSError, IndexError):
        pass
    if this:
        paths += [sys.executable, str(Path(__file__).resolve().parent.parent)]
    for path in dict.fromkeys(p for given in paths for p in (given, os.path.realpath(given))):
        for top in (*_HOMES, *_TMPS):
            if path == top or path.startswith(top + "/"):
                hides = "ProtectHome" if top in _HOMES else "PrivateTmp"
                return (
                    f"{path} is under {top}, which the unit's {hides}=yes hides: the bridge "
                    "could not start. Install dxserial system-wide (python3 -m venv "
                    "/opt/dxserial && /opt/dxserial/bin/pip install dxserial) and run "
                    "/opt/dxserial/bin/dxserial udev install, or name such an install with --exec"
                )
    return None


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise ConfigError(
            f"--name {name!r}: use letters, digits, '_' and '.' only, as in the names that "
            "`dxserial ports` shows (other characters are escaped in systemd unit names)"
        )
    return name


def check_group(group: str) -> str:
    if not _GROUP_RE.fullmatch(group):
        raise ConfigError(f"--group {group!r} is not a group name")
    return group


def render(
    kind: Kind, *, exe: str | None = None, group: str = "dialout", name: str = "NAME"
) -> str:
    """The shipped text with this machine's values: dxserial's path, the group, the name."""
    text = shipped_text(kind)
    if kind is Kind.rules:
        return text.replace('GROUP="dialout"', f'GROUP="{check_group(group)}"')
    if kind is Kind.unit:
        text = text.replace("@DXSERIAL@", exe or dxserial_executable())
        return text.replace(
            "SupplementaryGroups=dialout", f"SupplementaryGroups={check_group(group)}"
        )
    return text.replace("@NAME@", check_name(name))


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


# --- marker lines -----------------------------------------------------------------------


def with_marker(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return _MARKER_TEXT.format(digest=digest) + text


Ownership = Literal["ours", "modified", "foreign"]


def ownership(text: str) -> Ownership:
    """Whether install wrote ``text`` ("ours"), wrote it and someone edited it since, or not."""
    match = _MARKER_RE.match(text)
    if match is None:
        return "foreign"
    rest = text[match.end() :]
    same = hashlib.sha256(rest.encode("utf-8")).hexdigest() == match.group(1)
    return "ours" if same else "modified"


# --- install / uninstall ----------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One file install writes. ``keep_existing``: never replace (configuration files)."""

    path: Path
    text: str
    keep_existing: bool = False


@dataclass(frozen=True)
class Action:
    """What install or uninstall did, or would do, with one file."""

    path: Path
    verb: str  # "write", "update", "unchanged", "keep", "conflict", "remove", "modified"
    note: str = ""


def plan_install(
    root: Path, names: Sequence[str], *, exe: str, group: str = "dialout"
) -> list[Target]:
    """The files to write under ``root``: rules, unit, and one configuration per name.

    Without names the configuration goes to ``example.toml``, which no adapter uses.
    """
    targets = [
        Target(root / RULES_DIR / RULES_FILE, with_marker(render(Kind.rules, group=group))),
        Target(root / UNIT_DIR / UNIT_FILE, with_marker(render(Kind.unit, exe=exe, group=group))),
    ]
    for name in names or ["NAME"]:
        filename = EXAMPLE_FILE if not names else f"{check_name(name)}.toml"
        text = with_marker(render(Kind.config, name=name))
        targets.append(Target(root / CONFIG_DIR / filename, text, keep_existing=True))
    return targets


def _decide(target: Target, force: bool) -> Action:
    try:
        current = target.path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return Action(target.path, "write")
    except UnicodeDecodeError:
        current = ""
    except IsADirectoryError:
        raise ConfigError(f"{target.path} is a directory") from None
    if target.keep_existing:
        return Action(target.path, "keep", "exists already; left as it is")
    if current == target.text:
        return Action(target.path, "unchanged")
    state = ownership(current)
    if state == "ours" or force:
        return Action(target.path, "update", "" if state == "ours" else "replaced (--force)")
    why = "edited since it was installed" if state == "modified" else "not written by dxserial"
    return Action(target.path, "conflict", f"{why}; use --force to replace it")


def _writable_dir(directory: Path) -> None:
    """Raise unless files can be created in ``directory`` (or the folders leading to it).

    Checks the nearest folder that exists, the way the kernel will: os.access() also
    answers no for root on a read-only file system or without CAP_DAC_OVERRIDE.
    """
    probe = directory
    try:
        while not probe.exists() and probe.parent != probe:
            probe = probe.parent
        if not probe.is_dir():
            raise ConfigError(f"{probe} is not a directory")
    except PermissionError:
        raise InstallPermissionError(directory, f"no permission to look into {probe}") from None
    if not may_write(probe):
        raise InstallPermissionError(directory, f"no permission to write in {probe}")


def may_write(directory: Path) -> bool:
    """Whether this process may create files in ``directory`` (a seam for tests)."""
    return os.access(directory, os.W_OK | os.X_OK)


def install(targets: Sequence[Target], *, force: bool = False) -> list[Action]:
    """Write the targets. Writes nothing at all when one is a conflict or not permitted."""
    actions = [_decide(t, force) for t in targets]
    if any(a.verb == "conflict" for a in actions):
        return actions
    for target, action in zip(targets, actions, strict=True):
        if action.verb in ("write", "update"):
            _writable_dir(target.path.parent)
    for target, action in zip(targets, actions, strict=True):
        if action.verb in ("write", "update"):
            _write(target.path, target.text)
    return actions


def _write(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.dxserial-tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.chmod(0o644)
        os.replace(tmp, path)
    except PermissionError as exc:
        raise InstallPermissionError(path, exc.strerror or "permission denied") from None
    except OSError as exc:
        if exc.errno == errno.EROFS:
            raise InstallPermissionError(path, "read-only file system") from None
        raise DxSerialError(f"cannot write {path}: {exc.strerror or exc}") from None


def installed_files(root: Path) -> list[Path]:
    """Every file uninstall looks at: the rules, the unit, every configuration file."""
    files = [root / RULES_DIR / RULES_FILE, root / UNIT_DIR / UNIT_FILE]
    config_dir = root / CONFIG_DIR
    if config_dir.is_dir():
        files.extend(sorted(config_dir.glob("*.toml")))
    return files


def uninstall(root: Path) -> list[Action]:
    """Remove the files install wrote and nobody changed since; report the others."""
    actions: list[Action] = []
    removable: list[Path] = []
    for path in installed_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError, UnicodeDecodeError):
            continue
        state = ownership(text)
        if state == "ours":
            removable.append(path)
        elif state == "modified":
            actions.append(Action(path, "modified", "edited since it was installed; kept"))
        elif path.suffix != ".toml":
            actions.append(Action(path, "keep", "not written by dxserial; kept"))
    for path in removable:
        _writable_dir(path.parent)
    for path in removable:
        try:
            path.unlink()
        except PermissionError as exc:
            raise InstallPermissionError(path, exc.strerror or "permission denied") from None
        except OSError as exc:
            if exc.errno == errno.EROFS:
                raise InstallPermissionError(path, "read-only file system") from None
            raise DxSerialError(f"cannot remove {path}: {exc.strerror or exc}") from None
        actions.append(Action(path, "remove"))
    return actions


# --- the rules checker -------------------------------------------------------------------

_MATCH = frozenset({"==", "!="})
_ASSIGN_SET = frozenset({"=", ":="})
_OPERATORS = ("==", "!=", "+=", "-=", ":=", "=")
_SHOWN = ("==", "!=", "=", "+=", "-=", ":=")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _Key:
    ops: frozenset[str]
    attr: Literal["required", "optional", "none"] = "none"
    attr_values: frozenset[str] | None = None


_KEYS: dict[str, _Key] = {
    # Match keys: compared with == or !=.
    "ACTION": _Key(_MATCH),
    "DEVPATH": _Key(_MATCH),
    "KERNEL": _Key(_MATCH),
    "KERNELS": _Key(_MATCH),
    "SUBSYSTEM": _Key(_MATCH),
    "SUBSYSTEMS": _Key(_MATCH),
    "DRIVER": _Key(_MATCH),
    "DRIVERS": _Key(_MATCH),
    "ATTRS": _Key(_MATCH, "required"),
    "TAGS": _Key(_MATCH),
    "RESULT": _Key(_MATCH),
    "CONST": _Key(_MATCH, "required", frozenset({"arch", "virt"})),
    "TEST": _Key(_MATCH, "optional"),
    # PROGRAM and IMPORT run something and match on its success; udev takes =, += and :=
    # for == with them.
    "PROGRAM": _Key(_MATCH | {"=", "+=", ":="}),
    "IMPORT": _Key(
        _MATCH | {"=", "+=", ":="},
        "required",
        frozenset({"program", "builtin", "file", "db", "cmdline", "parent"}),
    ),
    # Keys that can be matched and assigned.
    "NAME": _Key(_MATCH | _ASSIGN_SET),
    "SYMLINK": _Key(_MATCH | _ASSIGN_SET | {"+=", "-="}),
    "TAG": _Key(_MATCH | _ASSIGN_SET | {"+=", "-="}),
    "ENV": _Key(_MATCH | _ASSIGN_SET | {"+="}, "required"),
    "ATTR": _Key(_MATCH | _ASSIGN_SET, "required"),
    "SYSCTL": _Key(_MATCH | _ASSIGN_SET, "required"),
    # Assignment keys.
    "OWNER": _Key(_ASSIGN_SET),
    "GROUP": _Key(_ASSIGN_SET),
    "MODE": _Key(_ASSIGN_SET),
    "SECLABEL": _Key(_ASSIGN_SET | {"+="}, "required"),
    "RUN": _Key(_ASSIGN_SET | {"+="}, "optional", frozenset({"program", "builtin"})),
    "OPTIONS": _Key(_ASSIGN_SET | {"+="}),
    "LABEL": _Key(frozenset({"="})),
    "GOTO": _Key(frozenset({"="})),
}


@dataclass(frozen=True)
class RuleProblem:
    """One thing wrong in a rules file, at a 1-based line and column."""

    line: int
    column: int
    message: str

    def format(self, filename: str) -> str:
        return f"{filename}:{self.line}: column {self.column}: {self.message}"


@dataclass(frozen=True)
class _Token:
    key: str
    attr: str | None
    op: str
    value: str
    line: int
    column: int


class _Problem(Exception):
    def __init__(self, offset: int, message: str) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message


def _logical_lines(text: str) -> Iterable[tuple[str, list[tuple[int, int]]]]:
    """Join lines ending in a backslash; map each character back to (line, column)."""
    parts: list[str] = []
    where: list[tuple[int, int]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not parts and raw.lstrip().startswith("#"):
            continue
        continued = raw.endswith("\\")
        body = raw[:-1] if continued else raw
        parts.append(body)
        where.extend((number, column) for column in range(1, len(body) + 1))
        where.append((number, len(body) + 1))  # the line's end, for "expected ..." errors
        if continued:
            continue
        yield " ".join(parts), where
        parts, where = [], []
    if parts:
        yield " ".join(parts), where


def _tokens(line: str) -> list[tuple[int, str, str | None, str, str]]:
    """Split one logical line into (offset, key, attr, operator, value); raise _Problem."""
    found: list[tuple[int, str, str | None, str, str]] = []
    i, end = 0, len(line)
    while True:
        while i < end and line[i] in " \t":
            i += 1
        if i >= end:
            return found
        start = i
        key_match = _KEY_RE.match(line, i)
        if key_match is None:
            raise _Problem(i, f"expected a key, found {line[i]!r}")
        key = key_match.group()
        i = key_match.end()
        attr: str | None = None
        if i < end and line[i] == "{":
            close = line.find("}", i)
            if close < 0:
                raise _Problem(i, f"{key}{{ without a closing }}")
            attr = line[i + 1 : close]
            i = close + 1
        while i < end and line[i] in " \t":
            i += 1
        op = next((o for o in _OPERATORS if line.startswith(o, i)), None)
        if op is None:
            raise _Problem(i, f"expected an operator (==, !=, =, +=, -=, :=) after {key}")
        i += len(op)
        while i < end and line[i] in " \t":
            i += 1
        value_start = i
        if i < end and line[i] == "e" and line.startswith('"', i + 1):
            i += 1
        if i >= end or line[i] != '"':
            raise _Problem(value_start, f"the value of {key} must be in double quotes")
        i += 1
        chars: list[str] = []
        while i < end and line[i] != '"':
            if line[i] == "\\" and i + 1 < end:
                chars.append(line[i : i + 2])
                i += 2
                continue
            chars.append(line[i])
            i += 1
        if i >= end:
            raise _Problem(value_start, f"the value of {key} has no closing quote")
        i += 1
        found.append((start, key, attr, op, "".join(chars)))
        while i < end and line[i] in " \t":
            i += 1
        if i < end:
            if line[i] != ",":
                raise _Problem(i, "expected ',' between two key-operator-value tokens")
            i += 1


def _check_token(token: _Token) -> str | None:
    """The problem with one well-formed token, if any."""
    spec = _KEYS.get(token.key)
    if spec is None:
        close = difflib.get_close_matches(token.key, list(_KEYS), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"unknown key {token.key!r}{hint}"
    if spec.attr == "required" and not token.attr:
        return f"{token.key} needs a {{...}} part, e.g. {token.key}{{name}}"
    if spec.attr == "none" and token.attr is not None:
        return f"{token.key} takes no {{...}} part"
    if token.attr and spec.attr_values is not None:
        kind = token.attr.split()[0] if token.attr.split() else ""
        if kind not in spec.attr_values:
            expected = ", ".join(sorted(spec.attr_values))
            return f"{token.key}{{{token.attr}}}: expected one of {expected}"
    if token.key == "TEST" and token.attr and not re.fullmatch(r"[0-7]{1,4}", token.attr):
        return f"TEST{{{token.attr}}}: the part in braces is an octal mode mask"
    if token.op not in spec.ops:
        if spec.ops <= _MATCH:
            return f"{token.key} can only be matched (== or !=), not assigned with {token.op}"
        if not spec.ops & _MATCH and token.op in _MATCH:
            allowed = " or ".join(o for o in _SHOWN if o in spec.ops)
            return f"{token.key} can only be assigned ({allowed}), not matched with {token.op}"
        return f"operator {token.op} is not allowed with {token.key}"
    if (
        token.key == "MODE"
        and not re.search(r"[$%]", token.value)
        and not re.fullmatch(r"[0-7]{3,4}", token.value)
    ):
        return f"MODE {token.value!r} is not an octal mode such as 0660"
    return None


def check_rules(text: str) -> list[RuleProblem]:
    """Syntax problems in a udev rules file: keys, operators, quoting, labels.

    Follows udev(7): a rule is one line (a trailing backslash continues it) of
    comma-separated ``KEY[{attr}]OP"value"`` tokens; match keys take == or !=, assignment
    keys =, +=, -= or :=; every GOTO needs a LABEL after it in the same file.
    """
    problems: list[RuleProblem] = []
    labels_after: dict[str, int] = {}
    gotos: list[_Token] = []
    for line, where in _logical_lines(text):
        if not line.strip():
            continue
        try:
            raw_tokens = _tokens(line)
        except _Problem as exc:
            number, column = where[min(exc.offset, len(where) - 1)]
            problems.append(RuleProblem(number, column, exc.message))
            continue
        for offset, key, attr, op, value in raw_tokens:
            number, column = where[offset]
            token = _Token(key, attr, op, value, number, column)
            message = _check_token(token)
            if message:
                problems.append(RuleProblem(number, column, message))
            elif key == "LABEL":
                labels_after[value] = number
            elif key == "GOTO":
                gotos.append(token)
    for goto in gotos:
        if labels_after.get(goto.value, 0) <= goto.line:
            problems.append(
                RuleProblem(goto.line, goto.column, f'GOTO "{goto.value}" has no LABEL after it')
            )
    return sorted(problems, key=lambda p: (p.line, p.column))


def count_rules(text: str) -> int:
    return sum(1 for line, _ in _logical_lines(text) if line.strip())


# --- udevadm verify ---------------------------------------------------------------------


@dataclass(frozen=True)
class UdevadmResult:
    """``udevadm verify`` on one file. ``ok`` is ``None`` when it could not run."""

    ok: bool | None
    output: str


def udevadm_verify(path: Path) -> UdevadmResult:
    """Run ``udevadm verify FILE`` where this udevadm has it (systemd 254 and later)."""
    exe = shutil.which("udevadm")
    if exe is None:
        return UdevadmResult(None, "udevadm is not installed: skipped")
    try:
        usage = subprocess.run(
            [exe, "--help"], capture_output=True, text=True, timeout=10, check=False
        )
        if not re.search(r"^\s+verify\s", usage.stdout, re.MULTILINE):
            version = subprocess.run(
                [exe, "--version"], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
            return UdevadmResult(
                None, f"udevadm {version or '?'} has no 'verify' command (systemd 254+): skipped"
            )
        result = subprocess.run(
            [exe, "verify", str(path)], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return UdevadmResult(None, f"udevadm could not run: {exc}")
    output = "\n".join(s for s in (result.stdout.strip(), result.stderr.strip()) if s)
    return UdevadmResult(result.returncode == 0, output)
