"""Point labels that never overlap one another and never hide a point.

Runs of similar policies land at nearly the same (tokens, score), and labels all
set to the same offset pile up into an unreadable smudge. A small greedy search
is enough for a report's handful of runs: each label in turn takes the first spot,
on rings of growing radius around its point, whose box (measured by the renderer,
so in real font metrics) stays inside the axes and clears every label placed so
far and every point; a label set apart from its point gets a thin leader line.
No dependency beyond matplotlib, and no iteration that may stop short of clear.
"""

from __future__ import annotations

import math
from typing import Any

RINGS = (8, 18, 30, 45, 62, 82, 105, 130, 160)  # offsets from the point, in typographic points
LEADER = "#999999"
POINT_CLEARANCE = 7.0  # half the side of the box kept free around a point, in points
GAP = 1.5  # pixels kept between two labels (their white backgrounds reach past the text)


def _directions(ring: int) -> list[float]:
    """Angles to try on a ring, in degrees: right, left, up, down, then the diagonals;
    outer rings add eight more in between."""
    angles = [0.0, 180.0, 90.0, 270.0, 30.0, 150.0, 330.0, 210.0]
    if ring >= 2:
        angles += [60.0, 120.0, 300.0, 240.0, 15.0, 165.0, 345.0, 195.0]
    return angles


def _offsets() -> list[tuple[float, float, str, str]]:
    """Candidate (dx, dy, ha, va) in points, nearest first; text anchored on the side
    facing the point so it grows away from it."""
    out = []
    for ring, radius in enumerate(RINGS):
        for angle in _directions(ring):
            dx = radius * math.cos(math.radians(angle))
            dy = radius * math.sin(math.radians(angle))
            ha = "left" if dx > 1e-6 else "right" if dx < -1e-6 else "center"
            va = "bottom" if dy > 1e-6 else "top" if dy < -1e-6 else "center"
            out.append((dx, dy, ha, va))
    return out


def _overlap(a: Any, b: Any) -> float:
    """Area shared by two display-space boxes (0 when they only touch)."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def place_labels(
    ax: Any, points: list[tuple[float, float]], texts: list[str], fontsize: float = 8
) -> list[Any]:
    """Annotate each point of ``points`` (data coordinates) with its text, placed greedily
    (see the module docstring); the axes' limits are frozen first, so nothing drawn later
    moves the points. Returns the annotations in the order of ``points``."""
    from matplotlib.transforms import Bbox

    fig = ax.figure
    ax.set_xlim(ax.get_xlim())
    ax.set_ylim(ax.get_ylim())
    renderer = fig.canvas.get_renderer()
    scale = fig.dpi / 72.0  # points to pixels
    frame = ax.get_window_extent(renderer)
    pad = POINT_CLEARANCE * scale
    centres = [ax.transData.transform(p) for p in points]
    obstacles = [Bbox.from_extents(x - pad, y - pad, x + pad, y + pad) for x, y in centres]
    placed: list[Any] = []
    out = []
    for point, text in zip(points, texts, strict=True):
        label = ax.annotate(
            text,
            point,
            xytext=(0, 0),
            textcoords="offset points",
            fontsize=fontsize,
            zorder=5,
            bbox={
                "boxstyle": "square,pad=0.1",
                "facecolor": "white",
                "edgecolor": "none",
                "alpha": 0.75,
            },  # readable over the grid and the front's line
        )
        best: tuple[float, tuple[float, float, str, str]] | None = None
        for dx, dy, ha, va in _offsets():
            label.set_position((dx, dy))
            label.set_horizontalalignment(ha)
            label.set_verticalalignment(va)
            box = label.get_window_extent(renderer).padded(GAP)
            inside = frame.containsx(box.x0) and frame.containsx(box.x1)
            inside = inside and frame.containsy(box.y0) and frame.containsy(box.y1)
            cost = sum(_overlap(box, other) for other in (*placed, *obstacles))
            cost += 0.0 if inside else box.width * box.height
            if best is None or cost < best[0]:
                best = (cost, (dx, dy, ha, va))
            if cost == 0:
                break
        assert best is not None
        dx, dy, ha, va = best[1]
        label.set_position((dx, dy))
        label.set_horizontalalignment(ha)
        label.set_verticalalignment(va)
        placed.append(label.get_window_extent(renderer).padded(GAP))
        if math.hypot(dx, dy) > RINGS[0] + 1:  # set apart: a line back to its point
            x, y = ax.transData.transform(point)
            end = ax.transData.inverted().transform((x + dx * scale, y + dy * scale))
            ax.plot([point[0], end[0]], [point[1], end[1]], color=LEADER, linewidth=0.6, zorder=1)
        out.append(label)
    return out
