"""Every table, imported here so `metadata` is complete for Alembic and `create_all`."""

from fleet_rlm.store.base import metadata
from fleet_rlm.store.models.chat import (
    ATTACHMENT_KINDS,
    SOURCE_KINDS,
    Artifact,
    Attachment,
    ChatSession,
    SessionSource,
    Turn,
)
from fleet_rlm.store.models.identity import ROLES, LlmProfile, RoleBinding, User, Workspace, WsTicket
from fleet_rlm.store.models.mcp import McpServer
from fleet_rlm.store.models.optimize import (
    Dataset,
    OptimizationRun,
    ProgramPromotion,
    ProgramVersion,
)
from fleet_rlm.store.models.recordings import LMBlob, LMRecording, ReplaySet, RunRecording
from fleet_rlm.store.models.runs import OUTCOMES, RATINGS, QueueWorker, Run, RunEvent, TraceFeedback
from fleet_rlm.store.models.snapshots import ReplBlob, RunReplSnapshot, RunRequest

__all__ = [
    "ATTACHMENT_KINDS",
    "OUTCOMES",
    "RATINGS",
    "ROLES",
    "SOURCE_KINDS",
    "Artifact",
    "Attachment",
    "ChatSession",
    "Dataset",
    "LMBlob",
    "LMRecording",
    "LlmProfile",
    "McpServer",
    "OptimizationRun",
    "ProgramPromotion",
    "ProgramVersion",
    "QueueWorker",
    "ReplBlob",
    "ReplaySet",
    "RoleBinding",
    "Run",
    "RunEvent",
    "RunRecording",
    "RunReplSnapshot",
    "RunRequest",
    "SessionSource",
    "TraceFeedback",
    "Turn",
    "User",
    "Workspace",
    "WsTicket",
    "metadata",
]
