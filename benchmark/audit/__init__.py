"""The judge audit: score the judge itself on answers whose correct scores are known.

``python -m benchmark +audit=judge judge=<x>`` builds answers of known content
to probes of generated sessions (:mod:`benchmark.audit.answers`), derives from
how each is built the band a correct judge's score lies in, per criterion class
(:mod:`benchmark.audit.expected`), asks the judge ``audit.samples`` times
(:mod:`benchmark.audit.run`) and reports agreement, consistency and verbosity
bias (:mod:`benchmark.audit.metrics`).
"""

from benchmark.audit.config import VARIANTS, AuditConfig

__all__ = ["VARIANTS", "AuditConfig"]
