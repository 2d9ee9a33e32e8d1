"""One colour per policy, the same in MLflow's UI and in the report.

MLflow colours a run by a hash of its id unless the run carries ``mlflow.runColor``,
so a sweep's runs often come out in shades of one hue. Each job's run gets the colour
of its policy's place in the sweep (``policy=a,b,c``: a is the first colour), so the
policies of a sweep are distinct, and a policy keeps its colour across seeds or judges.
The palette is picked from MLflow's own run palette, most distinct hues first.
"""

from __future__ import annotations

import hashlib

RUN_COLOR_TAG = "mlflow.runColor"

PALETTE = (
    "#2272b4",  # blue
    "#de7921",  # orange
    "#277c43",  # green
    "#c83243",  # red
    "#8a63bf",  # purple
    "#a6630c",  # brown
    "#b45091",  # pink
    "#04867d",  # teal
    "#5f7281",  # slate
    "#facb66",  # yellow
    "#434a93",  # indigo
    "#8ddda8",  # mint
    "#f792a6",  # rose
    "#4299e0",  # sky
    "#93320b",  # rust
    "#1f272d",  # ink
)


def colour_at(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def stable_colour(name: str) -> str:
    """A colour from the name alone (no sweep to place it in): the same on every machine."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return colour_at(digest[0])


def run_colour(policy: str | None, swept_policies: list[str] | None, job_num: int | None) -> str:
    """The colour of a run of ``policy``: its place among the sweep's policies; in a sweep
    that keeps one policy, the job's place (so its runs still differ); else from its name."""
    if policy is not None and swept_policies and policy in swept_policies:
        return colour_at(swept_policies.index(policy))
    if job_num is not None:
        return colour_at(job_num)
    return stable_colour(policy or "")
