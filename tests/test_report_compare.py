"""The report's comparison over hand-made runs: labels, pairing and pooling over seeds,
differences between every two configs, per-type intervals, the header block."""

from __future__ import annotations

import pytest

from benchmark.report.compare import make_labels
from benchmark.report.header import header_lines
from benchmark.report.load import RunData
from benchmark.report.paired import paired_differences
from benchmark.report.pairwise import pairwise_differences
from benchmark.scoring import metric_names


def test_per_type_bounds_follow_ci_names_and_fall_back_to_the_table(monkeypatch):
    """The bounds are read by ``ci_names`` (whatever it names them); a run that logged no
    per-type metric gets its table's mean with the same cluster jackknife t interval."""
    from benchmark.report.per_type import type_scores
    from benchmark.scoring.stats import cluster_interval

    monkeypatch.setattr(metric_names, "ci_names", lambda name: (f"{name}/lo", f"{name}/hi"))
    logged = _seed_run("1", "none", 1)
    logged.metrics = {"type/recall": 4.2, "type/recall/lo": 3.9, "type/recall/hi": 4.4}
    bare = _seed_run("2", "truncate", 1)  # no metrics: an older run
    table = _seed_table(1, 1.0)
    types, scores = type_scores([logged, bare], {"1": [], "2": table}, 5.0)
    assert types == ["recall"] and scores["1"]["recall"] == (4.2, 3.9, 4.4)
    est = cluster_interval(
        [r["score"] for r in table], [(r["transcript"], r["point"]) for r in table], limits=(0, 5)
    )
    assert scores["2"]["recall"] == (est.mean, est.low, est.high) and est.low < est.high


def test_a_suffix_common_to_every_label_is_stated_once():
    from benchmark.report.layout import common_suffix, strip_suffix

    labels = ["none@synthetic", "hermes@synthetic (transcript.seed=2)"]
    assert common_suffix(labels) == "@synthetic"
    assert strip_suffix(labels[1], "@synthetic") == "hermes (transcript.seed=2)"
    assert common_suffix([*labels, "none-copy"]) == ""
    assert common_suffix([*labels, "x@swe"]) == ""


def test_labels_name_the_overrides_that_differ():
    def run(rid: str, name: str, seed: str, policy: str) -> RunData:
        return RunData(
            run_id=rid,
            name=name,
            start_time=int(rid),
            tags={"policy": policy, "sweep_overrides": "policy=none,truncate transcript.seed=1,2"},
            metrics={},
            params={"transcript.seed": seed, "policy.name": policy},
        )

    runs = [
        run("1", "none@synthetic", "1", "none"),
        run("2", "none@synthetic", "2", "none"),
        run("3", "truncate@synthetic", "2", "truncate"),
    ]
    assert make_labels(runs) == {
        "1": "none@synthetic (transcript.seed=1)",
        "2": "none@synthetic (transcript.seed=2)",
        "3": "truncate@synthetic",
    }


def _seed_run(rid: str, policy: str, seed: int, name: str = "{policy}@synthetic") -> RunData:
    return RunData(
        run_id=rid,
        name=name.format(policy=policy, seed=seed),
        start_time=int(rid),
        tags={"policy": policy},
        metrics={},
        params={"transcript.seed": str(seed), "policy.name": policy},
    )


def _seed_table(seed: int, score: float) -> list[dict]:
    """Recall probes of one seed's transcript, three compaction points of four probes."""
    return [
        {
            "probe_id": f"s{seed}/p{point}/recall/{i}",
            "transcript": f"s{seed}",
            "point": point,
            "type": "recall",
            "question": f"q{seed}.{point}.{i}",
            "score": score + 0.1 * i + 0.2 * point,
            "failed": False,
            "d/accuracy": score,
        }
        for point in range(3)
        for i in range(4)
    ]


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("{policy}@synthetic", "truncate@synthetic"),
        # A sweep's run names carry the swept seed; the runs are still one config.
        ("{policy} · transcript.seed={seed}", "truncate"),
    ],
)
def test_runs_pair_with_the_reference_on_their_seed_and_pool_over_seeds(name, config):
    """Two seeds x (none, truncate), three compaction points each: every truncate run is
    paired with the none run of its seed, and the two pairings are pooled."""
    runs = [
        _seed_run("1", "none", 1, name),
        _seed_run("2", "none", 2, name),
        _seed_run("3", "truncate", 1, name),
        _seed_run("4", "truncate", 2, name),
    ]
    tables = {
        "1": _seed_table(1, 4.0),
        "2": _seed_table(2, 4.5),
        "3": _seed_table(1, 1.0),
        "4": _seed_table(2, 2.5),
    }
    labels = {r.run_id: r.run_id for r in runs}
    per_run, pooled = paired_differences(runs, labels, tables, ["accuracy"], "none")
    by_run = {d.run_ids[0]: d for d in per_run}
    assert by_run["1"].is_reference and by_run["2"].is_reference
    assert by_run["3"].reference_run_ids == ["1"] and by_run["4"].reference_run_ids == ["2"]
    assert by_run["3"].overall.mean == pytest.approx(-3.0)
    assert by_run["4"].overall.mean == pytest.approx(-2.0)
    assert by_run["3"].overall.n == 12 and by_run["3"].overall.clusters == 3
    assert by_run["4"].dimensions["accuracy"].mean == pytest.approx(-2.0)
    [both] = pooled
    assert both.run_ids == ["3", "4"] and both.label == f"{config}: 2 runs pooled"
    assert both.overall.n == 24 and both.overall.clusters == 6
    assert both.overall.mean == pytest.approx(-2.5) and both.overall.significant


def test_every_two_configs_are_compared_on_paired_probes_pooled_over_seeds():
    """Three policies over two seeds (a sweep's run names): three pairs, each later config
    minus each earlier one, every run paired with the other config's run of its seed."""
    name = "{policy} · seed={seed}"
    scores = {"none": (4.0, 4.5), "hermes": (3.0, 4.0), "truncate": (1.0, 2.5)}
    runs, tables = [], {}
    for policy, by_seed in scores.items():
        for seed, score in enumerate(by_seed, 1):
            rid = str(len(runs) + 1)
            runs.append(_seed_run(rid, policy, seed, name))
            tables[rid] = _seed_table(seed, score)
    labels = {r.run_id: r.name for r in runs}
    pairs = pairwise_differences(runs, labels, tables, ["accuracy"])
    assert [(p.label, p.reference_label) for p in pairs] == [
        ("hermes (2 runs)", "none (2 runs)"),
        ("truncate (2 runs)", "none (2 runs)"),
        ("truncate (2 runs)", "hermes (2 runs)"),
    ]
    # Seed 1: 1.0 - 3.0, seed 2: 2.5 - 4.0; the same probes, so every probe differs by that.
    last = pairs[-1]
    assert last.run_ids == ["5", "6"] and last.reference_run_ids == ["3", "4"]
    assert last.overall.mean == pytest.approx(-1.75) and last.overall.n == 24
    assert last.overall.clusters == 6 and last.overall.significant
    assert last.dimensions["accuracy"].mean == pytest.approx(-1.75)
    # The pair with the reference is the pooled difference against it.
    _, pooled = paired_differences(runs, labels, tables, ["accuracy"], "none")
    assert pairs[1].overall == next(p for p in pooled if p.run_ids == ["5", "6"]).overall
    # One seed's runs only: single-run configs keep their labels.
    one = pairwise_differences(runs[::2], labels, tables, [])
    assert one[0].label == "hermes · seed=1" and one[0].overall.n == 12


def test_header_names_models_panels_and_files_and_counts_what_runs_disagree_on():
    """LLM roles show their model, a judge panel its members, imported transcripts their
    count and path; where runs differ (a sweep over judges) each value gets its run count."""

    def run(rid: str, judge: dict[str, str], files: float) -> RunData:
        return RunData(
            run_id=rid,
            name=f"hermes · judge={judge['judge.name']}",
            start_time=int(rid),
            tags={"policy": "hermes"},
            metrics={"transcripts/files": files, "points/total": 30.0},
            params={
                "answerer.name": "gpt4o",
                "answerer.endpoint.model": "gpt-4o",
                **judge,
                "rubric.name": "recall_2_1_0",
                "rubric.scale_max": "2",
                "rubric.dimensions.recall.recall_correctness": "1.0",
                "transcript.kind": "files",
                "transcript.path": "~/sessions/*.jsonl",
                "transcript.format": "auto",
            },
        )

    panel = {
        "judge.name": "panel",
        "judge.members.gpt4o.name": "gpt4o",
        "judge.members.claude.name": "claude",
    }
    single = {"judge.name": "gpt41", "judge.endpoint.model": "gpt-4.1"}
    runs = [run("1", panel, 7), run("2", single, 7), run("3", single, 7)]
    lines = header_lines(runs, {"1": 28, "2": 28}, where="sweep `s`", reference=None)
    header = {line.name: line.value for line in lines}
    assert header["Runs"] == "3 runs of 1 policy (hermes), sweep `s`"
    assert header["Answerer"] == "gpt4o (model gpt-4o)"
    assert (
        header["Judge"] == "panel (members claude, gpt4o) (1 run); gpt41 (model gpt-4.1) (2 runs)"
    )
    assert header["Rubric"] == "recall_2_1_0, 0-2 per criterion, 1 dimension"
    assert header["Data"] == "7 transcript files from `~/sessions/*.jsonl` (format auto)"
    # Clusters of the scored probes; a run without a table falls back to its points.
    assert header["Clusters"] == (
        "28 (transcript, compaction point) clusters per run (2 runs); "
        "30 (transcript, compaction point) clusters per run (1 run)"
    )
    assert "Reference" not in header
