"""The offline extractive answerer: retrieval quality, budget, blindness, speed."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from benchmark.answerer import Answer, AnswerRequest, ExtractiveAnswerer
from benchmark.text import tokens
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import FunctionCall, Message, ToolCall

CONF = Path(__file__).resolve().parents[1] / "conf"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str) -> Message:
    return Message(role="assistant", content=text)


def tool(text: str, call_id: str = "c1") -> Message:
    return Message(role="tool", content=text, tool_call_id=call_id)


def call(call_id: str, name: str, **args: str) -> Message:
    return Message(
        role="assistant",
        tool_calls=[
            ToolCall(id=call_id, function=FunctionCall(name=name, arguments=json.dumps(args)))
        ],
    )


def ask(question: str, context: list[Message], **kwargs: object) -> str:
    return (
        ExtractiveAnswerer(**kwargs).answer(AnswerRequest(question=question, context=context)).text
    )


FILLER = [
    assistant("Let me look at the repository layout first."),
    tool("README.md\nsetup.cfg\nsrc/\ntests/"),
    assistant("The tests directory has unit tests for the router and the views."),
    tool("collected 42 items\n42 passed in 1.21s"),
]


def test_picks_the_cued_path_over_a_near_namesake() -> None:
    context = [
        *FILLER,
        assistant("I opened src/app/db_utils.py to read the retry helpers."),
        assistant("I created src/app/db.py with the connection pool."),
        *FILLER,
    ]
    text = ask("Which file did we create for the connection pool?", context)
    first = text.splitlines()[0]
    assert "src/app/db.py" in first and "db_utils" not in first


def test_picks_the_pinned_version_over_the_released_one() -> None:
    context = [
        *FILLER,
        tool("httpx 0.28.0 was released upstream last week."),
        assistant("We pinned httpx==0.27.2 in requirements.txt because 0.28 broke proxies."),
        *FILLER,
    ]
    text = ask("Which version of httpx did we pin?", context)
    assert text.splitlines()[0].startswith("We pinned httpx==0.27.2")


def test_exact_command_question_finds_the_error_line() -> None:
    context = [
        *FILLER,
        assistant("Running `pytest tests/test_cache.py -q` now."),
        tool(
            "F.\nE   KeyError: 'session_id'\nFAILED tests/test_cache.py::test_expiry - "
            "KeyError: 'session_id'\n1 failed, 1 passed",
        ),
        tool("pytest tests/test_views.py -q\n3 passed"),
    ]
    text = ask("What exact error did `pytest tests/test_cache.py -q` fail with?", context)
    assert "KeyError: 'session_id'" in text


def test_list_question_gathers_scattered_lines_and_index_lines() -> None:
    noise = [tool(f"log line {i}: request served in {i} ms by worker {i % 4}") for i in range(300)]
    context = [
        assistant("Created file src/app/cache.py with the LRU cache."),
        *noise[:100],
        assistant("Modified src/app/views.py: read the session from the cache."),
        *noise[100:200],
        assistant("Created file tests/test_cache.py covering expiry."),
        *noise[200:],
        assistant("Files created:\n- src/app/limits.py\n- src/app/metrics.py\n\nDone."),
        assistant("created: a.py, b.py"),
    ]
    text = ask(
        "Which files did we create and which existing files did we modify in this part of "
        "the session? What changed in each?",
        context,
    )
    for path in (
        "src/app/cache.py",
        "src/app/views.py",
        "tests/test_cache.py",
        "src/app/limits.py",
        "src/app/metrics.py",
        "a.py, b.py",
    ):
        assert path in text
    assert "log line" not in text


def test_pending_tasks_under_a_heading() -> None:
    context = [
        *FILLER,
        assistant(
            "## Pending tasks\n- add a retry to the uploader\n- document the cache flags\n\n"
            "## Done\n- fixed the router"
        ),
        *FILLER,
    ]
    text = ask("Which tasks are still pending?", context)
    assert "- add a retry to the uploader" in text
    assert "- document the cache flags" in text


def test_errors_link_to_the_command_that_raised_them() -> None:
    context = [
        *FILLER,
        call("a1", "bash", command="python scripts/migrate.py"),
        tool("Traceback (most recent call last):\nAttributeError: 'Row' has no 'slug'", "a1"),
        call("a2", "bash", command="make lint"),
        tool("All checks passed!", "a2"),
        *FILLER,
    ]
    text = ask("Which command failed with an `AttributeError`?", context)
    assert "python scripts/migrate.py" in text.splitlines()[0]
    text = ask("What exact error did `python scripts/migrate.py` fail with?", context)
    assert "AttributeError: 'Row' has no 'slug'" in text.splitlines()[:2]


def test_an_edit_is_found_by_the_path_it_changed() -> None:
    grep_hits = "\n".join(f"src/app/db.py:{n}: pool = make_pool({n})" for n in range(40))
    context = [
        call("g1", "grep", pattern="make_pool", path="src"),
        tool(grep_hits, "g1"),
        call("e1", "edit_file", path="src/app/db.py", old_str="size=5", new_str="size=MAX_POOL"),
        tool("Edited src/app/db.py: replaced 1 line with 1 line", "e1"),
        *FILLER,
    ]
    text = ask("What did we change in `src/app/db.py`?", context)
    assert "MAX_POOL" in text
    # Lines that differ only in their numbers show once.
    assert sum("make_pool(" in line for line in text.splitlines()) == 1


def test_a_later_task_box_supersedes_an_earlier_one() -> None:
    context = [
        assistant("Task list:\n- [ ] add the retry\n- [ ] document the cache flags"),
        *FILLER,
        assistant("Progress:\n- [x] add the retry"),
    ]
    text = ask("Which tasks from our checklist were still open (not done yet)?", context)
    lines = text.splitlines()
    assert "- [ ] document the cache flags" in lines
    assert "- [ ] add the retry" not in lines


def test_respects_the_token_budget() -> None:
    context = [assistant(f"the session cache stores entry {i} for user {i}") for i in range(500)]
    for budget in (5, 40, 400):
        text = ask("What does the session cache store?", context, max_answer_tokens=budget)
        assert 0 < tokens.count(text) <= budget


def test_long_lines_are_cut_into_bounded_passages() -> None:
    long_line = " ".join(f"word{i}" for i in range(2000)) + " the cache key is sess-42"
    text = ask("What is the cache key?", [tool(long_line)], passage_max_tokens=50)
    assert "sess-42" in text
    assert tokens.count(text.splitlines()[0]) <= 50
    assert text.splitlines()[0] in long_line


def test_empty_answer_when_nothing_matches() -> None:
    answer = ExtractiveAnswerer().answer(
        AnswerRequest(question="Which version of numpy did we pin?", context=FILLER)
    )
    assert answer == Answer(text="", failed=False)
    empty = ExtractiveAnswerer().answer(AnswerRequest(question="What did we do?", context=[]))
    assert empty.text == "" and not empty.failed


def test_answers_are_verbatim_context_and_deterministic() -> None:
    context = [
        *FILLER,
        assistant("We decided to keep the session cache in Redis because memcached lacks TTLs."),
        Message(
            role="assistant",
            content=None,
            tool_calls=[
                ToolCall(
                    id="c9",
                    function=FunctionCall(name="bash", arguments='{"cmd": "redis-cli ping"}'),
                )
            ],
        ),
        tool("PONG", call_id="c9"),
    ]
    question = "What did we decide about the session cache, and why?"
    texts = {ask(question, list(context)) for _ in range(3)}
    assert len(texts) == 1
    text = texts.pop()
    rendered = "\n".join(m.render() for m in context)
    assert all(line in rendered for line in text.splitlines())
    assert text.startswith("We decided to keep the session cache in Redis")


def test_sentinel_outside_the_context_never_leaks() -> None:
    sentinel = "SENTINEL-7f3a-region-only"
    transcript = [
        user("Fix the flaky cache test."),
        assistant(f"The cache key format is {sentinel} for the session cache."),
        *FILLER,
        assistant("The cache key format is user:{id} for the session cache."),
    ]
    context = [transcript[0], *transcript[2:]]
    answerer = ExtractiveAnswerer()
    # The full transcript is seen first, so a cache keyed wrongly would leak it.
    assert (
        sentinel
        in answerer.answer(
            AnswerRequest(question="What is the cache key format?", context=transcript)
        ).text
    )
    for question in ("What is the cache key format?", f"What does {sentinel} mean?"):
        text = answerer.answer(AnswerRequest(question=question, context=context)).text
        assert sentinel not in text
    # The public API takes only the request: no transcript, probe or gold argument.
    params = list(inspect.signature(ExtractiveAnswerer.answer).parameters)
    assert params == ["self", "request"]
    # ...and the request holds the question, the context and the reply's form, nothing else.
    assert set(AnswerRequest.model_fields) == {"question", "context", "form"}


def test_memoized_index_follows_context_content() -> None:
    answerer = ExtractiveAnswerer()
    a = [assistant("the port is 8080")]
    b = [assistant("the port is 9090")]
    q = "What is the port?"
    assert answerer.answer(AnswerRequest(question=q, context=a)).text == "the port is 8080"
    assert answerer.answer(AnswerRequest(question=q, context=b)).text == "the port is 9090"
    assert answerer.answer(AnswerRequest(question=q, context=a)).text == "the port is 8080"


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_answer_tokens": 0}, "max_answer_tokens"),
        ({"max_answer_tokens": 1.5}, "max_answer_tokens"),
        ({"passage_max_tokens": -1}, "passage_max_tokens"),
        ({"k1": -0.1}, "k1"),
        ({"b": 2}, "b"),
        ({"min_score_ratio": 1.0}, "min_score_ratio"),
    ],
)
def test_invalid_parameters_are_named(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ExtractiveAnswerer(**kwargs)


def test_yaml_config_instantiates() -> None:
    cfg = OmegaConf.to_container(OmegaConf.load(CONF / "answerer" / "extractive.yaml"))
    assert cfg.pop("name") == "extractive"
    answerer = instantiate(cfg)
    assert isinstance(answerer, ExtractiveAnswerer)
    assert answerer.max_answer_tokens == 400


def test_large_context_many_questions_find_their_steps() -> None:
    lines = [
        f"step {i}: edited src/mod{i % 97}/file{i}.py and ran pytest tests/test_{i % 13}.py "
        f"-> {i % 5} failures, cache hit ratio {i % 100}%"
        for i in range(6000)
    ]
    context = [tool("\n".join(lines[j : j + 20]), call_id=f"c{j}") for j in range(0, 6000, 20)]
    total = sum(m.tokens for m in context)
    assert total > 150_000
    answerer = ExtractiveAnswerer()  # speed: benchmarks/stage_times.py, not a timed test
    answers = [
        answerer.answer(
            AnswerRequest(
                question=f"Which files did step {n} edit and what failed?", context=context
            )
        ).text
        for n in range(100, 4100, 100)
    ]
    steps = range(100, 4100, 100)
    assert all(a.startswith(f"step {n}: ") for a, n in zip(answers, steps, strict=True))


def test_real_swe_agent_trajectory() -> None:
    paths = sorted(SHARED_DATA.glob("swe-agent/*.traj")) if SHARED_DATA.is_dir() else []
    if not paths:
        pytest.skip("../shared/data/swe-agent is not present beside the repository")
    context = import_file(paths[0]).transcript.messages
    rendered = "\n".join(m.render() for m in context)
    text = ask("Which files did we open or edit?", context)
    assert text
    assert all(grounded(line, rendered) for line in text.splitlines())
    assert tokens.count(text) <= 400
    assert "missing_colon.py" in text  # the file the session opened and edited


def grounded(line: str, rendered: str) -> bool:
    """A context line verbatim, or a labelled list ("Modified: `a`, `b`") of context values."""
    label = re.match(r"^(?:Created|Modified|Read|Changing): (.+)$", line)
    if label is None:
        return line in rendered
    values = re.findall(r"`([^`]+)`", label.group(1))
    return bool(values) and all(v in rendered for v in values)


# Answer-type aware lines (benchmark/answerer/answer_kinds.py).
SESSION = [
    user("Fix the slug bug."),
    call("c1", "read_file", path="src/app/views.py"),
    tool("def index():\n    return render()", "c1"),
    assistant(
        "The slug is built twice. We should build it in one helper because the views disagree."
    ),
    call(
        "c2",
        "write_file",
        path="src/app/slug.py",
        content="def slugify(text):\n    return text.lower()",
    ),
    tool("wrote src/app/slug.py", "c2"),
    call("c3", "edit_file", path="src/app/views.py", old_str="x = 1", new_str="SLUG_MAX = 80"),
    tool("edited", "c3"),
    call("c4", "bash", command="python -m pytest tests/test_slug.py"),
    tool("1 passed in 0.02s", "c4"),
    assistant("Next, let's update the changelog with the new helper."),
]


def test_a_files_question_gathers_the_paths_of_file_operations() -> None:
    text = ask("Which files did we create, modify or read?", SESSION)
    lines = text.splitlines()
    assert lines[0] == "Created: `src/app/slug.py`"
    assert lines[1] == "Modified: `src/app/views.py`"  # read first, then edited: modified
    read_only = ask("Which files did we only read, without changing them?", SESSION)
    assert "src/app/views.py" not in read_only.splitlines()[0]


def test_a_change_question_gathers_what_was_written_to_that_file() -> None:
    text = ask("What did we put in the new file `src/app/slug.py`?", SESSION)
    assert text.splitlines()[:2] == ["def slugify(text):", "return text.lower()"]
    assert "SLUG_MAX = 80" in ask("What did we change in `src/app/views.py`?", SESSION)
    # A file no call wrote to gathers nothing: retrieval answers alone.
    assert "def slugify" not in ask("What did we change in `README.md`?", SESSION)


def test_a_why_question_about_a_change_gathers_what_the_agent_said_there() -> None:
    text = ask("What did we decide to change in `src/app/slug.py`, and why?", SESSION)
    assert text.splitlines()[0].startswith("The slug is built twice.")


def test_an_output_question_gathers_the_commands_result() -> None:
    text = ask(
        "After we changed `src/app/views.py`, what did running "
        "`python -m pytest tests/test_slug.py` print?",
        SESSION,
    )
    assert text.splitlines()[0] == "1 passed in 0.02s"


def test_an_output_question_leads_with_the_latest_run_without_the_prompt_chrome() -> None:
    """A script rerun after each fix printed something else each time: the latest run is
    what it printed after the changes; the environment's status lines are not output."""
    chrome = "\n(Open file: /repo/decrypt.py)\n(Current directory: /repo)\nbash-$"
    runs = [
        "TypeError: integer argument expected, got float",
        "ValueError: chr() arg not in range(0x110000)",
        "HTB{readable_flag}",
    ]
    context = [user("Decrypt msg.enc.")]
    context += [call("e1", "edit", path="decrypt.py", search="a", replace="b"), tool("ok", "e1")]
    for n, printed in enumerate(runs):
        context += [
            call(f"r{n}", "bash", command="python decrypt.py"),
            tool(printed + chrome, f"r{n}"),
        ]
    text = ask(
        "After we changed `decrypt.py`, what did running `python decrypt.py` print?", context
    )
    lines = text.splitlines()
    assert lines[:3] == runs[::-1]
    assert not any(
        line.startswith(("(Open file", "(Current directory", "bash-$")) for line in lines[:3]
    )


def test_a_next_step_question_gathers_the_latest_file_and_intention() -> None:
    text = ask(
        "Which file were we in the middle of changing, and what were we about to do next?", SESSION
    )
    lines = text.splitlines()
    assert lines[0] == "Changing: `src/app/views.py`"
    assert "Next, let's update the changelog with the new helper." in lines


def test_task_questions_gather_open_or_done_plan_items() -> None:
    plan = [
        call("p1", "TodoWrite", todos=[]),  # replaced below with a real list
    ]
    todos = [
        {"content": "Write the slug helper", "status": "completed"},
        {"content": "Update the changelog", "status": "pending"},
    ]
    plan = [
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(
                    id="p1",
                    function=FunctionCall(name="TodoWrite", arguments=json.dumps({"todos": todos})),
                )
            ],
        ),
        tool("ok", "p1"),
        assistant("- [x] add tests\n- [ ] bump the version"),
    ]
    open_text = ask("Which tasks from our plan were still open (not done yet)?", plan)
    assert open_text.splitlines()[:2] == ["Update the changelog", "- [ ] bump the version"]
    done_text = ask("Which items of our task checklist had we already completed?", plan)
    assert done_text.splitlines()[:2] == ["Write the slug helper", "- [x] add tests"]


def test_gathered_lines_are_not_repeated_by_retrieval() -> None:
    text = ask("What did we put in the new file `src/app/slug.py`?", SESSION)
    lines = text.splitlines()
    assert len(lines) == len(set(lines))


def test_one_answerer_asked_many_questions_of_a_context_answers_as_fresh_ones_do() -> None:
    # The reading and index of a context are shared by all its questions (a point's probes).
    questions = [
        "Which files did we create, modify or read?",
        "What did we change in `src/app/views.py`?",
        "What were we about to do next?",
        "What did running `python -m pytest tests/test_slug.py` print?",
        "Why is the slug built twice?",
    ]
    shared = ExtractiveAnswerer()
    for question in questions * 2:
        answer = shared.answer(AnswerRequest(question=question, context=list(SESSION))).text
        assert answer == ask(question, list(SESSION))
