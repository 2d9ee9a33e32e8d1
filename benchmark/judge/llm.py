"""The LLM judge: an OpenAI-compatible model grades each reply, blind to the policy.

Two modes. ``rubric`` asks for a 0..scale_max score with reasoning on every
requested criterion (the seed's ``criterionResults`` output). ``2_1_0`` asks
for one correct / partial / wrong verdict against the gold (the compaction
harness's judge) and reports it as ``recall_correctness``.

A reply that cannot be trusted (not JSON, a requested criterion missing, a
score off the scale) is asked for again; when the retries run out the
judgment is *failed*, never scored 0, so a flaky judge cannot pass for a bad
policy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.judge.base import CriterionResult, JudgeRequest, Judgment
from benchmark.judge.config import JudgeMode
from benchmark.judge.prompts import CRITERIA as CRITERION_TEXTS
from benchmark.judge.prompts import rubric_messages, verdict_messages
from benchmark.llm import Endpoint, LLMError, UsageLedger
from benchmark.llm.connect import LLMStage, token_budget
from benchmark.llm.json_reply import extract_json, strict_object
from benchmark.llm.loop import run
from benchmark.llm.prompting import render_context
from benchmark.llm.reply_cache import ResponseCache
from benchmark.llm.usage import CallPurpose

VERDICT_CRITERION = "recall_correctness"
VERDICTS: dict[str, int] = {"correct": 2, "partial": 1, "wrong": 0}


def _number(value: Any, where: str, scale_max: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: score {value!r} is not a number")
    if not 0 <= value <= scale_max:
        raise ValueError(f"{where}: score {value!r} is outside 0..{scale_max}")
    return float(value)


def parse_rubric(text: str, criteria: Sequence[str], scale_max: int) -> list[CriterionResult]:
    """Scores for exactly ``criteria``, in their order; unknown criteria are ignored."""
    data = extract_json(text)
    items = data.get("criterionResults")
    if not isinstance(items, list):
        raise ValueError("reply has no 'criterionResults' list")
    found: dict[str, CriterionResult] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        name = item.get("criterionId")
        if name not in criteria or name in found:
            continue
        score = _number(item.get("score"), str(name), scale_max)
        reasoning = item.get("reasoning")
        found[name] = CriterionResult(
            criterion=name, score=score, reasoning=reasoning if isinstance(reasoning, str) else ""
        )
    missing = [c for c in criteria if c not in found]
    if missing:
        raise ValueError(f"reply lacks criteria {missing}")
    return [found[c] for c in criteria]


def parse_verdict(text: str, scale_max: int) -> list[CriterionResult]:
    """One ``recall_correctness`` result: correct = scale_max, partial = half, wrong = 0."""
    data = extract_json(text)
    verdict = data.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in VERDICTS:
        raise ValueError(f"verdict {verdict!r} is not one of {sorted(VERDICTS)}")
    points = VERDICTS[verdict.strip().lower()]
    reasoning = data.get("reasoning")
    return [
        CriterionResult(
            criterion=VERDICT_CRITERION,
            score=scale_max * points / 2,
            reasoning=reasoning if isinstance(reasoning, str) else "",
        )
    ]


def rubric_schema(criteria: Sequence[str], scale_max: int) -> dict[str, Any]:
    item = strict_object(
        {
            "criterionId": {"type": "string", "enum": list(criteria)},
            "reasoning": {"type": "string"},
            "score": {"type": "integer", "minimum": 0, "maximum": scale_max},
        }
    )
    return strict_object({"criterionResults": {"type": "array", "items": item}})


VERDICT_SCHEMA: dict[str, Any] = strict_object(
    {"reasoning": {"type": "string"}, "verdict": {"type": "string", "enum": list(VERDICTS)}}
)


class LLMJudge(LLMStage):
    """Grades a ``JudgeRequest`` with an LLM; it sees nothing but the request.

    Every judgment carries its ``record``: the input messages, each raw reply,
    the parsed scores and the error, for the tracker to log.
    """

    CRITERIA: frozenset[str] = frozenset(CRITERION_TEXTS)

    def __init__(
        self,
        endpoint: Endpoint | Mapping[str, Any],
        mode: JudgeMode = "rubric",
        max_context_tokens: int = 60000,
        ledger: UsageLedger | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        if mode == 210 and not isinstance(mode, bool):
            mode = "2_1_0"  # YAML and Hydra overrides read an unquoted 2_1_0 as the int 210
        if mode not in ("rubric", "2_1_0"):
            raise ValueError(f"judge mode must be 'rubric' or '2_1_0', got {mode!r}")
        token_budget("max_context_tokens", max_context_tokens)
        super().__init__(endpoint, "judge", ledger, cache)
        self.mode: JudgeMode = mode
        self.max_context_tokens = max_context_tokens
        if mode == "2_1_0":
            self.CRITERIA = frozenset({VERDICT_CRITERION})

    def judge(self, request: JudgeRequest) -> Judgment:
        return run(self.ajudge(request))

    async def ajudge(self, request: JudgeRequest, purpose: CallPurpose | None = None) -> Judgment:
        """The judgment, with its ``record`` (input messages, every raw reply, scores);
        ``purpose`` (the probe judged) is recorded with the call, never sent."""
        criteria = self._criteria(request)
        raw: list[str] = []
        messages: list[dict[str, str]] = []
        if self.mode == "rubric":
            schema = rubric_schema(criteria, request.scale_max)

            def parse(text: str) -> list[CriterionResult]:
                raw.append(text)
                return parse_rubric(text, criteria, request.scale_max)

        else:
            schema = VERDICT_SCHEMA

            def parse(text: str) -> list[CriterionResult]:
                raw.append(text)
                return parse_verdict(text, request.scale_max)

        try:
            messages = self.messages(request, criteria, schema)
            _, results = await self.client.acomplete(
                messages, schema=schema, parse=parse, purpose=purpose
            )
        except LLMError as exc:
            judgment = Judgment(failed=True, error=str(exc))
        else:
            judgment = Judgment(results=results or [])
        return judgment.model_copy(update={"record": self._record(messages, raw, judgment)})

    def messages(
        self, request: JudgeRequest, criteria: Sequence[str], schema: dict[str, Any]
    ) -> list[dict[str, str]]:
        """The exact chat messages sent: the rubric prompt with as much of the context as
        ``max_context_tokens`` and the endpoint's window allow (newest part kept)."""
        if self.mode == "2_1_0":
            return self.window.check(verdict_messages(request), schema=schema)
        return self.window.fit(
            self.max_context_tokens,
            lambda budget: render_context(request.compacted_context, budget),
            lambda context: rubric_messages(request, context, criteria),
            schema=schema,
        )

    def _criteria(self, request: JudgeRequest) -> list[str]:
        if request.scale_max <= 0:
            raise ValueError(f"scale_max must be > 0, got {request.scale_max}")
        criteria = list(dict.fromkeys(request.rubric_criteria))
        if not criteria:
            raise ValueError("the judge request lists no rubric criteria")
        if self.mode == "2_1_0" and criteria != [VERDICT_CRITERION]:
            raise ValueError(
                f"LLMJudge mode '2_1_0' scores only ['{VERDICT_CRITERION}'], but the request "
                f"asks for {criteria} (use rubric=recall_2_1_0)"
            )
        unknown = [c for c in criteria if c not in self.CRITERIA]
        if unknown:
            raise ValueError(
                f"LLMJudge: unknown criterion {unknown[0]!r} "
                f"(supported: {', '.join(sorted(self.CRITERIA))})"
            )
        return criteria

    def _record(
        self, messages: list[dict[str, str]], raw: list[str], judgment: Judgment
    ) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint.name,
            "model": self.endpoint.model,
            "mode": self.mode,
            "messages": messages,
            "raw_outputs": list(raw),
            "scores": judgment.scores(),
            "failed": judgment.failed,
            "error": judgment.error,
        }
