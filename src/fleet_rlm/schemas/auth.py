"""Who am I, and WebSocket tickets."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class Me(BaseModel):
    id: str
    name: str
    display_name: str | None
    workspace_id: str
    auth_mode: str
    is_admin: bool = Field(default=False, description="May do operator-level actions (see docs/security.md).")


class WsTicketOut(BaseModel):
    ticket: str = Field(description="Connect with `?ticket=<ticket>`; single use.")
    expires_at: datetime
    expires_in: int = Field(description="Seconds until the ticket expires (at most 60).")
