"""The probe's decisions against a simulated engine on a simulated line (fake clock).

The peer is the built-in engine's sans-I/O parts (its layer-1 link and its Player) behind
the UART model in both directions, so a speed mismatch garbles bytes as on a real line.
This is the full matrix: start/end bytes x speeds x link types, in milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest

from dxserial.engine.player import Player, PlayerConfig
from dxserial.errors import ConfigError
from dxserial.host.probe.prober import Finding, Open, Prober, ProbeSettings, Progress, Write
from dxserial.protocol.links import NulLink
from dxserial.protocol.messages import Message, parse
from dxserial.protocol.nulmodem import MessageReceived, NulModemLink
from dxserial.protocol.session import Phase, Role
from dxserial.sim.uart import UartLine

FAST = ProbeSettings(listen=0.5, wait=0.2, answer_wait=0.5, timeout=120.0)


@dataclass
class SimPeer:
    """An engine at ``speed``: NULMODEM (no start-byte learning, as a DOS program) or NUL."""

    speed: int
    link_kind: str = "nulmodem"
    start: int = 0x02
    end: int = 0x03
    role: Role = Role.FOLLOWER
    now: float = 0.0
    invalid: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.player = Player(
            PlayerConfig(role=self.role, depth=1, seed=1, games=2), clock=lambda: self.now
        )
        self.link: NulModemLink | NulLink = (
            NulLink()
            if self.link_kind == "nul"
            else NulModemLink(start=self.start, end=self.end, learn_start=False, timeout=5.0)
        )

    def begin(self) -> None:
        for msg in self.player.start():
            self.link.send(msg.wire, self.now)

    def receive(self, data: bytes) -> None:
        self.link.receive_data(data, self.now)
        self.pump()

    def pump(self) -> None:
        for event in self.link.events():
            if isinstance(event, MessageReceived):
                try:
                    msg: Message = parse(event.raw, strict=False)
                except Exception as exc:
                    self.invalid.append(str(exc))
                    out = self.player.invalid(str(exc))
                else:
                    out = self.player.receive(msg)
                for reply in out:
                    self.link.send(reply.wire, self.now)

    def output(self) -> bytes:
        data = self.link.data_to_send()
        if isinstance(self.link, NulLink):
            self.link.confirm_written()
        return data

    def deadline(self) -> float | None:
        times = [t for t in (self.link.next_deadline(), self.player.deadline()) if t is not None]
        return min(times) if times else None


def run(peer: SimPeer | None, settings: ProbeSettings = FAST) -> tuple[Finding, list[str]]:
    """Probe ``peer`` (``None``: nothing on the line) until a verdict; return it and progress."""
    prober = Prober(settings)
    t = 0.0
    probe_speed = settings.speeds[0]
    to_peer: UartLine | None = None
    to_probe: UartLine | None = None
    progress: list[str] = []

    def lines(speed: int) -> tuple[UartLine | None, UartLine | None]:
        if peer is None:
            return None, None
        return UartLine(speed, peer.speed), UartLine(peer.speed, speed)

    if peer is not None:
        peer.now = t
        peer.begin()
    prober.start(t)
    while not prober.done:
        busy = True
        while busy and not prober.done:
            busy = False
            for action in prober.actions():
                busy = True
                if isinstance(action, Open):
                    probe_speed = action.speed
                    to_peer, to_probe = lines(probe_speed)
                    prober.opened(t)
                elif isinstance(action, Write) and to_peer is not None:
                    to_peer.send(action.data, t)
                elif isinstance(action, Progress):
                    progress.append(action.text)
            if peer is not None and to_peer is not None and to_probe is not None:
                peer.now = t
                got = bytes(v for _, v in to_peer.receive(t))
                if got:
                    peer.receive(got)
                    busy = True
                peer.link.poll(t)
                for msg in peer.player.poll(t, repeat=peer.link_kind == "nul"):
                    peer.link.send(msg.wire, t)
                peer.pump()
                out = peer.output()
                if out:
                    to_probe.send(out, t)
                    busy = True
                back = bytes(v for _, v in to_probe.receive(t))
                if back:
                    prober.feed(back, t)
                    busy = True
        if prober.done:
            break
        times = [prober.next_deadline()]
        if peer is not None and to_peer is not None and to_probe is not None:
            times += [to_peer.next_deadline(), to_probe.next_deadline(), peer.deadline()]
        future = [x for x in times if x is not None and x > t - 1e-9]
        t = max(t + 1e-6, min(future, default=math.inf) + 1e-6)
        prober.poll(t)
        assert t < 1000, "the probe ran away"
    assert prober.finding is not None
    return prober.finding, progress


MATRIX = [
    (start, end, speed)
    for start, end in ((0x02, 0x03), (0x1B, 0x1C), (0x01, 0x04))
    for speed in (9600, 2400, 19200)
]


@pytest.mark.parametrize(("start", "end", "speed"), MATRIX)
def test_a_nulmodem_follower_is_found_at_its_bytes_and_speed(
    start: int, end: int, speed: int
) -> None:
    peer = SimPeer(speed, start=start, end=end)
    finding, progress = run(peer)
    assert (finding.verdict, finding.link) == ("found", "nulmodem")
    assert (finding.start, finding.end, finding.speed) == (start, end, speed)
    assert "no game was started" in finding.left
    assert peer.player.session.phase is Phase.IDLE  # ready for a GAMEREQ
    assert progress and progress[0].startswith("listening at 9600 baud")


@pytest.mark.parametrize("speed", [9600, 2400, 4800])
def test_a_nul_follower_plays_one_empty_game_and_is_left_ready(speed: int) -> None:
    peer = SimPeer(speed, link_kind="nul")
    finding, _ = run(peer)
    assert (finding.verdict, finding.link, finding.speed) == ("found", "nul", speed)
    assert finding.start is None and finding.end is None
    if speed == 9600:  # the first speed tried: it heard only our CHAT and GAMEREQ
        assert "a game was started and ended" in finding.left
        assert peer.player.games_finished == 1
    assert peer.player.session.phase is Phase.IDLE and not peer.player.done


def test_a_nulmodem_initiator_is_found_by_listening_and_offers_its_next_game() -> None:
    peer = SimPeer(9600, start=0x1B, end=0x1C, role=Role.INITIATOR)
    finding, progress = run(peer)
    assert (finding.verdict, finding.link) == ("found", "nulmodem")
    assert (finding.start, finding.end, finding.speed) == (0x1B, 0x1C, 9600)
    assert "GAMEACC code 2" in finding.left
    assert len(progress) == 1  # found while listening: nothing else was tried
    assert peer.player.session.phase is Phase.REQUESTED  # its next game is offered


def test_a_nul_initiator_is_found_by_listening() -> None:
    peer = SimPeer(9600, link_kind="nul", role=Role.INITIATOR)
    finding, _ = run(peer)
    assert (finding.verdict, finding.link, finding.speed) == ("found", "nul", 9600)
    assert "GAMEREQ" in finding.evidence[-1]


def test_an_initiator_at_another_speed_leaves_garbage_that_points_to_its_speed() -> None:
    peer = SimPeer(2400, start=0x02, end=0x03, role=Role.INITIATOR)
    finding, progress = run(peer)
    assert (finding.verdict, finding.speed) == ("found", 2400)
    assert any("garbage" in line and "at 2400" in line for line in finding.evidence)
    # The garbage pointed at 2400, so it was tried before 19200.
    assert not any(line.startswith("19200") for line in progress)


def test_nothing_on_the_line_is_not_found_and_says_what_was_tried() -> None:
    settings = ProbeSettings(listen=0.5, wait=0.2, answer_wait=0.5, timeout=30.0)
    finding, _ = run(None, settings)
    assert finding.verdict == "not found"
    assert finding.tried and finding.tried[0] == "9600 baud NUL (CHAT)"
    assert finding.evidence == ()


def test_the_timeout_bounds_the_probe() -> None:
    settings = ProbeSettings(listen=0.5, wait=0.2, answer_wait=0.5, timeout=3.0)
    finding, _ = run(SimPeer(1200, start=0x05, end=0x06), settings)
    assert finding.verdict in ("not found", "ambiguous")
    assert len(finding.tried) < 8


def test_a_line_that_cannot_change_speed_is_probed_once_and_reports_no_speed() -> None:
    settings = ProbeSettings(listen=0.5, wait=0.2, answer_wait=0.5, vary_speed=False)
    finding, _ = run(SimPeer(9600, start=0x01, end=0x04), settings)
    assert (finding.verdict, finding.start, finding.end, finding.speed) == (
        "found",
        0x01,
        0x04,
        None,
    )


def test_an_unusual_start_byte_is_found_in_the_second_round() -> None:
    finding, _ = run(SimPeer(9600, start=0x05, end=0x06))
    assert (finding.verdict, finding.start, finding.end) == ("found", 0x05, 0x06)


def test_interrupting_says_what_was_found_so_far() -> None:
    prober = Prober(FAST)
    prober.start(0.0)
    finding = prober.interrupt(0.1)
    assert finding.interrupted and finding.verdict == "not found"
    assert prober.done and prober.next_deadline() is None


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError):
        ProbeSettings(timeout=0)
    with pytest.raises(ConfigError):
        ProbeSettings(speeds=())
    with pytest.raises(ConfigError):
        ProbeSettings(wait=math.nan)
