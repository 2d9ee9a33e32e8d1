"""Token counting: the batch and one-by-one paths count the same."""

from __future__ import annotations

from benchmark.text import tokens


def test_count_many_matches_count_on_small_and_large_batches():
    small = ["", "- src/app/db.py (modified)", "pinned requests==2.31.0", "ok"]
    large = [f"line {i}: " + "word " * 3000 for i in range(20)]  # past the batch threshold
    assert sum(map(len, large)) >= tokens._BATCH_MIN_CHARS > sum(map(len, small))
    for texts in (small, large):
        assert tokens.count_many(texts) == [tokens.count(t) for t in texts]
