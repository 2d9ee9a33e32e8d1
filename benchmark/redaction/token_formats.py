"""Credential formats that announce themselves by a prefix, beyond the big providers'.

A key from GitLab, npm, Groq, xAI, SendGrid, Databricks, DigitalOcean... has no secret-named
key around it when it is pasted as an experiment name, a folder or a file's name, so only
its shape can tell it. Each entry is a regular expression of one published format (the
prefix plus the body's alphabet and length) and the lowercase hints one of which is on
every line it matches; ``detectors`` builds the ``service_token`` detector from them. The
bodies must be long and generated-looking, so ``npm_install`` or ``key-value`` never match.

Also here: the body of an ``sk-`` key in lower-case hex (DeepSeek, OpenRouter, LiteLLM and
other OpenAI-compatible gateways), which the ``openai_key`` rule's mixed-case test misses.
"""

from __future__ import annotations

import re

# (regex, hints). A match must not sit inside a longer run of letters and digits: the
# detector wraps each in the same start and end guards as the big providers' formats.
SERVICE_TOKENS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # GitLab: personal, deploy, runner, CI job, trigger, feed, OAuth, SCIM, agent tokens.
    (
        r"gl(?:pat|dt|rt|cbt|ptt|ft|oas|soat|imt|agent)-[0-9A-Za-z_-]{20,}",
        tuple(f"gl{kind}-" for kind in ("pat", "dt", "rt", "cbt", "ptt", "ft", "oas", "soat"))
        + ("glimt-", "glagent-"),
    ),
    (r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    (r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg.",)),  # SendGrid
    (r"gsk_[A-Za-z0-9]{48,}", ("gsk_",)),  # Groq
    (r"xai-[A-Za-z0-9]{40,}", ("xai-",)),  # xAI
    (r"dapi[0-9a-f]{32}(?:-\d+)?", ("dapi",)),  # Databricks
    (r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", ("pypi-",)),
    (r"do[opr]_v1_[0-9a-f]{64}", ("_v1_",)),  # DigitalOcean
    (r"shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}", ("shp",)),  # Shopify
    (r"pplx-[A-Za-z0-9]{40,}", ("pplx-",)),  # Perplexity
    (r"r8_[A-Za-z0-9]{37}", ("r8_",)),  # Replicate
    (r"ATATT3[A-Za-z0-9_=-]{50,}", ("atatt3",)),  # Atlassian API token
    (r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),  # Linear
    (r"ntn_[A-Za-z0-9]{40,}", ("ntn_",)),  # Notion
    (r"sbp_[0-9a-f]{40}", ("sbp_",)),  # Supabase
    (r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", ("pmak-",)),  # Postman
    (r"key-[0-9a-f]{32}", ("key-",)),  # Mailgun
    (r"hv[sbr]\.[A-Za-z0-9_-]{24,}", ("hvs.", "hvb.", "hvr.")),  # HashiCorp Vault
    (r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",)),  # Doppler
    (r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ("age-secret-key-",)),
    (r"\d{8,10}:AA[A-Za-z0-9_-]{33}", (":aa",)),  # Telegram bot
    # An Azure SAS URL's signature, a storage connection string's key.
    (r"(?<=[?&]sig=)[A-Za-z0-9%+/=]{20,}", ("sig=",)),
    (r"(?<=AccountKey=)[A-Za-z0-9+/=]{40,}", ("accountkey=",)),
    (r"(?<=SharedAccessKey=)[A-Za-z0-9+/=]{40,}", ("sharedaccesskey=",)),
)
SERVICE_HINTS: tuple[str, ...] = tuple(sorted({h for _, hints in SERVICE_TOKENS for h in hints}))

# A run of 20 or more letters and digits holding both: what a generator writes, not words.
_GENERATED_RUN = re.compile(r"(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{20,}")


def has_generated_run(value: str) -> bool:
    """``value`` holds a run of at least 20 letters and digits mixing both (a hex or base62
    key's body); ``sk-learn-compat-2024`` does not."""
    return _GENERATED_RUN.search(value) is not None
