"""The bridge: an engine on a serial line plays an engine on TCP.

Each message is forwarded byte for byte as received; only the layer-1 framing changes
(NULMODEM or NUL on the serial line, NUL on TCP).  Every message is also parsed and
followed by a dialogue observer per end, which is how a NULMODEM duplicate (the same
message again after a corrupted echo of the end byte) is told from a new message.
Problems are logged with direction, raw bytes and reason; they never rewrite a message.

What each end has *seen* is what its dialogue observer follows: a message from the
serial engine counts for the serial end when it arrives and for the TCP end when it is
written to the TCP peer, and the other way round.  Until a message is delivered it
waits in a bounded queue: while the TCP peer is away, and (inside the layer-1 link)
while the serial port is away.  Nothing is dropped without a log line saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import ipaddress
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from dxserial.errors import (
    DialogueError,
    DuplicateMessageError,
    DxSerialError,
    FramingError,
    MessageError,
)
from dxserial.linkdriver import LinkDriver
from dxserial.protocol.links import Layer1Link, NulLink
from dxserial.protocol.messages import Chat, GameRequest, Message, escape, parse
from dxserial.protocol.nulmodem import (
    LinkDown,
    LinkProblem,
    MessageDelivered,
    MessageReceived,
    NulModemEvent,
    NulModemLink,
)
from dxserial.protocol.session import Dialogue, Role
from dxserial.record import GameRecord, Recorder, write_pdn
from dxserial.referee import Policy, Referee, Verdict, ViolationKind, chat_for
from dxserial.trace import TraceWriter
from dxserial.transports.serial import SerialSettings, open_serial
from dxserial.transports.tcp import TcpLink, tcp_connect, tcp_listen

log = logging.getLogger("dxserial.bridge")

Side = Literal["serial", "tcp"]
#: How long after a CHAT from a NULMODEM engine an identical one, with no other message from
#: that engine in between, is still taken for its retransmission (several attempts can fail).
REPEAT_WINDOW = 300.0

SERIAL: Side = "serial"
TCP: Side = "tcp"


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _allowed(host: str, networks: tuple[IPNetwork, ...]) -> bool:
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in networks)


def _is_console(text: str) -> bool:
    return text.lstrip().lower().startswith("console")


def _console_blocked_by_default(config: BridgeConfig) -> bool:
    """On unless told otherwise whenever someone beyond this machine could send a CHAT."""
    if config.block_console is not None:
        return config.block_console
    if config.connect is not None:
        return not _is_loopback(config.connect[0])
    host = config.listen[0] if config.listen is not None else "127.0.0.1"
    return not _is_loopback(host)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: assume it reaches beyond this machine


def _other(side: Side) -> Side:
    return TCP if side == SERIAL else SERIAL


def _direction(sender: Side) -> str:
    return "serial->tcp" if sender == SERIAL else "tcp->serial"


@dataclass
class NulModemSettings:
    """The echo handshake's parameters (see ``dxserial.protocol.nulmodem``)."""

    start: int = 0x02
    end: int = 0x03
    timeout: float = 5.0
    max_attempts: int = 5


@dataclass
class BridgeConfig:
    port: str
    serial: SerialSettings = field(default_factory=SerialSettings)
    link: Literal["nulmodem", "nul"] = "nulmodem"
    nulmodem: NulModemSettings = field(default_factory=NulModemSettings)
    listen: tuple[str, int] | None = ("127.0.0.1", 27531)
    connect: tuple[str, int] | None = None
    on_invalid: Literal["drop", "forward"] = "drop"
    kick_old: bool = False
    # Only clients from these networks may connect (empty: anyone who can reach the port).
    allow: tuple[IPNetwork, ...] = ()
    # Drop CHATs that start with "console " (Moby Dam runs them as commands). None: on
    # when the TCP side listens beyond loopback or connects out.
    block_console: bool | None = None
    # Hard cap per direction. Readers pause at LinkDriver's high-water mark (64), but one
    # read may carry thousands of short messages; beyond this cap they are reported lost.
    max_pending: int = 32768
    reopen_interval: float = 0.2
    reconnect_interval: float = 1.0
    shutdown_grace: float = 1.0
    referee: Literal["off", "warn", "strict"] = "warn"
    pdn: Path | None = None


class Bridge:
    """Runs until :meth:`stop`; every side effect goes through the transports."""

    def __init__(
        self,
        config: BridgeConfig,
        *,
        trace: TraceWriter | None = None,
        on_ready: Callable[[str], None] | None = None,
        observer: Callable[[str, Message], None] | None = None,
    ) -> None:
        self.cfg = config
        self.trace = trace
        self._on_ready = on_ready
        self._observer = observer  # sees each message as it is forwarded (demo, monitors)
        self._stopping = asyncio.Event()
        self._drivers: dict[Side, LinkDriver] = {
            SERIAL: LinkDriver(self._make_serial_link(), self._serial_event, name="serial"),
            TCP: LinkDriver(NulLink(max_queue=config.max_pending), self._tcp_event, name="tcp"),
        }
        self._peer: TcpLink | None = None
        self._server: asyncio.Server | None = None
        self.listen_address: tuple[str, int] | None = None
        # dialogue: what each end has seen, and who is the initiator
        self._views: dict[Side, Dialogue] = {SERIAL: Dialogue(), TCP: Dialogue()}
        self._roles: dict[Side, Role] = {SERIAL: Role.INITIATOR, TCP: Role.FOLLOWER}
        self._roles_known = False
        self._last_from_serial: tuple[bytes, float] | None = None
        # Parsed messages on their way to each side, in order, so delivery needs no re-parse.
        self._in_flight: dict[Side, deque[Message]] = {SERIAL: deque(), TCP: deque()}
        self._flood = FloodGuard()
        self._referee: Referee | None = self._make_referee()
        self._recorder: Recorder | None = (
            Recorder(site="dxserial bridge") if config.pdn is not None else None
        )
        self.counters: dict[str, int] = {
            "serial->tcp": 0,
            "tcp->serial": 0,
            "invalid": 0,
            "duplicates": 0,
            "violations": 0,
            "lost": 0,
            "blocked": 0,
        }
        self._console_blocked = _console_blocked_by_default(config)

    # ------------------------------------------------------------------ set-up

    def _make_serial_link(self) -> Layer1Link:
        if self.cfg.link == "nul":
            return NulLink(max_queue=self.cfg.max_pending)
        nm = self.cfg.nulmodem
        return NulModemLink(
            start=nm.start,
            end=nm.end,
            timeout=nm.timeout,
            max_attempts=nm.max_attempts,
            max_queue=self.cfg.max_pending,
        )

    def _event(self, level: int, text: str, *, kind: str | None = None, **extra: object) -> None:
        """Log (and trace) one event; a flood of one ``kind`` of warning is summarised."""
        if kind is not None and not self._flood.allow(kind, time.monotonic()):
            return
        log.log(level, text)
        if self.trace is not None:
            self.trace.event(text, level=logging.getLevelName(level).lower(), **extra)

    def _flood_summaries(self) -> None:
        for kind, count in self._flood.drain(time.monotonic()):
            log.warning("%d more '%s' warnings in the last %g s not shown (--trace has every "
                        "message)", count, kind, self._flood.window)

    async def run(self) -> None:
        """Open the serial port (fail fast if it is not there), serve TCP, run until stopped."""
        serial = self._drivers[SERIAL]
        serial.attach(await open_serial(self.cfg.port, self.cfg.serial))
        self._event(logging.INFO, f"serial port {self.cfg.port} open ({self.cfg.link} link)")
        tasks = [asyncio.create_task(self._serial_loop(), name="serial-reader")]
        try:
            if self.cfg.connect is not None:
                tasks.append(asyncio.create_task(self._tcp_connector(), name="tcp-connector"))
                where = f"connecting to {self.cfg.connect[0]}:{self.cfg.connect[1]}"
            else:
                host, port = self.cfg.listen or ("127.0.0.1", 27531)
                self._server = await tcp_listen(host, port, self._on_client)
                sock = self._server.sockets[0].getsockname()
                self.listen_address = (str(sock[0]), int(sock[1]))
                where = f"listening on {self.listen_address[0]}:{self.listen_address[1]}"
            ready = f"bridge ready: {self.cfg.port} <-> {where}"
            self._event(logging.INFO, ready)
            if self._on_ready is not None:
                self._on_ready(ready)
            await self._stopping.wait()
            await self._drain_for_shutdown()
        finally:
            if self._server is not None:
                self._server.close()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for driver in self._drivers.values():
                await driver.close()
            self._abort_game("the bridge stopped")
            self._flood_summaries()
            self._report_unsent()
            self._event(logging.INFO, f"bridge stopped; counts: {self.counters}")

    def stop(self) -> None:
        self._stopping.set()

    async def _drain_for_shutdown(self) -> None:
        """Give the message in flight up to ``shutdown_grace`` seconds to complete."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.cfg.shutdown_grace
        while loop.time() < deadline:
            busy = [
                d for d in self._drivers.values() if d.port is not None and not d.link.idle
            ]
            if not busy:
                return
            await asyncio.sleep(0.01)

    def _report_unsent(self) -> None:
        for side, driver in self._drivers.items():
            if driver.link.queued:
                self._event(
                    logging.WARNING,
                    f"{driver.link.queued} message(s) for the {side} side not delivered "
                    "at shutdown",
                )

    # ------------------------------------------------------------------ serial side

    async def _serial_loop(self) -> None:
        driver = self._drivers[SERIAL]
        while True:
            port = driver.port
            if port is None:
                await self._reopen_serial()
                continue
            why = await driver.read_until_lost(port, gate=self._drivers[TCP].room)
            driver.detach()
            self._event(
                logging.WARNING,
                f"serial port {self.cfg.port} lost ({why or 'end of file'}); "
                "TCP side stays up, waiting for the port to come back",
            )
            with contextlib.suppress(Exception):
                await port.close()

    async def _reopen_serial(self) -> None:
        driver = self._drivers[SERIAL]
        while driver.port is None:
            await asyncio.sleep(self.cfg.reopen_interval)
            if "://" not in self.cfg.port and not os.path.exists(self.cfg.port):
                continue
            try:
                port = await open_serial(self.cfg.port, self.cfg.serial)
            except DxSerialError as exc:
                log.debug("reopen of %s failed: %s", self.cfg.port, exc)
                continue
            self._event(
                logging.INFO,
                f"serial port {self.cfg.port} is back; {driver.link.queued} message(s) pending",
            )
            driver.attach(port)

    def _serial_event(self, event: NulModemEvent) -> None:
        if isinstance(event, MessageReceived):
            self._from_side(SERIAL, event.raw)
        elif isinstance(event, MessageDelivered):
            self._delivered(SERIAL, event.raw)
        elif isinstance(event, LinkDown):
            self._event(logging.ERROR, f"serial link down: {event.error}")
            for raw in event.undelivered:
                self._lost(_direction(TCP), raw, "the serial engine stopped answering")
        elif isinstance(event, LinkProblem):
            self._event(logging.INFO, f"serial line: {event.error}", kind="serial line")

    # ------------------------------------------------------------------ tcp side

    async def _on_client(self, link: TcpLink) -> None:
        if self.cfg.allow and not _allowed(link.peer_host, self.cfg.allow):
            self._event(
                logging.WARNING,
                f"refused TCP client {link.peer}: not in --allow "
                f"({', '.join(str(n) for n in self.cfg.allow)})",
                kind="refused client",
            )
            await link.close()
            return
        if self._peer is not None:
            if not self.cfg.kick_old:
                self._event(
                    logging.WARNING,
                    f"refused TCP client {link.peer}: {self._peer.peer} is connected "
                    "(one peer at a time; --kick-old replaces it)",
                )
                await link.close()
                return
            self._event(logging.WARNING, f"TCP client {link.peer} replaces {self._peer.peer}")
            old, self._peer = self._peer, None
            self._drivers[TCP].detach()
            await old.close()
        await self._serve_peer(link)

    async def _tcp_connector(self) -> None:
        assert self.cfg.connect is not None
        host, port = self.cfg.connect
        failing = False
        while True:
            try:
                link = await tcp_connect(host, port)
            except DxSerialError as exc:
                if not failing:
                    self._event(
                        logging.WARNING,
                        f"{exc}; retrying every {self.cfg.reconnect_interval:g} s",
                    )
                    failing = True
                await asyncio.sleep(self.cfg.reconnect_interval)
                continue
            failing = False
            await self._serve_peer(link)
            await asyncio.sleep(self.cfg.reconnect_interval)

    async def _serve_peer(self, link: TcpLink) -> None:
        driver = self._drivers[TCP]
        self._peer = link
        self._reset_dialogue()
        self._event(
            logging.INFO,
            f"TCP peer {link.peer} connected; {driver.link.queued} message(s) pending for it",
        )
        driver.attach(link)
        why = await driver.read_until_lost(link, gate=self._drivers[SERIAL].room)
        if self._peer is link:
            self._peer = None
            driver.detach()
            tcp_link = driver.link
            if isinstance(tcp_link, NulLink):
                tcp_link.close_input()  # reports a message cut off by the hang-up
                driver.service()
            self._event(
                logging.INFO,
                f"TCP peer {link.peer} went away ({why or 'closed'}); serial side stays open",
            )
        await link.close()

    def _tcp_event(self, event: NulModemEvent) -> None:
        if isinstance(event, MessageReceived):
            self._from_side(TCP, event.raw)
        elif isinstance(event, MessageDelivered):
            self._delivered(TCP, event.raw)
        elif isinstance(event, LinkProblem):
            self.counters["invalid"] += 1
            self._event(logging.WARNING, f"tcp->serial: {event.error}", kind="framing tcp")

    # ------------------------------------------------------------------ messages

    def _reset_dialogue(self) -> None:
        """A new TCP peer is a new engine: both ends' dialogue starts afresh."""
        self._abort_game("the TCP engine changed")
        self._views = {SERIAL: Dialogue(), TCP: Dialogue()}
        self._roles_known = False
        self._referee = self._make_referee()
        self._recorder = Recorder(site="dxserial bridge") if self.cfg.pdn is not None else None

    def _make_referee(self) -> Referee | None:
        if self.cfg.referee == "off":
            return None
        return Referee(Policy.STRICT if self.cfg.referee == "strict" else Policy.WARN)

    def _learn_roles(self, sender: Side, msg: Message) -> None:
        if isinstance(msg, GameRequest) and not self._roles_known:
            self._roles = {sender: Role.INITIATOR, _other(sender): Role.FOLLOWER}
            self._roles_known = True
            self._event(logging.INFO, f"the {sender} engine is the initiator")

    def _from_side(self, sender: Side, raw: bytes) -> None:
        """A complete message arrived from ``sender``: check it, then forward or drop it."""
        direction = _direction(sender)
        try:
            msg = parse(raw, strict=False)
        except MessageError as exc:
            self.counters["invalid"] += 1
            action = "dropped" if self.cfg.on_invalid == "drop" else "forwarded"
            self._event(
                logging.WARNING,
                f"{direction}: invalid message '{escape(raw)}' {action}: {exc}",
                kind=f"invalid {direction}",
            )
            if self.trace is not None:
                self.trace.message(direction, raw, error=str(exc), action=action)
            if self.cfg.on_invalid == "forward":
                self._forward(sender, raw)
            return
        for warning in msg.warnings:
            self._event(
                logging.WARNING,
                f"{direction}: '{escape(raw)}': {warning} (forwarded)",
                kind=f"variant {direction}",
            )
        if self._repeated_chat(sender, msg):
            self.counters["duplicates"] += 1
            self._event(
                logging.WARNING,
                f"{direction}: duplicate '{escape(raw)}' dropped: the same CHAT again right "
                "after it was received (NULMODEM retransmission after a garbled echo)",
            )
            if self.trace is not None:
                self.trace.message(direction, raw, msg=msg, action="duplicate")
            return
        if self._console_blocked and isinstance(msg, Chat) and _is_console(msg.text):
            self.counters["blocked"] += 1
            self._event(
                logging.WARNING,
                f"{direction}: CHAT '{escape(raw)}' blocked: it would make some engines run a "
                "command (--allow-console lets it through)",
                kind=f"console {direction}",
            )
            if self.trace is not None:
                self.trace.message(direction, raw, msg=msg, action="blocked")
            return
        self._learn_roles(sender, msg)
        error: str | None = None
        saved_view = copy.copy(self._views[sender])
        try:
            self._views[sender].handle(msg, self._roles[sender])
        except DuplicateMessageError as exc:
            self.counters["duplicates"] += 1
            self._event(
                logging.WARNING,
                f"{direction}: duplicate '{escape(raw)}' dropped: {exc}",
                kind=f"duplicate {direction}",
            )
            if self.trace is not None:
                self.trace.message(direction, raw, msg=msg, error=str(exc), action="duplicate")
            return
        except DialogueError as exc:
            self.counters["violations"] += 1
            error = f"the {sender} engine broke the dialogue: {exc}"
            if self._referee is None:  # else the referee's verdict says it, with the position
                self._event(
                    logging.WARNING,
                    f"{direction}: '{escape(raw)}': {error} (forwarded)",
                    kind=f"dialogue {direction}",
                )
        if self._referee is not None:
            verdict = self._referee.observe(msg, self._roles[sender])
            if self._judged(sender, msg, verdict):
                self._views[sender] = saved_view  # refused: as if it had never been sent
                return
            error = None if verdict.ok else verdict.text
        if self.trace is not None:
            self.trace.message(direction, raw, msg=msg, error=error, action="forwarded")
        if self._observer is not None:
            self._observer(direction, msg)
        if self._forward(sender, raw):
            self._in_flight[_other(sender)].append(msg)

    def _judged(self, sender: Side, msg: Message, verdict: Verdict) -> bool:
        """Act on the referee's verdict; ``True`` when the message must not be forwarded."""
        direction = _direction(sender)
        refuse = (
            not verdict.ok
            and self.cfg.referee == "strict"
            and verdict.kind in (ViolationKind.ILLEGAL_MOVE, ViolationKind.OUT_OF_TURN)
        )
        if not verdict.ok:
            action = "not forwarded; told the sender" if refuse else "forwarded"
            what = (
                "played an illegal move"
                if verdict.kind is ViolationKind.ILLEGAL_MOVE
                else "broke the dialogue"
            )
            self._event(
                logging.WARNING,
                f"{direction}: referee: the {sender} engine {what}: {verdict.text} ({action})",
                kind=f"referee {direction}",
            )
        for note in verdict.notes:
            self._event(logging.INFO, f"referee: {note}")
        self._record(sender, msg, verdict)
        if not refuse:
            return False
        if self.trace is not None:
            self.trace.message(direction, msg.wire, msg=msg, error=verdict.text, action="refused")
        chat = chat_for(verdict)
        try:
            self._drivers[sender].send(chat.wire)
        except FramingError as exc:
            self._lost(_direction(_other(sender)), chat.wire, str(exc))
        else:
            self._in_flight[sender].append(chat)
        return True

    def _record(self, sender: Side, msg: Message, verdict: Verdict) -> None:
        if self._recorder is None:
            return
        record = self._recorder.observe(msg, self._roles[sender], verdict)
        if record is not None:
            self._write_record(record)

    def _write_record(self, record: GameRecord) -> None:
        assert self.cfg.pdn is not None
        try:
            path = write_pdn(record, self.cfg.pdn)
        except (DxSerialError, OSError) as exc:
            self._event(logging.ERROR, f"game record NOT written: {exc}")
            return
        self._event(logging.INFO, f"game recorded: {path} ({record.result})")

    def _abort_game(self, reason: str) -> None:
        if self._recorder is not None:
            record = self._recorder.abort(reason)
            if record is not None:
                self._write_record(record)

    def _repeated_chat(self, sender: Side, msg: Message) -> bool:
        """A NULMODEM repeat of a CHAT, which the dialogue layer cannot tell from a new one.

        When the echo of E is garbled the receiver has delivered the message but the sender
        starts it over, so it arrives twice, back to back, possibly after several failed
        attempts.  For every other message the dialogue state tells (it would be out of
        turn); a CHAT is allowed at any time, so an identical CHAT with no other message
        from the serial engine in between, within ``REPEAT_WINDOW`` seconds, is taken for
        one (messages from TCP may cross meanwhile: the engine is still retrying).  An
        engine that really says the same thing twice in a row loses the repeat (logged).
        """
        if sender != SERIAL or self.cfg.link != "nulmodem":
            return False
        now = asyncio.get_running_loop().time()
        last, self._last_from_serial = self._last_from_serial, (msg.wire, now)
        if not isinstance(msg, Chat) or last is None or last[0] != msg.wire:
            return False
        return now - last[1] <= REPEAT_WINDOW

    def _forward(self, sender: Side, raw: bytes) -> bool:
        receiver = _other(sender)
        driver = self._drivers[receiver]
        if receiver == TCP and self._peer is None and driver.link.queued == 0:
            self._event(logging.INFO, "no TCP peer: keeping messages until one connects")
        try:
            driver.send(raw)
        except FramingError as exc:
            self._lost(_direction(sender), raw, str(exc))
            return False
        self.counters[_direction(sender)] += 1
        return True

    def _delivered(self, receiver: Side, raw: bytes) -> None:
        """``raw`` (sent by the other side) reached ``receiver``'s engine: update its view."""
        sender = _other(receiver)
        flight = self._in_flight[receiver]
        if flight and flight[0].wire == raw:
            msg = flight.popleft()
        else:
            flight.clear()  # out of step (a message was lost): re-parse from here on
            try:
                msg = parse(raw, strict=False)
            except MessageError:
                return  # a forwarded invalid message: nothing to follow
        try:
            self._views[receiver].handle(msg, self._roles[sender])
        except DialogueError as exc:
            log.debug("%s view: %s", receiver, exc)

    def _lost(self, direction: str, raw: bytes, why: str) -> None:
        self.counters["lost"] += 1
        self._event(logging.ERROR, f"{direction}: message '{escape(raw)}' NOT delivered: {why}")
        if self.trace is not None:
            self.trace.message(direction, raw, error=why, action="lost")


class FloodGuard:
    """At most ``burst`` log lines of one kind per ``window`` seconds; the rest are counted.

    An engine that sends the same wrong thing thousands of times must not fill the disk
    of an unattended rig, nor hide the one line that matters among copies.
    """

    def __init__(self, burst: int = 20, window: float = 60.0) -> None:
        self.burst = burst
        self.window = window
        self._seen: dict[str, tuple[float, int, int]] = {}  # kind -> (start, shown, hidden)

    def allow(self, kind: str, now: float) -> bool:
        start, shown, hidden = self._seen.get(kind, (now, 0, 0))
        if now - start >= self.window:
            if hidden:
                log.warning("%d more '%s' warnings in the last %g s not shown (--trace has "
                            "every message)", hidden, kind, self.window)
            start, shown, hidden = now, 0, 0
        if shown < self.burst:
            self._seen[kind] = (start, shown + 1, hidden)
            return True
        self._seen[kind] = (start, shown, hidden + 1)
        return False

    def drain(self, now: float) -> list[tuple[str, int]]:
        """Counts not yet reported, for a last word at shutdown."""
        out = [(kind, hidden) for kind, (_, _, hidden) in self._seen.items() if hidden]
        self._seen.clear()
        return out
