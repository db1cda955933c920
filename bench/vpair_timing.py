"""How close to their true times a paced ``dxserial vpair`` delivers bytes.

A burst of N bytes is written at once to end A of a VirtualPair at BAUD; end B reads
every byte as soon as it is there and timestamps it.  Byte k's true time is the first
byte's arrival + k x 10 / BAUD (the line's character time); the error is its arrival minus
that.  Errors are measured relative to the first byte, so they show pacing (drift and
jitter); the first byte's lateness against the write (+ one character time) is reported
on its own: it is the relay thread's and the reader's wake-up latency.

    python bench/vpair_timing.py [--baud 9600] [--bytes 400] [--runs 5]

The reader's own wake-up latency is part of every figure: the relay's accuracy is at
least this good.
"""

from __future__ import annotations

import argparse
import os
import select
import statistics
import sys
import tempfile
import time

from dxserial.sim.lane import BITS_PER_CHAR
from dxserial.sim.vpair import VirtualPair


def one_run(baud: int, count: int) -> tuple[float, list[float]]:
    """(latency of the first byte, per-byte error) for one burst."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        VirtualPair(f"{tmp}/a", f"{tmp}/b", baud=baud) as pair,
    ):
        fd_a = os.open(pair.path_a, os.O_RDWR | os.O_NOCTTY)
        fd_b = os.open(pair.path_b, os.O_RDWR | os.O_NOCTTY)
        try:
            sent_at = time.monotonic()
            os.write(fd_a, bytes(count))
            arrivals: list[float] = []
            deadline = sent_at + 2 * count * BITS_PER_CHAR / baud + 5
            while len(arrivals) < count and time.monotonic() < deadline:
                if select.select([fd_b], [], [], 1.0)[0]:
                    now = time.monotonic()
                    arrivals += [now] * len(os.read(fd_b, 4096))
        finally:
            os.close(fd_a)
            os.close(fd_b)
    char = BITS_PER_CHAR / baud
    first = arrivals[0]
    return first - sent_at - char, [t - (first + k * char) for k, t in enumerate(arrivals)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baud", type=int, default=9600)
    parser.add_argument("--bytes", type=int, default=400)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    latencies: list[float] = []
    errors: list[float] = []
    for _ in range(args.runs):
        latency, errs = one_run(args.baud, args.bytes)
        latencies.append(latency)
        errors += errs
    absolute = sorted(abs(e) for e in errors)
    p99 = absolute[int(0.99 * (len(absolute) - 1))]
    last = [e for e in errors[args.bytes - 1 :: args.bytes]]
    print(
        f"vpair --baud {args.baud}: {args.runs} bursts of {args.bytes} bytes "
        f"(character time {1e3 * BITS_PER_CHAR / args.baud:.3f} ms)\n"
        f"  first byte: {1e3 * statistics.median(latencies):.3f} ms after its true time "
        "(median; relay + reader wake-up)\n"
        f"  per-byte error vs first byte + k x character time: median "
        f"{1e3 * statistics.median(absolute):.3f} ms, p99 {1e3 * p99:.3f} ms, "
        f"max {1e3 * absolute[-1]:.3f} ms\n"
        f"  last byte of each burst: {', '.join(f'{1e3 * e:+.3f}' for e in last)} ms "
        "(no drift: stays within the jitter)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
