#!/usr/bin/env python3
"""Run the fuzz targets (dxserial.testing.fuzz) for a set time each: the long form.

    python3 bench/fuzz.py --seconds 60                      # every target, 60 s each
    python3 bench/fuzz.py --seconds 600 --target parser     # one target, ten minutes
    python3 bench/fuzz.py --seconds 20 --json out.json      # also write the summary

Each target is the very hypothesis test pytest runs (``TARGETS`` in dxserial.testing.fuzz),
run in rounds of fresh random examples (``max_examples`` per round sized from the rate so
far, no deadline, no example database) until its time is up. A failing round is shrunk by
hypothesis and reported with its falsifying example; fuzzing then goes on with new rounds
(at most ``--max-failures`` per target). Prints, per target: examples run, failures and
seconds; exits 1 if any target failed.

``run_section`` is the ``fuzz`` section of bench/run.py: it runs this file in a subprocess
for ``DXSERIAL_FUZZ_SECONDS`` seconds per target (default 20) and tabulates the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_SECONDS = 20.0
ROUND_SECONDS = 5.0  # aim for rounds this long, so the budget is kept closely


@dataclass
class Failure:
    error: str
    example: str


@dataclass
class Result:
    target: str
    summary: str
    examples: int = 0
    rounds: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)


def load_targets() -> dict[str, Any]:
    """The registry of targets (imported here: it needs hypothesis, a test extra)."""
    from dxserial.testing.fuzz import TARGETS

    return dict(TARGETS)


def known_bugs() -> dict[str, str]:
    """The ``test_known_bug_*`` tests of tests/testing/test_fuzz.py and their xfail reasons."""
    from dxserial.testing.fuzz import KNOWN_BUGS

    return dict(KNOWN_BUGS)


def describe(exc: BaseException) -> list[Failure]:
    """One Failure per distinct error hypothesis found (it may raise an ExceptionGroup)."""
    found: list[Failure] = []
    errors = list(exc.exceptions) if isinstance(exc, BaseExceptionGroup) else [exc]
    for error in errors:
        frames = traceback.extract_tb(error.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        text = str(error).splitlines()[0] if str(error) else ""
        notes = [n for n in getattr(error, "__notes__", []) if n.startswith("Falsifying")]
        found.append(
            Failure(
                f"{type(error).__name__}{where}: {text}"[:500],
                notes[0] if notes else "\n".join(getattr(error, "__notes__", [])),
            )
        )
    return found


def run_target(target: Any, seconds: float, max_failures: int) -> Result:
    from hypothesis import HealthCheck, Verbosity

    result = Result(target.name, target.summary)
    start = time.monotonic()
    deadline = start + seconds
    chunk = 20
    target.calls = 0
    while time.monotonic() < deadline and len(result.failures) < max_failures:
        before, t0 = target.calls, time.monotonic()
        test = target.test(
            max_examples=chunk,
            database=None,
            deadline=None,
            verbosity=Verbosity.normal,  # so the falsifying example is attached to the error
            suppress_health_check=list(HealthCheck),
        )
        try:
            test()
        except Exception as exc:
            result.failures += describe(exc)
        result.rounds += 1
        ran, took = target.calls - before, max(time.monotonic() - t0, 1e-3)
        rate = ran / took
        left = deadline - time.monotonic()
        chunk = max(1, min(1_000_000, int(rate * min(ROUND_SECONDS, max(left, 0.0)))))
    result.examples = target.calls
    result.seconds = time.monotonic() - start
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=DEFAULT_SECONDS, help="time per target")
    ap.add_argument("--target", action="append", help="run only this target (repeatable)")
    ap.add_argument("--max-failures", type=int, default=3, help="stop a target after this many")
    ap.add_argument("--json", type=Path, help="write the summary here as JSON")
    ap.add_argument("--list", action="store_true", help="list the targets and exit")
    args = ap.parse_args(argv)
    targets = load_targets()
    if args.list:
        for name, target in targets.items():
            print(f"{name}: {target.summary}")
        return 0
    names = args.target or list(targets)
    unknown = [n for n in names if n not in targets]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(targets)}")
    results = []
    for name in names:
        print(f"fuzz: {name} for {args.seconds:g} s ...", file=sys.stderr, flush=True)
        result = run_target(targets[name], args.seconds, args.max_failures)
        results.append(result)
        print(
            f"{name}: {result.examples} examples in {result.rounds} rounds, "
            f"{len(result.failures)} failures, {result.seconds:.1f} s",
            flush=True,
        )
        for failure in result.failures:
            print(f"  FAILURE {failure.error}\n  {failure.example}".replace("\n", "\n  "))
    if args.json:
        summary = {"targets": [asdict(r) for r in results], "known_bugs": known_bugs()}
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 1 if any(r.failures for r in results) else 0


# ----------------------------------------------------------------------- bench/run.py


def run_section(args: argparse.Namespace) -> str:
    """The ``fuzz`` section: every target for DXSERIAL_FUZZ_SECONDS s (default 20)."""
    seconds = float(os.environ.get("DXSERIAL_FUZZ_SECONDS", DEFAULT_SECONDS))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fuzz.json"
        print(f"bench: fuzz, {seconds:g} s per target ...", file=sys.stderr, flush=True)
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--seconds", str(seconds),
             "--json", str(out)],
            capture_output=True, text=True, check=False,
            timeout=seconds * 20 + 600,
        )
        if not out.exists():
            tail = proc.stderr[-2000:]
            return f"The fuzz run failed (exit code {proc.returncode}):\n\n```\n{tail}\n```"
        summary = json.loads(out.read_text())
    results = summary["targets"]
    lines = [
        "| target | what it feeds | examples | examples/s | failures | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        rate = r["examples"] / r["seconds"] if r["seconds"] else 0.0
        lines.append(
            f"| {r['target']} | {r['summary']} | {r['examples']} | {rate:.0f} "
            f"| {len(r['failures'])} | {r['seconds']:.1f} |"
        )
    text = "\n".join(lines)
    text += (
        "\n\nLong form of tests/testing/test_fuzz.py (targets in dxserial.testing.fuzz): "
        f"`python3 bench/fuzz.py --seconds {seconds:g}` "
        "(hypothesis, fresh random rounds until the time per target is up; a failure is "
        "shrunk and shown with its falsifying example). Bugs the targets found earlier, in "
        "code they do not own, are pinned by strict xfail tests there and stepped around:"
    )
    text += "\n"
    for name, reason in summary["known_bugs"].items():
        text += f"\n- `{name}`: {reason}"
    for r in results:
        for f in r["failures"]:
            text += f"\n\nFailure in `{r['target']}`: {f['error']}\n\n```\n{f['example']}\n```"
    return text


if __name__ == "__main__":
    sys.exit(main())
