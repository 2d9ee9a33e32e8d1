"""Hydra callback: the folders a run or sweep will write, checked before Hydra makes them.

Hydra makes its output folder, saves its config there and opens the job's log in it
before the job's own code runs, unguarded: an unwritable ``outputs/`` was a traceback, an
empty ``hydra.run.dir`` wrote ``.hydra/`` into the current folder, and a SLURM launcher
on a machine without ``srun`` failed deep in submitit. ``on_run_start`` and
``on_multirun_start`` run before any of that and end the command in one line (exit 2).
``on_job_start`` tells ``disk_errors`` which folder each key names, so a disk that fills
up later is named by its key wherever the write fails, and stops the job's log file from
printing a traceback per line it cannot write (the job's own write says it, once).
Registered first in ``conf/config.yaml``'s callbacks.
"""

from __future__ import annotations

import logging
import shutil
import sys
from collections.abc import Callable
from typing import Any

from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from benchmark.errors import UserError, print_error
from benchmark.run import disk_errors

SLURM_TARGET = "SlurmLauncher"  # the submitit plugin's class, whatever option names it


class CheckOutputFolders(Callback):
    """Refuse unusable output folders and launchers before Hydra uses them."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        _refusing(lambda: _check_folder(config, "hydra.run.dir"))
        register_folders(config, "hydra.run.dir")

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        def check() -> None:
            _check_folder(config, "hydra.sweep.dir")
            _check_subdir(config)
            _check_launcher(config)

        _refusing(check)
        register_folders(config, "hydra.sweep.dir")

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        multirun = _select(config, "hydra.mode") == RunMode.MULTIRUN
        register_folders(config, "hydra.sweep.dir" if multirun else "hydra.run.dir")
        quiet_log_files()


def _refusing(check: Callable[[], None]) -> None:
    """Run ``check``; a ``UserError`` ends the command in one line. (Hydra turns an
    exception raised in a callback into a warning and goes on.)"""
    try:
        check()
    except UserError as exc:
        print_error(exc)
        sys.exit(2)


def _select(config: DictConfig, key: str) -> Any:
    try:
        return OmegaConf.select(config, key, default=None)
    except OmegaConfBaseException:
        return None  # an interpolation only a job can resolve (${hydra:job.num})


def _check_folder(config: DictConfig, key: str) -> None:
    from benchmark.config.checks import check_writable

    value = _select(config, key)
    if value is None or not str(value).strip():
        raise UserError(
            f"config key '{key}': must not be empty (Hydra would write into the current "
            "folder); give a folder, e.g. outputs/run"
        )
    check_writable(key, str(value))


def _check_subdir(config: DictConfig) -> None:
    node = config.hydra.sweep._get_node("subdir")  # unresolved: ${hydra:job.num} is the job's
    raw = None if node is None else node._value()
    if raw is not None and not str(raw).strip():
        raise UserError(
            "config key 'hydra.sweep.subdir': must not be empty (every job would write into "
            "the same folder); the default is ${hydra:job.num}"
        )


def _check_launcher(config: DictConfig) -> None:
    target = str(_select(config, "hydra.launcher._target_") or "")
    if target.endswith(SLURM_TARGET) and shutil.which("srun") is None:
        name = _select(config, "hydra.runtime.choices.hydra/launcher") or "submitit_slurm"
        raise UserError(
            f"option 'hydra/launcher={name}': SLURM's srun is not on this machine's PATH; "
            "launch from a SLURM login node, or try hydra/launcher=submitit_local"
        )


def register_folders(config: DictConfig, hydra_key: str) -> None:
    """Tell ``disk_errors`` where each configured folder is (see the module docstring)."""
    disk_errors.register(hydra_key, _select(config, hydra_key) or None)
    cache_on = _select(config, "cache.mode") != "off"
    disk_errors.register("cache.dir", _select(config, "cache.dir") if cache_on else None)
    tracked = _select(config, "tracking.enabled") is not False
    uri = _select(config, "tracking.uri")
    store = _select(config, "tracking.store_dir") if tracked and uri is None else None
    disk_errors.register("tracking.store_dir", store)


def quiet_log_files() -> None:
    """The job's log files drop a line the disk refuses instead of printing a traceback."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler) and not hasattr(handler, "_quiet"):
            handler.handleError = _dropping(handler.handleError)  # type: ignore[method-assign]
            handler._quiet = True  # type: ignore[attr-defined]


def _dropping(original: Callable[[logging.LogRecord], None]) -> Callable[..., None]:
    def handle(record: logging.LogRecord) -> None:
        if disk_errors.write_error(sys.exc_info()[1] or Exception()) is None:
            original(record)

    return handle
