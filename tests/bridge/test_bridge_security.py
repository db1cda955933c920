"""Security defaults: who may connect, what may pass, who may read what was recorded.

Who may connect and which CHATs pass run in process in test_bridge_inproc.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dxserial
from dxserial.bridge import BridgeConfig
from dxserial.bridge.policy import console_blocked_by_default
from dxserial.testing.peers import DxpClient, NulModemPeer
from dxserial.testing.process import Cli
from dxserial.testing.rig import RigFactory, start_vpair

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def test_a_bridge_reachable_from_other_machines_says_what_it_guards(tmp_path: Path) -> None:
    vpair, a, _ = start_vpair(tmp_path)
    with vpair, Cli("bridge", a, "--listen", "0.0.0.0:0") as bridge:  # bound, never contacted
        bridge.out.expect("bridge ready", timeout=20)
        assert bridge.stop() == 0
        err = bridge.stderr()
        vpair.stop()
    line = next(x for x in err.splitlines() if "reachable beyond this machine" in x)
    assert "--allow limits that" in line and "'console ' are blocked" in line


def test_console_blocking_defaults_follow_the_exposure() -> None:
    def blocked(**kw: object) -> bool:
        config = BridgeConfig(port="/dev/null", **kw)  # type: ignore[arg-type]
        return console_blocked_by_default(config.block_console, config.listen, config.connect)

    assert not blocked()
    assert not blocked(listen=("127.0.0.1", 27531))
    assert not blocked(listen=("::1", 27531))
    assert blocked(listen=("0.0.0.0", 27531))
    assert blocked(listen=("192.168.1.5", 27531))
    assert blocked(connect=("engine.example", 27531))
    assert not blocked(connect=("127.0.0.1", 27531))
    assert not blocked(listen=("0.0.0.0", 27531), block_console=False)


def test_trace_and_pdn_files_are_private(rig_factory: RigFactory, tmp_path: Path) -> None:
    games = tmp_path / "games"
    rig = rig_factory(bridge_args=("--pdn", str(games)))
    with NulModemPeer(rig.peer_path, seed=4) as peer, DxpClient("127.0.0.1", rig.port) as client:
        client.send(b"Chello")
        assert peer.expect() == b"Chello"
    assert rig.trace_path.stat().st_mode & 0o777 == 0o600
    assert games.stat().st_mode & 0o077 == 0


def test_nothing_in_dxserial_runs_a_shell() -> None:
    """No shell=True, os.system or os.popen anywhere in the package."""
    offenders = []
    for path in Path(dxserial.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = ast.unparse(node.func)
                if func in ("os.system", "os.popen", "os.execl", "os.execlp", "os.spawnl"):
                    offenders.append(f"{path.name}:{node.lineno} {func}")
                for kw in node.keywords:
                    if kw.arg == "shell" and not (
                        isinstance(kw.value, ast.Constant) and kw.value.value is False
                    ):
                        offenders.append(f"{path.name}:{node.lineno} shell=")
    assert offenders == []
