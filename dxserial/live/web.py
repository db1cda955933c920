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

from dxserial.errors import ConfigError
from dxserial.live.view import LiveView
from dxserial.transports.access import IPNetwork, allowed, parse_networks
from dxserial.transports.schemes import address as web_address
from dxserial.transports.tcp import format_address, listen_problem, parse_endpoint

__all__ = ["WebView", "start_web"]

log = logging.getLogger("dxserial.live.web")

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
    address: str, allow: list[str], say: Callable[[str], None], title: str = "dxserial",
    *, option: str = "--web",
) -> WebView:
    """Serve the live view at ``address`` (``HOST:PORT``; a bare port is on 127.0.0.1);
    ``option`` names where the address came from, for the errors."""
    try:
        from aiohttp import web
    except ImportError:
        raise ConfigError(f"{option} needs aiohttp: pip install 'dxserial[web]'") from None
    host, port = parse_endpoint(web_address(address, option, ("http",)), default_port=8080)
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
        raise listen_problem(f"{option} {format_address(host, port)}", exc) from None
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
 #layout { display: grid; grid-template-columns: 1fr minmax(340px, 42%); gap: 1em;
           align-items: start; }
 aside { font-size: .85em; overflow-x: auto; }
 #games:empty + aside, #layout.wide aside { grid-column: 1 / -1; }  /* the whole width */
 #layout.wide aside { order: -1; }  /* a table too wide for the side: above the games */
 #games { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
 aside h2 { font-size: 1.1em; margin: .2em 0 .4em; }
 aside table { width: 100%; margin-bottom: .3em; }
 .game { background: #fff; border-radius: 6px; padding: .6em; width: 470px;
         box-shadow: 0 1px 3px #0003; display: grid; gap: .3em .6em;
         grid-template-columns: 300px 1fr; grid-template-areas:
         "head head" "clock clock" "board moves" "result result"; }
 .game.over { opacity: .9; }
 .head { grid-area: head; font-weight: 600; }
 .clock { grid-area: clock; display: flex; gap: .6em; white-space: pre; }
 .side { font-variant-numeric: tabular-nums; padding: .1em .5em; border-radius: 4px;
         background: #eee; color: #555; }
 .side.run { background: #2f6b2f; color: #fff; }
 .board { grid-area: board; }
 .moves { grid-area: moves; font-family: monospace; font-size: .9em; height: 300px;
          overflow-y: auto; background: #faf8f3; border-radius: 4px; }
 .row { display: grid; grid-template-columns: 3em 1fr 1fr; padding: 0 .3em; }
 .row:nth-child(odd) { background: #f0ece2; }
 .num { color: #999; }
 .ply.last { background: #d8e8b0; font-weight: 700; }
 .result { grid-area: result; font-weight: 600; }
 table { border-collapse: collapse; background: #fff; border-radius: 6px; }
 caption { text-align: left; font-weight: 600; padding: .3em 0; }
 th, td { padding: .15em .5em; text-align: left; font-variant-numeric: tabular-nums;
          white-space: nowrap; }
 th { border-bottom: 1px solid #ccc; }
 tbody tr:nth-child(even) { background: #f7f5ef; }
 #list tbody tr { cursor: pointer; }
 .note { color: #777; font-size: .85em; }
 #status { color: #777; font-size: .85em; }
</style></head>
<body>
<h1 id="title">dxserial live</h1>
<div id="status">connecting...</div>
<div id="layout">
<div id="games"></div>
<aside>
<section id="standings" hidden>
<h2 id="table-heading">Standings</h2>
<table id="table"></table>
<div id="notes" class="note"></div>
</section>
<section id="games-list" hidden>
<h2>Games</h2>
<table id="list"><thead><tr><th>#</th><th>White</th><th>Black</th><th>moves</th>
<th>result</th></tr></thead><tbody></tbody></table>
</section>
</aside>
</div>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";
const cards = new Map();
const running = new Map();  // game number -> {game, at}: the clock of the side to move runs

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

function lastSquares(moves) {
  // "32-28", "27x18" or "27x18x9": the squares it left and reached
  const m = moves.length ? moves[moves.length - 1].match(/\\d+/g) : null;
  return m ? [Number(m[0]), Number(m[m.length - 1])] : [];
}

function drawBoard(fen, last) {
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
    const x = col * size, y = row * size;
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("class", "square"); g.setAttribute("data-square", sq);
    if (last.includes(sq)) {  // the last move, as lidraughts shows it: both squares tinted
      g.setAttribute("data-last", "1");
      const h = document.createElementNS(SVG, "rect");
      h.setAttribute("x", x); h.setAttribute("y", y);
      h.setAttribute("width", size); h.setAttribute("height", size);
      h.setAttribute("fill", "#9bb04a"); g.appendChild(h);
    }
    const piece = board[sq] || "";
    g.setAttribute("data-piece", piece);
    if (piece) {
      const c = document.createElementNS(SVG, "circle");
      c.setAttribute("cx", x + size / 2); c.setAttribute("cy", y + size / 2);
      c.setAttribute("r", size * 0.38);
      c.setAttribute("fill", piece.toLowerCase() === "w" ? "#fff" : "#111");
      c.setAttribute("stroke", piece.toLowerCase() === "w" ? "#333" : "#ccc");
      c.setAttribute("stroke-width", piece === piece.toUpperCase() ? 4 : 1.5);
      g.appendChild(c);
    }
    const n = document.createElementNS(SVG, "text");  // draughts players read squares 1..50
    n.setAttribute("x", x + 1.5); n.setAttribute("y", y + 7.5); n.setAttribute("font-size", "7.5");
    n.setAttribute("fill", "#f0d9b5"); n.setAttribute("stroke", "#4a2e14");
    n.setAttribute("stroke-width", "2"); n.setAttribute("paint-order", "stroke");
    n.setAttribute("class", "number"); n.textContent = sq; g.appendChild(n);
    svg.appendChild(g);
  }
  return svg;
}

function clock(seconds) {
  if (seconds === null || seconds === undefined) return "no clock";
  const s = Math.max(0, Math.ceil(seconds));
  return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
}

function showClocks(card, game, elapsed) {
  const spans = card.querySelectorAll(".side");
  ["White", "Black"].forEach((side, i) => {
    let left = game.left[side];
    const run = game.to_move === side && !game.result;
    if (run && left !== null && left !== undefined) left -= elapsed;
    spans[i].textContent = side + " " + clock(left);
    spans[i].classList.toggle("run", run);
  });
}

function tick() {
  const now = performance.now();
  for (const [number, r] of running) showClocks(cards.get(number), r.game, (now - r.at) / 1000);
}
setInterval(tick, 250);

function moveList(game) {
  const moves = document.createElement("div"); moves.className = "moves";
  for (let i = 0; i < game.moves.length; i += 2) {
    const row = document.createElement("div"); row.className = "row";
    const n = document.createElement("span"); n.className = "num";
    n.textContent = (i / 2 + 1) + ". "; row.append(n);
    for (const j of [i, i + 1]) {
      const m = document.createElement("span"); m.className = "ply";
      if (j < game.moves.length) m.textContent = game.moves[j] + " ";
      if (j === game.moves.length - 1) m.classList.add("last");
      row.append(m);
    }
    moves.append(row);
  }
  if (!game.moves.length && !game.result) {
    const wait = document.createElement("div"); wait.className = "note";
    wait.textContent = " waiting for the first move"; moves.append(wait);
  }
  return moves;
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
  card.dataset.toMove = game.to_move || "";
  card.classList.toggle("over", !!game.result);
  card.replaceChildren();
  const head = document.createElement("div"); head.className = "head";
  head.textContent = "Game " + game.number + ": " + game.white + " - " + game.black;
  const clocks = document.createElement("div"); clocks.className = "clock";
  const white = document.createElement("span"), black = document.createElement("span");
  white.className = black.className = "side";
  clocks.append(white, "  ", black);
  if (game.opening) clocks.append("  opening " + game.opening);
  const moves = moveList(game);
  card.append(head, clocks, drawBoard(game.fen, lastSquares(game.moves)), moves);
  moves.scrollTop = moves.scrollHeight;  // the last move in view, as the game grows
  if (game.result) {
    const r = document.createElement("div"); r.className = "result";
    r.textContent = game.result + " (" + game.reason + ")"; card.append(r);
  }
  showClocks(card, game, 0);
  if (game.result || !game.to_move) running.delete(game.number);
  else running.set(game.number, {game, at: performance.now()});
  listGame(game);
}

function listGame(game) {
  const body = document.querySelector("#list tbody");
  let row = body.querySelector('tr[data-number="' + game.number + '"]');
  if (!row) {
    row = document.createElement("tr"); row.dataset.number = game.number;
    row.onclick = () => document.getElementById("game-" + game.number).scrollIntoView();
    const later = [...body.children].find(r => Number(r.dataset.number) > game.number);
    body.insertBefore(row, later || null);
  }
  row.replaceChildren(...[game.number, game.white, game.black, Math.ceil(game.moves.length / 2),
    game.result || (game.to_move ? game.to_move + " to move" : "")].map(text => {
      const td = document.createElement("td"); td.textContent = text; return td; }));
  document.getElementById("games-list").hidden = body.children.length < 2;
}

function columns(lines) {
  // A fixed-width text table: its columns are separated by what is blank on every line.
  const width = Math.max(...lines.map(l => l.length));
  const rows = lines.map(l => l.padEnd(width));
  const spans = []; let start = -1;
  for (let i = 0; i <= width; i++) {
    const blank = i === width || rows.every(r => r[i] === " ");
    if (!blank && start < 0) start = i;
    if (blank && start >= 0) { spans.push([start, i]); start = -1; }
  }
  // A column with no header word ("A  dxserial 0.1.0" under "engine") or no data of its own
  // ("Elo [95%]" before any Elo) is part of the column on its left.
  const kept = spans.filter(([a, b], i) => i === 0 || (rows[0].slice(a, b).trim()
    && rows.slice(1).some(r => r.slice(a, b).trim())));
  const merged = kept.map(([a], i) => [a, i + 1 < kept.length ? kept[i + 1][0] : width]);
  return rows.map(r => merged.map(([a, b]) => r.slice(a, b).trim()));
}

function showTable(table, heading) {
  if (!table || !table.length) return;  // none yet, or a bridge (it keeps no standings)
  document.getElementById("standings").hidden = false;
  document.getElementById("table-heading").textContent = heading || "Standings";
  const grid = table.slice(1).filter(l => l.startsWith("  "));
  const notes = table.slice(1).filter(l => !l.startsWith("  "));
  const el = document.getElementById("table");
  const caption = document.createElement("caption"); caption.textContent = table[0];
  const [head, ...body] = columns(grid);
  const thead = document.createElement("thead"), tbody = document.createElement("tbody");
  const row = (cells, tag) => { const tr = document.createElement("tr");
    tr.append(...cells.map(c => { const td = document.createElement(tag); td.textContent = c;
      return td; })); return tr; };
  if (head) thead.append(row(head, "th"));
  tbody.append(...body.map(cells => row(cells, "td")));
  el.replaceChildren(caption, thead, tbody);
  const layout = document.getElementById("layout");  // wider than the side column: on top
  if (!layout.classList.contains("wide") && el.scrollWidth > el.parentElement.clientWidth)
    layout.classList.add("wide");
  document.getElementById("notes").textContent = notes.join(" ");
}

const source = new EventSource("events");
source.onopen = () => { document.getElementById("status").textContent = "live"; };
source.onerror = () => { document.getElementById("status").textContent = "reconnecting..."; };
source.onmessage = (e) => {
  const u = JSON.parse(e.data);
  // A message proves the stream is open, whether or not onopen fired (one load stayed on
  // "connecting..." with the snapshot shown).
  if (u.type !== "end") document.getElementById("status").textContent = "live";
  if (u.type === "snapshot") {
    document.getElementById("title").textContent = u.title;
    document.title = u.title + " (live)";
    u.games.forEach(showGame); showTable(u.table, u.heading);
  } else if (u.type === "game") showGame(u.game);
  else if (u.type === "standings") showTable(u.table, u.heading);
  else if (u.type === "end") {
    source.close(); running.clear();
    document.getElementById("status").textContent = "finished (the server has stopped)";
  }
};
</script>
</body></html>
"""
