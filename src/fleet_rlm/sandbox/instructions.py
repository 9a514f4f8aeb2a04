"""What the model is told about where its code runs (dspy.RLM puts it in the action prompt), per backend.

Kept in one module so the two texts stay parallel: only the sentences about the platform differ.
"""

from __future__ import annotations

from fleet_rlm.sandbox.options import SandboxOptions


def context_instructions(context_dir: str) -> str:
    """The sentence on where this session's documents are (shared by both backends)."""
    return (
        f"CONTEXT_DIR ({context_dir}) holds this session's documents and repository clones (repos/), "
        "read-only; memory/ and artifacts/ are shared by every session of the workspace. "
        "Child processes started by a cell are killed when the cell ends (threads keep running). "
    )


def _common_tail(options: SandboxOptions) -> str:
    return (
        "Host tools, llm_query, llm_query_batched and SUBMIT are global functions; a failing host call "
        "raises ToolError. "
        f"Each execution may run {options.cell_timeout_s:g} s (then KeyboardInterrupt; state is kept) and "
        f"output beyond {options.output_max_chars} characters is elided in the middle."
    )


def local_instructions(options: SandboxOptions, isolation: str, guest_root: str, context_dir: str) -> str:
    where = (
        "inside a bubblewrap sandbox (no network, private /tmp, only the workspace is writable)"
        if isolation == "bubblewrap"
        else "in a local subprocess with resource limits only (reduced isolation)"
    )
    return (
        f"Code runs as CPython {where}. Globals, imports and functions persist across executions. "
        f"WORKSPACE_ROOT ({guest_root}) holds memory/ (MEMORIES.md), artifacts/, buffers/ and meta/, "
        "which persist across sessions; the working directory is WORKSPACE_ROOT. "
        + context_instructions(context_dir)
        + _common_tail(options)
    )


def daytona_instructions(options: SandboxOptions, guest_root: str) -> str:
    return (
        "Code runs as CPython in a Daytona cloud sandbox (its own VM-like container; network as configured). "
        "Globals, imports and functions persist across executions. "
        f"WORKSPACE_ROOT ({guest_root}) holds memory/ (MEMORIES.md), artifacts/, buffers/ and meta/, which "
        "persist across sessions on a Daytona volume; the working directory is WORKSPACE_ROOT. "
        + context_instructions("/context, or ~/.fleet-context")
        + _common_tail(options)
    )
