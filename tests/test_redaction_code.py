"""Secret-named assignments whose value is no secret (empty, a quote, a variable reference,
a stand-in, code) survive redaction; real values next to them are still caught."""

from __future__ import annotations

import json

import pytest

from benchmark.redaction import Redactor
from benchmark.transcript.models import FunctionCall, Message, ToolCall, Transcript

NOT_SECRETS = [
    "pw = line.split('DB_PASSWORD=\"')[1].split('\"')[0]",
    'pw = line.split("DB_PASSWORD=\'")[1]',
    'PGPASSWORD="$DB_PASSWORD" psql -h db -U app',
    'grep -r "API_KEY=" .',
    "grep -rn API_KEY= src/",
    "DB_PASSWORD=",
    'API_KEY=""',
    "API_KEY=${API_KEY}",
    "API_KEY=${API_KEY:-}",
    "API_KEY=%API_KEY%",
    "API_KEY=$env:API_KEY",
    'API_KEY=os.environ["API_KEY"]',
    'API_KEY=os.environ.get("API_KEY")',
    "API_KEY=process.env.API_KEY",
    "SECRET_KEY=settings.SECRET_KEY",
    "API_KEY=get_key()",
    "API_KEY=<your-key>",
    "API_KEY=xxx",
    "API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx",
    "API_KEY=...",
    "API_KEY=your-api-key-here",
    'password: "..."',
    'password=\\"$PW\\"',
]

# Near misses: one character away from the above, and real.
SECRETS = [
    ('DB_PASSWORD="hunter2-real"', "hunter2-real"),
    ("export API_KEY=sk-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12", "sk-Ab12Cd34Ef56"),
    ("export API_KEY=abc123def456ghi", "abc123def456ghi"),
    ("PGPASSWORD='Tr0ub4dor&3' psql -h db", "Tr0ub4dor&3"),
    ("DB_PASSWORD=changeme", "changeme"),  # a default password that opens things
    ("API_KEY=sk-xxxx9f8e7d6c5b4a", "sk-xxxx9f8e7d6c5b4a"),
    ("SECRET_KEY=settings2.SECRET", "settings2.SECRET"),
    ('"password": "correct-horse-battery"', "correct-horse-battery"),
]


def _redacted(text: str) -> str:
    transcript = Transcript(
        id="t",
        source="test",
        messages=[
            Message(role="user", content=text),
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        id="c1",
                        function=FunctionCall(name="bash", arguments=json.dumps({"cmd": text})),
                    )
                ],
            ),
        ],
    )
    out, _ = Redactor().transcript(transcript)
    args = json.loads(out.messages[1].tool_calls[0].function.arguments)["cmd"]
    assert args == out.messages[0].content  # a tool call's arguments are redacted alike
    return out.messages[0].content


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_assignments_of_no_secret_survive(text):
    assert _redacted(text) == text


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_real_values_beside_them_are_still_redacted(text, secret):
    out = _redacted(text)
    assert secret not in out
    assert "[REDACTED:" in out
