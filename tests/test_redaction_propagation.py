"""A secret found once is replaced elsewhere only where it stands alone as a token, and only
when it could be nothing but the secret: short values, default credentials, words and numbers
are replaced where they are assigned and nowhere else."""

from __future__ import annotations

import json

import pytest

from benchmark.redaction import Redactor
from benchmark.redaction.propagation import propagates
from benchmark.transcript.models import Message, Transcript

RANDOM = "Xk9mQ2vL7pRt"  # a generated password: propagates
R = "[REDACTED:secret_assignment#1]"

# (case, where it is assigned, text elsewhere, that text after redaction)
CASES = [
    (
        "ash_postgres: a common default is not hunted for",
        "DB_PASSWORD=postgres",
        'defp deps, do: [{:ash_postgres, "~> 2.0"}]\npsql -U postgres -h postgres-db',
        'defp deps, do: [{:ash_postgres, "~> 2.0"}]\npsql -U postgres -h postgres-db',
    ),
    (
        "a short password",
        "DB_PASSWORD=hunter2",
        "login as hunter2 failed; hunter2 is also a user",
        "login as hunter2 failed; hunter2 is also a user",
    ),
    (
        "a common word made a password",
        'cfg = {"password": "Welcome2024!"}',
        "Welcome2024! is printed on the banner",
        "Welcome2024! is printed on the banner",
    ),
    (
        "a listed default with separators",
        "SECRET_KEY=super-secret",
        "the super-secret setting",
        "the super-secret setting",
    ),
    (
        "a leet default",
        "ADMIN_PASSWORD=P@ssw0rd",
        "tried P@ssw0rd first",
        "tried P@ssw0rd first",
    ),
    (
        "a number",
        "DB_PASSWORD=20240115",
        "released on 20240115",
        "released on 20240115",
    ),
    (
        "an English word",
        "DB_PASSWORD=development",
        "the development database",
        "the development database",
    ),
    (
        "a long random password propagates where it stands alone",
        f"DB_PASSWORD={RANDOM}",
        f"psql -W {RANDOM} -h db; echo '{RANDOM}'. Use {RANDOM}.",
        f"psql -W {R} -h db; echo '{R}'. Use {R}.",
    ),
    (
        "but never inside another identifier, host or file name",
        f"DB_PASSWORD={RANDOM}",
        f"ash_{RANDOM} {RANDOM}-db db.{RANDOM} {RANDOM}9 {RANDOM}.txt",
        f"ash_{RANDOM} {RANDOM}-db db.{RANDOM} {RANDOM}9 {RANDOM}.txt",
    ),
    (
        "a flag dash or a sentence's full stop is not part of the token",
        f"DB_PASSWORD={RANDOM}",
        f"-{RANDOM} and ({RANDOM}), {RANDOM}...",
        f"-{R} and ({R}), {R}...",
    ),
    (
        "JSON-escaped text: after \\n, and with escaped slashes",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        '{"log": "start\\nwJalrXUtnFEMI\\/K7MDENG\\/bPxRfiCYEXAMPLEKEY\\tok"}',
        '{"log": "start\\n[REDACTED:aws_secret_key#1]\\tok"}',
    ),
    (
        "a passphrase is long enough to propagate",
        "DB_PASSWORD=correcthorsebatterystaple",
        "login with correcthorsebatterystaple",
        f"login with {R}",
    ),
]


@pytest.mark.parametrize(
    ("assigned", "elsewhere", "expected"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_found_secret_propagates_only_as_a_standalone_distinctive_value(
    assigned, elsewhere, expected
):
    transcript = Transcript(
        id="s",
        source="test",
        messages=[
            Message(role="tool", tool_call_id="c1", content=assigned),
            Message(role="assistant", content=elsewhere),
        ],
    )
    redacted, _ = Redactor().transcript(transcript)
    first, second = (m.content for m in redacted.messages)
    assert "[REDACTED:" in first  # where a detector matched it, always
    assert second == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("hunter2", False),  # shorter than 8
        ("postgres", False),
        ("POSTGRES", False),
        ("Postgres123!", False),
        ("my_password", False),
        ("trustno1", False),
        ("12345678", False),
        ("authentication", False),  # a word: ~43 bits
        ("pg-Secret-42", True),  # words, separators and digits mixed: not one word
        ("zq-8Lm2Vx9Rt4", True),
        ("Tr0ub4dor&3", True),
        ("correcthorsebatterystaple", True),
        ("12345678901234567890", True),  # a long number is not a common one
    ],
)
def test_which_values_propagate(value, expected):
    assert propagates(value) is expected


def test_assigned_common_password_keeps_json_arguments_valid_and_one_placeholder():
    """The ash_postgres case in tool-call arguments: assigned twice, the same placeholder;
    the dependency list and the user name survive, and the arguments stay valid JSON."""
    mix = 'defp deps do\n  [{:ash_postgres, "~> 2.0"}]\nend\n'
    config = 'config :app, Repo, username: "postgres", password: "postgres"\n'
    arguments = json.dumps({"path": "mix.exs", "content": mix})
    calls = [
        {"id": "w1", "type": "function", "function": {"name": "write_file", "arguments": arguments}}
    ]
    transcript = Transcript(
        id="s",
        source="test",
        messages=[
            Message(role="tool", tool_call_id="c0", content="DB_PASSWORD=postgres\n"),
            Message(role="assistant", content=None, tool_calls=calls),
            Message(role="tool", tool_call_id="w1", content=config),
        ],
    )
    redacted, counts = Redactor().transcript(transcript)
    env, write, out = redacted.messages
    assert env.content == f"DB_PASSWORD={R}\n"
    assert json.loads(write.tool_calls[0].function.arguments) == {
        "path": "mix.exs",
        "content": mix,
    }
    assert out.content == f'config :app, Repo, username: "postgres", password: "{R}"\n'
    assert counts == {"secret_assignment": 2}
