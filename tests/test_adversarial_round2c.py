"""Issue 28, the three leftovers of the second red team (round 2b kept 71 cases).

- **Endpoints that never work**: a server answering an empty or HTML body, an endless or
  lying body, closing after its headers, a 429 storm with a huge ``Retry-After``, or
  never sending headers ran a job far past 60 s (time grew with probes x tries). The
  client now gives such an endpoint up (``give_up_tries``/``give_up_s``, the breaker of
  :mod:`benchmark.llm.breaker`): its later calls fail at once, the job ends in one
  ``error:`` line under ``execution.fail_on_error`` (exit 1, as for an unreachable one).
  An endpoint that worked once keeps retrying its faults as before.

Servers are real loopback sockets (threads); jobs run in-process through
``benchmark.__main__.main``, each bounded by ``at_most(60)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import string
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import SMALL, at_most
from openai_stub import Fault
from raw_http import raw_servers, send
from test_secrets_names import aws, github, jwt, leaks, openai

from benchmark.__main__ import main
from benchmark.llm import Endpoint, LLMClient, LLMError
from benchmark.llm.client import EndpointGivenUp
from benchmark.llm.loop import _Loop
from benchmark.run import interrupt
from benchmark.stub import scripted_reply

LIMIT_S = 60
KEY = "zq7round2ckey0123456789"  # no known key shape: scrubbed as the variable's value


# -- endpoints that never give a usable reply ----------------------------------------------


def _hold(conn: socket.socket, stop: threading.Event, seconds: float = 30) -> None:
    """Keep the connection open, sending nothing, until the client goes or the test ends."""
    conn.settimeout(0.2)
    end = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < end:
        try:
            if not conn.recv(1024):
                return
        except TimeoutError:
            continue


def _endless(conn: socket.socket, stop: threading.Event) -> None:
    send(conn, b"200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked")
    while not stop.is_set():
        conn.sendall(b"1\r\n \r\n")
        time.sleep(0.05)


Behave = Callable[[socket.socket, threading.Event], None]
HOSTILE: dict[str, tuple[Behave, str]] = {
    "empty-body": (
        lambda c, s: send(c, b"200 OK\r\nContent-Type: application/json\r\nContent-Length: 0"),
        "reply is not JSON",
    ),
    "html-body": (
        lambda c, s: send(
            c,
            b"200 OK\r\nContent-Type: text/html\r\nContent-Length: 26",
            b"<html>Bad gateway</html>\r\n",
        ),
        "text/html",
    ),
    "endless-body": (_endless, "deadline_s"),
    "lying-content-length": (
        lambda c, s: (send(c, b"200 OK\r\nContent-Length: 99999", b'{"choices": ['), _hold(c, s)),
        "timeout_s",
    ),
    "closes-after-headers": (
        lambda c, s: send(c, b"200 OK\r\nContent-Type: application/json\r\nContent-Length: 500"),
        "APIConnectionError",
    ),
    "429-storm-huge-retry-after": (
        lambda c, s: send(
            c,
            b"429 Too Many Requests\r\nRetry-After: 86400\r\nContent-Type: application/json\r\n"
            b"Content-Length: 47",
            b'{"error": {"message": "slow down", "code": 42}}',
        ),
        "RateLimitError",
    ),
    "never-sends-headers": (lambda c, s: _hold(c, s), "timeout_s"),
}


@pytest.fixture(scope="module")
def hostile() -> Iterator[dict[str, str]]:
    """One loopback server per behaviour of HOSTILE, each connection in its own thread."""
    stop = threading.Event()
    behaviours = {
        name: (lambda conn, behave=behave: behave(conn, stop))
        for name, (behave, _) in HOSTILE.items()
    }
    with raw_servers(behaviours, path="/v1") as urls:
        yield urls
        stop.set()


def run_job(argv: list[str], monkeypatch, capsys) -> tuple[int, str, str, float]:
    """``python -m benchmark *argv`` in this process: (exit code, stdout, stderr, seconds)."""
    monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
    start = time.monotonic()
    try:
        with at_most(LIMIT_S):
            main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err, time.monotonic() - start


def one_error(err: str) -> str:
    assert "Traceback" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err[-3000:]
    assert KEY[:8] not in err
    return lines[0]


def endpoint(role: str, url: str) -> list[str]:
    """``role`` on ``url`` as a hostile case sets it: a short timeout and one retry; the
    give-up settings and ``retry_after_max_s`` left at their defaults."""
    fast = {"max_retries": 1, "backoff_initial_s": 0.05, "timeout_s": 1, "++deadline_s": 2}
    return [
        f"{role}=gpt4o",
        f"{role}.endpoint.base_url={url}",
        f"++{role}.endpoint.preflight=false",
    ] + [
        f"{'++' if k.startswith('++') else ''}{role}.endpoint.{k.lstrip('+')}={v}"
        for k, v in fast.items()
    ]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    return tmp_path


@pytest.mark.parametrize("role", ["answerer", "judge"])
@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_an_endpoint_that_never_works_is_given_up_in_one_line(
    kind, role, hostile, in_tmp, monkeypatch, capsys
):
    argv = [
        *SMALL,
        "probe.per_type=4",
        f"hydra.run.dir={in_tmp / 'run'}",
        *endpoint(role, hostile[kind]),
    ]
    code, _, err, seconds = run_job(argv, monkeypatch, capsys)
    line = one_error(err)
    assert code == 1, err[-3000:]
    assert seconds < 45, seconds
    assert line.startswith("error: 100.0% of probes failed"), line
    assert f"{role} call to gpt4o failed" in line, line
    assert "given up for this job" in line and HOSTILE[kind][1] in line, line
    assert (in_tmp / "run" / "run_files" / "judgments.jsonl").is_file()  # outputs kept


def client_on(url: str, **fields: object) -> LLMClient:
    endpoint = Endpoint(name="local", model="m", base_url=url, api_key_env=None, **fields)
    return LLMClient(endpoint, role="answerer")


HI = [{"role": "user", "content": "hi"}]


def test_an_endpoint_that_worked_once_keeps_retrying_past_give_up_tries(openai_stub):
    client = client_on(
        openai_stub.base_url,
        max_retries=12,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        give_up_tries=2,
    )
    with at_most(LIMIT_S):
        client.complete(HI)  # a usable reply: the endpoint works
        openai_stub.queue(Fault.status(503), times=10)
        completion, _ = client.complete(HI)
    assert completion.text
    assert client.ledger.roles()["answerer"].retries == 10


def test_give_up_tries_0_and_no_give_up_s_retry_every_call(openai_stub):
    openai_stub.reply = lambda _: Fault.status(500)
    client = client_on(
        openai_stub.base_url,
        max_retries=2,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        give_up_tries=0,
        give_up_s=None,
    )
    with at_most(LIMIT_S):
        for _ in range(5):
            with pytest.raises(LLMError) as failed:
                client.complete(HI)
            assert not isinstance(failed.value, EndpointGivenUp)
    assert len(openai_stub.requests) == 15  # 5 calls x 3 tries


def test_give_up_s_bounds_a_never_working_endpoint_s_retry_waits(openai_stub):
    """A lone call with many retries on a 429 storm: given up once a wait would pass
    give_up_s, not after all its retries (a wait never starts that would pass it)."""
    openai_stub.reply = lambda _: Fault.status(429, retry_after=20)
    client = client_on(openai_stub.base_url, max_retries=50, give_up_tries=1000, give_up_s=5)
    start = time.monotonic()
    with at_most(LIMIT_S), pytest.raises(EndpointGivenUp, match="would pass give_up_s") as failed:
        client.complete(HI)
    assert time.monotonic() - start < 3  # the 20 s wait (capped at 30) was never started
    assert "answerer call to local failed: endpoint 'local' (m)" in str(failed.value)
    assert "last failure: RateLimitError: Error code: 429" in str(failed.value)
    # Every later call fails at once, with no request.
    sent = len(openai_stub.requests)
    with pytest.raises(EndpointGivenUp):
        client.complete(HI)
    assert len(openai_stub.requests) == sent


def test_retries_asleep_wake_and_fail_when_another_call_gives_up(openai_stub):
    """Calls waiting out a Retry-After are cut short when the endpoint is given up."""
    openai_stub.reply = lambda _: Fault.status(429, retry_after=25)
    client = client_on(openai_stub.base_url, max_retries=3, give_up_tries=6, give_up_s=None)

    async def many() -> list[BaseException]:
        first = [client.acomplete(HI) for _ in range(3)]  # 3 tries, then asleep for 25 s
        waiting = asyncio.gather(*first, return_exceptions=True)
        await asyncio.sleep(0.5)
        later = [client.acomplete(HI) for _ in range(3)]  # 3 more tries: given up
        return [*await asyncio.gather(*later, return_exceptions=True), *await waiting]

    start = time.monotonic()
    with at_most(LIMIT_S):
        errors = _Loop.run(many())
    assert time.monotonic() - start < 5
    assert all(isinstance(e, EndpointGivenUp) for e in errors), errors
    assert len(openai_stub.requests) == 6


# -- secrets a model writes into its replies ------------------------------------------------

PEM_BODY = "\n".join(
    "".join(random.Random(n).choice(string.ascii_letters + string.digits + "+/") for _ in range(64))
    for n in range(6)
)
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
PLANTED = {"openai": openai(), "github": github(), "aws": aws(), "jwt": jwt()}
LEAK = (
    f"Try {PLANTED['openai']} (or {PLANTED['github']}); aws {PLANTED['aws']}, "
    f"session {PLANTED['jwt']}.\n{PEM}\n"
)
SECRETS = [*PLANTED.values(), *PEM_BODY.splitlines()]


def leaky_reply(body: dict) -> str:
    """The scripted reply of every role, with LEAK in its text (in a JSON reply: in its
    free-text fields, JSON-escaped)."""
    text = scripted_reply(body)
    try:
        value = json.loads(text)
    except ValueError:
        return f"{text}\n{LEAK}"

    def planted(node: object) -> object:
        if isinstance(node, dict):
            return {
                k: v + " " + LEAK
                if k in ("reasoning", "question") and isinstance(v, str)
                else planted(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [planted(v) for v in node]
        return node

    return json.dumps(planted(value))


def test_keys_in_every_roles_replies_reach_no_file_store_or_output(
    openai_stub, tmp_path, mlflow_store, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    openai_stub.reply = leaky_reply
    url = openai_stub.base_url
    roles = [
        "answerer=gpt4o",
        f"answerer.endpoint.base_url={url}",
        "judge=gpt4o",
        f"judge.endpoint.base_url={url}",
        "policy=regenerative",
        "summarizer=gpt4o",
        f"summarizer.endpoint.base_url={url}",
        "probe=llm_gpt4o",
        f"probe.writer.endpoint.base_url={url}",
    ]
    argv = [
        *[o for o in SMALL if o not in ("tracking=disabled", "cache.dir=null")],
        *roles,
        f"hydra.run.dir={tmp_path / 'run'}",
        f"cache.dir={tmp_path / 'cache'}",
    ]
    code, out, err, _ = run_job(argv, monkeypatch, capsys)
    assert code == 0, err[-3000:]
    assert "Traceback" not in err
    asked = {r.body["messages"][0]["content"][:40] for r in openai_stub.requests}
    assert len(asked) >= 4  # the answerer, judge, summarizer and probe writer were all asked
    assert (tmp_path / "mlruns" / "mlflow.db").stat().st_size > 0
    assert any((tmp_path / "cache").rglob("*")), "the reply cache was written"
    for secret in SECRETS:
        assert leaks(secret, [tmp_path], out, err) == [], secret
    found = "".join(p.read_text() for p in (tmp_path / "run").rglob("answers.jsonl"))
    assert "[REDACTED:" in found  # replaced, not dropped


# -- python -m benchmark.report and signals --------------------------------------------------


def report_process(tmp_path: Path) -> subprocess.Popen[str]:
    """``python -m benchmark.report`` on a store folder with no store (it would end in
    one line at ~0.4 s): the signal cases land while it starts and works."""
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return subprocess.Popen(
        [sys.executable, "-m", "benchmark.report", "--store-dir", str(tmp_path / "none")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def handlers_in(pid: int) -> bool:
    """Whether the process catches SIGTERM and SIGHUP (a bare interpreter does not): the
    report's own code runs (see tests/test_signals.py::_handling)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    mask = int(re.search(r"SigCgt:\s*([0-9a-f]+)", status)[1], 16)
    return all(mask & (1 << (n - 1)) for n in (signal.SIGTERM, signal.SIGHUP))


def wait_for_handlers(proc: subprocess.Popen[str]) -> None:
    end = time.monotonic() + 30
    while not handlers_in(proc.pid):
        assert proc.poll() is None and time.monotonic() < end, "no handlers installed"
        time.sleep(0.002)


def ended(proc: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, err


SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT, "SIGHUP": signal.SIGHUP}


@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_a_signal_right_after_spawn_is_one_line_or_a_bare_interpreters_death(name, tmp_path):
    """Before the interpreter runs any of the report's code no handler can be installed:
    there the default action (-n, nothing of ours printed; for SIGINT maybe Python's own
    KeyboardInterrupt from its start-up, no frame of ours) is accepted; from the first line
    of ``benchmark/report/__main__.py`` on, it is 128 + n and one line."""
    signum = SIGNALS[name]
    proc = report_process(tmp_path)
    proc.send_signal(signum)
    code, err = ended(proc)
    if code == -signum:
        assert "error:" not in err and "benchmark" not in err, err
        assert not err.strip() or (signum == signal.SIGINT and "KeyboardInterrupt" in err), err
        return
    assert code == 128 + signum, err
    assert "Traceback" not in err
    assert err.strip().splitlines() == [
        f"error: interrupted ({interrupt.label(signum)}) while starting; nothing was logged"
    ], err


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.15])
@pytest.mark.parametrize("name", sorted(SIGNALS))
def test_a_signal_once_the_report_handles_them_is_one_line_and_128_plus_n(name, delay, tmp_path):
    signum = SIGNALS[name]
    proc = report_process(tmp_path)
    wait_for_handlers(proc)
    time.sleep(delay)
    proc.send_signal(signum)
    code, err = ended(proc)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    if code != 2:  # the report got to its own end (no store) before the signal
        assert code == 128 + signum, err
        assert f"interrupted ({interrupt.label(signum)})" in lines[0]


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.1, 0.15, 0.2, 0.25])
def test_a_second_ctrl_c_50_ms_after_the_first_is_130_and_one_line(delay, tmp_path):
    proc = report_process(tmp_path)
    wait_for_handlers(proc)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGINT)
    code, err = ended(proc)
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert code in (130, 2), err  # 2: the report ended (no store) before the first
    if code == 130:
        assert "(Ctrl-C)" in lines[0]


def test_importing_the_report_package_installs_no_handler():
    """In-process users keep their handlers: only the command installs the report's."""
    code = (
        "import signal, benchmark.report, benchmark.report.__main__ as m; "
        "assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL; "
        "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler; "
        "from benchmark.report import build_report, client_for; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
