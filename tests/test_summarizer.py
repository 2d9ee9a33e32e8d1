"""The offline summarizer: sections filled verbatim from the region, merging, budget."""

from __future__ import annotations

import re

import pytest
from conftest import tool_call as call
from pydantic import ValidationError

from benchmark.summarizer import ExtractiveSummarizer, Summarizer, SummaryRequest
from benchmark.summarizer.extractive import EMPTY, parse
from benchmark.summarizer.sections import kind_of
from benchmark.text import tokens
from benchmark.transcript.models import Message

SECTIONS = [
    "Primary request and intent",
    "Files and code sections",
    "Errors and fixes",
    "Key decisions",
    "Pending tasks",
    "All user messages",
    "Current work",
    "Optional next step",
    "Key technical concepts",
    "Progress so far",
    "Weather report",
]


def region() -> list[Message]:
    return [
        Message(role="user", content="Please make the cache thread-safe.\nIt races under load."),
        Message(
            role="assistant",
            content="Plan:\n- [ ] reproduce the race\n- [ ] add a lock\n- [ ] update CHANGELOG.md",
            tool_calls=[call("a1", "read_file", path="src/app/cache.py")],
        ),
        Message(role="tool", tool_call_id="a1", content="CACHE = {}\n"),
        Message(
            role="assistant",
            content=None,
            tool_calls=[call("a2", "bash", command="pytest tests/test_cache.py -q")],
        ),
        Message(
            role="tool",
            tool_call_id="a2",
            content="FAILED tests/test_cache.py::test_race - AssertionError: 3 != 4\n1 failed",
        ),
        Message(
            role="assistant",
            content="We decided to use threading.RLock because the getter re-enters. "
            "Pinning filelock==3.13.1 as well.",
            tool_calls=[
                call("a3", "write_file", path="src/app/lock.py", content="import threading\n"),
                call(
                    "a4",
                    "str_replace_editor",
                    command="str_replace",
                    path="src/app/cache.py",
                    old_str="CACHE = {}",
                    new_str="CACHE = {}\nLOCK = None",
                ),
            ],
        ),
        Message(role="tool", tool_call_id="a3", content="File written."),
        Message(role="tool", tool_call_id="a4", content="The file has been edited."),
        Message(role="user", content="Also keep the docs in sync."),
        Message(
            role="assistant",
            content="Progress:\n- [x] reproduce the race\n- [x] add a lock\n- [ ] update "
            "CHANGELOG.md\nNext I'll update CHANGELOG.md with the fix.",
        ),
    ]


def full_text(messages: list[Message]) -> str:
    return "\n".join(m.render() for m in messages)


def items(summary: str) -> dict[str, list[str]]:
    return parse(summary)


def summarize(**kwargs: object) -> str:
    request = SummaryRequest(
        region=kwargs.pop("region", region()),
        sections=kwargs.pop("sections", SECTIONS),
        max_tokens=kwargs.pop("max_tokens", 4000),
        previous_summary=kwargs.pop("previous_summary", None),
    )
    return ExtractiveSummarizer().summarize(request)


def assert_verbatim(summary: str, source: str) -> None:
    for section in items(summary).values():
        for item in section:
            for line in item.split("\n"):
                line = re.sub(r" \((?:created|modified|read)(?:, \w+)*\)$", "", line)
                assert line in source, line


def test_sections_filled_from_region() -> None:
    out = summarize()
    found = items(out)
    assert [h for h in found] == [s.lower() for s in SECTIONS]
    assert found["primary request and intent"] == [
        "Please make the cache thread-safe.\nIt races under load."
    ]
    assert found["files and code sections"] == [
        "src/app/cache.py (modified, read)",
        "src/app/lock.py (created)",
    ]
    assert found["errors and fixes"] == [
        "FAILED tests/test_cache.py::test_race - AssertionError: 3 != 4"
    ]
    assert found["key decisions"] == [
        "We decided to use threading.RLock because the getter re-enters."
    ]
    assert found["pending tasks"] == ["update CHANGELOG.md"]
    assert found["all user messages"][1] == "Also keep the docs in sync."
    assert len(found["all user messages"]) == 2
    assert found["optional next step"] == ["Next I'll update CHANGELOG.md with the fix."]
    assert "filelock==3.13.1" in found["key technical concepts"]
    assert "3.13.1" not in found["key technical concepts"]  # the pin already says it
    assert found["progress so far"][:3] == [
        "reproduce the race",
        "add a lock",
        "pytest tests/test_cache.py -q",
    ]
    assert found["current work"][-1].startswith("Progress:")
    assert found["weather report"] == []
    assert "## Weather report\n" + EMPTY in out
    assert_verbatim(out, full_text(region()))
    assert isinstance(ExtractiveSummarizer(), Summarizer)


def test_text_protocol_observations_are_not_user_messages() -> None:
    msgs = [
        Message(role="user", content="Fix the parser bug please."),
        Message(role="assistant", content="Looking.\n```\nopen src/parse.py\n```"),
        Message(
            role="user",
            content="[File: src/parse.py]\nValueError: boom\n(Open file: src/parse.py)",
        ),
    ]
    found = items(summarize(region=msgs))
    assert found["all user messages"] == ["Fix the parser bug please."]
    assert found["errors and fixes"] == ["ValueError: boom"]
    assert found["files and code sections"] == ["src/parse.py (read)"]


def test_merge_with_previous_summary() -> None:
    first = summarize(region=region()[:5])
    later = [Message(role="tool", tool_call_id="z", content="KeyError: 'shard'")]
    later = [
        Message(role="assistant", content=None, tool_calls=[call("z", "bash", command="make")]),
        *later,
        Message(role="user", content="Please make the cache thread-safe.\nIt races under load."),
    ]
    merged = summarize(region=later, previous_summary=first)
    found = items(merged)
    assert found["errors and fixes"] == [
        "FAILED tests/test_cache.py::test_race - AssertionError: 3 != 4",
        "KeyError: 'shard'",
    ]
    # The repeated user message appears once; earlier items come first.
    assert found["all user messages"] == [region()[0].content]
    assert found["files and code sections"] == ["src/app/cache.py (read)"]
    assert_verbatim(merged, full_text(region()) + full_text(later))


@pytest.mark.parametrize("budget", [30, 60, 120, 250, 4000])
def test_budget_respected_oldest_dropped_first(budget: int) -> None:
    many = [
        Message(role="tool", tool_call_id=f"c{n}", content=f"RuntimeError: failure number {n}")
        for n in range(80)
    ]
    calls = [
        Message(role="assistant", tool_calls=[call(f"c{n}", "bash", command=f"run {n}")])
        for n in range(80)
    ]
    msgs = [m for pair in zip(calls, many, strict=True) for m in pair]
    out = summarize(region=msgs, sections=["Errors", "Commands"], max_tokens=budget)
    assert tokens.count(out) <= budget
    errors = items(out).get("errors", [])
    if errors:  # a contiguous newest suffix survives
        assert errors[-1] == "RuntimeError: failure number 79"
        first = int(errors[0].rsplit(" ", 1)[1])
        assert errors == [f"RuntimeError: failure number {n}" for n in range(first, 80)]
    if budget == 4000:
        assert len(errors) == 80


def test_deterministic_and_unknown_heading() -> None:
    assert summarize() == summarize()
    out = summarize(sections=["Miscellany"])
    assert out == f"## Miscellany\n{EMPTY}"
    assert kind_of("Open work") == "tasks" and kind_of("All user messages") == "user"
    assert kind_of("Miscellany") is None


def test_request_validation() -> None:
    with pytest.raises(ValidationError):
        SummaryRequest(region=[], sections=[], max_tokens=10)
    with pytest.raises(ValidationError):
        SummaryRequest(region=[], sections=["A"], max_tokens=0)
