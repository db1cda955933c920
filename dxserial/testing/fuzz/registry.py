"""The fuzz targets' registry: each target module adds its own to :data:`TARGETS`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@dataclass
class Target:
    """One fuzz target: a property ``body`` and the strategies of its arguments.

    ``test(**settings)`` builds the hypothesis test (pytest runs it with ``examples``;
    bench/fuzz.py runs it in rounds until its time is up). ``calls`` counts examples run.
    """

    name: str
    summary: str
    body: Callable[..., None]
    strategies: dict[str, st.SearchStrategy[Any]]
    examples: int
    calls: int = 0

    def test(self, **options: Any) -> Callable[[], None]:
        @functools.wraps(self.body)
        def counted(*args: Any, **kwargs: Any) -> None:
            self.calls += 1
            self.body(*args, **kwargs)

        options.setdefault("deadline", None)
        options.setdefault("suppress_health_check", [HealthCheck.too_slow])
        wrapped: Callable[[], None] = settings(**options)(given(**self.strategies)(counted))
        return wrapped


    def short_test(self) -> Callable[[], None]:
        """The test pytest runs: ``examples`` examples."""
        return self.test(max_examples=self.examples)


TARGETS: dict[str, Target] = {}

#: ``test_known_bug_*`` tests of tests/testing/test_fuzz.py (strict xfail) and why they fail.
KNOWN_BUGS: dict[str, str] = {}


def fuzz_target(
    name: str, summary: str, *, examples: int, **strategies: st.SearchStrategy[Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register ``body`` as target ``name`` in :data:`TARGETS`."""

    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        TARGETS[name] = Target(name, summary, body, strategies, examples)
        return body

    return decorate


def one_line(text: str) -> None:
    assert text and "\n" not in text and "\r" not in text, repr(text)
