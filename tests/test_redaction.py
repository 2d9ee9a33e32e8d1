"""Secret redaction: each detector on realistic text and on look-alikes that must survive,
stable numbering, valid JSON arguments, configuration, and the counts a run records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SMALL, compose_config

from benchmark import redaction
from benchmark.config.schema import validate
from benchmark.errors import UserError
from benchmark.redaction import Redactor, environment_secrets, json_arguments, redactor_for
from benchmark.run.run_record import flatten, redact
from benchmark.tracking.inputs import manifest_metrics
from benchmark.transcript.formats import import_file
from benchmark.transcript.models import Message, Transcript
from benchmark.transcript.sources import load_transcripts

FIXTURES = Path(__file__).parent / "fixtures" / "redaction"
OPENAI = "sk-proj-Xy7Qa9LmN2pR4sT6vW8yZ0bC3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC"
OPENAI_2 = "sk-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12"
PEM_LINES = (
    "MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HECdnH",
    "lWu2/a1gB9JW5TBQ+AVpum9Okx7KfqkfBKL9mcHgSL0yWMdjMfNOqNtrQqKlN4kE",
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----".format(
    "\n".join(PEM_LINES)
)

# (type, text around the secret, the secret, what must survive around it)
POSITIVES = [
    (row["kind"], row["around"], row["secret"], row["kept"])
    for row in json.loads((FIXTURES / "positives.json").read_text())["positives"]
]
assert {OPENAI, OPENAI_2, PEM} <= {row[2] for row in POSITIVES}  # the keys reused below

# Look-alikes that must come through unchanged.
NEGATIVES = [
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request_id=123e4567-e89b-12d3-a456-426614174000",
    "/home/dev/billing/src/billing/tokens/refresh_token.py:42: in refresh",
    'def get_token(self) -> str:\n    token = self._cache.get("token")\n    return token',
    'API_KEY = os.environ["OPENAI_API_KEY"]',
    'api_key = os.getenv("API_KEY", "")',
    "password: str\ntoken: Token | None = None",
    'if password == "":\n    raise ValueError("empty password")',
    'curl -H "Authorization: Bearer $OPENAI_API_KEY" https://api.openai.com/v1/models',
    'export OPENAI_API_KEY="<your-api-key>"\nGITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}',
    "OPENAI_API_KEY=${OPENAI_API_KEY}\nDB_PASSWORD=****",
    "PWD=/home/dev/project\nOLDPWD=/home/dev",
    "PUBLIC_KEY=ssh-ed25519\nMAX_TOKENS=4096\nmax_tokens=1024",
    "http://localhost:8000/health and ssh://git@github.com:22/acme/api.git",
    "docker run -u 1000:1000 image && git push -u origin main",
    "pip install scikit-learn==1.3.0 task-scheduler-configuration-v2",
    'password_hash = "pbkdf2:sha256:600000$abc$def"',
    "--token-file /run/secrets/token; use --password to be prompted",
    "The Authorization header must be sent; the bearer token expired.",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTAN\n-----END CERTIFICATE-----",
    "[REDACTED:openai_key#1] was rotated",
]


@pytest.mark.parametrize(("kind", "around", "secret", "kept"), POSITIVES)
def test_detector_redacts_the_secret_and_keeps_its_context(kind, around, secret, kept):
    text = around.format(secret)
    out = redaction.build_redactor(key_names=()).text(text)
    assert secret not in out
    assert f"[REDACTED:{kind}#1]" in out
    assert kept in out
    assert out == text.replace(secret, f"[REDACTED:{kind}#1]")  # the secret, only the secret


@pytest.mark.parametrize("text", NEGATIVES)
def test_look_alikes_survive(text):
    assert Redactor().text(text) == text


def _session(*messages: Message) -> Transcript:
    return Transcript(id="s", source="test", messages=list(messages))


def _tool(call_id: str, name: str, args: dict, output: str) -> list[Message]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
    return [
        Message(role="assistant", content=None, tool_calls=[call]),
        Message(role="tool", tool_call_id=call_id, content=output),
    ]


def test_env_file_read_by_cat_keeps_names_and_stable_placeholders():
    env = f"OPENAI_API_KEY={OPENAI}\nDB_PASSWORD=pg-Secret-42\nLOG_LEVEL=debug\n"
    transcript = _session(
        Message(role="user", content="The tests cannot reach the database."),
        *_tool("c1", "bash", {"command": "cat .env"}, env),
        Message(role="assistant", content=f"Rotating {OPENAI} and {OPENAI_2} now."),
        *_tool("c2", "bash", {"command": "psql -W pg-Secret-42 -h db"}, "psql: connected"),
    )
    redacted, counts = Redactor().transcript(transcript)
    text = "\n".join(m.render() for m in redacted.messages)
    assert OPENAI not in text and OPENAI_2 not in text and "pg-Secret-42" not in text
    tool_output = redacted.messages[2].content
    assert tool_output == (
        "OPENAI_API_KEY=[REDACTED:openai_key#1]\n"
        "DB_PASSWORD=[REDACTED:secret_assignment#1]\nLOG_LEVEL=debug\n"
    )
    # The same key is the same placeholder everywhere; another key of that type is #2.
    assert redacted.messages[3].content == (
        "Rotating [REDACTED:openai_key#1] and [REDACTED:openai_key#2] now."
    )
    # A password found in .env is also replaced where it appears bare, with its placeholder.
    assert json.loads(redacted.messages[4].tool_calls[0].function.arguments) == {
        "command": "psql -W [REDACTED:secret_assignment#1] -h db"
    }
    assert counts == {"openai_key": 3, "secret_assignment": 2}
    assert redacted.content_hash != transcript.content_hash  # caches key on redacted content
    assert redacted.messages[0] is transcript.messages[0]  # untouched messages are kept as is


def test_known_secret_before_its_detection_is_replaced_too():
    transcript = _session(
        Message(role="user", content="connect with zq-8Lm2Vx9Rt4"),
        Message(role="assistant", content="DB_PASSWORD=zq-8Lm2Vx9Rt4"),
    )
    redacted, _ = Redactor().transcript(transcript)
    assert [m.content for m in redacted.messages] == [
        "connect with [REDACTED:secret_assignment#1]",
        "DB_PASSWORD=[REDACTED:secret_assignment#1]",
    ]


def test_pem_key_in_json_tool_arguments_keeps_them_valid_json():
    args = json.dumps({"path": "deploy/id_rsa", "content": PEM + "\n", "mode": 384})
    assert "\\n" in args  # the key's newlines are JSON-escaped in the arguments
    transcript = _session(*_tool("w1", "write_file", json.loads(args), "wrote 1679 bytes"))
    redacted, counts = Redactor().transcript(transcript)
    out = redacted.messages[0].tool_calls[0].function.arguments
    assert json.loads(out) == {
        "path": "deploy/id_rsa",
        "content": "[REDACTED:private_key#1]\n",
        "mode": 384,
    }
    assert not any(line[:20] in out for line in PEM_LINES)
    assert counts == {"private_key": 1}


def test_json_arguments_change_only_the_literals_with_secrets():
    token = "ghp_R2d2C3poBb8Ff4Gg5Hh6Jj7Kk8Ll9Mm0Nn1Pp2"
    raw = '{ "cmd" :"echo caf\\u00e9",\n  "env": {"TOKEN": "%s"} }'
    out = json_arguments(raw % token, Redactor().text)
    assert out == raw % "[REDACTED:github_token#1]"  # every other byte as it was
    assert json.loads(out)["cmd"] == "echo café"
    quoted = json_arguments(json.dumps({"k": 'say "DB_PASSWORD=x9!k\\2"'}), Redactor().text)
    assert json.loads(quoted) == {"k": 'say "DB_PASSWORD=[REDACTED:secret_assignment#1]"'}
    assert json_arguments("not json: AKIAIOSFODNN7EXAMPLE", Redactor().text) == (
        "not json: [REDACTED:aws_access_key_id#1]"
    )


def test_placeholders_are_type_and_number_only():
    """Nothing of the secret (not even its length), and no quote or backslash for JSON."""
    redactor = Redactor()
    for kind, around, secret, _ in POSITIVES:
        placeholders = redaction.PLACEHOLDER.findall(redactor.text(around.format(secret)))
        assert placeholders == [f"[REDACTED:{kind}#1]"]
        assert json.dumps(placeholders[0]) == f'"{placeholders[0]}"'


def test_numbering_restarts_per_transcript():
    first = _session(Message(role="user", content=f"{OPENAI_2} {OPENAI}"))
    second = _session(Message(role="user", content=OPENAI))
    redactor = Redactor()
    assert redactor.transcript(first)[0].messages[0].content == (
        "[REDACTED:openai_key#1] [REDACTED:openai_key#2]"
    )
    assert redactor.transcript(second)[0].messages[0].content == "[REDACTED:openai_key#1]"


def test_user_patterns_from_config(tmp_path):
    config = validate(
        compose_config(
            [
                *SMALL,
                "+redaction.patterns.ticket_token='tkt_[0-9a-f]{12}'",
                "+redaction.patterns.internal_pin='pin=(?P<s>[0-9]{6})'",
            ]
        )
    )
    assert config.redaction.patterns["ticket_token"] == "tkt_[0-9a-f]{12}"
    redactor = redactor_for(config)
    out = redactor.text("auth tkt_0123456789ab with pin=482913 and tkt_zz")
    assert out == "auth [REDACTED:ticket_token#1] with pin=[REDACTED:internal_pin#1] and tkt_zz"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "+redaction.patterns.bad_one='tkt_[0-9'",
            "config key 'redaction.patterns.bad_one': invalid regular expression: "
            "unterminated character set at position 4",
        ),
        (
            "+redaction.patterns.empty='x*'",
            "config key 'redaction.patterns.empty': the pattern matches the empty string",
        ),
        (
            "+redaction.patterns.openai_key='sk-[a-z]+'",
            "config key 'redaction.patterns': type name 'openai_key' is a built-in detector; "
            "choose another name",
        ),
        ("redaction.builtin=[openai_key,pgp]", "unknown detector 'pgp'"),
    ],
)
def test_bad_redaction_config_is_one_line_naming_the_key(override, message):
    with pytest.raises(UserError) as err:
        validate(compose_config([*SMALL, override]))
    text = str(err.value)
    assert message in text and "\n" not in text


def test_disabled_and_selected_detectors():
    text = f"key {OPENAI} at postgres://app:pw-9x@db/app"
    off = validate(compose_config([*SMALL, "redaction.enabled=false"]))
    transcript = _session(Message(role="user", content=text))
    assert redactor_for(off).transcript(transcript) == (transcript, {})
    only_urls = validate(compose_config([*SMALL, "redaction.builtin=[url_password]"]))
    assert redactor_for(only_urls).text(text) == (
        f"key {OPENAI} at postgres://app:[REDACTED:url_password#1]@db/app"
    )
    assert set(redaction.BUILTIN_NAMES) >= {"openai_key", "private_key", redaction.ENV_VALUE}


def test_environment_keys_are_scrubbed_from_transcripts_and_params(monkeypatch):
    monkeypatch.setenv("LLM_CREDS", "opaque-credential-7f3a9b2c")  # named by an endpoint only
    monkeypatch.setenv("ACME_TOKEN", "acme-tok-5d8e1f0a2b3c")  # secret-named: always
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/home/dev/sa.json")  # a path: no
    env = {
        "LLM_CREDS": "opaque-credential-7f3a9b2c",
        "ACME_TOKEN": "acme-tok-5d8e1f0a2b3c",
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/dev/sa.json",
        "SHORT_TOKEN": "sk-test",
        "HOME": "/home/dev/a-long-enough-path",
    }
    assert environment_secrets(environ=env) == ["acme-tok-5d8e1f0a2b3c"]
    assert environment_secrets(["LLM_CREDS"], env) == [
        "acme-tok-5d8e1f0a2b3c",
        "opaque-credential-7f3a9b2c",
    ]
    config = validate(
        compose_config([*SMALL, "judge=gpt4o", "judge.endpoint.api_key_env=LLM_CREDS"])
    )
    redactor = redactor_for(config)
    text = "echo opaque-credential-7f3a9b2c acme-tok-5d8e1f0a2b3c /home/dev/sa.json"
    assert redactor.text(text) == (
        "echo [REDACTED:env_value#1] [REDACTED:env_value#2] /home/dev/sa.json"
    )
    # Params: a URL's password and a key-shaped value never reach MLflow, names do.
    params = flatten(
        redact(
            {
                "tracking": {"uri": "https://ci:Hx8!pw2q@mlflow.internal"},
                "judge": {"endpoint": {"api_key_env": "LLM_CREDS", "api_key": "x"}},
                "note": "acme-tok-5d8e1f0a2b3c",
            }
        )
    )
    assert params == {
        "tracking.uri": "https://ci:[REDACTED:url_password#1]@mlflow.internal",
        "judge.endpoint.api_key_env": "LLM_CREDS",
        "judge.endpoint.api_key": "<redacted>",
        "note": "[REDACTED:env_value#1]",
    }
    assert redaction.scrub("plain text stays") == "plain text stays"


def test_load_transcripts_records_counts_per_file(tmp_path):
    lines = [
        {"role": "user", "content": f"deploy with {OPENAI}"},
        {"role": "assistant", "content": "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiC"},
    ]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(m) for m in lines))
    (tmp_path / "b.jsonl").write_text(json.dumps({"role": "user", "content": "no secrets"}))
    files = ["transcript=files", f"transcript.path={tmp_path}", "tracking=disabled"]
    config = validate(compose_config(files))
    loaded = load_transcripts(config.transcript, redactor_for(config))
    assert [f.redactions for f in loaded.manifest.files] == [
        {"openai_key": 1, "secret_assignment": 1},
        {},
    ]
    assert OPENAI not in loaded.transcripts[0].messages[0].content
    metrics = manifest_metrics(loaded.manifest)
    assert metrics["redactions/total"] == 2
    assert metrics["redactions/openai_key"] == 1
    assert metrics["redactions/secret_assignment"] == 1
    # The manifest's hashes are of the files as they are on disk; tokens of what the job sees.
    assert loaded.manifest.files[0].tokens == loaded.transcripts[0].total_tokens


def _nothing_to_redact(paths: list[Path]) -> None:
    redactor = Redactor()
    for path in paths:
        transcript = import_file(path).transcript
        assert redactor.transcript(transcript) == (transcript, {}), path


def test_generated_sessions_and_fixture_logs_have_nothing_to_redact():
    """Code, tracebacks, hashes and configs of realistic sessions: no false positive."""
    loaded = load_transcripts(validate(compose_config(SMALL)).transcript)
    assert [f.redactions for f in loaded.manifest.files] == [{}]
    fixtures = Path(__file__).parent / "fixtures" / "transcripts"
    paths = sorted(p for p in fixtures.rglob("*") if p.suffix in (".json", ".jsonl", ".traj"))
    assert len(paths) >= 5
    _nothing_to_redact(paths)


def test_real_swe_agent_trajectories_have_nothing_to_redact(shared_data):
    _nothing_to_redact(sorted(shared_data.rglob("*.traj")))
