"""What a judge cannot measure for a given answerer, so a job leaves it out of its roll-up.

A criterion that every answer of an answerer is bound to get the same score on
tells policies apart by nothing and only lifts every overall. The offline
reference judge scores ``instruction_format`` from the answer's length and
``instruction_constraints`` from invented identifiers; the extractive answerer
answers with context values within a token budget, so both are constant for it
(full marks for any answer, zero for an abstention, which its other criteria
already score zero). A judge declares such criteria with
``unmeasured_criteria(answerer)``; a dimension all of whose criteria it
declares is reported as "not measured offline" and left out of the overall.
LLM judges declare nothing: they score all six dimensions.
"""

from __future__ import annotations

from typing import Any

from benchmark.rubric import Rubric

# How a scorecard or a run names a dimension left out (why: the module docstring).
NOTE = (
    "not measured offline (the judge gives every answer of this answerer the same score "
    "on it; left out of the overall)"
)


def not_measured(rubric: Rubric, judge: Any, answerer: Any) -> list[str]:
    """Dimensions of ``rubric`` that ``judge`` cannot tell apart for ``answerer``'s answers."""
    declare = getattr(judge, "unmeasured_criteria", None)
    criteria = frozenset(declare(answerer)) if callable(declare) else frozenset()
    if not criteria:
        return []
    dims = rubric.dimensions_within(criteria)
    return dims if len(dims) < len(rubric.dimensions) else []  # an overall needs one dimension
