"""``--web HOST:PORT``: a page that shows every running game move by move, in the browser.

Server-sent events (``/events``) carry the updates; the page (``/``, one HTML file with its
script inline: no build step) draws each board as SVG.  ``/state`` is the same state as
JSON, for scripts.  It listens on 127.0.0.1 unless told otherwise and, like the bridge,
refuses clients outside ``--allow`` when that is given.

aiohttp is an optional dependency (``pip install dxserial[web]``): only this module
imports it, and only when ``--web`` is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from dxserial.bridge.policy import IPNetwork, allowed, parse_networks
from dxserial.errors import ConfigError
from dxserial.programs.live import LiveView
from dxserial.transports.schemes import address as web_address
from dxserial.transports.tcp import format_address, listen_problem, parse_endpoint

__all__ = ["WebView", "start_web"]

log = logging.getLogger("dxserial.web")

#: Updates a slow browser may fall behind by before it is dropped (it reconnects and gets
#: a fresh snapshot: EventSource does that by itself).
_BACKLOG = 1000


class WebView:
    """The running server: :meth:`publish` takes match/tournament events."""

    def __init__(self, live: LiveView, networks: tuple[IPNetwork, ...]) -> None:
        self.live = live
        self.networks = networks
        self._clients: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._streams: set[asyncio.Event] = set()
        self._runner: Any = None
        self.address = ""

    def publish(self, event: dict[str, Any]) -> None:
        update = self.live.apply(event)
        if update is None:
            return
        for queue in list(self._clients):
            try:
                queue.put_nowait(update)
            except asyncio.QueueFull:
                self._clients.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(None)

    async def close(self) -> None:
        """Tell the pages the event is over (they stop reconnecting), then stop serving."""
        for queue in list(self._clients):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait({"type": "end"})
                queue.put_nowait(None)
        streams = [done.wait() for done in self._streams]
        if streams:  # let each stream write its last update (bounded: a stuck client)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*streams), 2.0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ handlers

    async def _page(self, request: Any) -> Any:
        from aiohttp import web

        return web.Response(text=PAGE, content_type="text/html")

    async def _state(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response(self.live.snapshot())

    async def _events(self, request: Any) -> Any:
        from aiohttp import web

        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(_BACKLOG)
        self._clients.add(queue)
        done = asyncio.Event()
        self._streams.add(done)
        try:
            update: dict[str, Any] | None = self.live.snapshot()
            while update is not None:
                await response.write(f"data: {json.dumps(update)}\n\n".encode())
                update = await queue.get()
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._clients.discard(queue)
            self._streams.discard(done)
            done.set()
        return response


async def start_web(
    address: str, allow: list[str], say: Callable[[str], None], title: str = "dxserial"
) -> WebView:
    """Serve the live view at ``address`` (``HOST:PORT``; a bare port is on 127.0.0.1)."""
    try:
        from aiohttp import web
    except ImportError:
        raise ConfigError("--web needs aiohttp: pip install 'dxserial[web]'") from None
    host, port = parse_endpoint(web_address(address, "--web", ("http",)), default_port=8080)
    view = WebView(LiveView(title), parse_networks(allow))

    def guarded(handler: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
        async def guard(request: Any) -> Any:
            peer = request.remote or ""
            if view.networks and not allowed(peer, view.networks):
                log.warning("web view: refused %s (not in --allow)", peer)
                return web.Response(status=403, text="not allowed\n")
            return await handler(request)

        return guard

    app = web.Application()
    app.router.add_get("/", guarded(view._page))
    app.router.add_get("/events", guarded(view._events))
    app.router.add_get("/state", guarded(view._state))
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise listen_problem(f"--web {format_address(host, port)}", exc) from None
    view._runner = runner
    server = getattr(site, "_server", None)
    sockets = getattr(server, "sockets", None) or []
    real_port = int(sockets[0].getsockname()[1]) if sockets else port
    view.address = f"http://{format_address(host, real_port)}/"
    say(f"web view: {view.address}")
    return view


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>dxserial live</title>
<style>
 body { font-family: system-ui, sans-serif; margin: 1em; background: #f4f1ea; color: #222; }
 #games { display: flex; flex-wrap: wrap; gap: 1em; }
 .game { background: #fff; border-radius: 6px; padding: .6em; width: 330px;
         box-shadow: 0 1px 3px #0003; }
 .game.over { opacity: .85; }
 .head { font-weight: 600; margin-bottom: .3em; }
 .clock { font-variant-numeric: tabular-nums; color: #555; font-size: .9em; }
 .moves { font-family: monospace; font-size: .85em; max-height: 5.5em; overflow: auto; }
 .result { font-weight: 600; margin-top: .3em; }
 pre { background: #fff; padding: .6em; border-radius: 6px; overflow: auto; }
 #status { color: #777; font-size: .85em; }
</style></head>
<body>
<h1 id="title">dxserial live</h1>
<div id="status">connecting...</div>
<div id="games"></div>
<section id="standings" hidden>
<h2>Standings</h2>
<pre id="table"></pre>
</section>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const cards = new Map();

function parseFen(fen) {
  // PDN FEN "W:W31,32,K46:B1,2": square -> "w", "b", "W" (white king), "B"
  const board = {};
  if (!fen) { for (let s = 1; s <= 20; s++) board[s] = "b";
              for (let s = 31; s <= 50; s++) board[s] = "w"; return board; }
  for (const part of fen.split(":").slice(1)) {
    const side = part[0].toLowerCase();
    for (let item of part.slice(1).split(",")) {
      item = item.trim(); if (!item) continue;
      const king = item[0] === "K"; if (king) item = item.slice(1);
      let [a, b] = item.split("-").map(Number); if (!b) b = a;
      for (let s = a; s <= b; s++) board[s] = king ? side.toUpperCase() : side;
    }
  }
  return board;
}

function drawBoard(fen) {
  const size = 30, svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 300 300"); svg.setAttribute("width", "300");
  svg.setAttribute("class", "board"); svg.setAttribute("data-fen", fen || "");
  const board = parseFen(fen);
  for (let row = 0; row < 10; row++) for (let col = 0; col < 10; col++) {
    const r = document.createElementNS(SVG, "rect");
    r.setAttribute("x", col * size); r.setAttribute("y", row * size);
    r.setAttribute("width", size); r.setAttribute("height", size);
    r.setAttribute("fill", (row + col) % 2 ? "#8b5a2b" : "#f0d9b5");
    svg.appendChild(r);
  }
  for (let sq = 1; sq <= 50; sq++) {
    const row = Math.floor((sq - 1) / 5), col = 2 * ((sq - 1) % 5) + (row % 2 ? 0 : 1);
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("class", "square"); g.setAttribute("data-square", sq);
    const piece = board[sq] || "";
    g.setAttribute("data-piece", piece);
    if (piece) {
      const c = document.createElementNS(SVG, "circle");
      c.setAttribute("cx", col * size + size / 2); c.setAttribute("cy", row * size + size / 2);
      c.setAttribute("r", size * 0.4);
      c.setAttribute("fill", piece.toLowerCase() === "w" ? "#fff" : "#111");
      c.setAttribute("stroke", piece.toLowerCase() === "w" ? "#333" : "#ccc");
      c.setAttribute("stroke-width", piece === piece.toUpperCase() ? 4 : 1.5);
      g.appendChild(c);
    }
    svg.appendChild(g);
  }
  return svg;
}

function clock(seconds) {
  if (seconds === null || seconds === undefined) return "no clock";
  const s = Math.max(0, seconds);
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

function showGame(game) {
  let card = cards.get(game.number);
  if (!card) {
    card = document.createElement("div"); card.className = "game";
    card.id = "game-" + game.number; cards.set(game.number, card);
    const list = document.getElementById("games");
    const later = [...list.children].find(c => Number(c.dataset.number) > game.number);
    list.insertBefore(card, later || null);
  }
  card.dataset.number = game.number;
  card.dataset.plies = game.moves.length;
  card.dataset.result = game.result || "";
  card.classList.toggle("over", !!game.result);
  card.replaceChildren();
  const head = document.createElement("div"); head.className = "head";
  head.textContent = "Game " + game.number + ": " + game.white + " - " + game.black;
  const clocks = document.createElement("div"); clocks.className = "clock";
  clocks.textContent = "White " + clock(game.left.White) + "  Black " + clock(game.left.Black)
    + (game.opening ? "  opening " + game.opening : "");
  const moves = document.createElement("div"); moves.className = "moves";
  moves.textContent = game.moves.map((m, i) => (i % 2 ? "" : (i / 2 + 1) + ". ") + m).join(" ");
  card.append(head, clocks, drawBoard(game.fen), moves);
  if (game.result) {
    const r = document.createElement("div"); r.className = "result";
    r.textContent = game.result + " (" + game.reason + ")"; card.append(r);
  }
}

function showTable(table) {
  if (!table || !table.length) return;  // none yet, or a bridge (it keeps no standings)
  document.getElementById("standings").hidden = false;
  document.getElementById("table").textContent = table.join("\\n");
}

const source = new EventSource("events");
source.onopen = () => { document.getElementById("status").textContent = "live"; };
source.onerror = () => { document.getElementById("status").textContent = "reconnecting..."; };
source.onmessage = (e) => {
  const u = JSON.parse(e.data);
  if (u.type === "snapshot") {
    document.getElementById("title").textContent = u.title;
    document.title = u.title + " (live)";
    u.games.forEach(showGame); showTable(u.table);
  } else if (u.type === "game") showGame(u.game);
  else if (u.type === "standings") showTable(u.table);
  else if (u.type === "end") {
    source.close();
    document.getElementById("status").textContent = "finished (the server has stopped)";
  }
};
</script>
</body></html>
"""
