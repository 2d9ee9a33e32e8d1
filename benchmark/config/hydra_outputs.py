"""Hydra callback: no credential in the files Hydra keeps of a job, nor in its log.

Hydra saves the command line and the composed config (``.hydra/overrides.yaml``,
``config.yaml``, ``hydra.yaml``; a sweep's ``multirun.yaml``) before the task
function runs, so a ``base_url`` with ``user:pass@`` or a ``+judge.endpoint.api_key=``
is on disk before the job can refuse it. ``on_job_start`` runs right after those
saves (``hydra.core.utils.run_job``) and before the task function, refused or
not: it rewrites them with every credential redacted (``redact_settings``) and
puts the scrubbing log filter on the handlers Hydra has just configured, so the
job's ``.log`` file holds none either. Registered in ``conf/config.yaml``, after
the tracking callback, whose sweep record it scrubs too.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import yaml
from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from benchmark.redaction import redact_settings, scrub_setting
from benchmark.redaction.logs import scrub_handlers
from benchmark.run.storage import write_atomic

log = logging.getLogger(__name__)

JOB_FILES = ("overrides.yaml", "config.yaml", "hydra.yaml")
SWEEP_RECORD = "benchmark_sweep.json"  # written by the tracking callback (tracking/sweep.py)


class ScrubHydraOutputs(Callback):
    """Redact Hydra's saved copies of the command line and config, and the job's log."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        scrub_handlers()

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        scrub_handlers()
        sweep_dir = _sweep_dir(config)
        if sweep_dir is not None:
            scrub_folder(sweep_dir)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        scrub_handlers()  # Hydra configured the job's logging (its .log file) just before
        runtime = OmegaConf.select(config, "hydra.runtime.output_dir", default=None)
        subdir = OmegaConf.select(config, "hydra.output_subdir", default=None)
        if runtime is not None and subdir is not None:
            scrub_folder(Path(str(runtime)) / str(subdir))
        # A sweep's multirun.yaml is saved after on_multirun_start: its first job scrubs it.
        sweep_dir = _sweep_dir(config)
        if sweep_dir is not None:
            scrub_folder(sweep_dir)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep_dir = _sweep_dir(config)
        if sweep_dir is not None:  # a sweeper's own summary (optuna's optimization_results)
            scrub_folder(sweep_dir)


def _sweep_dir(config: DictConfig) -> Path | None:
    if OmegaConf.select(config, "hydra.mode", default=None) != RunMode.MULTIRUN:
        return None
    folder = OmegaConf.select(config, "hydra.sweep.dir", default=None)
    return None if folder is None else Path(str(folder))


def scrub_folder(folder: Path) -> list[Path]:
    """Rewrite the YAML files and the sweep record directly in ``folder`` that held a
    credential; returns those rewritten. A file it cannot rewrite is reported, not raised:
    the job must still run (and refuse bad input in its own words)."""
    if not folder.is_dir():
        return []
    rewritten = []
    for path in sorted([*folder.glob("*.yaml"), folder / SWEEP_RECORD]):
        try:
            if path.is_file() and scrub_file(path):
                rewritten.append(path)
        except OSError as exc:
            log.warning("could not scrub credentials from %s: %s", path, exc.strerror or exc)
    return rewritten


def scrub_file(path: Path) -> bool:
    """Rewrite ``path`` (YAML, or JSON by suffix) with credentials redacted; False when it held
    none (the file is then left byte for byte)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        clean = "\n".join(scrub_setting(line) for line in text.split("\n"))
    else:
        redacted = redact_settings(data)
        if redacted == data:
            return False
        if path.suffix == ".json":
            clean = json.dumps(redacted, indent=1)
        else:
            clean = yaml.safe_dump(redacted, sort_keys=False, allow_unicode=True)
    if clean == text:
        return False
    write_atomic(path, clean)  # a sweep's jobs may scrub its multirun.yaml at once
    return True
