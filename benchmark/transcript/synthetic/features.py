"""Registry of feature requests a session can plant (see feature_model for the shape)."""

from __future__ import annotations

import random
from collections.abc import Callable

import benchmark.transcript.synthetic.features_api as features_api
import benchmark.transcript.synthetic.features_http as features_http
import benchmark.transcript.synthetic.features_infra as features_infra
from benchmark.transcript.synthetic.feature_model import Feature
from benchmark.transcript.synthetic.project import Project

FEATURES: dict[str, Callable[[Project, random.Random], Feature]] = {
    "cache": features_infra.cache,
    "retry": features_infra.retry,
    "export": features_infra.export,
    "ratelimit": features_api.ratelimit,
    "audit": features_api.audit,
    "pagination": features_http.pagination,
    "health": features_http.health,
}
