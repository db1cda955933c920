"""A real ser2net exporting a serial port (a `dxserial vpair` end) with RFC 2217 on 127.0.0.1."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from dxserial.testing.process import free_port, listening, wait_until

SER2NET = shutil.which("ser2net") or (
    "/usr/sbin/ser2net" if Path("/usr/sbin/ser2net").exists() else None
)
#: Why a check that needs ser2net cannot run here (None: it can).
SER2NET_MISSING = (
    "ser2net is not installed (apt-get install ser2net)" if SER2NET is None else None
)


class Ser2net:
    """ser2net with a generated YAML config: ``telnet(rfc2217)`` on 127.0.0.1:port -> device."""

    def __init__(self, tmp_path: Path, device: str, port: int | None = None) -> None:
        assert SER2NET is not None
        self.port = port or free_port()
        self.config = tmp_path / f"ser2net-{self.port}.yaml"
        self.config.write_text(
            "%YAML 1.1\n---\n"
            "connection: &lab\n"
            f"  accepter: telnet(rfc2217),tcp,127.0.0.1,{self.port}\n"
            f"  connector: serialdev,{device},9600n81,local\n"
            "  options:\n"
            "    kickolduser: true\n"
        )
        self.log = (tmp_path / "ser2net.log").open("a")
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"rfc2217://127.0.0.1:{self.port}"

    def start(self) -> None:
        assert SER2NET is not None
        self.proc = subprocess.Popen(
            [SER2NET, "-n", "-u", "-c", str(self.config), "-P", str(self.config) + ".pid"],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL,
        )
        wait_until(lambda: listening(self.port), timeout=10, what=f"ser2net on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def close(self) -> None:
        self.stop()
        self.log.close()
