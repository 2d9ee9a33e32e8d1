"""The summarizing policies: validity, region scoping, blinding, state, tail re-split."""

from __future__ import annotations

import re

import pytest
from conftest import compose_config
from conftest import tool_call as call
from hydra.utils import instantiate
from omegaconf import OmegaConf

from benchmark.policy import AnchoredIterative, Codex, Hermes, Policy, Regenerative
from benchmark.policy.summarizing import SUMMARY_HEADING
from benchmark.run.compaction import CompactionConfig, Segments, find_points, segments
from benchmark.summarizer import ExtractiveSummarizer, SummaryRequest
from benchmark.transcript.models import Message

HEAD = "hsentinel5d1e"
TAIL = "tsentinel8b3c"
REGION = "rsentinel42aa"
NAMES = (
    "regenerative",
    "anchored_iterative",
    "codex",
    "hermes",
    "hermes_aggressive",
    "hermes_floor10k",
)
CLASSES = ("Regenerative", "AnchoredIterative", "Codex", "Hermes", "ExtractiveSummarizer")


class Spy:
    """A real summarizer behind a recorder of every request it gets."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []
        self.inner = ExtractiveSummarizer()

    def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return self.inner.summarize(request)


def session() -> Segments:
    head = [
        Message(role="system", content=f"You are a coding agent. {HEAD}"),
        Message(role="user", content=f"Fix the flaky import job. {HEAD}"),
    ]
    region = [
        Message(
            role="assistant",
            content="Reading.",
            tool_calls=[call("r1", "read_file", path="src/job.py")],
        ),
        Message(role="tool", tool_call_id="r1", content=f"def run():\n    pass  # {REGION}"),
        Message(role="user", content=f"Keep the retry count at 3. {REGION}"),
        Message(
            role="assistant",
            content="We decided to use backoff because the API rate-limits.",
            tool_calls=[call("r2", "bash", command="pytest -q tests/test_job.py")],
        ),
        Message(role="tool", tool_call_id="r2", content="E   TimeoutError: job took 31s"),
    ]
    tail = [
        Message(role="user", content=f"Status? {TAIL}"),
        Message(
            role="assistant",
            content=f"Rerunning. {TAIL}",
            tool_calls=[call("t1", "bash", command="pytest -q")],
        ),
        Message(role="tool", tool_call_id="t1", content=f"2 passed {TAIL}"),
        Message(role="assistant", content=f"All green. {TAIL}"),
    ]
    return Segments(head=head, region=region, tail=tail, region_offset=len(head))


TAIL_BUDGET = sum(m.tokens for m in session().tail)


def build(cls: type, spy: Spy | None = None, **kwargs: object) -> Policy:
    return cls(summarizer=spy or ExtractiveSummarizer(), **kwargs)


FACTORIES = [
    (Regenerative, {}),
    (Regenerative, {"summary_tokens": 64}),
    (AnchoredIterative, {}),
    (Codex, {}),
    (Codex, {"user_message_tokens": 0}),
    (Hermes, {"tail_tokens": None}),
    (Hermes, {"tail_tokens": TAIL_BUDGET}),
    (Hermes, {"tail_tokens": TAIL_BUDGET, "summary_tokens": 64, "index_tokens": 64}),
]
IDS = [f"{c.__name__}-{k}" for c, k in FACTORIES]


def assert_valid(messages: list[Message]) -> None:
    calls: set[str] = set()
    answered: set[str] = set()
    for m in messages:
        if m.role == "tool":
            assert m.tool_call_id in calls, f"orphan result {m.tool_call_id}"
            answered.add(m.tool_call_id)
        calls.update(c.id for c in m.tool_calls or [])
    assert calls == answered, f"calls without results: {calls - answered}"


def text(messages: list[Message]) -> str:
    return "\n".join(m.render() for m in messages)


@pytest.mark.parametrize(("cls", "kwargs"), FACTORIES, ids=IDS)
def test_valid_deterministic_keeps_head_and_tail(cls: type, kwargs: dict) -> None:
    seg = session()
    out = build(cls, **kwargs).compact(seg)
    assert_valid(out)
    assert out == build(cls, **kwargs).compact(session())
    assert out[: len(seg.head)] == seg.head
    assert out[-len(seg.tail) :] == seg.tail
    summaries = [m for m in out if (m.content or "").startswith(SUMMARY_HEADING)]
    assert len(summaries) == 1 and summaries[0].role == "user"
    assert len(out) < len(seg.messages)


@pytest.mark.parametrize(("cls", "kwargs"), FACTORIES, ids=IDS)
def test_region_scoping_tripwire(cls: type, kwargs: dict) -> None:
    spy = Spy()
    build(cls, spy, **kwargs).compact(session())
    assert spy.requests
    for request in spy.requests:
        body = request.model_dump_json()
        assert HEAD not in body and TAIL not in body
        assert REGION in body


@pytest.mark.parametrize(("cls", "kwargs"), FACTORIES, ids=IDS)
def test_blinding_no_policy_name_in_output(cls: type, kwargs: dict) -> None:
    pattern = re.compile("|".join(re.escape(n) for n in NAMES + CLASSES), re.I)
    seg = session()
    assert not pattern.search(text(seg.messages))
    assert not pattern.search(text(build(cls, **kwargs).compact(seg)))


@pytest.mark.parametrize(
    ("cls", "kwargs", "name"),
    [
        (Regenerative, {"summary_tokens": 10}, "summary_tokens"),
        (Regenerative, {"summary_tokens": "big"}, "summary_tokens"),
        (Regenerative, {"summarizer": object()}, "summarizer"),
        (AnchoredIterative, {"summary_tokens": 1.5}, "summary_tokens"),
        (Codex, {"user_message_tokens": -1}, "user_message_tokens"),
        (Codex, {"summary_tokens": True}, "summary_tokens"),
        (Hermes, {"tail_tokens": -3}, "tail_tokens"),
        (Hermes, {"index_tokens": 5}, "index_tokens"),
        (Hermes, {"summary_tokens": 0}, "summary_tokens"),
    ],
)
def test_bad_parameters_name_themselves(cls: type, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)


def test_regenerative_sends_no_previous_summary() -> None:
    spy = Spy()
    policy = build(Regenerative, spy)
    policy.compact(session())
    policy.compact(session())
    assert [r.previous_summary for r in spy.requests] == [None, None]
    assert spy.requests[0].sections[0] == "Primary request and intent"
    assert len(spy.requests[0].sections) == 9


def test_anchored_iterative_carries_its_summary_across_points() -> None:
    seg = session()
    first = Segments(head=seg.head, region=seg.region[:2], tail=seg.region[2:], region_offset=2)
    spy = Spy()
    policy = build(AnchoredIterative, spy)
    out1 = policy.compact(first)
    out2 = policy.compact(seg)
    assert spy.requests[0].previous_summary is None
    assert spy.requests[0].region == seg.region[:2]
    # The second call sends only the newly dropped span, with the first summary to merge into.
    assert spy.requests[1].region == seg.region[2:]
    summary1 = out1[len(seg.head)].content.removeprefix(SUMMARY_HEADING).strip()
    assert spy.requests[1].previous_summary == summary1
    merged = out2[len(seg.head)].content
    assert "- src/job.py (read)" in merged  # from the first span, carried forward
    assert "- We decided to use backoff because the API rate-limits." in merged  # new span
    assert "- Keep the retry count at 3." in merged
    # Same point again: nothing new to summarize, the stored summary is reused.
    assert policy.compact(seg) == out2 and len(spy.requests) == 2
    # Another session starts afresh.
    other = Segments(head=seg.head, region=seg.region[2:], tail=seg.tail, region_offset=2)
    policy.compact(other)
    assert spy.requests[-1].previous_summary is None
    assert spy.requests[-1].region == seg.region[2:]


def test_codex_keeps_recent_user_messages_within_budget() -> None:
    seg = session()
    out = build(Codex).compact(seg)
    user = seg.region[2]
    assert out[len(seg.head)] == user  # the region's user message, before the summary
    assert out[len(seg.head) + 1].content.startswith(SUMMARY_HEADING)
    tail_users = seg.tail[0].tokens
    tight = build(Codex, user_message_tokens=tail_users + user.tokens - 1).compact(seg)
    assert user not in tight  # the tail's user message takes the budget first
    roomy = build(Codex, user_message_tokens=tail_users + user.tokens).compact(seg)
    assert user in roomy


def test_hermes_resplits_tail_by_budget() -> None:
    seg = session()
    spy = Spy()
    last = seg.tail[-1]
    out = build(Hermes, spy, tail_tokens=last.tokens).compact(seg)
    assert out[-1] == last and seg.tail[0] not in out
    assert_valid(out)
    # Tail messages beyond the budget join what is summarized (the oldest first).
    assert spy.requests[0].region == [*seg.region, *seg.tail[:-1]]
    index = out[len(seg.head)].content
    assert "- src/job.py (read)" in index and "Exact identifiers" in index
    # A larger budget keeps region messages verbatim; calls stay with their results.
    spy = Spy()
    budget = sum(m.tokens for m in [*seg.region[2:], *seg.tail])
    out = build(Hermes, spy, tail_tokens=budget).compact(seg)
    assert out[-len(seg.tail) - 3 :] == [*seg.region[2:], *seg.tail]
    assert spy.requests[0].region == seg.region[:2]
    assert_valid(out)


def test_hermes_budget_over_everything_changes_nothing() -> None:
    seg = session()
    spy = Spy()
    assert build(Hermes, spy).compact(seg) == seg.messages  # 20K default: all fits
    assert spy.requests == []


def test_straddling_calls_keep_their_results() -> None:
    seg = session()
    shifted = Segments(
        head=[*seg.head, seg.region[0]], region=seg.region[1:], tail=seg.tail, region_offset=3
    )
    for cls, kwargs in FACTORIES:
        out = build(cls, **kwargs).compact(shifted)
        assert_valid(out)
        assert seg.region[1] in out


@pytest.mark.parametrize("name", NAMES)
def test_hydra_configs_instantiate_and_run(name: str) -> None:
    cfg = OmegaConf.to_container(compose_config([f"policy={name}"]).policy, resolve=True)
    assert cfg.pop("name") == name
    assert "summarizer" not in cfg
    policy = instantiate(cfg, summarizer=ExtractiveSummarizer())
    assert isinstance(policy, Policy)
    assert_valid(policy.compact(session()))


def test_on_a_generated_session() -> None:
    from benchmark.transcript.synthetic import generate

    t = generate(seed=1, target_tokens=60000)
    points = find_points(t, CompactionConfig(context_window=32000, tail_tokens=4000))
    assert len(points) >= 2
    policies = [build(c, **k) for c, k in FACTORIES]
    policies += [build(Hermes, tail_tokens=n) for n in (4000, 10000)]
    for point in points:
        seg = segments(t, point)
        before = sum(m.tokens for m in seg.messages)
        for policy in policies:
            out = policy.compact(seg)
            assert sum(m.tokens for m in out) < before, policy
            assert out[: len(seg.head)] == seg.head
            pending = {c.id for c in seg.messages[-1].tool_calls or []}
            calls = {c.id for m in out for c in m.tool_calls or []}
            answered = {m.tool_call_id for m in out if m.role == "tool"}
            assert answered <= calls and calls - answered <= pending
