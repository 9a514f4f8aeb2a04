"""Attachments: multipart files, JSON url/text, download, delete, the streaming upload limit and isolation."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

from .isolation import assert_error, bearer, new_session, token_settings


def _files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_file_upload_is_hashed_sanitized_and_downloadable(settings: Settings) -> None:
    data = b"col_a,col_b\n1,2\n" * 100
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {})
        created = client.post(
            "/api/v1/attachments",
            files={"file": ("../../etc/evil name?.csv", data, "text/csv")},
            data={"session_id": sid},
        )
        assert created.status_code == 201, created.text
        body = created.json()
        assert body["kind"] == "file" and body["session_id"] == sid
        assert body["name"] == "evil name_.csv"
        assert (body["size"], body["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
        assert body["media_type"] == "text/csv"
        assert client.get(f"/api/v1/attachments/{body['id']}").json() == body

        content = client.get(f"/api/v1/attachments/{body['id']}/content")
        assert content.status_code == 200 and content.content == data
        assert content.headers["content-type"].startswith("text/csv")
        assert content.headers["x-content-type-options"] == "nosniff"
        assert "attachment" in content.headers["content-disposition"]

        stored = _files_under(settings.data_dir / "attachments")
        assert [p.name for p in stored] == [body["id"]]
        assert not any(p.is_file() and p.read_bytes() == data for p in settings.workspaces_dir.rglob("*"))

        assert client.delete(f"/api/v1/attachments/{body['id']}").status_code == 204
        assert _files_under(settings.data_dir / "attachments") == []
        assert_error(client.get(f"/api/v1/attachments/{body['id']}"), 404, "not_found")


def test_json_text_and_url_attachments(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        text = client.post("/api/v1/attachments", json={"text": "héllo wörld", "name": "notes.txt"}).json()
        assert (text["kind"], text["name"], text["size"]) == ("text", "notes.txt", len("héllo wörld".encode()))
        downloaded = client.get(f"/api/v1/attachments/{text['id']}/content")
        assert downloaded.text == "héllo wörld" and downloaded.headers["content-type"].startswith("text/plain")

        url = client.post("/api/v1/attachments", json={"url": "https://example.org/data/report.pdf"}).json()
        assert (url["kind"], url["name"], url["size"], url["sha256"]) == ("url", "report.pdf", 0, "")
        assert url["source_url"] == "https://example.org/data/report.pdf"
        body = assert_error(client.get(f"/api/v1/attachments/{url['id']}/content"), 409, "no_stored_content")
        assert "example.org" in body["action"]
        assert client.delete(f"/api/v1/attachments/{url['id']}").status_code == 204


def test_bad_attachment_input(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        assert_error(client.post("/api/v1/attachments", json={"url": "https://a.b", "text": "x"}), 422, "invalid_input")
        assert_error(client.post("/api/v1/attachments", json={}), 422, "invalid_input")
        assert_error(client.post("/api/v1/attachments", json={"url": "file:///etc/passwd"}), 422, "invalid_url")
        assert_error(client.post("/api/v1/attachments", json={"text": "x", "extra": 1}), 422, "invalid_input")
        assert_error(
            client.post("/api/v1/attachments", content=b"raw", headers={"content-type": "text/plain"}),
            415,
            "unsupported_media_type",
        )
        assert_error(
            client.post("/api/v1/attachments", data={"session_id": "x"}, files={}), 415, "unsupported_media_type"
        )
        no_file = client.post(
            "/api/v1/attachments",
            content=b'--b\r\nContent-Disposition: form-data; name="note"\r\n\r\nhi\r\n--b--\r\n',
            headers={"content-type": "multipart/form-data; boundary=b"},
        )
        assert_error(no_file, 422, "missing_file")
        two = client.post("/api/v1/attachments", files=[("file", ("a.txt", b"a")), ("file", ("b.txt", b"b"))])
        assert_error(two, 422, "too_many_files")
        assert_error(
            client.post("/api/v1/attachments", files={"file": ("a", b"a")}, data={"session_id": "0" * 32}),
            404,
            "not_found",
        )
        assert _files_under(settings.data_dir / "attachments") == []


def test_upload_limit_is_enforced_while_streaming(settings: Settings) -> None:
    small = settings.model_copy(update={"upload_max_bytes": 1000})
    with TestClient(create_app(small)) as client:
        ok = client.post("/api/v1/attachments", files={"file": ("ok.bin", b"x" * 1000)})
        assert ok.status_code == 201 and ok.json()["size"] == 1000

        def chunked() -> object:
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n\r\n'
            for _ in range(10):
                yield b"y" * 500
            yield b"\r\n--b--\r\n"

        streamed = client.post(
            "/api/v1/attachments",
            content=chunked(),  # type: ignore[arg-type]
            headers={"content-type": "multipart/form-data; boundary=b"},
        )
        body = assert_error(streamed, 413, "payload_too_large")
        assert "FLEET_UPLOAD_MAX_BYTES" in body["action"]
        assert_error(client.post("/api/v1/attachments", json={"text": "z" * 1001}), 413, "payload_too_large")
        declared = client.post("/api/v1/attachments", files={"file": ("huge.bin", b"h" * (2 * 1024 * 1024))})
        assert_error(declared, 413, "payload_too_large")
        assert [p.name for p in _files_under(settings.data_dir / "attachments")] == [ok.json()["id"]]


def test_another_users_attachment_is_404(settings: Settings) -> None:
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        attachment = client.post("/api/v1/attachments", json={"text": "secret"}, headers=alice).json()["id"]
        for method, path in (
            ("GET", f"/api/v1/attachments/{attachment}"),
            ("GET", f"/api/v1/attachments/{attachment}/content"),
            ("DELETE", f"/api/v1/attachments/{attachment}"),
        ):
            assert_error(client.request(method, path, headers=bob), 404, "not_found")
        alice_session = new_session(client, alice)
        staged = client.post("/api/v1/attachments", json={"text": "x", "session_id": alice_session}, headers=bob)
        assert_error(staged, 404, "not_found")
        assert client.get(f"/api/v1/attachments/{attachment}/content", headers=alice).text == "secret"
        assert_error(client.post("/api/v1/attachments", json={"text": "x"}), 401, "unauthorized")


def test_a_turn_naming_an_attachment_the_caller_does_not_own_is_refused_and_creates_nothing(
    settings: Settings,
) -> None:
    """The turn's attachments are read with its run's creation: another user's (or a deleted) attachment refuses
    the turn with a 404 before any run or turn exists, over REST and over the execution WebSocket."""
    secured = token_settings(settings)
    with TestClient(create_app(secured)) as client:
        alice, bob = bearer(secured, "alice"), bearer(secured, "bob")
        attachment = client.post("/api/v1/attachments", json={"text": "secret"}, headers=alice).json()["id"]
        sid = new_session(client, bob)
        body = {"content": "read it", "execution_mode": "direct", "attachment_ids": [attachment]}
        refused = client.post(f"/api/v1/sessions/{sid}/turns", json=body, headers={**bob, "Idempotency-Key": "k1"})
        assert "POST /api/v1/attachments" in assert_error(refused, 404, "attachment_not_found")["action"]
        ticket = client.post("/api/v1/auth/ws-ticket", headers=bob).json()["ticket"]
        with client.websocket_connect(f"/api/v1/ws/execution?ticket={ticket}") as ws:
            ws.send_json({"type": "message", "session_id": sid, **body})
            frame = ws.receive_json()
            assert (frame["type"], frame["code"]) == ("error", "attachment_not_found")
        assert client.get(f"/api/v1/sessions/{sid}/turns", headers=bob).json()["total"] == 0
        assert client.get(f"/api/v1/sessions/{sid}", headers=bob).json()["last_run_id"] is None


def test_a_truncated_multipart_body_is_400_and_stores_nothing(settings: Settings) -> None:
    """A body cut before its closing boundary (or shorter than its Content-Length) is refused, not half-stored."""
    part = b'--B\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n'
    whole = part + b"hello world\r\n--B--\r\n"
    cut = [part + b"hello wor", part + b"hello world\r\n--B", part]
    headers = {"Content-Type": "multipart/form-data; boundary=B"}
    with TestClient(create_app(settings)) as client:
        for body in cut:
            assert_error(client.post("/api/v1/attachments", content=body, headers=headers), 400, "upload_incomplete")
        longer = {**headers, "Content-Length": str(len(whole) + 500)}
        assert_error(client.post("/api/v1/attachments", content=part, headers=longer), 400, "upload_incomplete")
        assert _files_under(settings.data_dir / "attachments") == []
        created = client.post("/api/v1/attachments", content=whole, headers=headers)
        assert created.status_code == 201, created.text
        assert created.json()["size"] == len(b"hello world")
