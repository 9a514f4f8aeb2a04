"""Volume uploads and deletes: only memory/ and artifacts/, size-limited, the caller's workspace only, and a link
planted by the guest is never followed on write or delete."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

from .isolation import assert_error, bearer, token_settings

FILE = "/api/v1/runtime/volume/file"


def _root(client: TestClient, settings: Settings, headers: dict[str, str] | None = None) -> Path:
    return settings.workspaces_dir / client.get("/api/v1/auth/me", headers=headers or {}).json()["workspace_id"]


def test_upload_read_overwrite_and_delete(settings: Settings) -> None:
    with TestClient(create_app(settings.model_copy(update={"upload_max_bytes": 1000}))) as client:
        root = _root(client, settings)
        made = client.put(FILE, params={"path": "artifacts/sub/notes.md"}, content=b"# hi\n")
        assert made.status_code == 201 and made.json() == {"path": "artifacts/sub/notes.md", "size": 5}
        assert (root / "artifacts" / "sub" / "notes.md").read_bytes() == b"# hi\n"
        assert client.get(FILE, params={"path": "artifacts/sub/notes.md"}).json()["content"] == "# hi\n"
        again = client.put(FILE, params={"path": "artifacts/sub/notes.md"}, content=b"x")
        assert_error(again, 409, "file_exists")
        replaced = client.put(FILE, params={"path": "artifacts/sub/notes.md", "overwrite": True}, content=b"new")
        assert replaced.status_code == 201 and (root / "artifacts" / "sub" / "notes.md").read_bytes() == b"new"
        assert client.put(FILE, params={"path": "memory/facts.md"}, content=b"f").status_code == 201

        assert_error(client.put(FILE, params={"path": "memory/big.bin"}, content=b"x" * 1001), 413, "payload_too_large")
        assert not (root / "memory" / "big.bin").exists()
        for path in ("buffers/x.txt", "meta/x.txt", "context/x.txt", "memory", "x.txt"):
            assert_error(client.put(FILE, params={"path": path}, content=b"x"), 403, "volume_read_only")
            assert_error(client.delete(FILE, params={"path": path}), 403, "volume_read_only")
        assert_error(client.put(FILE, params={"path": "../x/artifacts/a"}, content=b"x"), 400, "invalid_path")

        assert client.delete(FILE, params={"path": "artifacts/sub/notes.md"}).status_code == 204
        assert not (root / "artifacts" / "sub" / "notes.md").exists()
        assert_error(client.delete(FILE, params={"path": "artifacts/sub/notes.md"}), 404, "not_found")
        assert_error(client.delete(FILE, params={"path": "artifacts/sub"}), 400, "not_a_file")


def test_links_planted_by_the_guest_are_never_followed(settings: Settings, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me")
    with TestClient(create_app(settings)) as client:
        root = _root(client, settings)
        os.symlink(outside / "victim.txt", root / "artifacts" / "link.txt")
        os.symlink(outside, root / "memory" / "dirlink")
        os.link(outside / "victim.txt", root / "artifacts" / "hard.txt")

        write = client.put(FILE, params={"path": "artifacts/link.txt", "overwrite": True}, content=b"pwned")
        assert_error(write, 400, "invalid_path")
        assert_error(client.put(FILE, params={"path": "memory/dirlink/new.txt"}, content=b"x"), 400, "invalid_path")
        hard = client.put(FILE, params={"path": "artifacts/hard.txt", "overwrite": True}, content=b"pwned")
        assert_error(hard, 400, "invalid_path")
        assert_error(client.delete(FILE, params={"path": "memory/dirlink/victim.txt"}), 400, "invalid_path")
        assert (outside / "victim.txt").read_text() == "keep me" and sorted(os.listdir(outside)) == ["victim.txt"]

        assert client.delete(FILE, params={"path": "artifacts/link.txt"}).status_code == 204  # the link itself
        assert not os.path.lexists(root / "artifacts" / "link.txt")
        assert (outside / "victim.txt").read_text() == "keep me"


def test_only_the_owners_workspace(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        alice_root = _root(client, secured, alice)
        bob_root = _root(client, secured, bob)
        assert client.put(FILE, params={"path": "artifacts/a.txt"}, content=b"alice", headers=alice).status_code == 201
        assert_error(client.delete(FILE, params={"path": "artifacts/a.txt"}, headers=bob), 404, "not_found")
        climb = {"path": f"artifacts/../../{alice_root.name}/artifacts/a.txt"}
        assert_error(client.delete(FILE, params=climb, headers=bob), 400, "invalid_path")
        assert client.put(FILE, params={"path": "artifacts/a.txt"}, content=b"bob", headers=bob).status_code == 201
        assert (alice_root / "artifacts" / "a.txt").read_bytes() == b"alice"
        assert (bob_root / "artifacts" / "a.txt").read_bytes() == b"bob"
        assert_error(client.put(FILE, params={"path": "artifacts/x"}, content=b"x"), 401, "unauthorized")


def test_volume_uploads_and_attachments_share_one_limit(settings: Settings) -> None:
    """A 9 MiB file goes into memory/ as it does as an attachment (both within upload_max_bytes, 50 MiB by
    default); the request-body limit for JSON calls (8 MiB) does not apply to uploads. /api/v1/info tells the UI
    the limit so it can show it before an upload."""
    nine_mib = b"x" * (9 * 1024 * 1024)
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/v1/info").json()["upload_max_bytes"] == settings.upload_max_bytes == 50 * 1024 * 1024
        made = client.put(FILE, params={"path": "memory/big.bin"}, content=nine_mib)
        assert made.status_code == 201, made.text
        attached = client.post("/api/v1/attachments", files={"file": ("big.txt", nine_mib, "text/plain")})
        assert attached.status_code in (200, 201), attached.text
