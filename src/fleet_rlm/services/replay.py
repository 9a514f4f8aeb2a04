"""Replay a recorded run offline and say whether it is identical, or where it first diverged.

The run's turn is rebuilt from its recorded inputs (task, context sources, earlier turns, summary, options,
program pins — never from the session's current state), validated first (`runtime/replay_inputs.py`:
`recording_invalid` otherwise), and executed by the server's runtime like any turn (in a turn worker process)
with the same sandbox code and tools, but every LM is a `ReplayLM` answering from the recording by request hash,
so no request reaches a model. The replay runs in a scratch session and workspace (never the user's: a replay
must not append to their memory or add artifacts), which are removed afterwards; it is not persisted as a run.
What it stages is the caller's own: workspace files are read from the caller's workspace (fd-relative, links
refused, as a live turn reads them), attachments are the caller's rows looked up again by id; nothing recorded is
taken as a location. `program_version` swaps in another saved program version to see what a prompt change does
to a recorded run.
"""

from __future__ import annotations

import asyncio
import difflib
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fleet_rlm.config import Settings
from fleet_rlm.errors import Conflict, FleetError, NotFound
from fleet_rlm.events.status import FINAL
from fleet_rlm.optimize.programs_db import specs_of
from fleet_rlm.runtime.context.wspath import read_workspace_bytes, workspace_entry
from fleet_rlm.runtime.contracts import CancelToken, ContextSource, Runtime
from fleet_rlm.runtime.lm_exchange import LMExchange
from fleet_rlm.runtime.programs import BUILTIN_VERSION, MODULES
from fleet_rlm.runtime.replay_inputs import RecordedInputs
from fleet_rlm.runtime.replay_lm import ReplayBook, ReplayProvider
from fleet_rlm.runtime.workspace import prepare_workspace
from fleet_rlm.sandbox import guestfs
from fleet_rlm.sandbox.context_view import remove_session_context
from fleet_rlm.services.recordings import as_exchanges
from fleet_rlm.services.turns.sources import attachment_source
from fleet_rlm.store import Database
from fleet_rlm.store.repos import attachments as attachments_repo
from fleet_rlm.store.repos import programs as programs_repo
from fleet_rlm.store.repos import recordings as recordings_repo
from fleet_rlm.store.repos import runs as runs_repo

NETWORK_SOURCES = ("url", "repo")


@dataclass
class ReplayReport:
    run_id: str
    result: str  # "identical" | "diverged"
    program_versions: dict[str, str]
    calls_recorded: int
    calls_replayed: int
    truncated: bool
    status_recorded: str | None
    status_replayed: str
    answer_recorded: str
    answer_replayed: str
    divergence: dict[str, Any] | None = None
    duration_ms: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.result == "identical"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _CountingSink:
    """The replay's events are not stored; only the count and the error matter."""

    def __init__(self) -> None:
        self.count = 0
        self.error: str | None = None

    def emit(self, event: Any) -> None:
        self.count += 1
        if event.type == "error":
            self.error = f"{event.code}: {event.message}"


async def load(database: Database, *, user_id: str, run_id: str) -> tuple[Any, Any, list[LMExchange]]:
    """The caller's finished, recorded run: (run, recording, exchanges). Raises a FleetError otherwise."""
    async with database.session() as session:
        run = await runs_repo.get_run(session, run_id=run_id)
        if run is None or run.user_id != user_id:
            raise NotFound(f"run {run_id} not found", code="run_not_found")
        if run.status not in FINAL:
            raise Conflict(
                f"run {run_id} is still {run.status}",
                code="run_not_finished",
                action="replay it once it has finished",
            )
        recording = await recordings_repo.get_recording(session, run_id=run_id)
        stored = await recordings_repo.list_exchanges(session, run_id=run_id)
    if recording is None or not recording.inputs:
        raise Conflict(
            f"run {run_id} has no recording",
            code="run_not_recorded",
        )
    exchanges = as_exchanges(stored)
    return run, recording, exchanges


async def version_pins(
    database: Database, *, user_id: str, version: str, ran: Mapping[str, str] | None = None
) -> dict[str, str]:
    """module -> `version` for every runtime module the version carries. Accepted: the built-in ("builtin-1",
    every module), any version this run ran (`ran`: what its report names, even if withdrawn since), and a saved
    version the caller may see."""
    ran = dict(ran or {})
    if version == BUILTIN_VERSION:
        return dict.fromkeys((*MODULES, *ran), BUILTIN_VERSION)
    async with database.session() as session:
        row = await programs_repo.find_version(session, version=version)
        visible = {v.id for v in await programs_repo.visible_versions(session, user_id=user_id)} if row else set()
    named = {module: v for module, v in ran.items() if v == version}
    if row is None or row.id not in visible:
        if named:
            return named
        raise NotFound(
            f"program version {version} not found",
            code="program_version_not_found",
        )
    return named | {module: spec.version for module, spec in specs_of(row).items()}


def _check_sources(sources: Sequence[ContextSource]) -> None:
    for source in sources:
        if source.kind in NETWORK_SOURCES:
            raise Conflict(
                f"the run loaded {source.kind} context ({source.name}), which a replay would fetch again",
                code="replay_needs_network",
                action="replay runs whose context is attachments, pasted text or workspace files",
            )


def _missing(what: str) -> Conflict:
    return Conflict(
        f"the run's {what} is gone"[:300],
        code="replay_source_missing",
        action="restore it (upload the attachment, or put the file back in your workspace), or replay another run",
    )


async def _own_sources(
    database: Database, settings: Settings, *, user_id: str, sources: Sequence[ContextSource]
) -> tuple[ContextSource, ...]:
    """The sources to replay with: an attachment is the caller's row looked up again by its id (the recorded host
    path is never used), everything else as recorded (a workspace path is staged from the caller's workspace)."""
    out: list[ContextSource] = []
    async with database.session() as session:
        for source in sources:
            if source.kind != "file":
                out.append(source)
                continue
            attachment_id = source.attachment_id or ""
            row = await attachments_repo.get_attachment(session, user_id=user_id, attachment_id=attachment_id)
            if row is None:
                raise _missing(f"attachment {source.name!r}")
            out.append(attachment_source(row, settings.data_dir))
    return tuple(out)


def _stage_paths(settings: Settings, workspace_dir: Path, sources: Sequence[ContextSource], scratch: str) -> None:
    """Copy the workspace files the run took as context (`path` sources) from the caller's own workspace
    (`workspace_dir`, never a recorded id) into the scratch workspace, as they are now: read and written
    fd-relative through guestfs, as a live turn reads them (the workspace is guest-writable, links are refused)."""
    paths = [s.path for s in sources if s.kind == "path" and s.path]
    if not paths:
        return
    target = prepare_workspace(settings.workspaces_dir, scratch)
    for path in paths:
        try:
            relative, kind = workspace_entry(workspace_dir, path)
        except FleetError as exc:
            raise _missing(f"workspace context {path!r} ({exc.message})") from None
        if kind != "file":
            raise Conflict(
                f"the run took the workspace directory {path!r} as context, which a replay does not copy"[:300],
                code="replay_unsupported_source",
                action="replay runs whose workspace context is files",
            )
        try:
            data, _size = read_workspace_bytes(workspace_dir, relative, max_bytes=settings.upload_max_bytes + 1)
        except FleetError as exc:
            raise _missing(f"workspace context {path!r} ({exc.message})") from None
        if "/" in relative:
            guestfs.make_dirs(target, relative.rsplit("/", 1)[0])
        guestfs.write_bytes(target, relative, data)


def _answer_diff(recorded: str, replayed: str) -> str:
    lines = difflib.unified_diff(
        recorded.splitlines(), replayed.splitlines(), "recorded answer", "replayed answer", lineterm=""
    )
    return "\n".join(list(lines)[:200])


async def replay_run(
    *,
    database: Database,
    runtime: Runtime,
    settings: Settings,
    user_id: str,
    workspace_dir: Path,
    run_id: str,
    program_version: str | None = None,
    executor: Executor | None = None,
) -> ReplayReport:
    """Replay the caller's run; `workspace_dir` is the caller's own workspace, where workspace context is read."""
    run, recording, exchanges = await load(database, user_id=user_id, run_id=run_id)
    inputs = RecordedInputs.parse(recording.inputs, run_id=run.id)
    _check_sources(inputs.sources)
    sources = await _own_sources(database, settings, user_id=user_id, sources=inputs.sources)
    pins = {**inputs.program_versions, **inputs.programs_used}  # what it ran
    if program_version:
        pins.update(await version_pins(database, user_id=user_id, version=program_version, ran=pins))
    scratch = f"replay-{uuid.uuid4().hex[:20]}"
    cancel = CancelToken()
    book = ReplayBook(exchanges, cancel)
    request = inputs.request(
        sources=sources,
        run_id=uuid.uuid4().hex,
        session_id=scratch,
        user_id=user_id,
        workspace_id=scratch,
        workspace_dir=settings.workspaces_dir / scratch,
        lm_provider=ReplayProvider(book, inputs.models()),
        program_versions=pins,
    )
    sink = _CountingSink()
    started = time.monotonic()
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(executor, _stage_paths, settings, workspace_dir, sources, scratch)
        result = await loop.run_in_executor(executor, runtime.run_turn, request, sink, cancel)
    finally:
        await loop.run_in_executor(executor, _cleanup, runtime, settings, scratch)
    divergence = book.finish()
    report = ReplayReport(
        run_id=run.id,
        result="identical",
        program_versions=pins,
        calls_recorded=len(exchanges),
        calls_replayed=book.calls,
        truncated=bool(recording.truncated),
        status_recorded=recording.status,
        status_replayed=result.status,
        answer_recorded=recording.answer or "",
        answer_replayed=result.answer,
        divergence=divergence.to_dict() if divergence else None,
        duration_ms=int((time.monotonic() - started) * 1000),
    )
    if recording.truncated:
        report.warnings.append("the recording was truncated (recording_max_bytes): later calls cannot be served")
    if report.divergence is None and (result.status != recording.status or result.answer != (recording.answer or "")):
        report.divergence = {
            "reason": "outcome_differs",
            "role": None,
            "index": book.calls,
            "role_index": None,
            "recorded_seq": None,
            "recorded_role": None,
            "request_hash": None,
            "diff": f"status {recording.status} -> {result.status}\n"
            + _answer_diff(recording.answer or "", result.answer),
        }
    if report.divergence is not None:
        report.result = "diverged"
    if sink.error and report.divergence is None:
        report.warnings.append(f"the replayed turn reported {sink.error}")
    return report


def _cleanup(runtime: Runtime, settings: Settings, scratch: str) -> None:
    """End the scratch sandbox, then remove the scratch workspace (guest-written: fd-relative, no links followed)
    and its host-only context."""
    runtime.end_session(scratch)
    remove_session_context(settings.data_dir, scratch)
    guestfs.remove_tree(settings.workspaces_dir, scratch)


async def replay_many(
    run_ids: Sequence[str], **kwargs: Any
) -> list[ReplayReport | dict[str, Any]]:  # a FleetError per run becomes that run's entry
    """Replay each run in turn (a regression set); a run that cannot be replayed reports its error."""
    out: list[ReplayReport | dict[str, Any]] = []
    for run_id in run_ids:
        try:
            out.append(await replay_run(run_id=run_id, **kwargs))
        except FleetError as exc:
            out.append({"run_id": run_id, "result": "error", "error": exc.to_dict()})
    return out


async def save_set(database: Database, *, user_id: str, name: str, run_ids: Sequence[str]) -> Any:
    """Create or replace the caller's regression set; every run must be theirs and recorded."""
    unique = list(dict.fromkeys(run_ids))
    async with database.transaction() as session:
        for run_id in unique:
            run = await runs_repo.get_run(session, run_id=run_id, user_id=user_id)
            if run is None:
                raise NotFound(f"run {run_id} not found", code="run_not_found")
            if await recordings_repo.get_recording(session, run_id=run_id) is None:
                raise Conflict(
                    f"run {run_id} has no recording",
                    code="run_not_recorded",
                )
        return await recordings_repo.save_set(session, user_id=user_id, name=name, run_ids=unique)


async def get_set(database: Database, *, user_id: str, name: str) -> Any:
    async with database.session() as session:
        row = await recordings_repo.get_set(session, user_id=user_id, name=name)
    if row is None:
        raise NotFound(
            f"replay set {name!r} not found",
            code="replay_set_not_found",
        )
    return row


async def recording_of(database: Database, *, user_id: str, run_id: str, bodies: bool = False) -> dict[str, Any]:
    """The caller's run's recording: totals, the programs it ran, and its exchanges (bodies on request)."""
    async with database.session() as session:
        run = await runs_repo.get_run(session, run_id=run_id, user_id=user_id)
        recording = await recordings_repo.get_recording(session, run_id=run_id) if run else None
        exchanges = await recordings_repo.list_exchanges(session, run_id=run_id) if recording else []
    if run is None:
        raise NotFound(f"run {run_id} not found", code="run_not_found")
    if recording is None:
        raise NotFound(f"run {run_id} has no recording", code="run_not_recorded")
    keep = ("seq", "role", "actor", "depth", "request_hash", "truncated", "error")
    return {
        "run_id": run_id,
        "calls": recording.calls,
        "bytes": recording.bytes,
        "truncated": recording.truncated,
        "status": recording.status,
        "programs_used": dict((recording.inputs or {}).get("programs_used") or {}),
        "exchanges": [
            {k: getattr(e, k) for k in keep} | ({"request": e.request, "response": e.response} if bodies else {})
            for e in exchanges
        ],
    }
