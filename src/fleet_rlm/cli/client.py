"""The one way the CLI talks to a server: HTTP, SSE and JSON over httpx, in-process or remote alike.

Every failure a user can hit becomes a `FleetError` (stable code, one line, action), so commands print one
line and never a traceback. Turn streams yield parsed `fleet_rlm.events` models; the client remembers the
run id and last seq so an interrupted stream can be resumed with `follow_run(after=...)`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from fleet_rlm.errors import FleetError

if TYPE_CHECKING:  # the event models (pydantic) load on the first turn stream, not for `sessions list`
    from fleet_rlm.events import Event

API = "/api/v1"
STREAM_TIMEOUT = httpx.Timeout(10.0, read=None)
DEFAULT_TIMEOUT = httpx.Timeout(30.0)


@dataclass
class StreamState:
    """Where a turn stream got to: enough to resume following or to cancel it."""

    run_id: str | None = None
    last_seq: int = 0
    terminal: Event | None = None
    events: list[Event] = field(default_factory=list)


def api_error(response: httpx.Response) -> FleetError:
    """The server's `{"error": {code, message, action}}` body as a FleetError (or a generic one)."""
    try:
        body = response.json().get("error") or {}
    except (ValueError, AttributeError):
        body = {}
    code = str(body.get("code") or f"http_{response.status_code}")
    where = f"{response.request.method} {response.request.url.path}"
    message = str(body.get("message") or f"{where} answered {response.status_code}")
    details = body.get("details") if isinstance(body.get("details"), dict) else None
    action = cli_action(body.get("action"))
    return FleetError(message, code=code, status=response.status_code, action=action, details=details)


ROUTE_HINT = re.compile(r"\(?list yours with GET /api/v1/(\w+)\)?")
CLI_LISTINGS = {"sessions": "`fleet-rlm sessions list`", "profiles": "`fleet-rlm profiles list`"}


def cli_action(action: object) -> str | None:
    """The server's action, with an HTTP route a terminal user cannot type replaced by the CLI command."""
    if not isinstance(action, str):
        return None

    def swap(match: re.Match[str]) -> str:
        command = CLI_LISTINGS.get(match.group(1))
        return f"(list them with {command})" if command else ""

    return ROUTE_HINT.sub(swap, action).strip() or None


REMOTE_ACTION = "check the --url-server address and that the server is running (`fleet-rlm serve-api`)"
LOCAL_ACTION = "the local server stopped; run the command again to start a new one"


def unreachable(base_url: str, exc: Exception, action: str = REMOTE_ACTION) -> FleetError:
    return FleetError(
        f"cannot reach the server at {base_url} ({type(exc).__name__}: {exc})",
        code="server_unreachable",
        action=action,
    )


class FleetClient:
    """Thin typed wrapper over the REST API. Methods return the JSON bodies as dicts."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        headers: dict[str, str] | None = None,
        unreachable_action: str = REMOTE_ACTION,
        verify: bool = True,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.unreachable_action = unreachable_action
        headers = dict(headers or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, verify=verify)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> FleetClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- plumbing ------------------------------------------------------------------------------------------
    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, exc, self.unreachable_action) from exc
        if response.status_code >= 400:
            raise api_error(response)
        return response

    def get_json(self, url_path: str, **params: Any) -> Any:
        clean = {key: value for key, value in params.items() if value is not None}
        return self.request("GET", url_path, params=clean).json()

    # --- server --------------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/info"))

    def me(self) -> dict[str, Any]:
        """Who the server thinks we are; fails with `unauthorized` when the token is missing or wrong."""
        return dict(self.get_json(f"{API}/auth/me"))

    def ready(self) -> dict[str, Any]:
        try:
            response = self.http.get("/ready")
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, exc, self.unreachable_action) from exc
        return dict(response.json())

    # --- sessions ------------------------------------------------------------------------------------------
    def create_session(self, title: str = "", settings: dict[str, Any] | None = None) -> dict[str, Any]:
        body = {"title": title[:500], "settings": settings or {}}
        return dict(self.request("POST", f"{API}/sessions", json=body).json())

    def list_sessions(self, q: str | None = None, limit: int = 20, offset: int = 0) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/sessions", q=q, limit=limit, offset=offset))

    def get_session(self, session_id: str) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/sessions/{session_id}"))

    def update_session(self, session_id: str, **changes: Any) -> dict[str, Any]:
        return dict(self.request("PATCH", f"{API}/sessions/{session_id}", json=changes).json())

    def delete_session(self, session_id: str) -> None:
        self.request("DELETE", f"{API}/sessions/{session_id}")

    def list_feedback(self, **filters: Any) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/traces/feedback", **filters))

    def put_feedback(self, run_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return dict(self.request("PUT", f"{API}/traces/feedback/{run_id}", json=body).json())

    def delete_feedback(self, run_id: str) -> None:
        self.request("DELETE", f"{API}/traces/feedback/{run_id}")

    def list_turns(self, session_id: str, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/sessions/{session_id}/turns", limit=limit, offset=offset))

    def fork_session(self, session_id: str, after_turn: int | None = None, title: str | None = None) -> dict[str, Any]:
        body = {key: value for key, value in (("after_turn", after_turn), ("title", title)) if value is not None}
        return dict(self.request("POST", f"{API}/sessions/{session_id}/fork", json=body).json())

    def session_context(self, session_id: str) -> list[dict[str, Any]]:
        """The context sources the session holds (what its next turn gets)."""
        return list(self.get_json(f"{API}/sessions/{session_id}/context")["items"])

    def remove_context_source(self, session_id: str, source_id: str) -> None:
        self.request("DELETE", f"{API}/sessions/{session_id}/context/{source_id}")

    def export_session(self, session_id: str) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/sessions/{session_id}/export"))

    def export_session_text(self, session_id: str, fmt: str, redact: bool | None = None) -> str:
        """The export in `fmt` (json, html or markdown) exactly as the server wrote it."""
        params: dict[str, Any] = {"format": fmt}
        if redact is not None:
            params["redact"] = "true" if redact else "false"
        return self.request("GET", f"{API}/sessions/{session_id}/export", params=params).text

    def active_run(self, session_id: str) -> str | None:
        """Id of the session's queued or running run, if any."""
        states = self.get_json(f"{API}/sessions/state")
        for item in states.get("items", []):
            if item.get("session_id") == session_id and item.get("active_run"):
                return str(item["active_run"]["id"])
        return None

    # --- runs ----------------------------------------------------------------------------------------------
    def start_turn(self, session_id: str, body: dict[str, Any], state: StreamState) -> Iterator[Event]:
        """POST a turn and yield its events until the terminal one; `state` tracks run id and seq."""
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        yield from self._stream("POST", f"{API}/sessions/{session_id}/turns", state, json=body, headers=headers)

    def follow_run(self, run_id: str, state: StreamState, after: int = 0) -> Iterator[Event]:
        """Replay the run's events after `after`, then follow it live until its terminal event."""
        state.run_id = run_id
        yield from self._stream("GET", f"{API}/runs/{run_id}/stream", state, params={"after": after})

    def cancel_run(self, run_id: str) -> dict[str, Any] | None:
        """Ask the run to stop; None when it had already ended (`run_finished`: there was nothing to stop)."""
        try:
            return dict(self.request("PUT", f"{API}/runs/{run_id}/cancellation").json())
        except FleetError as exc:
            if exc.code == "run_finished":
                return None
            raise

    def get_run(self, run_id: str) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/runs/{run_id}"))

    def _stream(self, method: str, path: str, state: StreamState, **kwargs: Any) -> Iterator[Event]:
        from fleet_rlm.events import TERMINAL_TYPES

        try:
            with self.http.stream(method, path, timeout=STREAM_TIMEOUT, **kwargs) as response:
                if response.status_code >= 400:
                    response.read()
                    raise api_error(response)
                state.run_id = response.headers.get("x-run-id") or state.run_id
                for data in sse_data(response.iter_lines()):
                    event = _parse(data)
                    state.last_seq = max(state.last_seq, event.seq)
                    state.events.append(event)
                    yield event
                    if event.type in TERMINAL_TYPES:
                        state.terminal = event
                        return
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, exc, self.unreachable_action) from exc

    # --- context and outputs -------------------------------------------------------------------------------
    def upload_file(self, path: Path, session_id: str | None = None) -> dict[str, Any]:
        require_file(path)
        data = {"session_id": session_id} if session_id else {}
        with path.open("rb") as handle:
            files = {"file": (path.name, handle)}
            return dict(self.request("POST", f"{API}/attachments", files=files, data=data).json())

    def list_artifacts(self, session_id: str) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/artifacts", session_id=session_id, limit=100))

    def volume_file(self, path: str) -> dict[str, Any]:
        return dict(self.get_json(f"{API}/runtime/volume/file", path=path))

    def has_route(self, path: str) -> bool:
        """True when the server answers `path` with anything but 404/405 (optional APIs like profiles)."""
        try:
            response = self.http.get(path)
        except httpx.TransportError as exc:
            raise unreachable(self.base_url, exc, self.unreachable_action) from exc
        return response.status_code not in (404, 405)


def require_file(path: Path) -> Path:
    """`path` if it is a file; else the one-line `file_not_found` error (checked before anything is created)."""
    if path.is_dir():
        raise FleetError(f"{path} is a directory, not a file", code="file_is_directory")
    if not path.is_file():
        raise FleetError(f"no such file: {path}", code="file_not_found")
    return path


def sse_data(lines: Iterator[str]) -> Iterator[str]:
    """The `data:` payload of each SSE message (multi-line data joined with newlines, comments skipped)."""
    buffer: list[str] = []
    for line in lines:
        if not line:
            if buffer:
                yield "\n".join(buffer)
                buffer = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            buffer.append(value[1:] if value.startswith(" ") else value)
    if buffer:
        yield "\n".join(buffer)


def _parse(data: str) -> Event:
    from fleet_rlm.events import InvalidEvent, parse_event

    try:
        return parse_event(data)
    except InvalidEvent as exc:
        raise FleetError(
            f"the server sent an event this client cannot read: {exc.message}",
            code="incompatible_server",
            action="use the same fleet-rlm version for the server and the CLI",
        ) from exc


def to_json_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
