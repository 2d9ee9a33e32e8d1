"""Hydra callback: get the tracking store ready once, before a sweep's jobs start.

Registered in ``conf/config.yaml`` under ``hydra.callbacks``. Every job opens the
store under the store's lock (``store_check.py``), so jobs never race on a fresh
store, this sweep's or another command's; migrating it here, in the launching
process before any job exists, only spares the jobs the wait. The sweep's
overrides, and the keys it sweeps, are left in its folder for the jobs' tags and run names.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import ValidationError

from benchmark.errors import UserError, one_line
from benchmark.redaction import scrub_setting
from benchmark.tracking.config import TrackingConfig

log = logging.getLogger(__name__)


class PrepareTracking(Callback):
    """``on_multirun_start``: migrate the store (or reach the server) and record the sweep."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from benchmark.tracking.mlflow_store import prepare_tracking, store_uri
        from benchmark.tracking.sweep import write_sweep_record

        overrides = _sweep_overrides(config)
        swept = swept_keys(overrides)
        write_sweep_record(str(config.hydra.sweep.dir), overrides, swept, swept_values(overrides))
        tracking = _tracking(config)
        if tracking is None or not tracking.enabled or _sweeps_tracking(swept):
            return  # each job prepares its own store (or has none)
        try:
            prepare_tracking(tracking)
        except UserError:
            # A broken or unusable store: Hydra would turn a raise into a warning and go on,
            # so each job reports it in one line, before its work.
            return
        log.info("tracking ready: %s (experiment %s)", store_uri(tracking), tracking.experiment)


class SummarizeSweep(Callback):
    """``on_multirun_end``: the sweep's comparison on its parent run, in a saved view and on
    the console; with ``report.auto`` (the default) its report too (``report/sweep_end.py``).
    A failure here costs the summary, never the sweep: every job has logged already."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        tracking = _tracking(config)
        if tracking is None or not tracking.enabled:
            return
        if _sweeps_tracking(swept_keys(_sweep_overrides(config))):
            return  # the jobs logged to different stores: nothing to compare in one
        auto = bool(OmegaConf.select(config, "report.auto", default=True))
        from benchmark.report.sweep_end import console_text, summarize_sweep

        try:
            summary = summarize_sweep(tracking, str(config.hydra.sweep.dir), auto)
        except KeyboardInterrupt:
            raise
        except UserError as exc:  # e.g. no job finished: nothing to compare
            print(f"note: no sweep comparison: {one_line(str(exc))}", file=sys.stderr)
            return
        except Exception as exc:  # noqa: BLE001 - the jobs' results are safe in the store
            first = one_line((str(exc).splitlines() or [type(exc).__name__])[0])
            print(f"warning: the sweep comparison failed: {first}", file=sys.stderr)
            return
        print(scrub_setting(console_text(summary)), flush=True)  # paths may hold a key


def _sweep_overrides(config: DictConfig) -> list[str]:
    """What the sweeper sweeps, as it reads it: ``hydra.sweeper.params`` (set by an experiment
    config), then the command line, whose overrides win."""
    from benchmark.config.sweep_check import (
        sweep_overrides,  # unresolved: ${hydra:...} is the job's
    )

    return sweep_overrides(config)


def _tracking(config: DictConfig) -> TrackingConfig | None:
    """The sweep's tracking config, or None when it does not validate (each job reports that)."""
    try:
        data = OmegaConf.to_container(config.tracking, resolve=True)
        return TrackingConfig.model_validate(data)
    except (OmegaConfBaseException, ValidationError):
        return None


def swept_keys(overrides: list[str]) -> list[str] | None:
    """The keys the sweep varies (``a,b``, ``range()``, ``interval()``...), as the sweeper
    parses them; None when they do not parse (Hydra reports that)."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return None
    return [o.key_or_group for o in parsed if o.is_sweep_override()]


def swept_values(overrides: list[str]) -> dict[str, list[str]]:
    """Each swept key's values in order, where Hydra lists them without its config loader
    (``a,b``, ``choice()``, ``range()``; not ``glob()``); the last override of a key wins."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException:
        return {}
    values: dict[str, list[str]] = {}
    for override in parsed:
        if not override.is_sweep_override():
            continue
        try:
            values[override.key_or_group] = list(override.sweep_string_iterator())
        except HydraException:
            values.pop(override.key_or_group, None)
    return values


def _sweeps_tracking(swept: list[str] | None) -> bool:
    """Whether the sweep varies the tracking config itself: jobs then prepare their own stores."""
    return any(key.split(".")[0].split("/")[0] == "tracking" for key in swept or [])
