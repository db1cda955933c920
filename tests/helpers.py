"""Helpers many test files share, written once: role and colour shortcuts, messages as
they arrive off the wire, and ``python -m dxserial`` run to its end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dxserial.draughts import Position
from dxserial.protocol.messages import (
    Colour,
    EndReason,
    GameEnd,
    GameRequest,
    Message,
    Move,
    StopCode,
    encode,
    parse,
)
from dxserial.protocol.session import Role

INI, FOL = Role.INITIATOR, Role.FOLLOWER
W, Z = Colour.WHITE, Colour.BLACK


def wire(msg: Message) -> Message:
    """A built message as it would arrive: parsed from its bytes (so ``raw`` is set)."""
    return parse(encode(msg))


def wire_texts(messages: list[Message]) -> list[str]:
    """What ``messages`` look like on the wire, as text."""
    return [msg.wire.decode("ascii") for msg in messages]


def move(frm: int, to: int, *captured: int) -> Move:
    """A MOVE as it arrives."""
    msg = wire(Move(from_square=frm, to_square=to, captured=captured))
    assert isinstance(msg, Move)
    return msg


def end(reason: str = "0", stop: str = "0") -> Message:
    """A GAMEEND as it arrives."""
    return wire(GameEnd(reason=EndReason(reason), stop=StopCode(stop)))


def request(
    fen: str | None = None, *, follower: Colour = Z, moves: int = 0, name: str = "Initiator"
) -> Message:
    """A GAMEREQ as it arrives: the normal start, or the position ``fen``."""
    if fen is None:
        return wire(GameRequest(name=name, follower_colour=follower, minutes=5, moves=moves))
    position = Position.from_fen(fen)
    return wire(
        GameRequest(
            name=name,
            follower_colour=follower,
            minutes=5,
            moves=moves,
            to_move=position.turn,
            position=position.pieces(),
        )
    )


def trace_so_far(path: Path) -> list[dict[str, Any]]:
    """The records of a trace a bridge is still writing (a line half written is left out)."""
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # the writer thread is mid-line
            out.append(json.loads(line))
    return out


def run_dxserial(
    *args: str | Path, stdin: str | None = None, cwd: Path | None = None,
    columns: int | None = None, env: dict[str, str] | None = None, timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``python -m dxserial ARGS`` to its end: exit code, stdout and stderr as text.

    ``stdin``: what it reads (else nothing: stdin is /dev/null); ``columns``: the terminal
    width its help is wrapped to; ``env``: variables set for it.
    """
    more = {**(env or {}), **({} if columns is None else {"COLUMNS": str(columns)})}
    return subprocess.run(
        [sys.executable, "-m", "dxserial", *map(str, args)],
        input=stdin, stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True, text=True, timeout=timeout, cwd=cwd,
        env={**os.environ, **more} if more else None, check=False,
    )


def run_in_process(
    *args: str | Path, stdin: str | None = None, cwd: Path | None = None,
    columns: int | None = None, env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """:func:`run_dxserial` without a process: the same entry point, in this process.

    For commands that end at once (help, usage and configuration errors, parse, replay):
    stdout and stderr are captured, ``env`` is set meanwhile, and the logging set-up a
    command makes is undone after.
    """
    import io
    import logging

    from dxserial import cli as entry
    from dxserial.cli import common

    out, err = io.StringIO(), io.StringIO()
    argv = ["dxserial", *map(str, args)]
    loggers = [logging.getLogger(name) for name in ("dxserial", common.WIRE.name)]
    saved = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    # asyncio's own loop: uvloop's first loop keeps a pipe open for the process's life,
    # which the leak guard would blame on whichever test ran a command first.
    env = {"DXSERIAL_LOOP": "asyncio", **(env or {}),
           **({} if columns is None else {"COLUMNS": str(columns)})}
    old_env = {key: os.environ.get(key) for key in env}
    old_argv, old_stdin, old_cwd = sys.argv, sys.stdin, os.getcwd()
    try:
        os.environ.update(env)
        sys.argv, sys.stdin = argv, io.StringIO(stdin or "")
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = entry._run()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv, sys.stdin = old_argv, old_stdin
        os.chdir(old_cwd)
        for key, value in old_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for lg, (handlers, level, propagate) in zip(loggers, saved, strict=True):
            lg.handlers[:], lg.level, lg.propagate = handlers, level, propagate
        common._given.clear()
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for ``condition``, looking at each turn of the loop, for at most ``timeout`` s
    (``TimeoutError`` then): a condition to wait for, never a time to sleep."""
    async def look() -> None:
        while not condition():
            await asyncio.sleep(0.001)

    await asyncio.wait_for(look(), timeout)


def build_wheel(into: Path) -> zipfile.ZipFile:
    """The project's wheel as pip builds it from this checkout (skips without hatchling)."""
    root = Path(__file__).resolve().parent.parent
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(into / "dist"), str(root)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if built.returncode != 0 and "hatchling" in built.stderr:
        pytest.skip("hatchling is not installed")
    assert built.returncode == 0, built.stderr
    (wheel,) = (into / "dist").glob("dxserial-*.whl")
    return zipfile.ZipFile(wheel)


def write_trace(
    path: Path, items: list[tuple[str, bytes, str]], errors: dict[int, str] | None = None
) -> Path:
    """``items``: (sender side 'serial'/'tcp', raw bytes, bridge action); ``errors`` by index:
    the bridge's own complaint about that message."""
    from dxserial.errors import MessageError
    from dxserial.game.trace import TraceWriter
    from dxserial.protocol.messages import parse

    writer = TraceWriter(path)
    writer.event("bridge started")
    for i, (side, raw, action) in enumerate(items):
        direction = "serial->tcp" if side == "serial" else "tcp->serial"
        try:
            msg = parse(raw, strict=False)
        except MessageError as exc:
            writer.message(direction, raw, error=str(exc), action=action)
        else:
            writer.message(direction, raw, msg=msg, action=action, error=(errors or {}).get(i))
    writer.close()
    return path
