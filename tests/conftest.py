"""Shared test helpers: real Hydra composition of ``conf/`` and small, fast overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig
from openai_stub import openai_stub_fixture  # noqa: F401  (registers the `openai_stub` fixture)

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SHARED_DATA = REPO.parent / "shared" / "data"

# A short session with a small window: several compaction points in well under a second.
SMALL = [
    "transcript.sessions=1",
    "transcript.target_tokens=30000",
    "compaction.context_window=16000",
    "compaction.tail_tokens=2500",
    "tracking=disabled",
    "cache.dir=null",
]


def compose_config(overrides: list[str] | None = None) -> DictConfig:
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=overrides or [])


def group_options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present beside the repository")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _close_llm_clients():
    """No aiohttp pool outlives its test."""
    yield
    from benchmark.llm import close_all

    close_all()


@pytest.fixture(scope="session")
def default_sessions(tmp_path_factory):
    """The default job's generated sessions (composed config, real generator), loaded once
    per test session through a session cache that tests may share (``cache_dir``)."""
    from benchmark.config import validate
    from benchmark.redaction import redactor_for
    from benchmark.transcript.sources import load_transcripts

    cache_dir = tmp_path_factory.mktemp("cache")
    config = validate(compose_config())
    loaded = load_transcripts(config.transcript, redactor_for(config), cache_dir)
    return config, loaded, cache_dir


def run_point(config, transcript, point, policy, answerer, judge):
    """One compaction point, start to finish, on the calling thread: what a job does to
    one point, with stages a test can wrap (spies, broken answerers)."""
    from benchmark.evaluation import evaluate
    from benchmark.judge.measured import not_measured
    from benchmark.probe.cache import load_or_generate
    from benchmark.scheduling import compact_point, point_result

    probes = load_or_generate(transcript, point, config.probe, config.cache_path)
    context = compact_point(config, transcript, point, policy)
    rollup = config.rubric.without(not_measured(config.rubric, judge, answerer))
    results = [evaluate(p, context, answerer, judge, config.rubric, rollup) for p in probes]
    return point_result(config, point, context, results)
