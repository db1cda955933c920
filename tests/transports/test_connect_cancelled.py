"""A connect attempt that is cancelled as it fails stops (issue 33).

On Python 3.11 ``asyncio.wait_for`` returns the inner result (here: raises its error) when
a cancellation and the inner's end meet, so the cancellation is lost.  The director
cancels an engine's connect attempts when the engine exits; with the cancellation lost its
retry loop went on until ``connect_timeout`` and the error read "not ready: cannot
connect" instead of "exited before it was ready" (or hung for a long connect_timeout).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import dxserial.transports.tcp as tcp
from dxserial.transports.endpoints import EngineEndpoint, parse_engine_endpoint

pytestmark = pytest.mark.e2e  # starts processes, ptys or sockets


def test_a_cancel_that_meets_a_refused_connect_stops_the_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        attempts: list[asyncio.Future[Any]] = []

        async def open_connection(host: str, port: int) -> Any:
            attempt: asyncio.Future[Any] = loop.create_future()
            attempts.append(attempt)
            return await attempt

        monkeypatch.setattr(tcp, "open_connection", open_connection)
        endpoint = EngineEndpoint(parse_engine_endpoint("tcp://127.0.0.1:9"))
        connecting = asyncio.ensure_future(endpoint.open(60.0))
        while not attempts:
            await asyncio.sleep(0)
        # The engine exited: the director cancels, in the same pass as the attempt ends.
        attempts[0].set_exception(ConnectionRefusedError())
        connecting.cancel()
        done, _ = await asyncio.wait({connecting}, timeout=5.0)
        assert connecting in done, f"still connecting after the cancel: {len(attempts)} attempts"
        assert connecting.cancelled()
        assert len(attempts) == 1

    asyncio.run(main())
