"""Runs :class:`~dxserial.programs.hub_adapter.HubAdapter`: Hub on stdin/stdout, DXP on an
endpoint through the same :class:`~dxserial.transports.linkdriver.LinkDriver` as
``dxserial engine`` (NULMODEM or NUL frames on a serial line, NUL frames on TCP).

The Hub side is served at once (``hub``/``init`` need no engine); the endpoint is opened
meanwhile, and a GAMEREQ sent before it is up waits inside the link.
"""

from __future__ import annotations

import asyncio
import logging

from dxserial.engine.runner import RunResult
from dxserial.errors import DxSerialError, MessageError
from dxserial.programs.hub_adapter import HubAdapter, Log, SendDxp, SendHub, Stop
from dxserial.protocol import hub
from dxserial.protocol.messages import escape, parse
from dxserial.protocol.nulmodem import LinkDown, LinkEvent, LinkProblem, MessageReceived
from dxserial.transports.endpoints import EngineEndpoint
from dxserial.transports.linkdriver import LinkDriver
from dxserial.transports.stdio_lines import StdioLines

log = logging.getLogger("dxserial.hub")

#: Seconds the last messages (a closing GAMEEND) get to be delivered.
DRAIN_TIMEOUT = 5.0

_Item = tuple[str, object]


async def run_hub_adapter(
    adapter: HubAdapter, endpoint: EngineEndpoint, *, log_messages: bool = False
) -> RunResult:
    """Serve one Hub client until it quits or the engine is lost."""
    loop = asyncio.get_running_loop()
    level = logging.INFO if log_messages else logging.DEBUG
    io = StdioLines()
    await io.open()
    inbox: asyncio.Queue[_Item] = asyncio.Queue()

    def on_event(event: LinkEvent) -> None:
        if isinstance(event, MessageReceived):
            inbox.put_nowait(("dxp", event.raw))
        elif isinstance(event, LinkDown):
            inbox.put_nowait(("lost", f"the engine stopped answering: {event.error}"))
        elif isinstance(event, LinkProblem):
            log.log(event.level, "line: %s", event.error)

    where = await endpoint.prepare()
    log.info("hub: the DXP engine is at %s", where)
    driver = LinkDriver(endpoint.make_link(), on_event, name="hub")
    tasks = [
        asyncio.create_task(_pump_stdin(io, inbox), name="hub-stdin"),
        asyncio.create_task(_connect(endpoint, driver, inbox), name="hub-link"),
    ]
    try:
        while True:
            deadline = adapter.next_deadline()
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                kind, value = await asyncio.wait_for(inbox.get(), timeout)
            except TimeoutError:
                actions = adapter.poll(loop.time())
            else:
                now = loop.time()
                if kind == "hub":
                    if value is None:
                        actions = adapter.hub_closed(now)
                    elif not str(value).strip():
                        continue
                    else:
                        log.log(level, "hub in  %s", value)
                        actions = adapter.hub_line(str(value), now)
                elif kind == "dxp":
                    assert isinstance(value, bytes)
                    try:
                        msg = parse(value, strict=False)
                    except MessageError as exc:
                        actions = adapter.dxp_invalid(f"'{escape(value)}': {exc}", now)
                    else:
                        log.log(level, "dxp in  %s (%s)", escape(msg.wire), msg.NAME)
                        actions = adapter.dxp(msg, now)
                else:
                    actions = adapter.link_lost(str(value), now)
            for action in actions:
                if isinstance(action, SendHub):
                    text = hub.format_line(action.line)
                    log.log(level, "hub out %s", text)
                    io.write(text)
                elif isinstance(action, SendDxp):
                    log.log(
                        level, "dxp out %s (%s)", escape(action.message.wire), action.message.NAME
                    )
                    driver.send(action.message.wire)
                elif isinstance(action, Log):
                    log.log(action.level, "%s", action.text)
                elif isinstance(action, Stop):
                    await _drain(driver)
                    return RunResult(action.code, action.message)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        port = driver.detach()
        await driver.close()
        if port is not None:
            await endpoint.release(port)
        await endpoint.close()
        io.close()


async def _pump_stdin(io: StdioLines, inbox: asyncio.Queue[_Item]) -> None:
    while True:
        text = await io.next()
        inbox.put_nowait(("hub", text))
        if text is None:
            return


async def _connect(
    endpoint: EngineEndpoint, driver: LinkDriver, inbox: asyncio.Queue[_Item]
) -> None:
    try:
        port = await endpoint.open()
    except DxSerialError as exc:
        inbox.put_nowait(("lost", str(exc)))
        return
    driver.attach(port)
    why = await driver.read_until_lost(port)
    inbox.put_nowait(("lost", str(why) if why else "the engine closed the connection"))


async def _drain(driver: LinkDriver) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DRAIN_TIMEOUT
    while driver.port is not None and (driver.link.queued or not driver.link.idle):
        if loop.time() > deadline:
            return
        await asyncio.sleep(0.01)
