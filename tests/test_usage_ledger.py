"""The usage ledger's kept calls: written to a file as they land, read back whole and in order."""

from __future__ import annotations

from benchmark.llm import Endpoint, UsageLedger


def _account(ledger: UsageLedger, n: int, **kw: object) -> None:
    endpoint = Endpoint(name="e", model="m", price_input_per_1m=1.0)
    body = {"model": "m", "messages": [{"role": "user", "content": f"context {n} " * 500}]}
    value = None if kw.get("error") else {"text": f"reply {n}", "input_tokens": 10 * n}
    ledger.account("judge", endpoint, "chat.completions", body, n, value, **kw)


def test_kept_calls_are_read_back_in_order_and_later_calls_append() -> None:
    ledger = UsageLedger(keep_calls=True)
    assert ledger.calls() == []
    for n in (1, 2):
        _account(ledger, n)
    first = ledger.calls()
    assert [c.reply for c in first] == ["reply 1", "reply 2"]
    assert first[1].request["messages"][0]["content"] == "context 2 " * 500
    assert first[1].input_tokens == 20 and first[1].cost_usd == 20 / 1e6
    assert first[1].start_ns == 2 <= first[1].end_ns
    _account(ledger, 3, error="boom")
    again = ledger.calls()
    assert again[:2] == first  # reading them does not consume them
    assert again[2].error == "judge call to e: boom" and again[2].reply is None
    assert ledger.roles()["judge"].calls == 3 and ledger.roles()["judge"].failures == 1


def test_calls_are_not_kept_unless_asked() -> None:
    ledger = UsageLedger()
    _account(ledger, 1)
    assert ledger.calls() == [] and ledger.roles()["judge"].calls == 1
