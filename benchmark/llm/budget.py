"""A request's token count as a server may see it: the arithmetic both the window fitting
(:mod:`benchmark.llm.window`) and a repaired retry (:mod:`benchmark.llm.structured_output`) use.

Our counts are cl100k; a server's tokenizer and chat template differ, so a count is
padded by ``WINDOW_MARGIN_RATIO`` plus ``WINDOW_MARGIN_TOKENS`` before it is set
against an endpoint's ``context_window``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.text import tokens

# The safety margin for tokenizer and chat-template differences: older open models'
# SentencePiece tokenizers count some 20% more than cl100k on code and logs.
WINDOW_MARGIN_RATIO = 0.25
WINDOW_MARGIN_TOKENS = 256
# The chat format's priming of the reply (``<|start|>assistant<|message|>``).
_REPLY_PRIMING = 3


def chat_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """cl100k tokens of a chat request as the server sees its prompt (text plus framing)."""
    texts = [str(m.get("content") or "") for m in messages]
    return sum(tokens.count_many(texts)) + len(texts) * tokens.MESSAGE_OVERHEAD + _REPLY_PRIMING


def padded(prompt_tokens: int) -> int:
    """What ``prompt_tokens`` cl100k tokens may count on the server, with the margin."""
    return math.ceil(prompt_tokens * (1 + WINDOW_MARGIN_RATIO)) + WINDOW_MARGIN_TOKENS


def room_for_reply(context_window: int, messages: Sequence[Mapping[str, Any]], served: int) -> int:
    """Reply tokens left in ``context_window`` after ``messages``: the larger of our padded
    count and the server's own count of a previous prompt (``served``; 0 when unknown)."""
    return context_window - max(padded(chat_tokens(messages)), served)
