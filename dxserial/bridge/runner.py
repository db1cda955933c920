"""The bridge's ports and peers: the serial port kept open, TCP peers accepted or dialled.

Every decision (what to forward, hold, drop or say on an engine's behalf, when an engine
counts as gone) is the :class:`~dxserial.bridge.machine.BridgeMachine`'s; the one driver
(:mod:`dxserial.drive.driver`) runs it and applies its actions.  This module only finds
ports for the driver's two sides and hands trace lines and game records to a writer thread
(:mod:`dxserial.bridge.files`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dxserial.bridge.files import FileWriter
from dxserial.bridge.judge import SERIAL, TCP, Side
from dxserial.bridge.machine import BridgeMachine
from dxserial.bridge.policy import console_blocked_by_default
from dxserial.bridge.relay import Relay, RelaySettings
from dxserial.bridge.settings import DEFAULT_LISTEN, BridgeConfig
from dxserial.bridge.statefile import (
    find_record,
    port_identity,
    record_fields,
    state_dir,
    write_record,
)
from dxserial.drive.actions import Action, Log, Remember
from dxserial.drive.driver import Driver
from dxserial.errors import DxSerialError
from dxserial.files import output_dir
from dxserial.game.record import GameRecord
from dxserial.game.trace import TraceWriter
from dxserial.protocol.framing import nul_frame
from dxserial.protocol.links import NulLink, make_link
from dxserial.protocol.messages import Chat, Message
from dxserial.transports.access import allowed, is_loopback
from dxserial.transports.openers import open_serial
from dxserial.transports.tcp import TcpPort, tcp_connect, tcp_listen

log = logging.getLogger("dxserial.bridge")


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"

#: The keys of the closing counts, always present (0 when nothing happened).
COUNT_KEYS = (
    "serial->tcp", "tcp->serial", "queued", "delivered", "dropped", "lost", "sent-by-bridge",
    "invalid", "duplicates", "violations", "blocked",
)


def counts_line(counts: dict[str, int]) -> str:
    """The bridge's last line: ``bridge stopped: serial->tcp 12, tcp->serial 11, ...``."""
    return "bridge stopped: " + ", ".join(f"{key} {value}" for key, value in counts.items())


def _relay_settings(config: BridgeConfig, trace: bool, observe: bool, news: bool) -> RelaySettings:
    """The relay's rules from the bridge's settings (and who listens to it)."""
    return RelaySettings(
        on_invalid=config.on_invalid,
        referee=config.referee,
        record=config.pdn is not None,
        block_console=console_blocked_by_default(
            config.block_console, config.listen, config.connect
        ),
        serial_repeats=config.link == "nulmodem",
        grace={SERIAL: 0.0, TCP: config.peer_grace},
        gameend_timeout=config.gameend_timeout,
        pass_stop=config.pass_stop,
        check_serial_state=config.serial_check,
        trace=trace,
        observe=observe,
        news=news,
    )


class Bridge:
    """Runs until :meth:`stop`; every side effect goes through the driver and transports."""

    def __init__(
        self,
        config: BridgeConfig,
        *,
        trace: TraceWriter | None = None,
        on_ready: Callable[[str], None] | None = None,
        observer: Callable[[str, Message], None] | None = None,
        watch: Callable[[dict[str, Any]], None] | None = None,
        logger: logging.Logger | None = None,
        identity: str | None = None,
    ) -> None:
        self.cfg = config
        #: What names the serial line across runs (its state file's name and check).
        self._identity = identity or port_identity(config.port)
        self._on_ready = on_ready
        #: Where this bridge logs (``dxserial serve`` gives each line a logger of its own).
        self.log = logger or log
        self._files = FileWriter(
            trace, config.pdn, on_written=self._recorded, annotated=config.pdn_notes,
            log=self.log,
        )
        self._state_path: Path | None = None
        self._legacy_state: Path | None = None
        self._notes: list[tuple[int, str]] = []  # said once the driver is there
        left_open = self._read_state() if config.serial_check else None
        links = {
            SERIAL: make_link(config.link, config.nulmodem, max_queue=config.max_pending),
            TCP: NulLink(max_queue=config.max_pending),
        }
        self.relay = Relay(
            _relay_settings(config, trace is not None, observer is not None, watch is not None),
            check=lambda side, raw: links[side].check(raw),  # the line's rules, no I/O
            left_open=left_open,
        )
        self.machine = BridgeMachine(
            self.relay, port=config.port, serial_grace=config.serial_grace,
            silent_slot=config.silent_slot,
        )
        tracing = trace is not None
        self.driver: Driver[Side] = Driver(
            self.machine,
            log=self.log,
            trace=self._files.trace if tracing else None,
            record=self._files.record,
            observer=observer,
            watch=watch,
            on_action=self._on_action,
        )
        # What is read on one side waits to go out on the other: that one's queue is the gate.
        self.driver.add_side(SERIAL, links[SERIAL], gate=TCP)
        self.driver.add_side(TCP, links[TCP], gate=SERIAL)
        self._peer: TcpPort | None = None
        self._peer_since = 0.0
        self._refused_hosts: set[str] = set()
        self._server: asyncio.Server | None = None
        self.listen_address: tuple[str, int] | None = None
        self._ready = False

    @property
    def counters(self) -> dict[str, int]:
        counts = self.relay.counts
        return {key: counts.get(key, 0) for key in COUNT_KEYS}

    def move_port(self, port: str) -> None:
        """The lost serial port is back under another name (a replugged adapter that udev
        gives no stable link): the reopen tries ``port`` from now on, sessions kept."""
        self.cfg.port = port
        self.machine.port = port

    @property
    def tcp_peer(self) -> str | None:
        """The TCP engine's address while one is connected (for a status line)."""
        return self._peer.peer if self._peer is not None else None

    def _read_state(self) -> str | None:
        """The state file's evidence that the previous run left a game open, if any.

        An explicit ``state_dir`` that cannot be used is the one-line error; a default one
        is a warning (the bridge then has only the engine's own word as evidence)."""
        where = state_dir(self.cfg.state_dir, os.environ)
        try:  # checked now that it can be written, not at the first game
            output_dir(where.path, f"state folder ({where.source})")
        except DxSerialError as exc:
            if where.source == "--state-dir":
                raise
            self._notes.append((logging.WARNING, f"{exc}; the bridge keeps no record of the "
                                "serial engine's game across runs (--state-dir DIR names one)"))
            return None
        try:
            found = find_record(where.path, self.cfg.port, self._identity)
        except OSError as exc:  # the folder unreadable: as if it could not be made
            self._notes.append((logging.WARNING, f"state folder {where.path}: cannot be read "
                                f"({exc.strerror or exc}); the bridge keeps no record of the "
                                "serial engine's game across runs"))
            return None
        self._state_path, self._legacy_state = found.path, found.legacy
        if found.warning is not None:
            self._notes.append((logging.WARNING, found.warning))
        record = found.record
        if record is None or not record.open:
            self._notes.append((logging.DEBUG, f"state file {found.path}: no game open"))
            return None
        evidence = record.evidence(found.legacy or found.path)
        self._notes.append((logging.INFO, f"{evidence}: the previous run left a game open on "
                            "the serial engine; it is ended before the next GAMEREQ reaches it"))
        return evidence

    def _on_action(self, action: Action) -> None:
        """The relay's own actions: the record of the serial engine's game (a start, an end)."""
        if not isinstance(action, Remember) or self._state_path is None:
            return
        is_open = action.fields.get("game") == "open"
        try:
            write_record(self._state_path, record_fields(
                self.cfg.port, open=is_open, now=time.time(), identity=self._identity))
        except DxSerialError as exc:
            self._log(logging.WARNING, f"{exc} ({action.why})", "state file")
            return
        if self._legacy_state is not None:  # this line's record under its old name: moved
            with contextlib.suppress(OSError):
                self._legacy_state.unlink()
            self._legacy_state = None
        self.log.debug(
            "state file %s: %s (%s)", self._state_path, action.fields["game"], action.why
        )

    def _log(self, level: int, text: str, kind: str | None = None) -> None:
        self.driver.apply([Log(level, text, kind)])

    def _recorded(self, record: GameRecord, path: Path | None, error: str | None) -> None:
        """Called in the writer thread once a PDN file is written (or not)."""
        if path is not None:
            self.log.info("game recorded: %s (%s)", path, record.result)
        else:
            self.log.error("game record NOT written: %s", error)

    # ------------------------------------------------------------------ run

    async def run(self) -> None:
        """Open the serial port (fail fast if it is not there), serve TCP, run until stopped."""
        driver = self.driver
        try:
            driver.attach(SERIAL, await open_serial(self.cfg.port, self.cfg.serial))
        except BaseException:
            self._files.close()
            raise
        self._log(
            logging.INFO,
            f"serial port {self.cfg.port} open ({self.cfg.link} link); event loop: "
            f"{loop_name(asyncio.get_running_loop())}",
        )
        for level, text in self._notes:
            self._log(level, text)
        self._notes.clear()
        tasks = [asyncio.create_task(self._serial_loop(), name="serial-reader")]
        try:
            if self.cfg.connect is not None:
                tasks.append(asyncio.create_task(self._tcp_connector(), name="tcp-connector"))
                where = f"connecting to {self.cfg.connect[0]}:{self.cfg.connect[1]}"
            else:
                host, port = self.cfg.listen or DEFAULT_LISTEN
                self._server = await tcp_listen(host, port, self._on_client)
                sock = self._server.sockets[0].getsockname()
                self.listen_address = (str(sock[0]), int(sock[1]))
                where = f"listening on {self.listen_address[0]}:{self.listen_address[1]}"
            ready = f"bridge ready: {self.cfg.port} <-> {where}"
            self._ready = True
            if self._on_ready is not None:
                self._on_ready(ready)  # the caller shows it: log it only at debug level
                self.log.debug("%s", ready)
                self._files.trace({"kind": "event", "level": "info", "text": ready})
            else:
                self._log(logging.INFO, ready)
            self._say_what_is_exposed()
            await driver.wait()
            await driver.drain(self.cfg.shutdown_grace)
        finally:
            if self._server is not None:
                self._server.close()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await driver.close()
            driver.act(self.machine.shutdown)
            for kind, count in driver.flood_drain():
                driver.emit(logging.WARNING, f"{count} more '{kind}' lines not shown")
            if self._ready:  # a start-up error (port taken) is the one line to read, alone
                driver.emit(logging.INFO, counts_line(self.counters))
            self._files.close()

    def _say_what_is_exposed(self) -> None:
        """Reachable beyond this machine: say once at start-up what the bridge guards."""
        connect, listen = self.cfg.connect, self.cfg.listen
        if connect is not None:
            exposed = not is_loopback(connect[0])
        else:
            exposed = listen is not None and not is_loopback(listen[0])
        if not exposed:
            return
        who = (
            f"clients only from {', '.join(str(n) for n in self.cfg.allow)}" if self.cfg.allow
            else "clients from anyone who can reach it (--allow limits that)"
        )
        if self.relay.settings.block_console:
            self._log(
                logging.INFO,
                f"reachable beyond this machine: {who}; CHATs starting with 'console ' are "
                "blocked (--allow-console lets them through)",
            )
        else:
            self._log(
                logging.WARNING,
                f"reachable beyond this machine: {who}; CHATs starting with 'console ' are let "
                "through (--allow-console): some engines run them as commands",
            )

    def stop(self) -> None:
        """Stop (a signal handler may call this): the driver's wait ends, then the drain."""
        self.driver.stop()

    # ------------------------------------------------------------------ serial side

    async def _serial_loop(self) -> None:
        driver = self.driver
        while True:
            port = driver.port(SERIAL)
            if port is None:
                await self._reopen_serial()
                continue
            why = await driver.read(SERIAL, port)
            driver.detach(SERIAL)
            grace = self.cfg.serial_grace
            lost = str(why) if why else "end of file"
            if self.cfg.port not in lost:  # the transports' own errors name the port
                lost = f"serial port {self.cfg.port} lost: {lost}"
            self._log(
                logging.WARNING,
                f"{lost}; TCP side stays up, waiting for the port to come back (its engine "
                f"counts as gone after {grace:g} s)",
            )
            driver.act(self._port_lost)
            with contextlib.suppress(Exception):
                await port.close()

    def _port_lost(self, now: float) -> list[Action]:
        self.machine.port_lost(now)
        return []

    async def _reopen_serial(self) -> None:
        driver = self.driver
        while driver.port(SERIAL) is None:
            await asyncio.sleep(self.cfg.reopen_interval)
            if "://" not in self.cfg.port and not os.path.exists(self.cfg.port):
                continue
            try:
                port = await open_serial(self.cfg.port, self.cfg.serial)
            except DxSerialError as exc:
                self.log.debug("reopen of %s failed: %s", self.cfg.port, exc)
                continue
            self._log(
                logging.INFO,
                f"serial port {self.cfg.port} is back; {driver.pump(SERIAL).link.queued} "
                "message(s) pending",
            )
            driver.attach(SERIAL, port)
            driver.act(self.machine.port_back)

    # ------------------------------------------------------------------ tcp side

    async def _on_client(self, link: TcpPort) -> None:
        if self.cfg.allow and not allowed(link.peer_host, self.cfg.allow):
            first = link.peer_host not in self._refused_hosts
            self._refused_hosts.add(link.peer_host)
            self._log(
                logging.WARNING if first else logging.DEBUG,
                f"refused TCP client {link.peer}: not in --allow "
                f"({', '.join(str(n) for n in self.cfg.allow)})"
                + ("" if not first else "; later refusals of this address are not logged"),
                "refused client",
            )
            await self._refuse(link, "not allowed: your address is not in this bridge's --allow")
            return
        if self._peer is not None and self._peer.ending:
            # Its hang-up is known but not yet handled: a quick reconnect must not be refused.
            self._peer_gone(self._peer, "closed")
        if self._peer is not None:
            silent = self.machine.silent_holder(self.driver.now())
            if not self.cfg.kick_old and silent is None:
                since = time.strftime("%H:%M:%S", time.localtime(self._peer_since))
                self._log(
                    logging.WARNING,
                    f"refused TCP client {link.peer}: busy, {self._peer.peer} is connected "
                    "(one peer at a time; --kick-old replaces it)",
                    "refused client",
                )
                await self._refuse(
                    link, f"busy: another engine is connected since {since}; try later"
                )
                return
            why = "--kick-old" if silent is None else silent
            self._log(
                logging.WARNING, f"TCP client {link.peer} replaces {self._peer.peer} ({why})"
            )
            old = self._peer
            if silent is not None:  # told why, in words it prints, before the close
                with contextlib.suppress(DxSerialError, OSError):
                    old.try_write(nul_frame(Chat.carrying(
                        f"dxserial bridge: replaced by another engine: {silent}").wire))
            self._peer_gone(old, "replaced by a new client")
            await old.close()
        await self._serve_peer(link)

    async def _refuse(self, link: TcpPort, why: str) -> None:
        """Tell a refused client why, in DXP, before closing: a bare close says nothing."""
        with contextlib.suppress(DxSerialError, OSError):
            link.try_write(nul_frame(Chat.carrying(f"dxserial bridge: {why}").wire))
        await link.close()

    async def _tcp_connector(self) -> None:
        assert self.cfg.connect is not None
        host, port = self.cfg.connect
        failing = False
        while True:
            try:
                link = await tcp_connect(host, port)
            except DxSerialError as exc:
                if not failing:
                    stopped = self.relay.tcp_ended
                    self._log(
                        logging.INFO if stopped else logging.WARNING,
                        ("the TCP engine ended the session (stop code 1) and is gone: "
                         if stopped else "")
                        + f"{exc}; retrying every {self.cfg.reconnect_interval:g} s",
                    )
                    failing = True
                await asyncio.sleep(self.cfg.reconnect_interval)
                continue
            failing = False
            await self._serve_peer(link)
            await asyncio.sleep(self.cfg.reconnect_interval)

    async def _serve_peer(self, link: TcpPort) -> None:
        driver = self.driver
        self._peer = link
        self._peer_since = time.time()
        driver.attach(TCP, link)
        driver.act(lambda now: self.machine.joined(TCP, now, link.peer))
        why = await driver.read(TCP, link)
        if why is None and self._peer is link:
            await link.wait_taken()  # a half-closed peer still reads what was just written
        if self._peer is link:
            self._peer_gone(link, str(why) if why else "closed")
        await link.close()

    def _peer_gone(self, link: TcpPort, why: str) -> None:
        """The TCP peer's session ends: a cut-off frame is reported, unsent messages lost."""
        driver = self.driver
        self._peer = None
        driver.detach(TCP)
        pump = driver.pump(TCP)
        pump.link.close_input()  # reports a message cut off by the hang-up
        pump.service()
        if link.unsent_at_end:  # written, but the peer's machine never took them
            nbytes = link.unsent_at_end
            text = (f"{nbytes} byte(s) written to {link.peer} were never acknowledged by its "
                    f"machine ({why})")
            driver.act(lambda now: self.relay.unacknowledged(TCP, nbytes, text, now))
        if self.driver.stopping:  # the bridge hung up: shutdown() reports the rest
            self._log(logging.INFO, f"closed the connection of TCP peer {link.peer}: stopping")
            return
        self._log(
            logging.INFO,
            f"TCP peer {link.peer} went away ({why}); serial side stays open",
            "tcp sessions ended",
        )
        driver.act(lambda now: self.machine.left(TCP, now, why))


__all__ = ["COUNT_KEYS", "Bridge"]
