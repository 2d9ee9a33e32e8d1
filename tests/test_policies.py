"""The LLM-free compaction policies on small hand-built sessions and on real SWE-agent runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import compose_config
from conftest import tool_call as call
from hydra.utils import instantiate
from omegaconf import OmegaConf

from benchmark.policy import (
    AnchorIndex,
    NoCompaction,
    ObservationMask,
    Policy,
    ToolResultClearing,
    Truncate,
)
from benchmark.policy.anchor_index import HEADING
from benchmark.policy.spans import region_dropped, splice
from benchmark.run.compaction import CompactionConfig, Segments, find_points, segments
from benchmark.text import tokens
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import Message, ToolCall

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

HEAD_SENTINEL = "hsentinel4f2a"
HEAD_PATH = "/opt/head_sentinel_4f2a.py"
TAIL_SENTINEL = "tsentinel9c1b"
TAIL_PATH = "/opt/tail_sentinel_9c1b.py"
REGION_PROSE = "rsentinelprose77"  # plain prose: no identifier pattern matches it
REGION_PATH = "src/region_sentinel_77.py"  # an identifier only the region holds

NAMES = ("none", "truncate", "observation_mask", "tool_clear", "anchor_index")
CLASS_NAMES = ("NoCompaction", "Truncate", "ObservationMask", "ToolResultClearing", "AnchorIndex")


def assistant(text: str | None, *calls: ToolCall) -> Message:
    return Message(role="assistant", content=text, tool_calls=list(calls) or None)


def result(call_id: str, text: str) -> Message:
    return Message(role="tool", tool_call_id=call_id, content=text)


def session() -> Segments:
    head = [
        Message(role="system", content=f"You are a coding agent. Marker {HEAD_SENTINEL}."),
        Message(
            role="user",
            content=f"Fix the failing cache test; the entry point is {HEAD_PATH}. {HEAD_SENTINEL}",
        ),
    ]
    source = "\n".join(f"{n}: line {n} of the cache module" for n in range(1, 41))
    region = [
        assistant("Read the cache module.", call("c1", "read_file", path="src/app/cache.py")),
        result("c1", f"{source}\n# helper lives in {REGION_PATH}"),
        assistant("Run the tests.", call("c2", "bash", command="pytest tests/test_cache.py -x")),
        result(
            "c2",
            "collected 3 items\n"
            "FAILED tests/test_cache.py::test_get - AssertionError: assert 1 == 2\n"
            "ModuleNotFoundError: No module named 'redis'",
        ),
        assistant(
            f"We should pin redis==5.0.1 as in issue #412 (commit 3f9a2c1d, thanks @alice-dev); "
            f"see https://github.com/acme/widgets/pull/57. {REGION_PROSE}",
            call("c3", "write_file", path="src/app/pool.py", content="import redis\nPOOL = {}\n"),
        ),
        result("c3", "File written."),
        assistant(None, call("c4", "edit_file", file_path="src/app/cache.py", old="a", new="b")),
        result("c4", "Edited."),
        assistant(
            "Check notes and the lock file together.",
            call("c5", "Read", file_path="docs/notes.txt"),
            call("c6", "bash", command="git checkout -b fix/redis-pool && cat poetry.lock"),
        ),
        result("c5", "notes: redis pooling is flaky under load\n" * 3),
        result("c6", "Switched to a new branch 'fix/redis-pool'\nredis 5.0.1"),
        Message(role="user", content="Please also keep the changelog current."),
    ]
    tail = [
        assistant(f"Rerun the tests. {TAIL_SENTINEL}", call("c7", "bash", command="pytest -q")),
        result("c7", "3 passed"),
        assistant(f"All tests pass; {TAIL_PATH} untouched. {TAIL_SENTINEL}"),
    ]
    return Segments(head=head, region=region, tail=tail, region_offset=len(head))


def policies() -> list[Policy]:
    return [
        NoCompaction(),
        Truncate(),
        Truncate(recent_tokens=0),
        Truncate(recent_tokens=300),
        ObservationMask(),
        ObservationMask(keep_last=0),
        ObservationMask(keep_last=2),
        ToolResultClearing(),
        ToolResultClearing(trigger_tokens=0, keep_last=1, clear_tool_inputs=True),
        ToolResultClearing(trigger_tokens=0, keep_last=0, exclude_tools=["bash"]),
        AnchorIndex(),
        AnchorIndex(max_tokens=64, max_per_kind=1),
    ]


def text(messages: list[Message]) -> str:
    return "\n".join(m.render() for m in messages)


def unanswered(messages: list[Message]) -> set[str]:
    """Calls without a later result; asserts that every result has an earlier call."""
    calls: set[str] = set()
    answered: set[str] = set()
    for m in messages:
        assert isinstance(m, Message)
        if m.role == "tool":
            assert m.tool_call_id in calls, f"orphan tool result {m.tool_call_id}"
            answered.add(m.tool_call_id)
        calls.update(c.id for c in m.tool_calls or [])
    return calls - answered


def assert_valid(messages: list[Message], pending: set[str] = frozenset()) -> None:
    """No orphan result, and no call without a result except ``pending`` ones of the input
    (a compaction point can fall just after a call, before its result arrives)."""
    assert unanswered(messages) <= pending, f"calls without results: {unanswered(messages)}"


def derived(out: list[Message], seg: Segments) -> list[Message]:
    """Output messages that are not verbatim head or tail messages."""
    protected = [*seg.head, *seg.tail]
    return [m for m in out if not any(m == p for p in protected)]


@pytest.mark.parametrize("policy", policies(), ids=repr)
def test_output_is_valid_deterministic_and_input_untouched(policy: Policy) -> None:
    seg = session()
    before = seg.model_dump()
    out = policy.compact(seg)
    assert_valid(out)
    assert seg.model_dump() == before
    again = type(policy)(**_kwargs(policy)).compact(session())
    assert [m.model_dump() for m in out] == [m.model_dump() for m in again]
    # Token counts of rewritten messages describe their new text, not the original's.
    assert all(m.tokens == tokens.count(m.render()) + tokens.MESSAGE_OVERHEAD for m in out)


def _kwargs(policy: Policy) -> dict:
    return {k: v for k, v in vars(policy).items()}


@pytest.mark.parametrize("policy", policies(), ids=repr)
def test_region_scoping_sentinels(policy: Policy) -> None:
    seg = session()
    out = policy.compact(seg)
    for m in derived(out, seg):
        body = m.render()
        for sentinel in (HEAD_SENTINEL, HEAD_PATH, TAIL_SENTINEL, TAIL_PATH):
            assert sentinel not in body, f"{sentinel} leaked into {body[:80]!r}"
    assert out[: len(seg.head)] == seg.head
    everything = text(out)
    if isinstance(policy, AnchorIndex):
        assert REGION_PROSE not in everything  # dropped with its message
        if policy.max_tokens >= 1000:
            assert REGION_PATH in everything  # kept exactly, in the index
        assert out[-len(seg.tail) :] == seg.tail
    elif isinstance(policy, NoCompaction):
        assert REGION_PROSE in everything and REGION_PATH in everything
    elif isinstance(policy, Truncate):
        fits = policy.recent_tokens >= sum(m.tokens for m in seg.messages[6:])
        assert (REGION_PROSE in everything) == fits
        assert (REGION_PATH in everything) == (fits and seg.region[1] in out)
    else:  # masking/clearing: the oldest tool output (holding the path) goes, prose stays
        results = sum(m.role == "tool" for m in seg.messages)
        masked = policy.keep_last < results
        if isinstance(policy, ToolResultClearing):
            excluded = "read_file" in policy.exclude_tools
            masked = masked and policy.trigger_tokens == 0 and not excluded
        assert (REGION_PATH in everything) != masked
        assert REGION_PROSE in everything


@pytest.mark.parametrize("policy", policies(), ids=repr)
def test_blinding_no_policy_name_in_output(policy: Policy) -> None:
    seg = session()
    pattern = re.compile(
        "|".join([r"\bnone\b", *(re.escape(n) for n in NAMES[1:] + CLASS_NAMES)]), re.I
    )
    assert not pattern.search(text(seg.messages))  # the check is meaningful
    assert not pattern.search(text(policy.compact(seg)))


def test_region_dropped_keeps_spans_crossing_the_region_edges() -> None:
    head = [Message(role="user", content="go"), assistant(None, call("h1", "read"))]
    region = [result("h1", "head's result"), Message(role="user", content="next")]
    region += [assistant("Running.", call("t1", "run"))]
    tail = [result("t1", "tail's result")]
    seg = Segments(head=head, region=region, tail=tail, region_offset=len(head))
    dropped = region_dropped(seg)
    assert dropped == [3]  # the head's result and the call answered in the tail stay
    stand_in = Message(role="user", content="(summary)")
    assert splice(seg.messages, dropped, [stand_in]) == [
        *head,
        region[0],
        stand_in,
        *region[2:],
        *tail,
    ]


def test_none_is_identity() -> None:
    seg = session()
    assert NoCompaction().compact(seg) == seg.messages


@pytest.mark.parametrize("budget", [0, 40, 120, 300, 700, 10**6])
def test_truncate_fits_budget_and_keeps_head(budget: int) -> None:
    seg = session()
    out = Truncate(recent_tokens=budget).compact(seg)
    head, kept = out[: len(seg.head)], out[len(seg.head) :]
    assert head == seg.head
    assert sum(m.tokens for m in kept) <= budget
    assert kept == seg.messages[len(seg.messages) - len(kept) :]  # a contiguous newest suffix
    assert_valid(out)
    if budget == 10**6:
        assert out == seg.messages
    if budget == 0:
        assert out == seg.head


def test_truncate_never_splits_parallel_results() -> None:
    seg = session()
    parallel = seg.messages.index(seg.region[8])  # two calls, two results
    cost = sum(m.tokens for m in seg.messages[parallel + 2 :])  # without the call's message
    out = Truncate(recent_tokens=cost).compact(seg)
    assert_valid(out)
    assert seg.region[9] not in out and seg.region[10] not in out


def test_observation_mask_keeps_exactly_last_results() -> None:
    seg = session()
    out = ObservationMask(keep_last=2).compact(seg)
    pairs = list(zip(seg.messages, out, strict=True))
    results = [(a, b) for a, b in pairs if a.role == "tool"]
    for a, b in results[-2:]:
        assert a == b
    for a, b in results[:-2]:
        lines = len(a.content.splitlines())
        assert b.tool_call_id == a.tool_call_id and b.role == "tool"
        unit = "line" if lines == 1 else "lines"
        assert b.content == f"[earlier tool output omitted: {lines} {unit}]"
    assert all(a == b for a, b in pairs if a.role != "tool")
    assert "omitted: 41 lines" in out[3].content
    assert ObservationMask(keep_last=100).compact(seg) == seg.messages
    masked_all = ObservationMask(keep_last=0).compact(seg)
    assert all("omitted" in m.content for m in masked_all if m.role == "tool")
    # A second compaction leaves earlier notes as they are.
    again = Segments(head=seg.head, region=out[2:-3], tail=out[-3:], region_offset=2)
    assert ObservationMask(keep_last=2).compact(again) == out


def test_tool_clear_below_trigger_changes_nothing() -> None:
    seg = session()
    total = sum(m.tokens for m in seg.messages)
    assert ToolResultClearing(trigger_tokens=total, keep_last=0).compact(seg) == seg.messages
    assert ToolResultClearing().compact(seg) == seg.messages  # 100K default trigger
    assert ToolResultClearing(trigger_tokens=total - 1, keep_last=0).compact(seg) != seg.messages


def _cleared(out: list[Message]) -> list[str]:
    return [m.tool_call_id for m in out if m.role == "tool" and "omitted" in (m.content or "")]


def test_tool_clear_keep_last_exclude_and_inputs() -> None:
    seg = session()
    out = ToolResultClearing(trigger_tokens=0, keep_last=3).compact(seg)
    assert _cleared(out) == ["c1", "c2", "c3", "c4"]
    kept = [m for m in seg.messages if m.role == "tool"][-3:]
    assert [m for m in out if m.role == "tool"][-3:] == kept
    assert [c.function.arguments for m in out for c in m.tool_calls or []] == [
        c.function.arguments for m in seg.messages for c in m.tool_calls or []
    ]

    excluded = ToolResultClearing(trigger_tokens=0, keep_last=0, exclude_tools=["bash", "Read"])
    assert _cleared(excluded.compact(seg)) == ["c1", "c3", "c4"]

    inputs = ToolResultClearing(trigger_tokens=0, keep_last=3, clear_tool_inputs=True).compact(seg)
    args = {c.id: c.function.arguments for m in inputs for c in m.tool_calls or []}
    assert all(args[i] == "{}" for i in ("c1", "c2", "c3", "c4"))
    originals = {c.id: c.function.arguments for m in seg.messages for c in m.tool_calls or []}
    assert all(args[i] == originals[i] != "{}" for i in ("c5", "c6", "c7"))
    assert_valid(inputs)


def test_tool_clear_at_least() -> None:
    seg = session()
    out = ToolResultClearing(trigger_tokens=0, keep_last=3).compact(seg)
    freed = sum(m.tokens for m in seg.messages) - sum(m.tokens for m in out)
    assert freed > 0
    at = ToolResultClearing(trigger_tokens=0, keep_last=3, clear_at_least=freed)
    assert at.compact(seg) == out
    above = ToolResultClearing(trigger_tokens=0, keep_last=3, clear_at_least=freed + 1)
    assert above.compact(seg) == seg.messages


def _index(out: list[Message]) -> Message:
    found = [m for m in out if m.content and m.content.startswith(HEADING)]
    assert len(found) == 1
    return found[0]


def test_anchor_index_finds_planted_identifiers_exactly() -> None:
    seg = session()
    out = AnchorIndex().compact(seg)
    assert out == [*seg.head, _index(out), *seg.tail]
    index = _index(out).content
    lines = set(index.splitlines())
    for expected in (
        "- src/app/pool.py (created)",
        "- src/app/cache.py (modified, read)",
        "- docs/notes.txt (read)",
        f"- {REGION_PATH}",
        "- tests/test_cache.py",
        "- FAILED tests/test_cache.py::test_get - AssertionError: assert 1 == 2",
        "- ModuleNotFoundError: No module named 'redis'",
        "- redis==5.0.1",
        "- 3f9a2c1d",
        "- issue #412",
        "- fix/redis-pool",
        "- @alice-dev",
        "- https://github.com/acme/widgets/pull/57",
    ):
        assert expected in lines, expected
    assert "- 5.0.1" not in lines  # the version of a listed pin is not repeated
    # Every entry is verbatim region text.
    region = text(seg.region)
    for line in lines:
        if line.startswith("- "):
            assert re.sub(r" \((?:created|modified|read)(?:, \w+)*\)$", "", line[2:]) in region


def test_anchor_index_respects_budgets() -> None:
    paths = [f"pkg/module_{n:03d}/file_{n:03d}.py" for n in range(300)]
    region = [
        assistant(None, call("w1", "write_file", path="pkg/important_new.py", content="x = 1")),
        result("w1", "ok"),
        Message(role="user", content="Seen: " + " ".join(paths)),
        Message(role="user", content="\n".join(f"ValueError: bad value {n}" for n in range(60))),
    ]
    seg = Segments(head=[], region=region, tail=[], region_offset=0)
    for max_tokens, max_per_kind in [(4000, 40), (300, 40), (120, 5), (64, 1)]:
        index = AnchorIndex(max_tokens=max_tokens, max_per_kind=max_per_kind).compact(seg)
        assert len(index) == 1
        content = index[0].content
        assert tokens.count(content) <= max_tokens and index[0].tokens <= max_tokens
        sections = content.split("\n\n")[1:]
        assert all(len(s.splitlines()) - 1 <= max_per_kind for s in sections)
        if max_tokens >= 120:  # the created file outranks files only mentioned
            assert "- pkg/important_new.py (created)" in content
            assert "Error lines:" in content  # no kind is crowded out by another
    big = AnchorIndex(max_tokens=4000, max_per_kind=40).compact(seg)[0].content
    assert big.count("\n- pkg/") == 40


def test_calls_that_straddle_the_region_keep_their_results() -> None:
    seg = session()
    shifted = Segments(
        head=[*seg.head, seg.region[0]], region=seg.region[1:], tail=seg.tail, region_offset=3
    )
    out = AnchorIndex().compact(shifted)
    assert_valid(out)
    assert out[3] == seg.region[1]  # the head's call keeps its result
    assert Truncate(recent_tokens=0).compact(shifted) == [*shifted.head, seg.region[1]]
    for policy in policies():
        assert_valid(policy.compact(shifted))
    assert "src/app/cache.py" in _index(out).content  # still named by the edit call
    empty = Segments(head=seg.head, region=[], tail=seg.tail, region_offset=2)
    assert AnchorIndex().compact(empty) == empty.messages


@pytest.mark.parametrize(
    ("cls", "kwargs", "name"),
    [
        (Truncate, {"recent_tokens": -1}, "recent_tokens"),
        (Truncate, {"recent_tokens": "many"}, "recent_tokens"),
        (ObservationMask, {"keep_last": -1}, "keep_last"),
        (ObservationMask, {"keep_last": 2.5}, "keep_last"),
        (ToolResultClearing, {"trigger_tokens": -5}, "trigger_tokens"),
        (ToolResultClearing, {"keep_last": True}, "keep_last"),
        (ToolResultClearing, {"clear_at_least": -1}, "clear_at_least"),
        (ToolResultClearing, {"exclude_tools": "bash"}, "exclude_tools"),
        (ToolResultClearing, {"exclude_tools": [3]}, "exclude_tools"),
        (ToolResultClearing, {"clear_tool_inputs": "yes"}, "clear_tool_inputs"),
        (AnchorIndex, {"max_tokens": 10}, "max_tokens"),
        (AnchorIndex, {"max_per_kind": 0}, "max_per_kind"),
    ],
)
def test_bad_parameters_name_themselves(cls: type, kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_hydra_configs_instantiate_and_run(name: str) -> None:
    cfg = OmegaConf.to_container(compose_config([f"policy={name}"]).policy, resolve=True)
    assert cfg.pop("name") == name
    policy = instantiate(cfg)
    assert isinstance(policy, Policy)
    out = policy.compact(session())
    assert_valid(out)


def test_policies_on_a_real_swe_agent_session() -> None:
    traj = DATA / "swe-agent" / "pydicom__pydicom-1458.traj"
    if not traj.is_file():
        pytest.skip("../shared/data/swe-agent is not present beside the repository")
    transcript = import_file(traj).transcript
    config = CompactionConfig(context_window=10_000, head_messages=3, tail_tokens=1500)
    points = find_points(transcript, config)
    assert len(points) >= 2
    for point in points:
        seg = segments(transcript, point)
        pending = unanswered(seg.messages)
        for policy in policies():
            out = policy.compact(seg)
            assert_valid(out, pending)
            assert out[: len(seg.head)] == seg.head
            assert out == policy.compact(seg)
        truncated = Truncate(recent_tokens=1500).compact(seg)
        assert sum(m.tokens for m in truncated[len(seg.head) :]) <= 1500
        index = _index(AnchorIndex(max_tokens=400).compact(seg))
        assert index.tokens <= 400
    index = _index(AnchorIndex().compact(segments(transcript, points[-1]))).content
    assert "- reproduce_bug.py (created, modified)" in index.splitlines()
    assert "- pydicom/pixel_data_handlers/numpy_handler.py (modified, read)" in index.splitlines()
    assert "AttributeError: Unable to convert the pixel data" in index
