"""The stub's local mode behaves like a llama.cpp-class server with a small model, over HTTP:
500 on json_schema, a schema grammar that ignores bounds, length stops, a window counted with
its own tokenizer, one request at a time, any model name answered but one listed."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from benchmark.judge.llm import rubric_schema
from benchmark.stub import LocalMode, OpenAIStub, scripted_reply
from benchmark.stub.__main__ import build, main, parser
from benchmark.stub.local import conforms
from benchmark.text import tokens

CRITERIA = ["accuracy_factual", "completeness_coverage", "recall_correctness"]
SCHEMA = rubric_schema(CRITERIA, 5)


@pytest.fixture
def local_stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(reply=scripted_reply, local=LocalMode(model="small-q4.gguf")) as stub:
        yield stub


def call(
    stub: OpenAIStub, body: dict[str, Any] | None = None, path: str = "/chat/completions", **kw
) -> tuple[int, dict[str, Any]]:
    """Status and JSON body of one request (a GET when ``body`` is None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        stub.base_url + path, data=data, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=kw.get("timeout", 10)) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def judge_body(answer: str, **extra: Any) -> dict[str, Any]:
    """A rubric judge request in the benchmark's shape (criteria listed outside ``data``)."""
    payload = {"criteria": CRITERIA, "data": {"answer": answer}}
    return {
        "model": "whatever-the-client-says",
        "messages": [
            {"role": "system", "content": "Score the answer; reply with criterionResults."},
            {"role": "user", "content": json.dumps(payload)},
        ],
        "temperature": 0,
        "max_tokens": 1024,
        **extra,
    }


WITH_SCHEMA = {"response_format": {"type": "json_object", "schema": SCHEMA}}


def test_models_lists_one_name_but_any_name_is_answered(local_stub):
    status, listing = call(local_stub, path="/models")
    assert status == 200 and [m["id"] for m in listing["data"]] == ["small-q4.gguf"]
    status, reply = call(local_stub, judge_body("x", model="not-what-is-listed"))
    assert status == 200 and reply["model"] == "not-what-is-listed"


def test_json_schema_is_a_500_naming_response_format(local_stub):
    fmt = {"type": "json_schema", "json_schema": {"name": "reply", "schema": SCHEMA}}
    status, reply = call(local_stub, judge_body("x", response_format=fmt))
    assert status == 500
    assert "response_format" in reply["error"]["message"]
    assert "json_schema" in reply["error"]["message"]
    assert local_stub.local_stats().json_schema_refused == 1
    assert local_stub.stats().faults == {"500": 1}


def test_json_mode_without_a_schema_gets_the_wrong_shape(local_stub):
    status, reply = call(local_stub, judge_body("x", response_format={"type": "json_object"}))
    assert status == 200
    content = json.loads(reply["choices"][0]["message"]["content"])
    assert set(content) == {"answer"} and not conforms(content, SCHEMA)
    assert local_stub.local_stats().wrong_shape == 1


def test_the_schema_grammar_keeps_the_structure_but_not_the_bounds(local_stub):
    replies = []
    for n in range(30):
        status, reply = call(local_stub, judge_body(f"answer number {n}", **WITH_SCHEMA))
        assert status == 200 and reply["choices"][0]["finish_reason"] == "stop"
        replies.append(json.loads(reply["choices"][0]["message"]["content"]))
    assert all(conforms(r, SCHEMA) for r in replies)  # every reply has the structure
    scores = [[c["score"] for c in r["criterionResults"]] for r in replies]
    assert all(sorted(c["criterionId"] for c in r["criterionResults"]) == CRITERIA for r in replies)
    broken = [s for s in scores if max(s) > 5]
    assert 0 < len(broken) < len(scores)  # some, not all, replies break the 0-5 scale
    assert all(s.count(7) == 1 for s in broken)
    assert local_stub.local_stats().out_of_bounds == len(broken)
    # The grammar is a function of the request: the same body gets the same reply.
    again = [call(local_stub, judge_body(f"answer number {n}", **WITH_SCHEMA))[1] for n in range(3)]
    assert [json.loads(r["choices"][0]["message"]["content"]) for r in again] == replies[:3]


def test_a_reply_the_schema_does_not_fit_is_forced_into_it(local_stub):
    local_stub.reply = lambda body: "I think it is mostly right."
    status, reply = call(local_stub, judge_body("x", **WITH_SCHEMA))
    assert status == 200
    assert json.loads(reply["choices"][0]["message"]["content"]) == {"criterionResults": []}


def test_a_reply_longer_than_max_tokens_stops_with_length(local_stub):
    local_stub.reply = lambda body: "word " * 400
    status, reply = call(local_stub, judge_body("x", max_tokens=50))
    choice = reply["choices"][0]
    assert status == 200 and choice["finish_reason"] == "length"
    assert reply["usage"]["completion_tokens"] == 50
    assert len(choice["message"]["content"]) == int(50 * 3.2)
    status, reply = call(local_stub, judge_body("x", max_tokens=1000))
    assert reply["choices"][0]["finish_reason"] == "stop"
    assert local_stub.local_stats().length_stops == 1


def test_the_window_counts_prompt_and_max_tokens_with_its_own_tokenizer():
    mode = LocalMode(context_window=2048)
    with OpenAIStub(reply=scripted_reply, local=mode) as stub:
        body = judge_body("The build failed on src/app.py line 42 again. " * 100, max_tokens=600)
        # cl100k says it fits with room to spare; the server's tokenizer disagrees.
        cl100k = sum(tokens.count(m["content"]) for m in body["messages"])
        assert cl100k + 600 < mode.context_window - 100
        status, reply = call(stub, body)
        assert status == 400
        error = reply["error"]
        assert error["message"].startswith("the request exceeds the available context size")
        assert error["type"] == "exceed_context_size_error" and error["n_ctx"] == 2048
        assert error["n_prompt_tokens"] + 600 > 2048
        status, _ = call(stub, {**body, "max_tokens": 2048 - error["n_prompt_tokens"]})
        assert status == 200  # exactly at the window fits
        stats = stub.local_stats()
        assert stats.over_window == 1 and stats.served == 1
        assert stub.stats().rejected == 1


def test_one_request_generates_at_a_time_the_others_queue():
    gate = threading.Event()

    async def slow(body: dict[str, Any]) -> str:
        import asyncio

        while not gate.is_set():
            await asyncio.sleep(0.01)
        return "done"

    with OpenAIStub(reply=slow, local=LocalMode()) as stub:
        results: list[int] = []
        threads = [
            threading.Thread(target=lambda n=n: results.append(call(stub, judge_body(str(n)))[0]))
            for n in range(3)
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 10
        while stub.max_concurrent < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stub.max_concurrent == 3  # all three reached the server...
        assert stub.local_stats().max_busy == 1  # ...and only one is generating
        gate.set()
        for t in threads:
            t.join(timeout=10)
        assert results == [200, 200, 200]
        assert stub.local_stats().max_busy == 1


def test_a_slow_model_makes_the_client_time_out():
    slow = LocalMode(tokens_per_s=1.0)  # a reply of ~30 tokens takes half a minute
    timeouts = (TimeoutError, socket.timeout, urllib.error.URLError)
    with OpenAIStub(reply=scripted_reply, local=slow) as stub, pytest.raises(timeouts):
        call(stub, judge_body("x"), timeout=0.3)


def test_identical_resends_after_an_invalid_reply_are_counted(local_stub):
    plain_json = judge_body("x", response_format={"type": "json_object"})
    call(local_stub, plain_json)  # wrong shape: invalid
    call(local_stub, plain_json)  # resent unchanged
    valid = judge_body("y")
    call(local_stub, valid)
    call(local_stub, valid)  # a repeat of a valid reply's request is not counted
    stats = local_stub.local_stats()
    assert stats.wrong_shape == 2 and stats.resent_after_invalid == 1


def test_the_cli_builds_the_local_mode():
    stub = build(
        parser().parse_args(["--local", "--local-model", "m.gguf", "--context-window", "4096"])
    )
    assert stub.local == LocalMode(model="m.gguf", context_window=4096)
    assert stub.reply is scripted_reply
    assert build(parser().parse_args([])).local is None  # the default stays the plain stub


@pytest.mark.parametrize(
    ("argv", "flag"),
    [(["--context-window", "4096"], "--local"), (["--local", "--context-window", "0"], "window")],
)
def test_bad_local_flags_are_one_line(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and flag in err and "\n" not in err
