"""Server-side compaction: the model provider compacts the region into an encrypted item.

The region's messages go to the Responses API's compact endpoint, which
returns the user messages it keeps and one ``compaction`` item whose content
only that provider can read. Nobody here can inspect what survived, so the
item is kept as is (:class:`~benchmark.transcript.models.OpaqueItem`) and the
answerer must continue through the same provider's Responses API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmark.llm import Endpoint, UsageLedger
from benchmark.llm.connect import connect
from benchmark.llm.native import NativeClient
from benchmark.llm.reply_cache import ResponseCache
from benchmark.policy.spans import region_dropped, splice
from benchmark.run.compaction import Segments
from benchmark.transcript.models import Message


class Opaque:
    """Head + what the provider's compact endpoint returns for the region + tail.

    Only the dropped region messages are sent (region scoping; a tool span
    crossing the region's edge stays verbatim, as in the summarizing
    policies). Under iterative replay the region may open with an earlier
    encrypted item, which goes back as the ``compaction`` input item the API
    expects. Compaction usage is counted under the ``summarizer`` role. A
    failed call, or a reply without exactly one compaction item, raises
    :class:`~benchmark.llm.LLMError`.
    """

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        ledger: UsageLedger | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        self.endpoint, self.ledger, self.client = connect(
            endpoint, "summarizer", ledger, cache, kind=NativeClient
        )
        self.provider = self.client.provider

    def compact(self, segments: Segments) -> list[Message]:
        messages, dropped = segments.messages, region_dropped(segments)
        if not dropped:
            return messages
        kept = self.client.compact([messages[i] for i in dropped])
        return splice(messages, dropped, kept)

    def close(self) -> None:
        self.client.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.endpoint.model!r})"
