"""Gold that holds on real logs: one-line task lists become continuation probes, and a
decision whose choice names nothing or whose rationale is cut is not asked."""

from __future__ import annotations

import json

import pytest
from conftest import call_message, result_message, split_session
from conftest import say as _say

from benchmark.probe.config import ProbeConfig
from benchmark.probe.extract import generate_probes
from benchmark.probe.models import Probe
from benchmark.probe.task_lines import inline_tasks
from benchmark.probe.text import stateable
from benchmark.probe.wording import has_content, is_cut
from benchmark.transcript.models import Message, Transcript

HEAD = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Make the date parser accept ISO week dates."},
]
TAIL = [{"role": "user", "content": "Carry on."}]


def _probes(region: list[dict], ptype: str, tail: list[dict] = TAIL) -> list[Probe]:
    """Probes of ``ptype`` about ``region`` (placed between a fixed head and ``tail``)."""
    messages = [Message.model_validate(m) for m in HEAD + region + tail]
    transcript = Transcript(id="gold", source="test", messages=messages)
    point = split_session(transcript, len(HEAD), len(region), len(tail), transcript.total_tokens)
    return generate_probes(transcript, point, ProbeConfig(types=[ptype], per_type=20))


def _edit(call_id: str, path: str, text: str) -> list[dict]:
    """An assistant message that edits ``path``, with ``text`` as its prose, and the result."""
    args = {"path": path, "old_str": "return None", "new_str": "return value"}
    return [call_message(call_id, "edit", args, text), result_message(call_id, f"Edited {path}.")]


def _pending(probes: list[Probe]) -> list[str]:
    return [f.text for p in probes for f in p.gold.facts if f.kind == "pending"]


# --- one-line task lists ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "items"),
    [
        (
            "Remaining work: update the changelog; add a test for `parse_week`.",
            ["update the changelog", "add a test for `parse_week`"],
        ),
        (
            "Next: fix the parser, add tests and update docs",
            ["fix the parser", "add tests", "update docs"],
        ),
        (
            "Next: fix the parser, add tests, and update docs.",
            ["fix the parser", "add tests", "update docs"],
        ),
        ("Still to do: bump the version in setup.cfg.", ["bump the version in setup.cfg"]),
        ("TODO: handle a None input", ["handle a None input"]),
        ("**Next steps:** run `pytest -q`; open a PR", ["run `pytest -q`", "open a PR"]),
        # ';' wins over ',': an item may hold commas then.
        (
            "Remaining: parse years, months and days; reject week 54",
            ["parse years, months and days", "reject week 54"],
        ),
        # Mid-paragraph, after an earlier sentence; the list ends with its sentence.
        (
            "The parser works now. Remaining work: a regression test; a changelog entry. "
            "Then we submit.",
            ["a regression test", "a changelog entry"],
        ),
    ],
)
def test_one_line_task_lists(line, items):
    assert inline_tasks(line) == items
    assert all(item in line for item in items)  # verbatim: citable as evidence


@pytest.mark.parametrize(
    "line",
    [
        "Next: I will run the tests.",  # "Next:" names one step, not a list
        "Next, I will open a.py, b.py and c.py.",  # no label with a colon
        "The next step is to run the tests, check the output and submit.",
        "We still need to decide: keep the cache, or drop it?",
        # Long comma-separated parts are one clause, not a list, and "Next:" needs two items.
        "Next: rewrite the loader so that it reads the file lazily, which avoids the memory "
        "spike we saw in the profile, and then measure it",
    ],
)
def test_sentences_that_are_not_task_lists(line):
    assert inline_tasks(line) == []


def test_one_line_list_gives_a_pending_probe_and_the_tail_closes_an_item():
    region = [
        *_edit("e1", "dates/parse.py", "I'll extend the regex to accept week dates."),
        _say(
            "Week dates parse now. Remaining work: add a test for week 53; update the "
            "changelog; document `parse_week` in README.md."
        ),
    ]
    tail = [_say("Plan:\n- [x] update the changelog")]
    probes = _probes(region, "continuation", tail)
    assert _pending(probes) == ["add a test for week 53", "document `parse_week` in README.md"]
    (pending,) = [p for p in probes if "still open" in p.question]
    assert all(ev.message_index == len(HEAD) + 2 for ev in pending.evidence)


def test_a_sentence_with_next_is_not_a_task_list():
    region = [_say("Next, I will run the tests, read the output and fix what fails.")]
    assert _pending(_probes(region, "continuation")) == []


# --- decisions that state nothing ------------------------------------------------------------


@pytest.mark.parametrize(
    "choice",
    [
        "make the necessary edit to the code",
        "do that",
        "proceed",
        "fix it",
        "apply the suggested fix",
        "update the function accordingly",
        "making the changes",
    ],
)
def test_choices_without_content(choice):
    assert not has_content(choice)


@pytest.mark.parametrize(
    "choice",
    [
        "add the missing colon",
        "use Redis",
        "switch to httpx",
        "exclude 'PixelRepresentation' from the required elements",
        "change line 4",
        "guard against None",
        "raise the timeout to 30",
    ],
)
def test_choices_with_content(choice):
    assert has_content(choice)


@pytest.mark.parametrize(
    ("phrase", "content", "cut"),
    [
        ("the value is parsed twice", "because the value is parsed twice. Then", False),
        ("the value is parsed twice", "because the value is parsed twice", True),  # log cut
        ("the value of", "because the value of `x` changes.", True),  # dangling preposition
        ("it is faster...", "since it is faster...", True),
        ("the cache and", "because of the cache and", True),
        ("we need to fix it", "because we need to fix it.", False),
    ],
)
def test_phrases_cut_mid_sentence(phrase, content, cut):
    assert is_cut(phrase, content) is cut


def test_a_fix_that_names_nothing_is_not_asked():
    region = [
        *_edit(
            "e1",
            "dates/parse.py",
            "The week number is off by one because the loop starts at zero. "
            "Let's make the necessary edit to the code.",
        ),
        *_edit(
            "e2",
            "dates/year.py",
            "The year is wrong because `iso_year` ignores the first week. "
            "Let's compute the year with `date.isocalendar()`.",
        ),
    ]
    questions = {p.question: p for p in _probes(region, "decision")}
    assert "What did we decide to change in `dates/parse.py`, and why?" not in questions
    year = questions["What did we decide to change in `dates/year.py`, and why?"]
    assert {(f.kind, f.text) for f in year.gold.facts} == {
        ("choice", "compute the year with `date.isocalendar()`"),
        ("rationale", "`iso_year` ignores the first week"),
    }


def test_a_rationale_cut_mid_sentence_is_not_gold():
    long_reason = "the parser " + " ".join(["reads one more field"] * 12) + " and then"
    region = [
        # The log cut this message: it ends mid-sentence, without punctuation.
        _say("We decided to use `fromisocalendar` because the manual arithmetic breaks near"),
        # Too long to keep whole: clipping it would cut it.
        _say(f"We decided to drop the regex rather than patch it, because {long_reason}."),
        _say("We decided to keep `strptime` because it already handles the locale."),
    ]
    probes = _probes(region, "decision")
    rationales = [f.text for p in probes for f in p.gold.facts if f.kind == "rationale"]
    assert rationales == ["it already handles the locale"]
    # The second decision still has its rejected alternative, so it is asked without a reason.
    assert any("drop the regex" in p.question or "patch it" in p.question for p in probes)
    assert not any("fromisocalendar" in p.question for p in probes)


# --- facts an answer can state -----------------------------------------------------------------


def _run(call_id: str, command: str, output: str) -> list[dict]:
    args = json.dumps({"command": command})
    call = {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": args}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def _outputs(probes: list[Probe]) -> list[list[str]]:
    return [[f.text for f in p.gold.facts] for p in probes if "what did running" in p.question]


def test_a_garbled_output_line_is_not_a_fact():
    """Wrongly decoded bytes cost far more tokens than characters: no answer can state them."""
    garbled = "".join(chr(0x1900 + (i * 37) % 0x2000) for i in range(150))
    assert len(garbled) < 200 and not stateable(garbled)
    assert stateable("Th3 nucl34r w1ll 4rr1v3 0n fr1d4y.")
    region = [
        *_edit("e1", "decrypt.py", "Apply the modular inverse."),
        *_run("r1", "python decrypt.py", garbled),
    ]
    assert _outputs(_probes(region, "recall")) == []
    region[-1] = {**region[-1], "content": garbled + "\nflag{readable}"}
    assert _outputs(_probes(region, "recall")) == [["flag{readable}"]]
