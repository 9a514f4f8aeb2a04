"""What a turn produces: the final answer, a summary, artifacts, memory updates and usage totals.

`UsageTotals` is both the payload of the `usage` event and what `fleet_rlm.llm.UsageMeter.snapshot()`
returns, so the meter's numbers reach clients unchanged.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleet_rlm.events.base import EventBase, JsonDict, Payload


class RoleUsage(Payload):
    """Consumption of one LM role (root, sub, delegate, router, reflection)."""

    tokens_in: int = Field(default=0, ge=0, description="Prompt tokens billed.")
    tokens_out: int = Field(default=0, ge=0, description="Completion tokens billed.")
    cost_usd: float = Field(default=0.0, ge=0, description="Cost from LiteLLM's price table (0 when unknown).")
    cost_known: bool = Field(default=True, description="False when some call's model has no known price.")
    lm_calls: int = Field(default=0, ge=0, description="LM calls made (cache hits included).")
    cached_calls: int = Field(default=0, ge=0, description="Calls answered from the response cache.")
    failed_calls: int = Field(default=0, ge=0, description="Calls that raised.")
    latency_ms: int = Field(default=0, ge=0, description="Summed duration of the calls.")


class UsageTotals(Payload):
    """Totals of a run (or a child) plus the split by role."""

    tokens_in: int = Field(default=0, ge=0, description="Prompt tokens billed, all roles.")
    tokens_out: int = Field(default=0, ge=0, description="Completion tokens billed, all roles.")
    cost_usd: float = Field(default=0.0, ge=0, description="Total cost in USD (known prices only).")
    cost_known: bool = Field(default=True, description="False when some call could not be priced.")
    lm_calls: int = Field(default=0, ge=0, description="LM calls, all roles.")
    iterations: int = Field(default=0, ge=0, description="RLM iterations, children included.")
    by_role: dict[str, RoleUsage] = Field(default_factory=dict, description="The same numbers per LM role.")


class Usage(UsageTotals, EventBase):
    """Running usage of the run; emitted after steps that consumed tokens and once before the turn ends."""

    type: Literal["usage"] = "usage"


class Final(EventBase):
    """The turn's answer, with every output field of the program that produced it."""

    type: Literal["final"] = "final"
    answer: str = Field(description="The answer shown to the user.")
    fields: JsonDict = Field(default_factory=dict, description="All output fields (non-JSON values as strings).")


class Summary(EventBase):
    """A short summary of what the turn did, for session history and titles."""

    type: Literal["summary"] = "summary"
    text: str = Field(description="The summary.")


class ArtifactCreated(EventBase):
    """A file was saved to the workspace's artifacts (downloadable, listed on the session)."""

    type: Literal["artifact_created"] = "artifact_created"
    artifact_id: str | None = Field(default=None, description="Stored artifact id, when it was registered.")
    name: str = Field(description="File name.")
    path: str = Field(description="Path relative to the workspace root.")
    size_bytes: int = Field(ge=0, description="Size in bytes.")
    sha256: str = Field(description="Hex SHA-256 of the content.")
    media_type: str = Field(default="application/octet-stream", description="MIME type.")


class MemoryUpdated(EventBase):
    """Durable memory (the workspace's memory/ files) was appended to."""

    type: Literal["memory_updated"] = "memory_updated"
    path: str = Field(description="Memory file, relative to the workspace root.")
    chars_appended: int = Field(ge=0, description="Characters added.")


RESULT_EVENTS: tuple[type[EventBase], ...] = (Usage, Final, Summary, ArtifactCreated, MemoryUpdated)
