"""The task-success arm's config blocks: ``task`` (which tau2 tasks, step caps, resumes in
flight) and the ``agent`` and ``user`` roles (an endpoint each, or the scripted stub)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class TaskConfig(BaseModel):
    """``conf/task/``: the environment's tasks and how far a resume may go."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field("tau2", description="the task source (tau2-bench)")
    tasks: list[str] = Field(
        min_length=1,
        max_length=10_000,
        description="tau2 tasks as domain/id (airline/1, retail/0); sessions are made of them "
        "unless transcript=files points at tau2 results.json logs",
    )
    max_steps: int = Field(
        30, gt=0, le=1000, description="turns (agent and customer) a resume may take"
    )
    session_max_steps: int = Field(
        60, gt=0, le=1000, description="turns a generated session may take"
    )
    max_resumes_in_flight: int = Field(
        32,
        gt=0,
        le=10_000,
        description="resumes (and session runs) at once; each holds an environment "
        "(an airline database is ~35 MB)",
    )
    control: bool = Field(
        True, description="also resume every point from the uncompacted history (the control)"
    )

    @field_validator("tasks")
    @classmethod
    def _domain_and_id(cls, value: list[str]) -> list[str]:
        from benchmark.task_success.tau2_env import REPLAY_DOMAINS

        for ref in value:
            domain, slash, task_id = str(ref).partition("/")
            if not slash or not task_id or domain not in REPLAY_DOMAINS:
                raise ValueError(
                    f"each task is domain/id with a domain of {', '.join(REPLAY_DOMAINS)} "
                    f"(got {str(ref)[:80]!r})"
                )
        return value


class RoleConfig(BaseModel):
    """``conf/agent/`` and ``conf/user/``: an endpoint, or the scripted loopback stub."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(description="label of the role's option")
    endpoint: dict[str, Any] = Field(description="an LLM endpoint (conf/endpoint/), checked whole")
    scripted: Literal["context", "repeat", "known_info"] | None = Field(
        None,
        description="play the role with the scripted stub started in this process (NOT a "
        "measurement): the agent's context or repeat policy, the customer's known_info",
    )
