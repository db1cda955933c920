"""``dxserial serve RIG.toml``: every serial line of this host bridged by one process."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

import typer

from dxserial import runtime
from dxserial.cli.app import app
from dxserial.cli.common import QUIET_HELP, VERBOSE_HELP, configure_logging
from dxserial.cli.options import parameters
from dxserial.drive.driver import on_signals
from dxserial.errors import ConfigError, DxSerialError
from dxserial.setting import Setting, checked

#: Seconds between redraws of the web page's table of lines (only when a row changed).
TABLE_INTERVAL = 1.0


def _print_keys(value: bool) -> None:
    if value:
        from dxserial.serve.keys import example
        from dxserial.serve.rig import line_keys

        typer.echo(example(line_keys()))
        raise typer.Exit()


#: Every setting of ``dxserial serve``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("rig", None, "The rig file (TOML; --keys shows every key).", kind=Path,
            argument=True, optional=True, metavar="RIG"),
    Setting("keys", False, "Print a rig file with every key, what it means, and exit.",
            kind=bool, action=_print_keys),
    Setting("check", False, "Read and check RIG, say what it would serve, and exit.",
            kind=bool),
    Setting("status", False, "Ask the running daemon of RIG how every line is, and exit.",
            kind=bool),
    Setting("as_json", False, "With --status: the answer as JSON.", kind=bool,
            flags=("--json",)),
    Setting("web", None, "Serve one live page of every line at HOST:PORT (needs dxserial[web]; "
            "else the file's 'web')."),
    Setting("verbose", 0, VERBOSE_HELP, kind=int, flags=("--verbose", "-v"), count=True,
            show_default=True),
    Setting("quiet", False, QUIET_HELP, kind=bool, flags=("--quiet", "-q"), show_default=True),
)


def serve_command(**given: Any) -> None:
    """Bridge every serial line of a rig file, each as 'dxserial bridge' would, in one process.

    Each [lines.NAME] table takes the bridge's settings (dxserial bridge --config keys).
    SIGHUP (systemctl reload) reads the file again: lines added, removed or changed are
    started, stopped or restarted, the others are not touched. Runs until Ctrl-C or SIGTERM.
    """
    from dxserial.serve.rig import read_rig

    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    rig, check, status, as_json = (values[k] for k in ("rig", "check", "status", "as_json"))
    if rig is None:
        raise ConfigError("name a rig file: dxserial serve RIG.toml (--keys prints one)")
    if as_json and not status:
        raise ConfigError("--json goes with --status")
    if status:
        from dxserial.serve.status import find_socket, read_status, render, spec_for_status

        known, mistake = spec_for_status(rig)
        try:
            answer = read_status(find_socket(known))
        except DxSerialError:
            if mistake is not None:  # no daemon to ask: the file's mistake is the news
                raise mistake from None
            raise
        typer.echo(json.dumps(answer, indent=2) if as_json else render(answer))
        if mistake is not None:  # the daemon runs on the file it last read
            typer.echo(f"dxserial: warning: {mistake} (the running daemon keeps the file as "
                       "it last read it)", err=True)
        return
    spec = read_rig(rig)
    if check:
        for line in spec.lines.values():
            config = line.config
            tcp = (f"listen {config.listen[0]}:{config.listen[1]}" if config.listen else
                   f"connect {config.connect[0]}:{config.connect[1]}" if config.connect else "")
            typer.echo(f"{line.name}: {line.where} ({config.link}, {config.serial.baudrate} "
                       f"baud) <-> {tcp}")
        if (values["web"] if values["web"] is not None else spec.web) is not None:
            _web_extra("--web" if values["web"] is not None else f"web ({spec.path})")
        typer.echo(f"{rig}: {len(spec.lines)} line(s), no mistake found")
        return
    configure_logging(values["verbose"], values["quiet"])
    _name_lines()
    runtime.run(_serve(spec, values["web"] if values["web"] is not None else spec.web,
                       "--web" if values["web"] is not None else "web"))


def _web_extra(option: str) -> None:
    """--check: a web page the serve could not start (no aiohttp) is a mistake too."""
    import importlib.util

    if importlib.util.find_spec("aiohttp") is None:
        raise ConfigError(f"{option} needs aiohttp: pip install 'dxserial[web]'")


serve_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("serve")(serve_command)


class _LineFormatter(logging.Formatter):
    """A line's records start with its name in brackets: one log for the whole rig."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        line = getattr(record, "line", None)
        if line is None:
            return text
        head, _, rest = text.partition(f"{record.levelname} ")
        return f"{head}{record.levelname} [{line}] {rest}"


def _name_lines() -> None:
    for handler in logging.getLogger("dxserial").handlers:
        handler.setFormatter(
            _LineFormatter("%(asctime)s.%(msecs)03d %(levelname)s %(message)s", "%H:%M:%S")
        )


async def _serve(spec: object, web: str | None, option: str) -> None:
    from dxserial.serve.rig import RigSpec
    from dxserial.serve.runner import Daemon
    from dxserial.serve.status import serve_status, socket_path

    assert isinstance(spec, RigSpec)
    page = None
    view = None
    daemon = Daemon(spec, watch=lambda line, event: page.publish(line, event) if page else None)
    found = socket_path(spec, create=True)
    where = found.path
    if found.note is not None:
        logging.getLogger("dxserial.serve").warning("%s", found.note)
    # The status socket first: a second serve of the same rig is told that one answers
    # there, not that the first one's web port is taken.
    server = await serve_status(where, daemon.status)
    if web is not None:
        try:
            view, page = await _start_page(spec, web, option)
        except BaseException:
            server.close()
            with contextlib.suppress(OSError):
                where.unlink()
            raise
    loop = asyncio.get_running_loop()
    reloads: set[asyncio.Task[str]] = set()

    def reload() -> None:
        task = asyncio.ensure_future(daemon.reload())
        reloads.add(task)
        task.add_done_callback(reloads.discard)

    table = None
    try:
        daemon.start()
        _say(f"serve ready: {len(spec.lines)} line(s) from {spec.path}; status: dxserial serve "
             f"{spec.path} --status ({where})")
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGHUP, reload)
        if page is not None:
            table = asyncio.create_task(_redraw(page, daemon))
        with on_signals(daemon.stop):
            await daemon.wait()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(signal.SIGHUP)
        if table is not None:
            table.cancel()
        for task in list(reloads):
            task.cancel()
        server.close()
        with contextlib.suppress(OSError):
            where.unlink()
        if view is not None:
            if page is not None:
                page.show_lines(daemon.status())
            await view.close()
    sys.stdout.flush()


async def _start_page(spec: Any, web: str, option: str) -> tuple[Any, Any]:
    """The live page of every line's games at ``web`` (``option`` names where it was set)."""
    from dxserial.live.web import start_web
    from dxserial.serve.page import RigPage

    given = option if option == "--web" else f"web ({spec.path})"
    view = await start_web(web, list(spec.web_allow), _say, f"dxserial serve {spec.path}",
                           option=given)
    return view, RigPage(view)


async def _redraw(page: object, daemon: object) -> None:
    from dxserial.serve.page import RigPage
    from dxserial.serve.runner import Daemon

    assert isinstance(page, RigPage) and isinstance(daemon, Daemon)
    while True:
        page.show_lines(daemon.status())
        await asyncio.sleep(TABLE_INTERVAL)


def _say(line: str) -> None:
    print(line, flush=True)
