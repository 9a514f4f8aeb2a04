"""Artifacts: listing by session/run, metadata, confined downloads from the workspace, and isolation."""

from __future__ import annotations

import os

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

from .isolation import assert_error, bearer, new_session, seed_artifact, seed_run, token_settings, user_id


def _workspace(client: TestClient, headers: dict[str, str], settings: Settings) -> os.PathLike[str]:
    return settings.workspaces_dir / client.get("/api/v1/auth/me", headers=headers).json()["workspace_id"]


def test_list_get_and_download(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = _workspace(client, {}, settings)
        (root / "artifacts" / "report.md").write_text("# Report\n")  # type: ignore[operator]
        first, second = new_session(client, {}), new_session(client, {})
        run_a = seed_run(client, {}, first)
        run_b = seed_run(client, {}, second)
        report = seed_artifact(client, {}, first, run_a, "artifacts/report.md", name="report.md")
        seed_artifact(client, {}, second, run_b, "artifacts/other.md", name="other.md")

        everything = client.get("/api/v1/artifacts").json()
        assert everything["total"] == 2
        by_session = client.get("/api/v1/artifacts", params={"session_id": first}).json()
        assert [a["id"] for a in by_session["items"]] == [report]
        by_run = client.get("/api/v1/artifacts", params={"run_id": run_b}).json()
        assert [a["name"] for a in by_run["items"]] == ["other.md"]
        meta = client.get(f"/api/v1/artifacts/{report}").json()
        assert (meta["run_id"], meta["path"], meta["session_id"]) == (run_a, "artifacts/report.md", first)

        content = client.get(f"/api/v1/artifacts/{report}/content")
        assert content.status_code == 200 and content.text == "# Report\n"
        assert content.headers["content-disposition"] == 'attachment; filename="report.md"'
        missing = client.get(f"/api/v1/artifacts/{everything['items'][0]['id']}/content")
        assert_error(missing, 404, "not_found")  # other.md was never written
        assert_error(client.get("/api/v1/artifacts", params={"limit": 0}), 422, "invalid_input")
        assert_error(client.get(f"/api/v1/artifacts/{'0' * 32}"), 404, "not_found")


def test_artifact_paths_stay_inside_the_workspace(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        root = _workspace(client, {}, settings)
        os.symlink("/etc/passwd", root / "artifacts" / "passwd")  # type: ignore[operator]
        sid = new_session(client, {})
        linked = seed_artifact(client, {}, sid, None, "artifacts/passwd")
        climbing = seed_artifact(client, {}, sid, None, "../../fleet.db")
        assert_error(client.get(f"/api/v1/artifacts/{linked}/content"), 400, "invalid_path")
        assert_error(client.get(f"/api/v1/artifacts/{climbing}/content"), 400, "invalid_path")


def test_another_users_artifact_is_404(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        root = _workspace(client, alice, secured)
        (root / "artifacts" / "mine.txt").write_text("alice's")  # type: ignore[operator]
        sid = new_session(client, alice)
        run_id = seed_run(client, alice, sid)
        artifact = seed_artifact(client, alice, sid, run_id, "artifacts/mine.txt")
        assert user_id(client, alice) != user_id(client, bob)
        assert_error(client.get(f"/api/v1/artifacts/{artifact}", headers=bob), 404, "not_found")
        assert_error(client.get(f"/api/v1/artifacts/{artifact}/content", headers=bob), 404, "not_found")
        assert_error(client.get("/api/v1/artifacts", params={"session_id": sid}, headers=bob), 404, "not_found")
        assert_error(client.get("/api/v1/artifacts", params={"run_id": run_id}, headers=bob), 404, "not_found")
        assert client.get("/api/v1/artifacts", headers=bob).json()["total"] == 0
        assert client.get(f"/api/v1/artifacts/{artifact}/content", headers=alice).text == "alice's"
