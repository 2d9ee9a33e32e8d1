"""Every probe of a sweep is a trace of its job's run, scored by a `score` assessment, with
the same request in every policy's run (what MLflow's evaluation view lines runs up on),
and a filter on the score finds exactly the probes with that score. Offline, through
MLflow's API, on a real two-policy sweep in a real store; and in the MLflow UI (headless
Chromium at 1280 px against ``mlflow server`` on the test's store; skipped without it),
the traces view filtered on the score shows those probes' traces and no other."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO
from mlflow import MlflowClient
from test_sweeps import EXPERIMENT, local_store, run_sweep

from benchmark.tracking.sweep_parent import PARENT_TAG
from benchmark.tracking.traces import shown_score

sys.path.insert(0, str(REPO / "scripts"))  # the screenshot script's browser and server
from browser import Browser, stop_group  # noqa: E402
from screenshots import (  # noqa: E402
    SHOWN_PROBES,
    TRACES_PAGE,
    ScreenshotError,
    filter_traces_on_score,
    find_tools,
    free_port,
    start_server,
    wait_until_up,
)

POLICIES = ("none", "truncate")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> tuple[MlflowClient, str, dict[str, dict]]:
    """The sweep's client, experiment id, and each job run's id -> its judgments by probe."""
    tmp = tmp_path_factory.mktemp("probe-traces")
    proc = run_sweep(
        [*local_store(tmp), f"policy={','.join(POLICIES)}", f"hydra.sweep.dir={tmp / 'sweep'}"],
        tmp,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp / 'mlruns' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    judged = {}
    for run in client.search_runs([experiment.experiment_id]):
        if PARENT_TAG in run.data.tags:
            continue
        local = client.download_artifacts(run.info.run_id, "judgments_table.json", str(tmp))
        table = json.loads(Path(local).read_text())
        rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
        judged[run.info.run_id] = {row["probe_id"]: row for row in rows}
    assert len(judged) == len(POLICIES)
    return client, experiment.experiment_id, judged


def traces_of(client: MlflowClient, experiment_id: str, **kwargs) -> list:
    return client.search_traces(locations=[experiment_id], max_results=5000, **kwargs)


def score_of(trace) -> object:
    (feedback,) = [a for a in trace.info.assessments if a.name == "score"]
    return feedback


def test_each_probe_is_a_trace_of_its_run_scored_by_the_judge(sweep):
    client, experiment_id, judged = sweep
    requests: dict[str, set[str]] = {}
    for run_id, rows in judged.items():
        traces = traces_of(client, experiment_id, run_id=run_id)
        by_probe = {t.info.tags["probe_id"]: t for t in traces}
        assert sorted(by_probe) == sorted(rows) and len(traces) == len(rows)
        for probe_id, trace in by_probe.items():
            row = rows[probe_id]
            feedback = score_of(trace)
            assert feedback.value == shown_score(row["score"])
            assert (feedback.source.source_type, feedback.source.source_id) == ("CODE", "reference")
            assert feedback.rationale == (row["reasoning"] or None)
            assert feedback.run_id == run_id  # the run that logged it
            (gold,) = [a for a in trace.info.assessments if a.name == "gold"]
            assert gold.value == row["gold"]
            tags = trace.info.tags
            assert (tags["probe_type"], tags["policy"]) == (row["type"], row["policy"])
            (root,) = trace.data.spans
            assert root.inputs["question"] == row["question"]
            assert (root.inputs["probe_id"], root.inputs["probe_type"]) == (probe_id, row["type"])
            assert root.inputs["transcript"] == tags["transcript"]
            assert str(root.inputs["point"]) == tags["point"]
            assert root.outputs == {"answer": row["answer"]}
            requests.setdefault(probe_id, set()).add(trace.info.request_preview)
    # The same probe asks the same in every policy's run: one request per probe.
    assert all(len(shown) == 1 for shown in requests.values())
    assert len({next(iter(shown)) for shown in requests.values()}) == len(requests)


def test_a_filter_on_the_score_returns_exactly_the_probes_with_that_score(sweep):
    client, experiment_id, judged = sweep
    scored = {
        (run_id, pid): shown_score(row["score"])
        for run_id, rows in judged.items()
        for pid, row in rows.items()
    }
    counts = Counter(scored.values())
    assert len(counts) > 2  # a real spread of scores, not only 0 and 5
    for value in counts:
        found = traces_of(client, experiment_id, filter_string=f"feedback.`score` = '{value}'")
        got = {(t.info.trace_metadata["mlflow.sourceRun"], t.info.tags["probe_id"]) for t in found}
        assert got == {key for key, v in scored.items() if v == value}, value
    # Numbers compare as numbers, and combine with tags: one policy's probes at 4 or more.
    run_id, rows = next(iter(judged.items()))
    policy = next(iter(rows.values()))["policy"]
    found = traces_of(
        client, experiment_id, filter_string=f"feedback.score >= 4 AND tags.policy = '{policy}'"
    )
    assert sorted(t.info.tags["probe_id"] for t in found) == sorted(
        pid for pid, row in rows.items() if (shown_score(row["score"]) or 0) >= 4
    )


# The MLflow UI (3.x traces view): find the probes with a score through its filter form.
async def filter_on_score(chromium: str, url: str, value: str, expected: list[str]) -> list[str]:
    """Open the traces view, filter on Feedback `score` = ``value``; the probe ids shown."""
    async with Browser(chromium) as b:
        await filter_traces_on_score(b, url, value)
        want = json.dumps(sorted(expected))
        with contextlib.suppress(RuntimeError):  # the test's assertion shows what was there
            await b.wait_for(f"{SHOWN_PROBES} === {json.dumps(want)}", "the filtered traces", 30)
        return json.loads(await b.js(SHOWN_PROBES))


def test_the_ui_traces_view_filtered_on_a_score_shows_those_probes_only(sweep, tmp_path):
    try:
        chromium, mlflow_cmd = find_tools()
    except ScreenshotError as exc:
        pytest.skip(str(exc))
    client, experiment_id, judged = sweep
    scored = [(shown_score(r["score"]), pid) for rows in judged.values() for pid, r in rows.items()]
    counts = Counter(value for value, _ in scored)
    rarest = min(sorted(counts, key=str), key=counts.__getitem__)  # fewest probes: a sharp test
    expected = [pid for value, pid in scored if value == rarest]
    assert len(expected) < len(scored) / 4
    store = Path(client.tracking_uri.removeprefix("sqlite:///")).parent
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(mlflow_cmd, store, port, tmp_path)
    try:
        wait_until_up(url, server)
        page = url + TRACES_PAGE.format(experiment_id)
        shown = asyncio.run(filter_on_score(chromium, page, str(rarest), expected))
    finally:
        stop_group(server)
    assert shown == sorted(expected), f"score {rarest}: {shown} (server log in {tmp_path})"
