"""The scoring rubric: criteria grouped into dimensions, and how scores roll up."""

from benchmark.rubric.models import Rubric, Scores, aggregate

__all__ = ["Rubric", "Scores", "aggregate"]
