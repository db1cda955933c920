"""``dxserial vpair``: a virtual null-modem cable between two paths, for tests and demos."""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import random
import selectors
import signal
import sys
import time
from collections.abc import Iterator
from enum import StrEnum
from types import FrameType
from typing import Any

import typer

from dxserial.cli.app import app
from dxserial.cli.options import parameters
from dxserial.errors import ConfigError
from dxserial.setting import Setting, checked
from dxserial.sim.ptyend import End
from dxserial.sim.vpair import VirtualPair


class EndChoice(StrEnum):
    a = "a"
    b = "b"


_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1)


#: Every setting of ``dxserial vpair``, in the order of its --help.
SETTINGS: tuple[Setting, ...] = (
    Setting("path_a", None, "Path for end A: a symlink to its pseudo-terminal goes there.",
            argument=True, metavar="PATH_A"),
    Setting("path_b", None, "Path for end B.", argument=True, metavar="PATH_B"),
    Setting("baud", None, "Both ends run at this speed: bytes leave at their true times (10 "
            "bits per character, 8N1). Default: as fast as the ptys go.", kind=int, minimum=1,
            ranged=True),
    Setting("baud_a", None, "End A's own speed (overrides --baud and --termios for A). When the "
            "two ends' speeds differ, bytes arrive garbled as a UART at the other speed reads "
            "them.", kind=int, minimum=1, ranged=True),
    Setting("baud_b", None, "End B's own speed (as --baud-a).", kind=int, minimum=1,
            ranged=True),
    Setting("termios_speed", False, "Each end runs at the speed the program on it sets "
            "(tcsetattr; pyserial's baudrate), as on a real line; --baud, --baud-a and --baud-b "
            "still win.", kind=bool, flags=("--termios",), show_default=True),
    Setting("drop", 0.0, "Probability that a byte is lost, per direction.", kind=float,
            minimum=0.0, maximum=1.0, ranged=True, show_default=True),
    Setting("corrupt", 0.0, "Probability that a byte arrives with one bit flipped, per "
            "direction.", kind=float, minimum=0.0, maximum=1.0, ranged=True, show_default=True),
    Setting("seed", None, "Seed for --drop/--corrupt: the same seed and traffic give the same "
            "faults. Default: random, printed on stderr.", kind=int),
    Setting("unplug_every", None, "Unplug --end every SECONDS (first time SECONDS after "
            "start).", kind=float),
    Setting("unplugged_for", 1.0, "With --unplug-every: how long the end stays unplugged each "
            "time (less than --unplug-every).", kind=float, show_default=True),
    Setting("end", EndChoice.a, "With --unplug-every: which end is unplugged.",
            kind=EndChoice, show_default=True),
)


def vpair_command(**given: Any) -> None:
    """Join two pseudo-terminals like a null-modem cable, published at two paths.

    Programs open PATH_A and PATH_B like serial ports: what one end writes,
    the other reads.  Prints "vpair ready: PATH_A <-> PATH_B" once both exist,
    runs until SIGINT/SIGTERM, then removes its links.

    Commands on stdin, one per line: unplug a|b, replug a|b, toggle a|b, stats,
    noise a|b N [SEED] (N random bytes reach that end, as a noisy line delivers them).
    SIGUSR1 toggles end A.  An unplugged end's path disappears and a program
    holding it open sees a hang-up, as with a pulled USB adapter; replug puts
    a new pty behind the same path.  Bytes sent toward an end that no program
    has open are kept and delivered to the next one that opens it.

    Speeds: --baud paces both ends; --baud-a/--baud-b set one end; with --termios an
    end runs at whatever the program on it set (as a real UART does).  Bytes are
    written at absolute deadlines (start + n x character time), so lateness never
    accumulates: measured (bench/vpair_timing.py, 9600 baud, 400-byte bursts) the
    first byte comes about 0.12 ms late (the relay's and the reader's wake-ups) and
    each later one within 0.013 ms (median; p99 0.09 ms) of its true time.  Ends at
    different speeds get what a UART at the receiving speed samples from the sender's
    bit stream: wrong bytes, more or fewer.
    """
    values = {one.key: checked(one, given[one.key], option=True) for one in SETTINGS}
    unplug_every, unplugged_for = values["unplug_every"], values["unplugged_for"]
    drop, corrupt = values["drop"], values["corrupt"]
    if unplug_every is not None and not (unplug_every > 0 and unplugged_for > 0):
        raise ConfigError("--unplug-every and --unplugged-for must be positive")
    if unplug_every is not None and unplugged_for >= unplug_every:
        raise ConfigError(
            f"--unplugged-for ({unplugged_for:g} s) must be shorter than "
            f"--unplug-every ({unplug_every:g} s)"
        )
    pair = VirtualPair(
        values["path_a"],
        values["path_b"],
        **{key: values[key] for key in ("baud", "baud_a", "baud_b", "termios_speed", "drop",
                                         "corrupt", "seed")},
    )
    with _signals_to_pipe() as wake_fd, pair:
        _say(f"vpair ready: {pair.path_a} <-> {pair.path_b}")
        if drop or corrupt:
            typer.echo(
                f"vpair faults: drop={drop:g} corrupt={corrupt:g} seed={pair.seed}", err=True
            )
        scheduled: End = "a" if values["end"] is EndChoice.a else "b"
        _serve(pair, wake_fd, unplug_every, unplugged_for, scheduled)
        _say(f"stats {json.dumps(pair.stats.as_dict())}")


vpair_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    parameters(SETTINGS)
)
app.command("vpair")(vpair_command)


def _say(line: str) -> None:
    typer.echo(line)
    sys.stdout.flush()


@contextlib.contextmanager
def _signals_to_pipe() -> Iterator[int]:
    """Route SIGINT/SIGTERM/SIGUSR1 to a pipe the main loop selects on."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)

    def ignore(signum: int, frame: FrameType | None) -> None:
        """The byte in the wake-up pipe carries the news; nothing to do here."""

    previous = {sig: signal.signal(sig, ignore) for sig in _HANDLED}
    old_wakeup = signal.set_wakeup_fd(write_fd)
    try:
        yield read_fd
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(read_fd)
        os.close(write_fd)


def _serve(
    pair: VirtualPair,
    wake_fd: int,
    unplug_every: float | None,
    unplugged_for: float,
    scheduled: End,
) -> None:
    """Main loop: signals, stdin commands and the unplug schedule, until told to stop."""
    sel = selectors.DefaultSelector()
    sel.register(wake_fd, selectors.EVENT_READ, "signal")
    with contextlib.suppress(OSError, ValueError):
        sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    pending = b""
    # Schedule: unplug at start + k*every, replug unplugged_for later (k = 1, 2, ...).
    next_down = time.monotonic() + unplug_every if unplug_every is not None else None
    next_up: float | None = None
    try:
        while True:
            timeout = None
            if next_down is not None and unplug_every is not None:
                now = time.monotonic()
                if next_up is not None and now >= next_up:
                    next_up = None
                    if not pair.plugged(scheduled):
                        pair.replug(scheduled)
                        _say(f"replugged {scheduled}: {pair.path(scheduled)}")
                if now >= next_down:
                    if pair.plugged(scheduled):
                        pair.unplug(scheduled)
                        _say(f"unplugged {scheduled}")
                    next_up = next_down + unplugged_for
                    next_down += unplug_every
                timeout = max(0.0, min(t for t in (next_down, next_up) if t is not None) - now)
            for key, _ in sel.select(timeout):
                if key.data == "signal":
                    for signum in os.read(wake_fd, 64):
                        if signum in (signal.SIGINT, signal.SIGTERM):
                            return
                        if signum == signal.SIGUSR1:
                            _report_toggle(pair, "a")
                    continue
                chunk = os.read(key.fd, 4096)
                if not chunk:  # stdin closed: keep running on signals alone
                    sel.unregister(key.fd)
                    continue
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    _command(pair, line.decode("utf-8", "replace").strip())
    finally:
        sel.close()


def _report_toggle(pair: VirtualPair, end: End) -> None:
    if pair.toggle(end):
        _say(f"replugged {end}: {pair.path(end)}")
    else:
        _say(f"unplugged {end}")


def _command(pair: VirtualPair, line: str) -> None:
    """One stdin command; a mistake is reported and the pair keeps running."""
    words = line.split()
    if not words:
        return
    verb, args = words[0].lower(), words[1:]
    if verb == "stats" and not args:
        _say(f"stats {json.dumps(pair.stats.as_dict())}")
        return
    if verb == "noise" and len(args) in (2, 3) and args[0] in ("a", "b") and all(
        a.isdigit() for a in args[1:]
    ):
        rng = random.Random(int(args[2]) if len(args) == 3 else None)
        count = min(int(args[1]), 65536)
        pair.noise("a" if args[0] == "a" else "b", rng.randbytes(count))
        _say(f"noise {args[0]} {count}")
        return
    if verb in ("unplug", "replug", "toggle") and len(args) == 1 and args[0] in ("a", "b"):
        end: End = "a" if args[0] == "a" else "b"
        try:
            if verb == "unplug":
                pair.unplug(end)
                _say(f"unplugged {end}")
            elif verb == "replug":
                pair.replug(end)
                _say(f"replugged {end}: {pair.path(end)}")
            else:
                _report_toggle(pair, end)
        except ConfigError as exc:
            typer.echo(f"vpair: {exc}", err=True)
        return
    typer.echo(
        f"vpair: unknown command {line!r}; use: unplug a|b, replug a|b, toggle a|b, "
        "noise a|b N [SEED], stats",
        err=True,
    )
