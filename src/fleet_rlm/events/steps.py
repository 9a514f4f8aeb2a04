"""What happens inside a turn: the model's reasoning and code, REPL output, tool calls, sub-LM calls and
child RLMs. `iteration` counts RLM iterations from 1 within the emitting actor (root or one child)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleet_rlm.events.base import EventBase, JsonDict, Payload
from fleet_rlm.events.results import UsageTotals


class Reasoning(EventBase):
    """The model's reasoning for one step."""

    type: Literal["reasoning"] = "reasoning"
    text: str = Field(description="The reasoning text.")
    iteration: int = Field(default=0, ge=0, description="RLM iteration (0 outside RLM mode).")


class Code(EventBase):
    """Python the model wrote and is about to run in the REPL."""

    type: Literal["code"] = "code"
    code: str = Field(description="The cell's source code.")
    iteration: int = Field(default=0, ge=0, description="RLM iteration.")


class Output(EventBase):
    """Output of a REPL cell, one stream at a time (may arrive in several chunks)."""

    type: Literal["output"] = "output"
    stream: Literal["stdout", "stderr"] = Field(description="Which stream it was written to.")
    text: str = Field(description="The text kept (head and tail when the output was too long).")
    omitted_chars: int = Field(default=0, ge=0, description="Characters cut from the middle of long output.")
    iteration: int = Field(default=0, ge=0, description="RLM iteration.")

    @property
    def truncated(self) -> bool:
        return self.omitted_chars > 0


class ReplVariable(Payload):
    """One user-visible global of the REPL (modules, functions, classes, `_` names and tools are left out)."""

    name: str = Field(description="The variable's name.")
    type: str = Field(description="Its type's name, e.g. `list`, `DataFrame`.")
    size: int | None = Field(default=None, ge=0, description="len() (bytes for bytes-like); None when unsized.")
    preview: str = Field(description="Start of its repr (~120 chars); `<T: repr timed out>` when repr misbehaved.")
    input: bool = Field(default=False, description="True for a turn input the host put into the REPL.")


class ReplVariables(EventBase):
    """The REPL's state after a cell: its user-visible globals (the last 50 defined), sent after `output`."""

    type: Literal["repl_variables"] = "repl_variables"
    variables: list[ReplVariable] = Field(default_factory=list, description="The globals, in definition order.")
    omitted: int = Field(default=0, ge=0, description="Further visible globals left out of the report.")
    iteration: int = Field(default=0, ge=0, description="RLM iteration of the cell.")


class ReplRestored(EventBase):
    """The REPL was loaded from a snapshot before its first cell (a fork, or a resumed run): what came back and
    what did not (values that were never kept, or that the sandbox could not load again), with why."""

    type: Literal["repl_restored"] = "repl_restored"
    source: Literal["fork", "resume"] = Field(
        description="fork: the origin's REPL at the fork point; resume: this run's."
    )
    source_run_id: str = Field(description="Run whose snapshot was loaded.")
    source_iteration: int = Field(ge=0, description="Root iteration of that run the snapshot was taken after.")
    restored: list[str] = Field(default_factory=list, description="Variables loaded, by name.")
    not_restored: dict[str, str] = Field(default_factory=dict, description="Variables not loaded -> why.")


class ToolCall(EventBase):
    """A host tool is being called (ReAct tools, or a tool called from REPL code)."""

    type: Literal["tool_call"] = "tool_call"
    call_id: str = Field(description="Id linking this call to its tool_result.")
    name: str = Field(description="Tool name.")
    args: JsonDict = Field(default_factory=dict, description="Arguments (non-JSON values as strings).")


class ToolResult(EventBase):
    """A host tool returned or raised."""

    type: Literal["tool_result"] = "tool_result"
    call_id: str = Field(description="Id of the matching tool_call.")
    name: str | None = Field(default=None, description="Tool name.")
    ok: bool = Field(description="False when the tool raised.")
    result_preview: str = Field(default="", description="Start of the result's text form.")
    error: str | None = Field(default=None, description="Error message when ok is false.")
    latency_ms: int | None = Field(default=None, ge=0, description="How long the tool ran.")


class SubLMStart(EventBase):
    """A sub-LM call started (llm_query, or one prompt of llm_query_batched)."""

    type: Literal["sub_lm_start"] = "sub_lm_start"
    call_id: str = Field(description="Id linking this call to its sub_lm_end.")
    model: str = Field(description="Model called.")
    role: str = Field(default="sub", description="LM role: root, sub, delegate, router or reflection.")
    prompt_preview: str = Field(default="", description="Start of the prompt.")
    batch_id: str | None = Field(default=None, description="Groups the prompts of one llm_query_batched call.")
    batch_index: int | None = Field(default=None, ge=0, description="Position of this prompt in its batch.")
    batch_size: int | None = Field(default=None, ge=1, description="Number of prompts in the batch.")


class SubLMEnd(EventBase):
    """A sub-LM call finished or failed."""

    type: Literal["sub_lm_end"] = "sub_lm_end"
    call_id: str = Field(description="Id of the matching sub_lm_start.")
    ok: bool = Field(description="False when the call failed.")
    latency_ms: int = Field(default=0, ge=0, description="Duration of the call, retries included.")
    response_preview: str = Field(default="", description="Start of the response text.")
    tokens_in: int = Field(default=0, ge=0, description="Prompt tokens billed.")
    tokens_out: int = Field(default=0, ge=0, description="Completion tokens billed.")
    error: str | None = Field(default=None, description="Error message when ok is false.")


class LMCall(EventBase):
    """One LM call finished: the actor's own model, the router, or the model behind an llm_query prompt."""

    type: Literal["lm_call"] = "lm_call"
    call_id: str = Field(description="Id of this call (DSPy's callback call id).")
    role: str = Field(description="LM role: root, sub, delegate, router or reflection.")
    model: str = Field(description="Model called.")
    ok: bool = Field(description="False when the call raised.")
    latency_ms: int = Field(default=0, ge=0, description="Duration of the call, retries included.")
    tokens_in: int = Field(default=0, ge=0, description="Prompt tokens billed (0 for a cache hit).")
    tokens_out: int = Field(default=0, ge=0, description="Completion tokens billed (0 for a cache hit).")
    cost_usd: float = Field(default=0.0, ge=0, description="Cost from LiteLLM's price table (0 when unknown).")
    cached: bool = Field(default=False, description="True when the response cache answered.")
    iteration: int = Field(
        default=0, ge=0, description="RLM iteration whose step this call generates (0 outside RLM steps)."
    )
    sub_call_id: str | None = Field(
        default=None, description="call_id of the sub_lm_start this call answers (llm_query), else null."
    )
    prompt_preview: str = Field(default="", description="Start of the newest message of the prompt.")
    response_preview: str = Field(default="", description="Start of the response text.")
    error: str | None = Field(default=None, description="Error message when ok is false.")


class ChildStart(EventBase):
    """A child RLM was spawned (rlm_query) in its own sandbox; its events carry parent_id = child_id."""

    type: Literal["child_start"] = "child_start"
    child_id: str = Field(description="Id of the child; its own events use actor `child:{child_id}`.")
    task_preview: str = Field(default="", description="Start of the task given to the child.")
    child_depth: int = Field(ge=1, description="Depth of the child (parent's depth + 1).")


class ChildProgress(EventBase):
    """A child finished an iteration (a compact heartbeat for collapsed views)."""

    type: Literal["child_progress"] = "child_progress"
    child_id: str = Field(description="Id of the child.")
    iteration: int = Field(ge=0, description="The child's iteration that completed.")
    note: str = Field(default="", description="Short description of the step.")


class ChildEnd(EventBase):
    """A child returned to its parent (or failed)."""

    type: Literal["child_end"] = "child_end"
    child_id: str = Field(description="Id of the child.")
    ok: bool = Field(description="False when the child failed.")
    answer_preview: str = Field(default="", description="Start of the child's answer.")
    error: str | None = Field(default=None, description="Error message when ok is false.")
    usage: UsageTotals | None = Field(default=None, description="What the child consumed.")


STEP_EVENTS: tuple[type[EventBase], ...] = (
    Reasoning,
    Code,
    Output,
    ToolCall,
    ToolResult,
    SubLMStart,
    SubLMEnd,
    LMCall,
    ChildStart,
    ChildProgress,
    ChildEnd,
)
