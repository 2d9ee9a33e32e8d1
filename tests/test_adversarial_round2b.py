"""Issue 28, a second red team: hostile inputs the first battery did not try.

Each case is checked by the issue's rules: exit 2 and exactly one stderr line starting with
``error:`` (naming the key, flag or server at fault), no traceback, bounded in time (the
module's ``at_most``), and no 8-character piece of a planted secret on stdout, stderr or
under the job's folders (``mlflow.db`` included). Classes:

- tracking servers that answer the health check with an empty, HTML, gzip-bomb, endless,
  lying or redirecting body (these were tracebacks or hangs after the whole job);
- SQLite tracking URIs with a host, a query string, an upper-case scheme, a folder past
  PATH_MAX (the job ran, then failed; or logged to another file than the one locked);
- keys of formats the detector did not know (GitLab, npm, Groq, xAI, SendGrid, Databricks,
  lower-case hex ``sk-`` keys, Azure SAS) given as values, key names, file names;
- bidirectional overrides and zero-width characters echoed raw in an error line;
- the tools' own flags (``benchmark.report``, ``.cache``, ``.stub``, ``.preview``):
  argparse's multi-line usage errors, an out-of-range port's traceback, ``--latency nan``.

Config cases run in-process (``benchmark.__main__.main``); servers are real loopback
sockets in threads.
"""

from __future__ import annotations

import gzip
import re
import shutil
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import REPO, at_most
from raw_http import raw_servers, send

from benchmark.__main__ import main
from benchmark.errors import one_line
from benchmark.redaction.redactor import scrub

CHAT = REPO / "tests" / "fixtures" / "transcripts" / "chat" / "ledger_fix.jsonl"
SMALL = [
    "transcript.sessions=1",
    "transcript.target_tokens=30000",
    "compaction.context_window=16000",
    "compaction.tail_tokens=2500",
    "execution.progress=off",
]
# Keys of formats the first detector passed over (made up; the shapes are the providers').
KEYS = {
    "gitlab": "glpat-Vq8Xw3Rt5Yp1Lk9Mn2Bv",
    "npm": "npm_Qz7Lm2Xv9Rt4Wb8Nc3Df6Gh1Jk5Ls0Pq2Ys4",
    "groq": "gsk_" + "Wd2Lx9Vb4Nm1Zk8Pc3Ry6Hq7" * 2 + "Ab12",
    "xai": "xai-" + "Tu6Vw9Yz4Qm3Xv8Lp2Rt" * 4,
    "sendgrid": "SG.Qm3Xv8Lp2Rt6Wz9Ab4Cd7x." + "Ef1Gh5Jk0Mn3Pq8Rs2Tu6Vw9Yz4Ab1Cd5Ef9Gh3Jk7y",
    "databricks": "dapi0123456789abcdef0123456789abcdef",
    "deepseek": "sk-9f3c1a7e5b2d4c6e8a0b1c3d5e7f9a2b",
    "openrouter": "sk-or-v1-" + "4e1f9a3c7b5d2e8f0a6c4b2d9e7f1a3c" * 2,
    "digitalocean": "dop_v1_" + "ab12cd34ef56" * 5 + "ab12",
    "hashicorp": "hvs.CAESIJq8Xw3Rt5Yp1Lk9Mn2BvQz7",
}


def pieces(secret: str) -> set[str]:
    return {secret[i : i + 8] for i in range(len(secret) - 7)}


def leaked(secret: str, root: Path, *texts: str) -> list[str]:
    """Where an 8-character piece of ``secret`` is: a text given, or a file under ``root``."""
    found = [f"text {i}" for i, t in enumerate(texts) if any(p in t for p in pieces(secret))]
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(p.encode() in data for p in pieces(secret)):
                found.append(str(path.relative_to(root)))
    return found


def one_error(err: str, expected: str) -> str:
    assert "Traceback" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err[-3000:]
    assert expected in lines[0], lines[0]
    return lines[0]


def run_main(argv: list[str], monkeypatch, entry: Callable[[], object] = main) -> int:
    monkeypatch.setattr(sys, "argv", ["benchmark", *argv])
    try:
        with at_most(60):
            result = entry()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return int(result or 0) if isinstance(result, int) else 0


def job_args(tmp: Path, *overrides: str) -> list[str]:
    """A small job with every folder under ``tmp``; ``overrides`` last (flags first)."""
    flags = [o for o in overrides if o in ("-m",)]
    rest = [o for o in overrides if o not in ("-m",)]
    return [
        *flags,
        *SMALL,
        f"hydra.run.dir={tmp / 'outputs'}",
        f"hydra.sweep.dir={tmp / 'multirun'}",
        f"cache.dir={tmp / 'cache'}",
        *rest,
    ]


# -- tracking servers that answer, but not as MLflow does ----------------------------------


BOMB = gzip.compress(b"{" + b" " * (64 * 1024 * 1024) + b"}", 9)


def _endless(conn: socket.socket) -> None:
    send(conn, b"200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked")
    while True:
        conn.sendall(b"1\r\n \r\n")
        time.sleep(0.2)


SERVERS: dict[str, Callable[[socket.socket], None]] = {
    "empty-200": lambda c: send(
        c, b"200 OK\r\nContent-Type: application/json\r\nContent-Length: 0"
    ),
    "html-200": lambda c: send(
        c, b"200 OK\r\nContent-Type: text/html\r\nContent-Length: 13", b"<html></html>"
    ),
    "gzip-bomb": lambda c: send(
        c,
        b"200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        b"Content-Length: %d" % len(BOMB),
        BOMB,
    ),
    "json-list": lambda c: send(c, b"200 OK\r\nContent-Length: 2", b"[]"),
    "endless-chunks": _endless,
    "content-length-lies": lambda c: (
        send(c, b"200 OK\r\nContent-Length: 99999", b"{}"),
        time.sleep(30),
    ),
    "closes-after-headers": lambda c: send(c, b"200 OK\r\nContent-Length: 500"),
    "redirect-loop": lambda c: send(c, b"302 Found\r\nLocation: /loop\r\nContent-Length: 0"),
    "teapot": lambda c: send(c, b"418 I'm a teapot\r\nContent-Length: 0"),
    "server-error": lambda c: send(c, b"502 Bad Gateway\r\nContent-Length: 0"),
}


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    """One loopback server per behaviour of SERVERS, each connection in its own thread."""
    with raw_servers(SERVERS) as urls:
        yield urls


@pytest.mark.parametrize("name", sorted(SERVERS))
def test_a_tracking_server_that_is_not_mlflow_is_one_line_before_the_job(
    name, servers, offline, monkeypatch, capsys
):
    start = time.monotonic()
    args = job_args(offline, "tracking=server", f"tracking.uri={servers[name]}")
    code = run_main(args, monkeypatch)
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    one_error(err, f"tracking server {servers[name]}")
    assert time.monotonic() - start < 20
    assert not (offline / "outputs" / "run_record.json").exists()  # no job ran


# -- SQLite tracking URIs --------------------------------------------------------------------

LONG_FOLDER = "/".join(["d" * 200] * 25)  # past PATH_MAX (4096)
SQLITE_CASES = {
    "host": ("sqlite://host/x.db", "a SQLite URI names a file, not a host"),
    "query-ro": ("'sqlite:///ro.db?mode=ro&uri=true'", "takes no query string (?mode=...&uri="),
    "query-timeout": ("'sqlite:///t.db?timeout=5'", "takes no query string"),
    "upper-scheme": ("SQLITE:///up.db", "write its scheme in lower case (sqlite:, not SQLITE:)"),
    "mixed-http": ("Http://127.0.0.1:1", "write its scheme in lower case"),
    "path-max": (f"sqlite:///{LONG_FOLDER}/x.db", "cannot use its folder (File name too long)"),
    "memory-uri": ("'sqlite:///file:x?mode=memory&uri=true'", "in-memory SQLite database"),
    "memory-bare": ("sqlite://", "in-memory SQLite database"),
}


@pytest.mark.parametrize("name", sorted(SQLITE_CASES))
def test_a_sqlite_uri_sqlalchemy_and_the_lock_would_read_apart_is_refused(
    name, offline, monkeypatch, capsys
):
    uri, expected = SQLITE_CASES[name]
    code = run_main(job_args(offline, f"+tracking.uri={uri}"), monkeypatch)
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    line = one_error(err, "config key 'tracking.uri'")
    assert expected in line, line
    assert not list(offline.glob("*.db*")) and not (offline / "mlruns").exists()


def test_after_a_refused_query_string_the_same_file_takes_a_good_job(offline, monkeypatch, capsys):
    db = offline / "store.db"
    code = run_main(
        job_args(offline, f"+tracking.uri='sqlite:///{db}?mode=ro&uri=true'"), monkeypatch
    )
    assert code == 2
    capsys.readouterr()
    code = run_main(job_args(offline, f"+tracking.uri=sqlite:///{db}"), monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    assert db.is_file() and not list(offline.glob("store.db?*"))


# -- keys of formats the detector did not know --------------------------------------------


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_a_key_of_a_known_provider_format_is_redacted_wherever_it_stands(kind):
    key = KEYS[kind]
    for text in (key, f"run_{key}.jsonl", f"the key is {key}.", f"export TOKEN_X={key}"):
        assert not any(p in scrub(text) for p in pieces(key)), (text, scrub(text))


@pytest.mark.parametrize(
    "text",
    [
        "npm_install",
        "key-value store",
        "sk-learn-compat-2024-final",
        "the glpat- prefix",
        "dapi and SG.foo.bar",
        "https://acct.blob.core.windows.net/c?sig=short",
        "task-1234567890abcdefghij",
    ],
)
def test_words_that_look_like_a_prefix_stay(text):
    assert scrub(text) == text


def test_an_azure_sas_signature_and_account_key_are_redacted():
    sas = "https://a.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=Qm3Xv8Lp2Rt6Wz9Ab4Cd7Ef1%3D"
    conn = "AccountName=a;AccountKey=" + "Ab12Cd34" * 11 + "==;EndpointSuffix=x"
    assert "Qm3Xv8Lp" not in scrub(sas) and "sv=2022-11-02" in scrub(sas)
    assert "Ab12Cd34" not in scrub(conn) and "AccountName=a" in scrub(conn)


WHERE = {
    "policy": lambda k: [f"policy={k}"],
    "window": lambda k: [f"compaction.context_window={k}"],
    "new-key": lambda k: [f"+{k}=1"],
    "experiment": lambda k: [f"tracking.experiment={k}"],
    "api-key-env": lambda k: ["answerer=gpt4o_mini", f"answerer.endpoint.api_key_env={k}"],
    "sweep-element": lambda k: ["-m", f"policy=truncate,{k}"],
}


@pytest.mark.parametrize(
    ("where", "kind"),
    [(w, k) for w in sorted(WHERE) for k in ("gitlab", "groq", "deepseek")],
)
def test_a_key_given_in_the_wrong_place_is_never_echoed_nor_written(
    where, kind, offline, monkeypatch, capsys
):
    key = KEYS[kind]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    args = job_args(offline, "tracking=mlflow", f"tracking.store_dir={offline / 'mlruns'}")
    extra = WHERE[where](key)
    code = run_main(
        [*extra[:1], *args, *extra[1:]] if extra[0] == "-m" else [*args, *extra], monkeypatch
    )
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    one_error(err, "")
    assert not leaked(key, offline, out, err)


def test_a_key_in_a_transcript_file_name_reaches_no_output(offline, monkeypatch, capsys):
    """A folder scan meets ``chat_<key>.jsonl``: the job runs, and neither its outputs nor
    the store hold a piece of the key (its id is the name with the key replaced)."""
    key = KEYS["gitlab"]
    folder = offline / "logs"
    folder.mkdir()
    shutil.copy(CHAT, folder / f"chat_{key}.jsonl")
    args = [
        "transcript=files",
        f"transcript.path={folder}",
        "compaction.context_window=600",
        "compaction.tail_tokens=100",
        "tracking=mlflow",
        f"tracking.store_dir={offline / 'mlruns'}",
        f"hydra.run.dir={offline / 'outputs'}",
        f"cache.dir={offline / 'cache'}",
        "execution.progress=off",
    ]
    code = run_main(args, monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    assert (offline / "mlruns" / "mlflow.db").is_file()
    assert not leaked(key, offline, out, err)
    names = [p.name for p in offline.rglob("*") if any(x in p.name for x in pieces(key))]
    assert names == [f"chat_{key}.jsonl"], names  # the user's own file only


# -- invisible characters in an error line ------------------------------------------------

INVISIBLE = {
    "rtl-override-value": ("policy=trunc\u202eate", "\\u202e"),
    "rtl-override-key": ("compaction.\u202econtext_window=1", "\\u202e"),
    "zero-width-key": ("compaction.context\u200b_window=1", "\\u200b"),
    "bom-value": ("policy=\ufefftruncate", "\\ufeff"),
    "isolate-value": ("policy=a\u2066b\u2069", "\\u2066"),
}


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_an_invisible_character_is_shown_escaped(name, offline, monkeypatch, capsys):
    override, shown = INVISIBLE[name]
    code = run_main(job_args(offline, override), monkeypatch)
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    line = one_error(err, shown)
    assert not re.search("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]", line), repr(line)


def test_one_line_escapes_format_characters_and_keeps_letters():
    assert one_line("a\u202eb\u200dc ü 日本") == "a\\u202eb\\u200dc ü 日本"


# -- the tools' own flags -----------------------------------------------------------------


def _tool(module: str) -> Callable[[], object]:
    import importlib

    return importlib.import_module(module).main


TOOL_CASES = {
    "report-unknown-flag": ("benchmark.report.__main__", ["--nope"], "unrecognized arguments"),
    "report-bad-choice": ("benchmark.report.__main__", ["--probe-type", "x"], "--probe-type"),
    "cache-key-as-action": ("benchmark.cache", [KEYS["gitlab"]], "invalid choice"),
    "cache-unknown-flag": ("benchmark.cache", ["--nope"], "unrecognized arguments"),
    "stub-port-past-65535": ("benchmark.stub.__main__", ["--port", "99999"], "--port"),
    "stub-port-negative": ("benchmark.stub.__main__", ["--port", "-1"], "--port"),
    "stub-latency-nan": ("benchmark.stub.__main__", ["--latency", "nan"], "--latency"),
    "stub-hang-inf": ("benchmark.stub.__main__", ["--hang-s", "inf"], "--hang-s"),
    "preview-unknown-flag": ("benchmark.preview", ["--nope", str(CHAT)], "unrecognized"),
}


@pytest.mark.parametrize("name", sorted(TOOL_CASES))
def test_a_tools_bad_flag_is_one_scrubbed_line(name, offline, monkeypatch, capsys):
    module, argv, expected = TOOL_CASES[name]
    code = run_main(argv, monkeypatch, _tool(module))
    out, err = capsys.readouterr()
    assert code == 2, err[-3000:]
    line = one_error(err, expected)
    assert len([x for x in err.splitlines() if x.strip()]) == 1, err  # no usage block
    assert not leaked(KEYS["gitlab"], offline, out, line)
