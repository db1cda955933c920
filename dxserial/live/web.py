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

__all__ = ["HEARTBEAT", "MAX_CLIENTS", "WRITE_TIMEOUT", "WebView", "start_web"]

log = logging.getLogger("dxserial.live.web")

#: Updates a slow browser may fall behind by before it is dropped (it reconnects and gets
#: a fresh snapshot: EventSource does that by itself).
_BACKLOG = 1000
#: Pages following the events at once; one more is refused (HTTP 503) until one leaves.
MAX_CLIENTS = 32
#: Seconds one update may take to be written to a page before that page is dropped: a
#: client that reads nothing must not hold its slot, its buffers and its backlog for ever.
WRITE_TIMEOUT = 10.0
#: Seconds without an update after which a page gets a comment line: a page that left is
#: found out (its slot freed) even while nothing happens.
HEARTBEAT = 15.0


class WebView:
    """The running server: :meth:`publish` takes match/tournament events."""

    def __init__(
        self,
        live: LiveView,
        networks: tuple[IPNetwork, ...],
        *,
        max_clients: int = MAX_CLIENTS,
        write_timeout: float = WRITE_TIMEOUT,
        heartbeat: float = HEARTBEAT,
    ) -> None:
        self.live = live
        self.heartbeat = heartbeat
        self.networks = networks
        self.max_clients = max_clients
        self.write_timeout = write_timeout
        self._clients: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._streams: set[asyncio.Event] = set()
        self._runner: Any = None
        self.address = ""
        self.refused = 0  # pages refused for want of a slot
        self.dropped = 0  # pages dropped: too slow, or reading nothing
        self._full = False  # the cap is reached (said once until a slot is free again)

    def publish(self, event: dict[str, Any]) -> None:
        update = self.live.apply(event)
        if update is None:
            return
        for queue in list(self._clients):
            try:
                queue.put_nowait(update)
            except asyncio.QueueFull:  # too far behind: its backlog goes, its stream ends
                self._clients.discard(queue)
                self.dropped += 1
                while not queue.empty():
                    queue.get_nowait()
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

    def _refuse(self, request: Any) -> Any:
        """A page past the cap: 503 and why, in words (said in the log once per spell)."""
        from aiohttp import web

        self.refused += 1
        if not self._full:
            self._full = True
            log.warning("web view: %d page(s) follow the events, the most it serves: %s and "
                        "any more are refused (HTTP 503) until one leaves", self.max_clients,
                        request.remote or "a client")
        response = web.Response(
            status=503, headers={"Retry-After": "30"},
            text=f"too many viewers: this live view serves {self.max_clients} page(s) at once; "
            "try again later\n",
        )
        response.force_close()  # its connection too: a refused client keeps nothing here
        return response

    async def _events(self, request: Any) -> Any:
        from aiohttp import web

        if len(self._streams) >= self.max_clients:
            return self._refuse(request)
        done = asyncio.Event()
        self._streams.add(done)  # the slot is taken before the first await
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(_BACKLOG)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        try:
            await response.prepare(request)
            self._clients.add(queue)
            update: dict[str, Any] | None = self.live.snapshot()
            while update is not None:
                data = f"data: {json.dumps(update)}\n\n".encode() if update else b":\n\n"
                await asyncio.wait_for(response.write(data), self.write_timeout)
                try:
                    update = await asyncio.wait_for(queue.get(), self.heartbeat)
                except TimeoutError:
                    update = {}  # nothing new: a comment line, which the page ignores
        except TimeoutError:  # it reads nothing: its slot and buffers are freed
            self.dropped += 1
            log.info("web view: dropped %s: an update waited %g s to be written to it",
                     request.remote or "a client", self.write_timeout)
            if request.transport is not None:
                request.transport.abort()
        except (ConnectionError, asyncio.CancelledError):  # it left (reset, or lost)
            pass
        finally:
            self._clients.discard(queue)
            self._streams.discard(done)
            done.set()
            if len(self._streams) < self.max_clients:
                self._full = False
        return response


async def start_web(
    address: str,
    allow: list[str],
    say: Callable[[str], None],
    title: str = "dxserial",
    *,
    max_clients: int = MAX_CLIENTS,
    write_timeout: float = WRITE_TIMEOUT,
    heartbeat: float = HEARTBEAT,
    option: str = "--web",
) -> WebView:
    """Serve the live view at ``address`` (``HOST:PORT``; a bare port is on 127.0.0.1);
    ``option`` names where the address came from, for the errors."""
    try:
        from aiohttp import web
    except ImportError:
        raise ConfigError(f"{option} needs aiohttp: pip install 'dxserial[web]'") from None
    host, port = parse_endpoint(web_address(address, option, ("http",)), default_port=8080)
    view = WebView(LiveView(title), parse_networks(allow), max_clients=max_clients,
                   write_timeout=write_timeout, heartbeat=heartbeat)

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
 #playing h2, #panels h2 { font-size: 1.1em; margin: .2em 0 .4em; }
 #games { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
 #panels { display: grid; grid-template-columns: minmax(min-content, 1.35fr) minmax(320px, 1fr);
           gap: 1.5em;
           align-items: start; margin-top: 1em; font-size: .85em; }
 #panels table { margin-bottom: .3em; }
 #done { display: none; }
 #charts svg { width: 100%; height: auto; display: block; margin-bottom: .6em;
               border-radius: 6px; box-shadow: 0 1px 3px #0002; }
 #list tr.open { background: #d8e8b0; }
 #list td.detail { white-space: normal; background: #f4f1ea; }
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
 .game.thinks { width: 600px; grid-template-areas:
         "head head" "clock clock" "board moves" "pv pv" "result result"; }
 .eval { color: #777; font-size: .85em; }
 .pv { grid-area: pv; font-family: monospace; font-size: .85em; color: #555; }
 table { border-collapse: collapse; background: #fff; border-radius: 6px; }
 caption { text-align: left; font-weight: 600; padding: .3em 0; }
 th, td { padding: .15em .5em; text-align: left; font-variant-numeric: tabular-nums;
          white-space: nowrap; }
 th { border-bottom: 1px solid #ccc; }
 tbody tr:nth-child(even) { background: #f7f5ef; }
 #list tbody tr { cursor: pointer; }
 .note { color: #777; font-size: .85em; }
 #notes { white-space: pre-line; }
 #status { color: #777; font-size: .85em; }
</style></head>
<body>
<h1 id="title">dxserial live</h1>
<div id="status">connecting...</div>
<section id="playing"><h2 id="playing-title">In play</h2><div id="games"></div></section>
<div id="done"></div>
<div id="panels">
<div id="left">
<section id="standings" hidden>
<h2 id="table-heading">Standings</h2>
<table id="table"></table>
<div id="notes" class="note"></div>
</section>
<section id="games-list" hidden>
<h2>Games</h2>
<table id="list"><thead><tr><th>#</th><th>White</th><th>Black</th><th>moves</th>
<th>result</th></tr></thead><tbody></tbody></table>
<div class="note">a click on a finished game opens it here</div>
</section>
</div>
<aside id="charts"></aside>
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

function evalText(t) {
  // A Hub engine's thinking as fastchess writes it beside a move: "+0.35/12" (score in men
  // from White's side, depth); "" for a move without (a DXP engine's: nothing made up).
  if (!t) return "";
  const score = typeof t.score === "number"
    ? (t.score > 0 ? "+" : "") + t.score.toFixed(2) : "";
  const depth = typeof t.depth === "number" ? (score ? "/" : "depth ") + t.depth : "";
  return score + depth;
}

function moveList(game) {
  const moves = document.createElement("div"); moves.className = "moves";
  const thinking = game.thinking || [];
  for (let i = 0; i < game.moves.length; i += 2) {
    const row = document.createElement("div"); row.className = "row";
    const n = document.createElement("span"); n.className = "num";
    n.textContent = (i / 2 + 1) + ". "; row.append(n);
    for (const j of [i, i + 1]) {
      const m = document.createElement("span"); m.className = "ply";
      if (j < game.moves.length) m.textContent = game.moves[j] + " ";
      if (j === game.moves.length - 1) m.classList.add("last");
      const said = evalText(thinking[j]);
      if (said) {
        const e = document.createElement("span"); e.className = "eval"; e.textContent = said;
        e.title = "score from White's side (1.00 a man) / depth"; m.append(e);
      }
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
  const thinking = game.thinking || [];
  card.classList.toggle("thinks", thinking.some(t => t));
  const latest = thinking[game.moves.length - 1];
  if (latest) {  // the latest move's principal variation, as the engine saw it
    const pv = document.createElement("div"); pv.className = "pv";
    const line = (latest.pv || []).join(" ");
    pv.textContent = "last move " + game.moves[game.moves.length - 1] + ": "
      + evalText(latest) + (line ? ", pv " + line : "");
    card.append(pv);
  }
  if (game.result) {
    const r = document.createElement("div"); r.className = "result";
    r.textContent = game.result + " (" + game.reason + ")"; card.append(r);
  }
  showClocks(card, game, 0);
  if (game.result || !game.to_move) running.delete(game.number);
  else running.set(game.number, {game, at: performance.now()});
  listGame(game);
  arrange();
  moves.scrollTop = moves.scrollHeight;  // the last move in view, as the game grows
}

// Where each card goes: a game in play at the top; a finished game folded into its row of
// the games table (shown when the row is opened, else kept out of sight); with no game in
// play, the last finished game stays on top.
const opened = new Set();
function arrange() {
  const top = document.getElementById("games"), done = document.getElementById("done");
  const numbers = [...cards.keys()].sort((a, b) => a - b);
  const live = numbers.filter(n => !cards.get(n).dataset.result);
  const last = live.length ? null : numbers[numbers.length - 1];
  document.getElementById("playing-title").textContent =
    live.length ? "In play" : (numbers.length ? "Last game" : "In play");
  for (const n of numbers) {
    const card = cards.get(n);
    let home = top;
    if (card.dataset.result && n !== last) {
      const row = document.querySelector('#list tr[data-number="' + n + '"]');
      home = done;
      if (opened.has(n) && row) {
        let detail = row.nextElementSibling;
        if (!detail || !detail.classList.contains("detail-row")) {
          detail = document.createElement("tr"); detail.className = "detail-row";
          const td = document.createElement("td"); td.colSpan = 5; td.className = "detail";
          detail.append(td); row.after(detail);
        }
        home = detail.firstChild;
      }
    }
    if (card.parentNode === home) continue;  // moving a card loses its scrolled move list
    const later = home === top
      ? [...top.children].find(c => Number(c.dataset.number) > n) : null;
    home.insertBefore(card, later || null);
  }
  document.querySelectorAll("#list tr.detail-row").forEach(d => {
    if (!d.firstChild.children.length) d.remove(); });
  document.querySelectorAll("#list tr[data-number]").forEach(r =>
    r.classList.toggle("open", opened.has(Number(r.dataset.number))));
}

function openGame(number) {
  const card = cards.get(number);
  if (!card || !card.dataset.result) { if (card) card.scrollIntoView(); return; }
  if (opened.has(number)) opened.delete(number); else opened.add(number);
  arrange();
  if (opened.has(number)) {
    const moves = card.querySelector(".moves"); moves.scrollTop = moves.scrollHeight;
    card.scrollIntoView({block: "nearest"});
  }
}

function listGame(game) {
  const body = document.querySelector("#list tbody");
  let row = body.querySelector('tr[data-number="' + game.number + '"]');
  if (!row) {
    row = document.createElement("tr"); row.dataset.number = game.number;
    row.onclick = () => openGame(game.number);
    const later = [...body.querySelectorAll("tr[data-number]")]
      .find(r => Number(r.dataset.number) > game.number);
    body.insertBefore(row, later || null);
  }
  row.replaceChildren(...[game.number, game.white, game.black, Math.ceil(game.moves.length / 2),
    game.result || "in play"].map(text => {
      const td = document.createElement("td"); td.textContent = text; return td; }));
  const listed = body.querySelectorAll("tr[data-number]").length;
  document.getElementById("games-list").hidden = listed < 2;
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
  document.getElementById("notes").textContent = notes.join("\\n");
}

function showCharts(u) {
  // A tournament's charts (SVG made by the server: dxserial/tournament/charts.py).
  const charts = u.charts || {};
  const names = Object.keys(charts).sort();
  const box = document.getElementById("charts");
  box.replaceChildren(...names.map(name => { const div = document.createElement("div");
    div.className = "chart"; div.dataset.name = name; div.innerHTML = charts[name];
    return div; }));
}

const source = new EventSource("events");
source.onopen = () => { document.getElementById("status").textContent = "live"; };
source.onerror = () => {
  // A refusal (HTTP 503: too many viewers) closes the source for good; a lost stream retries.
  document.getElementById("status").textContent = source.readyState === EventSource.CLOSED
    ? "not connected: the server refused this page (too many viewers?); reload to try again"
    : "reconnecting...";
};
source.onmessage = (e) => {
  const u = JSON.parse(e.data);
  // A message proves the stream is open, whether or not onopen fired (one load stayed on
  // "connecting..." with the snapshot shown).
  if (u.type !== "end") document.getElementById("status").textContent = "live";
  if (u.type === "snapshot") {
    document.getElementById("title").textContent = u.title;
    document.title = u.title + " (live)";
    u.games.forEach(showGame); showTable(u.table, u.heading); showCharts(u);
  } else if (u.type === "game") showGame(u.game);
  else if (u.type === "standings") { showTable(u.table, u.heading); showCharts(u); }
  else if (u.type === "end") {
    source.close(); running.clear();
    document.getElementById("status").textContent = "finished (the server has stopped)";
  }
};
</script>
</body></html>
"""
