"""Every interval stays on its scale, even on few clusters with extreme scores: scores in
[0, scale_max], differences in [-scale_max, scale_max], ratios at or above 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmark.report.load import RunData
from benchmark.report.paired import paired_differences
from benchmark.report.pairwise import pairwise_differences
from benchmark.scoring.stats import cluster_interval, paired_difference, ratio_interval

SCALE = 5.0
# Two clusters, one all-lost and one nearly kept: t on 1 df puts a raw bound near -22.
A = [0.0, 0.0, 0.0, 0.0, 4.5, 4.5]
B = [5.0] * 6
CLUSTERS = [1, 1, 1, 2, 2, 2]


def test_unbounded_difference_overshoots_the_scale():
    d = paired_difference(A, B, CLUSTERS)
    assert d.low < -SCALE  # the bug: an interval past the scale


def test_difference_is_clipped_to_plus_minus_scale():
    d = paired_difference(A, B, CLUSTERS, limits=(-SCALE, SCALE))
    assert -SCALE <= d.low <= d.mean <= d.high <= SCALE
    assert d.mean == pytest.approx(-3.5)


def test_clipping_keeps_the_test_and_the_interval_in_step():
    rng = np.random.default_rng(0)
    for _ in range(200):
        g = int(rng.integers(5, 9))
        clusters = np.repeat(np.arange(g), 3)
        a = rng.choice([0.0, 5.0], size=clusters.size)
        b = rng.choice([0.0, 0.5, 5.0], size=clusters.size)
        d = paired_difference(a, b, clusters, limits=(-SCALE, SCALE))
        assert -SCALE <= d.low <= d.high <= SCALE
        assert d.p_value is not None
        assert (d.p_value < 0.05) == (d.low > 0 or d.high < 0) or d.p_value in (0.0, 1.0)


def test_undefined_difference_stays_undefined():
    d = paired_difference([0.0], [5.0], [1], limits=(-SCALE, SCALE))
    assert math.isnan(d.low) and math.isnan(d.high)


def test_scores_and_ratios_on_extreme_data_stay_in_bounds():
    est = cluster_interval(A, CLUSTERS, limits=(0, SCALE))
    assert 0 <= est.low <= est.high <= SCALE
    r = ratio_interval([0, 0, 0, 5, 5, 5], [5, 5, 5, 0.5, 0.5, 0.5], CLUSTERS, limits=(0, math.inf))
    assert r.low >= 0


def _run(rid: str, policy: str) -> RunData:
    return RunData(
        run_id=rid,
        name=policy,
        start_time=int(rid),
        tags={"policy": policy},
        metrics={},
        params={"rubric.scale_max": "5", "seed": "0"},
    )


def _table(scores: list[float]) -> list[dict]:
    return [
        {"probe_id": f"p{i}", "question": f"q{i}", "score": s, "transcript": "t", "point": c}
        for i, (s, c) in enumerate(zip(scores, CLUSTERS, strict=True))
    ]


def test_report_differences_stay_on_the_scale():
    runs = [_run("1", "none"), _run("2", "truncate")]
    tables = {"1": _table(B), "2": _table(A)}
    labels = {"1": "none", "2": "truncate"}
    per_run, _ = paired_differences(runs, labels, tables, [], "none")
    overall = per_run[1].overall
    assert overall is not None and overall.low == -SCALE and overall.high <= SCALE
    (pair,) = pairwise_differences(runs, labels, tables, [])
    assert pair.overall is not None and -SCALE <= pair.overall.low <= pair.overall.high <= SCALE
