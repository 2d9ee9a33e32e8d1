"""The LLM summarizer: any OpenAI-compatible model condenses the compacted region.

It sends only what the :class:`~benchmark.summarizer.base.SummaryRequest`
holds (the region and the policy's earlier summary), so region scoping holds
for a remote model too. Unlike the answerer and the judge it has no failed
result to fall back on: a policy cannot compact without a summary, so a call
that fails after its retries raises, and the pipeline fails that point alone
(its probes counted as failed).
"""

from __future__ import annotations

from benchmark.llm import EndpointUnreachable, LLMError
from benchmark.llm.connect import RegionStage
from benchmark.llm.prompting import render_context
from benchmark.summarizer.base import SummaryRequest
from benchmark.summarizer.prompts import check_reply, messages
from benchmark.text import tokens


class LLMSummarizer(RegionStage):
    """Sectioned summaries from an LLM; a missing key fails at construction.

    ``max_region_tokens`` and the endpoint's ``context_window`` bound the
    rendered region sent (the most recent part is kept, as the newest work
    matters most to resuming). A reply that
    is empty or has none of the requested headings is asked for again; a
    reply longer than ``max_tokens`` is clipped to it, so the policy's
    budget holds whatever the model does.
    """

    ROLE = "summarizer"
    REGION_TOKENS = 100_000

    def messages(self, request: SummaryRequest) -> list[dict[str, str]]:
        """The exact chat messages sent for ``request``: as much of the region (newest
        part kept) as ``max_region_tokens`` and the endpoint's window allow. The length
        asked for is the policy's, or the endpoint's ``max_tokens`` when that is less."""
        length = min(request.max_tokens, self.endpoint.max_tokens)
        return self.window.fit(
            self.max_region_tokens,
            lambda budget: render_context(request.region, budget),
            lambda region: messages(region, request.sections, length, request.previous_summary),
        )

    def summarize(self, request: SummaryRequest) -> str:
        def parse(text: str) -> str:
            return check_reply(text, request.sections)

        try:
            _, summary = self.client.complete(self.messages(request), parse=parse)
        except EndpointUnreachable:
            raise  # names the endpoint and its base_url already
        except LLMError as exc:
            raise RuntimeError(
                f"summarizer '{self.endpoint.name}' ({self.endpoint.model}) gave no usable "
                f"summary, so the region cannot be compacted: {exc}"
            ) from None
        # ``parse`` was given, so ``summary`` is its (non-empty) result.
        return tokens.truncate(summary or "", request.max_tokens)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(endpoint={self.endpoint.name!r}, "
            f"max_region_tokens={self.max_region_tokens})"
        )
