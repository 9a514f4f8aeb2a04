"""The runtime volume: bounded tree and file reads of the caller's workspace, confined against traversal."""

from __future__ import annotations

import base64
import os
from pathlib import Path

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

from .isolation import assert_error, bearer, token_settings


def _root(client: TestClient, settings: Settings, headers: dict[str, str] | None = None) -> Path:
    return settings.workspaces_dir / client.get("/api/v1/auth/me", headers=headers or {}).json()["workspace_id"]


def test_tree_lists_the_workspace_with_bounds(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = _root(client, settings)
        (root / "buffers" / "deep" / "deeper").mkdir(parents=True)
        (root / "buffers" / "deep" / "deeper" / "x.txt").write_text("x")
        (root / "artifacts" / "a.txt").write_text("hello")
        os.symlink("/etc", root / "meta" / "etc-link")

        tree = client.get("/api/v1/runtime/volume/tree").json()
        assert tree["root"] == "" and tree["truncated"] is False
        by_path = {entry["path"]: entry for entry in tree["entries"]}
        assert {"memory", "artifacts", "buffers", "meta", "memory/MEMORIES.md", "artifacts/a.txt"} <= set(by_path)
        assert by_path["artifacts/a.txt"]["size"] == 5 and by_path["artifacts/a.txt"]["type"] == "file"
        assert by_path["meta/etc-link"]["type"] == "symlink"
        assert not any(path.startswith("meta/etc-link/") for path in by_path)  # never followed
        assert "buffers/deep/deeper/x.txt" not in by_path  # depth 4 > default 3
        assert by_path["buffers/deep/deeper"]["depth"] == 3

        sub = client.get("/api/v1/runtime/volume/tree", params={"path": "buffers", "max_depth": 1}).json()
        assert sub["root"] == "buffers" and [e["path"] for e in sub["entries"]] == ["buffers/deep"]
        capped = client.get("/api/v1/runtime/volume/tree", params={"max_entries": 2}).json()
        assert len(capped["entries"]) == 2 and capped["truncated"] is True

        assert_error(client.get("/api/v1/runtime/volume/tree", params={"path": "../"}), 400, "invalid_path")
        assert_error(client.get("/api/v1/runtime/volume/tree", params={"path": "meta/etc-link"}), 400, "invalid_path")
        assert_error(client.get("/api/v1/runtime/volume/tree", params={"path": "nope"}), 404, "not_found")
        assert_error(
            client.get("/api/v1/runtime/volume/tree", params={"path": "artifacts/a.txt"}), 400, "not_a_directory"
        )
        assert_error(client.get("/api/v1/runtime/volume/tree", params={"max_depth": 99}), 422, "invalid_input")


def test_file_reads_are_bounded_and_typed(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = _root(client, settings)
        (root / "artifacts" / "notes.md").write_text("# Notes\nünïcode\n")
        (root / "buffers" / "blob.bin").write_bytes(bytes(range(256)))
        (root / "buffers" / "long.txt").write_text("é" * 1000)

        text = client.get("/api/v1/runtime/volume/file", params={"path": "artifacts/notes.md"}).json()
        assert (text["encoding"], text["content"], text["truncated"]) == ("utf-8", "# Notes\nünïcode\n", False)
        binary = client.get("/api/v1/runtime/volume/file", params={"path": "buffers/blob.bin"}).json()
        assert binary["encoding"] == "base64" and base64.b64decode(binary["content"]) == bytes(range(256))
        cut = client.get("/api/v1/runtime/volume/file", params={"path": "buffers/long.txt", "max_bytes": 101}).json()
        assert cut["truncated"] is True and cut["encoding"] == "utf-8" and cut["content"] == "é" * 50
        assert cut["size"] == 2000

        assert_error(client.get("/api/v1/runtime/volume/file", params={"path": "buffers"}), 400, "not_a_file")
        assert_error(client.get("/api/v1/runtime/volume/file", params={"path": "memory/none.md"}), 404, "not_found")
        big = {"path": "artifacts/notes.md", "max_bytes": 2 * 1024 * 1024}
        assert_error(client.get("/api/v1/runtime/volume/file", params=big), 422, "invalid_input")
        assert_error(client.get("/api/v1/runtime/volume/file"), 422, "invalid_input")


def test_traversal_absolute_and_symlink_escapes_are_refused(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = _root(client, settings)
        os.symlink("/etc/passwd", root / "artifacts" / "passwd")
        os.symlink("../../", root / "meta" / "up")
        (root / "artifacts" / "inside.txt").write_text("ok")
        os.symlink("inside.txt", root / "artifacts" / "alias.txt")
        for path in (
            "../fleet.db",
            "artifacts/../../fleet.db",
            "/etc/passwd",
            "\\etc\\passwd",
            "artifacts/passwd",
            "meta/up/fleet.db",
            "memory/\x00x",
            "artifacts/alias.txt",  # a link that points inside is refused too: its target can be swapped
        ):
            body = assert_error(client.get("/api/v1/runtime/volume/file", params={"path": path}), 400, "invalid_path")
            assert body["action"]
        inside = client.get("/api/v1/runtime/volume/file", params={"path": "artifacts/inside.txt"}).json()
        assert inside["content"] == "ok"


def test_each_user_sees_only_their_workspace(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        alice_root = _root(client, secured, alice)
        bob_root = _root(client, secured, bob)
        (alice_root / "artifacts" / "private.txt").write_text("alice only")
        assert_error(
            client.get("/api/v1/runtime/volume/file", params={"path": "artifacts/private.txt"}, headers=bob),
            404,
            "not_found",
        )
        climb = f"../{alice_root.name}/artifacts/private.txt"
        assert_error(
            client.get("/api/v1/runtime/volume/file", params={"path": climb}, headers=bob), 400, "invalid_path"
        )
        os.symlink(alice_root / "artifacts" / "private.txt", bob_root / "artifacts" / "stolen.txt")
        stolen = {"path": "artifacts/stolen.txt"}
        assert_error(client.get("/api/v1/runtime/volume/file", params=stolen, headers=bob), 400, "invalid_path")
        bob_tree = client.get("/api/v1/runtime/volume/tree", headers=bob).json()
        assert "artifacts/private.txt" not in {e["path"] for e in bob_tree["entries"]}
        mine = client.get("/api/v1/runtime/volume/file", params={"path": "artifacts/private.txt"}, headers=alice)
        assert mine.json()["content"] == "alice only"
        assert_error(client.get("/api/v1/runtime/volume/tree"), 401, "unauthorized")
