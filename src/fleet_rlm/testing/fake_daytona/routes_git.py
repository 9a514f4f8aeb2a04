"""Toolbox git clone and info routes (home dir, work dir, daemon version).

Clone runs the host's real `git clone` into the sandbox's host directory, so tests can clone a local
repository by file:// URL (which also honours --depth). Credentials are put into http(s) URLs for the one
clone only; the fake never stores them.
"""

from __future__ import annotations

import asyncio
import os
from urllib.parse import quote, urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .errors import daemon_error
from .fsmap import HOME
from .routes_sandbox import fake_state, json_body


def _with_credentials(url: str, username: str | None, password: str | None) -> str:
    parts = urlsplit(url)
    if not username or parts.scheme not in ("http", "https"):
        return url
    netloc = f"{quote(username, safe='')}:{quote(password or '', safe='')}@{parts.hostname}"
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


async def _git(*args: str) -> tuple[int, str]:
    path = os.environ.get("PATH", "/usr/bin:/bin")
    env = {"PATH": path, "GIT_TERMINAL_PROMPT": "0", "HOME": "/nonexistent"}
    proc = await asyncio.create_subprocess_exec(
        "git", *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await proc.communicate()
    return proc.returncode or 0, output.decode("utf-8", "replace")


async def clone(request: Request) -> Response:
    fs = fake_state(request).runtime(request.path_params["sid"]).fs
    body = await json_body(request)
    if not body.get("url") or not body.get("path"):
        raise daemon_error(400, "url and path are required")
    dest = fs.to_host(str(body["path"]))
    if dest.exists() and any(dest.iterdir()):
        raise daemon_error(409, f"destination path {body['path']} already exists and is not empty")
    dest.parent.mkdir(parents=True, exist_ok=True)
    args = ["clone"]
    if body.get("depth"):
        args += ["--depth", str(int(body["depth"]))]
    if body.get("branch"):
        args += ["--branch", str(body["branch"])]
    args += [_with_credentials(str(body["url"]), body.get("username"), body.get("password")), str(dest)]
    code, output = await _git(*args)
    if code != 0:
        if "Remote branch" in output and "not found" in output:
            raise daemon_error(404, f"branch not found: {output.strip()}", "GIT_BRANCH_NOT_FOUND")
        if "does not exist" in output or "not found" in output or "does not appear" in output:
            raise daemon_error(404, f"repository not found: {output.strip()}", "GIT_REPO_NOT_FOUND")
        raise daemon_error(400, f"git clone failed: {output.strip()}", "GIT_TRANSPORT_FAILED")
    if body.get("commit_id"):
        code, output = await _git("-C", str(dest), "checkout", str(body["commit_id"]))
        if code != 0:
            raise daemon_error(400, f"git checkout failed: {output.strip()}")
    return Response(status_code=200)


async def home_dir(request: Request) -> Response:
    fake_state(request).runtime(request.path_params["sid"])
    return JSONResponse({"dir": HOME})


async def version(request: Request) -> Response:
    return JSONResponse({"version": "fake-0.1"})


routes = [
    Route("/{sid}/git/clone", clone, methods=["POST"]),
    Route("/{sid}/user-home-dir", home_dir, methods=["GET"]),
    Route("/{sid}/work-dir", home_dir, methods=["GET"]),
    Route("/{sid}/version", version, methods=["GET"]),
]
