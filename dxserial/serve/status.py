"""The rig's status, in one place: a unix socket the daemon answers, and its text form.

A client connects and reads one JSON document (:meth:`Daemon.status`); it sends nothing,
so there is nothing a client can say that the daemon must parse.  The socket lives in the
runtime folder (systemd's ``$RUNTIME_DIRECTORY``, else ``$XDG_RUNTIME_DIR/dxserial``, else
``/tmp/dxserial-UID``), named after the rig file, unless the file's ``status`` key names it.
That folder must be the user's own and private (docs/serve.md): a client must not read rows
another user forged, nor a daemon be kept from starting by a folder someone else made.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dxserial.errors import ConfigError, PortError
from dxserial.serve.rig import RigSpec, read_rig
from dxserial.tomltext import parse_toml

#: The longest a status answer may be (a rig of hundreds of lines fits).
MAX_STATUS_BYTES = 1 << 22


def named_runtime_dir(env: Mapping[str, str] = os.environ, uid: int | None = None) -> Path:
    """The runtime folder the environment names (checked by :func:`runtime_dir`)."""
    if env.get("RUNTIME_DIRECTORY"):
        return Path(env["RUNTIME_DIRECTORY"].split(":")[0])
    if env.get("XDG_RUNTIME_DIR"):
        return Path(env["XDG_RUNTIME_DIR"]) / "dxserial"
    return shared_tmp_dir(uid)


def shared_tmp_dir(uid: int | None = None) -> Path:
    """``/tmp/dxserial-UID``: a name any local user could take first."""
    return Path(f"/tmp/dxserial-{os.getuid() if uid is None else uid}")


def fallback_dir(env: Mapping[str, str]) -> Path:
    """Where the socket goes when ``/tmp/dxserial-UID`` is someone else's: the home's."""
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".local" / "state" / "dxserial" / "run"


@dataclass(frozen=True)
class RuntimeDir:
    """The runtime folder, checked: the user's own and private; ``note``: one line to say."""

    path: Path
    note: str | None = None


def runtime_dir(
    env: Mapping[str, str] = os.environ, *, uid: int | None = None, create: bool = False
) -> RuntimeDir:
    """Where the status socket goes when the rig file does not say, checked: a folder (not
    a symbolic link) owned by this user that nobody else may use.  ``create``: the daemon,
    which makes it (mode 0700) and tightens a folder of its own that others may read or
    write; a client only checks.  ``/tmp/dxserial-UID`` that is another user's falls back
    to ~/.local/state/dxserial/run (said in ``note``); any other folder is refused."""
    uid = os.getuid() if uid is None else uid
    named = named_runtime_dir(env, uid)
    problem, note = _private(named, uid, create)
    if problem is None:
        return RuntimeDir(named, note)
    if named != shared_tmp_dir(uid):
        raise ConfigError(f"runtime folder {named} {problem}: it must be this user's own folder, "
                          "mode 0700 (or name the socket with 'status' in the rig file)")
    other = fallback_dir(env)
    again, _ = _private(other, uid, create, parents=True)
    if again is not None:
        raise ConfigError(f"runtime folder {named} {problem}, and {other} {again}: name the "
                          "socket with 'status' in the rig file, or set XDG_RUNTIME_DIR")
    return RuntimeDir(other, f"runtime folder {named} {problem}: not used (another user may "
                      f"have made it); the status socket is in {other}")


def _private(
    folder: Path, uid: int, create: bool, *, parents: bool = False
) -> tuple[str | None, str | None]:
    """(what is wrong with ``folder``, None if nothing; a note on what was mended)."""
    if create:
        try:
            if parents:
                folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            return f"cannot be made ({exc.strerror or exc})", None
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None, None  # a client: no daemon made it, so none answers there
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})", None
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link", None
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder", None
    if info.st_uid != uid:
        return f"belongs to uid {info.st_uid}, not to uid {uid}", None
    loose = stat.S_IMODE(info.st_mode) & 0o077
    if not loose:
        return None, None
    if create:
        try:
            os.chmod(folder, 0o700, follow_symlinks=False)
        except OSError as exc:
            return f"has mode {stat.S_IMODE(info.st_mode):04o} ({exc.strerror or exc})", None
        return None, (f"runtime folder {folder} had mode {stat.S_IMODE(info.st_mode):04o}: "
                      "made 0700 (the user's own)")
    if loose & 0o022:
        return f"has mode {stat.S_IMODE(info.st_mode):04o} (others may write in it)", None
    return None, None


#: Where systemd puts the serve unit's runtime folder (RuntimeDirectory=dxserial).
SYSTEM_RUNTIME = Path("/run/dxserial")


def socket_path(
    spec: RigSpec, env: Mapping[str, str] = os.environ, *, create: bool = False
) -> RuntimeDir:
    """The status socket the daemon of ``spec`` opens (``create``: the daemon, which makes
    its folder), and one line to say about its folder, if any."""
    if spec.status is not None:
        return RuntimeDir(spec.status)
    folder = runtime_dir(env, create=create)
    return RuntimeDir(folder.path / f"serve-{spec.path.stem}.sock", folder.note)


def spec_for_status(path: Path) -> tuple[RigSpec, ConfigError | None]:
    """The rig of ``path`` as far as ``--status`` needs it (where its socket is), and the
    file's mistake if it has one: a daemon that refused a reload runs on and still answers,
    so a mistake in the file must not hide how the lines are."""
    try:
        return read_rig(path), None
    except ConfigError as exc:
        mistake = exc
    status = None
    with contextlib.suppress(OSError, ValueError, ConfigError):  # as much as can be read
        named = parse_toml(path.read_text(encoding="utf-8"), str(path)).get("status")
        if isinstance(named, str) and named:
            status = path.resolve().parent / named
    return RigSpec(path, {}, status=status), mistake


def find_socket(spec: RigSpec, env: Mapping[str, str] = os.environ) -> Path:
    """The status socket a client asks: the daemon's, whether systemd or a shell started it."""
    mine = socket_path(spec, env).path
    if spec.status is not None or mine.exists():
        return mine
    system = SYSTEM_RUNTIME / mine.name
    return system if system.exists() else mine


async def serve_status(path: Path, snapshot: Callable[[], dict[str, Any]]) -> asyncio.Server:
    """Answer each connection on ``path`` with ``snapshot()`` as JSON, then close it."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"status socket {path}: cannot create its folder: {exc}") from None
    if path.is_socket():
        if _answers(path):
            raise ConfigError(f"status socket {path}: another dxserial serve answers there "
                              "(one daemon per rig file; 'status' in the file names another)")
        path.unlink()  # left by a daemon that was killed

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            writer.write(json.dumps(snapshot()).encode() + b"\n")
            await writer.drain()
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()

    try:
        return await asyncio.start_unix_server(answer, str(path))
    except OSError as exc:
        raise ConfigError(f"status socket {path}: {exc.strerror or exc}") from None


def _answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(1.0)
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


def read_status(path: Path, timeout: float = 5.0) -> dict[str, Any]:
    """What the daemon on ``path`` says; :class:`PortError` if none answers."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            chunks = []
            size = 0
            while size <= MAX_STATUS_BYTES:
                data = sock.recv(65536)
                if not data:
                    break
                chunks.append(data)
                size += len(data)
        except FileNotFoundError:
            raise PortError(f"no dxserial serve is running for this rig ({path} does not "
                            "exist)") from None
        except OSError as exc:
            raise PortError(f"status socket {path}: {exc.strerror or exc} (is dxserial serve "
                            "running?)") from None
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        raise PortError(f"status socket {path}: the answer is not JSON") from None
    if not isinstance(answer, dict):
        raise PortError(f"status socket {path}: the answer is not a status")
    return answer


COLUMNS = ("line", "port", "state", "tcp", "engines", "games", "messages", "warnings")


def rows(status: dict[str, Any]) -> list[list[str]]:
    """A row per line, as the text table and the web page show them."""
    out = []
    for line in status.get("lines", []):
        tcp = line.get("peer") or (f"listen {line['listen']}" if line.get("listen") else
                                   f"connect {line.get('connect')}")
        engines = " - ".join(name for name in line.get("engines", []) if name) or "-"
        state = str(line.get("state", "?"))
        if state != "running" and line.get("detail"):
            state = f"{state}: {line['detail']}"
        out.append([
            str(line.get("line", "?")), str(line.get("port", "?")), state, str(tcp), engines,
            str(line.get("games", 0)), str(line.get("messages", 0)),
            str(line.get("warnings", 0)),
        ])
    return out


def render(status: dict[str, Any], *, width: int = 44) -> str:
    """``dxserial serve --status``: a line per serial line, aligned."""
    table = [list(COLUMNS), *rows(status)]
    for row in table:
        row[2] = row[2] if len(row[2]) <= width else row[2][: width - 3] + "..."
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    up = time.time() - float(status.get("started", time.time()))
    head = (f"dxserial serve {status.get('rig', '?')}: {len(table) - 1} line(s), pid "
            f"{status.get('pid', '?')}, up {up:.0f} s, {status.get('reloads', 0)} reload(s)")
    body = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in table]
    if status.get("refused"):
        body.append(f"last reload: {status['refused']}")
    return "\n".join([head, *body])


__all__ = [
    "RuntimeDir",
    "find_socket",
    "read_status",
    "render",
    "rows",
    "runtime_dir",
    "serve_status",
    "socket_path",
    "spec_for_status",
]
