"""Two pictures of a tournament as SVG text, sans I/O: the SPRT's LLR by game pair against
its two bounds, and the field's ratings with their 95% intervals.

Hand-written SVG (no plotting dependency for two charts): the same text is written beside
``event.pdn`` when the run ends and put in the live page.  An engine with no points (or
every point) has only one finite bound: it is drawn as an arrow from that bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from dxserial.tournament.rating import FieldRatings

__all__ = ["llr_svg", "ratings_svg"]

_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round steps (1, 2 or 5 x 10^n) covering [lo, hi]."""
    span = max(hi - lo, 1e-9)
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step) * step
    out = []
    x = first
    while x <= hi + 1e-9:
        out.append(round(x, 10))
        x += step
    return out


def _num(x: float) -> str:
    return f"{x:.1f}"


def llr_svg(
    history: Sequence[float], lower: float, upper: float, *, title: str = "SPRT",
    width: int = 560, height: int = 260,
) -> str:
    """The LLR after each game pair (x: pairs, y: LLR), with the H0 and H1 bounds."""
    left, right, top, bottom = 48, 12, 28, 34
    w, h = width - left - right, height - top - bottom
    n = max(len(history), 1)
    ymin = min(lower * 1.1, *history) if history else lower * 1.1
    ymax = max(upper * 1.1, *history) if history else upper * 1.1

    def x(i: float) -> float:
        return left + w * i / n

    def y(v: float) -> float:
        return top + h * (ymax - v) / (ymax - ymin)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" {_FONT}>',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{left}" y="18" font-weight="600">{escape(title)}: LLR by game pair</text>',
    ]
    for v in _ticks(ymin, ymax):
        parts.append(f'<line x1="{left}" x2="{left + w}" y1="{_num(y(v))}" y2="{_num(y(v))}" '
                     'stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{_num(y(v) + 4)}" text-anchor="end">{v:g}</text>')
    for v in _ticks(0, n, 8):
        if v != int(v):
            continue
        parts.append(f'<text x="{_num(x(v))}" y="{top + h + 16}" text-anchor="middle">'
                     f'{int(v)}</text>')
    parts.append(f'<text x="{left + w / 2}" y="{height - 4}" text-anchor="middle" '
                 'fill="#555">game pairs</text>')
    for v, name, colour in ((upper, "H1", "#2f7d32"), (lower, "H0", "#b23b3b")):
        parts.append(f'<line class="bound" data-bound="{name}" x1="{left}" x2="{left + w}" '
                     f'y1="{_num(y(v))}" y2="{_num(y(v))}" stroke="{colour}" '
                     'stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{left + w - 4}" y="{_num(y(v) - 4)}" text-anchor="end" '
                     f'fill="{colour}">{name} {v:.2f}</text>')
    parts.append(f'<line x1="{left}" x2="{left + w}" y1="{_num(y(0))}" y2="{_num(y(0))}" '
                 'stroke="#999"/>')
    points = [(0.0, 0.0)] + [(float(i + 1), v) for i, v in enumerate(history)]
    path = " ".join(f"{_num(x(i))},{_num(y(v))}" for i, v in points)
    parts.append(f'<polyline class="llr" points="{path}" fill="none" stroke="#1f5fa8" '
                 'stroke-width="2"/>')
    if history:
        parts.append(f'<text x="{left + w}" y="18" text-anchor="end" fill="#1f5fa8">LLR '
                     f'{history[-1]:.2f} after {len(history)} pair(s)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def ratings_svg(field: FieldRatings, *, width: int = 560) -> str:
    """Each engine's rating (a dot) and its 95% interval (a bar), strongest on top."""
    engines = field.engines
    row = 24
    label = min(220, 24 + 7 * max((len(r.name) for r in engines), default=4))
    left, right, top, bottom = label, 160, 30, 34
    height = top + bottom + row * max(len(engines), 1)
    w = width - left - right
    values = [v for r in engines for v in (r.rating, r.low, r.high) if v is not None]
    lo, hi = (min(values), max(values)) if values else (-100.0, 100.0)
    pad = max(20.0, (hi - lo) * 0.08)
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return left + w * (v - lo) / (hi - lo)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" {_FONT}>',
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="8" y="18" font-weight="600">Ratings, 95% intervals '
        f'({escape(field.anchor_text())})</text>',
    ]
    base = top + row * len(engines)
    for v in _ticks(lo, hi):
        parts.append(f'<line x1="{_num(x(v))}" x2="{_num(x(v))}" y1="{top}" y2="{base}" '
                     'stroke="#eee"/>')
        parts.append(f'<text x="{_num(x(v))}" y="{base + 16}" text-anchor="middle">'
                     f'{v:+g}</text>')
    parts.append(f'<text x="{left + w / 2}" y="{height - 4}" text-anchor="middle" '
                 'fill="#555">Elo</text>')
    for i, r in enumerate(engines):
        cy = top + row * i + row / 2
        parts.append(f'<text x="{label - 10}" y="{_num(cy + 4)}" text-anchor="end">'
                     f'{escape(r.name)}</text>')
        attrs = f'class="engine" data-name="{escape(r.name)}"'
        if r.low is not None and r.high is not None:
            parts.append(f'<g {attrs}><line x1="{_num(x(r.low))}" x2="{_num(x(r.high))}" '
                         f'y1="{_num(cy)}" y2="{_num(cy)}" stroke="#1f5fa8" stroke-width="3"/>'
                         f'<circle cx="{_num(x(r.rating))}" cy="{_num(cy)}" r="4" '
                         'fill="#0d3b73"/></g>')
        elif r.low is None and r.high is None:  # rated only against engines out of reach
            parts.append(f'<g {attrs}><circle cx="{_num(x(r.rating))}" cy="{_num(cy)}" r="4" '
                         'fill="none" stroke="#0d3b73"/></g>')
        else:  # one bound: an arrow from it towards the side the games leave open
            edge = r.high if r.high is not None else r.low
            assert edge is not None
            end = left + 2 if r.high is not None else left + w - 2
            tip = 6 if r.high is not None else -6
            parts.append(
                f'<g {attrs} data-bound="{r.bound}"><line x1="{_num(x(edge))}" '
                f'x2="{_num(end)}" y1="{_num(cy)}" y2="{_num(cy)}" stroke="#b23b3b" '
                'stroke-width="3" stroke-dasharray="5 3"/>'
                f'<path d="M{_num(end)},{_num(cy)} l{tip},-5 l0,10 z" fill="#b23b3b"/>'
                f'<line x1="{_num(x(edge))}" x2="{_num(x(edge))}" y1="{_num(cy - 6)}" '
                f'y2="{_num(cy + 6)}" stroke="#b23b3b" stroke-width="2"/></g>'
            )
        parts.append(f'<text x="{left + w + 12}" y="{_num(cy + 4)}" fill="#555">'
                     f'{escape(r.text())}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
