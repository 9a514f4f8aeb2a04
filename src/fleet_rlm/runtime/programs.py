"""Versioned program instructions: which instructions the RLM action/extract steps, the router, the direct
answer and the ReAct tools agent run with.

The optimizer (GEPA) produces new instruction texts; the API stores them and hands the runtime a
`ProgramRegistry`. `TurnRequest.program_versions` pins a version per module; otherwise the registry's active
version is used, and without one the built-in text ("builtin-1").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

BUILTIN_VERSION = "builtin-1"

RLM_ACTION = "rlm.action"
RLM_EXTRACT = "rlm.extract"
RLM_TASK = "rlm.task"
ROUTER = "router"
DIRECT = "direct"
TOOLS = "tools"
MODULES = (RLM_TASK, RLM_ACTION, RLM_EXTRACT, ROUTER, DIRECT, TOOLS)


@dataclass(frozen=True)
class ProgramSpec:
    """Instructions of one module at one version. Empty `instructions` means DSPy's own generated text."""

    module: str
    version: str
    instructions: str


class ProgramRegistry(Protocol):
    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        """The module's instructions at `version` (None: the active version); None when unknown."""
        ...


BUILTIN_INSTRUCTIONS: dict[str, str] = {
    RLM_TASK: (
        "Complete the user's task. `context` holds the documents the user attached (it may be huge: explore it "
        "with code, never print it whole); `history` holds earlier turns of this conversation. Durable notes "
        "live in WORKSPACE_ROOT/memory/MEMORIES.md (read it when useful; append what future turns should know). "
        "Files written to WORKSPACE_ROOT/artifacts/ are shown to the user. Use rlm_query(task, context=None) to "
        "hand a self-contained sub-task to a child agent with its own REPL (rlm_query_batched for several in "
        "parallel)."
    ),
    RLM_ACTION: "",
    RLM_EXTRACT: "",
    ROUTER: (
        "Choose how to handle the user's task. direct: a short answer from knowledge and the conversation, no "
        "tools. tools: needs to read attachments or workspace files, fetch a URL or use memory, with a few tool "
        "calls. rlm: long or many documents, computation, or many steps of analysis in a Python REPL. Prefer the "
        "cheapest mode that will answer well."
    ),
    DIRECT: "Answer the user's task directly and accurately, using the conversation history and any context given.",
    TOOLS: (
        "Answer the user's task. Use the tools to read attachments, workspace files and memory, to fetch URLs, "
        "and delegate_to_rlm for heavy analysis of large data. Finish as soon as you can answer."
    ),
}


class BuiltinPrograms:
    """The registry used when the caller provides none: every module at "builtin-1"."""

    def get(self, module: str, version: str | None = None) -> ProgramSpec | None:
        if module not in BUILTIN_INSTRUCTIONS or version not in (None, BUILTIN_VERSION):
            return None
        return ProgramSpec(module, BUILTIN_VERSION, BUILTIN_INSTRUCTIONS[module])


def resolve_program(module: str, pinned: Mapping[str, str], registry: ProgramRegistry | None = None) -> ProgramSpec:
    """The spec to run: the pinned version, else the registry's active one, else the built-in."""
    version = pinned.get(module)
    if registry is not None:
        spec = registry.get(module, version)
        if spec is not None:
            return spec
    builtin = BuiltinPrograms().get(module)
    assert builtin is not None, f"unknown program module {module!r}"
    return builtin
