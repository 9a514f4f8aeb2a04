"""Serve the web UI: `/` and `/app` go to the workspace, `/app/*` deep links get index.html, assets are cached.

Registered last so API routes always win. Hashed assets (`/app/assets/*`) never change under one name, so they
are cached for a year; index.html is revalidated on every load so a new build is picked up at once.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response

from fleet_rlm.api.errors import error_body
from fleet_rlm.ui import dist_dir, index_file

router = APIRouter(include_in_schema=False)

HOME = "/app/workspace"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def _inside(root: Path, relative: str) -> Path | None:
    """The file `relative` under `root`, or None when it is missing or escapes root."""
    try:
        candidate = (root / relative).resolve()
        candidate.relative_to(root.resolve())
    except (ValueError, OSError):
        return None
    return candidate if candidate.is_file() else None


def _not_built() -> JSONResponse:
    body = error_body(
        "ui_not_built",
        "the web UI build is missing from this installation",
        "run `make ui-build` (needs Node) or install a released wheel; the API under /api/v1 still works",
    )
    return JSONResponse(body, status_code=503)


@router.api_route("/", methods=["GET", "HEAD"])
@router.api_route("/app", methods=["GET", "HEAD"])
async def home() -> RedirectResponse:
    return RedirectResponse(HOME, status_code=307)


@router.api_route("/app/assets/{path:path}", methods=["GET", "HEAD"])
async def asset(path: str) -> Response:
    found = _inside(dist_dir() / "assets", path)
    if found is None:
        return JSONResponse(error_body("not_found", f"no asset {path!r}"), status_code=404)
    return FileResponse(found, headers={"Cache-Control": IMMUTABLE})


@router.api_route("/app/{path:path}", methods=["GET", "HEAD"])
async def app_page(path: str) -> Response:
    """A file at the top of the build (favicon...) or, for any other path, the SPA for client-side routing."""
    index = index_file()
    if index is None:
        return _not_built()
    found = _inside(dist_dir(), path) if path else None
    if found is not None and found != index:
        return FileResponse(found, headers={"Cache-Control": "public, max-age=3600"})
    return FileResponse(index, media_type="text/html", headers={"Cache-Control": REVALIDATE})
