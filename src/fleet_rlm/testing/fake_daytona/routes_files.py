"""Toolbox file-system routes: list/info/folder/delete/move/permissions, bulk upload/download, find/search.

Guest paths (relative ones are relative to /home/daytona) are translated to the sandbox's host directory or a
mounted volume. Bulk download answers multipart/form-data with a "file" part per path, or an "error" part
carrying the daemon's JSON error, which is what the SDK's streaming multipart parser expects.
"""

from __future__ import annotations

import fnmatch
import json
import os
import secrets
import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from .errors import daemon_error
from .fsmap import SandboxFS, normalize_guest
from .routes_sandbox import fake_state, json_body


def _fs(request: Request) -> SandboxFS:
    return fake_state(request).runtime(request.path_params["sid"]).fs


def _path_param(request: Request, name: str = "path") -> str:
    value = request.query_params.get(name)
    if not value:
        raise daemon_error(400, f"{name} is required", "INVALID_FILE_PATH")
    return value


def _existing(fs: SandboxFS, guest: str) -> Path:
    host = fs.to_host(guest)
    if not host.exists():
        raise daemon_error(404, f"file not found: {guest}", "FILE_NOT_FOUND")
    return host


def file_info(host: Path, guest: str) -> dict[str, Any]:
    st = host.stat()
    modified = datetime.fromtimestamp(st.st_mtime, UTC)
    return {
        "name": host.name or "/",
        "path": guest,
        "isDir": stat.S_ISDIR(st.st_mode),
        "size": st.st_size,
        "mode": stat.filemode(st.st_mode),
        "permissions": format(stat.S_IMODE(st.st_mode), "04o"),
        "owner": "daytona",
        "group": "daytona",
        "modTime": modified.strftime("%Y-%m-%d %H:%M:%S.%f +0000 UTC"),
        "modifiedAt": modified.isoformat().replace("+00:00", "Z"),
    }


async def get_info(request: Request) -> Response:
    guest = normalize_guest(_path_param(request))
    return JSONResponse(file_info(_existing(_fs(request), guest), guest))


async def list_files(request: Request) -> Response:
    fs = _fs(request)
    guest = normalize_guest(request.query_params.get("path") or ".")
    depth = int(request.query_params.get("depth") or 1)
    host = _existing(fs, guest)
    if not host.is_dir():
        raise daemon_error(400, f"not a directory: {guest}", "INVALID_FILE_PATH")
    entries: list[dict[str, Any]] = []

    def walk(dir_host: Path, dir_guest: str, level: int) -> None:
        for child in sorted(dir_host.iterdir()):
            child_guest = f"{dir_guest.rstrip('/')}/{child.name}"
            entries.append(file_info(child, child_guest))
            if level < depth and child.is_dir() and not child.is_symlink():
                walk(child, child_guest, level + 1)

    walk(host, guest, 1)
    return JSONResponse(entries)


async def create_folder(request: Request) -> Response:
    host = _fs(request).to_host(_path_param(request))
    mode = int(request.query_params.get("mode") or "755", 8)
    host.mkdir(parents=True, exist_ok=True)
    host.chmod(mode)
    return Response(status_code=201)


async def delete_file(request: Request) -> Response:
    guest = _path_param(request)
    host = _existing(_fs(request), guest)
    if host.is_dir() and not host.is_symlink():
        if request.query_params.get("recursive") != "true" and any(host.iterdir()):
            raise daemon_error(400, f"directory is not empty: {guest} (use recursive)", "INVALID_FILE_PATH")
        shutil.rmtree(host)
    else:
        host.unlink()
    return Response(status_code=204)


async def move_file(request: Request) -> Response:
    fs = _fs(request)
    source = _existing(fs, _path_param(request, "source"))
    destination = fs.to_host(_path_param(request, "destination"))
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(source, destination)
    return Response(status_code=200)


async def set_permissions(request: Request) -> Response:
    host = _existing(_fs(request), _path_param(request))
    if request.query_params.get("mode"):
        host.chmod(int(request.query_params["mode"], 8))
    return Response(status_code=200)


async def bulk_upload(request: Request) -> Response:
    fs = _fs(request)
    async with request.form(max_files=10000, max_fields=20000) as form:
        items = form.multi_items()
        paths = {key[: -len(".path")]: str(value) for key, value in items if key.endswith(".path")}
        results = []
        for key, value in form.multi_items():
            if not key.endswith(".file") or not isinstance(value, UploadFile):
                continue
            guest = paths.get(key[: -len(".file")])
            if guest is None:
                raise daemon_error(400, f"missing path for {key}", "INVALID_FILE_PATH")
            host = fs.to_host(guest)
            host.parent.mkdir(parents=True, exist_ok=True)
            with open(host, "wb") as out:
                while chunk := await value.read(1 << 20):
                    out.write(chunk)
            results.append({"path": normalize_guest(guest), "size": host.stat().st_size})
    return JSONResponse({"files": results, "errors": []})


def _disposition(name: str, filename: str) -> str:
    if filename.isascii() and '"' not in filename and "\\" not in filename:
        return f'form-data; name="{name}"; filename="{filename}"'
    return f"form-data; name=\"{name}\"; filename*=UTF-8''{quote(filename, safe='')}"


async def bulk_download(request: Request) -> Response:
    fs = _fs(request)
    paths = (await json_body(request)).get("paths") or []
    boundary = secrets.token_hex(16)
    parts: list[bytes] = []
    for guest in paths:
        host = fs.to_host(guest)
        if host.is_file():
            name, ctype, payload = "file", "application/octet-stream", host.read_bytes()
        else:
            message = f"file not found: {guest}" if not host.exists() else f"not a file: {guest}"
            error = {"message": message, "statusCode": 404, "code": "FILE_NOT_FOUND"}
            name, ctype, payload = "error", "application/json", json.dumps(error).encode()
        head = (
            f"--{boundary}\r\nContent-Disposition: {_disposition(name, guest)}\r\n"
            f"Content-Type: {ctype}\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        parts.append(head.encode("utf-8") + payload + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return Response(body, media_type=f"multipart/form-data; boundary={boundary}")


async def download_file(request: Request) -> Response:
    host = _existing(_fs(request), _path_param(request))
    return FileResponse(host, media_type="application/octet-stream")


def _walk_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(Path(dirpath) / f for dirpath, _, files in os.walk(root) for f in files)


async def find_in_files(request: Request) -> Response:
    fs = _fs(request)
    guest_root = normalize_guest(_path_param(request))
    host_root = _existing(fs, guest_root)
    pattern = request.query_params.get("pattern", "")
    matches = []
    for host in _walk_files(host_root):
        try:
            lines = host.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        rel = host.relative_to(host_root).as_posix() if host != host_root else ""
        guest = f"{guest_root.rstrip('/')}/{rel}" if rel else guest_root
        matches += [{"file": guest, "line": i, "content": t} for i, t in enumerate(lines, 1) if pattern in t]
    return JSONResponse(matches)


async def search_files(request: Request) -> Response:
    fs = _fs(request)
    guest_root = normalize_guest(_path_param(request))
    host_root = _existing(fs, guest_root)
    pattern = request.query_params.get("pattern", "*")
    found = [
        f"{guest_root.rstrip('/')}/{host.relative_to(host_root).as_posix()}"
        for host in _walk_files(host_root)
        if fnmatch.fnmatch(host.name, pattern)
    ]
    return JSONResponse({"files": found})


P = "/{sid}/files"
routes = [
    Route(P, list_files, methods=["GET"]),
    Route(P, delete_file, methods=["DELETE"]),
    Route(f"{P}/info", get_info, methods=["GET"]),
    Route(f"{P}/folder", create_folder, methods=["POST"]),
    Route(f"{P}/move", move_file, methods=["POST"]),
    Route(f"{P}/permissions", set_permissions, methods=["POST"]),
    Route(f"{P}/bulk-upload", bulk_upload, methods=["POST"]),
    Route(f"{P}/bulk-download", bulk_download, methods=["POST"]),
    Route(f"{P}/download", download_file, methods=["GET"]),
    Route(f"{P}/find", find_in_files, methods=["GET"]),
    Route(f"{P}/search", search_files, methods=["GET"]),
]
