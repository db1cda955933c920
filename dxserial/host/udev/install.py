"""Installs and uninstalls the udev rules, systemd unit and example configuration.

Users expect a bridge to come up by itself when they plug in their USB-serial adapter.
This module renders the shipped files (:mod:`dxserial.host.udev.files`) for this machine
and installs and uninstalls them without touching files a person wrote or edited: every
installed file starts with a marker line holding the SHA-256 of the rest, so ``uninstall``
removes a file only while it is still exactly what ``install`` wrote.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dxserial.errors import ConfigError, DxSerialError
from dxserial.files import replace_file
from dxserial.host.udev.files import (
    EXAMPLE_FILE,
    NAME_RE,
    RULES_FILE,
    SERVE_UNIT_FILE,
    UNIT_FILE,
    Kind,
    shipped_text,
)

#: Where ``install`` puts each file, relative to the root (``/`` normally).
RULES_DIR = Path("etc/udev/rules.d")
UNIT_DIR = Path("etc/systemd/system")
CONFIG_DIR = Path("etc/dxserial")

_GROUP_RE = re.compile(r"[a-z_][a-z0-9_-]{0,31}")

EXIT_NOPERM = 77  # sysexits.h EX_NOPERM: what install/uninstall return without permission

_MARKER_RE = re.compile(r"# dxserial-managed sha256=([0-9a-f]{64})\b[^\n]*\n")
_MARKER_TEXT = (
    "# dxserial-managed sha256={digest}: `dxserial udev uninstall` removes this file while it "
    "is unchanged; delete this line to keep it.\n"
)


class InstallPermissionError(DxSerialError, PermissionError):
    """Writing or removing a file needs more rights than this process has."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = path
        self.reason = reason



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
        paths += [sys.executable, str(Path(__file__).resolve().parents[2])]
    for path in dict.fromkeys(p for given in paths for p in (given, os.path.realpath(given))):
        for top in (*_HOMES, *_TMPS):
            if path == top or path.startswith(top + "/"):
                hides = "ProtectHome" if top in _HOMES else "PrivateTmp"
                return (
                    f"{path} is under {top}, which the unit's {hides}=yes hides: the bridge "
                    "could not start. Install dxserial system-wide from its clone (in the clone: "
                    "python3 -m venv /opt/dxserial && /opt/dxserial/bin/pip install .) and run "
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


def check_rig_path(rig: str) -> str:
    """An absolute path the serve unit can name and read (ProtectHome, PrivateTmp)."""
    if not rig.startswith("/") or any(c.isspace() or c in "%$\\\"'" for c in rig):
        raise ConfigError(f"--serve {rig!r}: name the rig file by an absolute path without "
                          "spaces, quotes, '%' or '$' (the unit's ExecStart holds it)")
    for top in (*_HOMES, *_TMPS):
        if rig == top or rig.startswith(top + "/"):
            raise ConfigError(f"--serve {rig}: the unit cannot read files under {top} "
                              "(ProtectHome, PrivateTmp); put the rig file in /etc/dxserial")
    return rig


def plan_serve(root: Path, rig: str, *, exe: str, group: str = "dialout") -> list[Target]:
    """The one file ``install --serve`` writes: the rig's unit."""
    text = with_marker(render(Kind.serve, exe=exe, group=group, rig=rig))
    return [Target(root / UNIT_DIR / SERVE_UNIT_FILE, text)]


def check_group(group: str) -> str:
    if not _GROUP_RE.fullmatch(group):
        raise ConfigError(f"--group {group!r} is not a group name")
    return group


def render(
    kind: Kind, *, exe: str | None = None, group: str = "dialout", name: str = "NAME",
    rig: str = "/etc/dxserial/rig.toml",
) -> str:
    """The shipped text with this machine's values: dxserial's path, the group, the name
    (and for the serve unit, the rig file's path)."""
    text = shipped_text(kind)
    if kind is Kind.rules:
        return text.replace('GROUP="dialout"', f'GROUP="{check_group(group)}"')
    if kind is Kind.serve:
        text = text.replace("@RIG@", check_rig_path(rig))
    if kind in (Kind.unit, Kind.serve):
        text = text.replace("@DXSERIAL@", exe or dxserial_executable())
        return text.replace(
            "SupplementaryGroups=dialout", f"SupplementaryGroups={check_group(group)}"
        )
    return text.replace("@NAME@", check_name(name))


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
        replace_file(path, text, mode=0o644)
    except OSError as exc:
        raise _refused("write", path, exc) from None


def _refused(verb: str, path: Path, exc: OSError) -> DxSerialError:
    """What to raise when the OS refuses to ``verb`` (write, remove) ``path``."""
    if isinstance(exc, PermissionError):
        return InstallPermissionError(path, exc.strerror or "permission denied")
    if exc.errno == errno.EROFS:
        return InstallPermissionError(path, "read-only file system")
    return DxSerialError(f"cannot {verb} {path}: {exc.strerror or exc}")


def installed_files(root: Path) -> list[Path]:
    """Every file uninstall looks at: the rules, the unit, every configuration file."""
    files = [root / RULES_DIR / RULES_FILE, root / UNIT_DIR / UNIT_FILE,
             root / UNIT_DIR / SERVE_UNIT_FILE]
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
        except OSError as exc:
            raise _refused("remove", path, exc) from None
        actions.append(Action(path, "remove"))
    return actions
