"""A judge or answerer server that is broken or hostile: whatever it sends (any JSON type
in any field, HTML, an event stream, bytes that are not gzip, a reset, a cut body, a byte
a second forever, unparseable Retry-After, 50 MB), the job ends in bounded time, a bad
reply fails only its call (retried, counted, then its probe failed under
``execution.fail_on_error``), the one ``error:`` line names the endpoint and what was
wrong, computed probes are kept and disk use stays small.

Every server here is the loopback stub (:mod:`benchmark.stub.hostile`) over real sockets;
jobs run through ``benchmark.__main__.main`` (a few as a real ``python -m benchmark``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SMALL, at_most, compose_config, run_benchmark
from openai_stub import Fault, OpenAIStub

from benchmark.__main__ import main
from benchmark.config.schema import validate
from benchmark.run.pipeline import run_job
from benchmark.stub import DELETE, scripted_reply

LIMIT_S = 60  # no case may take longer
KEY = "zq7hostilekey0123456789"  # no known key shape: scrubbed as the variable's value
Reply = Callable[[dict], object]


def endpoint(role: str, url: str, **settings: object) -> list[str]:
    """Overrides pointing ``role`` (judge, answerer) at ``url``: small timeouts, one retry."""
    fast: dict[str, object] = {
        "max_retries": 1,
        "backoff_initial_s": 0.01,
        "backoff_max_s": 0.02,
        "timeout_s": 2,
        "++deadline_s": 3,
        "++retry_after_max_s": 0.2,
        "++preflight": "false",
        **settings,
    }
    pairs = [(k.lstrip("+"), k.startswith("++"), v) for k, v in fast.items()]
    return [f"{role}=gpt4o", f"{role}.endpoint.base_url={url}"] + [
        f"{'++' if extra else ''}{role}.endpoint.{k}={v}" for k, extra, v in pairs
    ]


def job_args(tmp_path: Path, *overrides: str) -> list[str]:
    return [*SMALL, "probe.per_type=1", f"hydra.run.dir={tmp_path / 'run'}", *overrides]


@pytest.fixture
def bounded():
    """An in-process job that runs past LIMIT_S fails the test (SIGALRM), not the suite."""
    with at_most(LIMIT_S):
        yield


@pytest.fixture
def job(tmp_path, monkeypatch, capsys, bounded):
    """``job(argv)`` runs ``python -m benchmark *argv`` in this process (cwd tmp_path, a
    key set) and returns (exit code, stderr); it checks what every case must hold."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)

    def run(argv: list[str]) -> tuple[int, str]:
        monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
        start = time.monotonic()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        err = capsys.readouterr().err
        assert time.monotonic() - start < LIMIT_S
        assert "Traceback" not in err, err[-3000:]
        assert (tmp_path / "run" / "run_files" / "judgments.jsonl").is_file()  # outputs kept
        return code, err

    return run


def error_line(err: str) -> str:
    """The one ``error:`` line, the last on stderr, with nothing of the key in it."""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err[-3000:]
    assert err.strip().splitlines()[-1] == errors[0]
    assert KEY[:8] not in err
    return errors[0]


def judgments(tmp_path: Path) -> list[dict]:
    lines = (tmp_path / "run" / "run_files" / "judgments.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def answers(tmp_path: Path) -> list[dict]:
    lines = (tmp_path / "run" / "run_files" / "answers.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def disk_use(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def judge_fails(
    stub: OpenAIStub, reply: Reply, job, tmp_path, *extra: str, **settings: object
) -> str:
    """Every judge reply is ``reply``'s: the job ends in exit 1 (all probes failed, over
    fail_on_error), the error line returned; every probe's failure is recorded."""
    stub.reply = reply
    code, err = job(job_args(tmp_path, *endpoint("judge", stub.base_url, **settings), *extra))
    assert code == 1, err[-3000:]
    line = error_line(err)
    assert "100.0% of probes failed" in line and "judge call to gpt4o failed" in line
    found = judgments(tmp_path)
    assert found and all(j["failed"] and j["error"] for j in found)
    for path in (tmp_path / "run").rglob("*"):
        assert not path.is_file() or KEY[:8].encode() not in path.read_bytes(), path
    return line


def scripted_with(path: str, value: object) -> Reply:
    """Valid judge/answerer replies, with one field of the completion replaced."""
    return lambda body: Fault.patched(path, value, text=scripted_reply(body))


# -- replies the judge cannot use: each fails its call, named in one line -------------------

BAD_REPLIES: list[tuple[str, Reply, str]] = [
    ("content-number", scripted_with("choices.0.message.content", 42), "content is a number"),
    ("content-float", scripted_with("choices.0.message.content", 1e308), "content is a number"),
    ("content-object", scripted_with("choices.0.message.content", {"a": [1]}), "an object"),
    ("content-bool", scripted_with("choices.0.message.content", True), "a boolean"),
    ("content-nested-list", scripted_with("choices.0.message.content", [[1, [2]]]), "a list"),
    ("content-null", scripted_with("choices.0.message.content", None), "invalid reply"),
    ("choices-missing", scripted_with("choices", DELETE), "reply has no choices"),
    ("choices-empty", scripted_with("choices", []), "choices empty"),
    ("choices-string", scripted_with("choices", "lots"), "choices is a string"),
    ("choice-number", scripted_with("choices", [5]), "choices[0] is a number"),
    ("message-missing", scripted_with("choices.0.message", DELETE), "message is null"),
    ("message-list", scripted_with("choices.0.message", ["hi"]), "message is a list"),
    ("body-list", lambda body: Fault.json([1, 2]), "reply is a list, not a JSON object"),
    ("body-null", lambda body: Fault.json(None), "reply is null"),
    ("body-string", lambda body: Fault.json("ok"), "reply is a string"),
    ("invalid-json", lambda body: Fault.raw('{"choices": [{"mess'), "not valid JSON"),
    ("html-200", lambda body: Fault.raw("<html>Bad gateway</html>", "text/html"), "text/html"),
    ("plain-text", lambda body: Fault.raw("OK", "text/plain"), "reply is not JSON"),
    ("empty-body", lambda body: Fault.raw(""), "reply is not JSON"),
    ("not-utf8", lambda body: Fault.raw(b'{"a": "\xff\xfe"}'), "not valid JSON"),
    ("deep-nesting", lambda body: Fault.raw("[" * 200_000 + "]" * 200_000), "nested too deeply"),
    ("huge-integer", lambda body: Fault.raw('{"choices": ' + "9" * 5000 + "}"), "not valid JSON"),
    (
        "event-stream",
        lambda body: Fault.raw('data: {"choices": []}\n\ndata: [DONE]\n\n', "text/event-stream"),
        "event stream",
    ),
    (
        "error-with-200",
        lambda body: Fault.json({"error": {"message": "model overloaded\n\x1b[31mred"}}),
        "answered 200 with an error: model overloaded",
    ),
    (
        "key-echoed-in-html",
        lambda body: Fault.raw(f"<html>bad key {KEY}</html>", "text/html"),
        "text/html",
    ),
    (
        "key-echoed-in-200-error",
        lambda body: Fault.json({"error": f"Incorrect API key provided: {KEY}"}),
        "Incorrect API key provided",
    ),
    (
        "gzip-not-gzip",
        lambda body: Fault.raw(b"{}not gzip", headers={"Content-Encoding": "gzip"}),
        "APIConnectionError",
    ),
]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [case[1:] for case in BAD_REPLIES],
    ids=[case[0] for case in BAD_REPLIES],
)
def test_an_unusable_reply_fails_its_probe_in_one_line(openai_stub, job, tmp_path, reply, expected):
    line = judge_fails(openai_stub, reply, job, tmp_path)
    assert expected in line, line
    assert "\x1b" not in line


def test_hostile_replies_fail_only_their_probes_the_rest_are_kept(openai_stub, job, tmp_path):
    """Some calls meet a hostile reply, the others a good one: under a tolerant
    fail_on_error the job ends 0, failed and scored probes both recorded."""
    faults = [
        Fault.hostile("reset"),
        Fault.patched("choices.0.message.content", {"x": 1}),
        Fault.raw("<html></html>", "text/html"),
    ]

    def reply(body: dict) -> object:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).digest()
        pick = digest[0] % (len(faults) + 2)  # the same for a call's retry
        return faults[pick] if pick < len(faults) else scripted_reply(body)

    openai_stub.reply = reply
    overrides = [*endpoint("judge", openai_stub.base_url), "execution.fail_on_error=1.0"]
    code, err = job(job_args(tmp_path, *overrides))
    assert code == 0, err[-3000:]
    assert not [line for line in err.splitlines() if line.startswith("error:")]
    found = judgments(tmp_path)
    assert any(j["failed"] for j in found) and any(not j["failed"] for j in found)
    assert all(j["score"] is not None for j in found if not j["failed"])


# -- the transport: resets, cut bodies, silence, trickles, storms --------------------------


# Short limits where the case waits for one: a request given up at 1 s, twice.
SHORT_READ = {"timeout_s": 1}
SHORT_DEADLINE = {"++deadline_s": 1}
TRICKLE = Fault.hostile("trickle", seconds=0.2)
TRANSPORT: list[tuple[str, Reply, str, dict[str, object]]] = [
    ("reset", lambda body: Fault.hostile("reset"), "APIConnectionError", {}),
    ("cut-chunked-body", lambda body: Fault.hostile("cut"), "APIConnectionError", {}),
    ("never-answers", lambda body: Fault.hang(30), "no reply bytes for 1 s", SHORT_READ),
    ("trickle", lambda body: TRICKLE, "within 1 s (the endpoint's deadline_s)", SHORT_DEADLINE),
    ("429-storm", lambda body: Fault.status(429, retry_after=0.01), "RateLimitError", {}),
    (
        "503-storm-html",
        lambda body: Fault.raw("<html>" + "x" * 3_000_000, "text/html", status=503),
        "InternalServerError",
        {},
    ),
]


@pytest.mark.parametrize(
    ("reply", "expected", "settings"), [c[1:] for c in TRANSPORT], ids=[c[0] for c in TRANSPORT]
)
def test_a_failing_transport_fails_its_probes_in_bounded_time(
    openai_stub, job, tmp_path, reply, expected, settings
):
    start = time.monotonic()
    line = judge_fails(openai_stub, reply, job, tmp_path, **settings)
    assert expected in line, line
    assert len(line) < 1200  # a 3 MB error page is not quoted
    assert time.monotonic() - start < 30


ANSWERER_FAULTS: list[tuple[str, Reply, str]] = [
    ("content-object", scripted_with("choices.0.message.content", {"a": 1}), "an object"),
    ("reset", lambda body: Fault.hostile("reset"), "APIConnectionError"),
    ("trickle", lambda body: TRICKLE, "deadline_s"),
]


@pytest.mark.parametrize(
    ("reply", "expected"), [c[1:] for c in ANSWERER_FAULTS], ids=[c[0] for c in ANSWERER_FAULTS]
)
def test_the_answerer_endpoint_fails_the_same_way(openai_stub, job, tmp_path, reply, expected):
    openai_stub.reply = reply
    overrides = endpoint("answerer", openai_stub.base_url, **SHORT_DEADLINE)
    code, err = job(job_args(tmp_path, *overrides))
    assert code == 1, err[-3000:]
    line = error_line(err)
    assert "answerer call to gpt4o failed" in line and expected in line, line
    assert all(a["failed"] and a["error"] for a in answers(tmp_path))


def test_a_trickling_server_is_bounded_at_preflight_too(openai_stub, job, tmp_path):
    """The preflight's 1-token completion trickles too: it gives up within the deadline
    (a warning), and the job's calls then fail at their own deadline."""
    openai_stub.models = ["gpt-4o"]
    start = time.monotonic()
    line = judge_fails(
        openai_stub,
        lambda body: TRICKLE,
        job,
        tmp_path,
        "judge.endpoint.model=gpt-4o",
        **{**SHORT_DEADLINE, "++preflight": "true"},
    )
    assert "deadline_s" in line
    assert time.monotonic() - start < 30


# -- Retry-After the client cannot use: retried with the default backoff -------------------


@pytest.mark.parametrize(
    "retry_after",
    [
        "soon",
        "-5",
        "1000000000",
        "NaN",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        "Fri, 01 Jan 2100 00:00:00 GMT",
        "",
    ],
)
def test_any_retry_after_is_retried_and_a_huge_one_capped(openai_stub, job, tmp_path, retry_after):
    seen: set[str] = set()

    def reply(body: dict) -> object:
        request = json.dumps(body, sort_keys=True)
        if request not in seen:  # the first try of every call is refused
            seen.add(request)
            return Fault.status(429, retry_after=retry_after)
        return scripted_reply(body)

    openai_stub.reply = reply
    start = time.monotonic()
    code, err = job(job_args(tmp_path, *endpoint("judge", openai_stub.base_url)))
    assert code == 0, err[-3000:]
    assert not any(j["failed"] for j in judgments(tmp_path))
    assert openai_stub.stats().faults["429"] == len(judgments(tmp_path))  # each retried once
    assert time.monotonic() - start < 30  # a 10^9 s or year-2100 wait was capped (0.2 s)


# -- usage and side fields of any type: the reply is used, the cost stays sane --------------


ODD_FIELDS: list[tuple[str, object]] = [
    ("usage.prompt_tokens", -1_000_000_000),
    ("usage.completion_tokens", "lots"),
    ("usage.prompt_tokens", 10**30),
    ("usage.completion_tokens", 1e308),
    ("usage.prompt_tokens", None),
    ("usage", [1, 2]),
    ("usage", "free"),
    ("choices.0.finish_reason", {"why": ["x"]}),
    ("choices.0.finish_reason", 7),
    ("choices.0.message.refusal", {"a": 1}),
    ("choices.0.message.tool_calls", "not-a-list"),
    ("choices.0.message.reasoning_content", [1, None, {"x": True}]),
]


def test_odd_usage_and_side_fields_leave_replies_usable_and_costs_sane(openai_stub, monkeypatch):
    """One in-process job per odd field (the LLM layer in-process, as a job uses it): all
    probes judged, cost and token counts finite and never negative."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    deadline = time.monotonic() + LIMIT_S
    for path, value in ODD_FIELDS:
        openai_stub.reply = scripted_with(path, value)
        overrides = [*SMALL, "probe.per_type=1", *endpoint("judge", openai_stub.base_url)]
        result = run_job(validate(compose_config(overrides)))
        metrics = result.metrics()
        case = f"{path}={value!r}"
        assert metrics["probes/failed"] == 0, case
        for name in ("llm/cost_usd", "llm/input_tokens", "llm/output_tokens"):
            assert math.isfinite(metrics[name]) and metrics[name] >= 0, (case, name)
        assert time.monotonic() < deadline


def test_content_as_text_parts_is_read_as_its_text(openai_stub, job, tmp_path):
    """Some servers send ``content`` as typed parts: their text is the reply."""

    def reply(body: dict) -> object:
        text = scripted_reply(body)
        parts = [{"type": "text", "text": text[:5]}, {"type": "text", "text": text[5:]}]
        return Fault.patched("choices.0.message.content", parts, text=text)

    openai_stub.reply = reply
    code, err = job(job_args(tmp_path, *endpoint("answerer", openai_stub.base_url)))
    assert code == 0, err[-3000:]
    assert all(not a.get("failed") and a["text"] for a in answers(tmp_path))


def test_a_lone_surrogate_in_an_answer_is_written_as_valid_utf8(openai_stub, job, tmp_path):
    openai_stub.reply = lambda body: Fault.raw(
        json.dumps(
            {"choices": [{"message": {"content": "ok \ud800 then"}, "finish_reason": "stop"}]}
        )
    )
    code, err = job(job_args(tmp_path, *endpoint("answerer", openai_stub.base_url)))
    assert code == 0, err[-3000:]
    for path in (tmp_path / "run").rglob("*.jsonl"):
        path.read_bytes().decode("utf-8")  # strict: no surrogate was written
    assert all("ok \ufffd then" in a["text"] for a in answers(tmp_path))


# -- size: replies are capped as they are read, and stored once ----------------------------


def test_a_long_answer_is_cut_with_a_note_and_stored_small(openai_stub, job, tmp_path):
    openai_stub.reply = lambda body: "word " * 6_000  # 30,000 characters
    overrides = endpoint("answerer", openai_stub.base_url, **{"++max_reply_chars": 2000})
    code, err = job(job_args(tmp_path, *overrides))
    assert code == 0, err[-3000:]
    found = answers(tmp_path)
    assert found and all("[cut: the reply held 30,000 characters" in a["text"] for a in found)
    assert all(len(a["text"]) < 2200 for a in found)
    assert disk_use(tmp_path) < 2_000_000


def test_fifty_megabyte_replies_are_not_read_nor_stored(openai_stub, tmp_path, migrated_db):
    """A real process with a real MLflow store, the reply cache on, and preflight: the
    50 MB bodies are refused as they are read (not retried), nothing of them is kept."""
    store = tmp_path / "mlruns"
    store.mkdir()
    (store / migrated_db.name).write_bytes(migrated_db.read_bytes())
    openai_stub.models = ["gpt-4o"]
    openai_stub.reply = lambda body: Fault.hostile("huge", size=50_000_000)
    no_tracking = [o for o in SMALL if o not in ("tracking=disabled", "cache.dir=null")]
    args = [
        *no_tracking,
        "probe.per_type=1",
        "tracking=mlflow",
        f"tracking.store_dir={store}",
        f"cache.dir={tmp_path / 'cache'}",
        f"hydra.run.dir={tmp_path / 'run'}",
        *endpoint("judge", openai_stub.base_url, **{"++preflight": "true"}),
        "judge.endpoint.model=gpt-4o",
    ]
    start = time.monotonic()
    env = {**os.environ, "OPENAI_API_KEY": KEY, "NO_PROXY": "*"}
    proc = run_benchmark(args, tmp_path, env, timeout=LIMIT_S)
    assert time.monotonic() - start < LIMIT_S
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    line = error_line(proc.stderr)
    assert "reply body over 4,065,536 bytes" in line
    assert disk_use(tmp_path) < 3_000_000  # the migrated store and a small run
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store / migrated_db.name}")
    (run,) = client.search_runs(
        [client.get_experiment_by_name("compaction-benchmark").experiment_id]
    )
    metrics = run.data.metrics
    assert metrics["probes/failed"] == metrics["probes/total"] > 0
    assert metrics["llm/judge/retries"] == 0  # a too-large reply is not asked again


# -- the client alone: a cache filled by an older version, kept calls ----------------------


def test_an_unusable_cached_reply_is_asked_again(openai_stub, tmp_path, monkeypatch):
    """An entry no reply could make now (text 42, written by an older version that kept a
    number as text) is a miss: the server is asked, the good reply replaces it."""
    from benchmark.llm import Endpoint, LLMClient, UsageLedger
    from benchmark.llm.reply_cache import ResponseCache

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    ep = Endpoint(name="e", model="m", base_url=openai_stub.base_url, max_retries=0)
    messages = [{"role": "user", "content": "one two"}]
    with ResponseCache(tmp_path) as cache:
        client = LLMClient(ep, "answerer", UsageLedger(keep_calls=True), cache)
        first, _ = client.complete(messages)  # fills the cache
        ((key, _),) = [(k, v) for k, v in _entries(tmp_path)]
        cache.put(key, 0, {"text": 42, "input_tokens": -3}, model="m", role="answerer")
        again, _ = client.complete(messages)
        assert again.text == first.text and len(openai_stub.requests) == 2
        assert cache.get(key)["text"] == first.text
        calls = client.ledger.calls()
        assert all(isinstance(c.reply, str) and c.input_tokens >= 0 for c in calls)
        client.close()


def _entries(folder: Path) -> list[tuple[str, str]]:
    import sqlite3

    from benchmark.llm.reply_cache import FILENAME

    with sqlite3.connect(folder / FILENAME) as db:
        return list(db.execute("SELECT key, value FROM responses"))


def test_a_kept_call_holds_at_most_a_preview_of_a_long_reply(openai_stub, monkeypatch):
    from benchmark.llm import Endpoint, LLMClient, UsageLedger
    from benchmark.llm.usage import TRACE_REPLY_CHARS

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_stub.reply = lambda body: "y" * 300_000
    ep = Endpoint(name="e", model="m", base_url=openai_stub.base_url, max_retries=0)
    client = LLMClient(ep, "answerer", UsageLedger(keep_calls=True))
    completion, _ = client.complete([{"role": "user", "content": "go"}])
    assert len(completion.text) == 300_000  # the caller gets it whole (under the cap)
    (call,) = client.ledger.calls()
    assert len(call.reply) < TRACE_REPLY_CHARS + 100 and "not kept here" in call.reply
    client.close()
