"""Control-plane sandbox routes (/api/sandbox...): create, get, list, lifecycle, labels, intervals.

State changes are instantaneous (create returns a started sandbox, stop returns a stopped one), so the SDK's
wait-for-state polling resolves on its first refresh.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .errors import FakeDaytonaError
from .state import FakeState


def fake_state(request: HTTPConnection) -> FakeState:
    state: FakeState = request.app.state.fake
    return state


async def json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise FakeDaytonaError(400, f"invalid JSON body: {exc}") from exc
    if not isinstance(body, dict):
        raise FakeDaytonaError(400, "JSON body must be an object")
    return body


async def create_sandbox(request: Request) -> Response:
    record = fake_state(request).create_sandbox(await json_body(request))
    return JSONResponse(record.to_dto())


async def get_sandbox(request: Request) -> Response:
    return JSONResponse(fake_state(request).sandbox(request.path_params["id"]).to_dto())


def _matches(item: dict[str, Any], request: Request) -> bool:
    query = request.query_params
    if query.get("labels"):
        wanted = json.loads(query["labels"])
        if any(item["labels"].get(k) != v for k, v in wanted.items()):
            return False
    if query.get("id") and not item["id"].lower().startswith(query["id"].lower()):
        return False
    if query.get("name") and not item["name"].lower().startswith(query["name"].lower()):
        return False
    states = query.getlist("states")
    if states and item["state"] not in states:
        return False
    snapshots = query.getlist("snapshots")
    return not (snapshots and item["snapshot"] not in snapshots)


async def list_sandboxes(request: Request) -> Response:
    items = [r.list_item() for r in fake_state(request).sandboxes.values()]
    items = [item for item in items if _matches(item, request)]
    limit = int(request.query_params.get("limit") or 100)
    start = int(request.query_params.get("cursor") or 0)
    page = items[start : start + limit]
    next_cursor = str(start + limit) if start + limit < len(items) else None
    return JSONResponse({"items": page, "nextCursor": next_cursor})


async def start_sandbox(request: Request) -> Response:
    state = fake_state(request)
    record = state.sandbox(request.path_params["id"])
    state.start(record)
    return JSONResponse(record.to_dto())


async def stop_sandbox(request: Request) -> Response:
    state = fake_state(request)
    record = state.sandbox(request.path_params["id"])
    state.stop(record)
    return JSONResponse(record.to_dto())


async def delete_sandbox(request: Request) -> Response:
    state = fake_state(request)
    record = state.sandbox(request.path_params["id"])
    state.delete(record)
    return JSONResponse(record.to_dto())


async def replace_labels(request: Request) -> Response:
    record = fake_state(request).sandbox(request.path_params["id"])
    body = await json_body(request)
    record.labels = {str(k): str(v) for k, v in (body.get("labels") or {}).items()}
    record.touch()
    return JSONResponse({"labels": record.labels})


def _interval_route(attr: str):  # type: ignore[no-untyped-def]
    async def handler(request: Request) -> Response:
        record = fake_state(request).sandbox(request.path_params["id"])
        setattr(record, attr, int(request.path_params["interval"]))
        record.touch()
        return JSONResponse(record.to_dto())

    return handler


async def toolbox_proxy_url(request: Request) -> Response:
    record = fake_state(request).sandbox(request.path_params["id"])
    return JSONResponse({"url": record.toolbox_base})


async def last_activity(request: Request) -> Response:
    fake_state(request).sandbox(request.path_params["id"]).touch()
    return Response(status_code=201)


routes = [
    Route("/sandbox", create_sandbox, methods=["POST"]),
    Route("/sandbox", list_sandboxes, methods=["GET"]),
    Route("/sandbox/{id}", get_sandbox, methods=["GET"]),
    Route("/sandbox/{id}", delete_sandbox, methods=["DELETE"]),
    Route("/sandbox/{id}/start", start_sandbox, methods=["POST"]),
    Route("/sandbox/{id}/stop", stop_sandbox, methods=["POST"]),
    Route("/sandbox/{id}/labels", replace_labels, methods=["PUT"]),
    Route("/sandbox/{id}/autostop/{interval}", _interval_route("auto_stop_interval"), methods=["POST"]),
    Route("/sandbox/{id}/autoarchive/{interval}", _interval_route("auto_archive_interval"), methods=["POST"]),
    Route("/sandbox/{id}/autodelete/{interval}", _interval_route("auto_delete_interval"), methods=["POST"]),
    Route("/sandbox/{id}/toolbox-proxy-url", toolbox_proxy_url, methods=["GET"]),
    Route("/sandbox/{id}/last-activity", last_activity, methods=["POST"]),
]
