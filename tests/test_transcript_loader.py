import json

import pytest

from benchmark.errors import UserError
from benchmark.transcript.loader import load_file
from benchmark.transcript.models import Message

CHAT = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": [{"type": "text", "text": "Fix the cache."}]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "src/cache.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "def get(key): ..."},
]


def test_loads_messages_object_and_bare_list(tmp_path):
    obj, bare = tmp_path / "a.json", tmp_path / "b.json"
    obj.write_text(json.dumps({"messages": CHAT}))
    bare.write_text(json.dumps(CHAT))
    a, b = load_file(obj), load_file(bare)
    assert [m.role for m in a.messages] == ["system", "user", "assistant", "tool"]
    assert a.messages[1].content == "Fix the cache."
    assert a.messages[2].tool_calls[0].function.args() == {"path": "src/cache.py"}
    assert a.id == "a" and b.id == "b"
    # The cache key is content, not path.
    assert a.content_hash == b.content_hash


def test_render_includes_tool_calls():
    msg = Message.model_validate(CHAT[2])
    assert "read_file" in msg.render() and "src/cache.py" in msg.render()
    assert msg.tokens > 4


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("{not json", "invalid JSON at line 1"),
        (json.dumps({"msgs": []}), "expected a 'messages' key"),
        (json.dumps([]), "no messages"),
        (json.dumps([{"role": "robot", "content": "hi"}]), "message 0: field 'role'"),
        (
            json.dumps([CHAT[0], {"role": "tool", "content": "x"}]),
            "message 1: field 'message': a tool message needs 'tool_call_id'",
        ),
        (json.dumps([CHAT[0], {"role": "user", "content": 5}]), "message 1: field 'content'"),
        (json.dumps([CHAT[0], "hello"]), "message 1: expected an object"),
    ],
)
def test_malformed_files_name_file_index_and_field(tmp_path, payload, expected):
    path = tmp_path / "broken.json"
    path.write_text(payload)
    with pytest.raises(UserError) as err:
        load_file(path)
    message = str(err.value)
    assert str(path) in message
    assert expected in message
    assert "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="not found"):
        load_file(tmp_path / "nope.json")
