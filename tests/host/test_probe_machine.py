"""The probe as a machine for the driver: the Prober's actions in the driver's words, and
the port it runs on failing under it (an in-process cable, unplugged)."""

from __future__ import annotations

import asyncio

import pytest
from helpers import until

from dxserial.drive.actions import Done, Reopen, Say, Send
from dxserial.errors import PortError
from dxserial.host.probe.machine import ENGINE, ProbeMachine
from dxserial.host.probe.prober import Prober, ProbeSettings
from dxserial.host.probe.runner import ProbeRunner
from dxserial.sim.memory import cable


def test_the_probe_opens_speaks_and_ends_with_a_finding_on_silence() -> None:
    machine = ProbeMachine(Prober(ProbeSettings(listen=0.5, wait=0.2, answer_wait=0.5)))
    first = machine.start(0.0)
    assert [a for a in first if isinstance(a, Reopen)] == [Reopen(ENGINE, 9600)]
    now, sent, said = 0.0, [], []
    out = machine.opened(now)
    for _ in range(10_000):  # nothing ever answers: the probe tries, then gives up
        sent += [a.raw for a in out if isinstance(a, Send)]
        said += [a.text for a in out if isinstance(a, Say)]
        if any(isinstance(a, Done) for a in out):
            break
        reopen = [a for a in out if isinstance(a, Reopen)]
        deadline = machine.next_deadline()
        if reopen:
            out = machine.opened(now)
            continue
        assert deadline is not None
        now = deadline
        out = machine.poll(now)
    assert machine.finding is not None and machine.finding.verdict == "not found"
    assert sent  # it did speak (a CHAT, a GAMEREQ) before giving up
    assert said and said[0].startswith("listening at 9600 baud")
    assert machine.next_deadline() is None


def test_a_stop_ends_the_probe_with_what_is_known() -> None:
    machine = ProbeMachine(Prober(ProbeSettings(listen=5.0)))
    machine.start(0.0)
    machine.opened(0.0)
    out = machine.stop(1.0)
    assert any(isinstance(a, Done) for a in out)
    assert machine.finding is not None and machine.finding.interrupted


async def test_a_port_unplugged_under_the_probe_ends_it_with_one_line_saying_so() -> None:
    said: list[str] = []
    with cable("probe-gone") as c:
        runner = ProbeRunner("memory://probe-gone", Prober(ProbeSettings(listen=5.0)), said.append)
        probing = asyncio.create_task(runner.run())
        await until(lambda: runner.driver.port(ENGINE) is not None, 5)
        c.unplug()
        with pytest.raises(PortError, match="unplugged") as lost:
            await asyncio.wait_for(probing, 5)
    assert "\n" not in str(lost.value)
    assert said and said[0].startswith("listening at 9600 baud")
