"""What ``dxserial serve`` tells the user is so (issue 38 points 4, 5, 6): its game count
when the TCP engine ends its last game with stop code 1, a second serve of the same rig with
``web`` in the file, and ``--status`` while the file has a mistake the daemon refused."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from helpers import run_dxserial as run_cli

from dxserial.testing.process import Cli, free_port, wait_until
from dxserial.testing.rig import start_serial_engine

pytestmark = pytest.mark.e2e
pytest.importorskip("aiohttp")


def lines(rig: Path) -> dict[str, dict[str, object]]:
    result = run_cli("serve", str(rig), "--status", "--json")
    assert result.returncode == 0, result.stderr
    return {row["line"]: row for row in json.loads(result.stdout)["lines"]}


def test_counts_a_second_serve_and_status_after_a_refused_reload(tmp_path: Path) -> None:
    vpair, engine, port = start_serial_engine(tmp_path, 3)
    rig = tmp_path / "rig.toml"
    good = (f'status = "{tmp_path}/serve.sock"\nweb = "127.0.0.1:{free_port()}"\n'
            f'[defaults]\nmax_attempts = 1000\npdn = "{tmp_path}/games"\n'
            f'[lines.alpha]\nport = "{port}"\nlisten = "127.0.0.1:0"\n')
    rig.write_text(good)
    log = tmp_path / "serve.log"
    try:
        with Cli("serve", str(rig), stderr_path=log) as serve:
            serve.out.expect("serve ready: 1 line(s)", timeout=20)
            wait_until(lambda: lines(rig)["alpha"]["state"] == "running", 20, "alpha running")
            address = str(lines(rig)["alpha"]["listen"])
            # Point 6: the initiator ends its last game with stop code 1, which the bridge
            # replaces for the serial engine: that game is counted too.
            tcp = run_cli("engine", f"tcp://{address}", "--role", "initiator", "--games", "2",
                          "--moves", "4", "--depth", "1", timeout=120)
            assert tcp.returncode == 0, tcp.stderr
            wait_until(lambda: lines(rig)["alpha"]["games"] == 2, 20, "both games counted")
            assert len(list((tmp_path / "games").glob("*.pdn"))) == 2

            # Point 5: a second serve of the rig is told that one answers, not --web.
            second = run_cli("serve", str(rig), timeout=30)
            assert second.returncode == 2
            (said,) = second.stderr.splitlines()
            assert "another dxserial serve answers there" in said and "--web" not in said

            # Point 4: a mistake in the file, refused on SIGHUP: --status still shows the
            # running lines, the refusal, and the file's mistake as a warning.
            rig.write_text(good + "buad = 2400\n")
            serve.proc.send_signal(signal.SIGHUP)
            wait_until(lambda: "reload refused" in log.read_text(), 20, "the refused reload")
            shown = run_cli("serve", str(rig), "--status")
            assert shown.returncode == 0, shown.stderr
            rows = shown.stdout.splitlines()
            assert any(row.startswith("alpha ") for row in rows)
            assert rows[-1].startswith("last reload: reload refused, every line runs on")
            assert "unknown key 'buad'" in shown.stderr
            assert serve.stop() == 0
        # No daemon: the file's mistake is the answer.
        after = run_cli("serve", str(rig), "--status")
        assert after.returncode == 2 and "unknown key 'buad'" in after.stderr
    finally:
        engine.close()
        vpair.close()
