"""The scoring rubric: criteria grouped into dimensions, and how scores roll up."""

from benchmark.rubric.models import JUDGE_FREE_TYPES, Rubric, Scores, aggregate

__all__ = ["JUDGE_FREE_TYPES", "Rubric", "Scores", "aggregate"]
