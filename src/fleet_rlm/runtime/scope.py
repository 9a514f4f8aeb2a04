"""`TurnScope`: what every part of one turn shares (settings, budgets, LMs, sandbox access, programs, and the
root's `LatestStep`, from which a partial answer is built when a budget stops the turn)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fleet_rlm.config import Settings
from fleet_rlm.runtime.control import TurnControl
from fleet_rlm.runtime.latest_step import LatestStep
from fleet_rlm.runtime.lms import TurnLMs
from fleet_rlm.runtime.programs import DIRECT, RLM_TASK, TOOLS, ProgramRegistry, ProgramSpec, resolve_program
from fleet_rlm.runtime.workspace import ArtifactWatcher
from fleet_rlm.sandbox import SandboxPool
from fleet_rlm.sandbox.context_view import ensure_session_context
from fleet_rlm.sandbox.factory import InterpreterFactory, interpreter_factory

if TYPE_CHECKING:
    from fleet_rlm.runtime.mcp_tools import McpToolbox
    from fleet_rlm.runtime.repl_snapshots import ReplRestore, ResumePoint

SKILL_MODULES = (RLM_TASK, DIRECT, TOOLS)


@dataclass
class TurnScope:
    settings: Settings
    control: TurnControl
    lms: TurnLMs
    workspace_id: str
    workspace_root: Path
    session_id: str
    pool: SandboxPool | None
    watcher: ArtifactWatcher
    program_versions: Mapping[str, str] = field(default_factory=dict)
    registry: ProgramRegistry | None = None
    progress: LatestStep = field(default_factory=LatestStep)
    used_programs: dict[str, str] = field(default_factory=dict)
    skills: str = ""
    mcp: McpToolbox | None = None
    restore: ReplRestore | None = None
    """The state the root REPL starts from (a fork's first turn)."""
    resume: ResumePoint | None = None
    """An interrupted run continued: its recorded first iterations, then its last snapshot."""
    on_live: Any = None
    """Called once when a resumed run's root runs its first cell live (the turn's events are heard again)."""

    def mcp_tools(self) -> list[Any]:
        """The turn's allow-listed MCP tools (connected on first use); none when no server is configured."""
        return self.mcp.tools() if self.mcp is not None else []

    def program(self, module: str) -> ProgramSpec:
        spec = resolve_program(module, self.program_versions, self.registry)
        self.used_programs[module] = spec.version
        if self.skills and module in SKILL_MODULES:  # the selected skill cards extend the task instructions
            spec = replace(spec, instructions=f"{spec.instructions}\n\n{self.skills}".strip())
        return spec

    @property
    def context_dir(self) -> Path:
        """This session's host-only context directory (documents, repo clones); created on first use."""
        return ensure_session_context(self.settings.data_dir, self.session_id)

    def sandbox_factory(self, *, session_id: str | None) -> InterpreterFactory:
        """The sandbox factory: the session's warm REPL (session_id) or a fresh isolated one (None: a child).

        It runs on the pool's backend (chosen once from settings), so its execution instructions and isolation
        check are that backend's. Either way the sandbox sees this turn's session context read-only (a nested
        child reads its parent's documents) and nothing of other sessions."""
        return interpreter_factory(
            pool=self.pool,
            settings=self.settings,
            session_id=session_id,
            workspace_id=self.workspace_id,
            context_session=self.session_id,
            parent_id=self.session_id if session_id is None else None,
            returns="transcript",  # the model and the UI see a cell's prints and its last value together
            batch_concurrency=self.control.limits.batch_concurrency,
        )
