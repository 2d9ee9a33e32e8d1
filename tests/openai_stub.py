"""The loopback OpenAI stub for tests: :mod:`benchmark.stub` plus the pytest fixture.

Tests import the stub's names from here (``from openai_stub import Fault, OpenAIStub``);
the server itself lives in the package so scripts and users can run it too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# Re-exported: the names the test files take from here (the rest they import from benchmark.stub).
from benchmark.stub import Fault, OpenAIStub, decrypt, message_text, scripted_reply  # noqa: F401


@pytest.fixture(name="openai_stub")
def openai_stub_fixture() -> Iterator[OpenAIStub]:
    """A running stub for one test, always stopped afterwards.

    Registered as ``openai_stub``; the function has another name so that importing it into a
    test module or conftest does not clash with test parameters called ``openai_stub``.
    """
    with OpenAIStub() as stub:
        yield stub


# Lets ``from openai_stub import openai_stub`` work too (same fixture, same name).
openai_stub = openai_stub_fixture
