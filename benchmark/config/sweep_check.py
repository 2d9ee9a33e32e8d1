"""Hydra callback: every job of a sweep validated before the first one runs.

Registered first under ``hydra.callbacks`` in ``conf/config.yaml``. Without it a sweep
whose third value is bad runs two jobs, then fails the third in two lines; a ``glob()``
matching no option launches no job and exits 0. Here, in the launching process, each
job's config is composed as the sweeper will compose it (Hydra's own loader) and validated
as the job will validate it (``benchmark.config.schema.validate``); the first bad one ends the
command in one line naming the job's swept values, exit 2, before any job, store or
sweep folder exists.

A sweep of at most ``MAX_CHECKED_JOBS`` jobs is checked job by job (rules between
groups included); a larger one, or a search (Optuna) whose trials are not known in
advance, is checked value by value: every swept value once, the others at their first.
"""

from __future__ import annotations

import copy
import itertools
import sys
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict

from benchmark.errors import UserError, print_error

MAX_CHECKED_JOBS = 100
BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
# Whether this process got as far as a job: before that, what fails outside a job is Hydra
# (or a plugin) refusing one of its own settings (``__main__`` reports it in one line).
_started = [False]


def mark_started(started: bool = True) -> None:
    _started[0] = started


def hydra_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is Hydra failing on its settings: raised before any job of this
    process started, and not a job's failure handed back by a launcher."""
    if _started[0]:
        return False
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "return_value" and "hydra" in code.co_filename:
            return False  # JobReturn.return_value: a job ran (in a worker) and failed
        tb = tb.tb_next
    return True


class CheckSweep(Callback):
    """``on_multirun_start``: refuse the sweep in one line if any of its jobs would be refused."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        try:
            check_sweep(config)
        except UserError as exc:
            # Hydra turns an Exception raised by a callback into a warning and goes on.
            print_error(exc)
            sys.exit(2)


def check_sweep(config: DictConfig) -> None:
    """Each job of the sweep ``config`` describes composes and validates."""
    from hydra.core.global_hydra import GlobalHydra

    loader = GlobalHydra.instance().config_loader()
    swept = swept_values(config, loader)
    for num, job in enumerate(jobs_to_check(swept, _is_basic(config))):
        label = " ".join(job[key] for key in swept if len(swept[key]) > 1)
        check_job(config, loader, list(job.values()), f"sweep job {label}".strip(), num)


def swept_values(config: DictConfig, loader: Any) -> dict[str, list[str]]:
    """Each key the sweep sets -> its ``key=value`` overrides in order (one for a key it
    does not vary); the sweeper's ``params`` first, the command line's winning. A sweep
    that lists no value (``glob()`` matching no option) is a ``UserError``."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import IntervalSweep
    from hydra.errors import HydraException

    given = sweep_overrides(config)
    try:
        overrides = OverridesParser.create(config_loader=loader).parse_overrides(given)
    except HydraException:
        return {}  # the sweeper reports what it cannot parse
    swept: dict[str, list[str]] = {}
    for override in overrides:
        key = override.get_key_element()
        if not override.is_sweep_override():
            swept[key] = [f"{key}={override.get_value_element_as_str()}"]
            continue
        value = override.value()
        if isinstance(value, IntervalSweep):  # a search's range: its two ends
            values = [str(value.start), str(value.end)]
        else:
            values = list(override.sweep_string_iterator())
        if not values:
            raise UserError(
                f"the sweep '{override.input_line}' lists no value{_options(loader, key)}"
            )
        swept[key] = [f"{key}={v}" for v in values]
    return swept


def jobs_to_check(swept: dict[str, list[str]], basic: bool) -> list[dict[str, str]]:
    """The jobs to compose: all of a basic sweep up to ``MAX_CHECKED_JOBS``, else each value
    once with the other keys at their first value."""
    count = 1
    for values in swept.values():
        count *= len(values)
    if basic and count <= MAX_CHECKED_JOBS:
        keys = list(swept)
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*swept.values())]
    first = {key: values[0] for key, values in swept.items()}
    jobs = [first]
    for key, values in swept.items():
        jobs += [{**first, key: value} for value in values[1:]]
    return jobs


def check_job(
    config: DictConfig, loader: Any, overrides: list[str], label: str, num: int = 0
) -> None:
    """One job's config, composed by Hydra and validated as its job will; a refusal names
    the job by ``label`` (its swept values)."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.errors import HydraException

    from benchmark.config import schema as config_mod
    from benchmark.config.checks import override_error

    try:
        job_cfg = loader.load_sweep_config(config, overrides)
    except HydraException as exc:
        said = override_error(exc) or (str(exc).strip().splitlines() or ["cannot compose"])[0]
        raise UserError(f"{label}: {said}") from None
    with open_dict(job_cfg):  # as the launcher hands it to the job: its number, no hydra node
        job_cfg.hydra.job.num, job_cfg.hydra.job.id = num, f"check_{num}"
        task_cfg = copy.copy(job_cfg)
        del task_cfg["hydra"]
    held = HydraConfig.instance().cfg
    HydraConfig.instance().set_config(job_cfg)  # ${hydra:...} resolves as in the job
    try:
        config_mod.validate(config_mod.resolve(task_cfg))
    except UserError as exc:
        raise UserError(f"{label}: {exc}") from None
    finally:
        HydraConfig.instance().cfg = held


def sweep_overrides(config: DictConfig) -> list[str]:
    """What the sweeper sweeps, as written (an interpolation in a value is the job's to
    resolve): ``hydra.sweeper.params``, then the command line's overrides, which win."""
    params = OmegaConf.select(config, "hydra.sweeper.params", default=None)
    found = OmegaConf.to_container(params, resolve=False) if params is not None else {}
    task = OmegaConf.to_container(config.hydra.overrides.task, resolve=False)
    assert isinstance(found, dict) and isinstance(task, list)
    return [f"{k}={v}" for k, v in found.items()] + [str(o) for o in task]


def _is_basic(config: DictConfig) -> bool:
    return OmegaConf.select(config, "hydra.sweeper._target_", default=None) == BASIC_SWEEPER


def _options(loader: Any, key: str) -> str:
    """`` (options: a, b)`` for a config group key, else ``""``."""
    try:
        options = loader.get_group_options(key)
    except Exception:  # noqa: BLE001 - not a group: no options to list
        return ""
    return f" (options: {', '.join(sorted(options))})" if options else ""
