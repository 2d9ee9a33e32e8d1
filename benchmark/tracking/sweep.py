"""Which Hydra multirun a job belongs to, as plain data the tracking layer turns into tags.

A sweep's jobs may run in other processes (joblib), on other machines (SLURM)
or one after another (a sweeper asking for trials), so nothing in memory is
shared between them. What they do share is the sweep folder: its resolved path
is the sweep's id, and the sweep's own command-line overrides are written there
once, before any job starts (``write_sweep_record``), for every job to read, with the
keys it sweeps (what tells its jobs apart, so what their run names show).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from pydantic import BaseModel, Field

from benchmark.redaction import scrub_setting
from benchmark.tracking.run_colours import run_colour

RECORD_FILE = "benchmark_sweep.json"
SWEEP_TAG = "sweep"  # the sweep folder, resolved, on every job's run: what reports select by
SWEEP_ID_TAG = "sweep_id"  # its last two parts: a short label to group or filter by in the UI
NAME_SEPARATOR = " · "
# Overrides that change how a job runs, not its result: never part of a run's name.
OPERATIONAL_KEYS = ("cache", "execution", "tracking", "hydra")


class SweepInfo(BaseModel):
    """One job's place in a multirun."""

    dir: str = Field(description="the sweep folder, resolved: a stable id shared by its jobs")
    overrides: list[str] = Field(description="the whole sweep's command-line overrides")
    job_overrides: list[str] = Field(description="this job's overrides (one point of the sweep)")
    job_num: int = Field(ge=0)
    swept: list[str] | None = Field(
        None, description="the keys the sweep varies; None: unknown (every job override shows)"
    )
    values: dict[str, list[str]] = Field(
        default_factory=dict,
        description="each swept key's values in the sweep's order (where they can be listed)",
    )

    @property
    def short_id(self) -> str:
        return short_sweep_id(self.dir)

    def tags(self) -> dict[str, str]:
        return {
            SWEEP_TAG: self.dir,
            SWEEP_ID_TAG: self.short_id,
            "sweep_overrides": " ".join(self.overrides),
            "job_overrides": " ".join(self.job_overrides),
            "job_num": str(self.job_num),
        }

    def colour(self, policy: str | None) -> str:
        """This job's run colour: its policy's place in the sweep (``run_colours``)."""
        return run_colour(policy, self.values.get("policy"), self.job_num)

    def run_name(self, head: str) -> str:
        """``head`` (the policy) then this job's values of the swept keys, e.g.
        ``hermes · judge=gpt4o``: what tells it from the sweep's other jobs. A path value
        shows its file name only."""
        parts = [head]
        swept = None if self.swept is None else {_key(k) for k in self.swept}
        for override in self.job_overrides:
            key, _, value = override.partition("=")
            key = _key(key)
            if key == "policy" or key.split(".")[0].split("/")[0] in OPERATIONAL_KEYS:
                continue
            if swept is None or key in swept:
                parts.append(f"{key}={Path(value).name if '/' in value else value}")
        return NAME_SEPARATOR.join(parts)


def _key(key: str) -> str:
    """An override's key without its ``+``, ``++`` or ``~`` prefix."""
    return key.lstrip("+~")


def short_sweep_id(sweep_dir: str) -> str:
    """The sweep folder's last two parts (``<date>/<time>`` for Hydra's default): short,
    and distinct between the sweeps of one project."""
    return "/".join(Path(sweep_dir).parts[-2:])


def sweep_id(sweep_dir: str | Path) -> str:
    """The sweep folder resolved, any secret in its path replaced: the id is stored (tags,
    the parent run's name, the sweep record), and every job computes the same one."""
    return scrub_setting(str(Path(sweep_dir).expanduser().resolve()))


def write_sweep_record(
    sweep_dir: str | Path,
    overrides: list[str],
    swept: list[str] | None = None,
    values: dict[str, list[str]] | None = None,
) -> Path:
    """Leave the sweep's overrides, swept keys and their values in its folder, for jobs
    that cannot see them otherwise."""
    folder = Path(sweep_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RECORD_FILE
    record = {"sweep": sweep_id(folder), "overrides": overrides, "swept": swept}
    record["values"] = values or {}
    path.write_text(json.dumps(record, indent=1))
    return path


def sweep_info(sweep_dir: str | Path, job_overrides: list[str], job_num: int) -> SweepInfo:
    """The job's sweep; the sweep's overrides fall back to the job's when no record was left."""
    record = Path(sweep_dir) / RECORD_FILE
    overrides, swept, values = list(job_overrides), None, {}
    if record.is_file():
        # A damaged record costs the tags and the name their detail, not the run.
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError):
            data = json.loads(record.read_text())
            overrides = [str(o) for o in data["overrides"]]
            if data.get("swept") is not None:
                swept = [str(k) for k in data["swept"]]
            values = {str(k): [str(v) for v in vs] for k, vs in data.get("values", {}).items()}
    return SweepInfo(
        dir=sweep_id(sweep_dir),
        overrides=overrides,
        job_overrides=list(job_overrides),
        job_num=job_num,
        swept=swept,
        values=values,
    )
