"""An offline job never loads the LLM stack: the package ``__init__``s export their names
lazily (``benchmark.lazy``), and the client loads only for a part that makes one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Builds the default config's parts and runs everything a job imports, in a fresh interpreter.
OFFLINE = """
import sys
from hydra import compose, initialize_config_dir
from benchmark.__main__ import run  # noqa: F401  (the entry point's own imports)
import benchmark.run.job, benchmark.run.pipeline
from benchmark.config.schema import validate
from benchmark.run.parts import build_parts
from benchmark.llm import client_loaded, close_all
with initialize_config_dir(config_dir=sys.argv[1], version_base="1.3"):
    config = validate(compose(config_name="config", overrides=sys.argv[2:]))
build_parts(config)
close_all()
print(client_loaded(), sorted(m for m in ("openai", "aiohttp") if m in sys.modules))
"""


def _offline_imports(*overrides: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-test"}
    code = [sys.executable, "-c", OFFLINE, str(ROOT / "conf"), *overrides]
    done = subprocess.run(code, capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


def test_the_offline_default_does_not_load_the_llm_stack():
    assert _offline_imports() == "False []"


def test_an_llm_part_loads_it():
    assert _offline_imports("judge=gpt4o") == "True ['aiohttp', 'openai']"


@pytest.mark.parametrize(
    "package, name",
    [
        ("benchmark.llm", "LLMClient"),
        ("benchmark.llm", "LLMError"),
        ("benchmark.policy", "Codex"),
        ("benchmark.policy", "Regenerative"),
        ("benchmark.summarizer", "LLMSummarizer"),
        ("benchmark.judge", "LLMJudge"),
        ("benchmark.answerer", "ExtractiveAnswerer"),
    ],
)
def test_public_names_import_from_their_package(package, name):
    module = __import__(package, fromlist=[name])
    value = getattr(module, name)
    assert value.__name__ == name and name in dir(module) and name in module.__all__


def test_an_unknown_name_is_an_attribute_error():
    import benchmark.policy

    with pytest.raises(AttributeError, match="benchmark.policy.*Nope"):
        benchmark.policy.Nope  # noqa: B018
