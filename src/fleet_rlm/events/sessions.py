"""Events about a session as a whole rather than one turn: a fork records where it came from.

A fork has no turn of its own yet, so its first run (execution mode `fork`, no turn) holds exactly this one
event and is already final; the fork's history is the origin's turns, which keep pointing at their own runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from fleet_rlm.events.base import EventBase

FORK_SHARED = (
    "the inherited turns' messages and answers (copied), and their runs, events and artifacts (referenced)",
    "the workspace: memory/, artifacts/ and every other file of the workspace volume",
    "attachments: the same rows, referenced, not copied",
    "the context sources the kept turns added (files, pasted text, URLs as fetched then, repositories, workspace"
    " paths): the fork holds them and gives them to its next turns; their documents are linked, not copied",
    "the session settings (mode, budgets) as they were when forking",
    "the REPL's variables as they were after the fork point (plain data and imported modules, loaded into the "
    "fork's sandbox before its first cell; a repl_restored event names any that could not be restored)",
)
FORK_NOT_SHARED = (
    "REPL values that are not plain data (functions, classes, open files or sockets, other objects): the "
    "fork's sandbox is a fresh one and they are named as not restored",
    "turns of the origin after the fork point, and any turn either session adds later",
    "context sources added after the fork point, or removed from the origin before it; later additions or"
    " removals in either session",
    "the origin's running summary after the fork point (the fork keeps the one written by its last turn)",
)


class SessionForked(EventBase):
    """This session was forked from another one after one of its turns; says what the two share."""

    type: Literal["session_forked"] = "session_forked"
    origin_session_id: str = Field(description="Session the fork was made from.")
    after_turn: int = Field(ge=0, description="Turns kept: the origin's turns 1..after_turn (index 0..after_turn-1).")
    origin_turns: int = Field(ge=0, description="How many turns the origin had when it was forked.")
    shared: list[str] = Field(default_factory=lambda: list(FORK_SHARED), description="What fork and origin share.")
    not_shared: list[str] = Field(
        default_factory=lambda: list(FORK_NOT_SHARED), description="What the fork does not get from its origin."
    )


SESSION_EVENTS = (SessionForked,)
