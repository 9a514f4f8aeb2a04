"""Snapshot and volume routes (/api/snapshots..., /api/volumes...).

Snapshots are registered instantly as "active": nothing is built, the image name or Dockerfile is only
recorded (declarative `Image`s with local context files would need object-storage uploads: unsupported).
A volume is a host directory under the server's root; sandboxes mount it (or a subpath of it) at a guest path.
"""

from __future__ import annotations

import math

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .errors import FakeDaytonaError
from .models import SnapshotRecord
from .routes_sandbox import fake_state, json_body


async def create_snapshot(request: Request) -> Response:
    body = await json_body(request)
    if not body.get("name"):
        raise FakeDaytonaError(400, "name is required")
    snapshot = SnapshotRecord(
        name=body["name"],
        image_name=body.get("imageName"),
        cpu=int(body.get("cpu") or 1),
        gpu=int(body.get("gpu") or 0),
        mem=int(body.get("memory") or 1),
        disk=int(body.get("disk") or 3),
        entrypoint=body.get("entrypoint"),
        dockerfile=(body.get("buildInfo") or {}).get("dockerfileContent"),
    )
    return JSONResponse(fake_state(request).add_snapshot(snapshot).to_dto())


async def get_snapshot(request: Request) -> Response:
    return JSONResponse(fake_state(request).snapshot(request.path_params["id"]).to_dto())


async def list_snapshots(request: Request) -> Response:
    query = request.query_params
    items = [s.to_dto() for s in fake_state(request).snapshots.values()]
    if query.get("name"):
        items = [s for s in items if query["name"].lower() in s["name"].lower()]
    limit = int(query.get("limit") or 100)
    page = int(query.get("page") or 1)
    total_pages = max(1, math.ceil(len(items) / limit))
    body = {
        "items": items[(page - 1) * limit : page * limit],
        "total": len(items),
        "page": page,
        "totalPages": total_pages,
    }
    return JSONResponse(body)


async def delete_snapshot(request: Request) -> Response:
    state = fake_state(request)
    snapshot = state.snapshot(request.path_params["id"])
    del state.snapshots[snapshot.id]
    return Response(status_code=200)


async def create_volume(request: Request) -> Response:
    body = await json_body(request)
    if not body.get("name"):
        raise FakeDaytonaError(400, "name is required")
    return JSONResponse(fake_state(request).create_volume(body["name"]).to_dto())


async def get_volume(request: Request) -> Response:
    return JSONResponse(fake_state(request).volume(request.path_params["id"]).to_dto())


async def get_volume_by_name(request: Request) -> Response:
    state = fake_state(request)
    name = request.path_params["name"]
    volume = next((v for v in state.volumes.values() if v.name == name), None)
    if volume is None:
        raise FakeDaytonaError(404, f"Volume with name {name} not found")
    return JSONResponse(volume.to_dto())


async def list_volumes(request: Request) -> Response:
    return JSONResponse([v.to_dto() for v in fake_state(request).volumes.values()])


async def delete_volume(request: Request) -> Response:
    state = fake_state(request)
    volume = state.volume(request.path_params["id"])
    in_use = [s.id for s in state.sandboxes.values() if any(m["volumeId"] == volume.id for m in s.volumes)]
    if in_use:
        raise FakeDaytonaError(409, f"Volume {volume.name} is in use by sandboxes {', '.join(in_use)}")
    state.delete_volume(volume.id)
    return Response(status_code=200)


routes = [
    Route("/snapshots", create_snapshot, methods=["POST"]),
    Route("/snapshots", list_snapshots, methods=["GET"]),
    Route("/snapshots/{id:path}", get_snapshot, methods=["GET"]),
    Route("/snapshots/{id:path}", delete_snapshot, methods=["DELETE"]),
    Route("/volumes", create_volume, methods=["POST"]),
    Route("/volumes", list_volumes, methods=["GET"]),
    Route("/volumes/by-name/{name}", get_volume_by_name, methods=["GET"]),
    Route("/volumes/{id}", get_volume, methods=["GET"]),
    Route("/volumes/{id}", delete_volume, methods=["DELETE"]),
]
