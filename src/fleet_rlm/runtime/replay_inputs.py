"""The recorded inputs of a turn, validated before a replay rebuilds the turn from them.

A recording's inputs (`lm_exchange.turn_inputs`, plus the models and program versions the turn used) are stored
as JSON; a replay reads them back through `RecordedInputs.parse`, which accepts exactly the recorded shape:
known fields only, each of its type, a source's kind one of the known kinds, a workspace path relative and
without `..`, an attachment named by id. Anything else (a key the recording never writes, a missing task, a path
that climbs out) is refused with `recording_invalid` and nothing runs. The recorded `session_id` and
`workspace_id` say where the run ran; a replay never uses them (it runs in a scratch session and reads context
from the caller's own workspace and attachments).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fleet_rlm.errors import InvalidInput
from fleet_rlm.runtime.contracts import ContextSource, HistoryTurn, TurnOptions, TurnRequest
from fleet_rlm.sandbox import guestfs

INVALID = "recording_invalid"


class RecordedLM(BaseModel):
    """What a role's LM presented when the run was recorded (`lm_exchange.lm_identity`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())

    model: str
    model_type: str = "chat"
    supports_function_calling: bool = False
    supports_reasoning: bool = False
    supports_response_schema: bool = False
    supported_params: list[str] = Field(default_factory=list)


class RecordedInputs(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task: str
    options: TurnOptions = Field(default_factory=TurnOptions)
    sources: list[ContextSource] = Field(default_factory=list)
    history: list[HistoryTurn] = Field(default_factory=list)
    session_summary: str = ""
    program_versions: dict[str, str] = Field(default_factory=dict)
    programs_used: dict[str, str] = Field(default_factory=dict)
    session_id: str | None = None
    workspace_id: str | None = None
    lm_models: dict[str, RecordedLM] = Field(default_factory=dict)

    @field_validator("sources")
    @classmethod
    def _sources_are_references(cls, sources: list[ContextSource]) -> list[ContextSource]:
        for source in sources:
            if source.kind == "path":
                try:
                    parts = guestfs.parts_of(source.path or "")
                except guestfs.GuestPathError as exc:
                    raise ValueError(f"the workspace path {exc.why}") from None
                if not parts:
                    raise ValueError("a workspace path source needs a path")
            elif source.kind == "file" and not source.attachment_id:
                raise ValueError("a file source needs the id of its attachment")
        return sources

    @classmethod
    def parse(cls, raw: Any, *, run_id: str) -> RecordedInputs:
        """The validated inputs, or `recording_invalid` (422) naming the first field that does not validate."""
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "inputs"
            raise InvalidInput(
                f"the recording of run {run_id} has invalid inputs ({where}: {first['msg']})"[:300],
                code=INVALID,
                action="this run cannot be replayed; record it again by running the turn again",
            ) from None

    def request(self, *, sources: tuple[ContextSource, ...], **fields: Any) -> TurnRequest:
        """The turn to replay: these inputs with the caller's `sources` (resolved again, never the recorded host
        paths) and `fields` (ids, workspace, LM provider, program pins of the replay)."""
        return TurnRequest(
            task=self.task,
            options=self.options,
            sources=sources,
            history=tuple(self.history),
            session_summary=self.session_summary,
            **fields,
        )

    def models(self) -> dict[str, dict[str, Any]]:
        """role -> the recorded LM identity, as `replay_lm.ReplayProvider` takes it."""
        return {role: identity.model_dump() for role, identity in self.lm_models.items()}
