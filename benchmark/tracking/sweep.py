"""Which Hydra multirun a job belongs to, as plain data the tracking layer turns into tags.

A sweep's jobs may run in other processes (joblib), on other machines (SLURM)
or one after another (a sweeper asking for trials), so nothing in memory is
shared between them. What they do share is the sweep folder: its resolved path
is the sweep's id, and the sweep's own command-line overrides are written there
once, before any job starts (``write_sweep_record``), for every job to read.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from pydantic import BaseModel, Field

RECORD_FILE = "benchmark_sweep.json"


class SweepInfo(BaseModel):
    """One job's place in a multirun."""

    dir: str = Field(description="the sweep folder, resolved: a stable id shared by its jobs")
    overrides: list[str] = Field(description="the whole sweep's command-line overrides")
    job_overrides: list[str] = Field(description="this job's overrides (one point of the sweep)")
    job_num: int = Field(ge=0)

    def tags(self) -> dict[str, str]:
        return {
            "sweep": self.dir,
            "sweep_overrides": " ".join(self.overrides),
            "job_overrides": " ".join(self.job_overrides),
            "job_num": str(self.job_num),
        }


def sweep_id(sweep_dir: str | Path) -> str:
    return str(Path(sweep_dir).expanduser().resolve())


def write_sweep_record(sweep_dir: str | Path, overrides: list[str]) -> Path:
    """Leave the sweep's overrides in its folder, for jobs that cannot see them otherwise."""
    folder = Path(sweep_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RECORD_FILE
    path.write_text(json.dumps({"sweep": sweep_id(folder), "overrides": overrides}, indent=1))
    return path


def sweep_info(sweep_dir: str | Path, job_overrides: list[str], job_num: int) -> SweepInfo:
    """The job's sweep; the sweep's overrides fall back to the job's when no record was left."""
    record = Path(sweep_dir) / RECORD_FILE
    overrides = list(job_overrides)
    if record.is_file():
        # A damaged record costs the tag its detail, not the run.
        with contextlib.suppress(ValueError, KeyError, TypeError):
            overrides = [str(o) for o in json.loads(record.read_text())["overrides"]]
    return SweepInfo(
        dir=sweep_id(sweep_dir),
        overrides=overrides,
        job_overrides=list(job_overrides),
        job_num=job_num,
    )
