"""Turn a client's input into the runtime's `TurnRequest`: context sources (the session's held ones first, see
`held_sources`, then the turn's own), earlier turns, the running summary.

What it needs from the database is read with the run's creation (`read_turn_inputs`, in the same transaction);
the request is then built without the database. Attachments are resolved there (they are rows the caller must
own); everything else is passed by reference and loaded by the runtime's context loaders inside the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from fleet_rlm.config import Settings
from fleet_rlm.errors import NotFound
from fleet_rlm.mcp_servers import McpServerSpec
from fleet_rlm.optimize.programs_db import program_pins
from fleet_rlm.runtime.contracts import ContextSource, HistoryTurn, TurnOptions, TurnRequest
from fleet_rlm.runtime.repl_snapshots import ReplRestore
from fleet_rlm.sandbox import ensure_roots
from fleet_rlm.services.lms import UserLMConfig, load_config, session_profile_of, turn_lm_provider
from fleet_rlm.services.mcp_servers import turn_specs
from fleet_rlm.services.snapshots import fork_restore
from fleet_rlm.services.turns.held_sources import held_context, is_held
from fleet_rlm.services.turns.inputs import TurnInput
from fleet_rlm.store.models import Attachment, ChatSession, Run, SessionSource, Turn
from fleet_rlm.store.repos import attachments as attachments_repo
from fleet_rlm.store.repos import session_sources as session_sources_repo
from fleet_rlm.store.repos import sessions as sessions_repo
from fleet_rlm.store.repos import snapshots as snapshots_repo
from fleet_rlm.store.repos import turns as turns_repo
from fleet_rlm.store.repos import workspaces as workspaces_repo

if TYPE_CHECKING:
    from fleet_rlm.services.turns.run_deps import Caller, RunDeps

HISTORY_TURNS = 50


def attachment_source(attachment: Attachment, data_dir: Path) -> ContextSource:
    if attachment.kind == "url" and attachment.source_url:
        return ContextSource(kind="url", name=attachment.name, url=attachment.source_url, attachment_id=attachment.id)
    stored = Path(attachment.storage_path)
    path = stored if stored.is_absolute() else data_dir / stored
    return ContextSource(
        kind="file",
        name=attachment.name,
        path=str(path),
        media_type=attachment.media_type,
        attachment_id=attachment.id,
    )


@dataclass(frozen=True)
class TurnReads:
    """What a turn's request needs from the database, read in the transaction that creates its run (before its
    first write, so SQLite's write gate is not held for them): a started turn reads nothing more before it runs.
    A second session after the start queued, in a burst of starts, behind every later start for a pooled
    connection (the starts hold theirs while they wait for the write gate)."""

    attachments: tuple[ContextSource, ...]
    turns: tuple[Turn, ...]
    lm_config: UserLMConfig
    pins: dict[str, str]
    mcp_servers: tuple[McpServerSpec, ...]
    held: tuple[SessionSource, ...] = ()
    """The context sources the session holds (added by earlier turns, not removed)."""
    restore: ReplRestore | None = None  # a fork's first sandbox loads its origin's REPL (services/snapshots.py)

    @property
    def turn_index(self) -> int:
        """The index the started turn gets (its INSERT computes the same: one more than the last)."""
        return max((turn.index for turn in self.turns), default=-1) + 1

    def index_of(self, turn_id: str | None) -> int:
        """The run's turn's index: its row when these were read after it was added (a queued or resumed run's
        rebuild), else the index it gets (`turn_index`)."""
        return next((turn.index for turn in self.turns if turn.id == turn_id), self.turn_index)


async def read_turn_inputs(
    session: AsyncSession,
    settings: Settings,
    *,
    user_id: str,
    session_id: str,
    data: TurnInput,
    chat: ChatSession | None = None,
) -> TurnReads:
    """Raises NotFound (`attachment_not_found`) for an attachment the caller does not own: the turn is refused."""
    attachments = []
    for attachment_id in data.attachment_ids:
        attachment = await attachments_repo.get_attachment(session, user_id=user_id, attachment_id=attachment_id)
        if attachment is None:
            raise NotFound(
                f"attachment {attachment_id} not found",
                code="attachment_not_found",
                action="upload it again with POST /api/v1/attachments",
            )
        attachments.append(attachment_source(attachment, settings.data_dir))
    turns = tuple(await turns_repo.list_turns(session, session_id=session_id))
    return TurnReads(
        attachments=tuple(attachments),
        turns=turns,
        lm_config=await load_config(session, user_id=user_id),
        pins=await program_pins(session, user_id=user_id),  # the user's promoted versions, else global
        mcp_servers=await turn_specs(session, settings, user_id=user_id),
        held=tuple(await session_sources_repo.list_sources(session, session_id=session_id)),
        restore=await fork_restore(session, chat, turns) if chat is not None else None,
    )


async def rebuild_turn(
    session: AsyncSession, settings: Settings, run: Run
) -> tuple[Caller, TurnInput, ChatSession, TurnReads]:
    """What `start` had in hand, read back from the database for a run a queue worker claimed (the job carries the
    run id only): the input kept with the run (`run_requests`), its workspace, the session, `read_turn_inputs`."""
    from fleet_rlm.services.turns.run_deps import Caller

    chat = await sessions_repo.get_session(session, user_id=run.user_id, session_id=run.session_id)
    kept = await snapshots_repo.get_request(session, run_id=run.id)
    if chat is None or kept is None:
        raise NotFound(f"the session or input of run {run.id} is gone", code="run_input_missing")
    workspace = await workspaces_repo.get_workspace(session, user_id=run.user_id, workspace_id=kept.workspace_id)
    if workspace is None:
        raise NotFound(f"the workspace of run {run.id} is gone", code="run_input_missing")
    data = TurnInput.model_validate(kept.turn_input)
    reads = await read_turn_inputs(
        session, settings, user_id=run.user_id, session_id=run.session_id, data=data, chat=chat
    )
    # the workspace under this machine's data dir (the API's path may be another mount of the same shared tree)
    roots = ensure_roots(settings.workspaces_dir, workspace.id)
    caller = Caller(user_id=run.user_id, workspace_id=workspace.id, workspace_dir=roots.host_root)
    return caller, data, chat, reads


def build_turn_request(
    service: RunDeps, caller: Caller, run: Run, data: TurnInput, chat: ChatSession, reads: TurnReads
) -> TurnRequest:
    """The runtime's request from the run, its input and what was read with it (no database access)."""
    own = list(reads.attachments)
    if data.context_text:
        own.append(ContextSource(kind="text", name="pasted text", text=data.context_text))
    own.extend(ContextSource(kind="url", name=url, url=url) for url in data.urls)
    if data.repo_url:
        own.append(ContextSource(kind="repo", name=data.repo_url, url=data.repo_url, ref=data.repo_ref))
    own.extend(ContextSource(kind="path", name=path, path=path) for path in data.context_paths)
    held = held_context(reads.held)
    sources = held + [source for source in own if not is_held(source, held)]
    history = tuple(
        HistoryTurn(user_message=turn.user_message, answer=turn.answer or "")
        for turn in reads.turns
        if turn.id != run.turn_id and turn.answer
    )[-HISTORY_TURNS:]
    # budgets and mode were resolved once, when the run was created (service.start): the turn's input over the
    # user's runtime settings over the server's; a run stored before budgets were complete gets the server's rest
    budgets = service.settings.turn_budgets().over(run.budgets)
    options = TurnOptions(
        execution_mode=run.execution_mode,  # type: ignore[arg-type]
        skills=tuple(data.skills),
        **budgets.model_dump(),
    )
    return TurnRequest(
        run_id=run.id,
        turn_id=run.turn_id,
        session_id=run.session_id,
        user_id=caller.user_id,
        workspace_id=caller.workspace_id,
        workspace_dir=caller.workspace_dir,
        task=data.content,
        options=options,
        sources=tuple(sources),
        history=history,
        session_summary=chat.summary or "",
        lm_provider=turn_lm_provider(service.settings, reads.lm_config, session_profile_of(chat.settings)),
        program_versions=reads.pins,
        mcp_servers=reads.mcp_servers,
        restore=reads.restore,
    )
