"""Registry of feature requests a session can plant (see feature_model for the shape)."""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmark.transcript.synthetic import features_api, features_http, features_infra
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


TITLES: dict[str, Callable[[Project], str]] = {
    "cache": lambda p: f"add a response cache in front of the {p.theme.vendor} client",
    "retry": lambda p: f"retry {p.theme.vendor} calls on 429 and 5xx responses",
    "export": lambda p: f"add a CSV export of {p.main.plural}",
    "ratelimit": lambda p: "rate-limit the public API per client",
    "audit": lambda p: f"keep an audit trail of {p.main.name} changes",
    "pagination": lambda p: f"switch GET /{p.main.plural} to cursor pagination",
    "health": lambda p: "add a /health endpoint for the load balancer",
}
