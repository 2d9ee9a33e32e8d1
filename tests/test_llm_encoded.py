"""Long strings escaped once: the JSON text is exactly what json.dumps gives, hit or miss."""

from __future__ import annotations

import json

from benchmark.llm.encoded import LONG, dumps, quoted
from benchmark.llm.prompting import forget_prepared, prepare_render, render_context
from benchmark.llm.reply_cache import body_text
from benchmark.llm.untrusted import payload
from benchmark.transcript.models import Message

CONTEXT = ('line "quoted" \\ back\nslash\t\u00e9\ue000 ' * (LONG // 10)).strip()


def test_dumps_and_its_quoted_form_equal_json_dumps_on_a_first_and_a_second_use():
    data = {"instructions": "x", "data": {"context": CONTEXT, "question": 'why "\n"?'}}
    for _ in range(2):  # the second escapes the context from memory
        text = dumps(data, indent=1)
        assert text == json.dumps(data, ensure_ascii=False, indent=1)
        assert text.quoted == json.dumps(text, ensure_ascii=False)
        assert quoted(CONTEXT) == json.dumps(CONTEXT, ensure_ascii=False)


def test_a_request_body_holding_a_message_text_encodes_as_json_dumps_and_parses_back():
    content = dumps({"data": {"context": CONTEXT, "question": "q"}}, indent=1)
    body = {"model": "m", "messages": [{"role": "user", "content": content}], "temperature": 0.0}
    text = body_text(body)
    assert text == json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert json.loads(text) == body


def test_a_context_rendered_ahead_is_the_same_text_at_every_budget():
    text = "[user]\nstep {}: " + "word " * 50
    messages = [Message(role="user", content=text.format(i)) for i in range(40)]
    fresh = [render_context(list(messages), b) for b in (100_000, 60_000, 500)]
    forget_prepared()
    prepare_render(messages)
    try:
        assert [render_context(list(messages), b) for b in (100_000, 60_000, 500)] == fresh
    finally:
        forget_prepared()


def test_a_payload_with_fields_laid_out_once_is_the_json_of_fields_then_data():
    fields = {"criteria": [{"criterionId": "a", "score_guide": {"0": "none", "5": "é"}}]}
    for data, extra in [({"context": CONTEXT, "question": "q"}, fields), ({"x": 'a"b'}, None)]:
        for _ in range(2):  # the second takes the fields' layout from memory
            text = payload(data, extra)
            whole = {**(extra or {}), "data": data}
            assert text == json.dumps(whole, ensure_ascii=False, indent=1)
            assert text.quoted == json.dumps(text, ensure_ascii=False)
