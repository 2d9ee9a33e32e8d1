"""One reply of an endpoint, as every role and the structured-output ladder read it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from benchmark.llm.endpoint import StructuredOutput


class Completion(BaseModel):
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    response_format: StructuredOutput = "none"
    finish_reason: str | None = Field(None, description="the server's; 'length': cut")

    @property
    def truncated(self) -> bool:
        """The reply stopped at ``max_tokens``."""
        return self.finish_reason == "length"
