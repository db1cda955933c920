"""Files and folders a user names (--config, --pdn, --trace, replay FILE, udev check FILE).

A mistyped or unsuitable path must end in one line that says what is wrong and what to
do, never in an ``OSError`` traceback.  Every command reads, writes and creates through
these functions, so the same mistake gets the same words everywhere; they raise
:class:`~dxserial.errors.ConfigError`, which the CLI prints as ``dxserial: error: ...``.
A file that is replaced as a whole (a PDN record, a tournament's state, the udev files) is
written atomically here too (:func:`write_atomic`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path

from dxserial.errors import ConfigError, DxSerialError

_REASONS = {
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EISDIR: "it is a directory",
    errno.EEXIST: "it is a file, not a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "name too long",
}

#: What to do, by (action, errno); the caller's ``hint`` covers everything else.
_ADVICE = {
    ("read", errno.ENOENT): "check the path",
    ("read", errno.EACCES): "make it readable for the user dxserial runs as",
    ("read", errno.EPERM): "make it readable for the user dxserial runs as",
    ("write", errno.ENOENT): "create its folder first or choose another path",
    ("write", errno.EACCES): "choose a path you may write to",
    ("write", errno.EPERM): "choose a path you may write to",
    ("write", errno.EROFS): "choose a path you may write to",
    ("create", errno.ENOENT): "choose a folder that can be created",
    ("create", errno.EACCES): "choose a folder you may write to",
    ("create", errno.EPERM): "choose a folder you may write to",
    ("create", errno.EROFS): "choose a folder you may write to",
}


def problem(action: str, what: str, path: Path | str, exc: OSError, hint: str) -> ConfigError:
    """One line for a failed ``action`` (read, write, create) on ``what`` at ``path``."""
    code = exc.errno if isinstance(exc.errno, int) else -1
    reason = _REASONS.get(code) or (exc.strerror or str(exc) or type(exc).__name__).lower()
    advice = _ADVICE.get((action, code), hint)
    return ConfigError(f"cannot {action} {what} {path}: {reason}; {advice}".replace("  ", " "))


def read_text(path: Path | str, what: str, hint: str, *, limit: int | None = None) -> str:
    """The UTF-8 text of the file at ``path``; ``hint`` says which file the user should name.

    ``limit`` (bytes) stops a mistaken ``/dev/zero`` or a huge file from filling memory.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(-1 if limit is None else limit + 1)
    except OSError as exc:
        raise problem("read", what, path, exc, hint) from None
    if limit is not None and len(data) > limit:
        raise ConfigError(f"cannot read {what} {path}: larger than {limit} bytes; {hint}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"cannot read {what} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
            f"offset {exc.start}); {hint}"
        ) from None


def output_dir(path: Path | str, what: str, *, create: bool = True) -> Path:
    """Create the folder ``path`` (readable by its owner only) unless it exists; check it.

    ``create=False`` only checks that it could be created, for a command that makes the
    folder when it first writes into it (a match interrupted before its first game
    leaves nothing behind).
    """
    folder = Path(path)
    hint = "name a folder (it is created if missing)"
    if not create:
        _check_creatable(folder, what, hint)
        return folder
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:  # FileExistsError: a file is in the way (errno.EEXIST)
        raise problem("create", what, folder, exc, hint) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise problem("write", what, folder, PermissionError(errno.EACCES, "denied"), hint)
    return folder


def _check_creatable(folder: Path, what: str, hint: str) -> None:
    """The checks of :func:`output_dir` without creating anything."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing == folder and not folder.is_dir():
        raise problem("create", what, folder, FileExistsError(errno.EEXIST, "exists"), hint)
    if not existing.is_dir():
        raise problem("create", what, folder, NotADirectoryError(errno.ENOTDIR, "no"), hint)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise problem("create", what, folder, PermissionError(errno.EACCES, "denied"), hint)


def open_append(path: Path | str, what: str, mode: int = 0o600) -> int:
    """A descriptor appending to ``path``, created with ``mode`` if missing."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode)
    except OSError as exc:
        raise problem("write", what, path, exc, "name a file (it is created if missing)") from None


def write_atomic(
    path: Path,
    text: str,
    *,
    what: str = "",
    mode: int = 0o600,
    error: type[DxSerialError] = ConfigError,
) -> None:
    """Write ``text`` so that readers and crashes see the old file or the new one, never half.

    Raises ``error`` ("cannot write WHAT PATH: reason") when the OS refuses.
    """
    try:
        replace_file(path, text, mode=mode)
    except OSError as exc:
        name = f"{what} {path}" if what else str(path)
        raise error(f"cannot write {name}: {exc.strerror}") from None


def replace_file(path: Path, text: str, *, mode: int = 0o600) -> None:
    """The atomic write itself; raises ``OSError`` for a caller with its own words for it.

    The UTF-8 text goes to a temporary file in the same folder (created if missing), is
    synced, then renamed over ``path``; the folder is synced too where the OS allows it.
    Nothing is left behind when it fails.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".dxserial-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_directory(path.parent)


def _sync_directory(folder: Path) -> None:
    """Make a rename itself durable where the OS allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
