"""The report's figures: run colours and labels, measured on matplotlib's own renderer."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_hex

from benchmark.report.compare import Comparison, Interval, Row
from benchmark.report.plots import dimensions_figure, pareto_figure, pareto_front, styles
from benchmark.tracking.run_colours import colour_at


def _row(i: int, label: str, kept: float, score: float, colour: str) -> Row:
    return Row(
        run_id=f"{i:032x}",
        label=label,
        run_name=label,
        policy=label.split()[0],
        overall=Interval(value=score, low=score - 0.3, high=score + 0.3),
        dimensions={"accuracy": Interval(value=score), "continuity": Interval(value=score / 2)},
        tokens_after=1000 * kept,
        kept_fraction=kept,
        compression_ratio=1 / kept,
        cost_usd=0.0,
        failures=0,
        probes=180,
        colour=colour,
    )


def _comparison(rows: list[Row]) -> Comparison:
    return Comparison(
        kind="sweep",
        source="/runs/multirun/2025-01-01/10-00-00",
        name="2025-01-01_10-00-00",
        experiment="compaction-benchmark",
        reference=None,
        probe_type=None,
        dimensions=["accuracy", "continuity"],
        rows=rows,
        differences=[],
    )


def _crowd(count: int) -> Comparison:
    """``count`` runs within a hair of one another (and two far off), long labels."""
    rows = [
        _row(
            i,
            f"hermes · policy.budget={1000 + i} · seed={i}",
            0.5 + 1e-4 * i,
            3.0 + 1e-3 * i,
            colour_at(i),
        )
        for i in range(count)
    ]
    rows += [
        _row(count, "none", 1.0, 4.5, "#2272b4"),
        _row(count + 1, "truncate", 0.1, 1.0, "#de7921"),
    ]
    return _comparison(rows)


def _overlap(a, b) -> float:
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


@pytest.mark.parametrize("count", [5, 8])
def test_pareto_labels_never_overlap_nor_hide_a_point(count):
    comparison = _crowd(count)
    fig = pareto_figure(comparison)
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_text()]
    assert sorted(t.get_text() for t in labels) == sorted(r.label for r in comparison.rows)
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert _overlap(a, b) == 0, (a, b)
    frame = ax.get_window_extent(renderer)
    points = [
        ax.transData.transform((100 * r.kept_fraction, r.overall.value)) for r in comparison.rows
    ]
    radius = 3.5 * fig.dpi / 72  # a marker of size 7 points
    for box in boxes:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, box  # inside the plot
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, box
        for x, y in points:  # no marker under a label
            assert not (
                box.x0 - radius < x < box.x1 + radius and box.y0 - radius < y < box.y1 + radius
            )


def test_each_run_keeps_its_colour_in_both_figures_and_repeats_change_marker_and_hatch():
    rows = [
        _row(0, "none · seed=1", 1.0, 4.5, "#2272b4"),
        _row(1, "none · seed=2", 1.0, 4.4, "#2272b4"),  # one policy: one colour
        _row(2, "truncate · seed=1", 0.1, 1.0, "#de7921"),
    ]
    comparison = _comparison(rows)
    assert [s[:2] for s in styles(rows)] == [("#2272b4", "o"), ("#2272b4", "s"), ("#de7921", "o")]
    pareto = pareto_figure(comparison).axes[0]
    drawn = {c.get_label(): c for c in pareto.containers}
    for row, (colour, marker, _) in zip(rows, styles(rows), strict=True):
        line = drawn[row.label][0]
        assert to_hex(line.get_color()) == colour and line.get_marker() == marker
    bars = {c.get_label(): c for c in dimensions_figure(comparison).axes[0].containers}
    for row, (colour, _, hatch) in zip(rows, styles(rows), strict=True):
        assert all(to_hex(p.get_facecolor()) == colour for p in bars[row.label].patches)
        assert all((p.get_hatch() or "") == hatch for p in bars[row.label].patches)
    assert styles(rows)[1][2] != styles(rows)[0][2]


def test_pareto_front():
    # (tokens kept, score): fewer tokens and a higher score is better.
    points = [(100.0, 4.8), (15.0, 1.5), (50.0, 1.0), (40.0, 3.0), (100.0, 4.0)]
    assert pareto_front(points) == [1, 3, 0]
