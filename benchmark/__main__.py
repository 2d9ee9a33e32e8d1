"""Entry point: ``python -m benchmark [group=option ...] [key=value ...]``.

Hydra composes ``conf/``; ``benchmark.config`` validates it; ``benchmark.pipeline``
runs the job; ``benchmark.tracking`` logs it to MLflow; the scorecard is printed.
User errors (bad option, bad value, malformed transcript) end in one line on
stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from benchmark.errors import JobFailed, UserError

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
log = logging.getLogger("benchmark")


@hydra.main(version_base="1.3", config_path="../conf", config_name="config")
def hydra_main(cfg: DictConfig) -> float | None:
    try:
        return run(cfg)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except JobFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        if not _in_sweep():  # in a sweep the other jobs go on; this one is logged
            sys.exit(1)
        return None


def _in_sweep() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def run(cfg: DictConfig) -> float | None:
    """Validate, run, log, print. Returns the overall score (a sweeper's objective)."""
    from benchmark import config as config_mod
    from benchmark import scorecard
    from benchmark.pipeline import build_parts, run_job

    resolved = config_mod.resolve(cfg)
    config = config_mod.validate(resolved)
    parts = build_parts(config)  # a missing key or bad option fails here, before any work
    if config.tracking.enabled:
        from benchmark.tracking import prepare_store

        # Migrate a fresh store before the work, not after it.
        prepare_store(config.tracking.store_dir, config.tracking.experiment)
    result = run_job(config, parts)
    card = scorecard.render(result)
    if config.tracking.enabled:
        from benchmark.tracking import log_job, tracking_uri

        run_id = log_job(config, resolved, result, card)
        log.info("MLflow run %s in %s", run_id, tracking_uri(config.tracking.store_dir))
    check_failures(result.failed_fraction, config.execution.fail_on_error)
    return result.scores().overall


def check_failures(fraction: float, allowed: float) -> None:
    """Fail the job (after everything is logged) when too many probes have no score."""
    if fraction > allowed:
        raise JobFailed(
            f"{fraction:.1%} of probes failed after all retries, more than "
            f"execution.fail_on_error={allowed:g}; results are logged, failures are in "
            "judgments.jsonl (error field)"
        )


def check_options(argv: list[str]) -> None:
    """Reject an unknown config-group option in one line, before Hydra lists a page of them."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        overrides = OverridesParser.create().parse_overrides(
            [a for a in argv if "=" in a and not a.startswith("-")]
        )
    except HydraException:
        return  # Hydra reports syntax errors itself
    for override in overrides:
        group = override.key_or_group
        folder = CONF_DIR / group
        if override.is_delete() or not folder.is_dir():
            continue
        try:
            values = (
                list(override.sweep_string_iterator())
                if override.is_sweep_override()
                else [override.get_value_element_as_str()]
            )
        except HydraException:
            continue  # glob() sweeps need Hydra's config loader
        options = sorted(p.stem for p in folder.glob("*.yaml"))
        for value in values:
            if value not in options:
                raise UserError(f"unknown {group} '{value}' (choose from: {', '.join(options)})")


def main() -> None:
    try:
        check_options(sys.argv[1:])
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    hydra_main()


if __name__ == "__main__":
    main()
