"""An engine the director runs: an :class:`EngineEndpoint` that starts its own process.

:class:`CommandEndpoint` looks like any endpoint to :class:`~dxserial.match.runner.Match`:
``open`` gives a connected port, ``release`` lets go of it.  Underneath, ``open`` starts the
engine (when none runs) as the :class:`~dxserial.processes.supervisor.Supervisor` allows,
writes its files, and waits until it is ready (listening, connected, or DOSBox's serial
port answering) or has exited; ``release`` stops the process (SIGTERM, then SIGKILL, the
whole group).  So an engine is started fresh after every connection the director lets go:
one that crashed, hung, or serves one connection and exits is simply started again.
:meth:`CommandEndpoint.failed` is the match's word that the engine cost a game: it answers
with the process's exit status and the last lines of its log, for the forfeit's reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

from dxserial.errors import DxSerialError, PortError
from dxserial.processes.command import HOST, KINDS, EngineCommand, launch
from dxserial.processes.supervisor import GiveUp, Supervisor, Wait
from dxserial.transports.base import Port
from dxserial.transports.child import Child
from dxserial.transports.endpoints import (
    EndpointKind,
    EndpointSpec,
    EngineEndpoint,
    LinkKind,
    LinkOptions,
    parse_engine_endpoint,
)
from dxserial.transports.leftovers import MARK, this_run
from dxserial.transports.tcp import Endpoint

__all__ = ["CommandEndpoint"]

log = logging.getLogger("dxserial.processes.endpoint")

#: How long a released engine may take to exit by itself before it is sent SIGTERM.
_OWN_EXIT = 1.0
_RETRY = 0.2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class CommandEndpoint(EngineEndpoint):
    """One engine process slot (a tournament has one per engine and concurrent game)."""

    def __init__(
        self,
        cmd: EngineCommand,
        options: LinkOptions,
        *,
        label: str,
        workdir: Path,
        log_path: Path,
        notify: Callable[[CommandEndpoint, str], None] | None = None,
    ) -> None:
        self.listens = KINDS[cmd.speaks].director_listens
        kind = EndpointKind.LISTEN if self.listens else EndpointKind.TCP
        program = Path(cmd.command[0]).name if cmd.command else "dosbox"
        where = Endpoint(HOST, 0 if kind is EndpointKind.LISTEN else 1)  # port: at start
        super().__init__(EndpointSpec(kind, f"runs {program}", address=where), options)
        self.cmd = cmd
        self.reports_thinking = KINDS[cmd.speaks].reports_thinking
        self.label = label
        self.workdir = workdir.absolute()  # the engine runs in it: paths must not be relative
        self.log_path = log_path
        #: Told of every start: "" for a first start, else what happened and why.
        self.notify = notify or _log_news
        self.supervisor = Supervisor(label, cmd.max_restarts)
        self.child: Child | None = None
        self._layer1 = "nul"
        self._unjudged: str | None = None  # how the last run ended, until failed() or open()

    # ------------------------------------------------------------------ endpoint

    @property
    def layer1(self) -> LinkKind:
        return "nulmodem" if self._layer1 == "nulmodem" else "nul"

    def group(self) -> dict[str, int | None]:
        """The running process group and its leader's start time (for the state file)."""
        child = self.child
        if child is None or child.returncode is not None:
            return {"pgid": None, "started": None, "session": None}
        group = child.group
        return {"pgid": group.pgid, "started": group.started, "session": group.session}

    def describe(self) -> str:
        program = self.cmd.command[0] if self.cmd.command else "dosbox"
        return f"runs {program} ({self.cmd.speaks}), log {self.log_path}"

    async def prepare(self) -> str:
        if self.listens:
            await super().prepare()
        return self.describe()

    async def open_early(self) -> None:
        """Start the engine now and keep its connection for the first game, so that one
        that cannot start is known before any game is played."""
        if self._early is None:
            self._early = await self.open()

    async def open(self, timeout: float | None = None) -> Port:
        if self._early is not None:
            early, self._early = self._early, None
            return early
        self._judge(None)
        if self.child is not None:
            await self._stop()
        timeout = self.cmd.ready_timeout or timeout or self.options.connect_timeout
        loop = asyncio.get_running_loop()
        while True:
            action = self.supervisor.wanted(loop.time())
            if isinstance(action, GiveUp):
                raise PortError(f"engine {self.label}: {action.reason}")
            if isinstance(action, Wait):
                await asyncio.sleep(max(0.0, action.until - loop.time()))
                continue
            break
        child = await self._start(action.reason)
        opening = asyncio.ensure_future(self._connect_ready(timeout))
        exiting = asyncio.ensure_future(child.wait())
        try:
            await asyncio.wait({opening, exiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exiting.cancel()
            if not opening.done():
                opening.cancel()
            await asyncio.gather(opening, exiting, return_exceptions=True)
        if not opening.cancelled() and opening.exception() is None:
            self.supervisor.ready(loop.time())
            return opening.result()
        if opening.cancelled():
            why = "exited before it was ready"
        else:
            why = f"not ready: {opening.exception()}"
        await self._stop()
        detail = self._take_unjudged() or ""
        self.supervisor.ended(loop.time(), failure=why, status=detail)
        raise PortError(f"engine {self.label} {why} ({detail})")

    async def _connect_ready(self, timeout: float) -> Port:
        if self.spec.kind is not EndpointKind.SERIAL:
            return await super().open(timeout)
        from dxserial.transports.dosbox import open_dosbox  # DOSBox: its nullmodem port

        deadline = asyncio.get_running_loop().time() + timeout
        while True:  # until DOSBox listens (the process exiting ends the wait in open())
            try:
                return await open_dosbox(self.spec.port, self.options.serial)
            except PortError:
                if asyncio.get_running_loop().time() + _RETRY > deadline:
                    raise
            await asyncio.sleep(_RETRY)

    async def _start(self, reason: str) -> Child:
        loop = asyncio.get_running_loop()
        if self.listens:
            assert self.listen_address is not None
            port = self.listen_address.port
        else:
            port = _free_port()
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            plan = launch(self.cmd, port, self.workdir)
            cwd = self.cmd.cwd or self.workdir
            for name, text in plan.files.items():
                target = cwd / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            for name, source in plan.copies.items():
                target = self.workdir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        except (OSError, DxSerialError) as exc:
            self.supervisor.ended(loop.time(), failure="could not be set up", status=str(exc))
            raise PortError(f"engine {self.label}: cannot set it up: {exc}") from None
        self._layer1 = plan.link
        if plan.endpoint.startswith("tcp://") or plan.endpoint.startswith("dosbox://"):
            self.spec = parse_engine_endpoint(plan.endpoint)
        # The run's mark: what a later director sweeps if this one and the keeper are killed.
        env = {**os.environ, **plan.env, **self.cmd.env, MARK: this_run()}
        try:
            self.child = await Child.start(
                plan.argv, cwd=cwd, env=env, log=self.log_path, grace=self.cmd.stop_grace
            )
        except PortError as exc:
            self.supervisor.ended(loop.time(), failure="could not be started", status=str(exc))
            raise PortError(f"engine {self.label}: {exc}") from None
        self.supervisor.started(loop.time(), reason)
        restart = self.supervisor.starts > 1
        news = f"engine {self.label}: {reason} (pid {self.child.pid})" if restart else ""
        self.notify(self, news)
        log.info("engine %s started: pid %d, port %d", self.label, self.child.pid, port)
        return self.child

    async def release(self, port: Port) -> None:
        await super().release(port)
        await self._stop()

    async def close(self) -> None:
        await self._stop()
        self._judge(None)
        await super().close()

    # ------------------------------------------------------------------ the process

    async def _stop(self) -> None:
        child, self.child = self.child, None
        if child is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(child.wait()), _OWN_EXIT)
        await child.stop()
        tail = child.log_tail()
        self._unjudged = child.status() + (f"; last log lines: {tail}" if tail else "")
        # A clean end (exit 0, or stopped by us: a hang is told by the forfeit) is no news.
        clean = child.stopped_by is not None or child.returncode == 0
        (log.debug if clean else log.info)("engine %s: %s", self.label, self._unjudged)

    def _take_unjudged(self) -> str | None:
        text, self._unjudged = self._unjudged, None
        return text

    def _judge(self, failure: str | None) -> str:
        """Tell the supervisor how the last run ended (once); the status text."""
        status = self._take_unjudged()
        if status is None:
            return ""
        now = asyncio.get_running_loop().time()
        self.supervisor.ended(now, failure=failure, status=status)
        return status

    def failed(self, reason: str) -> str:
        """The engine cost a game (``reason``): its exit status and last log lines."""
        return self._judge(reason)


def _log_news(endpoint: CommandEndpoint, text: str) -> None:
    """The default news: a restart is an INFO line, a first start ("") none."""
    if text:
        log.info("%s", text)
