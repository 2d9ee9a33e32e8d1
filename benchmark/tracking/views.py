"""A saved view of the MLflow experiment page that shows a sweep's comparison at once.

MLflow 3.x's runs table starts with no metric column and its parent runs collapsed, so a
person comparing policies saw names and dates only. MLflow keeps saved views as
experiment tags (``mlflow.sharedViewState.<id>``: a name, times, and the page state as
JSON), lists them under the page's "Views" button and opens one from a link
(``?viewStateShareKey=<id>``). Each sweep gets one: its jobs only (filtered on their
parent run), best overall first, and as the first columns the overall with its 95%
interval in one cell (the run tag ``overall_ci``), the overall, retention and kept
fraction, each narrow enough to fit beside MLflow's assistant panel at 1280 px.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import quote

from benchmark.scoring import metric_names as names
from benchmark.tracking.sweep_parent import PARENT_RUN_TAG

VIEW_TAG_PREFIX = "mlflow.sharedViewState."
VIEW_ID_PREFIX = "benchmark-sweep-"
KEEP_VIEWS = 20  # the newest sweeps' views; MLflow's page takes at most 40 saved views
OVERALL_CI_TAG = "overall_ci"  # "4.03 [3.90, 4.15]": the overall and its interval, one cell
ML_WORKFLOW = "workflowType=machine_learning"  # MLflow 3.x opens on GenAI pages without it
COLUMNS = (names.OVERALL, names.RETENTION, names.KEPT_FRACTION)


def overall_ci_text(metrics: dict[str, float]) -> str | None:
    """The run's overall as the report prints it, ``4.03 [3.90, 4.15]`` (``[n/a]`` with
    too few clusters for an interval); None when nothing was scored."""
    value = metrics.get(names.OVERALL)
    if value is None:
        return None
    low, high = (metrics.get(k) for k in names.ci_names(names.OVERALL))
    interval = "[n/a]" if low is None or high is None else f"[{low:.2f}, {high:.2f}]"
    return f"{value:.2f} {interval}"


def view_id(parent_id: str) -> str:
    return f"{VIEW_ID_PREFIX}{parent_id}"


def view_state(parent_id: str) -> dict[str, Any]:
    """The page state: the sweep's jobs, best first, the headline columns first."""
    tag = f"tags.`{OVERALL_CI_TAG}`"
    metrics = [f"metrics.`{key}`" for key in COLUMNS]
    return {
        "searchFilter": f"tags.`{PARENT_RUN_TAG}` = '{parent_id}'",
        "orderByKey": metrics[0],
        "orderByAsc": False,
        "startTime": "ALL",
        "lifecycleFilter": "Active",
        "modelVersionFilter": "All Runs",
        "datasetsFilter": [],
        "selectedColumns": [tag, *metrics],
        "columnOrder": ["attributes.`Run Name`", tag, *metrics],
        "columnWidths": {"attributes.`Run Name`": 150, tag: 130, **dict.fromkeys(metrics, 90)},
        "runsHiddenMode": "SHOW_ALL",
        "viewMaximized": False,
        "runListHidden": False,
        "isAccordionReordered": False,
        "groupBy": None,
        "groupsExpanded": {},
        "useGroupedValuesInCharts": True,
        "hideEmptyCharts": True,
        "globalLineChartConfig": {"xAxisKey": "step", "lineSmoothness": 0},
        "chartsSearchFilter": names.HEADLINE,
    }


def save_sweep_view(client: Any, experiment_id: str, parent_id: str, name: str) -> str:
    """Save (or refresh) the sweep's view on its experiment; returns its id. Older sweeps'
    views beyond the newest ``KEEP_VIEWS`` are removed: the page lists 40 at most."""
    now = int(time.time() * 1000)
    key = view_id(parent_id)
    envelope = {"name": name, "createdAt": now, "updatedAt": now}
    envelope["state"] = json.dumps(view_state(parent_id), separators=(",", ":"))
    client.set_experiment_tag(experiment_id, VIEW_TAG_PREFIX + key, json.dumps(envelope))
    _prune(client, experiment_id)
    return key


def _prune(client: Any, experiment_id: str) -> None:
    tags = client.get_experiment(experiment_id).tags
    ours = []
    for tag, value in tags.items():
        if tag.startswith(VIEW_TAG_PREFIX + VIEW_ID_PREFIX):
            try:
                ours.append((int(json.loads(value)["createdAt"]), tag))
            except (ValueError, KeyError, TypeError):
                ours.append((0, tag))
    for _, tag in sorted(ours, reverse=True)[KEEP_VIEWS:]:
        client.delete_experiment_tag(experiment_id, tag)


def view_url(ui_url: str, experiment_id: str, key: str) -> str:
    """The link that opens the saved view in MLflow's UI at ``ui_url``."""
    base = ui_url.rstrip("/")
    return f"{base}/#/experiments/{experiment_id}/runs?viewStateShareKey={quote(key)}&{ML_WORKFLOW}"
