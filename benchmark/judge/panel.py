"""A judge panel: several judges score each reply, and their scores are combined.

One LLM judge is one opinion with its own biases; a panel of judges from
different providers (``conf/judge/panel.yaml``) is sturdier, and how much its
members agree (``benchmark.judge.agreement``) says how far any single judge's
scores can be trusted.

Members are full judge configs (any ``_target_``: LLM judges, the reference
judge), built with the job's ledger and cache. For each request every member
sees exactly the request a single judge would (the panel adds nothing, so
blinding is unchanged), all members at once. Per criterion the panel's score
is the ``combine`` rule over the members that succeeded:

* ``mean``: the arithmetic mean, not rounded (the rubric takes fractional
  scores; rounding would throw away the members' disagreement and bias it);
* ``median``: the middle score (the mean of the two middle ones for an even
  count);
* ``majority``: the most common score, a tie going to the lower score.

A member that fails (after its own retries) is left out of that judgment and
its error recorded; with fewer than ``min_members`` successes (default: a
majority of the panel) the judgment fails with the reason, never scored.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmark.config.instantiate import instantiate_target
from benchmark.errors import UserError
from benchmark.judge.base import CriterionResult, JudgeRequest, Judgment, MemberScores
from benchmark.judge.config import Combine, JudgeConfig
from benchmark.llm import UsageLedger
from benchmark.llm.connect import purpose_of
from benchmark.llm.loop import run
from benchmark.llm.reply_cache import ResponseCache
from benchmark.llm.usage import CallPurpose

COMBINE_RULES: tuple[str, ...] = ("mean", "median", "majority")
# Member names end up in metric names (judge/kappa/<a>/<b>): MLflow's characters only.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def combine_scores(rule: str, scores: Sequence[float]) -> float:
    """One criterion's panel score from its members' scores (see the module)."""
    if not scores:
        raise ValueError("no scores to combine")
    if rule == "mean":
        return sum(scores) / len(scores)
    if rule == "median":
        return float(statistics.median(scores))
    if rule == "majority":
        counts = Counter(scores)
        top = max(counts.values())
        return float(min(s for s, n in counts.items() if n == top))
    raise ValueError(f"unknown combine rule {rule!r} (choose from: {', '.join(COMBINE_RULES)})")


class PanelJudge:
    """Judges with every member concurrently and combines their scores per criterion.

    ``endpoint``: settings laid over every member that has an ``endpoint``
    (null values leave the member's own), e.g. ``judge.endpoint.base_url=...``
    sends the whole panel through one OpenAI-compatible gateway.
    """

    def __init__(
        self,
        members: Mapping[str, Mapping[str, Any]],
        combine: Combine = "mean",
        min_members: int | None = None,
        endpoint: Mapping[str, Any] | None = None,
        ledger: UsageLedger | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        if not isinstance(members, Mapping) or not members:
            raise UserError("judge.members: a panel needs at least one member (name: judge config)")
        if combine not in COMBINE_RULES:
            raise UserError(
                f"judge.combine: unknown rule {combine!r} (choose from: {', '.join(COMBINE_RULES)})"
            )
        count = len(members)
        if min_members is None:
            min_members = count // 2 + 1
        if isinstance(min_members, bool) or not isinstance(min_members, int):
            raise UserError(f"judge.min_members must be an integer, got {min_members!r}")
        if not 1 <= min_members <= count:
            raise UserError(f"judge.min_members must be between 1 and {count}, got {min_members}")
        self.combine: Combine = combine
        self.min_members = min_members
        shared = {k: v for k, v in (endpoint or {}).items() if v is not None}
        self.members: dict[str, Any] = {}
        try:
            for name, spec in members.items():
                self.members[name] = _build_member(str(name), spec, shared, ledger, cache)
        except BaseException:
            self.close()
            raise

    @property
    def CRITERIA(self) -> frozenset[str] | None:  # the name check_rubric reads
        """Criteria every member can score (None: no member restricts them)."""
        known = [getattr(m, "CRITERIA", None) for m in self.members.values()]
        sets = [frozenset(k) for k in known if k is not None]
        return frozenset.intersection(*sets) if sets else None

    def judge(self, request: JudgeRequest) -> Judgment:
        return run(self.ajudge(request))

    TRACED = True  # ajudge takes ``purpose=`` and hands it to its members

    async def ajudge(self, request: JudgeRequest, purpose: CallPurpose | None = None) -> Judgment:
        """Every member's judgment of ``request`` at once, then the combination."""
        outcomes = await asyncio.gather(
            *(_member_judgment(m, request, purpose) for m in self.members.values())
        )
        own = dict(zip(self.members, outcomes, strict=True))
        members = {name: _member_scores(j, request) for name, j in own.items()}
        ok = {name: m for name, m in members.items() if not m.failed}
        if len(ok) < self.min_members:
            reasons = "; ".join(f"{name}: {m.error}" for name, m in members.items() if m.failed)
            judgment = Judgment(
                failed=True,
                error=f"panel: {len(ok)} of {len(members)} members judged, fewer than "
                f"judge.min_members={self.min_members} ({reasons})",
                members=members,
            )
        else:
            judgment = Judgment(results=self._combined(request, ok), members=members)
        return judgment.model_copy(update={"record": self._record(judgment, own)})

    def _combined(
        self, request: JudgeRequest, ok: Mapping[str, MemberScores]
    ) -> list[CriterionResult]:
        results = []
        for criterion in dict.fromkeys(request.rubric_criteria):
            scores = [m.scores[criterion] for m in ok.values()]
            shown = ", ".join(f"{name}={m.scores[criterion]:g}" for name, m in ok.items())
            results.append(
                CriterionResult(
                    criterion=criterion,
                    score=combine_scores(self.combine, scores),
                    reasoning=f"{self.combine} of {shown}",
                )
            )
        return results

    def _record(self, judgment: Judgment, own: Mapping[str, Judgment]) -> dict[str, Any]:
        """The panel's input and output for ``judge_records.jsonl``: each member's own
        record (an LLM member's messages and raw replies) with its scores or error."""
        members = judgment.members or {}
        return {
            "judge": "panel",
            "combine": self.combine,
            "min_members": self.min_members,
            "scores": judgment.scores(),
            "failed": judgment.failed,
            "error": judgment.error,
            "members": {
                name: {**(own[name].record or {}), **members[name].model_dump()} for name in own
            },
        }

    def close(self) -> None:
        for member in self.members.values():
            close = getattr(member, "close", None)
            if callable(close):
                close()


def _build_member(
    name: str,
    spec: Mapping[str, Any],
    shared: Mapping[str, Any],
    ledger: UsageLedger | None,
    cache: ResponseCache | None,
) -> Any:
    """One member from its judge config (its ``name`` key is informational)."""
    where = f"judge.members.{name}"
    if not _NAME.match(name):
        raise UserError(f"{where}: a member name may hold only letters, digits, '_', '.', '-'")
    if not isinstance(spec, Mapping) or "_target_" not in spec:
        raise UserError(f"{where}: give a judge config with a _target_ (e.g. judge/gpt4o.yaml)")
    config = {k: v for k, v in spec.items() if k != "name"}
    if shared and isinstance(config.get("endpoint"), Mapping):
        config["endpoint"] = {**config["endpoint"], **shared}
    try:
        shared = {"ledger": ledger, "cache": cache}
        member = instantiate_target(where, where, config, JudgeConfig.targets, shared)
    except UserError as exc:
        message = str(exc)
        raise UserError(message if message.startswith(where) else f"{where}: {message}") from None
    if not callable(getattr(member, "judge", None)):
        raise UserError(f"{where}._target_ {config['_target_']} has no 'judge' method")
    return member


async def _member_judgment(
    member: Any, request: JudgeRequest, purpose: CallPurpose | None = None
) -> Judgment:
    """The member's ``ajudge`` when it has one, else ``judge`` on a worker thread; an
    exception is a failed judgment, as for a single judge."""
    try:
        ajudge = getattr(member, "ajudge", None)
        if ajudge is not None:
            return await ajudge(request, **purpose_of(member, purpose))
        return await asyncio.to_thread(member.judge, request)
    except Exception as exc:
        return Judgment(failed=True, error=f"{type(exc).__name__}: {exc}")


def _member_scores(judgment: Judgment, request: JudgeRequest) -> MemberScores:
    """A member's scores, failed when it failed or did not score every requested
    criterion on the scale (a combination must not mix in a partial judgment)."""
    if judgment.failed:
        return MemberScores(failed=True, error=judgment.error or "failed")
    scores = judgment.scores()
    missing = [c for c in dict.fromkeys(request.rubric_criteria) if c not in scores]
    if missing:
        return MemberScores(failed=True, error=f"no score for {missing}")
    off = {c: s for c, s in scores.items() if not 0 <= s <= request.scale_max}
    if off:
        return MemberScores(failed=True, error=f"scores off 0..{request.scale_max}: {off}")
    return MemberScores(scores={c: scores[c] for c in dict.fromkeys(request.rubric_criteria)})
