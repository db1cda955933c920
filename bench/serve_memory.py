"""Resident memory of ``dxserial serve`` with 1, 8 and 32 lines, beside ser2net serving the
same lines in the same run; CPU time per message with 8 lines busy.

Each line is a pseudo-terminal this script holds the master end of (the serial engine's
side); ``dxserial serve`` (``link = "nul"``) and ser2net (``sendon='\\x00'``) each serve
every slave end on a TCP port of its own, with one TCP client connected to every line (ser2net
opens a device only when a client comes).  Memory: VmRSS and the anonymous part of
/proc/PID/smaps_rollup once every line is up.  CPU: each of 8 clients sends MOVE frames that
the script echoes back from the serial end, one at a time per line, all lines at once; the
daemon's user+system time over those round trips divided by the messages it carried.

    python3 bench/serve_memory.py [--lines 1,8,32] [--rounds 2000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FRAME = b"M0012061100\x00"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ptys(count: int) -> list[tuple[int, str]]:
    out = []
    for _ in range(count):
        master, slave = os.openpty()
        out.append((master, os.ttyname(slave)))
        import termios
        import tty

        tty.setraw(slave)
        attrs = termios.tcgetattr(slave)
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        os.close(slave)
    return out


def memory(pid: int) -> dict[str, float]:
    def kib(path: str, key: str) -> float:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key + ":"):
                return float(line.split()[1]) / 1024
        return 0.0

    return {"rss": kib(f"/proc/{pid}/status", "VmRSS"),
            "anon": kib(f"/proc/{pid}/smaps_rollup", "Anonymous")}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_listening(ports: list[int], proc: subprocess.Popen[bytes], limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    for port in ports:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited ({proc.returncode})")
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on {port}") from None
                time.sleep(0.05)


def start(kind: str, lines: list[tuple[int, str]], ports: list[int], tmp: Path
          ) -> list[subprocess.Popen[bytes]]:
    if kind == "dxserial bridge per line":  # today's rig: a process per line
        return [subprocess.Popen([sys.executable, "-m", "dxserial", "bridge", path, "--link",
                                  "nul", "--listen", f"127.0.0.1:{port}", "-q",
                                  "--no-serial-check"], stdout=subprocess.DEVNULL)
                for (_, path), port in zip(lines, ports, strict=True)]
    return [_one(kind, lines, ports, tmp)]


def _one(kind: str, lines: list[tuple[int, str]], ports: list[int], tmp: Path
         ) -> subprocess.Popen[bytes]:
    if kind == "ser2net":
        config = tmp / "ser2net.yaml"
        parts = ["%YAML 1.1", "---"]
        for i, ((_, path), port) in enumerate(zip(lines, ports, strict=True)):
            parts += [f"connection: &line{i}", f"  accepter: tcp,127.0.0.1,{port}",
                      f"  connector: serialdev,{path},9600n81,local",
                      "  options:", "    kickolduser: true", "    sendon: '\\x00'"]
        config.write_text("\n".join(parts) + "\n")
        return subprocess.Popen([shutil.which("ser2net") or "ser2net", "-d", "-u", "-c",
                                 str(config), "-P", str(tmp / "ser2net.pid")])
    rig = tmp / "rig.toml"
    text = [f'status = "{tmp}/serve.sock"', "[defaults]", 'link = "nul"', "serial_check = false"]
    for i, ((_, path), port) in enumerate(zip(lines, ports, strict=True)):
        text += [f"[lines.l{i}]", f'port = "{path}"', f'listen = "127.0.0.1:{port}"']
    rig.write_text("\n".join(text) + "\n")
    return subprocess.Popen([sys.executable, "-m", "dxserial", "serve", str(rig), "-q"],
                            stdout=subprocess.DEVNULL)


def measure(kind: str, count: int, rounds: int) -> dict[str, float]:
    lines = ptys(count)
    ports: list[int] = []
    while len(ports) < len(lines):  # distinct: serve refuses two lines on one address
        port = free_port()
        if port not in ports:
            ports.append(port)
    with tempfile.TemporaryDirectory() as folder:
        procs = start(kind, lines, ports, Path(folder))
        clients: list[socket.socket] = []
        try:
            for proc, some in zip(procs, [ports] if len(procs) == 1 else [[p] for p in ports],
                                  strict=True):
                wait_listening(some, proc)
            for port in ports:
                sock = socket.create_connection(("127.0.0.1", port))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                clients.append(sock)
            # Every line carries one frame each way first: every port is open and in use.
            carried = ping(lines, clients, 1)
            time.sleep(1.0)
            each = [memory(proc.pid) for proc in procs]
            result: dict[str, float] = {key: sum(m[key] for m in each) for key in each[0]}
            result["lines"] = count
            result["processes"] = len(procs)
            if rounds:
                busy = min(8, count)
                before = sum(cpu_seconds(proc.pid) for proc in procs)
                carried = ping(lines[:busy], clients[:busy], rounds)
                used = sum(cpu_seconds(proc.pid) for proc in procs) - before
                result["cpu_us_per_message"] = used / carried * 1e6
            return result
        finally:
            for sock in clients:
                sock.close()
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(20)
            for master, _ in lines:
                os.close(master)


def ping(lines: list[tuple[int, str]], clients: list[socket.socket], rounds: int) -> int:
    """Each client sends a frame, the serial end echoes it back; ``rounds`` per line, every
    line at once.  Returns the messages the bridge carried (two per round trip)."""
    sel = selectors.DefaultSelector()
    left = {}
    pending: dict[int, bytes] = {}
    for (master, _), sock in zip(lines, clients, strict=True):
        sel.register(master, selectors.EVENT_READ, ("serial", master, sock))
        sel.register(sock, selectors.EVENT_READ, ("tcp", master, sock))
        left[sock.fileno()] = rounds
        sock.sendall(FRAME)
        pending[master] = b""
        pending[sock.fileno()] = b""
    done = 0
    deadline = time.monotonic() + 120
    while any(left.values()):
        if time.monotonic() > deadline:
            raise RuntimeError("the round trips stalled")
        for key, _ in sel.select(5):
            side, master, sock = key.data
            if side == "serial":
                try:
                    data = os.read(master, 4096)
                except OSError:  # EIO: the server has not opened the slave end yet
                    time.sleep(0.01)
                    continue
                pending[master] += data
                while b"\x00" in pending[master]:
                    frame, _, pending[master] = pending[master].partition(b"\x00")
                    os.write(master, frame + b"\x00")
            else:
                data = sock.recv(4096)
                if not data:
                    raise RuntimeError("the server closed a line")
                fd = sock.fileno()
                pending[fd] += data
                while b"\x00" in pending[fd]:
                    _, _, pending[fd] = pending[fd].partition(b"\x00")
                    done += 2
                    left[fd] -= 1
                    if left[fd] > 0:
                        sock.sendall(FRAME)
    sel.close()
    return done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", default="1,8,32")
    ap.add_argument("--rounds", type=int, default=2000, help="round trips per busy line")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    kinds = ["dxserial serve"] + (["ser2net"] if shutil.which("ser2net") else [])
    rows = []
    for count in [int(n) for n in args.lines.split(",")]:
        for kind in kinds + (["dxserial bridge per line"] if count <= 8 else []):
            rounds = args.rounds if count == 8 else 0
            rows.append({"kind": kind, **measure(kind, count, rounds)})
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
